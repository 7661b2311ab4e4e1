#if canImport(Glibc)
import Glibc
#endif

/// One report as a line of text: `--output plain` for people, `--output json` for programs.
public enum ReportFormatter {
    /// The keys about events (docs/figures.md, JSON output), in order: null when there is no event socket.
    public static var eventKeys: [StaticString] { Figure.eventKeys }

    /// One JSON object, no newline: `time`, `pid`, `alive`, then the fields of `Figure.all` in
    /// order (`appendJSON`, as a `String`).
    public static func json(_ report: Report, commandName: String, status: TargetStatus, events: EventSnapshot? = nil,
                            fields: [Figure] = Figure.all) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(700)
        appendJSON(report, commandName: commandName, status: status, events: events, fields: fields, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The JSON object of `json`, appended to `out` as UTF-8 bytes: a row may be written every
    /// millisecond, and the writer keeps one buffer for all of them, so a row allocates nothing
    /// once that buffer has grown (a `String` per field or per row cost more than the rest of the tick).
    public static func appendJSON(_ report: Report, commandName: String, status: TargetStatus, events: EventSnapshot?,
                                  fields: [Figure], to out: inout [UInt8]) {
        let first = out.count + 1
        out.append(UInt8(ascii: "{"))
        appendKey("time", first: first, to: &out)
        out.append(UInt8(ascii: "\""))
        appendRFC3339(report.wallSeconds, to: &out)
        out.append(UInt8(ascii: "\""))
        appendKey("pid", first: first, to: &out)
        appendInteger(Int64(report.pid), to: &out)
        appendKey("alive", first: first, to: &out)
        appendStatic(report.alive ? "true" : "false", to: &out)
        // Asked once: comparing the optional snapshot with nil copies it (it is Equatable).
        let hasEvents = events != nil
        let figures = events ?? EventSnapshot()
        for figure in fields {
            if figure.source == .events && !hasEvents {
                if figure.nullWithoutEvents { appendKey(figure.key, first: first, to: &out); appendStatic("null", to: &out) }
                continue
            }
            switch figure.kind {
            case .number(let decimals):
                appendKey(figure.key, first: first, to: &out)
                appendNumber(figure.read(report, figures), decimals: decimals, to: &out)
            case .boolean:
                appendKey(figure.key, first: first, to: &out)
                if let value = figure.read(report, figures) { appendStatic(value != 0 ? "true" : "false", to: &out) } else { appendStatic("null", to: &out) }
            case .special(.busiestThreads):
                appendKey(figure.key, first: first, to: &out)
                guard let threads = report.busiestThreads else { appendStatic("null", to: &out); continue }
                out.append(UInt8(ascii: "["))
                for (index, thread) in threads.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    appendStatic("{\"tid\":", to: &out)
                    appendInteger(Int64(thread.tid), to: &out)
                    appendStatic(",\"name\":", to: &out)
                    appendQuoted(thread.name, to: &out)
                    appendStatic(",\"cpu_percent\":", to: &out)
                    appendNumber(thread.cpuPercent, decimals: 1, to: &out)
                    if thread.pid != report.pid {
                        appendStatic(",\"pid\":", to: &out)
                        appendInteger(Int64(thread.pid), to: &out)
                    }
                    out.append(UInt8(ascii: "}"))
                }
                out.append(UInt8(ascii: "]"))
            case .special(.highFrequencyActions):
                appendKey(figure.key, first: first, to: &out)
                out.append(UInt8(ascii: "["))
                for (index, action) in figures.highFrequencyActions.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    appendStatic("{\"action\":", to: &out)
                    appendQuoted(action.action, to: &out)
                    appendStatic(",\"rate\":", to: &out)
                    appendNumber(action.rate, decimals: 2, to: &out)
                    appendStatic(",\"peak\":", to: &out)
                    appendNumber(action.peak, decimals: 2, to: &out)
                    out.append(UInt8(ascii: "}"))
                }
                out.append(UInt8(ascii: "]"))
            case .special(.phase):
                appendKey(figure.key, first: first, to: &out)
                if let phase = figures.phase { appendQuoted(phase, to: &out) } else { appendStatic("null", to: &out) }
            case .special(.rejectedByReason):
                appendKey(figure.key, first: first, to: &out)
                out.append(UInt8(ascii: "{"))
                if !figures.rejected.isEmpty {
                    for (index, reason) in figures.rejected.sorted(by: { $0.key < $1.key }).enumerated() {
                        if index > 0 { out.append(UInt8(ascii: ",")) }
                        appendQuoted(reason.key, to: &out)
                        out.append(UInt8(ascii: ":"))
                        appendDigits(reason.value, count: 0, to: &out)
                    }
                }
                out.append(UInt8(ascii: "}"))
            case .special(.frameSource):
                appendKey(figure.key, first: first, to: &out)
                if let source = figures.frameSource { appendQuoted(source.rawValue, to: &out) } else { appendStatic("null", to: &out) }
            case .special(.framesUnreportedReason):
                // Only while there is a reason: rows of runs (and recordings) from before the key
                // existed stay as they were, byte for byte, when replayed.
                if let reason = figures.framesUnreportedReason {
                    appendKey(figure.key, first: first, to: &out)
                    appendQuoted(reason, to: &out)
                }
            case .special(.command):
                appendKey(figure.key, first: first, to: &out)
                appendQuoted(commandName, to: &out)
            case .special(.exitStatus):
                if case .exited(let code, let signal) = status {
                    appendKey("exit_code", first: first, to: &out)
                    if let code { appendInteger(Int64(code), to: &out) } else { appendStatic("null", to: &out) }
                    appendKey("exit_signal", first: first, to: &out)
                    if let signal { appendInteger(Int64(signal), to: &out) } else { appendStatic("null", to: &out) }
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `,"key":` (no comma before the object's first field, which starts at `first`).
    @inline(__always)
    private static func appendKey(_ key: StaticString, first: Int, to out: inout [UInt8]) {
        if out.count > first { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "\""))
        appendStatic(key, to: &out)
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    @inline(__always)
    private static func appendStatic(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A whole number in decimal.
    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, count: 0, to: &out)
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
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendRFC3339(seconds, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `rfc3339` appended to `out`.
    static func appendRFC3339(_ seconds: Double, to out: inout [UInt8]) {
        var whole = time_t(seconds.rounded(.down))
        var milliseconds = Int(((seconds - Double(whole)) * 1000).rounded())
        if milliseconds == 1000 { milliseconds = 0; whole += 1 }
        var parts = tm()
        gmtime_r(&whole, &parts)
        // Zero-padded to `width` characters, a minus sign counted among them (a year of a bogus clock).
        func padded(_ value: Int32, _ width: Int, then separator: UInt8?) {
            if value < 0 { out.append(UInt8(ascii: "-")) }
            appendDigits(UInt64(value.magnitude), count: value < 0 ? width - 1 : width, to: &out)
            if let separator { out.append(separator) }
        }
        padded(parts.tm_year + 1900, 4, then: UInt8(ascii: "-"))
        padded(parts.tm_mon + 1, 2, then: UInt8(ascii: "-"))
        padded(parts.tm_mday, 2, then: UInt8(ascii: "T"))
        padded(parts.tm_hour, 2, then: UInt8(ascii: ":"))
        padded(parts.tm_min, 2, then: UInt8(ascii: ":"))
        padded(parts.tm_sec, 2, then: UInt8(ascii: "."))
        padded(Int32(milliseconds), 3, then: UInt8(ascii: "Z"))
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
    /// escaped (`appendQuoted`).
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `quoted(text)` appended to `out`. Works on UTF-8 bytes; C1 controls are the two-byte
    /// sequences C2 80…C2 9F.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        func escapeControl(_ value: UInt8) {
            appendStatic("\\u00", to: &out)
            let hex: StaticString = "0123456789abcdef"
            out.append(hex.utf8Start[Int(value >> 4)])
            out.append(hex.utf8Start[Int(value & 15)])
        }
        var pendingC2 = false
        for byte in text.utf8 {
            if pendingC2 {
                pendingC2 = false
                if byte >= 0x80 && byte <= 0x9F { escapeControl(byte); continue }
                out.append(0xC2)
            }
            switch byte {
            case UInt8(ascii: "\""): appendStatic("\\\"", to: &out)
            case UInt8(ascii: "\\"): appendStatic("\\\\", to: &out)
            case UInt8(ascii: "\n"): appendStatic("\\n", to: &out)
            case UInt8(ascii: "\r"): appendStatic("\\r", to: &out)
            case UInt8(ascii: "\t"): appendStatic("\\t", to: &out)
            case 0xC2: pendingC2 = true
            case 0..<0x20, 0x7F: escapeControl(byte)
            default: out.append(byte)
            }
        }
        if pendingC2 { out.append(0xC2) }
        out.append(UInt8(ascii: "\""))
    }
}
