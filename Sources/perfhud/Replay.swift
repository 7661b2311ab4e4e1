import ArgumentParser
import PerfHUDPipeline
import PerfHUDRecordings
import PerfHUDRuntime
#if canImport(Glibc)
@preconcurrency import Glibc   // stdout, stderr: C globals, used by the main thread alone
#endif

/// `perfhud replay FILE`: a recording in the HUD it was measured in, or as its live rows.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Play a recording back in the HUD (space pauses, ←/→ seek, +/− speed, q quits), or print the rows the live run printed.")

    @Argument(help: "A recording made with --record.")
    var file: String

    /// --output plain|json give the rows the live run printed.
    @OptionGroup var screen: ScreenOptions

    @Option(help: "Playback speed, e.g. 2 or 0.5 (the HUD: 1; plain and json: as fast as they can be written unless given).")
    var speed: Double?

    @Option(help: "How much history the memory graph spans.")
    var history = DurationArgument(nanoseconds: 600_000_000_000)

    @Flag(help: "With --output json: end without the run's summary line.")
    var noSummary = false

    func validate() throws {
        if let speed, !(ReplayPlayhead.slowest...ReplayPlayhead.fastest).contains(speed) {
            throw ValidationError(Accepted.complaint("--speed", got: "\(speed)", in: "replay"))
        }
        if history.nanoseconds == 0 { throw ValidationError(Accepted.complaint("--history", got: history.text, in: "replay")) }
    }

    func run() throws {
        let recording = try Recording(path: file)
        var configuration = ReplaySession.Configuration()
        configuration.output = screen.resolvedOutput
        // In the HUD the file's warnings are notices; rows keep standard output to themselves.
        if configuration.output != .hud { for warning in recording.warnings { fputs("perfhud: warning: \(file): \(warning)\n", stderr) } }
        configuration.speed = speed
        configuration.reportEveryNanoseconds = screen.reportEvery?.nanoseconds
        configuration.historyNanoseconds = history.nanoseconds
        configuration.style = screen.style
        configuration.path = file
        configuration.summary = !noSummary
        try Perfhud.exit(with: ReplaySession(recording: recording, configuration: configuration).run())
    }
}
