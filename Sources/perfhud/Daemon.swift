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
                help: "Where to serve /metrics: HOST:PORT (loopback unless you say otherwise).")
        var listen = "127.0.0.1:9469"
        @Option(help: "Sampling interval, 1ms…10s.") var tick = DurationArgument(nanoseconds: 1_000_000_000)
        @Option(help: "A summary line every this often.") var logInterval = DurationArgument(nanoseconds: 60_000_000_000)
        @Flag(help: "Sum the target and all its descendants.") var includeChildren = false
        @Option(help: "The event socket (default: $RUNTIME_DIRECTORY/events.sock under systemd).") var events: String?
        @Option(help: "Who may send events: any, same-user or target (default: target).") var acceptFrom: AcceptPolicy?
        @Option(help: "Actions per second at which an action label is high-frequency.") var actionThreshold: Double = 20
        @Option(help: "The display's refresh rate in Hz (frame budget = 1000 / refresh ms).") var refresh: Double = 60
        @Option(help: "Distinct action labels kept; the rest count as __other__.") var maxActionLabels = 200
        @Option(help: "Also listen for StatsD datagrams on UDP HOST:PORT.") var statsdUdp: String?

        func validate() throws {
            let chosen = [pid != nil, pidfile != nil, match != nil, unit != nil].filter { $0 }.count
            guard chosen == 1 else { throw ValidationError("choose exactly one of --pid, --pidfile, --match, --unit") }
            if let pid, pid <= 0 { throw ValidationError("--pid must be a positive number") }
            guard CommonOptions.hostAndPort(listen) != nil else { throw ValidationError("--metrics-listen wants HOST:PORT, such as 127.0.0.1:9469") }
            guard tick.nanoseconds >= 1_000_000, tick.nanoseconds <= 10_000_000_000 else { throw ValidationError("--tick must be between 1ms and 10s") }
            guard (1...10_000).contains(maxActionLabels) else { throw ValidationError("--max-action-labels must be between 1 and 10000") }
            guard refresh >= 1, refresh <= 1000 else { throw ValidationError("--refresh must be between 1 and 1000 Hz") }
            if let statsdUdp, CommonOptions.hostAndPort(statsdUdp) == nil { throw ValidationError("--statsd-udp wants HOST:PORT") }
            if let unit, unit.isEmpty { throw ValidationError("--unit wants a unit name") }
        }

        func run() throws {
            let selector: DaemonConfiguration.Selector
            if let pid { selector = .pid(pid) }
            else if let pidfile { selector = .pidfile(pidfile) }
            else if let match { selector = .match(match) }
            else { selector = .unit(unit!.contains(".") ? unit! : unit! + ".service") }
            var configuration = DaemonConfiguration(selector: selector)
            let (host, port) = CommonOptions.hostAndPort(listen)!
            configuration.listenHost = host
            configuration.listenPort = port
            configuration.tickNanoseconds = tick.nanoseconds
            configuration.logIntervalNanoseconds = logInterval.nanoseconds
            configuration.includeChildren = includeChildren
            configuration.acceptFrom = acceptFrom
            configuration.events.actionThreshold = actionThreshold
            configuration.events.refreshHz = refresh
            configuration.events.maxActionLabels = maxActionLabels
            configuration.statsdUDP = statsdUdp.flatMap(CommonOptions.hostAndPort)
            configuration.eventsPath = events ?? getenv("RUNTIME_DIRECTORY").map { String(cString: $0).split(separator: ":").first.map(String.init)! + "/events.sock" }
            let resolver: TargetResolver
            do {
                resolver = try TargetResolver(selector: selector)
            } catch {
                throw ValidationError("\(error)")
            }
            if case .unit(let name) = selector, !UnitControlGroup().isKnown(name) {
                fputs("perfhud: unknown unit \(name)\n", stderr)
                throw ArgumentParser.ExitCode(ExitStatus.noInput)
            }
            // A reader that goes away (a closed pipe on stderr) is a dropped line, not our end.
            signal(SIGPIPE, SIG_IGN)
            throw ArgumentParser.ExitCode(DaemonRunner.run(configuration: configuration, resolver: resolver))
        }
    }
}
