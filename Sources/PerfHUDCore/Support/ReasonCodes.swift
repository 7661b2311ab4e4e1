/// Why a figure is unknown, from a fixed list: kept in a recording as the reason's place in the
/// list + 1 (append only, so a code keeps its meaning), and turned back into the text on reading
/// and by the `samples` view. `FramesUnreported` and `GPUUnreported` each have one.
public struct ReasonCodes {
    public let all: [String]

    public init(_ all: [String]) { self.all = all }

    /// The recorded code of `reason` (nil: none, or one this version does not know).
    func code(_ reason: String?) -> Double? {
        reason.flatMap { all.firstIndex(of: $0) }.map { Double($0 + 1) }
    }

    /// The reason of a recorded code.
    func reason(code: Double?) -> String? {
        guard let code, code >= 1, code <= Double(all.count) else { return nil }
        return all[Int(code) - 1]
    }

    /// The SQL expression that gives the text of the codes in `column`.
    func sqlText(of column: String) -> String {
        // A quote inside an SQL string is written twice ("NVML's").
        let cases = all.enumerated().map { "WHEN \($0.offset + 1) THEN '\($0.element.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''"))'" }
        return "CASE \(column) \(cases.joined(separator: " ")) END"
    }
}
