import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// What a HUD session prints under the program's output when it ends (`--no-summary` skips it):
/// the run's key figures, as running totals — no history is kept for them, so they cover the whole
/// run however long (the memory graph's history does not). Each figure is defined as `report`
/// defines it, over the same ticks (those a recording keeps as rows: the exit row too, not the last
/// tick of a session perfhud ended), so the two say the same; percentiles and lows need every
/// frame: `--record` and `report` have them.
package final class SessionSummary: TickSink {
    /// It counts every frame and action.
    package static let readsEveryFrame = true
    /// The run summed up by the code that sums up a recording for `report` (`RunSummary`): CPU avg
    /// and peak, RSS at start, peak and end, the busiest thread, storage I/O, frames, FPS avg, janky
    /// and dropped.
    private let run: RunSummary
    private var last: TargetFigures?
    private var worstAction: (action: String, peak: Double)?
    private var events: EventSnapshot?
    private var aggregates: RunAggregates { run.aggregates }
    private var busiest: BusyThread? { run.busiest }
    private var storage: RunStorageIO { run.storage }
    private var frames: RunFrames { run.frames }

    package init(tickNanoseconds: UInt64, budget: FrameBudget) {
        run = RunSummary(budget: budget, tickSeconds: Double(tickNanoseconds) / 1e9, countsPhasesAndActions: false)
    }

    package func consume(_ tick: Tick) {
        // The totals: the last tick's, taken after the event socket was drained, have everything.
        events = tick.events
        for action in tick.events?.highFrequencyActions ?? [] where action.peak > worstAction?.peak ?? 0 {
            worstAction = (action.action, action.peak)
        }
        run.consume(tick)
        if tick.isRow { last = tick.figures }
    }

    /// The "why" line: peak wait, busiest thread, total I/O, peak descriptors, the leak verdict;
    /// nil when there is nothing to say (figures not collected, or all quiet).
    private func whyLine(_ figure: (Figure.Field, RunAggregates.Rule) -> Double?, last: TargetFigures) -> String? {
        var parts: [String] = []
        if let wait = figure(.cpu_wait_percent, .max), wait >= 1 { parts.append("waiting for a CPU peaked at " + Units.percent(wait)) }
        if let busiest {
            parts.append("busiest thread " + TerminalText.escaped(busiest.name, maxLength: 32) + " (TID \(busiest.tid)) " + Units.percent(busiest.cpuPercent))
        }
        if storage.readBytes != nil || storage.writtenBytes != nil {
            let read = storage.readBytes ?? 0, written = storage.writtenBytes ?? 0
            if read > 0 || written > 0 { parts.append("storage I/O read " + Units.bytes(read) + ", written " + Units.bytes(written)) }
        }
        if let fds = figure(.fds_open, .max) {
            parts.append("fds peak " + RowFormatter.number(fds, decimals: 0) + (last.fdsLimit.map { " of \($0)" } ?? ""))
        }
        if figure(.leak_suspected, .max) == 1 {
            var text = "leak suspected"
            if let slope = last.residentTrendBytesPerHour, let r2 = last.residentTrendR2 {
                text += ": RSS " + Units.signedBytes(slope) + "/h (r² " + RowFormatter.number(r2, decimals: 2) + ")"
            }
            parts.append(text)
        }
        return parts.isEmpty ? nil : "perfhud: " + parts.joined(separator: "; ")
    }

    /// The lines, each starting `perfhud: `; empty before the first report.
    /// - Parameter ending: how perfhud ended the program it ran, when it did (`--duration`, `--count`, `q`).
    package func text(commandName: String, recordPath: String?, ending: String? = nil) -> String {
        guard let last, let firstT = run.firstT, let lastT = run.lastT else { return "" }
        // `report`'s duration: from the first row to the last.
        let seconds = max(0, lastT - firstT)
        var parts = ["\(DurationText.clock(seconds: last.elapsedSeconds)) of \(TerminalText.escaped(commandName)) (PID \(last.pid))"]
        let figure = { (field: Figure.Field, rule: RunAggregates.Rule) in self.aggregates[field, rule] }
        if let average = figure(.cpu_percent, .mean) {
            parts.append("CPU avg " + Units.percent(average) + (figure(.cpu_percent, .max).map { " (peak " + Units.percent($0) + ")" } ?? ""))
        }
        if let start = figure(.rss_bytes, .atStart), let peak = figure(.rss_bytes, .max), let end = figure(.rss_bytes, .last) {
            parts.append("RSS " + Units.bytes(start) + " at start, peak " + Units.bytes(peak) + ", " + Units.bytes(end) + " at the end")
        }
        var lines = ["perfhud: " + parts.joined(separator: ", ")]
        if let oomKill = last.oomKillText { lines.append("perfhud: PID \(last.pid) (\(TerminalText.escaped(commandName))) was " + oomKill) }
        if let why = whyLine(figure, last: last) { lines.append(why) }
        if let events, frames.total > 0 || events.hasActions {
            var figures: [String] = []
            // `report`'s frames, FPS avg, janky and dropped, by its code (`RunFrames`) over the same frames.
            if frames.total > 0, seconds > 0 {
                figures.append("frames " + RowFormatter.number(frames.total, decimals: 0)
                               + " (" + RowFormatter.number(frames.total / seconds, decimals: 0) + " FPS avg"
                               + (frames.source.map { ", " + $0.rawValue } ?? "") + "), janky "
                               + RowFormatter.number(frames.janky, decimals: 0) + ", dropped " + RowFormatter.number(frames.dropped, decimals: 0))
            }
            if events.hasActions {
                var text = "actions " + RowFormatter.number(events.actionsTotal, decimals: 0)
                if let worstAction {
                    text += " (high-frequency: " + TerminalText.escaped(worstAction.action, maxLength: 60) + " peaked at "
                        + RowFormatter.number(worstAction.peak, decimals: 0) + "/s)"
                }
                figures.append(text)
            }
            if let p50 = events.inputLatencyP50, let p99 = events.inputLatencyP99 {
                figures.append("key→screen p50 " + RowFormatter.number(p50, decimals: 0) + " ms, p99 " + RowFormatter.number(p99, decimals: 0) + " ms")
            }
            lines.append("perfhud: " + figures.joined(separator: "; "))
        }
        for span in run.alertSpans { lines.append("perfhud: " + span.sentence) }
        if let ending { lines.append("perfhud: " + ending) }
        if let recordPath { lines.append("perfhud: recorded in \(TerminalText.escaped(recordPath)): perfhud report \(TerminalText.escaped(recordPath))") }
        return lines.joined(separator: "\n") + "\n"
    }
}
