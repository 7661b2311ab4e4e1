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
        return configuration
    }
}
