#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDStore

/// One report as a line of text: `--output plain` for people, `--output json` for programs.
public enum RowFormatter {
    /// The keys about events (docs/figures.md, JSON output), in order: null when there is no event socket.
    public static var eventKeys: [String] { Figure.eventKeys }

    /// One JSON object, no newline: `time`, `pid`, `alive`, then the fields of `Figure.all` in
    /// order (`appendJSON`, as a `String`).
    public static func json(_ report: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot? = nil,
                            fields: [Figure] = Figure.all) -> String {
        var out = ByteBuffer(capacity: 2048)
        appendJSON(report, commandName: commandName, status: status, events: events, fields: fields, to: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The JSON object of `json`, appended to `out` as UTF-8 bytes: a row may be written every
    /// millisecond, and the writer keeps one buffer for all of them, so a row allocates nothing
    /// once that buffer has grown (a `String` per field or per row cost more than the rest of the
    /// tick, and `Array.append` per piece half of what was left: `ByteBuffer`).
    public static func appendJSON(_ report: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot?,
                                  fields: [Figure], to out: inout ByteBuffer) {
        appendJSON(report, commandName: commandName, status: status, events: events, plan: fields.map(\.plain), to: &out)
    }

    /// `appendJSON` with the fields as plain values, made once by a writer of many rows (`RowWriter`).
    package static func appendJSON(_ report: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot?,
                           plan fields: [Figure.Plain], to out: inout ByteBuffer) {
        // The snapshot is read where it is, a borrowed argument: `events ?? EventSnapshot()` was a
        // copy of it (a retain of each of its arrays and strings), or a new empty one, every row.
        guard let events else {
            return appendJSON(report, commandName: commandName, status: status, figures: .empty, hasEvents: false, plan: fields, to: &out)
        }
        appendJSON(report, commandName: commandName, status: status, figures: events, hasEvents: true, plan: fields, to: &out)
    }

    private static func appendJSON(_ report: TargetFigures, commandName: String, status: TargetStatus, figures: EventSnapshot, hasEvents: Bool,
                                   plan fields: [Figure.Plain], to out: inout ByteBuffer) {
        let first = out.count + 1
        out.append("{")
        appendKey("time", first: first, to: &out)
        out.append("\"")
        appendRFC3339(report.wallSeconds, to: &out)
        out.append("\"")
        appendKey("pid", first: first, to: &out)
        appendInteger(Int64(report.pid), to: &out)
        appendKey("alive", first: first, to: &out)
        out.append(report.alive ? "true" : "false")
        // Only while stopped, as `exit_code` only at the end: a row of a run never stopped is the
        // row of the versions before (a recording replays the rows its live run printed).
        if report.stopped { appendKey("stopped", first: first, to: &out); out.append("true") }
        for figure in fields {
            if figure.source == .events && !hasEvents {
                if figure.nullWithoutEvents { appendKey(figure.key, first: first, to: &out); out.append("null") }
                continue
            }
            switch figure.kind {
            case .number(let decimals):
                appendKey(figure.key, first: first, to: &out)
                appendNumber(Figure.read(figure.field, report, figures), decimals: decimals, to: &out)
            case .boolean:
                appendKey(figure.key, first: first, to: &out)
                if let value = Figure.read(figure.field, report, figures) { out.append(value != 0 ? "true" : "false") } else { out.append("null") }
            case .special(.busiestThreads):
                appendKey(figure.key, first: first, to: &out)
                guard let threads = report.busiestThreads else { out.append("null"); continue }
                out.append("[")
                for (index, thread) in threads.enumerated() {
                    if index > 0 { out.append(",") }
                    out.append("{\"tid\":")
                    appendInteger(Int64(thread.tid), to: &out)
                    out.append(",\"name\":")
                    appendQuoted(thread.name, to: &out)
                    out.append(",\"cpu_percent\":")
                    appendNumber(thread.cpuPercent, decimals: 1, to: &out)
                    if thread.pid != report.pid {
                        out.append(",\"pid\":")
                        appendInteger(Int64(thread.pid), to: &out)
                    }
                    out.append("}")
                }
                out.append("]")
            case .special(.highFrequencyActions):
                appendKey(figure.key, first: first, to: &out)
                out.append("[")
                for (index, action) in figures.highFrequencyActions.enumerated() {
                    if index > 0 { out.append(",") }
                    out.append("{\"action\":")
                    appendQuoted(action.action, to: &out)
                    out.append(",\"rate\":")
                    appendNumber(action.rate, decimals: 2, to: &out)
                    out.append(",\"peak\":")
                    appendNumber(action.peak, decimals: 2, to: &out)
                    out.append("}")
                }
                out.append("]")
            case .special(.phase):
                appendKey(figure.key, first: first, to: &out)
                if let phase = figures.phase { appendQuoted(phase, to: &out) } else { out.append("null") }
            case .special(.rejectedByReason):
                appendKey(figure.key, first: first, to: &out)
                out.append("{")
                if !figures.rejected.isEmpty {
                    for (index, reason) in figures.rejected.sorted(by: { $0.key < $1.key }).enumerated() {
                        if index > 0 { out.append(",") }
                        appendQuoted(reason.key, to: &out)
                        out.reserve(numberRoom + 1)
                        out.put(UInt8(ascii: ":"))
                        out.putDigits(reason.value)
                    }
                }
                out.append("}")
            case .special(.frameSource):
                appendKey(figure.key, first: first, to: &out)
                if let source = figures.frameSource { appendQuoted(source.rawValue, to: &out) } else { out.append("null") }
            case .special(.framesUnreportedReason):
                // Only while there is a reason: rows of runs (and recordings) from before the key
                // existed stay as they were, byte for byte, when replayed.
                if let reason = figures.framesUnreportedReason {
                    appendKey(figure.key, first: first, to: &out)
                    appendQuoted(reason, to: &out)
                }
            case .special(.gpuName):
                appendKey(figure.key, first: first, to: &out)
                if let name = report.gpuBox?.value.device?.name, !name.isEmpty { appendQuoted(name, to: &out) } else { out.append("null") }
            case .special(.gpuUnreportedReason):
                // Only while there is a reason, as frames_unreported_reason.
                if let reason = report.gpuBox?.value.unreportedReason {
                    appendKey(figure.key, first: first, to: &out)
                    appendQuoted(reason, to: &out)
                }
            case .special(.netSource):
                appendKey(figure.key, first: first, to: &out)
                if let source = report.netBox?.value.source { appendQuoted(source, to: &out) } else { out.append("null") }
            case .special(.netUnreportedReason):
                // Only while there is a reason, as gpu_unreported_reason.
                if let reason = report.netBox?.value.unreportedReason {
                    appendKey(figure.key, first: first, to: &out)
                    appendQuoted(reason, to: &out)
                }
            case .special(.memoryUnreportedReason):
                // Only while there is a reason, as net_unreported_reason.
                if let reason = report.memoryUnreportedReason {
                    appendKey(figure.key, first: first, to: &out)
                    appendQuoted(reason, to: &out)
                }
            case .special(.oomKilled):
                // Only on the exit row of a target the OOM killer ended, as exit_code only at the end.
                if report.oomKilled { appendKey(figure.key, first: first, to: &out); out.append("true") }
            case .special(.command):
                appendKey(figure.key, first: first, to: &out)
                appendQuoted(commandName, to: &out)
            case .special(.exitStatus):
                if case .exited(let code, let signal) = status {
                    appendKey("exit_code", first: first, to: &out)
                    if let code { appendInteger(Int64(code), to: &out) } else { out.append("null") }
                    appendKey("exit_signal", first: first, to: &out)
                    if let signal { appendInteger(Int64(signal), to: &out) } else { out.append("null") }
                }
            }
        }
        out.append("}")
    }

    /// A tick's JSON row as every writer of rows writes it (`--output json`, `--feed`, `status
    /// --format json`): its figures in the plan's order, then the alerts holding where the session
    /// has `--alert`.
    package static func appendRow(_ tick: Tick, plan: [Figure.Plain], to out: inout ByteBuffer) {
        appendJSON(tick.figures, commandName: tick.commandName, status: tick.status, events: tick.events, plan: plan, to: &out)
        appendAlerts(tick.alerts, to: &out)
    }

    /// Every figure of the table as plain values, made once (`appendRow`'s plan of a whole row);
    /// never changed after (its keys are classes: not `Sendable` by their type).
    nonisolated(unsafe) package static let everyFigure = Figure.all.map(\.plain)

    /// `"alerts":["cpu_percent > 80 for 20s"]`, the alerts holding, added to the row just written
    /// (before its closing brace); a row of a session without `--alert` has no such key.
    public static func appendAlerts(_ alerts: AlertStates, to out: inout ByteBuffer) {
        guard alerts.rules != nil else { return }
        out.removeLast()
        out.append(",\"alerts\":[")
        for (index, span) in alerts.holding.enumerated() {
            if index > 0 { out.append(",") }
            appendQuoted(span.text, to: &out)
        }
        out.append("]}")
    }

    /// `,"key":` (no comma before the object's first field, which starts at `first`), with room
    /// reserved for a number after it.
    @inline(__always)
    private static func appendKey(_ key: StaticString, first: Int, to out: inout ByteBuffer) {
        out.reserve(key.utf8CodeUnitCount + 4 + numberRoom)
        if out.count > first { out.put(UInt8(ascii: ",")) }
        out.put(UInt8(ascii: "\""))
        out.put(key)
        out.put(UInt8(ascii: "\""))
        out.put(UInt8(ascii: ":"))
    }

    /// A figure's key (`Figure.Key`: its bytes with the quotes and colon, made once).
    @inline(__always)
    private static func appendKey(_ key: Figure.Key, first: Int, to out: inout ByteBuffer) {
        out.reserve(1 + key.count + ByteBuffer.wordSlack + numberRoom)
        if out.count > first { out.put(UInt8(ascii: ",")) }
        out.putWords(key.start, key.count)
    }

    /// The most bytes `appendNumber` or `appendInteger` writes: a sign, 20 digits, a point and 6 decimals.
    private static let numberRoom = 28

    /// A whole number in decimal.
    private static func appendInteger(_ value: Int64, to out: inout ByteBuffer) {
        out.reserve(numberRoom)
        if value < 0 { out.put(UInt8(ascii: "-")) }
        out.putDigits(value.magnitude)
    }

    /// One line for people, the same figures as the status line.
    public static func plain(_ report: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot? = nil) -> String {
        var parts = [String(rfc3339(report.wallSeconds).dropFirst(11).dropLast()),
                     "PID \(report.pid) " + TerminalText.escaped(commandName, maxLength: 32)]
        if status != .running { parts.append(status.description) } else if report.stopped { parts.append("stopped") }
        if let oomKill = report.oomKillText { parts.append(oomKill) }
        if let cpu = report.cpuPercent {
            var text = "CPU " + Units.percent(cpu) + report.cpuLimitText
            if let user = report.cpuUserPercent, let system = report.cpuSystemPercent {
                text += " (u " + String(format1: user) + " s " + String(format1: system) + ")"
            }
            parts.append(text)
        }
        if let (name, resident) = report.shownMemory {
            var text = name + " " + Units.bytes(Double(resident))
            if let limit = report.memoryLimitBytes, limit > 0 { text += " / " + Units.bytes(Double(limit)) }
            if let trend = report.residentTrendBytesPerSecond { text += " " + Units.byteRate(trend) }
            parts.append(text)
        }
        if report.alive, let (name, bytes) = report.besideMemory {
            let age = report.proportionalAgeText.map { " (" + $0 + ")" } ?? ""
            parts.append(name + " " + (bytes.map { Units.bytes(Double($0)) } ?? "n/a") + age)
        }
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
        var out = ByteBuffer(capacity: 32)
        appendRFC3339(seconds, to: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// `rfc3339` appended to `out`.
    static func appendRFC3339(_ seconds: Double, to out: inout ByteBuffer) {
        var whole = time_t(seconds.rounded(.down))
        var milliseconds = Int(((seconds - Double(whole)) * 1000).rounded())
        if milliseconds == 1000 { milliseconds = 0; whole += 1 }
        var parts = tm()
        gmtime_r(&whole, &parts)
        out.reserve(7 * 24)
        // Zero-padded to `width` characters, a minus sign counted among them (a year of a bogus clock).
        func padded(_ value: Int32, _ width: Int, then separator: UInt8) {
            if value < 0 { out.put(UInt8(ascii: "-")) }
            out.putDigits(UInt64(value.magnitude), width: value < 0 ? width - 1 : width)
            out.put(separator)
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
    package static func appendNumber(_ value: Double?, decimals: Int, to out: inout ByteBuffer) {
        out.reserve(numberRoom)
        guard let value, value.isFinite, abs(value) < 9e15 else { out.put("null"); return }
        var scale: UInt64 = 1, decimals = min(decimals, 6)
        for _ in 0..<decimals { scale *= 10 }
        // A value too large for its decimals in 64 bits (above 9.2e12 at 6) is printed whole.
        if abs(value) * Double(scale) >= 9.2e18 { scale = 1; decimals = 0 }
        let magnitude = (value * Double(scale)).nearestInteger.magnitude
        if value < 0 && magnitude != 0 { out.put(UInt8(ascii: "-")) }
        out.putDigits(magnitude / scale)
        var fraction = magnitude % scale
        if fraction != 0 {
            var digits = decimals
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            out.put(UInt8(ascii: "."))
            out.putDigits(fraction, width: digits)
        }
    }

    /// A JSON number with at most `decimals` decimals, trailing zeros dropped: `52.3`, `0`, `-1.25`.
    /// Formatted from integers: `Double.description` costs several times more per report.
    public static func number(_ value: Double?, decimals: Int = 2) -> String {
        var out = ByteBuffer(capacity: 32)
        appendNumber(value, decimals: decimals, to: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// A JSON string literal: quotes, backslashes and every control character (C0, DEL, C1)
    /// escaped (`appendQuoted`).
    public static func quoted(_ text: String) -> String {
        var out = ByteBuffer(capacity: text.utf8.count * 6 + 2)
        appendQuoted(text, to: &out)
        return out.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `bytes` has a byte `appendQuoted` escapes or must look at (a control, `"`, `\`, DEL,
    /// or any byte from 0x80 up: C1 controls are C2 80…C2 9F), tested 8 bytes at a time: a row's
    /// texts (the command, thread names, a phase) are checked every tick, and a test per byte was
    /// ~1.2k of the demo's tick. Never false for a text that needs an escape; a non-ASCII text
    /// takes the byte-by-byte path, which copies what needs none.
    @inline(__always)
    static func mayNeedEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // A byte of `word` is zero where the high bit of the result is set (exact as a test of any).
        @inline(__always) func zeroByte(_ word: UInt64) -> UInt64 { (word &- ones) & ~word }
        @inline(__always) func flagged(_ word: UInt64) -> Bool {
            let below20 = (word &- ones &* 0x20) & ~word
            return (below20 | zeroByte(word ^ (ones &* 0x22)) | zeroByte(word ^ (ones &* 0x5C))
                | zeroByte(word ^ (ones &* 0x7F)) | word) & highs != 0
        }
        @inline(__always) func word(at offset: Int) -> UInt64 {
            UInt64(littleEndian: UnsafeRawPointer(start + offset).loadUnaligned(as: UInt64.self))
        }
        let count = bytes.count
        if count < 8 {
            // Padded with spaces, which need no escape.
            var padded: UInt64 = 0x2020_2020_2020_2020
            withUnsafeMutableBytes(of: &padded) { $0.baseAddress!.copyMemory(from: start, byteCount: count) }
            return flagged(UInt64(littleEndian: padded))
        }
        var index = 0
        while index + 8 < count {
            if flagged(word(at: index)) { return true }
            index += 8
        }
        // The last 8 bytes, overlapping the word before: no byte-by-byte tail.
        if flagged(word(at: count - 8)) { return true }
        return false
    }

    /// `quoted(text)` appended to `out`. Works on UTF-8 bytes; C1 controls are the two-byte
    /// sequences C2 80…C2 9F.
    static func appendQuoted(_ text: String, to out: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            // At most 6 bytes an input byte (`\u00XX`), and the quotes.
            out.reserve(bytes.count * 6 + 2)
            out.put(UInt8(ascii: "\""))
            // Most texts (a command, a phase, an action) need no escape: copied whole.
            if let start = bytes.baseAddress, !mayNeedEscape(bytes) {
                out.put(start, bytes.count)
                out.put(UInt8(ascii: "\""))
                return
            }
            func escapeControl(_ value: UInt8) {
                out.put("\\u00")
                let hex: StaticString = "0123456789abcdef"
                out.put(hex.utf8Start[Int(value >> 4)])
                out.put(hex.utf8Start[Int(value & 15)])
            }
            var pendingC2 = false
            for byte in bytes {
                if pendingC2 {
                    pendingC2 = false
                    if byte >= 0x80 && byte <= 0x9F { escapeControl(byte); continue }
                    out.put(0xC2)
                }
                switch byte {
                case UInt8(ascii: "\""): out.put("\\\"")
                case UInt8(ascii: "\\"): out.put("\\\\")
                case UInt8(ascii: "\n"): out.put("\\n")
                case UInt8(ascii: "\r"): out.put("\\r")
                case UInt8(ascii: "\t"): out.put("\\t")
                case 0xC2: pendingC2 = true
                case 0..<0x20, 0x7F: escapeControl(byte)
                default: out.put(byte)
                }
            }
            if pendingC2 { out.put(0xC2) }
            out.put(UInt8(ascii: "\""))
        }
    }
}
