/// The phases (screens) the program reported, each with its RSS at entry and at exit, so the HUD
/// can say how much memory a phase kept after it ended.
public struct PhaseHistory: Equatable {
    public struct Record: Equatable {
        public var name: String
        /// Index into `names`: the colour of the phase in the graph.
        public var id: Int
        public var enteredAt: Double
        public var entryBytes: UInt64?
        public var exitedAt: Double?
        public var exitBytes: UInt64?
        /// RSS at exit minus RSS at entry: what the phase kept.
        public var keptBytes: Int64? { Self.kept(entry: entryBytes, exit: exitBytes) }

        /// RSS at exit minus RSS at entry (live, and from a recording's phases).
        public static func kept(entry: UInt64?, exit: UInt64?) -> Int64? {
            guard let entry, let exit else { return nil }
            return Int64(bitPattern: exit &- entry)
        }
    }

    public private(set) var records: [Record] = []
    public private(set) var names: [String] = []
    /// Phases entered in all (records keeps the last `keptRecords`).
    public private(set) var entered = 0
    public static let keptRecords = 64
    public static let maxNames = 64

    public init() {}

    public var current: Record? { records.last.flatMap { $0.exitedAt == nil ? $0 : nil } }

    /// Enters `name` at `time` (seconds since start) with `residentBytes`; the previous phase exits.
    public mutating func enter(_ name: String, at time: Double, residentBytes: UInt64?) {
        if let last = records.indices.last, records[last].exitedAt == nil {
            records[last].exitedAt = time
            records[last].exitBytes = residentBytes
        }
        var id = names.firstIndex(of: name)
        if id == nil {
            if names.count < Self.maxNames { names.append(name); id = names.count - 1 } else { id = Self.maxNames - 1 }
        }
        records.append(Record(name: name, id: id!, enteredAt: time, entryBytes: residentBytes))
        entered += 1
        if records.count > Self.keptRecords { records.removeFirst(records.count - Self.keptRecords) }
    }

    /// Sets the exit of the record `back` places before the newest (0: the newest) as a recording
    /// says it was: `replay` rebuilds the history with the figures the live one had.
    public mutating func setExit(ofRecord back: Int, at time: Double?, residentBytes: UInt64?) {
        let index = records.count - 1 - back
        guard records.indices.contains(index) else { return }
        records[index].exitedAt = time
        records[index].exitBytes = residentBytes
    }

    /// The last finished record of each phase, newest first: what the legend shows.
    public var lastFinishedByName: [Record] {
        var seen = Set<String>()
        var result: [Record] = []
        for record in records.reversed() where record.exitedAt != nil && !seen.contains(record.name) {
            seen.insert(record.name)
            result.append(record)
        }
        return result
    }
}
