import PerfHUDStore
import PerfHUDPipeline

/// The charts of the HTML report that say *why* a run was slow: waiting for a CPU (beside the CPU
/// used, and the throttling where there was any), the busiest threads (a line per thread among the
/// busiest, and a table of each one's share), page faults, storage I/O, descriptors against their
/// limit. Only for a recording that has the figures (format 4 on): an older one gets none of them,
/// and a figure no row had (not readable, not read) is one line saying so, never an empty chart; a
/// figure that stayed at zero the whole run is one line too.
extension HTMLReportCharts {
    static let waitColor = "#c0392b", usedColor = "#95a5a6", throttledColor = "#8e44ad"
    static let readColor = "#2471a3", writeColor = "#d35400", minorColor = "#2e86c1", majorColor = "#c0392b", fdsColor = "#117a65"
    static let threadColors = ["#c0392b", "#2471a3", "#229954", "#b9770e", "#7d3c98"]
    /// How many threads the threads chart draws.
    static let threadsDrawn = 5

    package static func why(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> (cpu: String, memory: String) {
        guard run.recording.format >= 4 else { return ("", "") }
        return (waiting(run, duration: duration, bands: bands) + threads(run, duration: duration, bands: bands),
                faults(run, duration: duration, bands: bands) + storage(run, duration: duration, bands: bands)
                + descriptors(run, duration: duration, bands: bands))
    }

    package typealias Points = [(t: Double, value: Double?)]

    package static func series(_ recording: Recording, _ value: (TargetFigures) -> Double?) -> Points {
        recording.samples.map { ($0.t, value($0.figures)) }
    }

    /// A chart's place when it has nothing to draw: its title and why.
    package static func note(_ title: String, _ text: String) -> String {
        "<section class=\"chart\"><h3>\(HTMLText.escaped(title))</h3><p class=\"note\">\(HTMLText.escaped(text))</p></section>\n"
    }

    /// nil: no row had the figure; 0: it stayed at zero; else its peak.
    package static func peak(_ points: Points) -> Double? {
        points.reduce(nil as Double?) { peak, point in point.value.map { max(peak ?? $0, $0) } ?? peak }
    }

    package static func waiting(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let title = "Waiting for a CPU"
        let recording = run.recording
        let waiting = series(recording) { $0.cpuWaitPercent }
        guard let top = peak(waiting) else { return note(title, "not read (the kernel keeps no run-queue delays: schedstat is missing)") }
        let throttled = series(recording) { $0.cpuThrottledPercent }
        var chart = SVGChart(title: title, axisTitle: "percent of one CPU (100 = one thread runnable but not running the whole time)",
                             axis: .percent, duration: duration, bands: bands)
        chart.lines.append(Line(name: "CPU used (for comparison)", points: series(recording) { $0.cpuPercent }, color: usedColor, width: 1.2))
        if let most = peak(throttled), most > 0 {
            chart.lines.append(Line(name: "throttled by its CPU quota (% of the time)", points: throttled, color: throttledColor))
        }
        chart.lines.append(Line(name: "waiting for a CPU", points: waiting, color: waitColor, width: 2.2))
        if let average = run.summary.aggregates[.cpu_wait_percent, .mean], top > 0 {
            chart.rules.append(Rule(value: average, label: "waiting, average " + SummaryFormatter.human(unit: "percent of one CPU", average), color: waitColor))
        }
        return chart.html()
    }

    /// One thread among the busiest: its rows' CPU (nil where it was not listed while three
    /// others were, i.e. below the third: unknown), and what the table says of it.
    package struct ThreadLine {
        package var pid: Int32, tid: Int32, name: String
        var cpuSeconds = 0.0, peak = 0.0, busiestSeconds = 0.0
        package var points: Points = []
    }

    /// The threads that used the most CPU over the run (each row's list over the time since the
    /// row before: a thread's time outside the three listed is not known, so not counted), most
    /// first, each with its line.
    package static func busiestThreads(_ recording: Recording) -> [ThreadLine] {
        var threads: [String: ThreadLine] = [:]
        var previousT: Double?
        for sample in recording.samples {
            defer { previousT = sample.t }
            guard let list = sample.figures.busiestThreads else { continue }
            let seconds = previousT.map { max(0, sample.t - $0) } ?? 0
            for (rank, thread) in list.enumerated() {
                let key = "\(thread.pid) \(thread.tid)"
                var line = threads[key] ?? ThreadLine(pid: thread.pid, tid: thread.tid, name: thread.name)
                line.name = thread.name   // the latest name (a thread may rename itself)
                line.cpuSeconds += thread.cpuPercent / 100 * seconds
                line.peak = max(line.peak, thread.cpuPercent)
                if rank == 0 { line.busiestSeconds += seconds }
                threads[key] = line
            }
        }
        var ranked = threads.values.filter { $0.peak > 0 }.sorted { ($0.cpuSeconds, $1.tid) > ($1.cpuSeconds, $0.tid) }
        ranked = Array(ranked.prefix(threadsDrawn))
        // The first reading has no second before it (an empty list): unknown until a list has someone.
        let firstListed = recording.samples.firstIndex { $0.figures.busiestThreads?.isEmpty == false } ?? recording.samples.count
        for index in ranked.indices {
            let (pid, tid) = (ranked[index].pid, ranked[index].tid)
            ranked[index].points = recording.samples.enumerated().map { row, sample in
                guard row >= firstListed, let list = sample.figures.busiestThreads else { return (sample.t, nil) }
                if let thread = list.first(where: { $0.pid == pid && $0.tid == tid }) { return (sample.t, thread.cpuPercent) }
                // Only threads that ran are listed: with fewer than three listed, it did not run.
                return (sample.t, list.count < 3 ? 0 : nil)
            }
        }
        return ranked
    }

    package static func threads(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let title = "Busiest threads"
        let recording = run.recording
        guard recording.samples.contains(where: { $0.figures.busiestThreads != nil }) else { return note(title, "not read") }
        let threads = busiestThreads(recording)
        guard !threads.isEmpty else { return note(title, "no thread used a CPU in any second of the run") }
        let targetPID = Int32(recording.meta["target_pid"] ?? "")
        let otherProcesses = threads.contains { $0.pid != 0 && $0.pid != targetPID }
        func who(_ thread: ThreadLine) -> String { (otherProcesses ? "PID \(thread.pid) " : "") + "TID \(thread.tid)" }
        var chart = SVGChart(title: title, axisTitle: "CPU % of each thread over the last second (100 = one core)", axis: .percent,
                             duration: duration, bands: bands)
        for (index, thread) in threads.enumerated() {
            chart.lines.append(Line(name: thread.name + " (" + who(thread) + ")", points: thread.points,
                                    color: threadColors[index % threadColors.count], width: index == 0 ? 2.4 : 1.6))
        }
        chart.notes.append("read once a second; a gap: not among the three busiest then")
        var html = chart.html()
        let total = threads.reduce(0) { $0 + $1.busiestSeconds }
        html += "<table class=\"threads\"><tr><th>thread</th><th>\(otherProcesses ? "PID / TID" : "TID")</th><th>CPU time while listed</th><th>peak</th>"
            + "<th>the busiest thread for</th></tr>"
        for (index, thread) in threads.enumerated() {
            let share = total > 0 ? " (" + RowFormatter.number(thread.busiestSeconds / max(total, 1e-9) * 100, decimals: 0) + " %)" : ""
            html += "<tr data-tid=\"\(thread.tid)\"><td><i class=\"swatch\" style=\"background:\(threadColors[index % threadColors.count])\"></i>"
                + HTMLText.escaped(thread.name) + "</td><td>\(otherProcesses ? "\(thread.pid) / \(thread.tid)" : "\(thread.tid)")</td>"
                + "<td>\(HTMLText.escaped(SummaryFormatter.human(unit: "seconds", thread.cpuSeconds)))</td>"
                + "<td>\(HTMLText.escaped(SummaryFormatter.human(unit: "percent of one CPU", thread.peak)))</td>"
                + "<td>\(HTMLText.escaped(SummaryFormatter.human(unit: "seconds", thread.busiestSeconds) + share))</td></tr>"
        }
        return html + "</table>\n"
    }

    package static func faults(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let title = "Page faults"
        let minor = series(run.recording) { $0.minorFaultsPerSecond }, major = series(run.recording) { $0.majorFaultsPerSecond }
        guard let minorPeak = peak(minor) else { return note(title, "not read") }
        let majorPeak = peak(major) ?? 0
        guard minorPeak > 0 || majorPeak > 0 else { return note(title, "none: no page was faulted in during the run") }
        var chart = SVGChart(title: title, axisTitle: "faults per second", axis: .rate("/s"), duration: duration, bands: bands)
        chart.lines.append(Line(name: "minor (a page mapped without reading storage), peak " + SummaryFormatter.human(unit: "", minorPeak) + "/s",
                                points: minor, color: minorColor))
        chart.lines.append(Line(name: "major (a page read from storage), peak " + SummaryFormatter.human(unit: "", majorPeak) + "/s",
                                points: major, color: majorColor, width: 2.4))
        return chart.html()
    }

    package static func storage(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let title = "Storage I/O"
        let read = series(run.recording) { $0.ioReadBytesPerSecond }, written = series(run.recording) { $0.ioWriteBytesPerSecond }
        guard peak(read) != nil || peak(written) != nil else {
            return note(title, "not read (perfhud may read /proc/PID/io only of a process it may trace)")
        }
        let why = WhySummary(run.recording, phase: nil)
        guard (peak(read) ?? 0) > 0 || (peak(written) ?? 0) > 0 else { return note(title, "none: nothing was read from or written to storage") }
        var chart = SVGChart(title: title, axisTitle: "bytes per second to and from storage", axis: .bytesPerSecond, duration: duration, bands: bands)
        chart.lines.append(Line(name: "read (" + SummaryFormatter.human(unit: "bytes", why.readBytes) + " in total)", points: read, color: readColor))
        chart.lines.append(Line(name: "written (" + SummaryFormatter.human(unit: "bytes", why.writtenBytes) + " in total)", points: written, color: writeColor))
        chart.notes.append("a write counts when it dirties the page cache, whenever it reaches the disk")
        return chart.html()
    }

    package static func descriptors(_ run: HTMLReport.Run, duration: Double, bands: [SVGChart.Band]) -> String {
        let title = "Open file descriptors"
        let open = series(run.recording) { $0.fdsOpen.map { Double($0) } }
        guard let top = peak(open) else { return note(title, "not read (perfhud may list /proc/PID/fd only of a process it may trace)") }
        var chart = SVGChart(title: title, axisTitle: "descriptors open", axis: .rate("descriptors"), duration: duration, bands: bands)
        chart.lines.append(Line(name: "open, peak " + RowFormatter.number(top, decimals: 0), points: open, color: fdsColor, width: 2))
        // The limit as a line when the peak came within a quarter of it; far above, it would
        // flatten the line to nothing: said in the legend instead.
        if let limit = run.recording.samples.last(where: { $0.figures.fdsLimit != nil })?.figures.fdsLimit.map({ Double($0) }) {
            if top >= limit / 4 { chart.rules.append(Rule(value: limit, label: "limit " + RowFormatter.number(limit, decimals: 0), color: jankColor)) }
            else { chart.notes.append("limit " + RowFormatter.number(limit, decimals: 0) + " (far above: not drawn)") }
        }
        return chart.html()
    }
}
