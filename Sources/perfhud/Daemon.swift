import ArgumentParser
import PerfHUDSupport
import PerfHUDRecordings
import PerfHUDDaemon
#if canImport(Glibc)
import Glibc
#endif

extension Perfhud {
    /// `perfhud daemon`: headless, for systemd; Prometheus metrics and journal logs.
    struct Daemon: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "daemon",
            abstract: "Watch a target headless: Prometheus metrics, journal logs, systemd notify.")

        // Any number of targets, each optionally NAME=… (its `target` label).
        @Option(help: ArgumentHelp("Watch this PID.", valueName: "[NAME=]PID")) var pid: [String] = []
        @Option(help: ArgumentHelp("Watch the PID in this file; re-read when the process ends.", valueName: "[NAME=]FILE")) var pidfile: [String] = []
        @Option(help: ArgumentHelp("Watch every process whose command line matches this extended regular expression, summed.",
                                   valueName: "[NAME=]REGEX")) var match: [String] = []
        @Option(help: ArgumentHelp("Watch the processes of this systemd unit, across restarts.", valueName: "[NAME=]UNIT")) var unit: [String] = []
        @Option(help: ArgumentHelp("Watch every unit under system.slice whose name matches this glob, each a target.", valueName: "PATTERN"))
        var units: [String] = []
        @Option(help: ArgumentHelp("Also watch the targets this file names, one a line (--unit web.service); re-read on SIGHUP.", valueName: "FILE"))
        var config: String?
        @Option(help: "Watch at most this many targets; the rest are refused and counted.") var maxTargets = 256
        @Option(help: "A target gone this long loses its series.") var forgetAfter = DurationArgument(nanoseconds: 600_000_000_000)

        @Option(name: [.customLong("metrics-listen"), .customLong("listen")],
                help: ArgumentHelp("Where to serve /metrics: HOST:PORT (loopback unless you say otherwise).", valueName: "HOST:PORT"))
        var listen = HostAndPort(argument: "127.0.0.1:9469")!
        @Option(help: "A summary line every this often.") var logInterval = DurationArgument(nanoseconds: 60_000_000_000)
        @Option(help: ArgumentHelp("Read every figure of a target this often when nothing scrapes; RSS is read every tick, every figure at each scrape.",
                                   valueName: "DURATION")) var fullEvery = DurationArgument(nanoseconds: 15_000_000_000)

        @Option(help: "Record what is watched to this file (SQLite; see perfhud report and export).") var record: String?
        @Option(help: ArgumentHelp("With --record: past this size, the oldest data is dropped first (e.g. 500MiB).", valueName: "SIZE"))
        var recordMaxSize: String?

        @OptionGroup var watch: WatchOptions

        /// The targets of the command line, in the order of the options.
        func targets() throws -> [TargetSpec] {
            try [("--pid", pid), ("--pidfile", pidfile), ("--match", match), ("--unit", unit), ("--units", units)].flatMap { option, values in
                try values.map { value in
                    do { return try TargetSpec.parse(option: option, value: value) } catch let error as PerfHUDError {
                        // Said in the words of every usage message (Accepted), with why when it adds to them.
                        let why = error.message.hasPrefix("\(option) wants") ? "" : " (\(error.message))"
                        throw PerfHUDError(.usage, Accepted.complaint(option, got: value) + why)
                    }
                }
            }
        }

        func validate() throws {
            let named: [TargetSpec]
            do { named = try targets() } catch let error as PerfHUDError { throw ValidationError(error.message) }
            guard !named.isEmpty || config != nil else {
                throw ValidationError("name a target: --pid, --pidfile, --match, --unit, --units or --config FILE")
            }
            guard maxTargets >= 1 else { throw ValidationError(Accepted.complaint("--max-targets", got: String(maxTargets))) }
            if forgetAfter.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--forget-after", got: forgetAfter.text)) }
            if logInterval.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--log-interval", got: logInterval.text)) }
            if fullEvery.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--full-every", got: fullEvery.text)) }
            let oneTarget = named.count == 1 && config == nil && units.isEmpty
            if record != nil && !oneTarget { throw ValidationError("--record records one target: name exactly one") }
            if watch.statsdUdp != nil && !oneTarget { throw ValidationError("--statsd-udp feeds one target: name exactly one") }
            if let recordMaxSize {
                guard let bytes = FailCondition.bytes(recordMaxSize), bytes >= 1024 * 1024 else {
                    throw ValidationError(Accepted.complaint("--record-max-size", got: recordMaxSize))
                }
                guard record != nil else { throw ValidationError("--record-max-size goes with --record FILE") }
            }
        }

        func run() throws {
            let named = try targets()
            var configuration = DaemonConfiguration(targets: named, watch: watch.configuration(defaultTick: WatchOptions.daemonTick))
            configuration.configPath = config
            configuration.maxTargets = maxTargets
            configuration.forgetAfterNanoseconds = forgetAfter.nanoseconds
            configuration.listenHost = listen.host
            configuration.listenPort = listen.port
            configuration.logIntervalNanoseconds = logInterval.nanoseconds
            configuration.fullEveryNanoseconds = fullEvery.nanoseconds
            configuration.recordPath = record
            configuration.recordMaxBytes = recordMaxSize.flatMap(FailCondition.bytes).map { UInt64($0) }
            configuration.version = perfhudVersion
            let runtime = getenv("RUNTIME_DIRECTORY").flatMap { String(cString: $0).split(separator: ":").first.map(String.init) }
            if configuration.isSingleTarget {
                if configuration.watch.eventsPath == nil, let runtime { configuration.watch.eventsPath = runtime + "/events.sock" }
            } else {
                // Several targets: --events names the directory of their sockets (LABEL.sock).
                configuration.eventsDirectory = configuration.watch.eventsPath ?? runtime
                configuration.watch.eventsPath = nil
                // perfhud.service's one target of /etc/default/perfhud keeps its socket's old name too.
                if named.count == 1, units.isEmpty, let runtime { configuration.legacyEventsLink = runtime + "/events.sock" }
            }
            for spec in named {
                if case .unit(let name) = spec.selector, !UnitControlGroup().isKnown(name) {
                    throw PerfHUDError(.noInput, "unknown unit \(name)")
                }
            }
            // A reader that goes away (a closed pipe on stderr) is a dropped line, not our end.
            signal(SIGPIPE, SIG_IGN)
            try Perfhud.exit(with: DaemonRunner.run(configuration: configuration))
        }
    }
}
