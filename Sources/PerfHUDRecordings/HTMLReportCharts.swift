import PerfHUDPipeline

/// The charts of the HTML report, from a recording (and a baseline's, drawn dashed and fainter on
/// the same axes, time counted from each run's start): CPU; why it was slow (`HTMLReportWhyCharts`:
/// this run's only); RSS and PSS; FPS; frame times with
/// p50 / p99 lines and janky frames marked; action rates with the high-frequency labels in warm
/// colours. Phase visits are shaded in every chart. The reference lines are `RecordingSummary`'s
/// figures and a frame is janky by `RecordingSummary.isJanky`, so the page says what the tables say.
package enum HTMLReportCharts {
    package typealias Line = SVGChart.Line
    package typealias Rule = SVGChart.Rule

    static let cpuColor = "#1f77b4", rssColor = "#8e44ad", pssColor = "#16a085", fpsColor = "#2c7fb8", frameColor = "#5b7db1"
    static let p50Color = "#1e8449", p99Color = "#d35400", jankColor = "#c0392b", baselineColor = "#7f8c8d"
    static let highFrequencyColors = ["#c0392b", "#e67e22", "#d81b60", "#b7950b"]
    static let otherActionColors = ["#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#7f7f7f"]

    package static func all(_ run: HTMLReport.Run, baseline: HTMLReport.Run?, colors: [String: String]) -> String {
        let duration = max(end(of: run.recording), baseline.map { end(of: $0.recording) } ?? 0)
        let bands = phaseBands(run, colors: colors)
        // Why it was slow (format 4 on): waiting and the busiest threads after the CPU they
        // explain, faults, storage I/O and descriptors after the memory.
        let whyCharts = why(run, duration: duration, bands: bands)
        // What the run has first: frames lead where there are some, else come after the rest.
        let hasFrames = !run.recording.frames.isEmpty || !(baseline?.recording.frames.isEmpty ?? true)
        let frameCharts = frames(run, baseline: baseline, duration: duration, bands: bands)
        return (hasFrames ? frameCharts : "")
            + cpu(run, baseline: baseline, duration: duration, bands: bands) + whyCharts.cpu
            + memory(run, baseline: baseline, duration: duration, bands: bands) + whyCharts.memory
            + network(run, baseline: baseline, duration: duration, bands: bands)
            + actions(run, duration: duration, bands: bands)
            + (hasFrames ? "" : frameCharts)
    }

    /// The last moment the recording knows of: its last sample (or frame, if later).
    package static func end(of recording: Recording) -> Double {
        max(recording.samples.last?.t ?? 0, recording.frames.last?.t ?? 0)
    }

    /// One band per visit; with `--phase`, that phase stands out and the others fade.
    static func phaseBands(_ run: HTMLReport.Run, colors: [String: String]) -> [SVGChart.Band] {
        let end = run.recording.samples.last?.t ?? 0
        return run.recording.phases.map { visit in
            let opacity = run.summary.phase.map { $0 == visit.name ? 0.34 : 0.06 } ?? 0.16
            return SVGChart.Band(start: visit.t, end: visit.tExit ?? end, name: visit.name, color: colors[visit.name] ?? "#999", opacity: opacity)
        }
    }

    package static func cpu(_ run: HTMLReport.Run, baseline: HTMLReport.Run?, duration: Double, bands: [SVGChart.Band]) -> String {
        var chart = SVGChart(title: "CPU", axisTitle: "CPU % (100 = one core busy)", axis: .percent, duration: duration, bands: bands)
        if let baseline {
            chart.lines.append(Line(name: "baseline CPU %", points: baseline.recording.samples.map { ($0.t, $0.cpuPercent) }, color: baselineColor, dashed: true, opacity: 0.7))
        }
        chart.lines.append(Line(name: "CPU %", points: run.recording.samples.map { ($0.t, $0.cpuPercent) }, color: cpuColor))
        if let average = run.summary.cpuPercentAvg {
            chart.rules.append(Rule(value: average, label: "average " + SummaryFormatter.human(unit: "percent of one CPU", average), color: cpuColor))
        }
        return chart.html()
    }

    package static func memory(_ run: HTMLReport.Run, baseline: HTMLReport.Run?, duration: Double, bands: [SVGChart.Band]) -> String {
        var chart = SVGChart(title: "Memory: RSS and PSS", axisTitle: "bytes resident (RSS) and proportional (PSS)", axis: .bytes, duration: duration, bands: bands)
        if let baseline {
            chart.lines.append(Line(name: "baseline RSS", points: baseline.recording.samples.map { ($0.t, $0.residentBytes.map { Double($0) }) },
                                    color: baselineColor, dashed: true, opacity: 0.7))
        }
        chart.lines.append(Line(name: "RSS", points: run.recording.samples.map { ($0.t, $0.residentBytes.map { Double($0) }) }, color: rssColor))
        // PSS is read at most once a second: the samples between have none, which is no gap.
        let proportional = run.recording.samples.compactMap { row in row.proportionalBytes.map { (t: row.t, value: Double?.some(Double($0))) } }
        if proportional.isEmpty { chart.notes.append("PSS unavailable") }
        else { chart.lines.append(Line(name: "PSS", points: proportional, color: pssColor)) }
        return chart.html()
    }

    /// Frames in each whole second since the start (plotted at the second's end, as the live
    /// `fps` counts the last second), from the first frame's second on.
    package static func framesPerSecond(_ recording: Recording) -> [(t: Double, value: Double?)] {
        guard let first = recording.frames.map(\.t).min() else { return [] }
        let seconds = Int(end(of: recording))
        guard seconds > 0 else { return [] }
        var counts = [Double](repeating: 0, count: seconds)
        for frame in recording.frames where frame.t >= 0 && Int(frame.t) < seconds { counts[Int(frame.t)] += frame.weight }
        return (max(0, Int(first))..<seconds).map { (Double($0 + 1), counts[$0]) }
    }

    package static func frames(_ run: HTMLReport.Run, baseline: HTMLReport.Run?, duration: Double, bands: [SVGChart.Band]) -> String {
        let recording = run.recording, summary = run.summary
        guard !recording.frames.isEmpty else { return "<section class=\"chart\"><h3>Frames</h3><p class=\"note\">no frames recorded</p></section>\n" }
        var fps = SVGChart(title: "Frames per second", axisTitle: "FPS (frames in each second)", axis: .rate("FPS"), duration: duration, bands: bands)
        if let baseline, !baseline.recording.frames.isEmpty {
            fps.lines.append(Line(name: "baseline FPS", points: framesPerSecond(baseline.recording), color: baselineColor, dashed: true, opacity: 0.7))
        }
        fps.lines.append(Line(name: "FPS", points: framesPerSecond(recording), color: fpsColor))
        if let average = summary.fpsAvg { fps.rules.append(Rule(value: average, label: "average " + SummaryFormatter.human(unit: "", average) + " FPS", color: fpsColor)) }
        if let low = summary.fps1PercentLow { fps.rules.append(Rule(value: low, label: "1 % low " + SummaryFormatter.human(unit: "", low) + " FPS", color: p99Color)) }

        var times = SVGChart(title: "Frame time", axisTitle: "frame time (ms)", axis: .milliseconds, duration: duration, bands: bands)
        times.scatter = (name: "frame times (each pixel column: shortest to longest)", points: recording.frames.map { ($0.t, $0.milliseconds) }, color: frameColor)
        let budget = recording.frameBudget
        // Against the refresh, one limit for every frame; against the program's pace, a limit per frame (no rule).
        let jankLimit: Double? = budget.paced ? nil : budget.jankLimitMilliseconds
        if let p50 = summary.frameP50 { times.rules.append(Rule(value: p50, label: "p50 " + SummaryFormatter.human(RunFigure.frame_p50_ms.key, p50), color: p50Color)) }
        if let p99 = summary.frameP99 { times.rules.append(Rule(value: p99, label: "p99 " + SummaryFormatter.human(RunFigure.frame_p99_ms.key, p99), color: p99Color)) }
        if let old = baseline?.summary.frameP99 {
            times.rules.append(Rule(value: old, label: "baseline p99 " + SummaryFormatter.human(RunFigure.frame_p99_ms.key, old), color: baselineColor))
        }
        if let jankLimit { times.rules.append(Rule(value: jankLimit, label: "janky above " + SummaryFormatter.human(unit: "milliseconds", jankLimit), color: jankColor)) }
        // The frames the summary counts as janky: the same judge (`FrameJudge`) over the same frames
        // (`RecordingSummary.runFrames`: all of them, or those inside the visits of `--phase`), each by its weight.
        let windows = summary.phase.map { _ in RecordingSummary.windows(recording, phase: summary.phase) }
        var janky: [Recording.Frame] = []
        _ = RecordingSummary.runFrames(recording.frames, budget: budget, inside: windows) { janky.append($0) }
        times.marks = (name: "janky frames", points: janky.map { ($0.t, $0.milliseconds, $0.weight) }, color: jankColor)
        // A stall of seconds would flatten every other frame: the axis stops a little above the
        // slowest frames that matter, and what is longer is drawn at the top edge.
        let sorted = recording.frames.map(\.milliseconds).sorted()
        let longest = sorted.last ?? 0
        let limit = max((RecordingSummary.percentile(sorted, 99.9) ?? 0) * 1.3, (jankLimit ?? 0) * 1.5, (summary.frameP99 ?? 0) * 1.3)
        if longest > limit {
            times.yLimit = limit
            let above = sorted.count - (sorted.lastIndex { $0 <= limit }.map { $0 + 1 } ?? 0)
            times.notes.append("\(above) frame\(above == 1 ? "" : "s") above \(SummaryFormatter.human(unit: "milliseconds", limit)) drawn at the top edge (longest \(SummaryFormatter.human(unit: "milliseconds", longest)))")
        }
        return fps.html() + times.html()
    }

    /// The rate of one label over time, as the live view counts it: actions in the second up to
    /// each moment, a step up when an action arrives and down one second later.
    package static func rates(of label: String, in actions: [Recording.Action], end: Double) -> [(t: Double, value: Double?)] {
        var changes: [(t: Double, delta: Double)] = []
        for action in actions where action.label == label { changes.append((action.t, action.count)); changes.append((action.t + 1, -action.count)) }
        changes.sort { $0.t < $1.t }
        var points: [(t: Double, value: Double?)] = [(0, 0)]
        var rate = 0.0, index = 0
        // Up to the end of the run: the drops one second after the last actions come after it.
        while index < changes.count && changes[index].t <= end {
            let t = changes[index].t
            points.append((t, rate))
            while index < changes.count && changes[index].t == t { rate += changes[index].delta; index += 1 }
            if abs(rate) < 1e-9 { rate = 0 }   // what many additions and subtractions leave behind
            points.append((t, rate))
        }
        points.append((end, rate))
        return points
    }

    package static func actions(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let summary = run.summary, recording = run.recording
        guard !summary.topActions.isEmpty else { return "<section class=\"chart\"><h3>Actions</h3><p class=\"note\">no actions recorded</p></section>\n" }
        // The five busiest labels, and every high-frequency one: those are the point of the chart.
        var labels = summary.topActions.prefix(5).map(\.action)
        for action in summary.highFrequencyActions where !labels.contains(action.action) && labels.count < 8 { labels.append(action.action) }
        let peaks = Dictionary(summary.topActions.map { ($0.action, $0.peak) }, uniquingKeysWith: max)
        let highFrequency = Set(summary.highFrequencyActions.map(\.action))
        var chart = SVGChart(title: "Action rates", axisTitle: "actions per second (each label: actions in the last second)", axis: .rate("/s"), duration: duration, bands: bands)
        var warm = 0, cool = 0
        let end = end(of: recording)
        // Quiet labels first, so the high-frequency lines are drawn on top.
        for label in labels.sorted(by: { !highFrequency.contains($0) && highFrequency.contains($1) }) {
            let isHigh = highFrequency.contains(label)
            let color = isHigh ? highFrequencyColors[warm % highFrequencyColors.count] : otherActionColors[cool % otherActionColors.count]
            if isHigh { warm += 1 } else { cool += 1 }
            let name = label + (isHigh ? " (high-frequency, peak " + SummaryFormatter.human(unit: "", peaks[label]) + "/s)" : "")
            chart.lines.append(Line(name: name, points: rates(of: label, in: recording.actions, end: end), color: color, width: isHigh ? 2.6 : 1.4))
        }
        chart.rules.append(Rule(value: recording.actionThreshold, label: "high-frequency ≥ " + RowFormatter.number(recording.actionThreshold) + "/s", color: jankColor))
        if summary.topActions.count > labels.count { chart.notes.append("\(summary.topActions.count - labels.count) quieter labels not drawn") }
        return chart.html()
    }
}
