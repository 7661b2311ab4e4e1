import PerfHUDSupport

/// `report --fail-on "EXPR"` and `--alert "EXPR"`: a condition on a run's summary or on a row's
/// figures, read by a small hand-written parser (it reads untrusted input: Tests/Fuzz/fail-on and
/// Tests/Fuzz/alert). Here, below the sinks, so that every one of them reads an alert alike
/// (`AlertRule`); its evaluation against a recording's summary is `report`'s (FailCondition+Summary). The grammar:
///
///     condition := metric op value
///     metric    := name ( "." name )*          rss_peak_bytes, phase.Gallery.kept_bytes
///     op        := ">" | ">=" | "<" | "<=" | "==" | "!="
///     value     := number [unit] | "baseline" [ "*" number ]
///     unit      := B KB MB GB KiB MiB GiB ms s %     (KB = 1000 B, KiB = 1024 B)
public struct FailCondition: Equatable {
    public enum Operator: String, CaseIterable { case greaterOrEqual = ">=", lessOrEqual = "<=", equal = "==", notEqual = "!=", greater = ">", less = "<" }
    public enum Value: Equatable {
        case number(Double)
        /// The same figure of the baseline run, times a factor.
        case baseline(factor: Double)
    }
    public var text: String
    public var metric: String
    public var op: Operator
    public var value: Value

    package static let units: [(String, Double)] = [("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024), ("KB", 1000),
                                            ("MB", 1e6), ("GB", 1e9), ("ms", 1), ("B", 1), ("s", 1), ("%", 1)]

    /// - Throws: `PerfHUDError` `.usage` (64) saying what it could not read.
    /// - Parameter option: the option it was given to, for the message (`--fail-on`, `--alert`).
    public init(_ text: String, option: String = "--fail-on") throws {
        self.text = text
        func bad(_ why: String) -> PerfHUDError { PerfHUDError(.usage, "cannot read \(option) \(Self.quoted(text)): \(why)") }
        let scalars = Array(text.unicodeScalars)
        guard scalars.count <= 1000 else { throw bad("too long") }
        var index = 0
        func skipSpaces() { while index < scalars.count && (scalars[index] == " " || scalars[index] == "\t") { index += 1 } }
        skipSpaces()
        let metricStart = index
        while index < scalars.count, !"<>=! \t".unicodeScalars.contains(scalars[index]) { index += 1 }
        metric = String(String.UnicodeScalarView(scalars[metricStart..<index]))
        guard !metric.isEmpty else { throw bad("no figure before the comparison (e.g. rss_peak_bytes > 200MiB)") }
        guard metric.unicodeScalars.first.map({ $0.properties.isAlphabetic || $0 == "_" }) == true,
              !metric.hasSuffix("."), !metric.contains(".."),
              !metric.unicodeScalars.contains(where: { $0.value < 0x20 || ($0.value >= 0x7F && $0.value < 0xA0) }) else { throw bad("\(Self.quoted(metric)) is not a figure name") }
        skipSpaces()
        var found: Operator?
        for candidate in Operator.allCases {
            let symbol = Array(candidate.rawValue.unicodeScalars)
            if index + symbol.count <= scalars.count && Array(scalars[index..<index + symbol.count]) == symbol {
                found = candidate
                index += symbol.count
                break
            }
        }
        guard let found else { throw bad("expected one of > >= < <= == != after \(Self.quoted(metric))") }
        op = found
        skipSpaces()
        let rest = String(String.UnicodeScalarView(scalars[index...]))
        let words = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if words.first?.hasPrefix("baseline") == true {
            let joined = words.joined()
            if joined == "baseline" {
                value = .baseline(factor: 1)
            } else if joined.hasPrefix("baseline*"), let factor = Self.number(String(joined.dropFirst(9))), factor.isFinite {
                value = .baseline(factor: factor)
            } else {
                throw bad("expected 'baseline' or 'baseline * FACTOR'")
            }
        } else {
            guard words.count >= 1, words.count <= 2 else { throw bad("expected a number after '\(op.rawValue)' (e.g. 200MiB, 50, 16.7ms)") }
            var word = words.joined()
            var scale = 1.0
            for (unit, factor) in Self.units where word.hasSuffix(unit) {
                word = String(word.dropLast(unit.count))
                scale = factor
                break
            }
            guard let number = Self.number(word), number.isFinite else { throw bad("'\(rest)' is not a number with an optional unit (B, KiB, MiB, GiB, KB, MB, GB, ms, s, %)") }
            value = .number(number * scale)
        }
    }

    /// The expression as the user wrote it, quoted, control characters escaped: one line always.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars.prefix(200) {
            if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) { out += "\\u{" + String(scalar.value, radix: 16) + "}" }
            else if scalar == "\"" || scalar == "\\" { out += "\\" + String(scalar) }
            else { out.unicodeScalars.append(scalar) }
        }
        return out + (text.unicodeScalars.count > 200 ? "…\"" : "\"")
    }

    /// A size such as `100MiB`, `2GB` or `4096` (bytes), for options that take one.
    public static func bytes(_ text: String) -> Double? {
        var word = text.filter { $0 != " " }
        var scale = 1.0
        for (unit, factor) in units where factor != 1 || unit == "B" {
            if word.hasSuffix(unit) { word = String(word.dropLast(unit.count)); scale = factor; break }
        }
        return number(word).map { $0 * scale }
    }

    /// A plain decimal number: digits, one point, an optional sign. No exponents, no hex, no nan.
    package static func number(_ text: String) -> Double? {
        var digits = 0, points = 0
        for (offset, character) in text.enumerated() {
            if character.isASCII && character.isNumber { digits += 1 }
            else if character == "." { points += 1 }
            else if (character == "-" || character == "+") && offset == 0 { continue }
            else { return nil }
        }
        guard digits > 0, points <= 1, text.count <= 40 else { return nil }
        return Double(text)
    }
}

extension FailCondition.Operator {
    /// `actual OP limit`: one comparison for `report --fail-on` and `--alert`.
    public func compare(_ actual: Double, _ limit: Double) -> Bool {
        switch self {
        case .greater: return actual > limit
        case .greaterOrEqual: return actual >= limit
        case .less: return actual < limit
        case .lessOrEqual: return actual <= limit
        case .equal: return actual == limit
        case .notEqual: return actual != limit
        }
    }
}
