/// How any target is watched, by the HUD commands and the daemon alike: sampling, history and
/// the event stream. Filled from the one option group both share, so a flag means the same in both.
public struct WatchConfiguration {
    public var tickNanoseconds: UInt64 = 100_000_000
    public var historyNanoseconds: UInt64 = 600_000_000_000
    public var includeChildren = false
    /// The event socket's path (`--events`); nil for the default.
    public var eventsPath: String?
    /// Who may send events (`--accept-from`); nil: the target, its descendants and our user.
    public var acceptFrom: AcceptPolicy?
    public var events = EventConfiguration()
    /// `--statsd-udp HOST:PORT`.
    public var statsdUDP: (host: String, port: UInt16)?
    /// `--leak-window`, `--leak-threshold`.
    public var leak = LeakTrend.Settings()

    public init() {}

    /// Samples kept in history: `--history / --tick` rounded up, at least two.
    public var historyCapacity: Int {
        max(2, Int((historyNanoseconds + tickNanoseconds - 1) / tickNanoseconds))
    }
}
