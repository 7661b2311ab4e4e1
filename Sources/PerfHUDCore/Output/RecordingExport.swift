/// `perfhud export`: a recording's samples as CSV (psrecord's columns first) or NDJSON (the rows
/// `--output json` printed live, through the same formatter).
public enum RecordingExport {
    /// psrecord's columns and units first (seconds, percent, MB = MiB as psrecord divides by 1024²), then ours.
    public static let csvHeader = "elapsed_time,cpu,mem_real,mem_virtual,rss_bytes,pss_bytes,vsize_bytes,threads,phase,"
        + "fps,frame_p50_ms,frame_p99_ms,janky_frames,dropped_frames,actions_per_second,actions_total"

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }

    public static func csv(_ recording: Recording, write: (String) -> Void) {
        write(csvHeader + "\n")
        func n(_ value: Double?, _ decimals: Int = 3) -> String { value.map { ReportFormatter.number($0, decimals: decimals) } ?? "" }
        let mebibyte = 1024.0 * 1024.0
        for row in recording.samples {
            let events = row.events
            let fields = [n(row.t), n(row.cpuPercent, 2), n(row.residentBytes.map { Double($0) / mebibyte }), n(row.virtualBytes.map { Double($0) / mebibyte }),
                          row.residentBytes.map { String($0) } ?? "", row.proportionalBytes.map { String($0) } ?? "",
                          row.virtualBytes.map { String($0) } ?? "", row.threads.map { String($0) } ?? "", csvField(row.phase ?? ""),
                          n(events.flatMap { $0.hasFrames ? $0.fps : nil }, 2), n(events?.frameP50), n(events?.frameP99),
                          n(events?.jankyFrames), n(events?.droppedFrames), n(events?.actionsPerSecond, 2), n(events?.actionsTotal)]
            write(fields.joined(separator: ",") + "\n")
        }
    }

    /// The JSON rows of the live `--output json`, one a line.
    public static func ndjson(_ recording: Recording, write: (String) -> Void) {
        let pid = Int32(recording.meta["target_pid"] ?? "") ?? 0
        let command = recording.meta["target_command"] ?? ""
        let cpus = Double(recording.meta["online_cpus"] ?? "") ?? 1
        for (index, row) in recording.samples.enumerated() {
            let report = Report(wallSeconds: recording.startedAtUnix + row.t, elapsedSeconds: row.t, pid: pid, alive: row.alive,
                                cpuPercent: row.cpuPercent, cpuMachinePercent: row.cpuPercent.map { $0 / cpus },
                                cpuUserPercent: row.cpuUserPercent, cpuSystemPercent: row.cpuSystemPercent, residentBytes: row.residentBytes,
                                residentTrendBytesPerSecond: row.residentTrend, proportionalBytes: row.proportionalBytes,
                                virtualBytes: row.virtualBytes, threads: row.threads, processCount: row.processes,
                                cpuSecondsTotal: row.cpuSecondsTotal)
            let status: TargetStatus = row.alive || index < recording.samples.count - 1 ? .running : .exited(code: nil, signal: nil)
            write(ReportFormatter.json(report, commandName: command, status: status, events: row.events) + "\n")
        }
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
