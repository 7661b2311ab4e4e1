import PerfHUDPipeline

/// `perfhud export`: a recording's samples as CSV (psrecord's columns first) or NDJSON (the rows
/// `--output json` printed live, through the same formatter).
public enum RecordingExport {
    /// psrecord's columns and units first (seconds, percent, MB = MiB as psrecord divides by 1024²),
    /// then every figure of the JSON row the table gives a CSV column (`Figure.csvColumns`), by its
    /// key, at its resolution: a figure added to the table is a column here too.
    public static let csvHeader = (["elapsed_time", "cpu", "mem_real", "mem_virtual"] + Figure.csvColumns.map(\.name)).joined(separator: ",")

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }

    public static func csv(_ recording: Recording, write: (String) -> Void) {
        write(csvHeader + "\n")
        func n(_ value: Double?, _ decimals: Int = 3) -> String { value.map { RowFormatter.number($0, decimals: decimals) } ?? "" }
        let mebibyte = 1024.0 * 1024.0
        let rows = RecordingRows(recording)
        for sample in recording.samples {
            let report = rows.figures(sample)
            var fields = [n(sample.t), n(sample.cpuPercent, 2), n(sample.residentBytes.map { Double($0) / mebibyte }),
                          n(sample.virtualBytes.map { Double($0) / mebibyte })]
            for figure in Figure.csvColumns {
                switch figure.kind {
                case .special(.phase): fields.append(csvField(sample.phase ?? ""))
                case .special: fields.append("")
                case .boolean: fields.append(n(figure.value(report, sample.events), 0))
                case .number(let decimals): fields.append(n(figure.value(report, sample.events), decimals))
                }
            }
            write(fields.joined(separator: ",") + "\n")
        }
    }

    /// The JSON rows of the live `--output json`, one a line.
    public static func ndjson(_ recording: Recording, write: (String) -> Void) {
        let rows = RecordingRows(recording)
        let figures = Figure.inFormat(recording.format)
        for row in rows {
            write(RowFormatter.json(row.figures, commandName: row.commandName, status: row.status, events: row.events, fields: figures) + "\n")
        }
    }
}

extension RecordingExport {
    /// OpenMetrics text with the daemon's metric names (its gauges and counters from the table of
    /// figures, as it exports them), each sample stamped with its wall time, for
    /// `promtool tsdb create-blocks-from openmetrics`. CPU seconds by mode are summed from the
    /// recorded user and system percentages (the recording keeps the split per tick, not the ticks).
    public static func openMetrics(_ recording: Recording, write: (String) -> Void) {
        let pid = recording.meta["target_pid"] ?? "0"
        let labels = "{pid=" + RowFormatter.quoted(pid) + "}"
        let start = recording.startedAtUnix
        func stamp(_ t: Double) -> String { RowFormatter.number(start + t, decimals: 3) }
        func family(_ name: String, _ type: String, _ help: String, _ value: (Recording.SampleRow) -> Double?) {
            write("# TYPE \(name) \(type)\n# HELP \(name) \(help)\n")
            let sampleName = type == "counter" ? name + "_total" : name
            for row in recording.samples {
                guard let number = value(row) else { continue }
                write(sampleName + labels + " " + RowFormatter.number(number, decimals: 6) + " " + stamp(row.t) + "\n")
            }
        }
        family(TargetSeries.perfhud_target_up.name, "gauge", "Whether the target is running.") { $0.alive ? 1 : 0 }
        let info = TargetSeries.perfhud_target_info.name
        write("# TYPE \(info) info\n# HELP \(info) The target.\n")
        let comm = RowFormatter.quoted(recording.meta["target_command"] ?? "")
        for row in recording.samples where row.alive {
            write(info + "_info{comm=\(comm),pid=\(RowFormatter.quoted(pid))} 1 " + stamp(row.t) + "\n")
        }
        // The gauges of the table of figures, as the daemon exports them: one family a name, its
        // figures told apart by their labels (`perfhud_target_memory_bytes{kind}`).
        let rows = RecordingRows(recording)
        func value(_ figure: Figure, _ row: Recording.SampleRow) -> Double? {
            figure.value(rows.figures(row), row.events)
        }
        func seriesLabels(_ metric: Figure.Metric) -> String {
            "{" + (metric.labels.map { "\($0.name)=" + RowFormatter.quoted($0.value) } + ["pid=" + RowFormatter.quoted(pid)]).joined(separator: ",") + "}"
        }
        func families(_ wanted: (Figure.Metric.Kind) -> Bool) -> [(name: String, figures: [(Figure, Figure.Metric)])] {
            var grouped: [(name: String, figures: [(Figure, Figure.Metric)])] = []
            for figure in Figure.all {
                guard let metric = figure.metric, wanted(metric.kind) else { continue }
                if let index = grouped.firstIndex(where: { $0.name == metric.name }) { grouped[index].figures.append((figure, metric)) }
                else { grouped.append((metric.name, [(figure, metric)])) }
            }
            return grouped
        }
        for family in families({ $0 == .gauge }) {
            write("# TYPE \(family.name) gauge\n# HELP \(family.name) \(family.figures[0].1.help)\n")
            for (figure, metric) in family.figures {
                for row in recording.samples {
                    guard let number = value(figure, row).map({ $0 * metric.scale }) else { continue }
                    write(family.name + seriesLabels(metric) + " " + RowFormatter.number(number, decimals: 6) + " " + stamp(row.t) + "\n")
                }
            }
        }
        // The kernel's totals the daemon counts: the recording keeps their rates, summed here over the rows.
        for family in families({ if case .kernelTotal = $0 { return true } else { return false } }) {
            let name = family.name.hasSuffix("_total") ? String(family.name.dropLast(6)) : family.name
            write("# TYPE \(name) counter\n# HELP \(name) \(family.figures[0].1.help)\n")
            for (figure, metric) in family.figures {
                var total = 0.0, previous: Double?
                for row in recording.samples {
                    defer { previous = row.t }
                    guard let rate = value(figure, row) else { continue }
                    if let previous { total += rate * metric.scale * (row.t - previous) }
                    write(name + "_total" + seriesLabels(metric) + " " + RowFormatter.number(total, decimals: 6) + " " + stamp(row.t) + "\n")
                }
            }
        }
        // By mode as the daemon counts them (`CPUSecondsByMode`): user + system is each row's `cpu_seconds_total`.
        var modes = CPUSecondsByMode()
        let byMode = recording.samples.map { row in modes.add(row.figures); return (row.t, modes.user, modes.system) }
        let cpu = Figure.metricName(.cpu_seconds_total), cpuFamily = String(cpu.dropLast("_total".count))
        for mode in ["user", "system"] {
            let series = byMode.map { ($0.0, mode == "user" ? $0.1 : $0.2) }
            if mode == "user" { write("# TYPE \(cpuFamily) counter\n# HELP \(cpuFamily) CPU time of the target, by mode.\n") }
            for (t, value) in series {
                write(cpu + "{mode=\"\(mode)\",pid=\(RowFormatter.quoted(pid))} " + RowFormatter.number(value, decimals: 6) + " " + stamp(t) + "\n")
            }
        }
        // The counters of the table (named without `_total` in the family, as OpenMetrics wants).
        for figure in Figure.all {
            guard let metric = figure.metric, metric.kind == .counter else { continue }
            let name = metric.name.hasSuffix("_total") ? String(metric.name.dropLast(6)) : metric.name
            family(name, "counter", metric.help) { value(figure, $0) }
        }
        write("# EOF\n")
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
