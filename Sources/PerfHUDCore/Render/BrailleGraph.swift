/// A graph drawn with braille cells: each cell is 2 dot columns × 4 dot rows.
public enum BrailleGraph {
    /// Bits of the dots in one cell, [column][row from the top].
    private static let dotBits: [[UInt32]] = [[0x01, 0x02, 0x04, 0x40], [0x08, 0x10, 0x20, 0x80]]

    /// Draws `columns` (one min…max range per dot column; nil for a gap) into `rows` text rows.
    /// Each dot column lights the dots from its minimum to its maximum, widened to meet the
    /// previous column so the line stays continuous.
    /// - Returns: `rows` strings of `(columns.count + 1) / 2` braille characters.
    public static func draw(_ columns: [ClosedRange<Double>?], rows: Int, low: Double, high: Double) -> [String] {
        let cells = (columns.count + 1) / 2
        var bits = [[UInt32]](repeating: [UInt32](repeating: 0, count: cells), count: rows)
        let dotRows = rows * 4
        guard rows > 0, dotRows > 0 else { return [] }
        let span = high - low
        func level(_ value: Double) -> Int {
            guard span > 0 else { return 0 }
            return min(dotRows - 1, max(0, Int(((value - low) / span * Double(dotRows - 1)).rounded())))
        }
        var previous: ClosedRange<Int>? = nil
        for (x, range) in columns.enumerated() {
            guard let range else { previous = nil; continue }
            var bottom = level(range.lowerBound), top = level(range.upperBound)
            if let previous {
                if previous.lowerBound > top { top = previous.lowerBound - 1 > bottom ? previous.lowerBound - 1 : top }
                if previous.upperBound < bottom { bottom = previous.upperBound + 1 < top ? previous.upperBound + 1 : bottom }
            }
            for dot in bottom...max(bottom, top) {
                let fromTop = dotRows - 1 - dot
                bits[fromTop / 4][x / 2] |= dotBits[x % 2][fromTop % 4]
            }
            previous = level(range.lowerBound)...level(range.upperBound)
        }
        return bits.map { row in
            var line = ""
            line.unicodeScalars.append(contentsOf: row.map { Unicode.Scalar(0x2800 + $0)! })
            return line
        }
    }
}
