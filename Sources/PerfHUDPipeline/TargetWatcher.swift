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
    private let source: SampleSource
    /// The name shown until the source can read one (what was launched).
    private let fallbackName: String
    /// `--record`: the frames and actions of each tick are handed over in the `Tick`.
    private let keepsEveryFrame: Bool

    /// - Parameters:
    ///   - capacity: samples kept in history (`--history / --tick`).
    ///   - keepsEveryFrame: whether ticks carry every frame and the actions per label (`--record`, and
    ///     the HUD's end summary, which counts the frames as `report` does).
    public init(source: SampleSource, events: SessionEvents, pid: Int32, capacity: Int, keepsEveryFrame: Bool, fallbackName: String,
                leak: LeakTrend.Settings = LeakTrend.Settings()) {
        self.source = source
        self.events = events
        self.fallbackName = fallbackName
        self.keepsEveryFrame = keepsEveryFrame
        store = MetricsStore(pid: pid, capacity: capacity, startNanoseconds: monotonicNanoseconds(), leak: leak)
        if keepsEveryFrame { events.aggregator.startRecording() }
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
    /// - Returns: the tick; nil while the source has no target (the event stream is drained anyway).
    public func tick(status: TargetStatus = .running, final: Bool = false, endedByPerfhud: Bool = false) -> Tick? {
        if final { events.stop() }
        let sample = source.takeSample()
        let now = sample?.monotonicNanoseconds ?? monotonicNanoseconds()
        let ended = events.tick(now: now, startNanoseconds: store.startNanoseconds, residentBytes: sample?.residentBytes)
        let (log, logDropped) = events.aggregator.drainLog()
        let (frames, actions) = keepsEveryFrame ? events.aggregator.drainRecorded() : ([], [])
        guard let sample else { return nil }
        let report = store.record(sample, phase: events.phases.current?.id)
        return Tick(monotonicNanoseconds: now, sample: sample, report: report, events: events.snapshot, commandName: commandName,
                    status: status, phases: events.phases, endedPhases: ended, frames: frames, actions: actions, log: log,
                    logDropped: logDropped, notes: source.takeNotes(), isFinal: final, endedByPerfhud: endedByPerfhud)
    }
}

extension ProcessSampler: SampleSource {
    public func takeSample() -> Sample? { sample() }
    public var currentCommandName: String? { commandName }
    // `takeNotes()` is the sampler's own.
}
