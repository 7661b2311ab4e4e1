import PerfHUDSampling

/// What a session watches.
public enum SessionTarget {
    /// A running process (`.pid`), or a group as the daemon names one (`.match`, `.unit`).
    case attach(TargetSelector)
    /// Launch on a pseudo-terminal. `ownsKeys`: the HUD reads keys itself (`q` quits, Ctrl-C
    /// stops) instead of passing them to the program — the demo.
    case launch(command: [String], ownsKeys: Bool)

    /// The launched command's name, until the process's own can be read.
    var launchedName: String {
        if case .launch(let command, _) = self { return String(command[0].split(separator: "/").last ?? "") }
        return "?"
    }
}
