/// What a session watches.
public enum SessionTarget {
    case attach(pid: Int32)
    /// Launch on a pseudo-terminal. `ownsKeys`: the HUD reads keys itself (`q` quits, Ctrl-C
    /// stops) instead of passing them to the program — the demo.
    case launch(command: [String], ownsKeys: Bool)

    /// The launched command's name, until the process's own can be read.
    var launchedName: String {
        if case .launch(let command, _) = self { return String(command[0].split(separator: "/").last ?? "") }
        return "?"
    }
}
