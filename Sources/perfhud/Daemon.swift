import ArgumentParser
import PerfHUDCore
import PerfHUDDaemon
#if canImport(Glibc)
import Glibc
#endif

extension Perfhud {
    /// `perfhud daemon`: headless, for systemd; Prometheus metrics and journal logs.
    struct Daemon: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Watch a target headless: Prometheus metrics, journal logs, systemd notify.")

        @Option(help: "Watch this PID.") var pid: Int32?
        @Option(help: "Watch the PID in this file; re-read when the process ends.") var pidfile: String?
        @Option(help: "Watch every process whose command line matches this extended regular expression, summed.") var match: String?
        @Option(help: "Watch the processes of this systemd unit, across restarts.") var unit: String?

        @Option(name: [.customLong("metrics-listen"), .customLong("listen")],
                help: ArgumentHelp("Where to serve /metrics: HOST:PORT (loopback unless you say otherwise).", valueName: "HOST:PORT"))
        var listen = HostAndPort(argument: "127.0.0.1:9469")!
        @Option(help: "A summary line every this often.") var logInterval = DurationArgument(nanoseconds: 60_000_000_000)

        @Option(help: "Record what is watched to this file (SQLite; see perfhud report and export).") var record: String?
        @Option(help: ArgumentHelp("With --record: past this size, the oldest data is dropped first (e.g. 500MiB).", valueName: "SIZE"))
        var recordMaxSize: String?

        @OptionGroup var watch: WatchOptions

        func validate() throws {
            let chosen = [pid != nil, pidfile != nil, match != nil, unit != nil].filter { $0 }.count
            guard chosen == 1 else { throw ValidationError("choose exactly one of --pid, --pidfile, --match, --unit") }
            if let pid, pid <= 0 { throw ValidationError(Accepted.complaint("--pid", got: String(pid))) }
            if let unit, unit.isEmpty { throw ValidationError(Accepted.complaint("--unit", got: unit)) }
            if logInterval.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--log-interval", got: logInterval.text)) }
            if let recordMaxSize {
                guard let bytes = FailCondition.bytes(recordMaxSize), bytes >= 1024 * 1024 else {
                    throw ValidationError(Accepted.complaint("--record-max-size", got: recordMaxSize))
                }
                guard record != nil else { throw ValidationError("--record-max-size goes with --record FILE") }
            }
        }

        func run() throws {
            let selector: DaemonConfiguration.Selector
            if let pid { selector = .pid(pid) }
            else if let pidfile { selector = .pidfile(pidfile) }
            else if let match { selector = .match(match) }
            else { selector = .unit(unit!.contains(".") ? unit! : unit! + ".service") }
            var configuration = DaemonConfiguration(selector: selector, watch: watch.configuration(defaultTick: WatchOptions.daemonTick))
            configuration.listenHost = listen.host
            configuration.listenPort = listen.port
            configuration.logIntervalNanoseconds = logInterval.nanoseconds
            configuration.recordPath = record
            configuration.recordMaxBytes = recordMaxSize.flatMap(FailCondition.bytes).map { UInt64($0) }
            configuration.version = perfhudVersion
            if configuration.watch.eventsPath == nil, let runtime = getenv("RUNTIME_DIRECTORY") {
                configuration.watch.eventsPath = String(cString: runtime).split(separator: ":").first.map { $0 + "/events.sock" }
            }
            let resolver = try TargetResolver(selector: selector)
            if case .unit(let name) = selector, !UnitControlGroup().isKnown(name) {
                throw PerfHUDError(.noInput, "unknown unit \(name)")
            }
            // A reader that goes away (a closed pipe on stderr) is a dropped line, not our end.
            signal(SIGPIPE, SIG_IGN)
            try Perfhud.exit(with: DaemonRunner.run(configuration: configuration, resolver: resolver))
        }
    }
}
