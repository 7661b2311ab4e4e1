/// A graph drawn with braille cells: each cell is 2 dot columns × 4 dot rows.
public enum BrailleGraph {
    /// Bits of the dots in one cell, [column][row from the top].
    private static let dotBits: [[UInt8]] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]]

    /// Draws `columns` (one min…max range per dot column; nil for a gap) into `rows` text rows.
    /// Each dot column lights the dots from its minimum to its maximum, widened to meet the
    /// previous column so the line stays continuous.
    /// - Returns: `rows` strings of `(columns.count + 1) / 2` braille characters.
    /// - Parameter colors: per cell, an SGR foreground code (e.g. "36") or nil for the default.
    /// - Parameter ascii: one ASCII character a cell instead (`asciiCell`), for a locale that is not UTF-8.
    public static func draw(_ columns: [ClosedRange<Double>?], rows: Int, low: Double, high: Double,
                            colors: [String?]? = nil, ascii: Bool = false) -> [String] {
        let cells = (columns.count + 1) / 2
        let dotRows = rows * 4
        guard rows > 0, cells > 0 else { return Array(repeating: "", count: max(0, rows)) }
        // One flat byte per cell (the 8 dots of U+2800…U+28FF), row-major: no nested arrays.
        var bits = [UInt8](repeating: 0, count: rows * cells)
        let span = high - low
        let scale = span > 0 ? Double(dotRows - 1) / span : 0
        @inline(__always) func level(_ value: Double) -> Int {
            min(dotRows - 1, max(0, ((value - low) * scale).rounded().clampedInt))
        }
        var previous: ClosedRange<Int>? = nil
        for x in 0..<columns.count {
            guard let range = columns[x] else { previous = nil; continue }
            let low = level(range.lowerBound), high = level(range.upperBound)
            var bottom = low, top = high
            if let previous {
                if previous.lowerBound > top + 1 { top = previous.lowerBound - 1 }
                if previous.upperBound < bottom - 1 { bottom = previous.upperBound + 1 }
            }
            let cell = x / 2, side = x % 2
            for dot in bottom...max(bottom, top) {
                let fromTop = dotRows - 1 - dot
                bits[(fromTop / 4) * cells + cell] |= dotBits[side][fromTop % 4]
            }
            previous = low...high
        }
        // Braille is U+2800 + bits: UTF-8 E2, A0 + (bits >> 6), 80 + (bits & 63).
        var lines: [String] = []
        lines.reserveCapacity(rows)
        var utf8: [UInt8] = []
        utf8.reserveCapacity(cells * 3 + 64)
        for row in 0..<rows {
            utf8.removeAll(keepingCapacity: true)
            var active: String? = nil
            for cell in 0..<cells {
                let value = bits[row * cells + cell]
                if let colors, cell < colors.count, colors[cell] != active {
                    // One SGR per run of cells of the same colour, not per cell.
                    active = colors[cell]
                    utf8.append(contentsOf: "\u{1B}[\(active ?? "39")m".utf8)
                }
                if ascii { utf8.append(asciiCell(value)); continue }
                utf8.append(0xE2)
                utf8.append(0xA0 | (value >> 6))
                utf8.append(0x80 | (value & 0x3F))
            }
            if active != nil { utf8.append(contentsOf: "\u{1B}[39m".utf8) }
            lines.append(String(decoding: utf8, as: UTF8.self))
        }
        return lines
    }

    /// A cell's dots as one ASCII character, by the dot rows lit in it (either column): three or
    /// four rows `|`, else by where the lit rows sit: top `'`, middle `-`, low `.`, bottom `_`.
    static func asciiCell(_ bits: UInt8) -> UInt8 {
        let rowBits: [UInt8] = [0x01 | 0x08, 0x02 | 0x10, 0x04 | 0x20, 0x40 | 0x80]
        guard let top = rowBits.firstIndex(where: { bits & $0 != 0 }),
              let bottom = rowBits.lastIndex(where: { bits & $0 != 0 }) else { return UInt8(ascii: " ") }
        if bottom - top >= 2 { return UInt8(ascii: "|") }
        switch top + bottom {
        case 0, 1: return UInt8(ascii: "'")
        case 2, 3: return UInt8(ascii: "-")
        case 4, 5: return UInt8(ascii: ".")
        default: return UInt8(ascii: "_")
        }
    }
}
