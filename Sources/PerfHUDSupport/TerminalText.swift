/// Text that reaches the terminal: escaping of untrusted strings and display widths.
public enum TerminalText {
    /// `text` with every control character (C0, DEL, C1, and so every escape sequence) shown
    /// as a visible escape (`\e`, `\x07`, `\u{9b}`): a command line or label never moves the cursor.
    public static func escaped(_ text: String, maxLength: Int = 200) -> String {
        var result = ""
        var length = 0
        for scalar in text.unicodeScalars {
            if length >= maxLength { result += "…"; break }
            switch scalar.value {
            case 0x1B: result += "\\e"
            case 0x00..<0x20, 0x7F: result += "\\x" + hex(scalar.value, digits: 2)
            case 0x80..<0xA0, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + hex(scalar.value, digits: 2) + "}"
            default: result.unicodeScalars.append(scalar)
            }
            length += 1
        }
        return result
    }

    /// `text` for a terminal whose character set is ASCII (a C or POSIX locale): the HUD's own
    /// symbols as their ASCII stand-ins, any other character beyond ASCII as `?` (one column,
    /// as it was). Escape sequences are ASCII and pass unchanged.
    public static func ascii(_ text: String) -> String {
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII { result.unicodeScalars.append(scalar); continue }
            switch scalar {
            case "…": result += "..."
            case "│": result += "|"
            case "→": result += "->"
            case "←": result += "<-"
            case "↑": result += "tx"
            case "↓": result += "rx"
            case "⚠": result += "!"
            case "×": result += "x"
            case "■": result += "#"
            case "▶": result += ">"
            case "±": result += "+-"
            case "−", "–": result += "-"
            case "µ": result += "u"
            case "Σ": result += "sum"
            default: if columns(of: scalar) > 0 { result += String(repeating: "?", count: columns(of: scalar)) }
            }
        }
        return result
    }

    /// Columns `text` occupies, ignoring SGR escape sequences (`ESC [ … m`).
    /// Walks UTF-8 bytes: ASCII and the braille block take the fast path, without decoding.
    public static func displayWidth(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var width = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte == 0x1B {
                    // Skip ESC [ params final.
                    index += 1
                    if index < count && bytes[index] == UInt8(ascii: "[") { index += 1 }
                    while index < count && !(bytes[index] >= 0x40 && bytes[index] <= 0x7E) { index += 1 }
                    index += 1
                    continue
                }
                if byte < 0x80 { width += 1; index += 1; continue }
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                var value = UInt32(byte) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
                var offset = 1
                while offset < length && index + offset < count {
                    value = value << 6 | UInt32(bytes[index + offset] & 0x3F)
                    offset += 1
                }
                width += Unicode.Scalar(value).map(columns(of:)) ?? 1
                index += length
            }
            return width
        }
    }

    /// `text` cut to at most `width` columns, keeping its escape sequences intact.
    public static func truncated(_ text: String, toWidth width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                result.unicodeScalars.append(scalar)
                if scalar.value >= 0x40 && scalar.value <= 0x7E && scalar != "[" { inEscape = false }
                continue
            }
            if scalar.value == 0x1B { inEscape = true; result.unicodeScalars.append(scalar); continue }
            let cells = columns(of: scalar)
            if used + cells > width { continue }
            used += cells
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// Columns of one scalar: 0 for combining marks, 2 for East Asian wide and emoji, else 1.
    package static func columns(of scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200D, 0xFE00...0xFE0F: return 0
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1FAFF, 0x20000...0x3FFFD: return 2
        default: return 1
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
