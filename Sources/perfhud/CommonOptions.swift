import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// A duration on the command line: `250ms`, `2s`, `10m`.
struct DurationArgument: ExpressibleByArgument {
    let nanoseconds: UInt64
    init?(argument: String) {
        guard let value = DurationText.nanoseconds(argument) else { return nil }
        nanoseconds = value
    }
    init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    var defaultValueDescription: String { DurationText.format(nanoseconds: nanoseconds) }
}

extension SessionConfiguration.Output: ExpressibleByArgument {}
extension HUDStyle.Position: ExpressibleByArgument {}
extension AcceptPolicy: ExpressibleByArgument {}

/// Options every HUD command shares.
struct CommonOptions: ParsableArguments {
    @Option(help: "Sampling interval, 1ms…10s.")
    var tick = DurationArgument(nanoseconds: 100_000_000)

    @Option(help: "How much history the memory graph spans and the ring buffers keep.")
    var history = DurationArgument(nanoseconds: 600_000_000_000)

    @Flag(help: "Sum the target and all its descendants (discovered every second).")
    var includeChildren = false

    @Option(help: "hud, plain or json (default: hud on a terminal, plain otherwise).")
    var output: SessionConfiguration.Output?

    @Option(help: "With plain or json output, report this often instead of every tick.")
    var reportEvery: DurationArgument?

    @Option(help: "Stop after this long.")
    var duration: DurationArgument?

    @Option(help: "Stop after this many reports.")
    var count: Int?

    @Option(help: "Where the HUD sits: top or bottom.")
    var position: HUDStyle.Position = .top

    @Option(help: "Rows of the memory graph.")
    var graphRows = 4

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    @Option(help: "The event socket's path (default: $XDG_RUNTIME_DIR/perfhud/PID.sock).")
    var events: String?

    @Option(help: "Who may send events: any, same-user or target (default: the target, its descendants and your user).")
    var acceptFrom: AcceptPolicy?

    @Option(help: "Actions per second at which an action label is high-frequency.")
    var actionThreshold: Double = 20

    @Option(help: "The display's refresh rate in Hz: the frame budget is 1000 / refresh ms.")
    var refresh: Double = 60

    @Option(help: "A frame longer than this many budgets is janky.")
    var jankFactor: Double = 1.5

    @Option(help: "The window of the frame-time percentiles.")
    var frameWindow = DurationArgument(nanoseconds: 10_000_000_000)

    @Option(help: "Distinct action labels kept; the rest count as __other__.")
    var maxActionLabels = 200

    @Option(help: "Also listen for StatsD datagrams on UDP HOST:PORT (loopback unless you say otherwise).")
    var statsdUdp: String?

    @Option(help: "Read actions from a reducer log (TCA _printChanges output or JSON lines): a file, followed as it grows, or - for standard input.")
    var actionsFrom: String?

    @Flag(help: "With run: read actions from the program's own output (TCA _printChanges, JSON lines).")
    var actionsFromOutput = false

    @Option(help: .hidden)
    var crashAfter: Int?

    func validate() throws {
        guard tick.nanoseconds >= 1_000_000, tick.nanoseconds <= 10_000_000_000 else {
            throw ValidationError("--tick must be between 1ms and 10s, got \(DurationText.format(nanoseconds: tick.nanoseconds))")
        }
        guard history.nanoseconds >= tick.nanoseconds else { throw ValidationError("--history must be at least one --tick") }
        guard history.nanoseconds / tick.nanoseconds <= 10_000_000 else {
            throw ValidationError("--history / --tick keeps more than 10 million samples; use a longer tick or a shorter history")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration.nanoseconds == 0 { throw ValidationError("--duration must be longer than 0") }
        if let reportEvery, reportEvery.nanoseconds < tick.nanoseconds { throw ValidationError("--report-every must be at least one --tick") }
        guard (0...20).contains(graphRows) else { throw ValidationError("--graph-rows must be between 0 and 20") }
        guard actionThreshold > 0, actionThreshold.isFinite else { throw ValidationError("--action-threshold must be a positive number") }
        guard refresh >= 1, refresh <= 1000 else { throw ValidationError("--refresh must be between 1 and 1000 Hz") }
        guard jankFactor >= 1, jankFactor.isFinite else { throw ValidationError("--jank-factor must be at least 1") }
        guard (1...10_000).contains(maxActionLabels) else { throw ValidationError("--max-action-labels must be between 1 and 10000") }
        if let statsdUdp, Self.hostAndPort(statsdUdp) == nil {
            throw ValidationError("--statsd-udp wants HOST:PORT, such as 127.0.0.1:8125, got \(statsdUdp)")
        }
        if let events, events.isEmpty { throw ValidationError("--events wants a path") }
    }

    static func hostAndPort(_ text: String) -> (host: String, port: UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        let host = String(text[..<colon])
        return host.isEmpty ? nil : (host, port)
    }

    func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tickNanoseconds = tick.nanoseconds
        configuration.historyNanoseconds = history.nanoseconds
        configuration.includeChildren = includeChildren
        configuration.output = output ?? (isatty(STDOUT_FILENO) == 1 ? .hud : .plain)
        if configuration.output == .hud && isatty(STDOUT_FILENO) != 1 { configuration.output = .plain }
        configuration.reportEveryNanoseconds = reportEvery?.nanoseconds
        configuration.durationNanoseconds = duration?.nanoseconds
        configuration.count = count
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        configuration.style = HUDStyle(position: position, color: !(noColor || noColorEnvironment), graphRows: graphRows)
        configuration.crashAfterReports = crashAfter
        configuration.eventsPath = events
        configuration.actionsFrom = actionsFrom
        configuration.actionsFromOutput = actionsFromOutput
        configuration.acceptFrom = acceptFrom
        configuration.events.actionThreshold = actionThreshold
        configuration.events.refreshHz = refresh
        configuration.events.jankFactor = jankFactor
        configuration.events.frameWindowSeconds = Double(frameWindow.nanoseconds) / 1e9
        configuration.events.maxActionLabels = maxActionLabels
        configuration.statsdUDP = statsdUdp.flatMap(Self.hostAndPort)
        return configuration
    }
}
