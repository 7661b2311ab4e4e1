import PerfHUDSampling

/// The target's figures at one tick, derived from its samples by `MetricsStore`: what the HUD and
/// the plain and JSON rows show of the processes (the event stream's are `EventSnapshot`). A tick
/// carries it as `Tick.figures`; `report` the command reads recordings of them.
public struct TargetFigures: Equatable, Sendable {
    public var wallSeconds: Double
    public var elapsedSeconds: Double
    public var pid: Int32
    public var alive: Bool
    /// Stopped (`Sample.stopped`): the rows go on, its CPU at 0.
    public var stopped = false
    /// CPU time over wall time of the last tick window; 100 = one core busy.
    public var cpuPercent: Double?
    public var cpuMachinePercent: Double?
    /// The user / system split of `cpuPercent`, from stat ticks over the last `MetricsStore.splitWindowSeconds`.
    public var cpuUserPercent: Double?
    public var cpuSystemPercent: Double?
    /// The target's memory counted once (`rss_bytes`): one process's RSS (statm); a tree's or a
    /// group's PSS sum (`Sample.countsProcessesOnce`), which counts a page its processes share once.
    public var residentBytes: UInt64?
    /// Least-squares-free trend: RSS change over the last 10 s, per second.
    public var residentTrendBytesPerSecond: Double?
    public var proportionalBytes: UInt64?
    /// The RSS of its processes summed (`rss_sum_bytes`): for one process its RSS; for a tree or a
    /// group, where `residentBytes` is the PSS sum, what htop and psrecord show as its memory.
    public var residentSumBytes: UInt64?
    /// How old the oldest reading in `proportionalBytes` is (0: all read at this tick).
    public var proportionalAgeSeconds: Double?
    /// Why `proportionalBytes` is nil (`MemoryUnreported`).
    public var memoryUnreportedReason: String?
    /// Whether `residentBytes` is a PSS sum (a tree's or a group's memory) rather than one
    /// process's RSS: it is then not the RSS sum (it is unknown where PSS is). What the status
    /// line and the plain row call `Mem` rather than `RSS`, live and replayed alike.
    public var memoryIsProportionalSum: Bool { residentSumBytes != nil && residentSumBytes != residentBytes }
    /// The memory the status line and the plain row lead with, and its name: a whole control
    /// group's working set (`Mem`: what its limit holds it to, `docker stats`' figure); else a
    /// tree's or a group's PSS sum (`Mem`), else one process's RSS (`RSS`).
    public var shownMemory: (name: String, bytes: UInt64)? {
        if let workingSet = groupWorkingSetBytes { return ("Mem", workingSet) }
        return residentBytes.map { (memoryIsProportionalSum ? "Mem" : "RSS", $0) }
    }

    /// The memory figure beside `shownMemory`, and its name: a group's PSS sum (`PSS Σ`) where that
    /// leads with the group's working set, a tree's RSS sum (`RSS Σ`), one process's PSS (`PSS`,
    /// `n/a` where unknown); nil where there is none to say.
    public var besideMemory: (name: String, bytes: UInt64?)? {
        if groupWorkingSetBytes != nil { return residentBytes.map { ("PSS Σ", $0) } }
        if memoryIsProportionalSum { return residentSumBytes.map { ("RSS Σ", $0) } }
        return ("PSS", proportionalBytes)
    }

    /// `CPU 50.3 %`'s quota as the status line and the plain row say it: ` / 0.5 cores`; empty without one.
    public var cpuLimitText: String {
        guard let cores = cpuLimitCores else { return "" }
        // Hundredths at most (`--cpus 0.25`), no trailing zeros: `0.5`, `2`.
        let hundredths = Int((cores * 100).rounded())
        var number = String(hundredths / 100)
        if hundredths % 100 != 0 {
            number += "." + (hundredths % 100 < 10 ? "0" : "") + String(hundredths % 100)
            while number.hasSuffix("0") { number.removeLast() }
        }
        return " / " + number + (cores == 1 ? " core" : " cores")
    }

    /// How an OOM kill that ended the target is said at every sink: `killed by the OOM killer
    /// (group limit 32 MiB)`; nil where it was not.
    public var oomKillText: String? {
        guard oomKilled else { return nil }
        return Sample.killedByOOMKiller(limitBytes: memoryLimitBytes)
    }

    /// `PSS 80 MiB`'s age as the status line says it (`4s old`), where a reading in it is over a
    /// second and a half old (a row at a tick under a second holds it up to a second); nil else.
    public var proportionalAgeText: String? {
        guard let age = proportionalAgeSeconds, age >= 1.5 else { return nil }
        return String(Int(age.rounded())) + "s old"
    }
    public var virtualBytes: UInt64?
    /// The smallest memory limit on the target's control group and those above it; nil where none applies.
    public var memoryLimitBytes: UInt64?
    /// The smallest CPU quota on the target's control group and those above it, in cores (`cpu_limit_cores`).
    public var cpuLimitCores: Double?
    /// The memory of the control group that is the whole target, as the kernel counts it for the
    /// group (`group_memory_bytes`, `group_working_set_bytes`, `group_anon_bytes`,
    /// `group_file_bytes`, `group_kernel_bytes`; `GroupMemory`); nil for the other targets.
    public var groupMemoryBytes: UInt64?
    public var groupWorkingSetBytes: UInt64?
    public var groupAnonBytes: UInt64?
    public var groupFileBytes: UInt64?
    public var groupKernelBytes: UInt64?
    /// OOM kills in the target's control group since perfhud began to watch it (`oom_kills`).
    public var oomKills: UInt64?
    /// The target ended as the OOM killer killed in its group (`oom_killed`, the exit row only).
    public var oomKilled = false
    public var threads: Int?
    public var processCount: Int
    /// Cumulative CPU seconds of the target (and descendants) since it started. Never decreases.
    public var cpuSecondsTotal: Double?

    // Why it is slow (`Activity`, derived by `MetricsStore`); nil where not read or not readable.
    /// Run-queue delay over wall time, summed over threads: 100 = one thread waiting the whole time.
    public var cpuWaitPercent: Double?
    public var voluntarySwitchesPerSecond: Double?
    public var involuntarySwitchesPerSecond: Double?
    public var minorFaultsPerSecond: Double?
    public var majorFaultsPerSecond: Double?
    public var ioReadBytesPerSecond: Double?
    public var ioWriteBytesPerSecond: Double?
    public var ioReadCharsPerSecond: Double?
    public var ioWriteCharsPerSecond: Double?
    public var residentAnonBytes: UInt64?
    public var residentFileBytes: UInt64?
    public var residentShmemBytes: UInt64?
    public var swapBytes: UInt64?
    public var cpuThrottledPercent: Double?
    public var pressure = PressurePercents()
    /// The least-squares slope of RSS over `--leak-window`, its r², and the verdict (`LeakTrend`).
    public var residentTrendBytesPerHour: Double?
    public var residentTrendR2: Double?
    public var leakSuspected: Bool?
    /// The once-a-second figures as read (descriptors, the busiest threads, the OOM score), as one
    /// value from the sample (`Activity.EverySecond.levels`); nil fields where not read.
    public var everySecond = SecondLevels()
    /// The GPU figures (`GPUWatch`, read once a second on the GPU thread); nil where not read.
    public var gpuBox: GPUFiguresBox?
    /// The GPU figures, all nil where not read. Setting one makes a new box (reading a recording).
    public var gpu: GPUFigures {
        get { gpuBox?.value ?? GPUFigures() }
        set { gpuBox = GPUFiguresBox(newValue) }
    }
    /// The network figures (`NetworkWatch`, read once a second on the network thread); nil where not read.
    public var netBox: NetworkFiguresBox?
    /// The network figures, all nil where not read. Setting one makes a new box (reading a recording).
    public var net: NetworkFigures {
        get { netBox?.value ?? NetworkFigures() }
        set { netBox = NetworkFiguresBox(newValue) }
    }

    /// Every stored figure, in the order declared (what the memberwise initialiser was, written out
    /// because a memberwise initialiser is never visible outside its module).
    public init(
        wallSeconds: Double,
        elapsedSeconds: Double,
        pid: Int32,
        alive: Bool,
        cpuPercent: Double? = nil,
        cpuMachinePercent: Double? = nil,
        cpuUserPercent: Double? = nil,
        cpuSystemPercent: Double? = nil,
        residentBytes: UInt64? = nil,
        residentTrendBytesPerSecond: Double? = nil,
        proportionalBytes: UInt64? = nil,
        virtualBytes: UInt64? = nil,
        memoryLimitBytes: UInt64? = nil,
        threads: Int? = nil,
        processCount: Int,
        cpuSecondsTotal: Double? = nil,
        cpuWaitPercent: Double? = nil,
        voluntarySwitchesPerSecond: Double? = nil,
        involuntarySwitchesPerSecond: Double? = nil,
        minorFaultsPerSecond: Double? = nil,
        majorFaultsPerSecond: Double? = nil,
        ioReadBytesPerSecond: Double? = nil,
        ioWriteBytesPerSecond: Double? = nil,
        ioReadCharsPerSecond: Double? = nil,
        ioWriteCharsPerSecond: Double? = nil,
        residentAnonBytes: UInt64? = nil,
        residentFileBytes: UInt64? = nil,
        residentShmemBytes: UInt64? = nil,
        swapBytes: UInt64? = nil,
        cpuThrottledPercent: Double? = nil,
        pressure: PressurePercents = PressurePercents(),
        residentTrendBytesPerHour: Double? = nil,
        residentTrendR2: Double? = nil,
        leakSuspected: Bool? = nil,
        everySecond: SecondLevels = SecondLevels(),
        gpuBox: GPUFiguresBox? = nil,
        netBox: NetworkFiguresBox? = nil
    ) {
        self.wallSeconds = wallSeconds
        self.elapsedSeconds = elapsedSeconds
        self.pid = pid
        self.alive = alive
        self.cpuPercent = cpuPercent
        self.cpuMachinePercent = cpuMachinePercent
        self.cpuUserPercent = cpuUserPercent
        self.cpuSystemPercent = cpuSystemPercent
        self.residentBytes = residentBytes
        self.residentTrendBytesPerSecond = residentTrendBytesPerSecond
        self.proportionalBytes = proportionalBytes
        self.virtualBytes = virtualBytes
        self.memoryLimitBytes = memoryLimitBytes
        self.threads = threads
        self.processCount = processCount
        self.cpuSecondsTotal = cpuSecondsTotal
        self.cpuWaitPercent = cpuWaitPercent
        self.voluntarySwitchesPerSecond = voluntarySwitchesPerSecond
        self.involuntarySwitchesPerSecond = involuntarySwitchesPerSecond
        self.minorFaultsPerSecond = minorFaultsPerSecond
        self.majorFaultsPerSecond = majorFaultsPerSecond
        self.ioReadBytesPerSecond = ioReadBytesPerSecond
        self.ioWriteBytesPerSecond = ioWriteBytesPerSecond
        self.ioReadCharsPerSecond = ioReadCharsPerSecond
        self.ioWriteCharsPerSecond = ioWriteCharsPerSecond
        self.residentAnonBytes = residentAnonBytes
        self.residentFileBytes = residentFileBytes
        self.residentShmemBytes = residentShmemBytes
        self.swapBytes = swapBytes
        self.cpuThrottledPercent = cpuThrottledPercent
        self.pressure = pressure
        self.residentTrendBytesPerHour = residentTrendBytesPerHour
        self.residentTrendR2 = residentTrendR2
        self.leakSuspected = leakSuspected
        self.everySecond = everySecond
        self.gpuBox = gpuBox
        self.netBox = netBox
    }

    public var fdsOpen: UInt64? {
        get { everySecond.fdsOpen }
        set { everySecond.fdsOpen = newValue }
    }
    public var fdsLimit: UInt64? {
        get { everySecond.fdsLimit }
        set { everySecond.fdsLimit = newValue }
    }
    /// Up to three, busiest first; nil where not read.
    public var busiestThreads: [BusyThread]? {
        get { everySecond.busiestThreads }
        set { everySecond.busiestThreads = newValue }
    }
}

/// Pressure stall time over wall time of the target's cgroup v2 group, percent.
public struct PressurePercents: Equatable, Sendable {
    public var cpuSome: Double?, cpuFull: Double?
    public var memorySome: Double?, memoryFull: Double?
    public var ioSome: Double?, ioFull: Double?
    public init() {}
}
