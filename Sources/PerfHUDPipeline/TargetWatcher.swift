import PerfHUDSupport
import PerfHUDSampling
import PerfHUDStore

/// Where a watcher's samples come from: one process (`ProcessSampler`), or the daemon's group of
/// processes.
public protocol SampleSource: AnyObject {
    /// One sample now; nil while there is no target (the daemon waiting for it to appear).
    func takeSample() -> Sample?
    /// The target's name now (it follows an exec); nil where unknown.
    var currentCommandName: String? { get }
    /// What could not be read since the last call (each said once): the figures it leaves null.
    func takeNotes() -> [String]
}

extension SampleSource {
    public func takeNotes() -> [String] { [] }
}

/// The one pipeline from the samplers and the event stream to every sink: owns the sample source,
/// the event intake and the store, and turns each tick into one `Tick`. `Session` (HUD, plain,
/// JSON) and the daemon (`TickFanOut`, per target) both tick through it, so a figure is derived in one place.
public final class TargetWatcher {
    public let events: SessionEvents
    public private(set) var store: MetricsStore
    /// The PID the tick's figures name (`TargetFigures.pid`): the daemon's follows its group's root.
    public var pid: Int32 {
        get { store.pid }
        set { store.pid = newValue }
    }
    private let source: SampleSource
    /// The name shown until the source can read one (what was launched).
    private let fallbackName: String
    /// Whether each tick carries every frame and action (`Tick.everyFrame`): set by whoever feeds
    /// the ticks to sinks, from what the sinks' types say they read (`TickSink.readsEveryFrame`),
    /// before the first tick. From then on the event stream keeps them for the next tick.
    public var keepsEveryFrame = false {
        didSet { if keepsEveryFrame && !oldValue { events.aggregator.startRecording() } }
    }

    /// - Parameters:
    ///   - capacity: samples kept in history (`--history / --tick`).
    public init(source: SampleSource, events: SessionEvents, pid: Int32, capacity: Int, fallbackName: String,
                leak: LeakTrend.Settings = LeakTrend.Settings()) {
        self.source = source
        self.events = events
        self.fallbackName = fallbackName
        store = MetricsStore(pid: pid, capacity: capacity, startNanoseconds: monotonicNanoseconds(), leak: leak)
    }

    public var commandName: String { source.currentCommandName ?? fallbackName }

    /// An RSS read between two ticks (the daemon's every second, between full reads): the leak
    /// trend is fitted to every reading, as it is when each tick reads everything.
    public func noteResident(_ bytes: UInt64, at now: UInt64) { store.noteResident(bytes, at: now) }

    /// Takes one tick: a sample, the events since the tick before, the figures derived from both.
    /// - Parameters:
    ///   - status: how the target stands (`.exited` on the last tick of a target that ended).
    ///   - final: the session's last tick: the event socket is drained and closed first, so this
    ///     tick has everything the target sent (hooks flush as their program exits).
    ///   - endedByPerfhud: perfhud ended the session (`q`, `--count`, `--duration`).
    /// - Returns: the tick; while the source has no target, one whose status is `.absent`.
    public func tick(status: TargetStatus = .running, final: Bool = false, endedByPerfhud: Bool = false) -> Tick {
        if final { events.stop() }
        let sample = source.takeSample()
        let now = sample?.monotonicNanoseconds ?? monotonicNanoseconds()
        let ended = events.tick(now: now, startNanoseconds: store.startNanoseconds, residentBytes: sample?.residentBytes)
        let (log, logDropped) = events.aggregator.drainLog()
        let everyFrame = keepsEveryFrame ? events.aggregator.drainRecorded() : nil
        guard let sample else {
            // No process of the target (the daemon's, between two lives): what the event stream
            // brought still goes to every sink, and nothing is said of the target (every figure
            // nil, none taken into the store's series).
            let wall = wallClockSeconds()
            let elapsed = Double(now &- store.startNanoseconds) / 1e9
            return Tick(monotonicNanoseconds: now, sample: Sample(monotonicNanoseconds: now, wallSeconds: wall, alive: false, processCount: 0),
                        figures: TargetFigures(wallSeconds: wall, elapsedSeconds: elapsed, pid: store.pid, alive: false, processCount: 0),
                        events: events.snapshot, commandName: commandName, status: .absent, phases: events.phases, endedPhases: ended,
                        everyFrame: everyFrame, log: log, logDropped: logDropped, notes: source.takeNotes(), isFinal: final,
                        endedByPerfhud: endedByPerfhud)
        }
        let report = store.record(sample, phase: events.phases.current?.id)
        return Tick(monotonicNanoseconds: now, sample: sample, figures: report, events: events.snapshot, commandName: commandName,
                    status: status, phases: events.phases, endedPhases: ended, everyFrame: everyFrame, log: log,
                    logDropped: logDropped, notes: source.takeNotes(), isFinal: final, endedByPerfhud: endedByPerfhud)
    }
}

extension ProcessSampler: SampleSource {
    public func takeSample() -> Sample? { sample() }
    public var currentCommandName: String? { commandName }
    // `takeNotes()` is the sampler's own.
}
