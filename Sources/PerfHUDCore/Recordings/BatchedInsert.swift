/// Rows of one table kept until the recording's once-a-second commit, then written `rowsPerInsert`
/// to a statement (`INSERT … VALUES (…),(…),…`), the rest one by one. A one-row insert costs
/// SQLite mostly its statement's start and end; nothing is committed before the commit anyway, so
/// keeping the rows loses nothing a crash would not (the last second). The values are kept flat,
/// column by column, in one array reused from second to second: no allocation per row.
struct BatchedInsert {
    let width: Int
    private let one, many: SQLiteStatement
    private let rowsPerInsert: Int
    private var pending: [SQLiteValue?] = []

    init(_ database: SQLiteDatabase, table: String, width: Int, rowsPerInsert: Int, reserveRows: Int = 128) throws {
        self.width = width
        self.rowsPerInsert = rowsPerInsert
        let row = "(" + [String](repeating: "?", count: width).joined(separator: ",") + ")"
        one = try database.prepare("INSERT INTO \(table) VALUES " + row)
        many = try database.prepare("INSERT INTO \(table) VALUES " + [String](repeating: row, count: rowsPerInsert).joined(separator: ","))
        pending.reserveCapacity(width * reserveRows)
    }

    /// Adds one value of the current row; a row is `width` values in the table's column order.
    mutating func append(_ value: SQLiteValue?) { pending.append(value) }

    /// Writes the rows kept: `rowsPerInsert` at a time, the rest one by one.
    mutating func write() throws {
        let batch = width * rowsPerInsert
        var start = 0
        while pending.count - start >= batch {
            try many.run(pending[start..<start + batch])
            start += batch
        }
        while start + width <= pending.count {
            try one.run(pending[start..<start + width])
            start += width
        }
        pending.removeAll(keepingCapacity: true)
    }
}
