import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The per-tick hot path: the process CPU clock plus `pread` on kept-open stat and statm.
///
/// With `includeChildren`, descendants are rediscovered on every tick and summed. Their CPU:
/// - with a control group of the tree's own (`run`, see `ControlGroupCPU`), the group's usage:
///   exact, children shorter than a tick included, counted when it is spent;
/// - else (attach, daemon, no group allowed) the process CPU clocks plus the parents'
///   reaped-children times (cutime/cstime), where the time of descendants that exit moves. A
///   child that lived between two ticks arrives there in one piece when it is reaped: the total
///   shown grows by at most wall time × online CPUs a tick (`MachineBoundedCPUTotal`).
/// Memory, threads and the process count are per-process sums in both cases (a group's memory would need the memory controller).
public final class ProcessSampler {
    public let pid: Int32
    public let includeChildren: Bool
    /// Readable when the root process has exited (Linux 5.3+), for the event loop; -1 if absent.
    public let exitDescriptor: Int32
    /// The target is a kernel thread: it has CPU time but no memory (its RSS is unknown, not 0).
    public var isKernelThread: Bool { root.isKernelThread }
    /// How many times the target exec'd (its command name or its address space changed): a
    /// caller that shows the name looks it up again when this moves. Noticed from the stat line
    /// every sample reads anyway.
    public private(set) var execsSeen = 0
    /// The target's command name, looked up again after each exec; nil where it cannot be read.
    public private(set) var commandName: String?
    /// Its command line, looked up again after each exec: that of the program that ran, not of
    /// a launcher script (a pyenv shim) that exec'd it.
    public private(set) var commandLine: String?
    /// When the target started (CLOCK_MONOTONIC): from its start time in /proc (stat field 22,
    /// 10 ms ticks) when that is a second or more ago, so the first CPU figure is within 1 %;
    /// `run` sets it to the moment it launched the program, which it knows exactly.
    public var startedAtNanoseconds: UInt64?

    private var root: TrackedProcess
    private var descendants: [Int32: TrackedProcess] = [:]
    /// The descendants in the order a sample reads them: by start time, then PID, so a parent is
    /// read before its children. A child reaped in the middle of a sample is then caught missing
    /// (its read fails after its parent's reaped-children times were read without it), and the CPU
    /// is summed again (`treeCPU`); read the other way round, it would be counted twice (in its
    /// own read and in its parent's), which no later tick can take back. Rebuilt when the tree changes.
    private var readOrder: [TrackedProcess] = []
    /// Descendants found gone during a sample (reused: no allocation per tick).
    private var vanished: [Int32] = []
    private let directory: ProcessDirectory
    /// The tree's own control group, when `run` could make one (only with `includeChildren`).
    private let controlGroup: ControlGroupCPU?
    private let scan = DescendantScan()
    private var found: [(pid: Int32, startTicks: UInt64)] = []
    private var members: [Int32] = []
    private var discoveryPass: UInt32 = 0
    private var lastDiscovery: UInt64 = 0
    private var discoveryInterval: UInt64 = 0
    private let pageSize = ProcessDirectory.pageSize
    private let nanosecondsPerTick = 1_000_000_000 / ProcessDirectory.ticksPerSecond
    /// The directory's (`ProcessDirectory.readBuffer`), shared with the samplers on its thread
    /// (and read into by `ProcessSampler+Memory.swift`).
    let buffer: UnsafeMutableRawBufferPointer
    /// When the sample before was taken: the tick that once-a-second reads are scheduled by.
    private var lastSampleAt: UInt64 = 0
    private let proportional = ProportionalMemory()
    private var monotonic = (user: UInt64(0), system: UInt64(0))
    private var cpuTotal: MachineBoundedCPUTotal
    private var rootGone = false
    /// Whether the "why" figures (`Activity`) are read (not by a HUD that shows and records none),
    /// and the groups' limits and OOM kills (not by one `perfhud status`, as not by `ps`: a third of its CPU).
    public var collectsActivity = true, readsGroupLimits = true
    /// Where the GPU and the network figures come from (threads of their own); nil: not collected.
    public var gpu: GPUWatch?, net: NetworkWatch?
    /// The once-a-second part of `Activity`, carried by every sample until the next read.
    private var everySecond = Activity.EverySecond()
    private var controlGroupActivity: ControlGroupActivity?
    /// Where the target's control groups are, for both readers of their files (made at first use).
    private lazy var controlGroupPlaces = ControlGroupPlaces(pid: pid)
    /// The memory limit, read once a second whatever else is collected (the HUD shows it beside RSS).
    private var memoryLimit: ControlGroupMemoryLimit?
    private var memoryLimitBytes: UInt64?
    private var memoryLimitReadAt: UInt64 = 0
    private var cpuLimit: ControlGroupCPULimit?, cpuLimitCores: Double?
    /// The OOM kills of the target's group, read with the limit (and once more at the end).
    private var oomKillFiles: ControlGroupOOMKills?
    private var oomKills = OOMKillCount()
    /// What may not be read, each kind said once: drained by the caller (`takeNotes`).
    private var notes: [String] = []
    private var saidDenied = Set<String>()

    /// Opens `/proc/PID/{stat,statm}` of `pid` and keeps them open.
    /// - Parameter controlGroup: the group `pid` was launched in (its CPU is the tree's); used with
    ///   `includeChildren` only.
    /// - Throws: `PerfHUDError` `.noInput` (no such process) or `.noPermission` (may not read it).
    public init(pid: Int32, includeChildren: Bool = false, directory: ProcessDirectory = ProcessDirectory(),
                controlGroup: ControlGroupCPU? = nil, onlineCPUs: Int = ProcessDirectory.onlineCPUs) throws {
        self.pid = pid
        self.includeChildren = includeChildren
        self.directory = directory
        self.controlGroup = includeChildren ? controlGroup : nil
        cpuTotal = MachineBoundedCPUTotal(onlineCPUs: onlineCPUs)
        buffer = directory.readBuffer
        let opened = TrackedProcess.open(pid: pid, buffer: buffer)
        switch opened {
        case .success(let process):
            root = process
        case .failure(let error):
            if error == .noSuchFile || error == .noSuchProcess { throw PerfHUDError(.noInput, "no process with PID \(pid)") }
            throw PerfHUDError(.noPermission, "may not read process \(pid): \(error)")
        }
        exitDescriptor = perfhud_pidfd_open(pid)
        let description = directory.describe(pid: pid)
        commandName = description?.commandName
        commandLine = description?.commandLine
        startedAtNanoseconds = Self.monotonicStart(ticks: root.startTicks, nanosecondsPerTick: nanosecondsPerTick)
        if includeChildren { discoverDescendants() }
    }

    /// A start time in clock ticks since boot on the monotonic clock, when it is at least a second
    /// ago; nil otherwise (too coarse for a window that short) or when the clocks cannot be read.
    static func monotonicStart(ticks: UInt64, nanosecondsPerTick: UInt64) -> UInt64? {
        var boot = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &boot) == 0 else { return nil }
        let bootNow = UInt64(boot.tv_sec) &* 1_000_000_000 &+ UInt64(boot.tv_nsec)
        let now = monotonicNanoseconds()
        let (started, overflow) = ticks.multipliedReportingOverflow(by: nanosecondsPerTick)
        guard !overflow, bootNow >= started else { return nil }
        let age = bootNow - started
        guard age >= 1_000_000_000, now > age else { return nil }
        return now - age
    }

    deinit {
        if exitDescriptor >= 0 { close(exitDescriptor) }
    }

    /// Takes one sample. Cheap enough for every tick: per process the CPU clock and a `pread` of each
    /// kept-open `stat` and `statm`, plus, with the why figures, the reads of `ProcessActivity` (its
    /// per-tick files every tick, the rest once a second).
    public func sample() -> Sample {
        if includeChildren {
            // Every tick, unless ticks are so short that discovery would cost more than 1 % of a
            // core (a /proc listing takes ~0.1 ms: at 1 ms ticks it runs every ~10 ms). The cost
            // is the thread's CPU time, not wall time: on a busy machine a listing preempted for
            // 6 ms skipped the next 600 ms of discovery, and a whole 0.6 s child went unseen
            // (its time arrived as a lump when reaped; the fresh-clone CI run caught it). Never
            // more than 250 ms apart whatever a listing cost: a child missed meanwhile arrives late.
            let started = monotonicNanoseconds()
            if started &- lastDiscovery >= discoveryInterval {
                let cpuBefore = threadCPUNanoseconds()
                discoverDescendants()
                lastDiscovery = started
                discoveryInterval = min((threadCPUNanoseconds() &- cpuBefore) &* 100, 250_000_000)
            }
        }
        // Stamped after the discovery, whose cost varies (new processes are opened): the CPU read
        // next belongs to this instant, and rates divide by the time between two of them.
        let now = monotonicNanoseconds()
        var sample = Sample(monotonicNanoseconds: now, wallSeconds: wallClockSeconds(), alive: false, processCount: 0)
        sample.execsSeen = execsSeen   // on every sample, the one after the end too
        // The group's count outlives its processes: the total after the end is exact.
        let groupUsage = controlGroup?.usage()
        let usesClocks = controlGroup == nil

        var cpu: UInt64 = 0, user: UInt64 = 0, system: UInt64 = 0
        var resident: UInt64 = 0, virtual: UInt64 = 0, threads = 0
        var rootReading = false
        var activity: Activity?
        let cadence = SampleCadence(tickNanoseconds: lastSampleAt == 0 ? 0 : now &- lastSampleAt)
        lastSampleAt = now
        let slowDue = collectsActivity && cadence.isDue(lastRead: everySecond.readAt, every: 1_000_000_000, now: now)
        if slowDue { everySecond = Activity.EverySecond(); everySecond.readAt = now }
        // A local function rather than a loop over `[root] + descendants`: no allocation per tick.
        func accumulate(_ process: TrackedProcess) {
            guard let reading = read(process, usingClock: usesClocks) else {
                if process === root { rootGone = true } else { vanished.append(process.pid) }
                return
            }
            let space = reading.stat.addressSpaceHash
            if space != 0 && space != process.addressSpaceHash {
                // An exec: a kept-open smaps_rollup reads the address space it was opened on, gone now.
                process.forgetAddressSpace()
                if process !== root { process.addressSpaceHash = space }
            }
            if process === root {
                rootReading = true
                // An address space of 0 is none (the process is exiting: its memory is gone), not a new one.
                if reading.stat.commandNameHash != root.commandNameHash || (space != 0 && space != root.addressSpaceHash) {
                    // An exec: the name and the command line follow it.
                    root.commandNameHash = reading.stat.commandNameHash
                    if space != 0 { root.addressSpaceHash = space }
                    execsSeen += 1
                    let description = directory.describe(pid: pid)
                    commandName = description?.commandName ?? commandName
                    commandLine = description?.commandLine ?? commandLine
                }
                sample.alive = reading.stat.threadGroupLives
                sample.stopped = reading.stat.isStopped
            }
            let parts = cpuParts(of: reading, withReaped: includeChildren)
            cpu &+= parts.cpu
            user &+= parts.user
            system &+= parts.system
            process.lastResidentPages = reading.statm.residentPages
            resident &+= reading.statm.residentPages &* pageSize
            virtual &+= reading.statm.sizePages &* pageSize
            threads += reading.stat.threads
            sample.processCount += 1
            if collectsActivity { readActivity(of: process, stat: reading.stat, statm: reading.statm, now: now, cadence: cadence, slow: slowDue, into: &activity) }
        }
        // The limit first: the OOM score of each process is read against it (`OOMScore`).
        if readsGroupLimits && !rootGone && cadence.isDue(lastRead: memoryLimitReadAt, every: 1_000_000_000, now: now) {
            memoryLimitReadAt = now
            if memoryLimit == nil { memoryLimit = ControlGroupMemoryLimit(places: controlGroupPlaces) }
            memoryLimitBytes = memoryLimit?.read(now: now, buffer: buffer)
            if cpuLimit == nil { cpuLimit = ControlGroupCPULimit(places: controlGroupPlaces) }
            cpuLimitCores = cpuLimit?.read(now: now, buffer: buffer)
            readOOMKills(now: now)
        }
        if !rootGone { accumulate(root) }
        // Descendants that vanished are let go after the loop (not while iterating the dictionary),
        // in a list kept for the purpose: no copy of the dictionary's values per tick.
        for process in readOrder { accumulate(process) }
        if !vanished.isEmpty {
            // A descendant ended in the middle of this sample: its time may have moved into its
            // parent's cutime after the parent was read, and is then in neither reading (a tick
            // of 0 %, then the time in a lump: seen on a loaded 2-core machine). Its parent has
            // it now (the kernel adds it before the PID goes away): the CPU is summed again.
            if usesClocks && includeChildren, let again = treeCPU() { (cpu, user, system) = again }
            for gone in vanished { descendants[gone] = nil }
            vanished.removeAll(keepingCapacity: true)
            orderDescendants()
        }
        let treeAlive = rootReading || (includeChildren && sample.processCount > 0)
        guard treeAlive || groupUsage != nil else {
            // Gone: the total stays what was last read, the zombie's final one when `noteEnd`
            // caught it (the carry of a bounded total shown at once). The group's OOM kills are
            // read once more: a kill that ended it is counted by now.
            (sample.processCount, sample.net) = (0, net?.figuresAtEnd(at: now))
            endOOMKills(now: now, into: &sample)
            if cpuTotal.measured > 0 {
                sample.cpuNanoseconds = cpuTotal.update(reading: cpuTotal.measured, at: now, ended: true)
                sample.userTicks = monotonic.user
                sample.systemTicks = monotonic.system
            }
            return sample
        }
        if let groupUsage {
            (cpu, user, system) = (groupUsage.cpuNanoseconds, groupUsage.userTicks, groupUsage.systemTicks)
        }
        // A descendant that exits drops out of the sum for a moment before its parent reaps it:
        // totals are kept monotonic so no rate ever goes negative.
        monotonic.user = max(monotonic.user, user)
        monotonic.system = max(monotonic.system, system)
        sample.cpuNanoseconds = cpuTotal.update(reading: cpu, at: now, ended: !sample.alive)
        sample.userTicks = monotonic.user
        sample.systemTicks = monotonic.system
        guard treeAlive else {
            sample.processCount = 0
            sample.net = net?.figuresAtEnd(at: now)
            endOOMKills(now: now, into: &sample)
            return sample
        }
        // No memory at all is a process caught exiting (its memory already released, not yet a
        // zombie), as a kernel thread has none: unknown, not 0 B ("RSS … 0 B at the end").
        let hasMemory = !root.isKernelThread && virtual > 0
        sample.residentBytes = hasMemory ? resident : nil
        sample.virtualBytes = hasMemory ? virtual : nil
        sample.threads = threads
        let pss = proportional.read(root: rootGone ? nil : root, others: readOrder, now: now, cadence: cadence, buffer: buffer)
        (sample.proportionalBytes, sample.proportionalReadAt, sample.memoryUnreportedReason) = (pss.bytes, pss.readAt, pss.unreported)
        sample.countsProcessesOnce = includeChildren
        sample.memoryLimitBytes = memoryLimitBytes
        sample.cpuLimitCores = cpuLimitCores
        (sample.oomKills, sample.oomKillAt) = (oomKills.sinceWatching, oomKills.lastRiseAt)
        // A zombie not yet reaped has ended too: the kill that ended it is counted by now.
        if !sample.alive { endOOMKills(now: now, into: &sample) }
        sample.processStartNanoseconds = startedAtNanoseconds
        sample.startTicks = root.startTicks
        sample.execsSeen = execsSeen
        sample.gpu = gpu?.figures(at: now) { [pid] + descendants.keys }
        // A zombie root with no descendant left has ended: one more pass, for its last bytes.
        sample.net = sample.alive || !descendants.isEmpty ? net?.figures(at: now) { [pid] + descendants.keys } : net?.figuresAtEnd(at: now)
        if collectsActivity, var activity {
            if slowDue && !rootGone {
                if controlGroupActivity == nil { controlGroupActivity = ControlGroupActivity(places: controlGroupPlaces) }
                controlGroupActivity?.read(into: &everySecond, now: now, buffer: buffer)
            }
            activity.everySecond = everySecond
            sample.activity = activity
        }
        return sample
    }

    private func readOOMKills(now: UInt64) {
        if oomKillFiles == nil { oomKillFiles = ControlGroupOOMKills(places: controlGroupPlaces) }
        oomKills.note(oomKillFiles?.read(now: now, buffer: buffer), at: now)
    }

    /// At the end: the count read again (from the files opened while the target lived).
    private func endOOMKills(now: UInt64, into sample: inout Sample) {
        if let oomKillFiles { oomKills.note(oomKillFiles.readOpenFiles(buffer: buffer), at: now) }
        (sample.oomKills, sample.oomKillAt) = (oomKills.sinceWatching, oomKills.lastRiseAt)
        sample.memoryLimitBytes = memoryLimitBytes   // the limit it lived under, for the end's words
    }

    /// The RSS of the processes tracked, from their kept-open `statm` alone: what the daemon reads
    /// between two full samples. Nil when a full sample is needed instead: one of them is gone or
    /// exiting (no memory), or reads its memory through a thread (its main thread ended).
    public func residentBytes() -> UInt64? {
        guard !rootGone, !root.isKernelThread else { return nil }
        guard var total = resident(of: root) else { return nil }
        for process in readOrder {
            guard let bytes = resident(of: process) else { return nil }
            total &+= bytes
        }
        return total
    }

    private func resident(of process: TrackedProcess) -> UInt64? {
        guard process.standIn == nil, let statm = readStatm(of: process), statm.sizePages > 0 else { return nil }
        return statm.residentPages &* pageSize
    }

    /// Reads the total of a target that has just ended, before it is reaped: the zombie's CPU clock
    /// and `stat` hold its whole life's CPU time, which is gone with it. The final tick, taken when
    /// the session learns how it ended, shows that total (`run` holds the program unreaped until
    /// this has run; see `LaunchedProgram.onEnd`).
    public func noteEnd() {
        _ = sample()
    }

    /// Reads one process's "why" files into the tick's sums (and, when `slow`, the once-a-second part).
    private func readActivity(of process: TrackedProcess, stat: ProcStat, statm: ProcStatm, now: UInt64, cadence: SampleCadence, slow: Bool,
                              into total: inout Activity?) {
        if process.activity == nil {
            process.activity = ProcessActivity(pid: process.pid)
            if let standIn = process.standIn { process.activity?.readProcessFiles(through: standIn.path) }
        }
        guard let collector = process.activity else { return }
        var own = Activity()
        collector.readEveryTick(into: &own, stat: stat, statm: statm, includeReaped: includeChildren, now: now, cadence: cadence, buffer: buffer)
        if slow {
            var part = Activity.EverySecond()
            collector.readEverySecond(into: &part, now: now, busiest: true, readLimit: process === root, groupLimitBytes: memoryLimitBytes, buffer: buffer)
            part.readAt = everySecond.readAt
            everySecond = .summed(everySecond, part)
        }
        if collector.hasDenials { for denial in collector.takeDenials() {
            let kind = String(denial.split(separator: " ").first?.split(separator: "/").last ?? "")
            if saidDenied.insert(kind).inserted { notes.append("may not read " + denial) }
        } }
        total = Activity.sum(total, own)
    }

    /// What could not be read since the last call, each kind once per session (for stderr or the log).
    public func takeNotes() -> [String] {
        defer { notes.removeAll() }
        return notes
    }

    private struct Reading {
        var stat: ProcStat
        var statm: ProcStatm
        var cpuNanoseconds: UInt64
    }

    @inline(__always)
    private func read(_ process: TrackedProcess, usingClock: Bool) -> Reading? {
        guard case .success(let statCount) = process.stat.read(into: buffer),
              let stat = ProcParser.stat(UnsafeRawBufferPointer(rebasing: buffer[0..<statCount])),
              let statm = memory(of: process, stat: stat)
        else { return nil }
        var cpu = (stat.userTicks &+ stat.systemTicks) &* nanosecondsPerTick
        if usingClock, let clock = process.cpuClock {
            var time = timespec()
            if clock_gettime(clock, &time) == 0 {
                cpu = UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
            }
        }
        return Reading(stat: stat, statm: statm, cpuNanoseconds: cpu)
    }

    /// Rediscovers the tree, every tick: the group's members (one read), else a `/proc` scan
    /// that reads only the processes it has not seen before (`DescendantScan`).
    private func discoverDescendants() {
        discoveryPass &+= 1
        if let controlGroup, controlGroup.members(into: &members) {
            for member in members where member != pid {
                if let known = descendants[member] { known.seen = discoveryPass; continue }
                switch TrackedProcess.open(pid: member, buffer: buffer) {
                case .success(let process):
                    process.seen = discoveryPass
                    descendants[member] = process
                case .failure(let error): noteUntracked(error)
                }
            }
        } else {
            scan.descendants(of: pid, into: &found)
            for (childPID, childStart) in found {
                if let known = descendants[childPID], known.startTicks == childStart { known.seen = discoveryPass; continue }
                // Open, then check the start time: a PID reused between the scan and the open is skipped.
                switch TrackedProcess.open(pid: childPID, buffer: buffer) {
                case .success(let process) where process.startTicks == childStart:
                    process.seen = discoveryPass
                    descendants[childPID] = process
                case .success: break
                case .failure(let error): noteUntracked(error)
                }
            }
        }
        if descendants.values.contains(where: { $0.seen != discoveryPass }) {
            descendants = descendants.filter { $0.value.seen == discoveryPass }
        }
        if descendants.count != readOrder.count || readOrder.contains(where: { descendants[$0.pid] !== $0 }) { orderDescendants() }
    }

    /// A descendant whose files could not be kept open for lack of descriptors: left out of the
    /// tree's figures, and said (once) rather than silently missing from its sums.
    private func noteUntracked(_ error: SystemError) {
        guard error.code == EMFILE || error.code == ENFILE, saidDenied.insert("descriptors").inserted else { return }
        notes.append("processes of the tree past the descriptor limit are not counted: no file descriptor left to keep their /proc files open"
                     + " (raise the limit: ulimit -n, LimitNOFILE=)")
    }

    private func orderDescendants() {
        readOrder = descendants.values.sorted { ($0.startTicks, $0.pid) < ($1.startTicks, $1.pid) }
    }

    /// The tree's CPU (clock, user, system) from its files alone, parents first; nil when another
    /// process went away meanwhile (the sum as first read stands: a tick later it is whole again).
    private func treeCPU() -> (UInt64, UInt64, UInt64)? {
        var cpu: UInt64 = 0, user: UInt64 = 0, system: UInt64 = 0
        for process in (rootGone ? [] : [root]) + readOrder where !vanished.contains(process.pid) {
            guard let reading = read(process, usingClock: true) else { return nil }
            let parts = cpuParts(of: reading, withReaped: true)
            cpu &+= parts.cpu
            user &+= parts.user
            system &+= parts.system
        }
        return (cpu, user, system)
    }

    /// One process's CPU time: its clock (nanoseconds) and its user and system ticks, with
    /// `withReaped` its reaped descendants' too (their whole time lands in its cutime/cstime).
    private func cpuParts(of reading: Reading, withReaped: Bool) -> (cpu: UInt64, user: UInt64, system: UInt64) {
        guard withReaped else { return (reading.cpuNanoseconds, reading.stat.userTicks, reading.stat.systemTicks) }
        return (reading.cpuNanoseconds &+ reading.stat.childrenTicks &* nanosecondsPerTick,
                reading.stat.userTicks &+ reading.stat.childrenUserTicks, reading.stat.systemTicks &+ reading.stat.childrenSystemTicks)
    }
}
