/// One sample of the Prometheus text exposition format (version 0.0.4): `name{label="value",…} value`.
public struct PrometheusSample: Equatable {
    public var name: String
    public var labels: [String: String]
    public var value: Double

    public init(name: String, labels: [String: String] = [:], value: Double) {
        self.name = name
        self.labels = labels
        self.value = value
    }
}

/// Reads what a `/metrics` endpoint answers, for `perfhud top`. The text comes from the network
/// (`--from` may name any host): any bytes are read without a crash, in one pass; a line that is
/// not a sample as the format defines it is skipped and counted, never half-taken. Comments
/// (`# HELP`, `# TYPE`) and blank lines are not samples; timestamps are read and dropped.
/// Label values are unescaped (`\\`, `\"`, `\n`) and may hold any other byte, control
/// characters included: whoever shows them escapes them (`TerminalText.escaped`). Bytes that
/// are not UTF-8 become U+FFFD.
public enum PrometheusText {
    public struct Parsed {
        public var samples: [PrometheusSample] = []
        /// Lines that were neither samples, comments nor blank.
        public var malformed = 0
    }

    /// At most this many labels on one sample: the daemon's have three; more is not a /metrics.
    public static let maximumLabels = 64

    public static func parse(_ bytes: [UInt8]) -> Parsed {
        var parsed = Parsed()
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var line = bytes[start..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            switch parseLine(line) {
            case .sample(let sample): parsed.samples.append(sample)
            case .ignored: break
            case .malformed: parsed.malformed += 1
            }
            start = end + 1
        }
        return parsed
    }

    package enum Line: Equatable {
        case sample(PrometheusSample)
        /// A comment or a blank line.
        case ignored
        case malformed
    }

    package static func parseLine(_ line: ArraySlice<UInt8>) -> Line {
        var index = line.startIndex
        skipBlanks(line, &index)
        guard index < line.endIndex else { return .ignored }
        if line[index] == UInt8(ascii: "#") { return .ignored }
        guard let name = metricName(line, &index) else { return .malformed }
        var labels: [String: String] = [:]
        if index < line.endIndex && line[index] == UInt8(ascii: "{") {
            index += 1
            guard let read = labelSet(line, &index) else { return .malformed }
            labels = read
        }
        // The value, after at least one blank; then an optional timestamp.
        guard index < line.endIndex, isBlank(line[index]) else { return .malformed }
        skipBlanks(line, &index)
        let valueStart = index
        while index < line.endIndex && !isBlank(line[index]) { index += 1 }
        guard let value = number(line[valueStart..<index]) else { return .malformed }
        skipBlanks(line, &index)
        if index < line.endIndex {
            let timestampStart = index
            while index < line.endIndex && !isBlank(line[index]) { index += 1 }
            guard Int64(String(decoding: line[timestampStart..<index], as: UTF8.self)) != nil else { return .malformed }
            skipBlanks(line, &index)
            guard index == line.endIndex else { return .malformed }
        }
        return .sample(PrometheusSample(name: name, labels: labels, value: value))
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    private static func metricName(_ line: ArraySlice<UInt8>, _ index: inout Int) -> String? {
        let start = index
        while index < line.endIndex, isNameByte(line[index], first: index == start, colon: true) { index += 1 }
        return index > start ? String(decoding: line[start..<index], as: UTF8.self) : nil
    }

    /// After `{`: `name="value"` pairs separated by commas, a trailing comma allowed, up to `}`.
    private static func labelSet(_ line: ArraySlice<UInt8>, _ index: inout Int) -> [String: String]? {
        var labels: [String: String] = [:]
        while true {
            skipBlanks(line, &index)
            guard index < line.endIndex else { return nil }
            if line[index] == UInt8(ascii: "}") { index += 1; return labels }
            let start = index
            while index < line.endIndex, isNameByte(line[index], first: index == start, colon: false) { index += 1 }
            guard index > start else { return nil }
            let name = String(decoding: line[start..<index], as: UTF8.self)
            skipBlanks(line, &index)
            guard index < line.endIndex, line[index] == UInt8(ascii: "=") else { return nil }
            index += 1
            skipBlanks(line, &index)
            guard index < line.endIndex, line[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            guard let value = quoted(line, &index) else { return nil }
            // A label given twice is not a series anyone can name.
            guard labels.updateValue(value, forKey: name) == nil, labels.count <= maximumLabels else { return nil }
            skipBlanks(line, &index)
            guard index < line.endIndex else { return nil }
            if line[index] == UInt8(ascii: ",") { index += 1; continue }
            guard line[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            return labels
        }
    }

    /// After the opening quote, up to and past the closing one: the value, unescaped.
    private static func quoted(_ line: ArraySlice<UInt8>, _ index: inout Int) -> String? {
        var bytes: [UInt8] = []
        while index < line.endIndex {
            let byte = line[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: bytes, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < line.endIndex else { return nil }
                let escaped = line[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "n"): bytes.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): bytes.append(escaped)
                // The format knows no other escape; Prometheus keeps such a pair as it is.
                default: bytes.append(byte); bytes.append(escaped)
                }
            default: bytes.append(byte)
            }
        }
        return nil
    }

    /// A Go `ParseFloat` number as the format writes them: decimal, exponent, `NaN`, `+Inf`, `-Inf`.
    package static func number(_ text: ArraySlice<UInt8>) -> Double? {
        guard !text.isEmpty, text.count <= 64 else { return nil }
        let string = String(decoding: text, as: UTF8.self)
        switch string {
        case "NaN": return .nan
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        default: break
        }
        // Swift's Double(String) also takes hexadecimal floats and "inf"/"nan" in any case: not the format's.
        guard text.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e")
                                || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) else { return nil }
        return Double(string)
    }

    private static func isNameByte(_ byte: UInt8, first: Bool, colon: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): return true
        case UInt8(ascii: ":"): return colon
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return !first
        default: return false
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private static func skipBlanks(_ line: ArraySlice<UInt8>, _ index: inout Int) {
        while index < line.endIndex && isBlank(line[index]) { index += 1 }
    }
}
