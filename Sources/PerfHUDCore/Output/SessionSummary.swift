/// What a HUD session prints under the program's output when it ends (`--no-summary` skips it):
/// the run's key figures, as running totals — no history is kept for them, so they cover the whole
/// run however long (the memory graph's history does not). The figures are `report`'s where they
/// are defined the same way; percentiles and lows need every frame: `--record` and `report` have them.
struct SessionSummary {
    private var first: Report?
    private var last: Report?
    private var cpuPeak: Double?
    private var residentPeak: UInt64?
    private var worstAction: (action: String, peak: Double)?
    private var events: EventSnapshot?

    mutating func add(_ tick: Tick) {
        let report = tick.report, events = tick.events
        if first == nil { first = report }
        if report.alive { last = report }
        if let cpu = report.cpuPercent { cpuPeak = max(cpuPeak ?? cpu, cpu) }
        if let resident = report.residentBytes { residentPeak = max(residentPeak ?? resident, resident) }
        for action in events?.highFrequencyActions ?? [] where action.peak > worstAction?.peak ?? 0 {
            worstAction = (action.action, action.peak)
        }
        self.events = events
    }

    /// The lines, each starting `perfhud: `; empty before the first report.
    func text(commandName: String, recordPath: String?) -> String {
        guard let first, let last else { return "" }
        let seconds = max(0, last.elapsedSeconds - first.elapsedSeconds)
        var parts = ["\(DurationText.clock(seconds: last.elapsedSeconds)) of \(TerminalText.escaped(commandName)) (PID \(last.pid))"]
        if let start = first.cpuSecondsTotal, let end = last.cpuSecondsTotal, seconds > 0 {
            parts.append("CPU avg " + Units.percent((end - start) / seconds * 100) + (cpuPeak.map { " (peak " + Units.percent($0) + ")" } ?? ""))
        }
        if let start = first.residentBytes, let peak = residentPeak, let end = last.residentBytes {
            parts.append("RSS " + Units.bytes(Double(start)) + " at start, peak " + Units.bytes(Double(peak)) + ", " + Units.bytes(Double(end)) + " at the end")
        }
        var lines = ["perfhud: " + parts.joined(separator: ", ")]
        if let events, events.hasFrames || events.hasActions {
            var figures: [String] = []
            if events.hasFrames, last.elapsedSeconds > 0 {
                figures.append("frames " + ReportFormatter.number(events.framesTotal, decimals: 0)
                               + " (" + ReportFormatter.number(events.framesTotal / last.elapsedSeconds, decimals: 0) + " FPS avg"
                               + (events.frameSource.map { ", " + $0.rawValue } ?? "") + "), janky "
                               + ReportFormatter.number(events.jankyFrames, decimals: 0) + ", dropped " + ReportFormatter.number(events.droppedFrames, decimals: 0))
            }
            if events.hasActions {
                var text = "actions " + ReportFormatter.number(events.actionsTotal, decimals: 0)
                if let worstAction {
                    text += " (high-frequency: " + TerminalText.escaped(worstAction.action, maxLength: 60) + " peaked at "
                        + ReportFormatter.number(worstAction.peak, decimals: 0) + "/s)"
                }
                figures.append(text)
            }
            if let p50 = events.inputLatencyP50, let p99 = events.inputLatencyP99 {
                figures.append("key→screen p50 " + ReportFormatter.number(p50, decimals: 0) + " ms, p99 " + ReportFormatter.number(p99, decimals: 0) + " ms")
            }
            lines.append("perfhud: " + figures.joined(separator: "; "))
        }
        if let recordPath { lines.append("perfhud: recorded in \(TerminalText.escaped(recordPath)): perfhud report \(TerminalText.escaped(recordPath))") }
        return lines.joined(separator: "\n") + "\n"
    }
}
