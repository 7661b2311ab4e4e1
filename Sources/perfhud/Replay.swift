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
        abstract: "Play a recording back in the HUD (space pauses, ←/→ seek, +/− speed, q quits), or print the rows the live run printed.",
        usage: "perfhud replay <file> [<options>]")

    /// The recording, and whatever else of the line is none of the options: refused in validate().
    /// (The usage is said in the configuration: ArgumentParser's would read `[<file> ...]`.)
    @Argument(parsing: .allUnrecognized, help: "A recording made with --record.")
    var file: [String] = []

    /// --output plain|json give the rows the live run printed.
    @OptionGroup var screen: ScreenOptions

    @Option(parsing: .unconditional, help: "Playback speed, e.g. 2 or 0.5 (the HUD: 1; plain and json: as fast as they can be written unless given).")
    var speed: Given<Double>?

    @Option(parsing: .unconditional, help: "How much history the memory graph spans.")
    var history: Given<DurationValue> = "10m"

    @Flag(help: "With --output json: end without the run's summary line.")
    var noSummary = false

    func validate() throws {
        _ = try configuration()
    }

    /// The replay's configuration; a refusal (`Refusal`) for the first argument that is missing or does not read.
    func configuration() throws -> ReplaySession.Configuration {
        var configuration = ReplaySession.Configuration()
        configuration.path = try RecordingArgument.file(file, of: Self.self)
        let screen = try screen.read(shortestReport: 1)
        configuration.output = screen.output
        configuration.reportEveryNanoseconds = screen.reportEveryNanoseconds
        configuration.style = screen.style
        configuration.speed = try speed?.value("--speed", in: "replay") { (ReplayPlayhead.slowest...ReplayPlayhead.fastest).contains($0) }
        configuration.historyNanoseconds = try history.value("--history", in: "replay") { $0.nanoseconds > 0 }.nanoseconds
        configuration.summary = !noSummary
        return configuration
    }

    func run() throws {
        let configuration = try configuration()
        let recording = try Recording(path: configuration.path)
        // In the HUD the file's warnings are notices; rows keep standard output to themselves.
        if configuration.output != .hud {
            for warning in recording.warnings { fputs("perfhud: warning: \(configuration.path): \(warning)\n", stderr) }
        }
        try Perfhud.exit(with: ReplaySession(recording: recording, configuration: configuration).run())
    }
}
