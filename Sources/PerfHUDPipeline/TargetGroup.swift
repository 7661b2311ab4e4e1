import PerfHUDSupport
import PerfHUDSampling

/// A target as one sample source: one sampler per root process (a `--match` or `--unit` group has
/// several), summed. The CPU of processes that left the group stays in the totals, so the counters
/// never go back; that of a process that joins after the first look counts from when it joined.
/// The daemon's targets are these, and so is `attach --match` / `--unit`: one group reads the
/// same everywhere.
package final class TargetGroup: SampleSource {
    package private(set) var samplers: [Int32: ProcessSampler] = [:]
    private let includeChildren: Bool
    private var retired = (cpu: UInt64(0), user: UInt64(0), system: UInt64(0))
    private var lastCumulative: [Int32: (cpu: UInt64, user: UInt64, system: UInt64)] = [:]
    /// What members that joined the group after its first look had spent before they were found,
    /// left out of its total (and members whose first sample has not taken it yet): see `take`.
    private var excluded = (cpu: UInt64(0), user: UInt64(0), system: UInt64(0))
    private var joinedLater: Set<Int32> = []
    private var lookedBefore = false
    /// The total shown, never faster than the machine can spend (`MachineBoundedCPUTotal`).
    private var shownCPU = MachineBoundedCPUTotal()
    /// The control group that is the whole target (a unit's, a container's), whose own count is the
    /// target's CPU: every process that was in it, those that lived between two looks too (what
    /// `docker stats` and `systemctl status` show). Nil: the members' CPU summed.
    private var wholeGroup: ControlGroupCPU?
    private var wholeGroupPath: String?
    /// The whole group's memory as the kernel counts it for the group (`Sample.groupMemory`).
    private var wholeGroupMemory: ControlGroupMemory?
    /// Where its files are read into, made at the first read.
    private var memoryBuffer: UnsafeMutableRawBufferPointer?
    /// What the target's earlier groups counted (a container run again has a new group, counting
    /// from 0), and the present one's last reading.
    private var earlierGroups = ControlGroupUsage(cpuNanoseconds: 0, userTicks: 0, systemTicks: 0)
    private var lastGroupUsage: ControlGroupUsage?
    /// The network totals of members that left, and each member's last (a group's totals never go back).
    private var retiredNetwork = (sent: UInt64(0), received: UInt64(0), retransmits: UInt64(0), opened: UInt64(0))
    private var lastNetwork: [Int32: (sent: UInt64, received: UInt64, retransmits: UInt64, opened: UInt64)] = [:]
    /// The command name of the root (`rootPID`), looked up when the members change.
    package var commandName = ""
    /// The member every other one descends from (nginx's master above its workers) where the group
    /// is one process tree, else the lowest PID: what `perfhud_target_info{pid}` names, and so what
    /// `perfhud top` opens (with `--include-children` when that tree is what the row counts).
    package private(set) var rootPID: Int32?
    /// A `--unit` target's IP accounting (systemd's counters), laid over the members' TCP figures.
    package var unitNetwork: NetworkWatch?

    /// Whether the target is a group of processes (`--match`, `--unit`) rather than one process
    /// (and, with `--include-children`, its tree): a group's memory is its PSS sum
    /// (`Sample.countsProcessesOnce`) however many members it has at the moment.
    private let isGroup: Bool

    package init(includeChildren: Bool, isGroup: Bool) {
        self.includeChildren = includeChildren
        self.isGroup = isGroup
    }

    deinit { memoryBuffer?.deallocate() }

    /// The whole group's memory now (`wholeGroupMemory`), nil where it is not read.
    private func readGroupMemory() -> GroupMemory? {
        guard let wholeGroupMemory else { return nil }
        let buffer = memoryBuffer ?? .allocate(byteCount: 8192, alignment: 16)
        memoryBuffer = buffer
        return wholeGroupMemory.read(buffer: buffer)
    }

    /// How the last member that ended was killed for memory, for the journal's line when the
    /// target goes away (its tick is then absent): `killed by the OOM killer (group limit 32 MiB)`.
    package private(set) var lastOOMKill: String?
    /// The last sample of the member that ended last: the group's end when it was the last (`endSample`).
    private var lastEnded: Sample?

    package var isEmpty: Bool { samplers.isEmpty }
    package var pids: [Int32] { samplers.keys.sorted() }
    package var currentCommandName: String? { samplers.isEmpty ? nil : commandName }

    package func takeNotes() -> [String] { samplers.values.flatMap { $0.takeNotes() } }

    package func contains(_ pid: Int32) -> Bool { samplers[pid] != nil }
    package func add(_ sampler: ProcessSampler) { samplers[sampler.pid] = sampler }

    /// Takes the processes the target's resolver found now: a sampler opened for each new one
    /// (`open`; `failed` hears why one could not be), and those no longer found let go where
    /// `retiresMissing` (a `--pid` target keeps its process until it ends). With `includeChildren`,
    /// a member below another is counted by that one's tree already, not again on its own. The
    /// root and its name are found again when the members changed. `wholeGroup`: the control group
    /// that is the whole target, as the resolver found it (`countWholeGroup`).
    /// - Returns: whether the members changed.
    package func take(found: [Int32], wholeGroup: String?, retiresMissing: Bool, directory: ProcessDirectory,
                      open: (Int32) throws -> ProcessSampler, failed: (Error) -> Void) -> Bool {
        countWholeGroup(wholeGroup)
        let parentOf = { (pid: Int32) in ProcParser.stat(ofProcess: String(pid))?.parentPID }
        let pids = includeChildren && isGroup ? Self.topmost(found, parentOf: parentOf) : found
        var changed = false
        for pid in pids where samplers[pid] == nil {
            do {
                add(try open(pid))
                changed = true
                // Found after the first look: what it spent before counts not. It ran matching
                // nothing (it exec'd into the pattern, it was moved into the unit's group), or it
                // started since the last look: then that time was the group's, but showing it now
                // would be a lump that no tick spent (a gunicorn forking 8 busy workers: 16 s of
                // CPU at once with a 2 s look), and the rates are what is watched. At most a look's
                // worth of a new member's CPU is left out of the total (docs/figures.md).
                if lookedBefore { joinedLater.insert(pid) }
            } catch {
                failed(error)
            }
        }
        lookedBefore = true
        if retiresMissing {
            let kept = Set(pids)
            for pid in self.pids where !kept.contains(pid) { retire(pid); changed = true }
        }
        if changed && !samplers.isEmpty {
            findRoot(parentOf: parentOf)
            commandName = directory.describe(pid: rootPID ?? self.pids[0])?.commandName ?? "?"
        }
        return changed
    }

    /// The target is the whole control group `path` (below the hierarchies' roots, as
    /// `/proc/PID/cgroup` names it), or nil: its CPU is then that group's own count, where some
    /// hierarchy has it (`ControlGroupCPU.existing`). A new path (the unit or the container started
    /// again) keeps what the last one counted.
    private func countWholeGroup(_ path: String?) {
        guard path != wholeGroupPath else { return }
        keepLastGroupsCount()
        wholeGroupPath = path
        wholeGroup = path.flatMap { ControlGroupCPU.existing(group: $0) }
        wholeGroupMemory = path.flatMap { ControlGroupMemory.existing(group: $0) }
    }

    /// What the group counted until now goes to `earlierGroups`: a new one counts from 0.
    private func keepLastGroupsCount() {
        if let last = lastGroupUsage { earlierGroups = earlierGroups + last }
        lastGroupUsage = nil
    }

    /// The whole group's CPU so far, its earlier groups' included; nil where the target is not one
    /// group (or it cannot be read).
    private func wholeGroupCPU() -> ControlGroupUsage? {
        guard let path = wholeGroupPath else { return nil }
        var reading = wholeGroup?.usage()
        if reading == nil, let again = ControlGroupCPU.existing(group: path) {
            // Removed and made again at the same path (systemd restarting a unit): the kept file
            // read the old group; the new one counts from 0, after what the old one counted.
            keepLastGroupsCount()
            wholeGroup = again
            wholeGroupMemory = ControlGroupMemory.existing(group: path)
            reading = again.usage()
        }
        guard let usage = reading ?? lastGroupUsage else { return nil }
        lastGroupUsage = usage
        return earlierGroups + usage
    }

    /// The members no other member is an ancestor of, in their order.
    package static func topmost(_ pids: [Int32], parentOf: (Int32) -> Int32?) -> [Int32] {
        let members = Set(pids)
        var parents: [Int32: Int32?] = [:]
        func parent(_ pid: Int32) -> Int32? {
            if let known = parents[pid] { return known }
            let found = parentOf(pid)
            parents[pid] = found
            return found
        }
        return pids.filter { pid in
            var current = parent(pid), steps = 0
            while let ancestor = current, ancestor > 1, steps < 256 {
                if members.contains(ancestor) { return false }
                current = parent(ancestor); steps += 1
            }
            return true
        }
    }

    /// Finds `rootPID` again (the members changed): the one member whose parent is not a member,
    /// where there is one such; else the lowest PID.
    package func findRoot(parentOf: (Int32) -> Int32?) {
        let members = pids, set = Set(members)
        let roots = members.filter { pid in parentOf(pid).map { !set.contains($0) } ?? true }
        rootPID = roots.count == 1 ? roots[0] : members.first
    }

    /// Lets `pid` go; what it spent stays in the totals.
    package func retire(_ pid: Int32) {
        if let last = lastCumulative[pid] {
            retired.cpu &+= last.cpu; retired.user &+= last.user; retired.system &+= last.system
        }
        lastCumulative[pid] = nil
        if let last = lastNetwork.removeValue(forKey: pid) {
            retiredNetwork.sent &+= last.sent; retiredNetwork.received &+= last.received; retiredNetwork.retransmits &+= last.retransmits
            retiredNetwork.opened &+= last.opened
        }
        samplers[pid] = nil
        if rootPID == pid { rootPID = nil }
    }

    /// The members' RSS summed, from their `statm` alone (`ProcessSampler.residentBytes`); nil when
    /// the group is empty or a member needs a full sample (one ended). `countsOnce`: the target's
    /// memory is its PSS sum (`Sample.countsProcessesOnce`), which a full sample reads: this sum is
    /// then `rss_sum_bytes` alone.
    package func residentBytes() -> (bytes: UInt64, countsOnce: Bool)? {
        guard !samplers.isEmpty else { return nil }
        // The whole group's count too (one read): systemd removes a unit's group as soon as its
        // last process ends, and what the group counted since the last full read would go with it.
        _ = wholeGroupCPU()
        var total: UInt64 = 0
        for sampler in samplers.values {
            guard let bytes = sampler.residentBytes() else { return nil }
            total &+= bytes
        }
        return (total, isGroup || includeChildren)
    }

    /// The members summed; members that ended are retired. Nil while the group is empty.
    package func takeSample() -> Sample? {
        var combined: Sample?
        for (pid, sampler) in samplers {
            let sample = sampler.sample()
            if joinedLater.remove(pid) != nil {
                excluded.cpu &+= sample.cpuNanoseconds ?? 0
                excluded.user &+= sample.userTicks ?? 0
                excluded.system &+= sample.systemTicks ?? 0
            }
            // A member's network totals as last read, its end's too (what it leaves in the group's).
            if let net = sample.net?.value, let sent = net.txBytesTotal {
                lastNetwork[pid] = (sent, net.rxBytesTotal ?? 0, net.tcpRetransmitsTotal ?? 0, net.tcpConnectionsOpenedTotal ?? 0)
            }
            guard sample.alive || (includeChildren && sample.processCount > 0) else {
                // What it leaves in the totals: its last reading, a zombie's whole life's when caught.
                if let cpu = sample.cpuNanoseconds { lastCumulative[pid] = (cpu, sample.userTicks ?? 0, sample.systemTicks ?? 0) }
                lastEnded = sample
                if sample.endedByOOMKill {
                    lastOOMKill = "PID \(pid) " + Sample.killedByOOMKiller(limitBytes: sample.memoryLimitBytes)
                }
                retire(pid)
                continue
            }
            lastCumulative[pid] = (sample.cpuNanoseconds ?? 0, sample.userTicks ?? 0, sample.systemTicks ?? 0)
            combined = combined.map { Self.sum($0, sample) } ?? sample
        }
        // Read also when the last member has just ended: the group may still be there to say its last count.
        let whole = wholeGroupCPU()
        guard var group = combined else { return nil }
        group.countsProcessesOnce = group.countsProcessesOnce || isGroup
        // Cumulative totals include the processes that left the group: counters never go back.
        if let whole {
            group.cpuNanoseconds = shownCPU.update(reading: whole.cpuNanoseconds, at: group.monotonicNanoseconds)
            (group.userTicks, group.systemTicks) = (whole.userTicks, whole.systemTicks)
            group.groupMemory = readGroupMemory()
        } else {
            group.cpuNanoseconds = shownCPU.update(reading: Self.less((group.cpuNanoseconds ?? 0) &+ retired.cpu, excluded.cpu), at: group.monotonicNanoseconds)
            group.userTicks = Self.less((group.userTicks ?? 0) &+ retired.user, excluded.user)
            group.systemTicks = Self.less((group.systemTicks ?? 0) &+ retired.system, excluded.system)
        }
        if retiredNetwork != (0, 0, 0, 0), var net = group.net?.value {
            net.txBytesTotal = net.txBytesTotal.map { $0 &+ retiredNetwork.sent }
            net.rxBytesTotal = net.rxBytesTotal.map { $0 &+ retiredNetwork.received }
            net.tcpRetransmitsTotal = net.tcpRetransmitsTotal.map { $0 &+ retiredNetwork.retransmits }
            net.tcpConnectionsOpenedTotal = net.tcpConnectionsOpenedTotal.map { $0 &+ retiredNetwork.opened }
            group.net = NetworkFiguresBox(net)
        }
        // Not logged when it is not there: IP accounting off, or D-Bus refused to the packaged units'
        // dynamic user, is how most hosts run; the rows and recordings say why (net_unreported_reason).
        if let unitNetwork { group.net = unitNetwork.overlay(group.net, at: group.monotonicNanoseconds) }
        return group
    }

    /// The group's end once its last member has ended (nil before, and for a group that never
    /// had one): that member's last sample, with the totals of every member the group had. `attach
    /// --match` ends on it, as `attach PID` ends on its process's last sample; the daemon's target
    /// goes down instead.
    package func endSample() -> Sample? {
        guard samplers.isEmpty, var end = lastEnded else { return nil }
        if let whole = wholeGroupCPU() {
            end.cpuNanoseconds = shownCPU.update(reading: whole.cpuNanoseconds, at: end.monotonicNanoseconds, ended: true)
            (end.userTicks, end.systemTicks) = (whole.userTicks, whole.systemTicks)
        } else {
            end.cpuNanoseconds = shownCPU.update(reading: Self.less(retired.cpu, excluded.cpu), at: end.monotonicNanoseconds, ended: true)
            (end.userTicks, end.systemTicks) = (Self.less(retired.user, excluded.user), Self.less(retired.system, excluded.system))
        }
        if var net = end.net?.value {
            (net.txBytesTotal, net.rxBytesTotal) = (retiredNetwork.sent, retiredNetwork.received)
            (net.tcpRetransmitsTotal, net.tcpConnectionsOpenedTotal) = (retiredNetwork.retransmits, retiredNetwork.opened)
            end.net = NetworkFiguresBox(net)
        }
        end.countsProcessesOnce = true
        end.processCount = 0     // none runs (the last may be a zombie its parent has not reaped)
        return end
    }

    /// What a group takes from one member (`sum`'s first, the root where there is one), by the
    /// field's path in `Sample`: every other field combines its members' (a sum, a peak, the
    /// smallest, a merge), and a test holds every field to this (`DaemonUnitTests`): a new figure
    /// is combined, or said here to be one member's.
    package static let takenFromOneMember: Set<String> = [
        "monotonicNanoseconds", "wallSeconds",            // one tick's
        "processStartNanoseconds", "execsSeen",            // the root's
        "activity.everySecond.levels.fdsLimit",            // the root's limit
        // The group's control group, read once for it.
        "groupMemory.usedBytes", "groupMemory.workingSetBytes", "groupMemory.anonBytes", "groupMemory.fileBytes", "groupMemory.kernelBytes",
        "activity.everySecond.throttledNanoseconds", "activity.everySecond.pressure.cpuSome", "activity.everySecond.pressure.cpuFull",
        "activity.everySecond.pressure.memorySome", "activity.everySecond.pressure.memoryFull",
        "activity.everySecond.pressure.ioSome", "activity.everySecond.pressure.ioFull",
        // Said once for the group: the first member's that has one.
        "gpu.value.unreportedReason", "net.value.source", "net.value.unreportedReason", "memoryUnreportedReason",
    ]

    package static func sum(_ a: Sample, _ b: Sample) -> Sample {
        func add(_ x: UInt64?, _ y: UInt64?) -> UInt64? { x.map { $0 &+ (y ?? 0) } ?? y }
        var result = a
        result.alive = a.alive || b.alive
        result.stopped = a.stopped && b.stopped
        result.cpuNanoseconds = add(a.cpuNanoseconds, b.cpuNanoseconds)
        result.userTicks = add(a.userTicks, b.userTicks)
        result.systemTicks = add(a.systemTicks, b.systemTicks)
        result.residentBytes = add(a.residentBytes, b.residentBytes)
        result.virtualBytes = add(a.virtualBytes, b.virtualBytes)
        // PSS is known for the group only when known for every member; its age is the oldest reading's.
        result.proportionalBytes = a.proportionalBytes.flatMap { x in b.proportionalBytes.map { x &+ $0 } }
        result.proportionalReadAt = a.proportionalReadAt.map { Swift.min($0, b.proportionalReadAt ?? $0) } ?? b.proportionalReadAt
        result.countsProcessesOnce = a.countsProcessesOnce || b.countsProcessesOnce
        result.memoryUnreportedReason = a.memoryUnreportedReason ?? b.memoryUnreportedReason
        // Members mostly share one group (a unit's), whose count each reads: the largest, not a sum.
        result.oomKills = a.oomKills.map { Swift.max($0, b.oomKills ?? $0) } ?? b.oomKills
        result.oomKillAt = a.oomKillAt.map { Swift.max($0, b.oomKillAt ?? $0) } ?? b.oomKillAt
        result.threads = (a.threads ?? 0) + (b.threads ?? 0)
        // The tightest limit any member is under.
        result.memoryLimitBytes = a.memoryLimitBytes.map { Swift.min($0, b.memoryLimitBytes ?? $0) } ?? b.memoryLimitBytes
        result.cpuLimitCores = a.cpuLimitCores.map { Swift.min($0, b.cpuLimitCores ?? $0) } ?? b.cpuLimitCores
        result.processCount = a.processCount + b.processCount
        // The earliest member's start.
        result.startTicks = a.startTicks.map { Swift.min($0, b.startTicks ?? $0) } ?? b.startTicks
        result.activity = Activity.sum(a.activity, b.activity)
        result.gpu = GPUFigures.sum(a.gpu, b.gpu)
        result.net = NetworkFigures.sum(a.net, b.net)
        return result
    }

    private static func less(_ total: UInt64, _ part: UInt64) -> UInt64 { total > part ? total - part : 0 }

    /// `PID 7` or `PIDs 1, 2, …` (eight at most).
    package static func listing<S: Sequence>(_ pids: S) -> String where S.Element == Int32 {
        let sorted = pids.sorted()
        let shown = sorted.prefix(8).map { String($0) }.joined(separator: ", ")
        return (sorted.count == 1 ? "PID " : "PIDs ") + shown + (sorted.count > 8 ? ", …" : "")
    }
}
