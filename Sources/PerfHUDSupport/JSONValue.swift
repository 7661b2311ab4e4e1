/// A JSON value, read by hand (Foundation's parser would add megabytes to a static binary): the
/// command tree's help dump (`CommandOptions`), a container runtime's records. Numbers are kept as
/// their text; nesting deeper than 64 is refused.
package enum JSONValue {
    case object([String: JSONValue]), array([JSONValue]), string(String), number(String), bool(Bool), null

    /// The value `text` is; nil when it is not one JSON value.
    package static func parse(_ text: String) -> JSONValue? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        guard let value = value(scalars, &index) else { return nil }
        skipSpace(scalars, &index)
        return index == scalars.count ? value : nil
    }

    private static func skipSpace(_ scalars: [Unicode.Scalar], _ index: inout Int) {
        while index < scalars.count, " \n\r\t".unicodeScalars.contains(scalars[index]) { index += 1 }
    }

    private static func value(_ scalars: [Unicode.Scalar], _ index: inout Int, depth: Int = 0) -> JSONValue? {
        skipSpace(scalars, &index)
        guard index < scalars.count, depth < 64 else { return nil }
        switch scalars[index] {
        case "\"":
            guard let (string, after) = JSONText.string(scalars, index) else { return nil }
            index = after
            return .string(string)
        case "{":
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace(scalars, &index)
            if index < scalars.count, scalars[index] == "}" { index += 1; return .object(members) }
            while true {
                skipSpace(scalars, &index)
                guard index < scalars.count, scalars[index] == "\"", let (key, after) = JSONText.string(scalars, index) else { return nil }
                index = after
                skipSpace(scalars, &index)
                guard index < scalars.count, scalars[index] == ":" else { return nil }
                index += 1
                guard let member = value(scalars, &index, depth: depth + 1) else { return nil }
                members[key] = member
                guard let end = separator(scalars, &index, closing: "}") else { return nil }
                if end { return .object(members) }
            }
        case "[":
            index += 1
            var elements: [JSONValue] = []
            skipSpace(scalars, &index)
            if index < scalars.count, scalars[index] == "]" { index += 1; return .array(elements) }
            while true {
                guard let element = value(scalars, &index, depth: depth + 1) else { return nil }
                elements.append(element)
                guard let end = separator(scalars, &index, closing: "]") else { return nil }
                if end { return .array(elements) }
            }
        default:
            let start = index
            while index < scalars.count, !",]} \n\r\t".unicodeScalars.contains(scalars[index]) { index += 1 }
            let word = String(String.UnicodeScalarView(scalars[start..<index]))
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default: return Double(word) != nil ? .number(word) : nil
            }
        }
    }

    /// After a member or an element: true at `closing` (consumed), false at a comma, nil otherwise.
    private static func separator(_ scalars: [Unicode.Scalar], _ index: inout Int, closing: Unicode.Scalar) -> Bool? {
        skipSpace(scalars, &index)
        guard index < scalars.count else { return nil }
        index += 1
        switch scalars[index - 1] {
        case ",": return false
        case closing: return true
        default: return nil
        }
    }
}
