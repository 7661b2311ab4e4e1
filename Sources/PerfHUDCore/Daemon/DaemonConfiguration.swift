/// What `perfhud daemon` watches and how it reports.
public struct DaemonConfiguration {
    public enum Selector: Equatable {
        case pid(Int32)
        /// Re-read whenever the process it names ends.
        case pidfile(String)
        /// Every process whose command line matches, summed as one group (a libproc2 scan).
        case match(String)
        /// A systemd unit: every process of its control group, followed across restarts.
        case unit(String)

        public var description: String {
            switch self {
            case .pid(let pid): return "PID \(pid)"
            case .pidfile(let path): return "the PID in \(path)"
            case .match(let pattern): return "processes matching /\(pattern)/"
            case .unit(let unit): return "unit \(unit)"
            }
        }
    }

    public var selector: Selector
    public var includeChildren = false
    public var tickNanoseconds: UInt64 = 1_000_000_000
    public var historyNanoseconds: UInt64 = 600_000_000_000
    /// `--metrics-listen`.
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 9469
    public var logIntervalNanoseconds: UInt64 = 60_000_000_000
    /// How often a missing target is looked for (and a `--match` scan repeated).
    public var discoveryNanoseconds: UInt64 = 2_000_000_000
    public var eventsPath: String?
    public var acceptFrom: AcceptPolicy?
    public var events = EventConfiguration()
    public var statsdUDP: (host: String, port: UInt16)?

    public init(selector: Selector) { self.selector = selector }
}

/// A daemon problem with a message for the log (a target not there, a bad pattern).
public struct DaemonError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}
