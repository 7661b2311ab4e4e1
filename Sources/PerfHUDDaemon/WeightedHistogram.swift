import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// A Prometheus histogram whose observations carry a weight: a frame sent with `|@0.01` stands
/// for 100 frames and adds 100 to its bucket, in one addition.
///
/// Written by hand because swift-prometheus's `ValueHistogram` records one observation per call:
/// a weight of 10⁸ meant 10⁸ calls with the aggregator's lock held (issue 8), and a weight that
/// is not a whole number cannot be recorded at all. The text it writes follows the exposition
/// format 0.0.4 (`_bucket{le=…}` cumulative, `_sum`, `_count`), appended after the registry's.
final class WeightedHistogram: @unchecked Sendable {
    let name: String
    let help: String
    let bounds: [Double]
    /// The series' own labels, written before `le` (`target="web",`).
    let labelText: String
    private var counts: [Double]
    private var sum = 0.0
    private var total = 0.0
    private let mutex = Mutex()

    init(name: String, help: String, bounds: [Double], labels: [(String, String)] = []) {
        self.name = name
        self.help = help
        self.bounds = bounds
        labelText = labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"," }.joined()
        counts = [Double](repeating: 0, count: bounds.count)
    }

    /// Adds `weight` observations of `value`. Non-finite or negative input is ignored: what is
    /// exposed stays finite.
    func record(_ value: Double, weight: Double) {
        guard value.isFinite, value >= 0, weight.isFinite, weight > 0 else { return }
        mutex.withLock {
            if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += weight }
            sum += value * weight
            total += weight
        }
    }

    /// `# HELP` and `# TYPE`: once for all the series of the name.
    func emitHeader(into buffer: inout [UInt8]) {
        buffer += Array("# HELP \(name) \(help)\n# TYPE \(name) histogram\n".utf8)
    }

    func emitSamples(into buffer: inout [UInt8]) {
        let (snapshot, sum, total) = mutex.withLock { (counts, self.sum, self.total) }
        var text = ""
        var cumulative = 0.0
        for (bound, count) in zip(bounds, snapshot) {
            cumulative += count
            text += "\(name)_bucket{\(labelText)le=\"\(Self.format(bound))\"} \(Self.format(cumulative))\n"
        }
        text += "\(name)_bucket{\(labelText)le=\"+Inf\"} \(Self.format(total))\n"
        let plain = labelText.isEmpty ? "" : "{" + labelText.dropLast() + "}"
        text += "\(name)_sum\(plain) \(Self.format(sum))\n\(name)_count\(plain) \(Self.format(total))\n"
        buffer += Array(text.utf8)
    }

    /// A label value as the exposition format wants it: backslash, quote and line feed escaped.
    static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// Whole numbers without a fraction (`12`, not `12.0`), others as Swift prints doubles.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
