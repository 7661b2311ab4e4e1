import ArgumentParser
import PerfHUDRender
import PerfHUDOutput
#if canImport(Glibc)
import Glibc
#endif

/// How a session is shown, live (`attach`, `run`, `demo`) or replayed (`replay`): the HUD and its
/// look, or the plain/JSON rows and how often.
struct ScreenOptions: ParsableArguments {
    @Option(help: "hud, plain or json (default: hud on a terminal, plain otherwise).")
    var output: SessionConfiguration.Output?

    @Option(help: "With plain or json output, a row this often instead of every tick.")
    var reportEvery: DurationArgument?

    @Option(help: "Where the HUD sits: top or bottom.")
    var position: HUDStyle.Position = .top

    @Option(help: "Rows of the memory graph.")
    var graphRows = 4

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    @Flag(help: "With the HUD: a details line under the status line saying why the target is slow (d shows or hides it in attach, demo and replay).")
    var details = false

    func validate() throws {
        guard (0...20).contains(graphRows) else { throw ValidationError(Accepted.complaint("--graph-rows", got: String(graphRows))) }
    }

    /// What `--output` means here: hud on a terminal, plain otherwise (also when hud is asked for without one).
    var resolvedOutput: SessionConfiguration.Output {
        let terminal = isatty(STDOUT_FILENO) == 1
        let chosen = output ?? (terminal ? .hud : .plain)
        return chosen == .hud && !terminal ? .plain : chosen
    }

    /// The HUD's look; colours off with --no-color or NO_COLOR; ASCII where the locale is not UTF-8.
    var style: HUDStyle {
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        return HUDStyle(position: position, color: !(noColor || noColorEnvironment), graphRows: graphRows,
                        unicode: LocaleCharset.isUTF8(), showsDetails: details)
    }
}
