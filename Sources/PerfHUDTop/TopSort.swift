/// What the table is sorted by (the keys `c`, `m`, `n`, `f`, `a`).
public enum TopSort: String, CaseIterable {
    case cpu, memory, name, fps, actions

    /// The column title the sort marks.
    public var column: String {
        switch self {
        case .cpu: return "CPU%"
        case .memory: return "RSS"
        case .name: return "TARGET"
        case .fps: return "FPS"
        case .actions: return "ACT/s"
        }
    }
}
