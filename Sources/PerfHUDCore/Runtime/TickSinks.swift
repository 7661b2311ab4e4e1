#if canImport(Glibc)
import Glibc
#endif

/// Where a HUD session's ticks go — the screen (HUD) or the rows (plain, JSON), the recording and
/// the end summary — each handed the same `Tick`, so none derives a figure another already has.
final class TickSinks {
    /// The HUD (`--output hud`), or nil with `rows`.
    let screen: Screen?
    /// The plain/JSON rows (`--output plain|json`), or nil with `screen`.
    private let rows: ReportWriter?
    /// `--record FILE`, opened once the target is known.
    var recorder: Recorder?
    private var summary: SessionSummary?
    /// The screen's action log shows the actions (attach, demo; under `run` that area is the program's).
    private let showsActionLog: Bool
    /// The last tick delivered, kept for the HUD, which draws it (rows need no copy of it: a copy
    /// of the tick and its references was ~2k instructions a tick).
    private(set) var latest: Tick?
    /// Whether the last tick delivered was the session's last, and the target's name then.
    private(set) var deliveredFinal = false
    private(set) var latestCommandName: String?
    /// Ticks drawn (HUD) or rows written (plain, JSON): what `--count` counts.
    private(set) var reports = 0

    init(configuration: SessionConfiguration, output: Terminal, showsActionLog: Bool) {
        self.showsActionLog = showsActionLog
        screen = configuration.output == .hud ? Screen(device: output, style: configuration.style, ownsKeys: showsActionLog) : nil
        rows = screen == nil ? ReportWriter(configuration: configuration, output: output) : nil
        if screen != nil && configuration.summary { summary = SessionSummary(tickNanoseconds: configuration.watch.tickNanoseconds, budget: configuration.watch.events.frameBudget) }
    }

    /// The reader of the rows went away (a closed pipe): the session ends.
    var readerGone: Bool { rows?.readerGone ?? false }

    /// Hands `tick` to every sink.
    func deliver(_ tick: Tick) {
        if screen != nil { latest = tick }
        deliveredFinal = tick.isFinal
        if latestCommandName != tick.commandName { latestCommandName = tick.commandName }
        for note in tick.notes {
            // Said once: on the HUD as a notice; under the rows (which own standard output) on standard error.
            if let screen { screen.notice(TerminalText.escaped(note)) } else {
                let line = Array("perfhud: warning: \(note)\n".utf8)
                _ = line.withUnsafeBytes { SystemCall.write(STDERR_FILENO, $0) }
            }
        }
        for ended in tick.endedPhases {
            screen?.noticePhaseEnded(ended.name, keptBytes: ended.keptBytes)
        }
        if let screen, showsActionLog {
            screen.showActionLog(tick.log, dropped: tick.logDropped, highFrequency: Set(tick.events?.highFrequencyActions.map(\.action) ?? []))
        }
        recorder?.record(tick)
        summary?.add(tick)
        if let screen {
            screen.invalidate()
            if !tick.isFinal { reports += 1 }
        } else if let rows, rows.consume(tick) {
            reports += 1
        }
    }

    /// Closes the recording: everything it was handed is in the file.
    func closeRecording() { recorder?.close() }

    /// What the HUD prints under the program's output at the end (`--no-summary`: nothing).
    func summaryText(commandName: String, recordPath: String?, ending: String? = nil) -> String? {
        summary.map { $0.text(commandName: latestCommandName ?? commandName, recordPath: recordPath, ending: ending) }
    }
}
