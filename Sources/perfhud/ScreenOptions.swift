import ArgumentParser
import PerfHUDRender
import PerfHUDOutput
#if canImport(Glibc)
import Glibc
#endif

/// How a session is shown, live (`attach`, `run`, `demo`) or replayed (`replay`): the HUD and its
/// look, or the plain/JSON rows and how often.
struct ScreenOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "hud, plain or json (default: hud on a terminal, plain otherwise).")
    var output: Given<SessionConfiguration.Output>?

    @Option(parsing: .unconditional, help: "With plain or json output, a row this often instead of every tick.")
    var reportEvery: Given<DurationValue>?

    @Option(parsing: .unconditional, help: "Where the HUD sits: top or bottom.")
    var position: Given<HUDStyle.Position> = "top"

    @Option(parsing: .unconditional, help: "Rows of the memory graph.")
    var graphRows: Given<Int> = "4"

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    @Flag(help: "Inside tmux: the status line and the memory graph in the session's own status lines (every window of it) instead of rows of the pane; put back as they were when perfhud ends.")
    var tmux = false

    @Flag(help: "Ring the terminal's bell once as an --alert begins to hold.")
    var alertBell = false

    @Flag(help: "With the HUD: a details line under the status line saying why the target is slow (d shows or hides it in attach, demo and replay).")
    var details = false

    /// The options read; a refusal (`Refusal`) for the first that does not read or is out of range.
    struct Read {
        /// hud on a terminal, plain otherwise (also when hud is asked for without one).
        let output: SessionConfiguration.Output
        let reportEveryNanoseconds: UInt64?
        /// The HUD's look; colours off with --no-color or NO_COLOR; ASCII where the locale is not UTF-8.
        let style: HUDStyle
    }

    /// - Parameter shortestReport: the shortest `--report-every` (a live session's tick).
    func read(shortestReport: UInt64) throws -> Read {
        let terminal = isatty(STDOUT_FILENO) == 1
        let chosen = try output?.value("--output") ?? (terminal ? .hud : .plain)
        let reportEvery = try reportEvery?.value("--report-every") { $0.nanoseconds >= max(shortestReport, 1) }
        let graphRows = try graphRows.value("--graph-rows") { (0...20).contains($0) }
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        var style = HUDStyle(position: try position.value("--position"), color: !(noColor || noColorEnvironment), graphRows: graphRows,
                             unicode: LocaleCharset.isUTF8(), showsDetails: details, bell: alertBell)
        style.inTmux = tmux
        if tmux && (chosen != .hud || !terminal) { throw Refusal.because("--tmux shows the HUD in tmux's status lines: it needs the HUD's output on a terminal (no --output plain or json)") }
        return Read(output: chosen == .hud && !terminal ? .plain : chosen, reportEveryNanoseconds: reportEvery?.nanoseconds, style: style)
    }
}
