/// The figures of a whole run (or of a phase's ticks) that summarise one tick figure: its mean,
/// its peak, its first or its last value over the rows. Which ones a figure has is said in its
/// table entry (`Figure.summaries`); this is the one piece of code that computes them, fed tick by
/// tick by the HUD's end summary and row by row by `report`, so the two say the same over the same
/// ticks. `report`'s keys, `--fail-on`'s names and the baseline comparisons are built from them:
/// a new figure with a summary appears in all of them.
public struct RunAggregates {
    /// How a summary figure is taken from the rows' values (rows without the figure are skipped).
    /// `atStart`: the first row a tick or more after the start and after the program's last exec
    /// (`ResidentAtStart`: not the loader, not a launcher that exec'd the real program).
    public enum Rule: Equatable { case mean, max, first, last, atStart }

    /// One summary figure of a tick figure: its key in `report` (a contract, as the JSON row's keys).
    public struct Summary: Equatable {
        public let key: String
        public let rule: Rule
        public static func mean(_ key: String) -> Summary { Summary(key: key, rule: .mean) }
        public static func max(_ key: String) -> Summary { Summary(key: key, rule: .max) }
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
    private static let noEvents = EventSnapshot()
    /// Every summary key, in the order of `values`.
    public static let keys: [String] = summarised.flatMap { $0.summaries.map(\.key) }

    /// Which summarised figures take the `atStart` rule (a value's running `ResidentAtStart`).
    private static let takesStart: [Bool] = summarised.map { $0.summaries.contains { $0.rule == .atStart } }

    private struct Running {
        var sum = 0.0, count = 0, peak: Double?, first: Double?, last: Double?
        var atStart: ResidentAtStart?
    }
    private var running: [Running]

    /// - Parameter tickSeconds: the session's tick (the `atStart` rule waits one).
    public init(tickSeconds: Double = 0) {
        running = Self.takesStart.map { Running(atStart: $0 ? ResidentAtStart(tickSeconds: tickSeconds) : nil) }
    }

    /// One row's summarised figures, read once for every `RunAggregates` it is added to (the run's
    /// and its phase's): a row's time, the execs of the target seen by then, each figure's value
    /// (nil where the row does not have it, or it is not finite), and whether the row had event figures.
    public struct Row {
        fileprivate var t = 0.0, execs = 0, hasEvents = false
        fileprivate var values: [Double?]

        public init() { values = [Double?](repeating: nil, count: RunAggregates.summarised.count) }

        /// Reads the tick's report and event figures, and how many execs of the target were seen by then.
        public mutating func read(_ report: Report, _ events: EventSnapshot?, execs: Int = 0) {
            t = report.elapsedSeconds
            self.execs = execs
            hasEvents = events != nil
            let snapshot = events ?? RunAggregates.noEvents
            values.withUnsafeMutableBufferPointer { values in
                for index in RunAggregates.plain.indices {
                    let figure = RunAggregates.plain[index]
                    values[index] = figure.fromEvents && !hasEvents ? nil
                        : Figure.read(figure.field, report, snapshot).flatMap { $0.isFinite ? $0 : nil }
                }
            }
        }
    }

    /// Adds one row (`Row.read`).
    public mutating func add(_ row: Row) {
        running.withUnsafeMutableBufferPointer { running in
            for index in running.indices {
                if Self.plain[index].fromEvents && !row.hasEvents { continue }   // not a row of it: nothing to count
                let value = row.values[index]
                running[index].atStart?.add(t: row.t, execs: row.execs, bytes: value)
                guard let value else { continue }
                running[index].sum += value
                running[index].count += 1
                running[index].peak = Swift.max(running[index].peak ?? value, value)
                if running[index].first == nil { running[index].first = value }
                running[index].last = value
            }
        }
    }

    /// Where each key's figure is kept and how it is taken, in the order of `keys`.
    private static let places: [(running: Int, rule: Rule)] =
        summarised.enumerated().flatMap { index, entry in entry.summaries.map { (index, $0.rule) } }

    private func value(_ place: (running: Int, rule: Rule)) -> Double? {
        let figure = running[place.running]
        switch place.rule {
        case .mean: return figure.count > 0 ? figure.sum / Double(figure.count) : nil
        case .max: return figure.peak
        case .first: return figure.first
        case .last: return figure.last
        case .atStart: return figure.atStart?.value
        }
    }

    /// The summary figures, in the order of `keys`; nil where no row had the figure.
    public var values: [Double?] { Self.places.map(value) }

    /// The summary figure named `key` (nil where no row had it or no such key).
    public subscript(key: String) -> Double? {
        Self.keys.firstIndex(of: key).flatMap { value(Self.places[$0]) }
    }
}
