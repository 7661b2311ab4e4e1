import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline
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
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch this PID.", valueName: "[NAME=]PID"))
        var pid: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch the PID in this file; re-read when the process ends.", valueName: "[NAME=]FILE"))
        var pidfile: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch every process whose command line matches this extended regular expression, summed.",
                                                                       valueName: "[NAME=]REGEX"))
        var match: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch the processes of this systemd unit, across restarts.", valueName: "[NAME=]UNIT"))
        var unit: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch every unit under system.slice whose name matches this glob, each a target.", valueName: "PATTERN"))
        var units: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch a container (Docker, podman) by its name or ID: every process of its control group, across restarts under its name.",
                                                                       valueName: "[NAME=]CONTAINER"))
        var container: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch every running container whose name matches this glob, each a target, joining and leaving as they start and stop.",
                                                                       valueName: "PATTERN"))
        var containers: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch the processes of this control group (its path below the hierarchy's root, or its directory under /sys/fs/cgroup).",
                                                                       valueName: "[NAME=]PATH"))
        var cgroup: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch a Kubernetes pod on this node, NAMESPACE/POD: every process of its containers, as one target.",
                                                                       valueName: "[NAME=]NAMESPACE/POD"))
        var pod: [Given<String>] = []
        @Option(parsing: .unconditionalSingleValue, help: ArgumentHelp("Watch every pod on this node whose NAMESPACE/POD matches this glob, each a target.",
                                                                       valueName: "PATTERN"))
        var pods: [Given<String>] = []
        @Option(parsing: .unconditional, help: ArgumentHelp("Also watch the targets this file names, one a line (--unit web.service); re-read on SIGHUP.", valueName: "FILE"))
        var config: Given<String>?
        @Option(parsing: .unconditional, help: "Watch at most this many targets; the rest are refused and counted.")
        var maxTargets: Given<Int> = "256"
        @Option(parsing: .unconditional, help: "A target gone this long loses its series.")
        var forgetAfter: Given<DurationValue> = "10m"

        @Option(name: [.customLong("metrics-listen"), .customLong("listen")], parsing: .unconditional,
                help: ArgumentHelp("Where to serve /metrics: HOST:PORT (loopback unless you say otherwise).", valueName: "HOST:PORT"))
        var listen: Given<HostAndPort> = "127.0.0.1:9469"
        @Option(parsing: .unconditional, help: "A summary line every this often.")
        var logInterval: Given<DurationValue> = "1m"
        @Option(parsing: .unconditional, help: ArgumentHelp("Read every figure of a target this often when nothing scrapes; RSS is read every tick, every figure at each scrape.",
                                                            valueName: "DURATION"))
        var fullEvery: Given<DurationValue> = "15s"

        @Option(parsing: .unconditional, help: "Record what is watched to this file (SQLite; see perfhud report and export).")
        var record: Given<String>?
        @Option(parsing: .unconditional, help: ArgumentHelp("With --record: past this size, the oldest data is dropped first (e.g. 500MiB).", valueName: "SIZE"))
        var recordMaxSize: Given<String>?

        @OptionGroup var watch: WatchOptions

        /// What the command does not take, refused in validate().
        @Argument(parsing: .allUnrecognized, help: .hidden)
        var unrecognized: [String] = []

        /// The targets of the command line, in the order of the options.
        func targets() throws -> [TargetSpec] {
            try [("--pid", pid), ("--pidfile", pidfile), ("--match", match), ("--unit", unit), ("--units", units), ("--container", container),
                 ("--containers", containers), ("--cgroup", cgroup), ("--pod", pod), ("--pods", pods)].flatMap { option, values in
                try values.map { given in
                    let value = try given.value(option)
                    do { return try TargetSpec.parse(option: option, value: value) } catch let error as PerfHUDError {
                        // Said in the words of every usage message (Accepted), with why when it adds to them.
                        let why = error.message.hasPrefix("\(option) wants") ? "" : " (\(error.message))"
                        throw Refusal.because(Accepted.complaint(option, got: value) + why)
                    }
                }
            }
        }

        func validate() throws {
            _ = try UsageMessage.arguments(unrecognized, of: Self.self)
            _ = try configuration()
        }

        /// The daemon's configuration from the command line; a refusal (`Refusal`) for the first
        /// option that does not read or is out of range, or for options that do not go together.
        func configuration() throws -> DaemonConfiguration {
            let named = try targets()
            let config = try self.config?.value("--config") { !$0.isEmpty }
            guard !named.isEmpty || config != nil else {
                throw Refusal.because("name a target: --pid, --pidfile, --match, --unit, --units, --container, --containers, --cgroup, --pod, --pods or --config FILE")
            }
            var configuration = DaemonConfiguration(targets: named, watch: try watch.configuration(defaultTick: WatchOptions.daemonTick))
            configuration.configPath = config
            configuration.maxTargets = try maxTargets.value("--max-targets") { $0 >= 1 }
            configuration.forgetAfterNanoseconds = try forgetAfter.value("--forget-after") { $0.nanoseconds > 0 }.nanoseconds
            let listen = try listen.value("--metrics-listen")
            configuration.listenHost = listen.host
            configuration.listenPort = listen.port
            configuration.logIntervalNanoseconds = try logInterval.value("--log-interval") { $0.nanoseconds > 0 }.nanoseconds
            configuration.fullEveryNanoseconds = try fullEvery.value("--full-every") { $0.nanoseconds > 0 }.nanoseconds
            configuration.recordPath = try record?.value("--record") { !$0.isEmpty }
            let oneTarget = named.count == 1 && config == nil && !named[0].isPattern
            if configuration.recordPath != nil && !oneTarget { throw Refusal.because("--record records one target: name exactly one") }
            if watch.statsdUdp != nil && !oneTarget { throw Refusal.because("--statsd-udp feeds one target: name exactly one") }
            if let recordMaxSize {
                let size = try recordMaxSize.value("--record-max-size") { (FailCondition.bytes($0) ?? 0) >= 1024 * 1024 }
                guard configuration.recordPath != nil else { throw Refusal.because("--record-max-size goes with --record FILE") }
                configuration.recordMaxBytes = FailCondition.bytes(size).map { UInt64($0) }
            }
            configuration.version = perfhudVersion
            return configuration
        }

        func run() throws {
            var configuration = try configuration()
            // The file's `--alert` lines, after the command line's (read once, at the start).
            if let path = configuration.configPath { configuration.watch.alerts += try TargetsFile.alerts(path) }
            let named = configuration.targets
            let runtime = getenv("RUNTIME_DIRECTORY").flatMap { String(cString: $0).split(separator: ":").first.map(String.init) }
            if configuration.isSingleTarget {
                if configuration.watch.eventsPath == nil, let runtime { configuration.watch.eventsPath = runtime + "/events.sock" }
            } else {
                // Several targets: --events names the directory of their sockets (LABEL.sock).
                configuration.eventsDirectory = configuration.watch.eventsPath ?? runtime
                configuration.watch.eventsPath = nil
                // perfhud.service's one target of /etc/default/perfhud keeps its socket's old name too.
                if named.count == 1, !named[0].isPattern, let runtime { configuration.legacyEventsLink = runtime + "/events.sock" }
            }
            for spec in named {
                if case .unit(let name) = spec.selector, !UnitControlGroup().isKnown(name) {
                    throw PerfHUDError(.noInput, UnitControlGroup().unknownUnitMessage(name))
                }
            }
            // A reader that goes away (a closed pipe on stderr) is a dropped line, not our end.
            signal(SIGPIPE, SIG_IGN)
            try Perfhud.exit(with: DaemonRunner.run(configuration: configuration))
        }
    }
}
