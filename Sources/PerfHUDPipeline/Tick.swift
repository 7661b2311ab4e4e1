import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore

/// Everything one tick of a watched target produced, computed once: the sample and the target's
/// figures of it, the event figures, and what the event stream brought since the tick before
/// (frames, actions, phases, each with its own time). Every sink consumes this one value and
/// nothing beside it: a session's HUD, plain/JSON rows, end summary and recording (`TickSinks`),
/// the daemon's metrics, journal and recording of each target (`TickFanOut`), and `replay` and
/// `export`, which rebuild it from a recording (`RecordingRows`). The run's figures are computed by
/// one piece of code each, live and from a recording (`RunFrames`, `RunAggregates`, `RunStorageIO`,
/// `CPUSecondsByMode`).
public struct Tick {
    /// When the tick was taken (CLOCK_MONOTONIC).
    public var monotonicNanoseconds: UInt64
    /// What was read (cumulative counters, for sinks that export them as counters: the daemon).
    public var sample: Sample
    /// The figures derived from the sample (`MetricsStore.record`).
    public var figures: TargetFigures
    /// The event figures at this tick; nil without an event socket (JSON then says null, not 0).
    public var events: EventSnapshot?
    /// The target's name at this tick (it follows an exec).
    public var commandName: String
    /// `.running`, or how the target ended (the last tick of a target that ended by itself).
    public var status: TargetStatus
    /// The phases entered so far, each with the RSS read when its event arrived.
    public var phases: PhaseHistory
    /// Phases that ended since the tick before, and what each kept.
    public var endedPhases: [EndedPhase] = []
    /// Every frame and action since the tick before, where a sink asked for them in its type
    /// (`TickSink.readsEveryFrame`: the recording, the run's summaries) and the fan-out told the
    /// watcher so (`TargetWatcher.keepsEveryFrame`); nil where none of the sinks fed asked (the HUD
    /// alone, the rows alone): never an empty list standing in for "not kept".
    public var everyFrame: EveryFrame?
    /// The action log since the tick before, repeats folded, and how many did not fit.
    public var log: [ActionLogEntry] = []
    public var logDropped = 0.0
    /// Figures that could not be read, said once (stderr in a HUD session, the log in the daemon).
    public var notes: [String] = []
    /// The last tick of the session: the event socket was drained before it was taken, so it has
    /// every frame and action the target sent.
    public var isFinal = false
    /// The last tick of a session perfhud ended (`q`, `--count`, `--duration`): no exit row is written for it.
    public var endedByPerfhud = false
    /// The `--alert`s holding at this tick, and those that began or ended with it: set by the
    /// fan-out (`AlertTracker`) before any sink sees the tick; empty without `--alert`.
    public var alerts = AlertStates()

    /// A phase that ended, and the memory it kept (RSS at exit minus RSS at entry).
    public struct EndedPhase: Equatable {
        public var name: String
        public var keptBytes: Int64?
        public init(name: String, keptBytes: Int64? = nil) {
            self.name = name; self.keptBytes = keptBytes
        }
    }

    /// Every field at once: `TargetWatcher` builds a tick in one expression, which the optimizer
    /// returns in place; a `var` set field by field and returned was copied twice a tick (the value
    /// witness of a Tick and of all it holds (measured: docs/benchmarks.md, "What the code's shape saves")).
    public init(monotonicNanoseconds: UInt64, sample: Sample, figures: TargetFigures, events: EventSnapshot?, commandName: String,
                status: TargetStatus, phases: PhaseHistory, endedPhases: [EndedPhase] = [], everyFrame: EveryFrame? = nil,
                log: [ActionLogEntry] = [], logDropped: Double = 0,
                notes: [String] = [], isFinal: Bool = false, endedByPerfhud: Bool = false) {
        self.monotonicNanoseconds = monotonicNanoseconds
        self.sample = sample
        self.figures = figures
        self.events = events
        self.commandName = commandName
        self.status = status
        self.phases = phases
        self.endedPhases = endedPhases
        self.everyFrame = everyFrame
        self.log = log
        self.logDropped = logDropped
        self.notes = notes
        self.isFinal = isFinal
        self.endedByPerfhud = endedByPerfhud
    }

    /// Whether this tick is the row that says how the target ended (written whatever `--report-every` says).
    public var isExitRow: Bool {
        guard isFinal && !endedByPerfhud, case .exited = status else { return false }
        return true
    }

    /// Whether this tick is a row (of the live rows, the recording and the run's figures): every
    /// tick but the last of a session perfhud ended (`--count N` is N rows).
    /// A tick of an absent target is no row: it has no figures of the target, only its events.
    public var isRow: Bool { status != .absent && (!isFinal || isExitRow) }
}
