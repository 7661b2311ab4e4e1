import PerfHUDSupport

/// One reading of the target (or of its process group with `--include-children`).
/// An immutable value: optional fields are unknown or unavailable, never zero-filled.
public struct Sample: Equatable {
    /// When it was taken, CLOCK_MONOTONIC nanoseconds.
    public var monotonicNanoseconds: UInt64
    /// When it was taken, seconds since the Unix epoch.
    public var wallSeconds: Double
    /// False once the target has exited (or is a zombie waiting to be reaped).
    public var alive: Bool
    /// The target is stopped (`kill -STOP`, Ctrl-Z, a debugger: /proc state `T` or `t`); a group
    /// is when every member is. It takes no CPU and keeps its memory; nothing ended.
    public var stopped = false
    /// Cumulative CPU time, nanoseconds, from the process CPU clock. Never decreases.
    public var cpuNanoseconds: UInt64?
    /// Cumulative user and system time in clock ticks from /proc/PID/stat. Never decrease.
    public var userTicks: UInt64?
    public var systemTicks: UInt64?
    /// The resident pages of its processes, summed (`statm`): a page two of them share counts twice.
    public var residentBytes: UInt64?
    public var virtualBytes: UInt64?
    /// Pss of smaps_rollup, summed over its processes (`ProportionalMemory`); nil where it may
    /// not be read (it is never reported as 0 then), with `memoryUnreportedReason`.
    public var proportionalBytes: UInt64?
    /// When the oldest reading in `proportionalBytes` was made (CLOCK_MONOTONIC).
    public var proportionalReadAt: UInt64?
    /// Why `proportionalBytes` is nil (`MemoryUnreported`).
    public var memoryUnreportedReason: String?
    /// The target is a tree or a group of processes: the memory shown as its own is the PSS sum,
    /// which counts a page they share once, not the RSS sum (`TargetFigures.residentBytes`).
    public var countsProcessesOnce = false
    public var threads: Int?
    /// The smallest memory limit on the target's control group and those above it
    /// (`ControlGroupMemoryLimit`, read once a second); nil where none applies.
    public var memoryLimitBytes: UInt64?
    /// The smallest CPU quota on the target's control group and those above it, in cores
    /// (`ControlGroupCPULimit`, read with the memory limit); nil where none applies.
    public var cpuLimitCores: Double?
    /// The memory of the control group that is the whole target (a unit's, a container's, a
    /// `--cgroup`'s), as the kernel counts it for the group (`ControlGroupMemory`); nil for the
    /// other targets, or where no hierarchy counts the group's memory.
    public var groupMemory: GroupMemory?
    /// Processes the OOM killer killed in the target's control group since perfhud began to watch
    /// it (`ControlGroupOOMKills`, read with the limit and at the end), and when that count last
    /// rose (CLOCK_MONOTONIC); nil where the group has no count.
    public var oomKills: UInt64?
    public var oomKillAt: UInt64?

    /// A target that ended within this long of an OOM kill in its group was killed for memory: the
    /// count is read once a second, and the kill may be read before the process is gone.
    public static let oomKillWindow: UInt64 = 3_000_000_000

    /// This sample, taken after the end, finds the target killed by its group's OOM killer.
    public var endedByOOMKill: Bool {
        guard !alive, let killedAt = oomKillAt else { return false }
        return monotonicNanoseconds &- Swift.min(killedAt, monotonicNanoseconds) <= Self.oomKillWindow
    }
    /// Processes summed into this sample (1 unless `--include-children`).
    public var processCount: Int
    /// When the target started (CLOCK_MONOTONIC), where known precisely enough: the first
    /// sample's CPU is taken over the time since then (there is no sample before it).
    public var processStartNanoseconds: UInt64?
    /// When the target started, in clock ticks after boot (/proc/PID/stat's field 22); a group's
    /// is its earliest member's. The daemon's `perfhud_target_start_time_seconds`.
    public var startTicks: UInt64?
    /// How many times the target exec'd since perfhud began to watch it.
    public var execsSeen = 0
    /// The "why" figures; nil when they are not collected (`ProcessSampler.collectsActivity`).
    public var activity: Activity?
    /// The GPU figures (`GPUWatch`); nil when not collected.
    public var gpu: GPUFiguresBox?
    /// The network figures (`NetworkWatch`); nil when not collected.
    public var net: NetworkFiguresBox?

    public init(monotonicNanoseconds: UInt64, wallSeconds: Double, alive: Bool,
                cpuNanoseconds: UInt64? = nil, userTicks: UInt64? = nil, systemTicks: UInt64? = nil,
                residentBytes: UInt64? = nil, virtualBytes: UInt64? = nil, proportionalBytes: UInt64? = nil,
                threads: Int? = nil, processCount: Int = 1) {
        self.monotonicNanoseconds = monotonicNanoseconds
        self.wallSeconds = wallSeconds
        self.alive = alive
        self.cpuNanoseconds = cpuNanoseconds
        self.userTicks = userTicks
        self.systemTicks = systemTicks
        self.residentBytes = residentBytes
        self.virtualBytes = virtualBytes
        self.proportionalBytes = proportionalBytes
        self.threads = threads
        self.processCount = processCount
    }
}
