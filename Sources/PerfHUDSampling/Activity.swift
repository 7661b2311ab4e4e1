/// What a sample read about *why* the target is slow: waiting for a CPU, switching, faulting,
/// doing I/O, holding descriptors, memory by kind, throttling and pressure, its busiest threads.
/// Counters are cumulative and never decrease (per-thread counters are summed from each thread's
/// increase, so a thread that ends takes nothing back); the rates are derived by `MetricsStore`.
/// A field is nil where perfhud may not read it (never 0).
public struct Activity: Equatable {
    // Read every tick.
    /// Nanoseconds threads spent runnable but not running (run-queue delay), summed over threads.
    public var waitNanoseconds: UInt64?
    /// When the threads' run-queue delays were read (every tick unless the target has many threads).
    public var waitReadAt: UInt64 = 0
    public var minorFaults: UInt64?
    public var majorFaults: UInt64?
    public var io: ProcIO?
    public var memory: ProcMemoryKinds?

    /// The once-a-second part, read together and carried as one value: from the collectors
    /// (`ProcessActivity.readEverySecond`, `ControlGroupActivity`) to every sample until the next
    /// read, and (its `levels`) to the report.
    public var everySecond = EverySecond()

    /// The figures read about once a second (`readAt` says when; rates over the time between two reads).
    public struct EverySecond: Equatable {
        /// When the once-a-second figures were last read (CLOCK_MONOTONIC ns); 0: never.
        public var readAt: UInt64 = 0
        // Cumulative counts: `MetricsStore` derives their rates between two reads.
        public var voluntarySwitches: UInt64?
        public var involuntarySwitches: UInt64?
        /// Throttled time of the target's control group (ns); 0 for a group without a CPU quota.
        public var throttledNanoseconds: UInt64?
        /// Pressure stall totals of the target's cgroup v2 group, µs: cpu, memory, io × some, full.
        public var pressure = PressureTotals()
        /// The figures shown as read, which reach the report as one value (`TargetFigures.everySecond`).
        public var levels = SecondLevels()
        public init() {}
    }

    public init() {}
}

/// The once-a-second figures shown as read (not rates): they travel as one value from the
/// collector through `Activity` and `Sample` to `TargetFigures.everySecond`, where their table entries
/// (`Figure`) read them. A new one is its field here, its collector (`ProcessActivity.readEverySecond`)
/// and how two processes' values combine (`summed`), and its entry in the table of figures.
public struct SecondLevels: Equatable, Sendable {
    public var fdsOpen: UInt64?
    /// The root process's soft limit of open descriptors.
    public var fdsLimit: UInt64?
    /// The busiest threads over the last second, most first (at most 3).
    public var busiestThreads: [BusyThread]?
    /// `/proc/PID/oom_score` (0…2000): the higher, the sooner the kernel kills the process when
    /// memory runs out; of several processes, the highest (the one it kills first).
    public var oomScore: UInt64?
    public init() {}

    /// Two processes' levels together (`--include-children`, a daemon's group).
    static func summed(_ a: SecondLevels, _ b: SecondLevels) -> SecondLevels {
        var result = a
        result.fdsOpen = a.fdsOpen.map { $0 &+ (b.fdsOpen ?? 0) } ?? b.fdsOpen
        result.fdsLimit = a.fdsLimit ?? b.fdsLimit
        if let other = b.busiestThreads {
            result.busiestThreads = Array(((a.busiestThreads ?? []) + other).sorted { $0.cpuPercent > $1.cpuPercent }.prefix(3))
        }
        result.oomScore = a.oomScore.map { Swift.max($0, b.oomScore ?? 0) } ?? b.oomScore
        return result
    }
}


extension Activity {
    /// Two readings summed (`--include-children`, a daemon's group). A figure one side lacks is
    /// the other's; busiest threads are merged and the top three kept.
    public static func sum(_ a: Activity?, _ b: Activity?) -> Activity? {
        guard var result = a else { return b }
        guard let b else { return a }
        func add(_ x: UInt64?, _ y: UInt64?) -> UInt64? { x.map { $0 &+ (y ?? 0) } ?? y }
        result.waitNanoseconds = add(result.waitNanoseconds, b.waitNanoseconds)
        result.waitReadAt = max(result.waitReadAt, b.waitReadAt)
        result.minorFaults = add(result.minorFaults, b.minorFaults)
        result.majorFaults = add(result.majorFaults, b.majorFaults)
        if let other = b.io {
            result.io = result.io.map { ProcIO(readChars: $0.readChars &+ other.readChars, writeChars: $0.writeChars &+ other.writeChars,
                                               readBytes: $0.readBytes &+ other.readBytes, writeBytes: $0.writeBytes &+ other.writeBytes) } ?? other
        }
        if let other = b.memory {
            result.memory = result.memory.map { ProcMemoryKinds(anonBytes: $0.anonBytes &+ other.anonBytes, fileBytes: $0.fileBytes &+ other.fileBytes,
                                                               shmemBytes: $0.shmemBytes &+ other.shmemBytes,
                                                               swapBytes: add($0.swapBytes, other.swapBytes)) } ?? other
        }
        result.everySecond = .summed(result.everySecond, b.everySecond)
        return result
    }
}

extension Activity.EverySecond {
    /// Two processes' reads together: counts added (a figure one side lacks is the other's), the
    /// group's figures (throttling, pressure) taken once.
    static func summed(_ a: Activity.EverySecond, _ b: Activity.EverySecond) -> Activity.EverySecond {
        func add(_ x: UInt64?, _ y: UInt64?) -> UInt64? { x.map { $0 &+ (y ?? 0) } ?? y }
        var result = a
        result.readAt = max(a.readAt, b.readAt)
        result.voluntarySwitches = add(a.voluntarySwitches, b.voluntarySwitches)
        result.involuntarySwitches = add(a.involuntarySwitches, b.involuntarySwitches)
        result.throttledNanoseconds = a.throttledNanoseconds ?? b.throttledNanoseconds
        if result.pressure == PressureTotals() { result.pressure = b.pressure }
        result.levels = .summed(a.levels, b.levels)
        return result
    }
}
