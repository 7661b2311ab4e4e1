/// How the target stands, as the HUD reports it.
public enum TargetStatus: Equatable {
    case running
    /// Exited with a status code, or killed by a signal; both nil when it is not our child.
    case exited(code: Int32?, signal: Int32?)

    public var description: String {
        switch self {
        case .running: return "running"
        case .exited(let code?, _): return "exited, status \(code)"
        case .exited(_, let signal?): return "killed by signal \(signal)"
        case .exited: return "exited"
        }
    }
}
