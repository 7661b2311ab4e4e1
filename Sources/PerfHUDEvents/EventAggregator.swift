#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// Aggregates events: the receiver thread adds, the main loop reads once a tick.
///
/// Rates use 100 ms buckets: "the last second" is the ten newest complete buckets, so a rate is
/// an exact count over exactly one second, at most 100 ms old. Frames are bucketed by when they
/// ended, and their second ends where all of them have arrived (`FrameTiming`). Frame percentiles
/// are exact nearest-rank over the durations of the frame window (at most 65,536 kept), at the
/// 1 µs they are kept at, from counts kept as frames come and go (`FrameWindow`), not a sort.
///
/// All mutable state is one struct (`Ingest`) behind one lock: the receiver takes the lock once
/// per batch of datagrams and mutates the struct in place, with no per-event access checks.
public final class EventAggregator: @unchecked Sendable {
    public let configuration: EventConfiguration
    private var mutex = pthread_mutex_t()
    private var state: Ingest

    static let bucketNanoseconds: UInt64 = 100_000_000
    static let bucketsPerSecond = 10
    /// A second of buckets, up to a second of frame lag (`FrameTiming`), the current one: 21 < 32.
    package static let bucketSlots = 32

    /// Per-second counters in a ring of 100 ms buckets.
    package struct BucketCounter {
        package var counts = [Double](repeating: 0, count: EventAggregator.bucketSlots)
        package var ids = [Int64](repeating: -1, count: EventAggregator.bucketSlots)

        @inlinable @inline(__always)
        package mutating func add(_ value: Double, bucket: Int64) {
            let slot = Int(bucket & Int64(EventAggregator.bucketSlots - 1))
            if ids[slot] != bucket {
                if ids[slot] > bucket { return }   // a frame that ended before the ring's oldest bucket
                ids[slot] = bucket; counts[slot] = 0
            }
            counts[slot] += value
        }

        /// The sum of the ten complete buckets before `current`: one second.
        package func lastSecond(current: Int64) -> Double {
            var total = 0.0
            for id in (current - Int64(EventAggregator.bucketsPerSecond))..<current where id >= 0 {
                let slot = Int(id & Int64(EventAggregator.bucketSlots - 1))
                if ids[slot] == id { total += counts[slot] }
            }
            return total
        }
    }

    struct LabelState {
        package var name: String
        package var counter = BucketCounter()
        package var total = 0.0
        var listedUntil: UInt64 = 0
        package var peak = 0.0
    }

    public init(configuration: EventConfiguration = EventConfiguration()) {
        self.configuration = configuration
        state = Ingest(configuration: configuration)
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Lines taken from the event socket so far (under the lock): the daemon reads every figure of
    /// a target that sends events every tick.
    public var linesReceived: UInt64 { withLock { $0.received } }

    /// Reads the target's RSS on the receiving thread when a phase change arrives, so the phase's
    /// entry and exit memory are those of that moment, not of the next tick. Set under the lock:
    /// the daemon's target changes while the receiver runs.
    public var residentProbe: (() -> UInt64?)? {
        get { withLock { $0.residentProbe } }
        set { withLock { $0.residentProbe = newValue } }
    }

    /// Runs `body` holding the lock, with the state to add to: the receiver calls it once per
    /// batch of datagrams.
    public func withLock<T>(_ body: (inout Ingest) -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body(&state)
    }


    /// Frames read at `arrival` that ended at `end`, at or before it (a terminal program's updates
    /// found together in one read): placed back from the arrival, as a datagram's frames, where
    /// their end is more than `FrameTiming.maximumDelayNanoseconds` before it.
    public func addFrames<Frames: Sequence>(_ frames: Frames, source: FrameSource, arrival: UInt64)
    where Frames.Element == (milliseconds: Double, end: UInt64) {
        withLock { ingest in
            ingest.setTime(arrival)
            for frame in frames { ingest.frame(milliseconds: frame.milliseconds, count: 1, source: source, end: frame.end) }
            ingest.endDatagram()
        }
    }

    /// Actions read from a reducer log (`--actions-from`), stamped `time`.
    public func addActions(_ labels: [String], at time: UInt64) {
        guard !labels.isEmpty else { return }
        withLock { ingest in
            ingest.setTime(time)
            ingest.countLines(labels.count)
            for label in labels {
                var text = label
                text.withUTF8 { ingest.action(label: UnsafeRawBufferPointer($0), count: 1) }
            }
        }
    }

    /// The figures at `time`; updates the high-frequency state of every label.
    public func snapshot(at time: UInt64) -> EventSnapshot {
        withLock { state in
            let current = Int64(time / Self.bucketNanoseconds)
            var snapshot = EventSnapshot()
            snapshot.refreshHz = configuration.refreshHz
            snapshot.paced = configuration.paced
            snapshot.received = state.received
            snapshot.malformed = state.malformedCount
            snapshot.ignored = state.ignoredCount
            snapshot.rejected = state.rejected
            snapshot.phase = state.phase
            snapshot.actionsTotal = state.actionsTotal
            // Figures at the resolution they are recorded at (see `Resolution`).
            snapshot.actionsPerSecond = state.allActions.lastSecond(current: current).atResolution(100)
            snapshot.framesTotal = state.framesTotal
            snapshot.frameSource = state.frameSource
            snapshot.glLoaded = state.glLoaded
            snapshot.vulkanLoaded = state.vulkanLoaded
            snapshot.fps = state.allFrames.lastSecond(current: current - state.frameTiming.lagBuckets(at: time)).atResolution(100)
            snapshot.jankyFrames = state.janky
            snapshot.droppedFrames = state.dropped
            let linger = UInt64(EventConfiguration.highFrequencyLingerSeconds * 1e9)
            for index in state.labelStates.indices {
                let rate = state.labelStates[index].counter.lastSecond(current: current)
                if rate >= configuration.actionThreshold {
                    if time > state.labelStates[index].listedUntil { state.labelStates[index].peak = 0 }  // a new episode
                    state.labelStates[index].listedUntil = time + linger
                    state.labelStates[index].peak = max(state.labelStates[index].peak, rate)
                }
                if time <= state.labelStates[index].listedUntil && state.labelStates[index].peak > 0 {
                    snapshot.highFrequencyActions.append(.init(action: state.labelStates[index].name, rate: rate,
                                                               peak: state.labelStates[index].peak))
                }
            }
            snapshot.highFrequencyActions.sort { ($0.rate, $0.peak) > ($1.rate, $1.peak) }
            // Percentiles: nearest rank over the frame window, by end time (`FrameWindow`).
            let window = UInt64(configuration.frameWindowSeconds * 1e9)
            if let percentiles = state.frameWindow.percentiles(start: time > window ? time - window : 0, time: time) {
                snapshot.frameP50 = percentiles.p50
                snapshot.frameP95 = percentiles.p95
                snapshot.frameP99 = percentiles.p99
                snapshot.fpsOnePercentLow = DerivedFigure.onePercentLow(p99: snapshot.frameP99)
            }
            return snapshot
        }
    }

    /// The actions since the last call, repeats folded, and how many did not fit.
    public func drainLog() -> (entries: [ActionLogEntry], dropped: Double) {
        withLock { state in
            // An empty log is left alone (here and in the drains below): emptying an array just
            // copied out allocates a new buffer, every tick.
            if state.log.isEmpty { defer { state.logDropped = 0 }; return ([], state.logDropped) }
            let entries = state.log.map { ActionLogEntry(label: state.labelStates[$0.label].name, count: $0.count) }
            let dropped = state.logDropped
            state.log.removeAll(keepingCapacity: true)
            state.logDropped = 0
            return (entries, dropped)
        }
    }

    /// Keeps every frame and the action counts per label from now on, for `drainRecorded`.
    public func startRecording() { withLock { $0.recording = true } }

    /// The frames and the actions per label since the last call (`--record`, once a tick).
    public func drainRecorded() -> EveryFrame {
        withLock { state in
            if state.recordedFrames.isEmpty && state.recordedActions.isEmpty { return EveryFrame() }
            // Handed over, not copied and emptied: emptying an array whose buffer the tick shares
            // would allocate one of its whole capacity (once grown by a burst: every tick).
            let frames = state.recordedFrames
            state.recordedFrames = []
            let actions = state.recordedActions.sorted { $0.key < $1.key }.map { (state.labelStates[$0.key].name, $0.value) }
            state.recordedActions.removeAll(keepingCapacity: true)
            return EveryFrame(frames: frames, actions: actions)
        }
    }

    /// Phase changes since the last call, oldest first.
    public func drainPhaseChanges() -> [PhaseChange] {
        withLock { state in
            if state.phaseChanges.isEmpty { return [] }
            let result = state.phaseChanges
            state.phaseChanges.removeAll(keepingCapacity: true)
            return result
        }
    }

    /// Every label with its total (for the daemon's counters and tests).
    public func actionTotals() -> [(label: String, total: Double)] {
        withLock { state in state.labelStates.map { ($0.name, $0.total) } }
    }
}
