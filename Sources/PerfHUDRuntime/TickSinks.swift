import PerfHUDPipeline
import PerfHUDTerminal
import PerfHUDOutput
import PerfHUDRecordings

/// The one fan-out of a HUD session's ticks: the screen (HUD) or the rows (plain, JSON), the
/// recording and the end summary, each handed the same `Tick` in turn (`TickSink`).
final class TickSinks {
    /// The HUD (`--output hud`), or nil with `rows`.
    private let screenSink: ScreenSink?
    package var screen: Screen? { screenSink?.screen }
    /// The plain/JSON rows (`--output plain|json`), or nil with `screen`.
    private let rows: RowWriter?
    /// `--record FILE`, opened once the target is known.
    package var recorder: Recorder? {
        didSet { sinks = Self.sinks(screenSink, rows, recorder, summary, summaryLine, feed) }
    }
    /// `--feed PATH`, listening once the session starts.
    var feed: RowFeed? {
        didSet { sinks = Self.sinks(screenSink, rows, recorder, summary, summaryLine, feed) }
    }
    private let summary: SessionSummary?
    /// `--output json`'s last line, the run's summary (`--no-summary`: none).
    private let summaryLine: SummaryLine?
    /// The sinks, in the order each tick is handed to them.
    private var sinks: [TickSink]
    /// Whether the last tick delivered was the session's last, and the target's name then.
    private(set) var deliveredFinal = false
    private(set) var latestCommandName: String?
    /// `--alert`: decides at each tick, before any sink sees it, which alerts hold.
    private var alerts: AlertTracker?

    package init(configuration: SessionConfiguration, output: Terminal, showsActionLog: Bool) {
        screenSink = configuration.output == .hud
            ? ScreenSink(screen: Screen(device: output, style: configuration.style, ownsKeys: showsActionLog), showsActionLog: showsActionLog) : nil
        rows = screenSink == nil ? RowWriter(configuration: configuration, output: output) : nil
        summary = screenSink != nil && configuration.summary
            ? SessionSummary(tickNanoseconds: configuration.watch.tickNanoseconds, budget: configuration.watch.events.frameBudget) : nil
        summaryLine = configuration.output == .json && configuration.summary
            ? SummaryLine(tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events) : nil
        sinks = Self.sinks(screenSink, rows, nil, summary, summaryLine)
        alerts = configuration.watch.alerts.isEmpty ? nil : AlertTracker(AlertRules(configuration.watch.alerts))
    }

    private static func sinks(_ sinks: TickSink?...) -> [TickSink] { sinks.compactMap { $0 } }

    /// The last tick delivered, which the HUD draws (rows keep no copy of it).
    package var latest: Tick? { screenSink?.latest }
    /// Ticks drawn (HUD) or rows written (plain, JSON): what `--count` counts.
    var reports: Int { screenSink?.drawn ?? rows?.written ?? 0 }
    /// The reader of the rows went away (a closed pipe): the session ends.
    package var readerGone: Bool { rows?.readerGone ?? false }

    /// Whether a sink fed here reads every frame and action (`TickSink.readsEveryFrame`): what the
    /// watcher is told to keep.
    package var readsEveryFrame: Bool { sinks.readEveryFrame }

    /// Hands `tick` to every sink.
    package func deliver(_ tick: Tick) {
        var tick = tick
        alerts?.apply(to: &tick)
        assert(tick.everyFrame != nil || !readsEveryFrame, "a sink reads every frame: its watcher must keep them")
        deliveredFinal = tick.isFinal
        if latestCommandName != tick.commandName { latestCommandName = tick.commandName }
        for sink in sinks { sink.consume(tick) }
    }

    /// Closes the recording: everything it was handed is in the file.
    func closeRecording() { recorder?.close() }

    /// `--output json`'s summary line, written after the last row (`--no-summary`: none).
    func writeSummaryLine(startedAt: String?) {
        guard let line = summaryLine?.line(startedAt: startedAt), let rows, !rows.readerGone else { return }
        rows.write(line)
    }

    /// The session's clock starts (its store's start): before the first tick.
    func sessionStarts(at startNanoseconds: UInt64) { summaryLine?.start(at: startNanoseconds) }

    /// What the HUD prints under the program's output at the end (`--no-summary`: nothing).
    func summaryText(commandName: String, recordPath: String?, ending: String? = nil) -> String? {
        summary.map { $0.text(commandName: latestCommandName ?? commandName, recordPath: recordPath, ending: ending) }
    }
}
