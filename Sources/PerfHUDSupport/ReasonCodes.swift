/// Why a figure is unknown, from a fixed list: kept in a recording as the reason's place in the
/// list + 1 (append only, so a code keeps its meaning), and turned back into the text on reading
/// and by the `samples` view (through the recording's `reasons` table, from format 7: texts in the
/// view's SQL made the schema outgrow SQLite's first page, and a file cut short lost its schema).
/// `FramesUnreported`, `GPUUnreported`, `NetworkSource`, `NetworkUnreported` and `MemoryUnreported` each have one.
public struct ReasonCodes: Sendable {
    /// The list's name in the `reasons` table.
    public let kind: String
    public let all: [String]

    public init(_ kind: String, _ all: [String]) { self.kind = kind; self.all = all }

    /// The recorded code of `reason` (nil: none, or one this version does not know).
    package func code(_ reason: String?) -> Double? {
        reason.flatMap { all.firstIndex(of: $0) }.map { Double($0 + 1) }
    }

    /// The reason of a recorded code.
    package func reason(code: Double?) -> String? {
        guard let code, code >= 1, code <= Double(all.count) else { return nil }
        return all[Int(code) - 1]
    }

    /// The SQL expression that gives the text of the codes in `column` (the `reasons` table's).
    package func sqlText(of column: String) -> String {
        "(SELECT text FROM reasons WHERE kind = '\(kind)' AND code = \(column))"
    }

    /// The rows of the `reasons` table for this list, as SQL values.
    package var sqlRows: [String] {
        // A quote inside an SQL string is written twice ("NVML's").
        all.enumerated().map { "('\(kind)', \($0.offset + 1), '\($0.element.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''"))')" }
    }
}
