import PerfHUDPipeline

/// Rows of one table kept until the recording's once-a-second commit, then written `rowsPerInsert`
/// to a statement (`INSERT … VALUES (…),(…),…`), the rest one by one. A one-row insert costs
/// SQLite mostly its statement's start and end; nothing is committed before the commit anyway, so
/// keeping the rows loses nothing a crash would not (the last second).
///
/// The values are kept flat, column by column, as a kind and 8 bytes each (an integer, a double's
/// bits, or the index of a text kept aside) in one array reused from second to second: no
/// allocation per row, no `SQLiteValue` per column (an enum with a `String` case costs an outlined
/// copy and destroy per value), one append per value. The recorder fills a whole row through one
/// `inout` access (`Recorder.recordRow`): a call per value on the recorder's stored property is an
/// exclusivity check per value (a fifth of what recording a tick cost).
struct BatchedInsert {
    package let width: Int
    private let one, many: SQLiteStatement
    private let rowsPerInsert: Int
    private var values: [Value] = []
    private var texts: [String] = []

    package enum Kind: UInt8 { case null, integer, real, text }
    struct Value {
        package var kind: Kind
        package var bits: Int64

        package init(kind: Kind, bits: Int64) { self.kind = kind; self.bits = bits }

        /// A figure's value as its column keeps it (`Column`; nil or not finite: NULL).
        @inlinable @inline(__always) package init(_ value: Double?, column: Column) {
            guard let value, value.isFinite, column.kind != .null else { self.init(kind: .null, bits: 0); return }
            self.init(kind: column.kind, bits: column.kind == .real ? Int64(bitPattern: value.bitPattern) : (value * column.scale).nearestInteger)
        }
    }

    /// How a figure's column keeps it (`Figure.Storage`), as two plain values: a switch over the
    /// storage's cases for each value of a row was ~20 instructions a column.
    package struct Column {
        /// `.integer` (the value × `scale`, rounded), `.real`, or `.null` (not recorded).
        package let kind: Kind
        package let scale: Double
        package init(_ storage: Figure.Storage) {
            switch storage {
            case .fixed(let scale): (kind, self.scale) = (.integer, scale)
            case .integer: (kind, scale) = (.integer, 1)
            case .real: (kind, scale) = (.real, 1)
            case .derived: (kind, scale) = (.null, 1)
            }
        }
    }

    package init(_ database: SQLiteDatabase, table: String, width: Int, rowsPerInsert: Int, reserveRows: Int = 128) throws {
        self.width = width
        self.rowsPerInsert = rowsPerInsert
        let row = "(" + [String](repeating: "?", count: width).joined(separator: ",") + ")"
        one = try database.prepare("INSERT INTO \(table) VALUES " + row)
        many = try database.prepare("INSERT INTO \(table) VALUES " + [String](repeating: row, count: rowsPerInsert).joined(separator: ","))
        values.reserveCapacity(width * reserveRows)
    }

    // One value of the current row each; a row is `width` values in the table's column order.
    @inline(__always) mutating func appendNull() { values.append(Value(kind: .null, bits: 0)) }
    @inlinable @inline(__always) package mutating func appendInteger(_ value: Int64) { values.append(Value(kind: .integer, bits: value)) }
    /// Not finite is NULL.
    @inline(__always) mutating func appendReal(_ value: Double) {
        values.append(value.isFinite ? Value(kind: .real, bits: Int64(bitPattern: value.bitPattern)) : Value(kind: .null, bits: 0))
    }
    mutating func appendText(_ value: String) {
        values.append(Value(kind: .text, bits: Int64(texts.count))); texts.append(value)
    }
    @inlinable @inline(__always) package mutating func appendInteger(_ value: Int64?) { if let value { appendInteger(value) } else { appendNull() } }

    /// The next `count` values of the current row, written in place by `fill` (all of them NULL
    /// until it sets them): one capacity and uniqueness check for the row's figures, where an
    /// append each was ~15 instructions a value.
    @inline(__always) mutating func appendValues(_ count: Int, _ fill: (UnsafeMutableBufferPointer<Value>) -> Void) {
        let start = values.count
        values.append(contentsOf: repeatElement(Value(kind: .null, bits: 0), count: count))
        values.withUnsafeMutableBufferPointer { all in fill(UnsafeMutableBufferPointer(rebasing: all[start..<start + count])) }
    }

    /// Writes the rows kept: `rowsPerInsert` at a time, the rest one by one.
    package mutating func write() throws {
        let batch = width * rowsPerInsert
        var start = 0
        while values.count - start >= batch {
            try run(many, start..<start + batch)
            start += batch
        }
        while start + width <= values.count {
            try run(one, start..<start + width)
            start += width
        }
        values.removeAll(keepingCapacity: true)
        texts.removeAll(keepingCapacity: true)
    }

    private func run(_ statement: SQLiteStatement, _ rows: Range<Int>) throws {
        statement.reset()
        var index: Int32 = 0
        try values.withUnsafeBufferPointer { kept in
            for value in kept[rows] {
                index += 1
                switch value.kind {
                case .null: try statement.bindNull(index)
                case .integer: try statement.bind(index, integer: value.bits)
                case .real: try statement.bind(index, real: Double(bitPattern: UInt64(bitPattern: value.bits)))
                case .text: try statement.bind(index, text: texts[Int(value.bits)])
                }
            }
        }
        _ = try statement.step()
    }
}
