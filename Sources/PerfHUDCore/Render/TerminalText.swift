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

    /// Columns `text` occupies, ignoring SGR escape sequences (`ESC [ … m`).
    public static func displayWidth(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if scalar.value >= 0x40 && scalar.value <= 0x7E && scalar != "[" { inEscape = false }
                continue
            }
            if scalar.value == 0x1B { inEscape = true; continue }
            width += columns(of: scalar)
        }
        return width
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
    static func columns(of scalar: Unicode.Scalar) -> Int {
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
