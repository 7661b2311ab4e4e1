#if canImport(Glibc)
import Glibc
#endif

/// One report as a line of text: `--output plain` for people, `--output json` for programs.
public enum ReportFormatter {
    /// The keys about events (docs/figures.md, JSON output), in order: null when there is no event socket.
    public static var eventKeys: [StaticString] { Figure.eventKeys }

    /// One JSON object, no newline: `time`, `pid`, `alive`, then the fields of `Figure.all` in
    /// order. Built as UTF-8 bytes in one buffer: a report may be written every millisecond, and
    /// appending to a `String` piece by piece costs ten times more.
    public static func json(_ report: Report, commandName: String, status: TargetStatus, events: EventSnapshot? = nil,
                            fields: [Figure] = Figure.all) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(700)
        func field(_ key: StaticString, _ value: String) {
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: value.utf8)
        }
        field("time", "\"" + rfc3339(report.wallSeconds) + "\"")
        field("pid", String(report.pid))
        field("alive", report.alive ? "true" : "false")
        // Asked once: comparing the optional snapshot with nil copies it (it is Equatable).
        let hasEvents = events != nil
        let figures = events ?? EventSnapshot()
        for figure in fields {
            if figure.source == .events && !hasEvents {
                if figure.nullWithoutEvents { field(figure.key, "null") }
                continue
            }
            switch figure.kind {
            case .number(let decimals):
                field(figure.key, "")
                appendNumber(figure.read(report, figures), decimals: decimals, to: &out)
            case .boolean:
                field(figure.key, figure.read(report, figures).map { $0 != 0 ? "true" : "false" } ?? "null")
            case .special(.busiestThreads):
                guard let threads = report.busiestThreads else { field(figure.key, "null"); continue }
                var list = "["
                for (index, thread) in threads.enumerated() {
                    if index > 0 { list += "," }
                    list += "{\"tid\":" + String(thread.tid) + ",\"name\":" + quoted(thread.name) + ",\"cpu_percent\":" + number(thread.cpuPercent, decimals: 1)
                    if thread.pid != report.pid { list += ",\"pid\":" + String(thread.pid) }
                    list += "}"
                }
                field(figure.key, list + "]")
            case .special(.highFrequencyActions):
                var list = "["
                for (index, action) in figures.highFrequencyActions.enumerated() {
                    if index > 0 { list += "," }
                    list += "{\"action\":" + quoted(action.action) + ",\"rate\":" + number(action.rate) + ",\"peak\":" + number(action.peak) + "}"
                }
                field(figure.key, list + "]")
            case .special(.phase):
                field(figure.key, figures.phase.map(quoted) ?? "null")
            case .special(.rejectedByReason):
                field(figure.key, "{" + figures.rejected.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + String($0.value) }.joined(separator: ",") + "}")
            case .special(.frameSource):
                field(figure.key, figures.frameSource.map { quoted($0.rawValue) } ?? "null")
            case .special(.framesUnreportedReason):
                // Only while there is a reason: rows of runs (and recordings) from before the key
                // existed stay as they were, byte for byte, when replayed.
                if let reason = figures.framesUnreportedReason { field(figure.key, quoted(reason)) }
            case .special(.command):
                field(figure.key, quoted(commandName))
            case .special(.exitStatus):
                if case .exited(let code, let signal) = status {
                    field("exit_code", code.map { String($0) } ?? "null")
                    field("exit_signal", signal.map { String($0) } ?? "null")
                }
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// One line for people, the same figures as the status line.
    public static func plain(_ report: Report, commandName: String, status: TargetStatus, events: EventSnapshot? = nil) -> String {
        var parts = [String(rfc3339(report.wallSeconds).dropFirst(11).dropLast()),
                     "PID \(report.pid) " + TerminalText.escaped(commandName, maxLength: 32)]
        if status != .running { parts.append(status.description) }
        if let cpu = report.cpuPercent {
            var text = "CPU " + Units.percent(cpu)
            if let user = report.cpuUserPercent, let system = report.cpuSystemPercent {
                text += " (u " + String(format1: user) + " s " + String(format1: system) + ")"
            }
            parts.append(text)
        }
        if let resident = report.residentBytes {
            var text = "RSS " + Units.bytes(Double(resident))
            if let trend = report.residentTrendBytesPerSecond { text += " " + Units.byteRate(trend) }
            parts.append(text)
        }
        if report.alive { parts.append("PSS " + (report.proportionalBytes.map { Units.bytes(Double($0)) } ?? "n/a")) }
        if let threads = report.threads { parts.append("threads \(threads)") }
        if let events {
            if events.hasFrames {
                parts.append("FPS " + number(events.fps, decimals: 0) + " p99 " + number(events.frameP99, decimals: 1) + "ms janky " + number(events.jankyFrames))
            }
            if events.hasActions { parts.append("actions " + number(events.actionsPerSecond, decimals: 0) + "/s") }
            if let worst = events.highFrequencyActions.first {
                parts.append("high-frequency " + TerminalText.escaped(worst.action) + " " + number(worst.rate, decimals: 0) + "/s")
            }
            if let phase = events.phase { parts.append("phase " + TerminalText.escaped(phase)) }
        }
        return parts.joined(separator: "  ")
    }

    /// `2026-11-22T04:37:01.123Z`.
    public static func rfc3339(_ seconds: Double) -> String {
        var whole = time_t(seconds.rounded(.down))
        var milliseconds = Int(((seconds - Double(whole)) * 1000).rounded())
        if milliseconds == 1000 { milliseconds = 0; whole += 1 }
        var parts = tm()
        gmtime_r(&whole, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }

    /// `number(value, decimals:)` written straight into `out`: the JSON row has ~60 numbers a tick,
    /// and a `String` each cost more than the rest of the row.
    static func appendNumber(_ value: Double?, decimals: Int, to out: inout [UInt8]) {
        guard let value, value.isFinite, abs(value) < 9e15 else { out.append(contentsOf: "null".utf8); return }
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = scaled.magnitude
        appendDigits(magnitude / scale, count: 0, to: &out)
        var fraction = magnitude % scale
        if fraction != 0 {
            var digits = decimals
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            out.append(UInt8(ascii: "."))
            appendDigits(fraction, count: digits, to: &out)
        }
    }

    /// The decimal digits of `value`, zero-padded to `count` digits.
    private static func appendDigits(_ value: UInt64, count: Int, to out: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits
        var length = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - length] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                length += 1
            } while rest > 0 && length < 24
            while length < count && length < 24 { buffer[23 - length] = UInt8(ascii: "0"); length += 1 }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - length)...]))
        }
    }

    /// A JSON number with at most `decimals` decimals, trailing zeros dropped: `52.3`, `0`, `-1.25`.
    /// Formatted from integers: `Double.description` costs several times more per report.
    public static func number(_ value: Double?, decimals: Int = 2) -> String {
        guard let value, value.isFinite, abs(value) < 9e15 else { return "null" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let magnitude = scaled.magnitude
        var text = (scaled < 0 ? "-" : "") + String(magnitude / UInt64(scale))
        var fraction = magnitude % UInt64(scale)
        if fraction != 0 {
            var digits = decimals
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            let fractionText = String(fraction)
            text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
        }
        return text
    }


    /// A JSON string literal: quotes, backslashes and every control character (C0, DEL, C1)
    /// escaped. Works on UTF-8 bytes; C1 controls are the two-byte sequences C2 80…C2 9F.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(text.utf8.count + 2)
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        func escapeControl(_ value: UInt8) {
            out.append(contentsOf: "\\u00".utf8)
            out.append(hex[Int(value >> 4)])
            out.append(hex[Int(value & 15)])
        }
        var pendingC2 = false
        for byte in text.utf8 {
            if pendingC2 {
                pendingC2 = false
                if byte >= 0x80 && byte <= 0x9F { escapeControl(byte); continue }
                out.append(0xC2)
            }
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: "\\t".utf8)
            case 0xC2: pendingC2 = true
            case 0..<0x20, 0x7F: escapeControl(byte)
            default: out.append(byte)
            }
        }
        if pendingC2 { out.append(0xC2) }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
