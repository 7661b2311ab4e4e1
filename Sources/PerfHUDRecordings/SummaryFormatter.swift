import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDPipeline

/// `perfhud report --format json|markdown`: a run's summary as one JSON object or a table.
public enum SummaryFormatter {
    package static func bytes(_ value: Double?) -> String {
        RowFormatter.number(value, decimals: 0)
    }

    /// What the summary says beside the run's figures: facts a recording keeps in its meta and
    /// rows, and a live session knows itself (`--output json`'s summary line).
    public struct Facts {
        public var command: String
        public var startedAt: String?
        /// The thread with the highest one-second CPU of any row, and that row's time.
        public var busiest: BusyThread?
        public var busiestAt: Double?
        /// Storage I/O in total (`RunStorageIO`); nil where no row had the rate.
        public var readBytes: Double?
        public var writtenBytes: Double?
        public var warnings: [String] = []

        public init(command: String, startedAt: String?) {
            self.command = command
            self.startedAt = startedAt
        }

        /// A recording's: its meta, and why it was slow as `WhySummary` reads its rows.
        package init(_ recording: Recording, phase: String?) {
            self.init(command: recording.meta["target_command"] ?? "", startedAt: recording.meta["started_at"])
            let why = WhySummary(recording, phase: phase)
            (busiest, busiestAt, readBytes, writtenBytes) = (why.busiest, why.busiestAt, why.readBytes, why.writtenBytes)
            warnings = recording.warnings
        }

        /// A live run's, summed by the code that sums a recording (`RunSummary`).
        public init(_ run: RunSummary, command: String, startedAt: String?) {
            self.init(command: command, startedAt: startedAt)
            (busiest, busiestAt) = (run.busiest, run.busiestAt)
            (readBytes, writtenBytes) = (run.storage.readBytes, run.storage.writtenBytes)
        }
    }

    /// - Parameter note: the baseline judged again against this run's frame reference (`baseline_note`).
    public static func json(_ summary: RecordingSummary, recording: Recording, baseline: RecordingSummary? = nil, note: String? = nil) -> String {
        json(summary, facts: Facts(recording, phase: summary.phase), baseline: baseline, note: note)
    }

    /// The summary as one JSON object (`report --format json`, and the last line of `--output json`).
    public static func json(_ summary: RecordingSummary, facts: Facts, baseline: RecordingSummary? = nil, note: String? = nil) -> String {
        var fields: [String] = []
        for (key, value) in zip(RecordingSummary.keys, summary.numbers) {
            fields.append(RowFormatter.quoted(key) + ":" + RowFormatter.number(value, decimals: decimals(key)))
        }
        fields.append("\"phase\":" + (summary.phase.map(RowFormatter.quoted) ?? "null"))
        fields.append("\"command\":" + RowFormatter.quoted(facts.command))
        fields.append("\"started_at\":" + (facts.startedAt.map(RowFormatter.quoted) ?? "null"))
        func actions(_ list: [RecordingSummary.ActionFigures]) -> String {
            "[" + list.map { "{\"action\":" + RowFormatter.quoted($0.action) + ",\"total\":" + RowFormatter.number($0.total)
                + ",\"peak\":" + RowFormatter.number($0.peak) + "}" }.joined(separator: ",") + "]"
        }
        fields.append("\"high_frequency_actions\":" + actions(summary.highFrequencyActions))
        fields.append("\"top_actions\":" + actions(Array(summary.topActions.prefix(10))))
        fields.append("\"phases\":[" + summary.phases.map { phase in
            "{\"name\":" + RowFormatter.quoted(phase.name) + "," + RecordingSummary.phaseKeys.map { key in
                RowFormatter.quoted(key) + ":" + RowFormatter.number(phase.value(of: key), decimals: decimals(key))
            }.joined(separator: ",") + "}"
        }.joined(separator: ",") + "]")
        if let baseline {
            var base: [String] = []
            for (key, value) in zip(RecordingSummary.keys, baseline.numbers) {
                base.append(RowFormatter.quoted(key) + ":" + RowFormatter.number(value, decimals: decimals(key)))
            }
            fields.append("\"baseline\":{" + base.joined(separator: ",") + "}")
            if let note { fields.append("\"baseline_note\":" + RowFormatter.quoted(note)) }
        }
        // Why it was slow, beyond the table's figures: null where the run has none.
        fields.append("\"busiest_thread\":" + (facts.busiest.map { "{\"pid\":\($0.pid),\"tid\":\($0.tid),\"name\":" + RowFormatter.quoted($0.name)
            + ",\"cpu_percent\":" + RowFormatter.number($0.cpuPercent, decimals: 1) + ",\"t\":" + RowFormatter.number(facts.busiestAt, decimals: 3) + "}" } ?? "null"))
        fields.append("\"io_read_bytes_total\":" + RowFormatter.number(facts.readBytes?.rounded(), decimals: 0))
        fields.append("\"io_write_bytes_total\":" + RowFormatter.number(facts.writtenBytes?.rounded(), decimals: 0))
        fields.append("\"alerts\":[" + summary.alertSpans.map { span in
            "{\"alert\":" + RowFormatter.quoted(span.text) + ",\"from_seconds\":" + RowFormatter.number(span.sinceElapsedSeconds, decimals: 3)
                + ",\"to_seconds\":" + RowFormatter.number(span.untilElapsedSeconds, decimals: 3)
                + ",\"seconds\":" + RowFormatter.number(span.heldSeconds, decimals: 3) + ",\"to_end\":" + (span.endedWithRun ? "true" : "false") + "}"
        }.joined(separator: ",") + "]")
        fields.append("\"warnings\":[" + facts.warnings.map(RowFormatter.quoted).joined(separator: ",") + "]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Sizes and counts of visits in whole units, the rest at a thousandth.
    package static func decimals(_ key: String) -> Int { ["bytes", "visits"].contains(unit(of: key).unit) ? 0 : 3 }

    /// The unit of the run figure `key` (and whether it is a yes or no), as declared where the
    /// figure is: the table (`Figure.unit`, `.boolean`) for its summaries, `RunFigure` and
    /// `PhaseFigure` for the others.
    package static func unit(of key: String) -> (unit: String, boolean: Bool) {
        if let summary = RunAggregates.summary(named: key) {
            let figure = Figure[summary.field]
            return (figure.unit, figure.kind == .boolean)
        }
        return (RunFigure(rawValue: key)?.unit ?? PhaseFigure(rawValue: key)?.unit ?? "", false)
    }

    /// Which way of the run figure `key` is good, as its table entry says (`Figure.better`).
    package static func better(of key: String) -> Figure.Better {
        if let summary = RunAggregates.summary(named: key) { return Figure[summary.field].better }
        return RunFigure(rawValue: key)?.better ?? PhaseFigure(rawValue: key)?.better ?? .neither
    }

    /// The run figure `key` for a reader, in its unit.
    package static func human(_ key: String, _ value: Double?) -> String {
        let (unit, boolean) = unit(of: key)
        if boolean, let value, value == 0 || value == 1 { return value == 1 ? "yes" : "no" }
        return human(unit: unit, value)
    }

    /// A value of `unit` (the table's words: `Figure.unit`) for a reader.
    package static func human(unit: String, _ value: Double?) -> String {
        guard let value else { return "n/a" }
        switch unit {
        case "bytes": return Units.bytes(value)
        case "bytes per second": return Units.bytes(value) + "/s"
        case "bytes per hour": return Units.signedBytes(value) + "/h"
        case "watts": return RowFormatter.number(value, decimals: 1) + " W"
        case "degrees Celsius": return RowFormatter.number(value, decimals: 0) + " °C"
        case "milliseconds": return RowFormatter.number(value, decimals: 2) + " ms"
        case "seconds": return RowFormatter.number(value, decimals: 1) + " s"
        case "frames per second": return RowFormatter.number(value, decimals: 1)   // FPS, as its row says
        case _ where unit.hasPrefix("percent"): return RowFormatter.number(value, decimals: 1) + " %"
        case _ where unit.hasSuffix("per second"): return RowFormatter.number(value, decimals: 1) + "/s"
        default: return RowFormatter.number(value, decimals: 1)
        }
    }

    /// The format that first recorded each summary key's figure: a recording older than that has
    /// none of it, and the markdown table leaves its rows out rather than print n/a for each.
    static let sinceFormat: [String: Int64] = Dictionary(
        Figure.all.flatMap { figure in figure.summaries.map { ($0.key, figure.since) } }, uniquingKeysWith: max)

    /// The phases of both runs side by side, by name (a phase of one run only shows n/a for the
    /// other): what a phase kept, how long it lasted, its RSS peak and FPS — the figures a
    /// regression in one screen shows in. Shared by the markdown and the HTML report.
    static let phaseComparisonHeader = ["phase", "kept (baseline)", "kept", "change", "time (baseline)", "time",
                                        "RSS peak (baseline)", "RSS peak", "FPS (baseline)", "FPS"]
    package static func phaseComparison(_ summary: RecordingSummary, baseline: RecordingSummary) -> [[String]] {
        var names = summary.phases.map(\.name)
        for phase in baseline.phases where !names.contains(phase.name) { names.append(phase.name) }
        func signed(_ value: Int64?) -> String { value.map { Units.signedBytes(Double($0)) } ?? "n/a" }
        return names.map { name in
            let new = summary.phases.first { $0.name == name }, old = baseline.phases.first { $0.name == name }
            let change = new?.keptBytes.flatMap { kept in old?.keptBytes.map { Units.signedBytes(Double(kept) - Double($0)) } } ?? ""
            return [name, signed(old?.keptBytes), signed(new?.keptBytes), change, human(unit: "seconds", old?.seconds), human(unit: "seconds", new?.seconds),
                    human(unit: "bytes", old?.rssPeakBytes.map { Double($0) }), human(unit: "bytes", new?.rssPeakBytes.map { Double($0) }),
                    human(unit: "", old?.fpsAvg), human(unit: "", new?.fpsAvg)]
        }
    }

    /// Text that came from the target (a thread's name) as markdown text: `*`, `_`, `|`… literal.
    static func markdownEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\`*_[]<>|#".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// A frame reference as a reader says it: `its own pace (janky above 1.5 × it)`, `a 60 Hz budget (…)`.
    package static func reference(_ budget: FrameBudget) -> String {
        let factor = RowFormatter.number(budget.jankFactor, decimals: 2)
        return budget.paced ? "its own pace (janky above \(factor) × it)"
            : "a \(RowFormatter.number(budget.refreshHz, decimals: 2)) Hz budget (janky above \(factor) × \(RowFormatter.number(budget.milliseconds, decimals: 2)) ms)"
    }

    /// - Parameter note: said under the title (the baseline judged again against this run's frame reference).
    public static func markdown(_ summary: RecordingSummary, recording: Recording, baseline: RecordingSummary? = nil, note: String? = nil) -> String {
        var lines = ["# perfhud report: \(recording.meta["target_command"] ?? "?")" + (summary.phase.map { " (phase \($0))" } ?? ""), ""]
        if let note { lines += ["> note: " + note, ""] }
        if let started = recording.meta["started_at"] { lines += ["Recorded \(started), perfhud \(recording.meta["perfhud_version"] ?? "?").", ""] }
        for warning in recording.warnings { lines += ["> warning: \(warning)", ""] }
        if summary.number(of: RunAggregates.key(.oom_killed, .max)) == 1 {
            let limit = summary.number(of: RunAggregates.key(.memory_limit_bytes, .min)).map { UInt64($0) }
            lines += ["> the target was " + Sample.killedByOOMKiller(limitBytes: limit), ""]
        }
        if let baseline {
            lines += ["| figure | baseline | this run | change |", "|---|---:|---:|---:|"]
            for (index, key) in RecordingSummary.keys.enumerated() {
                let new = summary.numbers[index], old = baseline.numbers[index]
                var change = ""
                if let new, let old, old != 0 { change = (new >= old ? "+" : "") + RowFormatter.number((new - old) / old * 100, decimals: 1) + " %" }
                lines.append("| \(key) | \(human(key, old)) | \(human(key, new)) | \(change) |")
            }
        } else {
            lines += ["| figure | value |", "|---|---:|"]
            for (key, value) in zip(RecordingSummary.keys, summary.numbers) where sinceFormat[key] ?? 1 <= recording.format {
                lines.append("| \(key) | \(human(key, value)) |")
            }
        }
        if !summary.alertSpans.isEmpty {
            lines += ["", "## Alerts", ""]
            for span in summary.alertSpans { lines.append("- " + markdownEscaped(span.sentence)) }
        }
        let why = WhySummary(recording, phase: summary.phase).sentences(summary, targetPID: Int32(recording.meta["target_pid"] ?? ""))
        if !why.isEmpty {
            lines += ["", "## Why it is slow", ""]
            for line in why { lines.append("- **\(line.name)**: " + markdownEscaped(line.text)) }
        }
        if !summary.phases.isEmpty {
            lines += ["", "| phase | visits | time | CPU avg | RSS at entry | RSS at exit | kept | FPS | 1 % low |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for phase in summary.phases {
                lines.append("| \(phase.name) | \(phase.visits) | \(human(unit: "seconds", phase.seconds)) | \(human(unit: "percent of one CPU", phase.cpuPercentAvg)) | "
                    + "\(human(unit: "bytes", phase.entryBytes.map { Double($0) })) | \(human(unit: "bytes", phase.exitBytes.map { Double($0) })) | "
                    + "\(human(unit: "bytes", phase.keptBytes.map { Double($0) })) | \(human(unit: "", phase.fpsAvg)) | \(human(unit: "", phase.fps1PercentLow)) |")
            }
        }
        if let baseline, !(summary.phases.isEmpty && baseline.phases.isEmpty) {
            lines += ["", "| " + phaseComparisonHeader.joined(separator: " | ") + " |", "|---|" + String(repeating: "---:|", count: phaseComparisonHeader.count - 1)]
            for row in phaseComparison(summary, baseline: baseline) { lines.append("| " + row.joined(separator: " | ") + " |") }
        }
        if !summary.topActions.isEmpty {
            lines += ["", "| action | total | peak per second |", "|---|---:|---:|"]
            for action in summary.topActions.prefix(10) {
                let flag = action.peak >= recording.actionThreshold ? " **high-frequency**" : ""
                lines.append("| \(action.action)\(flag) | \(human(unit: "", action.total)) | \(human(unit: "", action.peak)) |")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
