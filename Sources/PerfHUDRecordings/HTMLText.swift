/// Text that goes into the HTML report (`perfhud report --format html`): the one place untrusted
/// strings — phase names, action labels, command lines, file names — are escaped, in element
/// content and attribute values alike, HTML and inline SVG alike.
public enum HTMLText {
    /// `text` with `& < > " '` replaced by character references, safe between tags and inside a
    /// quoted attribute. Control characters other than tab and newline are dropped: they are not
    /// allowed in HTML text and a label that carries one would otherwise make the page invalid.
    public static func escaped(_ text: String) -> String {
        // Most text needs nothing: skip the copy (0xC2 also leads Latin-1 letters: those take the slow path, harmlessly).
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
            || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") || ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) || $0 == 0x7F || $0 == 0xC2 })   // 0xC2 leads C1 controls
        else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
