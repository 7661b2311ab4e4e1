#if canImport(Glibc)
import Glibc
#endif

/// How frames and actions are judged; from the command line.
public struct EventConfiguration: Equatable {
    /// Per second; a label at or above it is high-frequency.
    public var actionThreshold: Double = 20
    /// The display's refresh rate: the frame budget is 1000 / refresh ms.
    public var refreshHz: Double = 60

    public var jankFactor: Double = 1.5
    public var frameWindowSeconds: Double = 10
    public var maxActionLabels = 200
    public static let maxLabelBytes = 200
    public static let otherLabel = "__other__"
    /// A high-frequency label stays listed this long after its rate falls below the threshold.
    public static let highFrequencyLingerSeconds = 10.0

    public init() {}
    public var budgetMilliseconds: Double { 1000 / refreshHz }
}

/// What the event stream says at one moment: the figures of the README's Definitions.
public struct EventSnapshot: Equatable {
    public struct HighFrequencyAction: Equatable {
        public var action: String
        public var rate: Double
        public var peak: Double
    }
    public var fps: Double = 0
    public var frameP50: Double?
    public var frameP95: Double?
    public var frameP99: Double?
    public var fpsOnePercentLow: Double?
    public var jankyFrames: Double = 0
    public var droppedFrames: Double = 0
    public var framesTotal: Double = 0
    /// Where the frames shown come from; nil before the first.
    public var frameSource: FrameSource?
    /// Key-to-screen latency of a program perfhud runs (see `TerminalFrames`); nil before a key.
    public var inputLatencyP50: Double?
    public var inputLatencyP99: Double?
    public var actionsPerSecond: Double = 0
    public var actionsTotal: Double = 0
    public var highFrequencyActions: [HighFrequencyAction] = []
    public var phase: String?
    public var received: UInt64 = 0
    public var malformed: UInt64 = 0
    public var ignored: UInt64 = 0
    public var rejected: [String: UInt64] = [:]
    public var rejectedTotal: UInt64 { rejected.values.reduce(0, +) }
    /// The display refresh the frame budget comes from.
    public var refreshHz: Double = 60

    public init() {}

    /// Whether any event has arrived yet: before that, frame and action figures are unknown.
    public var hasFrames: Bool { framesTotal > 0 }
    public var hasActions: Bool { actionsTotal > 0 }
}

/// An action for the log, with repeats folded: `Slider.changed ×37`.
public struct ActionLogEntry: Equatable {
    public var label: String
    public var count: Double
}

/// One frame, for a recording.
public struct RecordedFrame: Equatable {
    /// When it ended (see `FrameTiming`).
    public var time: UInt64
    public var milliseconds: Double
    public var source: FrameSource
}

/// A phase change, stamped when it arrived.
public struct PhaseChange: Equatable {
    public var name: String
    public var monotonicNanoseconds: UInt64
    /// The target's RSS read the moment the change arrived (see `EventAggregator.residentProbe`).
    public var residentBytes: UInt64?
}

/// Aggregates events: the receiver thread adds, the main loop reads once a tick.
///
/// Rates use 100 ms buckets: "the last second" is the ten newest complete buckets, so a rate is
/// an exact count over exactly one second, at most 100 ms old. Frames are bucketed by when they
/// ended, and their second ends where all of them have arrived (`FrameTiming`). Frame percentiles
/// are exact nearest-rank over the raw durations of the frame window (at most 65,536 kept).
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
    static let bucketSlots = 32

    /// Per-second counters in a ring of 100 ms buckets.
    struct BucketCounter {
        var counts = [Double](repeating: 0, count: EventAggregator.bucketSlots)
        var ids = [Int64](repeating: -1, count: EventAggregator.bucketSlots)

        @inline(__always)
        mutating func add(_ value: Double, bucket: Int64) {
            let slot = Int(bucket & Int64(EventAggregator.bucketSlots - 1))
            if ids[slot] != bucket {
                if ids[slot] > bucket { return }   // a frame that ended before the ring's oldest bucket
                ids[slot] = bucket; counts[slot] = 0
            }
            counts[slot] += value
        }

        /// The sum of the ten complete buckets before `current`: one second.
        func lastSecond(current: Int64) -> Double {
            var total = 0.0
            for id in (current - Int64(EventAggregator.bucketsPerSecond))..<current where id >= 0 {
                let slot = Int(id & Int64(EventAggregator.bucketSlots - 1))
                if ids[slot] == id { total += counts[slot] }
            }
            return total
        }
    }

    struct LabelState {
        var name: String
        var counter = BucketCounter()
        var total = 0.0
        var listedUntil: UInt64 = 0
        var peak = 0.0
    }

    public init(configuration: EventConfiguration = EventConfiguration()) {
        self.configuration = configuration
        state = Ingest(configuration: configuration)
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    /// Reads the target's RSS on the receiving thread when a phase change arrives, so the phase's
    /// entry and exit memory are those of that moment, not of the next tick. Set under the lock:
    /// the daemon's target changes while the receiver runs.
    public var residentProbe: (() -> UInt64?)? {
        get { withLock { $0.residentProbe } }
        set { withLock { $0.residentProbe = newValue } }
    }

    /// Called on the receiving thread for every frame, with its duration in seconds and its
    /// weight (1 / sample rate): the daemon's histogram records each frame. Set before start.
    public var frameObserver: ((Double, Double) -> Void)? {
        get { state.frameObserver }
        set { state.frameObserver = newValue }
    }

    /// Runs `body` holding the lock, with the state to add to: the receiver calls it once per
    /// batch of datagrams.
    public func withLock<T>(_ body: (inout Ingest) -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body(&state)
    }

    /// The aggregate state, and the EventSink the parser feeds.
    public struct Ingest: EventSink {
        let configuration: EventConfiguration
        let budget: Double
        var labels: LabelTable
        var labelStates: [LabelState] = []
        var otherIndex: Int?
        var allActions = BucketCounter()
        var allFrames = BucketCounter()
        var actionsTotal = 0.0
        var frameTimes = RingBuffer<UInt64>(capacity: 65536, filler: 0)
        var frameDurations = RingBuffer<Double>(capacity: 65536, filler: 0)
        var framesTotal = 0.0
        var janky = 0.0
        var dropped = 0.0
        var frameSource: FrameSource?
        var phase: String?
        var phaseChanges: [PhaseChange] = []
        /// The log as (label index, count); names are looked up when it is drained.
        var log: [(label: Int, count: Double)] = []
        var logDropped = 0.0
        var received: UInt64 = 0
        var malformedCount: UInt64 = 0
        var ignoredCount: UInt64 = 0
        var rejected: [String: UInt64] = [:]
        var now: UInt64 = 0
        var bucket: Int64 = 0
        var residentProbe: (() -> UInt64?)?
        /// `--record`: every frame and the actions per label since the last drain (bounded).
        var recording = false
        var recordedFrames: [RecordedFrame] = []
        var recordedActions: [Int: Double] = [:]
        var frameObserver: ((Double, Double) -> Void)?
        var frameTiming = FrameTiming()
        var placing: [FrameTiming.Unplaced] = []

        init(configuration: EventConfiguration) {
            self.configuration = configuration
            budget = configuration.budgetMilliseconds
            labels = LabelTable(capacity: configuration.maxActionLabels)
        }

        /// Stamps what follows; one clock read per batch.
        public mutating func setTime(_ nanoseconds: UInt64) {
            now = nanoseconds
            bucket = Int64(nanoseconds / EventAggregator.bucketNanoseconds)
        }
        public mutating func countLines(_ lines: Int) { received &+= UInt64(lines) }
        public mutating func reject(reason: String) { rejected[reason, default: 0] &+= 1 }
        public mutating func ignored() { ignoredCount &+= 1 }
        public mutating func malformed() { malformedCount &+= 1 }

        public mutating func action(label: UnsafeRawBufferPointer, count: Double) {
            let clipped = UnsafeRawBufferPointer(rebasing: label[0..<min(label.count, EventConfiguration.maxLabelBytes)])
            let position: Int
            if let known = labels.find(clipped) {
                position = known
            } else if labelStates.count < configuration.maxActionLabels {
                position = labels.insert(clipped)
                labelStates.append(LabelState(name: String(decoding: clipped, as: UTF8.self)))
            } else {
                if otherIndex == nil {
                    otherIndex = labelStates.count
                    labelStates.append(LabelState(name: EventConfiguration.otherLabel))
                }
                position = otherIndex!
            }
            labelStates[position].counter.add(count, bucket: bucket)
            labelStates[position].total += count
            allActions.add(count, bucket: bucket)
            actionsTotal += count
            if recording { recordedActions[position, default: 0] += count }
            // The log folds a repeat into the entry before it; it is drained every tick and
            // bounded, so a flood costs a counter, not memory.
            if let last = log.last, last.label == position {
                log[log.count - 1].count += count
            } else if log.count < 256 {
                log.append((position, count))
            } else {
                logDropped += count
            }
        }

        /// A frame without a believable end waits for `endDatagram` to be placed.
        public mutating func frame(milliseconds: Double, count: Double, source: FrameSource, end: UInt64?) {
            if let end, let believed = FrameTiming.believedEnd(end, arrival: now) {
                frame(milliseconds: milliseconds, count: count, source: source, endingAt: believed)
            } else {
                frameTiming.addUnplaced(.init(milliseconds: milliseconds, count: count, source: source))
            }
        }

        /// The datagram is parsed (the parser says so): its frames without an end time are placed
        /// back from its arrival.
        public mutating func endDatagram() {
            guard !frameTiming.unplaced.isEmpty else { return }
            var remaining = FrameTiming.takeUnplaced(&frameTiming, &placing)
            for unplaced in placing {
                let end = FrameTiming.placeNext(&remaining, milliseconds: unplaced.milliseconds, arrival: now)
                frame(milliseconds: unplaced.milliseconds, count: unplaced.count, source: unplaced.source, endingAt: end)
            }
            placing.removeAll(keepingCapacity: true)
            _ = FrameTiming.takeUnplaced(&frameTiming, &placing)   // the storage back, empty
        }

        mutating func frame(milliseconds: Double, count: Double, source: FrameSource, endingAt end: UInt64) {
            // One source at a time: a higher-ranked one replaces what a lower one counted (the
            // same frames seen twice, from their output and their presents, must not add up).
            if let current = frameSource, source.rank < current.rank || (source.rank == current.rank && source != current) { return }
            if let current = frameSource, source.rank > current.rank {
                frameTimes.removeAll(); frameDurations.removeAll(); allFrames = BucketCounter()
                framesTotal = 0; janky = 0; dropped = 0; frameTiming.forgetDelays()
            }
            frameSource = source
            frameTimes.append(end)
            frameDurations.append(milliseconds)
            if recording && recordedFrames.count < 65536 { recordedFrames.append(RecordedFrame(time: end, milliseconds: milliseconds, source: source)) }
            allFrames.add(count, bucket: Int64(end / EventAggregator.bucketNanoseconds))
            frameTiming.noteDelay(now > end ? now - end : 0, bucket: bucket)
            framesTotal += count
            frameObserver?(milliseconds / 1000, count)
            if milliseconds > configuration.jankFactor * budget { janky += count }
            let late = (milliseconds / budget).rounded() - 1
            if late > 0 { dropped += late * count }
        }

        public mutating func phase(name: UnsafeRawBufferPointer) {
            let text = String(decoding: name[0..<min(name.count, EventConfiguration.maxLabelBytes)], as: UTF8.self)
            phase = text
            if phaseChanges.count < 1024 {
                phaseChanges.append(PhaseChange(name: text, monotonicNanoseconds: now, residentBytes: residentProbe?()))
            }
        }
    }

    /// A frame perfhud measured itself (a terminal program's update), ended at `time`.
    public func addFrame(milliseconds: Double, source: FrameSource, at time: UInt64) {
        withLock { ingest in
            ingest.setTime(time)
            ingest.frame(milliseconds: milliseconds, count: 1, source: source, endingAt: time)
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
            // Percentiles: nearest rank over the frame window, by end time. Frames are kept as they
            // arrived, so end times are in order but for datagrams placed back from their arrival,
            // by at most the longest delay: the walk goes that much further back.
            let window = UInt64(configuration.frameWindowSeconds * 1e9)
            let windowStart = time > window ? time - window : 0
            let walkStart = windowStart > FrameTiming.maximumDelayNanoseconds ? windowStart - FrameTiming.maximumDelayNanoseconds : 0
            var durations: [Double] = []
            var row = state.frameTimes.count - 1
            while row >= 0 {
                let end = state.frameTimes[row]
                if end < walkStart { break }
                if end >= windowStart && end <= time { durations.append(state.frameDurations[row]) }
                row -= 1
            }
            if !durations.isEmpty {
                durations.sort()
                func rank(_ percent: Double) -> Double {
                    durations[max(0, Int((percent / 100 * Double(durations.count)).rounded(.up)) - 1)]
                }
                snapshot.frameP50 = rank(50).atResolution(1000)
                snapshot.frameP95 = rank(95).atResolution(1000)
                snapshot.frameP99 = rank(99).atResolution(1000)
                snapshot.fpsOnePercentLow = DerivedFigure.onePercentLow(p99: snapshot.frameP99)
            }
            return snapshot
        }
    }

    /// The actions since the last call, repeats folded, and how many did not fit.
    public func drainLog() -> (entries: [ActionLogEntry], dropped: Double) {
        withLock { state in
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
    public func drainRecorded() -> (frames: [RecordedFrame], actions: [(label: String, count: Double)]) {
        withLock { state in
            let frames = state.recordedFrames
            let actions = state.recordedActions.sorted { $0.key < $1.key }.map { (state.labelStates[$0.key].name, $0.value) }
            state.recordedFrames.removeAll(keepingCapacity: true)
            state.recordedActions.removeAll(keepingCapacity: true)
            return (frames, actions)
        }
    }

    /// Phase changes since the last call, oldest first.
    public func drainPhaseChanges() -> [PhaseChange] {
        withLock { state in
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

/// Interns labels by their bytes with open addressing: known labels cost a hash and a memcmp,
/// no allocation. Written by hand: Dictionary would need a String (an allocation) per line.
/// Keys live in one byte arena, so a lookup touches no reference-counted storage.
struct LabelTable {
    private var slots: [Int32]
    private var hashes: [UInt64] = []
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private var arena: [UInt8] = []

    /// Room for `capacity` labels at most half full, so probes stay short.
    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slots = [Int32](repeating: -1, count: size)
        arena.reserveCapacity(capacity * 64)
    }

    /// FNV-style mixing eight bytes at a time: labels are tens of bytes long.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x100000001b3
            hash ^= hash >> 29
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x100000001b3
            offset += 1
        }
        return hash ^ (hash >> 32)
    }

    func find(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let hash = Self.hash(bytes)
        return slots.withUnsafeBufferPointer { slots in
            hashes.withUnsafeBufferPointer { hashes in
                arena.withUnsafeBytes { arena in
                    let mask = slots.count - 1
                    var slot = Int(truncatingIfNeeded: hash) & mask
                    while slots[slot] >= 0 {
                        let index = Int(slots[slot])
                        if hashes[index] == hash && lengths[index] == bytes.count
                            && (bytes.count == 0 || memcmp(arena.baseAddress! + offsets[index], bytes.baseAddress!, bytes.count) == 0) {
                            return index
                        }
                        slot = (slot + 1) & mask
                    }
                    return nil
                }
            }
        }
    }

    /// Adds `bytes` (not present); returns its index.
    mutating func insert(_ bytes: UnsafeRawBufferPointer) -> Int {
        let hash = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = Int32(hashes.count)
        offsets.append(arena.count)
        lengths.append(bytes.count)
        arena.append(contentsOf: bytes)
        hashes.append(hash)
        return hashes.count - 1
    }
}
