import PerfHUDPipeline
import PerfHUDSampling

/// What `perfhud daemon` watches and how it reports.
public struct DaemonConfiguration {
    /// What a target names (`TargetSelector`, with the resolver one layer down: `attach --match` uses it too).
    public typealias Selector = TargetSelector

    /// What the command line names (`--config` adds the file's targets to these).
    public var targets: [TargetSpec]
    /// `--config FILE`: read at the start and on SIGHUP.
    public var configPath: String?
    /// `--max-targets`: past it, targets are refused (logged, counted).
    public var maxTargets = 256
    /// Where the event sockets of several targets go (`LABEL.sock`): `--events DIR`, or systemd's
    /// RuntimeDirectory; nil: /run/perfhud for root, else the default private directory.
    public var eventsDirectory: String?
    /// Also a name of the one command-line target's socket, where it was before `--config`
    /// (`/run/perfhud/events.sock` under perfhud.service).
    public var legacyEventsLink: String?
    /// `--forget-after`: a target gone this long loses its series.
    public var forgetAfterNanoseconds: UInt64 = 600_000_000_000
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
    /// `--full-every`: how often a target's every figure is read when nothing scrapes the daemon.
    /// Between two such reads a tick reads its RSS alone; a scrape reads every figure first.
    public var fullEveryNanoseconds: UInt64 = 15_000_000_000
    /// How often a missing target is looked for (and a `--match` scan repeated).
    public var discoveryNanoseconds: UInt64 = 2_000_000_000

    /// `--record FILE` and `--record-max-size`; perfhud's version for the recording's metadata.
    public var recordPath: String?
    public var recordMaxBytes: UInt64?
    public var version = ""

    public init(targets: [TargetSpec], watch: WatchConfiguration) {
        self.targets = targets
        self.watch = watch
    }

    /// Exactly one target named on the command line (no `--units`, no `--config`): the daemon of
    /// before issue 21, whose event socket is where it always was.
    public var isSingleTarget: Bool {
        guard configPath == nil, targets.count == 1 else { return false }
        return !targets[0].isPattern
    }
}
