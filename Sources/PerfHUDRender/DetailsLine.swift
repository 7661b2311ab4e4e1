import PerfHUDSupport
import PerfHUDStore

/// The HUD's details line, under the status line (`--details`, `d`): why the target is slow —
/// waiting for a CPU, switching, faulting, I/O, descriptors, memory by kind and the OOM score, the
/// busiest thread, the network, throttling, pressure, the leak verdict. A figure past its limit is highlighted; the line fits
/// the width by dropping its least important fields, never by wrapping. Pure: no I/O.
package enum DetailsLine {
    /// One field of a line and how much it matters: the highest `priority` goes first.
    package struct Field: Equatable {
        package var priority: Int
        package var text: String
    }

    /// Limits past which a figure is highlighted.
    static let waitLimitPercent = 20.0
    static let fdsLimitShare = 0.8

    /// The line for `report` (nil: no report yet); `note` in place of the figures when there are
    /// none to show (a recording made before they were kept).
    package static func render(_ report: TargetFigures?, note: String?, width: Int, paint: Palette, unicode: Bool) -> String {
        let separator = paint.dim(unicode ? " │ " : " | ")
        if let note { return TerminalText.truncated(" " + paint.dim(unicode ? note : TerminalText.ascii(note)), toWidth: width) }
        var fields = report.map { self.fields($0, paint: paint) } ?? []
        if fields.isEmpty { fields = [Field(priority: 0, text: paint.dim("why: no figures yet"))] }
        if !unicode { fields = fields.map { Field(priority: $0.priority, text: TerminalText.ascii($0.text)) } }
        return fit(fields, separator: separator, width: width)
    }

    /// The fields in order of appearance. Priorities: 0 a figure past its limit (kept longest), 1
    /// waiting and descriptors, 2 switches, faults, I/O, the busiest thread, 3 memory by kind and
    /// the OOM score, 4 throttling (under its limit) and pressure.
    package static func fields(_ report: TargetFigures, paint: Palette) -> [Field] {
        var fields: [Field] = []
        func alarm(_ text: String) -> String { paint.red(paint.bold(text)) }
        if report.leakSuspected == true {
            let slope = report.residentTrendBytesPerHour.map { " " + Units.signedBytes($0) + "/h" } ?? ""
            fields.append(Field(priority: 0, text: alarm("leak?" + slope)))
        }
        if let wait = report.cpuWaitPercent {
            let text = "wait " + percent(wait) + "%"
            fields.append(wait > waitLimitPercent ? Field(priority: 0, text: alarm(text)) : Field(priority: 1, text: text))
        }
        if let throttled = report.cpuThrottledPercent {
            let text = "throttled " + percent(throttled) + "%"
            fields.append(throttled > 0 ? Field(priority: 0, text: alarm(text)) : Field(priority: 4, text: paint.dim(text)))
        }
        if let voluntary = report.voluntarySwitchesPerSecond, let involuntary = report.involuntarySwitchesPerSecond {
            fields.append(Field(priority: 2, text: "cs " + count(voluntary + involuntary) + "/s" + paint.dim(" (inv " + count(involuntary) + ")")))
        }
        if let minor = report.minorFaultsPerSecond {
            let major = report.majorFaultsPerSecond ?? 0
            var text = "flt " + count(minor + major) + "/s"
            if major > 0 { text += " " + alarm("maj " + count(major) + "/s") }
            fields.append(Field(priority: major > 0 ? 0 : 2, text: text))
        }
        if let read = report.ioReadBytesPerSecond, let write = report.ioWriteBytesPerSecond {
            fields.append(Field(priority: 2, text: "io r " + rate(read) + " w " + rate(write)))
        }
        if let open = report.fdsOpen {
            let limit = report.fdsLimit
            let text = "fds \(open)" + (limit.map { "/\($0)" } ?? "")
            let high = limit.map { $0 > 0 && Double(open) > Double($0) * fdsLimitShare } ?? false
            fields.append(high ? Field(priority: 0, text: alarm(text)) : Field(priority: 1, text: text))
        }
        if let anon = report.residentAnonBytes, let file = report.residentFileBytes {
            var text = "anon " + Units.bytes(Double(anon)) + " file " + Units.bytes(Double(file))
            if let shmem = report.residentShmemBytes, shmem > 0 { text += " shm " + Units.bytes(Double(shmem)) }
            if let swap = report.swapBytes, swap > 0 { text += " swap " + Units.bytes(Double(swap)) }
            fields.append(Field(priority: 3, text: text))
        }
        if let score = report.everySecond.oomScore {
            // Which process the kernel kills first when memory runs out (0…2000).
            fields.append(Field(priority: 3, text: "oom \(score)"))
        }
        if let busiest = report.busiestThreads?.first {
            // A thread's name is the program's to choose: escaped, as every untrusted string.
            fields.append(Field(priority: 2, text: "busiest " + TerminalText.escaped(busiest.name, maxLength: 16) + " " + percent(busiest.cpuPercent) + "%"))
        }
        if let net = report.netBox.flatMap({ NetworkText.details($0.value, paint: paint) }) {
            fields.append(Field(priority: net.alarm ? 0 : 2, text: net.text))
        }
        if let gpu = GPUText.device(report.gpu, paint: paint) { fields.append(Field(priority: 2, text: gpu)) }
        let pressure = report.pressure
        let kinds = [("cpu", pressure.cpuSome), ("mem", pressure.memorySome), ("io", pressure.ioSome)].compactMap { name, value in
            value.map { name + " " + percent($0) + "%" }
        }
        if !kinds.isEmpty { fields.append(Field(priority: 4, text: paint.dim("psi " + kinds.joined(separator: " ")))) }
        return fields
    }

    /// The fields joined by `separator` after a leading space, at most `width` columns: the field
    /// of the highest priority is dropped first, among equals the one further right; fields of
    /// priority `keeping` or less are never dropped (the status line's PID, CPU and RSS). What still
    /// does not fit (the last field alone on a very narrow terminal) is cut. Never wider than `width`.
    /// The details line and the status line both fit this way.
    package static func fit(_ fields: [Field], separator: String, width: Int, keeping: Int = .min) -> String {
        // Each field measured once; the line's width is then a sum (drawn up to 20 times a second).
        let widths = fields.map { TerminalText.displayWidth($0.text) }
        let separatorWidth = TerminalText.displayWidth(separator)
        var kept = Array(fields.indices)
        var total = 1 + widths.reduce(0, +) + separatorWidth * max(0, fields.count - 1)
        while kept.count > 1, total > width {
            var drop = kept.count - 1
            for position in kept.indices.reversed() where fields[kept[position]].priority > fields[kept[drop]].priority { drop = position }
            if fields[kept[drop]].priority <= keeping { break }
            total -= widths[kept[drop]] + separatorWidth
            kept.remove(at: drop)
        }
        var line = " "
        for (position, index) in kept.enumerated() {
            if position > 0 { line += separator }
            line += fields[index].text
        }
        return total > width ? TerminalText.truncated(line, toWidth: max(0, width)) : line
    }

    /// A count per second, short: `0`, `30`, `999`, `1.2k`, `34k`, `1.2M`.
    package static func count(_ value: Double) -> String {
        let value = max(0, value)
        if value < 999.5 { return String(value.rounded().clampedInt) }
        if value < 9_950 { return String(format1: value / 1e3) + "k" }
        if value < 999_500 { return String((value / 1e3).rounded().clampedInt) + "k" }
        return String(format1: value / 1e6) + "M"
    }

    /// A share, short: `0`, `0.4`, `12`, `446` (percent).
    package static func percent(_ value: Double) -> String { value == 0 ? "0" : Units.compactPercent(value) }

    /// Bytes per second: `0 B/s`, `12.0 MiB/s`.
    package static func rate(_ value: Double) -> String { Units.bytes(max(0, value)) + "/s" }
}
