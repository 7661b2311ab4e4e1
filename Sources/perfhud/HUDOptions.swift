import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// Options of the HUD commands (`attach`, `run`, `demo`): those shared with the daemon, then what
/// is shown and when to stop.
struct HUDOptions: ParsableArguments {
    @OptionGroup var watch: WatchOptions

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

    @Flag(help: "With the HUD: print no summary of the run when it ends.")
    var noSummary = false

    @Option(help: "Read actions from a reducer log (TCA _printChanges output or JSON lines): a file, followed as it grows, or - for standard input.")
    var actionsFrom: String?

    @Flag(help: "With run: read actions from the program's own output (TCA _printChanges, JSON lines).")
    var actionsFromOutput = false

    @Option(help: "With run: where the program's frames come from: auto (its events, else its OpenGL/Vulkan presents, else its terminal output), gl, vulkan, tty, events or none.")
    var frames: FrameMode = .auto

    @Option(help: "With run: the quiet that ends a burst of a terminal program's output (one frame) when it does not use synchronized output.")
    var frameGap = DurationArgument(nanoseconds: 8_000_000)

    @Option(help: "Record the session to this file (SQLite; see perfhud report and export).")
    var record: String?

    @Option(help: .hidden)
    var crashAfter: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, duration.nanoseconds == 0 { throw ValidationError("--duration must be longer than 0") }
        guard frameGap.nanoseconds >= 1_000_000, frameGap.nanoseconds < 1_000_000_000 else {
            throw ValidationError("--frame-gap must be between 1ms and 1s")
        }
        guard (0...20).contains(graphRows) else { throw ValidationError("--graph-rows must be between 0 and 20") }
        if let reportEvery, reportEvery.nanoseconds < watch.tick?.nanoseconds ?? WatchOptions.hudTick {
            throw ValidationError("--report-every must be at least one --tick")
        }
    }

    /// The session's configuration: `watch` shared with the daemon, the rest from here.
    func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.watch = watch.configuration(defaultTick: WatchOptions.hudTick)
        configuration.output = Self.output(output)
        configuration.reportEveryNanoseconds = reportEvery?.nanoseconds
        configuration.durationNanoseconds = duration?.nanoseconds
        configuration.count = count
        configuration.style = Self.style(position: position, noColor: noColor, graphRows: graphRows)
        configuration.crashAfterReports = crashAfter
        configuration.summary = !noSummary
        configuration.recordPath = record
        configuration.version = perfhudVersion
        configuration.actionsFrom = actionsFrom
        configuration.actionsFromOutput = actionsFromOutput
        configuration.frames = frames
        configuration.frameGapNanoseconds = frameGap.nanoseconds
        return configuration
    }

    /// What `--output` means here: hud on a terminal, plain otherwise (also when hud is asked for without one).
    static func output(_ asked: SessionConfiguration.Output?) -> SessionConfiguration.Output {
        let terminal = isatty(STDOUT_FILENO) == 1
        let output = asked ?? (terminal ? .hud : .plain)
        return output == .hud && !terminal ? .plain : output
    }

    /// The HUD's look; colours off with --no-color or NO_COLOR.
    static func style(position: HUDStyle.Position, noColor: Bool, graphRows: Int) -> HUDStyle {
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        return HUDStyle(position: position, color: !(noColor || noColorEnvironment), graphRows: graphRows)
    }
}
