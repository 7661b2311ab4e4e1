import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// `perfhud report --format html`: a run's report as one self-contained page — inline style and
/// inline SVG, no script, nothing fetched from anywhere — so it can be attached to a CI job or
/// mailed and opened offline. The figures are `RecordingSummary`'s, formatted as the markdown
/// report formats them; the charts are drawn by `HTMLReportCharts`. Every string that came from
/// the recording goes through `HTMLText.escaped`.
public enum HTMLReport {
    /// One run to report: the recording, its summary (with the `--phase` of the report), and the
    /// file it was read from.
    public struct Run {
        public var recording: Recording
        public var summary: RecordingSummary
        public var path: String
        public init(recording: Recording, summary: RecordingSummary, path: String) {
            self.recording = recording; self.summary = summary; self.path = path
        }
    }

    /// The page: header, warnings, summary (side by side with `baseline` when given), charts,
    /// phases and actions.
    /// - Parameter note: the baseline judged again against this run's frame reference.
    public static func page(_ run: Run, baseline: Run? = nil, note: String? = nil) -> String {
        let command = run.recording.meta["target_command"] ?? "?"
        let title = "perfhud report: " + command + (run.summary.phase.map { " (phase " + $0 + ")" } ?? "")
        var html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(HTMLText.escaped(title))</title>\n"
        html += "<style>\(style)</style></head>\n<body><main>\n<h1>\(HTMLText.escaped(title))</h1>\n"
        html += header(run, label: baseline == nil ? nil : "this run")
        if let baseline { html += header(baseline, label: "baseline") }
        for warning in run.recording.warnings { html += "<p class=\"warning\">warning: \(HTMLText.escaped(run.path)): \(HTMLText.escaped(warning))</p>\n" }
        for warning in baseline?.recording.warnings ?? [] {
            html += "<p class=\"warning\">warning (baseline): \(HTMLText.escaped(baseline!.path)): \(HTMLText.escaped(warning))</p>\n"
        }
        if let note { html += "<p class=\"note\">\(HTMLText.escaped(note.prefix(1).uppercased() + note.dropFirst())).</p>\n" }
        if let phase = run.summary.phase {
            html += "<p class=\"note\">Figures count only the time in phase <b>\(HTMLText.escaped(phase))</b>"
                + " (" + plural(run.summary.phases.first?.visits ?? 0, "visit") + ", \(SummaryFormatter.human(unit: "seconds", run.summary.durationSeconds)));"
                + " the charts show the whole run with that phase highlighted.</p>\n"
            if run.summary.phases.isEmpty { html += "<p class=\"warning\">The recording has no phase \(HTMLText.escaped(phase)).</p>\n" }
        }
        html += "<h2>Summary</h2>\n" + summary(run.summary, baseline: baseline?.summary, recording: run.recording) + whyList(run)
        // Tables first (what a reviewer reads), then the charts that explain them.
        let colors = phaseColors(run.recording)
        html += "<h2>Phases</h2>\n" + phaseTable(run.summary, colors: colors)
        if let baseline, !(run.summary.phases.isEmpty && baseline.summary.phases.isEmpty) {
            html += "<h3>Against the baseline</h3>\n<table class=\"phases compare\"><tr>"
                + SummaryFormatter.phaseComparisonHeader.map { "<th>\(HTMLText.escaped($0))</th>" }.joined() + "</tr>"
            for row in SummaryFormatter.phaseComparison(run.summary, baseline: baseline.summary) {
                html += "<tr>" + row.map { "<td>\(HTMLText.escaped($0))</td>" }.joined() + "</tr>"
            }
            html += "</table>\n"
        }
        html += "<h2>Actions</h2>\n" + actionTable(run.summary, recording: run.recording)
        html += "<h2>Over time</h2>\n" + HTMLReportCharts.all(run, baseline: baseline, colors: colors)
        return html + "</main></body></html>\n"
    }

    /// A colour per phase name, in the order the phases were first entered (the bands, the legend
    /// and the phase table agree).
    package static func phaseColors(_ recording: Recording) -> [String: String] {
        let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"]
        var colors: [String: String] = [:]
        for visit in recording.phases where colors[visit.name] == nil { colors[visit.name] = palette[colors.count % palette.count] }
        return colors
    }

    package static func header(_ run: Run, label: String?) -> String {
        let meta = run.recording.meta
        var rows: [(String, String)] = [("recording", run.path)]
        if let line = meta["target_command_line"] ?? meta["target_command"] { rows.append(("target", line + (meta["target_pid"].map { "  (PID " + $0 + ")" } ?? ""))) }
        if let options = meta["options"] { rows.append(("recorded by", JSONText.strings(options)?.joined(separator: " ") ?? options)) }
        if let version = meta["perfhud_version"] { rows.append(("perfhud version", version)) }
        if let started = meta["started_at"] { rows.append(("started at", started)) }
        // The summary's duration and frame count (first row to last; each frame by its weight): the
        // header says what the summary table says.
        let duration = run.summary.durationSeconds
        rows.append(("duration", SummaryFormatter.human(unit: "seconds", duration) + (duration >= 120 ? " (" + DurationText.format(nanoseconds: UInt64(duration * 1e9)) + ")" : "")
            + ", \(run.summary.samples) samples, " + RowFormatter.number(run.summary.frames, decimals: 0) + " frames"))
        if let tick = meta["tick_seconds"].flatMap(Double.init), tick > 0 { rows.append(("tick", DurationText.format(nanoseconds: UInt64((tick * 1e9).rounded())))) }
        let recording = run.recording
        if recording.frameBudget.paced {
            rows.append(("janky frames", "longer than " + RowFormatter.number(recording.jankFactor, decimals: 2)
                + " × the program's pace (the median of its last \(FrameJudge.paceFrames) frames)"))
        } else {
            rows.append(("frame budget", RowFormatter.number(1000 / recording.refreshHz, decimals: 1) + " ms (" + RowFormatter.number(recording.refreshHz, decimals: 1)
                + " Hz); janky above " + RowFormatter.number(recording.jankFactor, decimals: 2) + " × budget"))
        }
        rows.append(("high-frequency actions", "≥ " + RowFormatter.number(recording.actionThreshold) + " a second"))
        var html = label.map { "<h3>\(HTMLText.escaped($0))</h3>" } ?? ""
        html += "<dl class=\"meta\">" + rows.map { "<dt>\(HTMLText.escaped($0.0))</dt><dd>\(HTMLText.escaped($0.1))</dd>" }.joined() + "</dl>\n"
        return html
    }

    /// The figures, in groups: MangoHud's frame figures, CPU and memory, actions.
    package static func summary(_ summary: RecordingSummary, baseline: RecordingSummary?, recording: Recording) -> String {
        func value(_ figures: RecordingSummary, _ key: String) -> Double? {
            RecordingSummary.keys.firstIndex(of: key).flatMap { figures.numbers[$0] }
        }
        let jank = recording.frameBudget.paced ? RowFormatter.number(recording.jankFactor, decimals: 2) + " × pace"
            : RowFormatter.number(recording.jankFactor * 1000 / recording.refreshHz, decimals: 1) + " ms"
        let frameGroup: (String, [(key: String, label: String)]) = (
            "Frames", [(RunFigure.frames.key, "frames"), (RunFigure.fps_avg.key, "average FPS (frames ÷ time)"), (RunFigure.fps_1pct_low.key, "1 % low FPS (1000 ÷ p99)"),
                        (RunFigure.fps_0_1pct_low.key, "0.1 % low FPS (1000 ÷ p99.9)"), (RunFigure.frame_p50_ms.key, "frame time p50"), (RunFigure.frame_p97_ms.key, "frame time p97"),
                        (RunFigure.frame_p99_ms.key, "frame time p99"), (RunFigure.frame_p99_9_ms.key, "frame time p99.9"),
                        (RunFigure.janky_frames.key, "janky frames (> \(jank))"), (RunFigure.dropped_frames.key, "dropped frames")])
        // What the run has leads: its frames where it reported any (either run), else no frame table
        // of n/a first (the charts say `no frames recorded`).
        let hasFrames = (value(summary, RunFigure.frames.key) ?? 0) > 0 || baseline.map { (value($0, RunFigure.frames.key) ?? 0) > 0 } ?? false
        let groups: [(String, [(key: String, label: String)])] = (hasFrames ? [frameGroup] : []) + [
            ("CPU and memory", [(RunFigure.duration_s.key, "duration"), (RunFigure.samples.key, "samples"), (RunAggregates.key(.cpu_percent, .mean), "CPU average (100 = one core)"),
                                (RunAggregates.key(.cpu_percent, .max), "CPU peak"), (RunAggregates.key(.rss_bytes, .atStart), "RSS at start"), (RunAggregates.key(.rss_bytes, .max), "RSS peak"),
                                (RunAggregates.key(.rss_bytes, .last), "RSS at end"), (RunAggregates.key(.pss_bytes, .max), "PSS peak"), (RunFigure.actions_total.key, "actions in total")]),
        ] + (WhySummary(recording, phase: summary.phase).present ? [whyGroup] : [])
            // The GPU where the run had one (docs/gpu.md).
            + (value(summary, RunAggregates.key(.gpu_memory_bytes, .max)) != nil ? [gpuGroup] : [])
            // The network where it was read (docs/network.md).
            + (value(summary, RunAggregates.key(.net_tx_bytes_total, .last)) != nil ? [networkGroup] : [])
        var html = "<div class=\"cards\">"
        for (name, rows) in groups {
            html += "<table class=\"figures\"><caption>\(name)</caption><tr><th>figure</th>"
                + (baseline == nil ? "<th>value</th>" : "<th>baseline</th><th>this run</th><th>change</th><th>change %</th>") + "</tr>"
            for row in rows {
                let new = value(summary, row.key)
                html += "<tr data-key=\"\(row.key)\"><td>\(HTMLText.escaped(row.label)) <code>\(row.key)</code></td>"
                guard let baseline else { html += "<td>\(HTMLText.escaped(SummaryFormatter.human(row.key, new)))</td></tr>"; continue }
                let old = value(baseline, row.key)
                html += "<td>\(HTMLText.escaped(SummaryFormatter.human(row.key, old)))</td><td>\(HTMLText.escaped(SummaryFormatter.human(row.key, new)))</td>"
                guard let new, let old else { html += "<td></td><td></td></tr>"; continue }
                let change = new - old
                let percent = old != 0 ? change / abs(old) * 100 : nil
                html += "<td class=\"\(judgement(row.key, change: change, percent: percent))\">\(HTMLText.escaped(signed(SummaryFormatter.human(row.key, change))))</td>"
                    + "<td>\(percent.map { signed(RowFormatter.number($0, decimals: 1)) + " %" } ?? "")</td></tr>"
            }
            html += "</table>"
        }
        return html + "</div>\n"
    }

    /// The "why" figures of the summary (a recording of format 4 on that has them).
    static let whyGroup: (String, [(key: String, label: String)]) = ("Why it is slow", [
        (RunAggregates.key(.cpu_wait_percent, .mean), "waiting for a CPU, average (100 = one thread)"), (RunAggregates.key(.cpu_wait_percent, .max), "waiting for a CPU, peak"),
        (RunAggregates.key(.cpu_throttled_percent, .max), "throttled by the CPU quota, peak"),
        (RunAggregates.key(.io_read_bytes_per_second, .max), "storage reads, peak"), (RunAggregates.key(.io_write_bytes_per_second, .max), "storage writes, peak"),
        (RunAggregates.key(.page_faults_minor_per_second, .max), "minor page faults, peak"), (RunAggregates.key(.page_faults_major_per_second, .max), "major page faults, peak"),
        (RunAggregates.key(.context_switches_voluntary_per_second, .max), "voluntary context switches, peak"),
        (RunAggregates.key(.context_switches_involuntary_per_second, .max), "involuntary context switches, peak"),
        (RunAggregates.key(.fds_open, .max), "open descriptors, peak"), (RunAggregates.key(.rss_anon_bytes, .max), "anonymous memory, peak"), (RunAggregates.key(.swap_bytes, .max), "swap, peak"),
        (RunAggregates.key(.pressure_cpu_some_percent, .max), "CPU pressure (some), peak"), (RunAggregates.key(.pressure_memory_some_percent, .max), "memory pressure (some), peak"),
        (RunAggregates.key(.pressure_io_some_percent, .max), "I/O pressure (some), peak"), (RunAggregates.key(.rss_trend_bytes_per_hour, .last), "RSS trend at the end"),
        (RunAggregates.key(.leak_suspected, .max), "leak suspected"),
    ])

    /// The GPU figures of the summary (a recording of format 6 on, of a run that had a GPU).
    static let gpuGroup: (String, [(key: String, label: String)]) = ("GPU", [
        (RunAggregates.key(.gpu_percent, .mean), "GPU busy, average (100 = one GPU)"), (RunAggregates.key(.gpu_percent, .max), "GPU busy, peak"),
        (RunAggregates.key(.gpu_memory_bytes, .max), "GPU memory, peak"), (RunAggregates.key(.gpu_memory_bytes, .last), "GPU memory at the end"),
        (RunAggregates.key(.gpu_device_percent, .max), "the device's load, peak"), (RunAggregates.key(.gpu_device_memory_used_bytes, .max), "the device's memory used, peak"),
        (RunAggregates.key(.gpu_temperature_celsius, .max), "temperature, peak"), (RunAggregates.key(.gpu_power_watts, .mean), "power, average"), (RunAggregates.key(.gpu_power_watts, .max), "power, peak"),
    ])

    /// The network figures of the summary (a recording of format 7 on).
    static let networkGroup: (String, [(key: String, label: String)]) = ("Network", [
        (RunAggregates.key(.net_tx_bytes_total, .last), "bytes sent"), (RunAggregates.key(.net_rx_bytes_total, .last), "bytes received"),
        (RunAggregates.key(.net_tx_bytes_per_second, .max), "sent a second, peak"), (RunAggregates.key(.net_rx_bytes_per_second, .max), "received a second, peak"),
        (RunAggregates.key(.tcp_connections, .max), "TCP connections, peak"),
        (RunAggregates.key(.tcp_connections_opened_total, .last), "TCP connections opened"),
        (RunAggregates.key(.tcp_retransmits_total, .last), "TCP segments retransmitted"),
        (RunAggregates.key(.tcp_retransmit_percent, .max), "retransmitted share of data segments, peak"), (RunAggregates.key(.tcp_rtt_ms, .mean), "TCP round-trip time, average"),
        (RunAggregates.key(.tcp_rtt_ms, .max), "TCP round-trip time, peak"),
    ])

    /// The why of the run in sentences (`WhySummary`, as the markdown report says it); nothing
    /// for a recording without the figures.
    static func whyList(_ run: Run) -> String {
        let lines = WhySummary(run.recording, phase: run.summary.phase).sentences(run.summary, targetPID: Int32(run.recording.meta["target_pid"] ?? ""))
        guard !lines.isEmpty else { return "" }
        return "<ul class=\"why\">" + lines.map { "<li><b>\(HTMLText.escaped($0.name))</b>: \(HTMLText.escaped($0.text))</li>" }.joined() + "</ul>\n"
    }

    /// A formatted change with its sign: `+12.5 ms`, `-3`; a change that rounds to nothing has none.
    static func signed(_ formatted: String) -> String {
        formatted.hasPrefix("-") || !formatted.contains(where: { ("1"..."9").contains($0) }) ? formatted : "+" + formatted
    }

    package static func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// `worse` or `better` for a change of at least 1 %, by which way is good for the figure (its
    /// table entry's `better`).
    static func judgement(_ key: String, change: Double, percent: Double?) -> String {
        guard change != 0, abs(percent ?? 100) >= 1 else { return "same" }
        switch SummaryFormatter.better(of: key) {
        case .higher: return change > 0 ? "better" : "worse"
        case .lower: return change < 0 ? "better" : "worse"
        case .neither: return "same"
        }
    }

    static func phaseTable(_ summary: RecordingSummary, colors: [String: String]) -> String {
        guard !summary.phases.isEmpty else { return "<p class=\"note\">no phases recorded</p>\n" }
        var html = "<table class=\"phases\"><tr><th>phase</th><th>visits</th><th>time</th><th>CPU avg</th><th>RSS at entry</th><th>RSS at exit</th>"
            + "<th>kept</th><th>kept (worst visit)</th><th>RSS peak</th><th>FPS</th><th>1 % low</th></tr>"
        func bytes(_ value: UInt64?) -> String { SummaryFormatter.human(unit: "bytes", value.map { Double($0) }) }
        func signed(_ value: Int64?) -> String { value.map { Units.signedBytes(Double($0)) } ?? "n/a" }
        for phase in summary.phases {
            let cells = [String(phase.visits), SummaryFormatter.human(unit: "seconds", phase.seconds), SummaryFormatter.human(unit: "percent of one CPU", phase.cpuPercentAvg),
                         bytes(phase.entryBytes), bytes(phase.exitBytes), signed(phase.keptBytes), signed(phase.keptBytesMax),
                         bytes(phase.rssPeakBytes), SummaryFormatter.human(unit: "", phase.fpsAvg), SummaryFormatter.human(unit: "", phase.fps1PercentLow)]
            html += "<tr data-phase=\"\(HTMLText.escaped(phase.name))\"><td><i class=\"swatch\" style=\"background:\(colors[phase.name] ?? "#999")\"></i>"
                + HTMLText.escaped(phase.name) + "</td>" + cells.map { "<td>\(HTMLText.escaped($0))</td>" }.joined() + "</tr>"
        }
        return html + "</table>\n<p class=\"note\">kept: RSS at exit − RSS at entry, summed over the visits that ended.</p>\n"
    }

    static func actionTable(_ summary: RecordingSummary, recording: Recording) -> String {
        guard !summary.topActions.isEmpty else { return "<p class=\"note\">no actions recorded</p>\n" }
        var html = "<table class=\"actions\"><tr><th>action</th><th>total</th><th>peak per second</th></tr>"
        for action in summary.topActions.prefix(10) {
            let high = action.peak >= recording.actionThreshold
            html += "<tr\(high ? " class=\"high\"" : "")><td>\(HTMLText.escaped(action.action))\(high ? " <b>high-frequency</b>" : "")</td>"
                + "<td>\(SummaryFormatter.human(unit: "", action.total))</td><td>\(SummaryFormatter.human(unit: "", action.peak))</td></tr>"
        }
        html += "</table>\n"
        if summary.topActions.count > 10 { html += "<p class=\"note\">\(summary.topActions.count - 10) more labels not shown.</p>\n" }
        return html
    }


    package static let style = """
        body{margin:0;background:#fff;color:#222;font:14px/1.45 "DejaVu Sans",Verdana,sans-serif}
        main{max-width:1200px;margin:0 auto;padding:12px 20px 40px}
        h1{font-size:22px;margin:6px 0 10px}h2{font-size:18px;margin:26px 0 8px;padding-bottom:3px;border-bottom:2px solid #ddd}
        h3{font-size:15px;margin:14px 0 4px}
        dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:1px 16px;margin:0}dt{color:#666}
        dd{margin:0;font-family:"DejaVu Sans Mono",monospace;font-size:13px;overflow-wrap:anywhere}
        .warning{background:#fff4d6;border:1px solid #d9a400;border-radius:4px;padding:6px 10px;margin:8px 0}
        .note{color:#555;font-style:italic;margin:4px 0}
        table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:4px 0}
        caption{text-align:left;font-weight:bold;padding:4px 0}
        th,td{padding:3px 10px;border-bottom:1px solid #e8e8e8;text-align:right;white-space:nowrap}
        th{background:#f4f4f4}th:first-child,td:first-child{text-align:left;white-space:normal}
        code{font-size:11px;color:#888}
        .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(540px,1fr));gap:8px 28px;align-items:start}
        .figures{width:100%}
        .worse{color:#c0392b;font-weight:bold}.better{color:#1e8449;font-weight:bold}
        tr.high td:first-child b{color:#c0392b}
        .swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;vertical-align:-1px}
        .chart{margin:6px 0 18px}svg{display:block;width:100%;height:auto}
        svg text{font:12px "DejaVu Sans",Verdana,sans-serif;fill:#333}
        svg .axis-title{fill:#555}svg .band-label{font-size:11px;font-weight:bold;fill:#222}
        svg .rule-label{font-size:11px;font-weight:bold;paint-order:stroke;stroke:#fff;stroke-width:3px}
        .grid{stroke:#e8e8e8}.axis{stroke:#888}.line{fill:none;stroke-linejoin:round}.scatter{fill:none;stroke-width:2;stroke-opacity:.8}
        .rule{stroke-width:1.4}.mark{stroke:#fff;stroke-width:1}
        .legend{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:13px;margin:2px 0 0 78px}
        .legend .key{white-space:nowrap}.legend .stroke{display:inline-block;width:22px;border-top:3px solid;margin-right:6px;vertical-align:4px}
        .legend .stroke.dashed{border-top-style:dashed}.legend .dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px}
        .legend .high{font-weight:bold;color:#c0392b}
        ul.why{margin:10px 0 0;padding-left:20px}ul.why li{margin:2px 0}
        table.threads{margin:0 0 18px 78px}
        """
}
