import ArgumentParser
import PerfHUDOutput
#if canImport(Glibc)
import Glibc
#endif

/// Options of the HUD commands (`attach`, `run`, `demo`): those shared with the daemon, how the
/// result is shown (shared with `replay`), then when to stop and what else to read. What only
/// `run` can do is in `RunOptions`.
struct HUDOptions: ParsableArguments {
    @OptionGroup var watch: WatchOptions
    @OptionGroup var screen: ScreenOptions

    @Option(help: "Stop after this long.")
    var duration: DurationArgument?

    @Option(help: "Stop after this many reports.")
    var count: Int?

    @Flag(help: "Print no summary of the run when it ends (the HUD's lines under the program's output; --output json's last line, {\"summary\": …}).")
    var noSummary = false

    @Option(help: "Read actions from a reducer log (TCA _printChanges output or JSON lines): a file, followed as it grows, or - for standard input.")
    var actionsFrom: String?

    @Option(help: "Record the session to this file (SQLite; see perfhud report and export).")
    var record: String?

    @Option(help: .hidden)
    var crashAfter: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError(Accepted.complaint("--count", got: String(count))) }
        if let duration, duration.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--duration", got: duration.text)) }
        if let reportEvery = screen.reportEvery, reportEvery.nanoseconds < watch.tick?.nanoseconds ?? WatchOptions.hudTick {
            throw ValidationError(Accepted.complaint("--report-every", got: reportEvery.text))
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
        configuration.style = screen.style
        configuration.crashAfterReports = crashAfter
        configuration.summary = !noSummary
        configuration.recordPath = record
        configuration.version = perfhudVersion
        configuration.actionsFrom = actionsFrom
        return configuration
    }
}
