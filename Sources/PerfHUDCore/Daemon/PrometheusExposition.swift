/// Writes the Prometheus text exposition format (version 0.0.4).
///
/// Written by hand rather than with swift-prometheus: the daemon's figures are computed on each
/// scrape from state it already keeps (cumulative counters from the sampler and the aggregator),
/// which is a few dozen lines of formatting, while the registry would need every value mirrored
/// into its own objects and pull swift-atomics and swift-metrics into the build.
public struct PrometheusExposition {
    public private(set) var text = ""
    private var declared = Set<String>()

    public init() { text.reserveCapacity(16384) }

    public enum Kind: String { case counter, gauge, histogram, untyped }

    /// Declares a metric family once: `# HELP` and `# TYPE`.
    public mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        guard declared.insert(name).inserted else { return }
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample. Labels are escaped as the format requires.
    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (key, labelValue)) in labels.enumerated() {
                if index > 0 { text += "," }
                text += key + "=\"" + Self.escape(labelValue) + "\""
            }
            text += "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A metric with one sample and no labels.
    public mutating func single(_ name: String, _ kind: Kind, _ help: String, _ value: Double?) {
        guard let value else { return }
        family(name, kind, help)
        sample(name, [], value)
    }

    /// A histogram from cumulative bucket counts (`bounds` ascending, `counts` cumulative).
    public mutating func histogram(_ name: String, _ help: String, bounds: [Double], cumulative: [Double], sum: Double, count: Double) {
        family(name, .histogram, help)
        for (bound, value) in zip(bounds, cumulative) { sample(name + "_bucket", [("le", Self.format(bound))], value) }
        sample(name + "_bucket", [("le", "+Inf")], count)
        sample(name + "_sum", [], sum)
        sample(name + "_count", [], count)
    }

    static func escape(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
