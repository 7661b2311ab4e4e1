import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// Options of the HUD commands (`attach`, `run`, `demo`): those shared with the daemon, how the
/// result is shown (shared with `replay`), then when to stop and what else to read.
struct HUDOptions: ParsableArguments {
    @OptionGroup var watch: WatchOptions
    @OptionGroup var screen: ScreenOptions

    @Option(help: "Stop after this long.")
    var duration: DurationArgument?

    @Option(help: "Stop after this many reports.")
    var count: Int?

    @Option(help: "With run and demo: when perfhud ends the program (--duration, --count, q), the time between SIGTERM and SIGKILL, 0s…60s.")
    var grace = DurationArgument(nanoseconds: 2_000_000_000)

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
        guard grace.nanoseconds <= 60_000_000_000 else { throw ValidationError("--grace must be at most 60s") }
        guard frameGap.nanoseconds >= 1_000_000, frameGap.nanoseconds < 1_000_000_000 else {
            throw ValidationError("--frame-gap must be between 1ms and 1s")
        }
        if let reportEvery = screen.reportEvery, reportEvery.nanoseconds < watch.tick?.nanoseconds ?? WatchOptions.hudTick {
            throw ValidationError("--report-every must be at least one --tick")
        }
    }

    /// The session's configuration: `watch` shared with the daemon, the rest from here.
    func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.watch = watch.configuration(defaultTick: WatchOptions.hudTick)
        configuration.output = screen.resolvedOutput
        configuration.reportEveryNanoseconds = screen.reportEvery?.nanoseconds
        configuration.durationNanoseconds = duration?.nanoseconds
        configuration.count = count
        configuration.graceNanoseconds = grace.nanoseconds
        configuration.style = screen.style
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
}
