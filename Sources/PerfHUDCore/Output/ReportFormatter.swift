#if canImport(Glibc)
import Glibc
#endif

/// One report as a line of text: `--output plain` for people, `--output json` for programs.
public enum ReportFormatter {
    /// The keys of PRODUCT.md, in order. Frame, action, phase and event keys are null until the
    /// program reports events (a later capability).
    public static let eventKeys = [
        "fps", "frame_p50_ms", "frame_p95_ms", "frame_p99_ms", "fps_1pct_low", "janky_frames", "dropped_frames",
        "actions_per_second", "high_frequency_actions", "phase", "events_received", "events_malformed",
        "events_rejected",
    ]

    /// One JSON object, no newline.
    public static func json(_ report: Report, commandName: String, status: TargetStatus) -> String {
        var fields: [(String, String)] = [
            ("time", quoted(rfc3339(report.wallSeconds))),
            ("pid", String(report.pid)),
            ("alive", report.alive ? "true" : "false"),
            ("cpu_percent", number(report.cpuPercent)),
            ("cpu_machine_percent", number(report.cpuMachinePercent)),
            ("cpu_user_percent", number(report.cpuUserPercent)),
            ("cpu_system_percent", number(report.cpuSystemPercent)),
            ("rss_bytes", integer(report.residentBytes)),
            ("pss_bytes", integer(report.proportionalBytes)),
            ("vsize_bytes", integer(report.virtualBytes)),
            ("threads", report.threads.map { String($0) } ?? "null"),
        ]
        fields += eventKeys.map { ($0, "null") }
        fields += [
            ("command", quoted(commandName)),
            ("elapsed_seconds", number(report.elapsedSeconds, decimals: 3)),
            ("rss_trend_bytes_per_second", number(report.residentTrendBytesPerSecond, decimals: 0)),
            ("processes", String(report.processCount)),
            ("cpu_seconds_total", number(report.cpuSecondsTotal, decimals: 6)),
        ]
        if case .exited(let code, let signal) = status {
            fields.append(("exit_code", code.map { String($0) } ?? "null"))
            fields.append(("exit_signal", signal.map { String($0) } ?? "null"))
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// One line for people, the same figures as the status line.
    public static func plain(_ report: Report, commandName: String, status: TargetStatus) -> String {
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

    static func number(_ value: Double?, decimals: Int = 2) -> String {
        guard let value, value.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded() && abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return String(rounded)
    }

    static func integer(_ value: UInt64?) -> String { value.map { String($0) } ?? "null" }

    /// A JSON string literal: quotes, backslashes and every control character escaped.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (scalar.value >= 0x80 && scalar.value < 0xA0) {
                    let hex = String(scalar.value, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
