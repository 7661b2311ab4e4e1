/// Durations as people type them on the command line: `250ms`, `2s`, `10m`, `1h`, `1.5s`, `500us`,
/// and the compound forms `format` writes (`1m30s`, `1h30m`).
public enum DurationText {
    private static let units: [(suffix: String, scale: Double)] = [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
    ]

    /// Parses `text` into nanoseconds; nil when it is not a duration. Every number has its unit.
    public static func nanoseconds(_ text: String) -> UInt64? {
        var total = 0.0
        var rest = Substring(text)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            // Digits and at most one dot, then a unit: no signs, exponents, inf or nan.
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { !($0.isASCII && ($0.isNumber || $0 == ".")) }
            rest = rest.dropFirst(unit.count)
            guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number),
                  let scale = units.first(where: { $0.suffix == unit })?.scale else { return nil }
            total += value * scale
        }
        guard total.isFinite, total < 1e18 else { return nil }
        return UInt64(total.rounded())
    }

    /// The shortest readable form of `nanoseconds`: `100ms`, `2s`, `10m`, `1h30m`.
    public static func format(nanoseconds: UInt64) -> String {
        if nanoseconds < 1_000 { return "\(nanoseconds)ns" }
        if nanoseconds < 1_000_000 { return trimmed(Double(nanoseconds) / 1e3) + "us" }
        if nanoseconds < 1_000_000_000 { return trimmed(Double(nanoseconds) / 1e6) + "ms" }
        let seconds = Double(nanoseconds) / 1e9
        if seconds < 60 { return trimmed(seconds) + "s" }
        let wholeSeconds = Int(seconds.rounded())
        if wholeSeconds < 3600 {
            let (minutes, rest) = wholeSeconds.quotientAndRemainder(dividingBy: 60)
            return rest == 0 ? "\(minutes)m" : "\(minutes)m\(rest)s"
        }
        let (hours, rest) = wholeSeconds.quotientAndRemainder(dividingBy: 3600)
        return rest / 60 == 0 ? "\(hours)h" : "\(hours)h\(rest / 60)m"
    }

    /// Elapsed time as a clock: `00:01:23`, `1:02:03:04` past a day.
    public static func clock(seconds: Double) -> String {
        let total = max(0, seconds.clampedInt)
        let (hours, rest) = total.quotientAndRemainder(dividingBy: 3600)
        let (minutes, secs) = rest.quotientAndRemainder(dividingBy: 60)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(hours)):\(two(minutes)):\(two(secs))"
    }

    private static func trimmed(_ value: Double) -> String {
        if value == value.rounded() { return String(Int(value)) }
        var text = String(format1: value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

extension String {
    /// `value` with one decimal, without Foundation.
    package init(format1 value: Double) {
        let tenths = value.isNaN ? 0 : Swift.max(-1e17, Swift.min(1e17, (value * 10).rounded())).clampedInt   // never traps, nor abs(Int.min)
        let sign = tenths < 0 ? "-" : ""
        let magnitude = abs(tenths)
        self = "\(sign)\(magnitude / 10).\(magnitude % 10)"
    }
}
