import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore

/// A run summed up, fed ticks: the one aggregation behind the HUD's end summary (fed the live
/// session's ticks) and `report` — its JSON, markdown and HTML, `--fail-on`, `--baseline` — (fed
/// the ticks `RecordingRows` rebuilds from the recording). The same code on the same values, so
/// the two say the same of one run.
///
/// What it counts: the rows (a tick that is a row: not the last tick of a session perfhud ended),
/// their table figures (`RunAggregates`) and storage I/O (`RunStorageIO`), the busiest thread; the
/// frames (`RunFrames`, each by its weight). With `countsPhasesAndActions` (the summary line and
/// `report` show them, the HUD's end summary does not): the actions (`RunActions`); the phases,
/// each visit with its memory at entry and exit, each phase's rows' figures and its frames
/// (`PhaseFrames`). All of it as the ticks come, in memory that does not grow with the run's
/// frames and actions. With `phase`, the rows and actions of that phase only (`report --phase`);
/// the run's frames inside its visits are counted from the recording's (`RecordingSummary`).
public final class RunSummary: TickSink {
    /// It counts every frame and action.
    public static let readsEveryFrame = true
    /// The rows' figures, each as `RunAggregates` takes it.
    public private(set) var aggregates: RunAggregates
    /// Each phase's rows' figures (by the row's phase).
    public private(set) var aggregatesByPhase: [String: RunAggregates] = [:]
    public private(set) var storage = RunStorageIO()
    /// Every frame of the run, counted (all of them, whatever `phase`).
    public private(set) var frames: RunFrames
    /// The first and the last counted row's time (seconds since the start), and how many rows.
    public private(set) var firstT: Double?
    public private(set) var lastT: Double?
    public private(set) var rows = 0
    /// The first and the last row of the whole run, whatever `phase` counts: where a visit not left
    /// yet ends.
    public private(set) var runFirstT: Double?
    public private(set) var runLastT: Double?
    /// The thread with the highest one-second CPU of any counted row, and that row's time.
    public private(set) var busiest: BusyThread?
    public private(set) var busiestAt: Double?
    /// Every span over which an `--alert` held, in the order they ended (`AlertTracker`).
    public private(set) var alertSpans: [AlertSpan] = []
    /// With `countsPhasesAndActions`: the actions counted, every phase visit in the recording's
    /// units, and each phase's frames.
    package private(set) var actions = RunActions()
    public private(set) var visits: [Recording.Phase] = []
    package private(set) var phaseFrames = PhaseFrames()

    /// The phase whose rows and actions are counted (`report --phase`), or nil for all.
    public let phase: String?
    private let countsPhasesAndActions: Bool
    private let tickSeconds: Double
    /// When the session started (CLOCK_MONOTONIC): frames carry their own end time.
    private let startNanoseconds: UInt64
    private var phasesSeen = 0
    /// The figures `RunAggregates` reads of a row, read once for the run's and its phase's.
    private var rowValues = RunAggregates.Row()

    /// - Parameters:
    ///   - startNanoseconds: the session's start, which a tick's frames' end times are counted from
    ///     (0 for ticks rebuilt from a recording, whose times are from its start already).
    public init(budget: FrameBudget, tickSeconds: Double, phase: String? = nil, countsPhasesAndActions: Bool, startNanoseconds: UInt64 = 0) {
        aggregates = RunAggregates(tickSeconds: tickSeconds)
        frames = RunFrames(budget: budget)
        self.phase = phase
        self.countsPhasesAndActions = countsPhasesAndActions
        self.tickSeconds = tickSeconds
        self.startNanoseconds = startNanoseconds
    }

    public func consume(_ tick: Tick) {
        let t = tick.figures.elapsedSeconds
        if !tick.alerts.ended.isEmpty { alertSpans += tick.alerts.ended }
        // The phases entered by this tick first: its frames and actions are placed in them.
        if countsPhasesAndActions {
            followPhases(tick.phases)
            phaseFrames.follow(visits)
        }
        if tick.isRow {
            if runFirstT == nil { runFirstT = t }
            runLastT = t
            if countsPhasesAndActions { phaseFrames.placePending(visits: visits, lastRow: t) }
        }
        // Fed through a fan-out, which has its watcher keep them for this sink (readsEveryFrame).
        if let every = tick.everyFrame {
            for live in every.frames {
                // At the recording's resolution: live and replayed, the same durations are counted and a
                // phase picks the same frames.
                let frame = Recording.Frame(live, since: startNanoseconds)
                frames.add(milliseconds: frame.milliseconds, weight: frame.weight, source: frame.source)
                if countsPhasesAndActions { phaseFrames.add(frame, visits: visits, lastRow: runLastT) }
            }
            if countsPhasesAndActions && !every.actions.isEmpty {
                // At the recording's resolution, as frames are.
                let at = Recording.recordedSeconds(elapsed: t)
                if phase == nil || isInside(phase!, at) {
                    for action in every.actions { actions.add(label: action.label, count: action.count, t: at) }
                }
            }
        }
        guard tick.isRow else { return }
        // The row's phase, as the row has it (a recording keeps it with the row).
        let rowPhase = tick.events?.phase ?? tick.phases.current?.name
        storage.add(t: t, tick.figures, counted: phase == nil || rowPhase == phase)
        if let phase, rowPhase != phase { return }
        if firstT == nil { firstT = t }
        lastT = t
        rows += 1
        rowValues.read(tick.figures, tick.events, execs: tick.sample.execsSeen)
        aggregates.add(rowValues)
        if let rowPhase, countsPhasesAndActions { aggregatesByPhase[rowPhase, default: RunAggregates()].add(rowValues) }
        if let top = tick.figures.busiestThreads?.first, top.cpuPercent > busiest?.cpuPercent ?? 0 { busiest = top; busiestAt = t }
    }

    /// Whether `t` is inside a visit of `name` as far as the run has gone (a visit not left yet
    /// ends at the last row).
    private func isInside(_ name: String, _ t: Double) -> Bool {
        var inside = false
        PhaseFrames.visits(containing: t, in: visits, openEnd: runLastT ?? 0) { if visits[$0].name == name { inside = true } }
        return inside
    }

    /// Each phase's frames, by name.
    public var framesByPhase: [String: WeightedDurations] { phaseFrames.finished(visits: visits, end: runLastT ?? 0) }

    /// The visits entered since the tick before; the visit before each one ends where it begins.
    private func followPhases(_ history: PhaseHistory) {
        let new = min(history.entered - phasesSeen, history.records.count)
        defer {
            // The newest visit's exit, once known.
            if let last = history.records.last, let index = visits.indices.last, visits[index].t == last.enteredAt, last.exitedAt != nil {
                visits[index].tExit = last.exitedAt
                visits[index].exitBytes = last.exitBytes
            }
        }
        guard new > 0 else { return }
        for index in (history.records.count - new)..<history.records.count {
            if index > 0, !visits.isEmpty {
                let left = history.records[index - 1]
                visits[visits.count - 1].tExit = left.exitedAt
                visits[visits.count - 1].exitBytes = left.exitBytes
            }
            let record = history.records[index]
            visits.append(Recording.Phase(name: record.name, t: record.enteredAt, tExit: nil, entryBytes: record.entryBytes, exitBytes: nil))
        }
        phasesSeen = history.entered
    }
}
