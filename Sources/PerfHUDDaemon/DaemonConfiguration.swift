import PerfHUDCore

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
    /// What the HUD commands share: tick, history, children, the event stream.
    public var watch: WatchConfiguration
    /// `--metrics-listen`.
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 9469
    /// `127.0.0.1:9469`, `[::1]:9469`: an IPv6 address in brackets, as a URL writes it.
    public var listenAddress: String {
        listenHost.contains(":") ? "[\(listenHost)]:\(listenPort)" : "\(listenHost):\(listenPort)"
    }
    public var logIntervalNanoseconds: UInt64 = 60_000_000_000
    /// How often a missing target is looked for (and a `--match` scan repeated).
    public var discoveryNanoseconds: UInt64 = 2_000_000_000

    /// `--record FILE` and `--record-max-size`; perfhud's version for the recording's metadata.
    public var recordPath: String?
    public var recordMaxBytes: UInt64?
    public var version = ""

    public init(selector: Selector, watch: WatchConfiguration) {
        self.selector = selector
        self.watch = watch
    }
}
