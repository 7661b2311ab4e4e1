import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud replay FILE`: a recording in the HUD it was measured in, or as its live rows.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Play a recording back in the HUD (space pauses, ←/→ seek, +/− speed, q quits), or print the rows the live run printed.")

    @Argument(help: "A recording made with --record.")
    var file: String

    @Option(help: "hud, plain or json (default: hud on a terminal, plain otherwise). plain and json give the rows --output printed live.")
    var output: SessionConfiguration.Output?

    @Option(help: "Playback speed, e.g. 2 or 0.5 (the HUD: 1; plain and json: as fast as they can be written unless given).")
    var speed: Double?

    @Option(help: "With plain or json output, a row this often instead of every recorded one.")
    var reportEvery: DurationArgument?

    @Option(help: "How much history the memory graph spans.")
    var history = DurationArgument(nanoseconds: 600_000_000_000)

    @Option(help: "Where the HUD sits: top or bottom.")
    var position: HUDStyle.Position = .top

    @Option(help: "Rows of the memory graph.")
    var graphRows = 4

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    func validate() throws {
        if let speed, !(ReplayPlayhead.slowest...ReplayPlayhead.fastest).contains(speed) {
            throw ValidationError("--speed must be between \(ReplayPlayhead.slowest) and \(Int(ReplayPlayhead.fastest)), e.g. 2 or 0.5")
        }
        guard (0...20).contains(graphRows) else { throw ValidationError("--graph-rows must be between 0 and 20") }
        if history.nanoseconds == 0 { throw ValidationError("--history must be longer than 0") }
    }

    func run() throws {
        let recording = try Recording(path: file)
        var configuration = ReplaySession.Configuration()
        configuration.output = HUDOptions.output(output)
        // In the HUD the file's warnings are notices; rows keep standard output to themselves.
        if configuration.output != .hud { for warning in recording.warnings { fputs("perfhud: warning: \(file): \(warning)\n", stderr) } }
        configuration.speed = speed
        configuration.reportEveryNanoseconds = reportEvery?.nanoseconds
        configuration.historyNanoseconds = history.nanoseconds
        configuration.style = HUDOptions.style(position: position, noColor: noColor, graphRows: graphRows)
        configuration.path = file
        try Perfhud.exit(with: ReplaySession(recording: recording, configuration: configuration).run())
    }
}
