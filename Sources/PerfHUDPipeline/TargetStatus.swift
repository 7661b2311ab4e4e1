/// How the target stands, as the HUD reports it.
public enum TargetStatus: Equatable {
    case running
    /// Exited with a status code, or killed by a signal; both nil when it is not our child.
    case exited(code: Int32?, signal: Int32?)
    /// No process of the target is there now (a daemon's target between two lives, or not yet
    /// found): its tick carries what the event stream brought, and its figures are unknown.
    case absent

    public var description: String {
        switch self {
        case .running: return "running"
        case .exited(let code?, _): return "exited, status \(code)"
        case .exited(_, let signal?): return "killed by signal \(signal)"
        case .exited: return "exited"
        case .absent: return "absent"
        }
    }
}
