import PerfHUDSampling
import PerfHUDPipeline

extension BusyThread {
    /// How a recording keeps a list (`busiest_threads` of `sample_log`): "-" for none read, else one
    /// line a thread, `tid pid cpu_percent name` (the name last: it may hold spaces; line breaks
    /// in it become spaces).
    static func encoded(_ threads: [BusyThread]?) -> String {
        guard let threads else { return "-" }
        return threads.map { "\($0.tid) \($0.pid) \(RowFormatter.number($0.cpuPercent, decimals: 1)) "
            + String($0.name.map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }.joined(separator: "\n")
    }

    /// A list as `encoded` wrote it; lines that do not read are skipped (a damaged file).
    static func decoded(_ text: String) -> [BusyThread]? {
        guard text != "-" else { return nil }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let tid = Int32(fields[0]), let pid = Int32(fields[1]), let cpu = Double(fields[2]), cpu.isFinite else { return nil }
            return BusyThread(pid: pid, tid: tid, name: String(fields[3]), cpuPercent: cpu)
        }
    }
}
