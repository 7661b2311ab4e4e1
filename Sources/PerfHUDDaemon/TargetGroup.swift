import PerfHUDSampling
import PerfHUDPipeline

/// The daemon's target as one sample source: one sampler per root process (a `--match` or `--unit`
/// group has several), summed. The CPU of processes that left the group stays in the totals, so
/// the counters never go back.
final class TargetGroup: SampleSource {
    private(set) var samplers: [Int32: ProcessSampler] = [:]
    private let includeChildren: Bool
    private var retired = (cpu: UInt64(0), user: UInt64(0), system: UInt64(0))
    private var lastCumulative: [Int32: (cpu: UInt64, user: UInt64, system: UInt64)] = [:]
    /// The network totals of members that left, and each member's last (a group's totals never go back).
    private var retiredNetwork = (sent: UInt64(0), received: UInt64(0), retransmits: UInt64(0), opened: UInt64(0))
    private var lastNetwork: [Int32: (sent: UInt64, received: UInt64, retransmits: UInt64, opened: UInt64)] = [:]
    /// The command name of the root (`rootPID`), looked up when the members change.
    var commandName = ""
    /// The member every other one descends from (nginx's master above its workers) where the group
    /// is one process tree, else the lowest PID: what `perfhud_target_info{pid}` names, and so what
    /// `perfhud top` opens (with `--include-children` when that tree is what the row counts).
    private(set) var rootPID: Int32?
    /// A `--unit` target's IP accounting (systemd's counters), laid over the members' TCP figures.
    var unitNetwork: NetworkWatch?

    /// Whether the target is a group of processes (`--match`, `--unit`) rather than one process
    /// (and, with `--include-children`, its tree): a group's memory is its PSS sum
    /// (`Sample.countsProcessesOnce`) however many members it has at the moment.
    private let isGroup: Bool

    init(includeChildren: Bool, isGroup: Bool) {
        self.includeChildren = includeChildren
        self.isGroup = isGroup
    }

    /// How the last member that ended was killed for memory, for the journal's line when the
    /// target goes away (its tick is then absent): `killed by the OOM killer (group limit 32 MiB)`.
    private(set) var lastOOMKill: String?

    var isEmpty: Bool { samplers.isEmpty }
    var pids: [Int32] { samplers.keys.sorted() }
    var currentCommandName: String? { samplers.isEmpty ? nil : commandName }

    func takeNotes() -> [String] { samplers.values.flatMap { $0.takeNotes() } }

    func contains(_ pid: Int32) -> Bool { samplers[pid] != nil }
    func add(_ sampler: ProcessSampler) { samplers[sampler.pid] = sampler }

    /// Finds `rootPID` again (the members changed): the one member whose parent is not a member,
    /// where there is one such; else the lowest PID.
    func findRoot(parentOf: (Int32) -> Int32?) {
        let members = pids, set = Set(members)
        let roots = members.filter { pid in parentOf(pid).map { !set.contains($0) } ?? true }
        rootPID = roots.count == 1 ? roots[0] : members.first
    }

    /// Lets `pid` go; what it spent stays in the totals.
    func retire(_ pid: Int32) {
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
    func residentBytes() -> (bytes: UInt64, countsOnce: Bool)? {
        guard !samplers.isEmpty else { return nil }
        var total: UInt64 = 0
        for sampler in samplers.values {
            guard let bytes = sampler.residentBytes() else { return nil }
            total &+= bytes
        }
        return (total, isGroup || includeChildren)
    }

    /// The members summed; members that ended are retired. Nil while the group is empty.
    func takeSample() -> Sample? {
        var combined: Sample?
        for (pid, sampler) in samplers {
            let sample = sampler.sample()
            guard sample.alive || (includeChildren && sample.processCount > 0) else {
                // What it leaves in the totals: its last reading, a zombie's whole life's when caught.
                if let cpu = sample.cpuNanoseconds { lastCumulative[pid] = (cpu, sample.userTicks ?? 0, sample.systemTicks ?? 0) }
                if sample.endedByOOMKill {
                    lastOOMKill = "PID \(pid) " + Sample.killedByOOMKiller(limitBytes: sample.memoryLimitBytes)
                }
                retire(pid)
                continue
            }
            lastCumulative[pid] = (sample.cpuNanoseconds ?? 0, sample.userTicks ?? 0, sample.systemTicks ?? 0)
            if let net = sample.net?.value, let sent = net.txBytesTotal {
                lastNetwork[pid] = (sent, net.rxBytesTotal ?? 0, net.tcpRetransmitsTotal ?? 0, net.tcpConnectionsOpenedTotal ?? 0)
            }
            combined = combined.map { Self.sum($0, sample) } ?? sample
        }
        guard var group = combined else { return nil }
        group.countsProcessesOnce = group.countsProcessesOnce || isGroup
        // Cumulative totals include the processes that left the group: counters never go back.
        group.cpuNanoseconds = (group.cpuNanoseconds ?? 0) &+ retired.cpu
        group.userTicks = (group.userTicks ?? 0) &+ retired.user
        group.systemTicks = (group.systemTicks ?? 0) &+ retired.system
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

    /// What a group takes from one member (`sum`'s first, the root where there is one), by the
    /// field's path in `Sample`: every other field combines its members' (a sum, a peak, the
    /// smallest, a merge), and a test holds every field to this (`DaemonUnitTests`): a new figure
    /// is combined, or said here to be one member's.
    static let takenFromOneMember: Set<String> = [
        "monotonicNanoseconds", "wallSeconds",            // one tick's
        "processStartNanoseconds", "execsSeen",            // the root's
        "activity.everySecond.levels.fdsLimit",            // the root's limit
        // The group's control group, read once for it.
        "activity.everySecond.throttledNanoseconds", "activity.everySecond.pressure.cpuSome", "activity.everySecond.pressure.cpuFull",
        "activity.everySecond.pressure.memorySome", "activity.everySecond.pressure.memoryFull",
        "activity.everySecond.pressure.ioSome", "activity.everySecond.pressure.ioFull",
        // Said once for the group: the first member's that has one.
        "gpu.value.unreportedReason", "net.value.source", "net.value.unreportedReason", "memoryUnreportedReason",
    ]

    static func sum(_ a: Sample, _ b: Sample) -> Sample {
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
        result.processCount = a.processCount + b.processCount
        // The earliest member's start.
        result.startTicks = a.startTicks.map { Swift.min($0, b.startTicks ?? $0) } ?? b.startTicks
        result.activity = Activity.sum(a.activity, b.activity)
        result.gpu = GPUFigures.sum(a.gpu, b.gpu)
        result.net = NetworkFigures.sum(a.net, b.net)
        return result
    }

    /// `PID 7` or `PIDs 1, 2, …` (eight at most).
    static func listing<S: Sequence>(_ pids: S) -> String where S.Element == Int32 {
        let sorted = pids.sorted()
        let shown = sorted.prefix(8).map { String($0) }.joined(separator: ", ")
        return (sorted.count == 1 ? "PID " : "PIDs ") + shown + (sorted.count > 8 ? ", …" : "")
    }
}
