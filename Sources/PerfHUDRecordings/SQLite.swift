import CSQLite

/// The dozen SQLite calls recordings need, written by hand over the C library: a wrapper such as
/// GRDB would cost minutes of CI build time (and a dependency) for open, exec, prepare, bind, step
/// and column.
package final class SQLiteDatabase {
    package private(set) var handle: OpaquePointer?
    package let path: String

    /// A failure with SQLite's own message and its result code (`SQLITE_NOTADB`, `SQLITE_CORRUPT`…).
    package struct Failure: Error, CustomStringConvertible {
        package var code: Int32
        package var message: String
        package var description: String { message }
    }

    /// Opens `path`; `create` makes it if missing, `readOnly` never writes.
    package init(path: String, create: Bool, readOnly: Bool = false) throws {
        self.path = path
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
        let result = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        if result != SQLITE_OK {
            let failure = Failure(code: result, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open")
            sqlite3_close(handle)
            handle = nil
            throw failure
        }
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    package func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    private func failure(_ code: Int32) -> Failure {
        Failure(code: code, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }

    /// Runs one or more statements that return nothing.
    package func execute(_ sql: String) throws {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        if result != SQLITE_OK { throw failure(result) }
    }

    package func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw failure(result) }
        return SQLiteStatement(statement: statement, database: self)
    }

    /// The first column of the first row, as an integer (`PRAGMA user_version`).
    package func integer(_ sql: String) throws -> Int64? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.int64(0) : nil
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    fileprivate func check(_ result: Int32) throws {
        if result != SQLITE_OK && result != SQLITE_ROW && result != SQLITE_DONE { throw failure(result) }
    }
}

/// One prepared statement, reused: bind, step, read columns, reset.
package final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let database: SQLiteDatabase

    fileprivate init(statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    /// Binds `values` to ?1, ?2… (nil is NULL).
    package func bind(_ values: [SQLiteValue?]) throws {
        sqlite3_reset(statement)
        for (offset, value) in values.enumerated() { try bind(Int32(offset + 1), value) }
    }

    /// Binds `value` to ?`index` (nil is NULL).
    private func bind(_ index: Int32, _ value: SQLiteValue?) throws {
        let result: Int32
        switch value {
        case nil: result = sqlite3_bind_null(statement, index)
        case .integer(let number)?: result = sqlite3_bind_int64(statement, index, number)
        case .real(let number)?: result = number.isFinite ? sqlite3_bind_double(statement, index, number) : sqlite3_bind_null(statement, index)
        case .text(let text)?:
            var copy = text
            result = copy.isEmpty ? perfhud_sqlite_bind_text(statement, index, "", 0) : copy.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { perfhud_sqlite_bind_text(statement, index, $0.baseAddress, Int32(bytes.count)) }
            }
        }
        try database.check(result)
    }

    /// Readies the statement for new bindings (the `BatchedInsert` path: bound one by one, then `step`).
    func reset() { sqlite3_reset(statement) }
    // The database (an unowned reference: loading it is a runtime call) only for the message of a failure.
    func bindNull(_ index: Int32) throws { try checked(sqlite3_bind_null(statement, index)) }
    package func bind(_ index: Int32, integer: Int64) throws { try checked(sqlite3_bind_int64(statement, index, integer)) }
    package func bind(_ index: Int32, real: Double) throws { try checked(sqlite3_bind_double(statement, index, real)) }
    @inline(__always) private func checked(_ result: Int32) throws { if result != SQLITE_OK { try database.check(result) } }
    package func bind(_ index: Int32, text: String) throws { try bind(index, .text(text)) }

    /// Runs an insert or update once.
    package func run(_ values: [SQLiteValue?]) throws {
        try bind(values)
        _ = try step()
    }

    /// Runs an insert or update once with `values` bound to ?1, ?2… (a slice of a longer buffer).
    package func run(_ values: ArraySlice<SQLiteValue?>) throws {
        sqlite3_reset(statement)
        var index: Int32 = 0
        for value in values { index += 1; try bind(index, value) }
        _ = try step()
    }

    /// The next row: true while there is one.
    package func step() throws -> Bool {
        let result = sqlite3_step(statement)
        if result == SQLITE_ROW { return true }
        if result == SQLITE_DONE { return false }
        try database.check(result)
        return false
    }

    package var columnCount: Int32 { sqlite3_column_count(statement) }
    package func columnName(_ column: Int32) -> String? { sqlite3_column_name(statement, column).map { String(cString: $0) } }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64? { isNull(column) ? nil : sqlite3_column_int64(statement, column) }
    /// A count or a size: nil when null or negative (a damaged file), never a trap.
    package func size(_ column: Int32) -> UInt64? { int64(column).flatMap { $0 >= 0 ? UInt64($0) : nil } }
    func double(_ column: Int32) -> Double? { isNull(column) ? nil : sqlite3_column_double(statement, column) }
    package func text(_ column: Int32) -> String? {
        guard !isNull(column), let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: bytes)
    }
}

package enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
}

extension Optional where Wrapped == UInt64 { var sqlite: SQLiteValue? { map { .integer(Int64(clamping: $0)) } } }
extension Optional where Wrapped == Int { var sqlite: SQLiteValue? { map { .integer(Int64($0)) } } }
extension Optional where Wrapped == Double { var sqlite: SQLiteValue? { flatMap { $0.isFinite ? .real($0) : nil } } }
extension Optional where Wrapped == String { var sqlite: SQLiteValue? { map { .text($0) } } }
