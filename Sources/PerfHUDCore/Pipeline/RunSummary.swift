/// A run summed up, fed ticks: the one aggregation behind the HUD's end summary (fed the live
/// session's ticks) and `report` — its JSON, markdown and HTML, `--fail-on`, `--baseline` — (fed
/// the ticks `RecordingRows` rebuilds from the recording). The same code on the same values, so
/// the two say the same of one run.
///
/// What it counts: the rows (a tick that is a row: not the last tick of a session perfhud ended),
/// their table figures (`RunAggregates`) and storage I/O (`RunStorageIO`), the busiest thread; the
/// frames (`RunFrames`, each by its weight) and actions; the phases, each visit with its memory at
/// entry and exit. With `phase`, the rows of that phase only (`report --phase`); the frames and
/// actions inside its visits are picked when the run is summed up (`RecordingSummary`), which is
/// why a summary for a report keeps them (`keepsEvents`) where the live one needs only the totals.
public final class RunSummary: TickSink {
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
    /// With `keepsEvents`: every frame and action, and every phase visit, in the recording's units.
    public private(set) var frameList: [Recording.Frame] = []
    public private(set) var actionList: [Recording.Action] = []
    public private(set) var visits: [Recording.Phase] = []

    private let phase: String?
    private let keepsEvents: Bool
    private let tickSeconds: Double
    /// When the session started (CLOCK_MONOTONIC): frames carry their own end time.
    private let startNanoseconds: UInt64
    private var phasesSeen = 0

    /// - Parameters:
    ///   - startNanoseconds: the session's start, which a tick's frames' end times are counted from
    ///     (0 for ticks rebuilt from a recording, whose times are from its start already).
    public init(budget: FrameBudget, tickSeconds: Double, phase: String? = nil, keepsEvents: Bool, startNanoseconds: UInt64 = 0) {
        aggregates = RunAggregates(tickSeconds: tickSeconds)
        frames = RunFrames(budget: budget)
        self.phase = phase
        self.keepsEvents = keepsEvents
        self.tickSeconds = tickSeconds
        self.startNanoseconds = startNanoseconds
    }

    public func consume(_ tick: Tick) {
        for live in tick.frames {
            // At the recording's resolution: live and replayed, the same durations are counted and a
            // phase picks the same frames.
            let frame = Recording.Frame(live, since: startNanoseconds)
            frames.add(milliseconds: frame.milliseconds, weight: frame.weight, source: frame.source)
            if keepsEvents { frameList.append(frame) }
        }
        let t = tick.report.elapsedSeconds
        if keepsEvents {
            for action in tick.actions { actionList.append(Recording.Action(label: action.label, count: action.count, elapsed: t)) }
            followPhases(tick.phases)
        }
        guard tick.isRow else { return }
        // The row's phase, as the row has it (a recording keeps it with the row).
        let rowPhase = tick.events?.phase ?? tick.phases.current?.name
        if runFirstT == nil { runFirstT = t }
        runLastT = t
        storage.add(t: t, tick.report, counted: phase == nil || rowPhase == phase)
        if let phase, rowPhase != phase { return }
        if firstT == nil { firstT = t }
        lastT = t
        rows += 1
        aggregates.add(tick.report, tick.events, execs: tick.sample.execsSeen)
        if let rowPhase, keepsEvents {
            aggregatesByPhase[rowPhase, default: RunAggregates()].add(tick.report, tick.events, execs: tick.sample.execsSeen)
        }
        if let top = tick.report.busiestThreads?.first, top.cpuPercent > busiest?.cpuPercent ?? 0 { busiest = top; busiestAt = t }
    }

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
