import PerfHUDEvents
import PerfHUDStore

/// The figures of a whole run (or of a phase's ticks) that summarise one tick figure: its mean,
/// its peak, its least, its first or its last value over the rows. Which ones a figure has is said in its
/// table entry (`Figure.summaries`); this is the one piece of code that computes them, fed tick by
/// tick by the HUD's end summary and row by row by `report`, so the two say the same over the same
/// ticks. `report`'s keys, `--fail-on`'s names and the baseline comparisons are built from them:
/// a new figure with a summary appears in all of them.
public struct RunAggregates {
    /// How a summary figure is taken from the rows' values (rows without the figure are skipped).
    /// `atStart`: the first row a tick or more after the start and after the program's last exec
    /// (`ResidentAtStart`: not the loader, not a launcher that exec'd the real program).
    public enum Rule: Hashable, Sendable { case mean, max, min, first, last, atStart }

    /// One summary figure of a tick figure: its key in `report` (a contract, as the JSON row's keys).
    public struct Summary: Equatable, Sendable {
        public let key: String
        public let rule: Rule
        public static func mean(_ key: String) -> Summary { Summary(key: key, rule: .mean) }
        public static func max(_ key: String) -> Summary { Summary(key: key, rule: .max) }
        public static func min(_ key: String) -> Summary { Summary(key: key, rule: .min) }
        public static func first(_ key: String) -> Summary { Summary(key: key, rule: .first) }
        public static func last(_ key: String) -> Summary { Summary(key: key, rule: .last) }
        public static func atStart(_ key: String) -> Summary { Summary(key: key, rule: .atStart) }
    }

    /// The summarised figures, each with its summaries, in the table's order.
    private static let summarised: [(figure: Figure, summaries: [Summary])] =
        Figure.all.filter { !$0.summaries.isEmpty }.map { ($0, $0.summaries) }
    /// What `add` reads of each, as plain values: a walk over the figures (a class) retains and
    /// releases each, and `Figure.value(in:events:)` copied the event figures out of their
    /// optional once a figure, every tick of every session with an end summary (measured:
    /// docs/benchmarks.md, "What the code's shape saves").
    private static let plain: [(field: Figure.Field, fromEvents: Bool)] = summarised.map { ($0.figure.field, $0.figure.source == .events) }
    /// Every summary key, in the order of `values`.
    public static let keys: [String] = summarised.flatMap { $0.summaries.map(\.key) }

    /// Which summarised figures take the `atStart` rule (a value's running `ResidentAtStart`).
    private static let takesStart: [Bool] = summarised.map { $0.summaries.contains { $0.rule == .atStart } }

    /// Plain numbers, not optionals (a figure's peak, least, first and last mean something once
    /// `count` is above 0): an optional's tag tested and written four times a figure a row cost
    /// more than the rule of least (`min`) added.
    private struct Running {
        var sum = 0.0, count = 0, peak = -Double.infinity, low = Double.infinity, first = 0.0, last = 0.0
        var atStart: ResidentAtStart?
    }
    private var running: [Running]

    /// - Parameter tickSeconds: the session's tick (the `atStart` rule waits one).
    public init(tickSeconds: Double = 0) {
        running = Self.takesStart.map { Running(atStart: $0 ? ResidentAtStart(tickSeconds: tickSeconds) : nil) }
    }

    /// One row's summarised figures, read once for every `RunAggregates` it is added to (the run's
    /// and its phase's): a row's time, the execs of the target seen by then, each figure's value
    /// (NaN where the row does not have it, or it is not finite: a value has no optional's tag
    /// to store and test), and whether the row had event figures.
    public struct Row {
        fileprivate var t = 0.0, execs = 0, hasEvents = false
        fileprivate var values: [Double]

        public init() { values = [Double](repeating: .nan, count: RunAggregates.summarised.count) }

        /// Reads the tick's target figures and event figures, and how many execs of the target were seen by then.
        public mutating func read(_ report: TargetFigures, _ events: EventSnapshot?, execs: Int = 0) {
            t = report.elapsedSeconds
            self.execs = execs
            // The snapshot is read where it is, a borrowed argument: `events ?? empty` was a copy
            // of it (a retain of each of its arrays and strings) every row.
            guard let events else {
                hasEvents = false
                Self.read(report, EventSnapshot.empty, eventFigures: false, into: &values)
                return
            }
            hasEvents = true
            Self.read(report, events, eventFigures: true, into: &values)
        }

        private static func read(_ report: TargetFigures, _ events: EventSnapshot, eventFigures: Bool, into values: inout [Double]) {
            values.withUnsafeMutableBufferPointer { values in
                for index in RunAggregates.plain.indices {
                    let figure = RunAggregates.plain[index]
                    let value = figure.fromEvents && !eventFigures ? nil : Figure.read(figure.field, report, events)
                    values[index] = value.flatMap { $0.isFinite ? $0 : nil } ?? .nan
                }
            }
        }
    }

    /// Adds one row (`Row.read`).
    public mutating func add(_ row: Row) {
        let count = running.count
        running.withUnsafeMutableBufferPointer { running in
            // Through the pointer: the buffer's subscript was a modify call per field written.
            let base = running.baseAddress!
            row.values.withUnsafeBufferPointer { values in
                for index in 0..<count {
                    if Self.plain[index].fromEvents && !row.hasEvents { continue }   // not a row of it: nothing to count
                    let figure = base + index
                    let value = values[index]
                    let present = !value.isNaN
                    if figure.pointee.atStart != nil { figure.pointee.atStart!.add(t: row.t, execs: row.execs, bytes: present ? value : nil) }
                    guard present else { continue }
                    if figure.pointee.count == 0 { figure.pointee.first = value }
                    figure.pointee.sum += value
                    figure.pointee.count += 1
                    figure.pointee.peak = Swift.max(figure.pointee.peak, value)
                    figure.pointee.low = Swift.min(figure.pointee.low, value)
                    figure.pointee.last = value
                }
            }
        }
    }

    /// Where each key's figure is kept and how it is taken, in the order of `keys`.
    private static let places: [(running: Int, rule: Rule)] =
        summarised.enumerated().flatMap { index, entry in entry.summaries.map { (index, $0.rule) } }

    private func value(_ place: (running: Int, rule: Rule)) -> Double? {
        let figure = running[place.running]
        if place.rule == .atStart { return figure.atStart?.value }
        guard figure.count > 0 else { return nil }
        switch place.rule {
        case .mean: return figure.sum / Double(figure.count)
        case .max: return figure.peak
        case .min: return figure.low
        case .first: return figure.first
        case .last: return figure.last
        case .atStart: return figure.atStart?.value
        }
    }

    /// The summary figures, in the order of `keys`; nil where no row had the figure.
    public var values: [Double?] { Self.places.map(value) }

    /// The summary figure named `key` (nil where no row had it or no such key): a name from the
    /// command line (`--fail-on`) or a file.
    public subscript(key: String) -> Double? {
        Self.keys.firstIndex(of: key).flatMap { value(Self.places[$0]) }
    }

    /// The summary of `field` taken by `rule` (nil where no row had it): how code names a run
    /// figure, so that its key is written once, in the table. A pair the table does not have is a
    /// programming error, stopped at its first use (every such use is under test).
    public subscript(field: Figure.Field, rule: Rule) -> Double? { value(Self.places[Self.position(field, rule)]) }

    /// The key of the summary of `field` taken by `rule` (`report`'s, `--fail-on`'s).
    public static func key(_ field: Figure.Field, _ rule: Rule) -> String { keys[position(field, rule)] }

    /// The figure and rule of the summary `key` names; nil for a key that is no summary of the table's.
    public static func summary(named key: String) -> (field: Figure.Field, rule: Rule)? {
        keys.firstIndex(of: key).map { index in
            let place = places[index]
            return (summarised[place.running].figure.field, place.rule)
        }
    }

    private struct FieldRule: Hashable { let field: Figure.Field; let rule: Rule }
    private static let positions: [FieldRule: Int] = Dictionary(uniqueKeysWithValues: summarised.flatMap { entry in
        entry.summaries.map { FieldRule(field: entry.figure.field, rule: $0.rule) } }.enumerated().map { ($1, $0) })

    private static func position(_ field: Figure.Field, _ rule: Rule) -> Int {
        guard let position = positions[FieldRule(field: field, rule: rule)] else {
            preconditionFailure("the table of figures gives \(field.rawValue) no \(rule) summary")
        }
        return position
    }
}
