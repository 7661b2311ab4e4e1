import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline

/// What `report` says about *why* a run was slow, in a few sentences the markdown and the HTML
/// report share: the busiest thread, waiting for a CPU, the storage I/O in total, descriptors
/// against their limit, the leak verdict, then throttling, pressure, faults and switches where
/// there was any. The peaks and means are the table's run figures (`RunAggregates`); the busiest
/// thread and the I/O totals are defined as the end-of-session summary defines them
/// (`SessionSummary`): the thread with the highest one-second CPU of any row, and the increase of
/// the storage counters from the first row to the last (each row's rate over the time since the
/// row before, summed). Over the rows the summary counts (with `--phase`, that phase's rows).
public struct WhySummary {
    /// Whether any counted row has a why figure: a recording before format 4 has none, and the
    /// report then says nothing of them (no empty section, no chart).
    public var present = false
    /// The thread with the highest one-second CPU in any row, and the row's time.
    public var busiest: BusyThread?
    public var busiestAt: Double?
    /// Whether any row had its threads read (an idle target's lists are empty).
    public var threadsRead = false
    /// Bytes read from and written to storage in total; nil where no row had the rate.
    public var readBytes: Double?
    public var writtenBytes: Double?
    /// The descriptor limit of the last row that had one.
    public var fdsLimit: UInt64?
    /// The first row with a leak suspected, and the trend of the last row that had one.
    public var leakFirstAt: Double?
    public var trendEnd: (bytesPerHour: Double, r2: Double)?

    public init(_ recording: Recording, phase: String?) {
        guard recording.format >= 4 else { return }
        var storage = RunStorageIO()
        defer { (readBytes, writtenBytes) = (storage.readBytes, storage.writtenBytes) }
        for sample in recording.samples {
            // A rate is over the time since the sample before (the row before in the file, in
            // the phase or not): `RunStorageIO`, as the end summary sums it.
            storage.add(t: sample.t, sample.figures, counted: phase == nil || sample.phase == phase)
            if let phase, sample.phase != phase { continue }
            let report = sample.figures
            if report.cpuWaitPercent != nil || report.fdsOpen != nil || report.residentAnonBytes != nil || report.busiestThreads != nil
                || report.ioWriteBytesPerSecond != nil || report.minorFaultsPerSecond != nil { present = true }
            if report.busiestThreads != nil { threadsRead = true }
            if let top = report.busiestThreads?.first, top.cpuPercent > busiest?.cpuPercent ?? 0 { busiest = top; busiestAt = sample.t }
            if let limit = report.fdsLimit { fdsLimit = limit }
            if report.leakSuspected == true && leakFirstAt == nil { leakFirstAt = sample.t }
            if let slope = report.residentTrendBytesPerHour, let r2 = report.residentTrendR2 { trendEnd = (slope, r2) }
        }
    }

    /// One line each, `name: what it was` (no markup: the caller escapes for its format); empty
    /// when the recording has no why figures.
    /// - Parameter targetPID: the recorded target; a busiest thread of another process of the tree
    ///   (`--include-children`) is named with its PID.
    public func sentences(_ summary: RecordingSummary, targetPID: Int32?) -> [(name: String, text: String)] {
        guard present else { return [] }
        let figure = { (field: Figure.Field, rule: RunAggregates.Rule) in summary.aggregates[field, rule] }
        func percent(_ value: Double) -> String { RowFormatter.number(value, decimals: 1) + " %" }
        func rate(_ value: Double) -> String { RowFormatter.number(value, decimals: value < 10 ? 1 : 0) + "/s" }
        var lines: [(name: String, text: String)] = []
        if let busiest {
            let who = busiest.pid != 0 && busiest.pid != targetPID ? "PID \(busiest.pid), TID \(busiest.tid)" : "TID \(busiest.tid)"
            lines.append(("busiest thread", TerminalText.escaped(busiest.name, maxLength: 32) + " (\(who)): " + percent(busiest.cpuPercent)
                          + " of one core over its busiest second" + (busiestAt.map { ", " + RowFormatter.number($0, decimals: 1) + " s in" } ?? "")))
        } else {
            lines.append(("busiest thread", threadsRead ? "none: no thread used a CPU in any second" : "not read"))
        }
        if let peak = figure(.cpu_wait_percent, .max) {
            lines.append(("waiting for a CPU", "peak " + percent(peak) + (figure(.cpu_wait_percent, .mean).map { ", average " + percent($0) } ?? "")
                          + " (100 % = one thread runnable but not running)"))
        }
        if readBytes != nil || writtenBytes != nil {
            var text = "read " + SummaryFormatter.human(unit: "bytes", readBytes) + ", written " + SummaryFormatter.human(unit: "bytes", writtenBytes) + " in total"
            let peaks = [("read", figure(.io_read_bytes_per_second, .max)), ("write", figure(.io_write_bytes_per_second, .max))]
                .compactMap { name, value in value.flatMap { $0 > 0 ? name + " " + Units.bytes($0) + "/s" : nil } }
            if !peaks.isEmpty { text += " (peak " + peaks.joined(separator: ", ") + ")" }
            lines.append(("storage I/O", text))
        } else {
            lines.append(("storage I/O", "not read (perfhud may read /proc/PID/io only of a process it may trace)"))
        }
        if let fds = figure(.fds_open, .max) {
            var text = "peak " + RowFormatter.number(fds, decimals: 0) + " open"
            if let limit = fdsLimit { text += " of a limit of \(limit) (" + percent(fds / Double(max(1, limit)) * 100) + ")" }
            lines.append(("descriptors", text))
        }
        if let first = leakFirstAt {
            var text = "suspected from " + RowFormatter.number(first, decimals: 1) + " s on"
            if let trend = trendEnd { text += "; at the end RSS " + Units.signedBytes(trend.bytesPerHour) + "/h, r² " + RowFormatter.number(trend.r2, decimals: 2) }
            if figure(.leak_suspected, .last) == 0 { text += " (no longer at the end)" }
            lines.append(("leak", text))
        } else if let trend = trendEnd {
            lines.append(("leak", "not suspected (at the end RSS " + Units.signedBytes(trend.bytesPerHour) + "/h, r² " + RowFormatter.number(trend.r2, decimals: 2) + ")"))
        }
        if let peak = figure(.cpu_throttled_percent, .max), peak > 0 {
            lines.append(("throttled", "peak " + percent(peak) + " of the time by its CPU quota" + (figure(.cpu_throttled_percent, .mean).map { ", average " + percent($0) } ?? "")))
        }
        let pressure = [("CPU", figure(.pressure_cpu_some_percent, .max)), ("memory", figure(.pressure_memory_some_percent, .max)),
                        ("I/O", figure(.pressure_io_some_percent, .max))].compactMap { name, value in value.map { name + " " + percent($0) } }
        if !pressure.isEmpty { lines.append(("pressure", "peak share of the time some of its group's tasks stalled: " + pressure.joined(separator: ", "))) }
        if let minor = figure(.page_faults_minor_per_second, .max) {
            lines.append(("page faults", "peak " + rate(minor) + " minor, " + (figure(.page_faults_major_per_second, .max).map(rate) ?? "n/a") + " major (pages read from storage)"))
        }
        if let voluntary = figure(.context_switches_voluntary_per_second, .max) {
            lines.append(("context switches", "peak " + rate(voluntary) + " voluntary, "
                          + (figure(.context_switches_involuntary_per_second, .max).map(rate) ?? "n/a") + " involuntary"))
        }
        if let anon = figure(.rss_anon_bytes, .max) {
            lines.append(("memory", "anonymous peak " + Units.bytes(anon) + (figure(.swap_bytes, .max).map { ", swap peak " + Units.bytes($0) } ?? "")))
        }
        return lines
    }
}
