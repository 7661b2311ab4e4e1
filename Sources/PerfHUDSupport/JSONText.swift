/// JSON string literals read by hand where a line or a value must be looked at without a JSON
/// library (Foundation's would add megabytes to a static binary): the action of a reducer-log line,
/// the command line a recording keeps.
package enum JSONText {
    /// The JSON string literal that starts at `start` (its opening quote), unescaped, and the index
    /// after its closing quote; nil when it does not close or an escape is broken.
    package static func string(_ scalars: [Unicode.Scalar], _ start: Int) -> (String, Int)? {
        var result = String.UnicodeScalarView()
        var index = start + 1
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\"" { return (String(result), index + 1) }
            if scalar == "\\", index + 1 < scalars.count {
                index += 1
                switch scalars[index] {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "b": result.append("\u{8}")
                case "f": result.append("\u{C}")
                case "u":
                    guard index + 4 < scalars.count,
                          let value = UInt32(String(String.UnicodeScalarView(scalars[(index + 1)...(index + 4)])), radix: 16) else { return nil }
                    result.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                    index += 4
                default: result.append(scalars[index])
                }
            } else {
                result.append(scalar)
            }
            index += 1
        }
        return nil
    }

    /// The strings of a JSON array of strings; nil when it is not one.
    package static func strings(_ text: String) -> [String]? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func skipSpace() { while index < scalars.count, scalars[index] == " " { index += 1 } }
        skipSpace()
        guard index < scalars.count, scalars[index] == "[" else { return nil }
        index += 1
        skipSpace()
        if index < scalars.count, scalars[index] == "]" { return [] }
        var result: [String] = []
        while true {
            skipSpace()
            guard index < scalars.count, scalars[index] == "\"", let (value, after) = string(scalars, index) else { return nil }
            result.append(value)
            index = after
            skipSpace()
            guard index < scalars.count else { return nil }
            index += 1
            switch scalars[index - 1] {
            case ",": continue
            case "]": return result
            default: return nil
            }
        }
    }
}
