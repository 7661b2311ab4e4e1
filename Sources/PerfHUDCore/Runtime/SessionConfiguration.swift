/// How a session samples and reports; filled from the command line.
public struct SessionConfiguration {
    public enum Output: String, CaseIterable { case hud, plain, json }

    public var tickNanoseconds: UInt64 = 100_000_000
    public var historyNanoseconds: UInt64 = 600_000_000_000
    public var includeChildren = false
    public var output: Output = .hud
    /// Plain and JSON report every this often (default: every tick).
    public var reportEveryNanoseconds: UInt64?
    public var durationNanoseconds: UInt64?
    public var count: Int?
    public var style = HUDStyle()
    /// The event socket's path (`--events`); nil for the default under $XDG_RUNTIME_DIR.
    public var eventsPath: String?
    /// Who may send events (`--accept-from`); nil: the target, its descendants and our user.
    public var acceptFrom: AcceptPolicy?
    public var events = EventConfiguration()
    /// `--statsd-udp HOST:PORT`.
    public var statsdUDP: (host: String, port: UInt16)?
    /// `--actions-from FILE|-`: a reducer log to read actions from, followed as it grows.
    public var actionsFrom: String?
    /// `--actions-from-output` (run): read actions from the program's own output.
    public var actionsFromOutput = false
    /// Test hook: crash on purpose after this many reports, to test the crash restore path.
    public var crashAfterReports: Int?

    public init() {}

    /// Samples kept in history: `--history / --tick`, at least two.
    public var historyCapacity: Int {
        max(2, Int((historyNanoseconds + tickNanoseconds - 1) / tickNanoseconds))
    }
}

/// What a session watches.
public enum SessionTarget {
    case attach(pid: Int32)
    /// Launch on a pseudo-terminal. `ownsKeys`: the HUD reads keys itself (`q` quits, Ctrl-C
    /// stops) instead of passing them to the program — the demo.
    case launch(command: [String], ownsKeys: Bool)
}

/// Exit codes (sysexits.h), as PRODUCT.md fixes them.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let usage: Int32 = 64
    public static let noInput: Int32 = 66
    public static let unavailable: Int32 = 69
    public static let software: Int32 = 70
    public static let cannotCreate: Int32 = 73
    public static let noPermission: Int32 = 77
}
