/// How a HUD session (`attach`, `run`, `demo`) samples and reports; filled from the command line.
public struct SessionConfiguration {
    public enum Output: String, CaseIterable { case hud, plain, json }

    /// What the daemon shares: tick, history, children, the event stream.
    public var watch = WatchConfiguration()
    public var output: Output = .hud
    /// Plain and JSON report every this often (default: every tick).
    public var reportEveryNanoseconds: UInt64?
    public var durationNanoseconds: UInt64?
    public var count: Int?
    public var style = HUDStyle()
    /// `--actions-from FILE|-`: a reducer log to read actions from, followed as it grows.
    public var actionsFrom: String?
    /// `--actions-from-output` (run): read actions from the program's own output.
    public var actionsFromOutput = false
    /// Test hook: crash on purpose after this many reports, to test the crash restore path.
    public var crashAfterReports: Int?

    public init() {}
}

/// What a session watches.
public enum SessionTarget {
    case attach(pid: Int32)
    /// Launch on a pseudo-terminal. `ownsKeys`: the HUD reads keys itself (`q` quits, Ctrl-C
    /// stops) instead of passing them to the program — the demo.
    case launch(command: [String], ownsKeys: Bool)
}
