/// Rows of one table kept until the recording's once-a-second commit, then written `rowsPerInsert`
/// to a statement (`INSERT … VALUES (…),(…),…`), the rest one by one. A one-row insert costs
/// SQLite mostly its statement's start and end; nothing is committed before the commit anyway, so
/// keeping the rows loses nothing a crash would not (the last second).
///
/// The values are kept flat, column by column, as a kind and 8 bytes each (an integer, a double's
/// bits, or the index of a text kept aside), in arrays reused from second to second: no allocation
/// per row, and no `SQLiteValue` per column (an enum with a `String` case costs an outlined copy
/// and destroy per value: a third of what recording a tick cost).
struct BatchedInsert {
    let width: Int
    private let one, many: SQLiteStatement
    private let rowsPerInsert: Int
    private var kinds: [Kind] = []
    private var numbers: [Int64] = []
    private var texts: [String] = []

    enum Kind: UInt8 { case null, integer, real, text }

    init(_ database: SQLiteDatabase, table: String, width: Int, rowsPerInsert: Int, reserveRows: Int = 128) throws {
        self.width = width
        self.rowsPerInsert = rowsPerInsert
        let row = "(" + [String](repeating: "?", count: width).joined(separator: ",") + ")"
        one = try database.prepare("INSERT INTO \(table) VALUES " + row)
        many = try database.prepare("INSERT INTO \(table) VALUES " + [String](repeating: row, count: rowsPerInsert).joined(separator: ","))
        kinds.reserveCapacity(width * reserveRows)
        numbers.reserveCapacity(width * reserveRows)
    }

    // One value of the current row each; a row is `width` values in the table's column order.
    @inline(__always) mutating func appendNull() { kinds.append(.null); numbers.append(0) }
    @inline(__always) mutating func appendInteger(_ value: Int64) { kinds.append(.integer); numbers.append(value) }
    /// Not finite is NULL.
    @inline(__always) mutating func appendReal(_ value: Double) {
        if value.isFinite { kinds.append(.real); numbers.append(Int64(bitPattern: value.bitPattern)) } else { appendNull() }
    }
    mutating func appendText(_ value: String) {
        kinds.append(.text); numbers.append(Int64(texts.count)); texts.append(value)
    }
    @inline(__always) mutating func appendInteger(_ value: Int64?) { if let value { appendInteger(value) } else { appendNull() } }

    /// A figure's value as its column keeps it (`Figure.Storage`; nil or not finite: NULL).
    @inline(__always) mutating func append(_ value: Double?, storage: Figure.Storage) {
        guard let value, value.isFinite else { appendNull(); return }
        switch storage {
        case .fixed(let scale): appendInteger(Int64((value * scale).rounded().clampedInt))
        case .integer: appendInteger(Int64(value.rounded().clampedInt))
        case .real: appendReal(value)
        case .derived: appendNull()
        }
    }

    /// Writes the rows kept: `rowsPerInsert` at a time, the rest one by one.
    mutating func write() throws {
        let batch = width * rowsPerInsert
        var start = 0
        while kinds.count - start >= batch {
            try run(many, start..<start + batch)
            start += batch
        }
        while start + width <= kinds.count {
            try run(one, start..<start + width)
            start += width
        }
        kinds.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        texts.removeAll(keepingCapacity: true)
    }

    private func run(_ statement: SQLiteStatement, _ values: Range<Int>) throws {
        statement.reset()
        var index: Int32 = 0
        for position in values {
            index += 1
            switch kinds[position] {
            case .null: try statement.bindNull(index)
            case .integer: try statement.bind(index, integer: numbers[position])
            case .real: try statement.bind(index, real: Double(bitPattern: UInt64(bitPattern: numbers[position])))
            case .text: try statement.bind(index, text: texts[Int(numbers[position])])
            }
        }
        _ = try statement.step()
    }
}
