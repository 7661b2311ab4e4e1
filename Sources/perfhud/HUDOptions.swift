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

    @Option(parsing: .unconditional, help: "Stop after this long.")
    var duration: Given<DurationValue>?

    @Option(parsing: .unconditional, help: "Stop after this many reports.")
    var count: Given<Int>?

    @Flag(help: "Print no summary of the run when it ends (the HUD's lines under the program's output; --output json's last line, {\"summary\": …}).")
    var noSummary = false

    @Option(parsing: .unconditional, help: "Read actions from a reducer log (TCA _printChanges output or JSON lines): a file, followed as it grows, or - for standard input.")
    var actionsFrom: Given<String>?

    @Option(parsing: .unconditional, help: "Record the session to this file (SQLite; see perfhud report and export).")
    var record: Given<String>?

    @Option(parsing: .unconditional, help: ArgumentHelp("Serve the JSON rows of the ticks, as --output json writes them, on this Unix socket to any number of readers (a reader that falls behind loses rows and is told how many).",
                                                        valueName: "PATH"))
    var feed: Given<String>?

    @Option(parsing: .unconditional, help: .hidden)
    var crashAfter: Given<Int>?

    func validate() throws {
        _ = try configuration()
    }

    /// The session's configuration: `watch` shared with the daemon, the rest from here; a refusal
    /// (`Refusal`) for the first option that does not read or is out of range.
    func configuration() throws -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.watch = try watch.configuration(defaultTick: WatchOptions.hudTick)
        let screen = try screen.read(shortestReport: configuration.watch.tickNanoseconds)
        configuration.output = screen.output
        configuration.reportEveryNanoseconds = screen.reportEveryNanoseconds
        configuration.style = screen.style
        configuration.durationNanoseconds = try duration?.value("--duration") { $0.nanoseconds > 0 }.nanoseconds
        configuration.count = try count?.value("--count") { $0 >= 1 }
        configuration.crashAfterReports = try crashAfter?.value("--crash-after")
        configuration.summary = !noSummary
        configuration.recordPath = try record?.value("--record") { !$0.isEmpty }
        configuration.feedPath = try feed?.value("--feed") { !$0.isEmpty && $0.utf8.count < 108 }
        configuration.version = perfhudVersion
        configuration.actionsFrom = try actionsFrom?.value("--actions-from") { !$0.isEmpty }
        return configuration
    }
}
