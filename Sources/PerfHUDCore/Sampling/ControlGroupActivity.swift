#if canImport(Glibc)
import Glibc
#endif

/// Throttling and pressure of the control group a process is in, read about once a second:
/// `cpu.stat` of its cgroup v2 group (`throttled_usec`) or of its v1 `cpu` controller group
/// (`throttled_time`), and `cpu.pressure`, `memory.pressure`, `io.pressure` of its v2 group — on
/// a hybrid host under the v2 mount (`/sys/fs/cgroup/unified`). The groups are looked up from
/// `/proc/PID/cgroup` and perfhud's own mount table, again every ten seconds (a process may move).
final class ControlGroupActivity {
    let pid: Int32
    private var cpuStat: [KeptOpenFile] = []
    private var pressure: (cpu: KeptOpenFile?, memory: KeptOpenFile?, io: KeptOpenFile?) = (nil, nil, nil)
    /// Whether a CPU quota applies to the group (`cpu.max` not `max`, or `cpu.cfs_quota_us` ≠ -1).
    private var hasQuota = false
    private var resolvedAt: UInt64 = 0
    private var resolvedOnce = false
    /// `/proc/PID/cgroup` and the mount table as last resolved: unchanged (the usual case), the
    /// groups' files stay open and the mount table is not parsed again (measured: docs/benchmarks.md, "What the code's shape saves").
    /// The mount table is kept as its length and hash: a copy of it was 1.8 KiB a daemon target
    /// here (heaptrack), and as much more as a host has mounts.
    private var resolvedFrom: (groups: [UInt8], mounts: (count: Int, hash: Int))?
    private var quotaFiles: (unified: String?, cpu: String?) = (nil, nil)
    /// The process is in the root of the v2 hierarchy: that group's pressure is the whole
    /// machine's (it equals `/proc/pressure/*`), not the process's, so none is read for it. Not
    /// said as a warning: on a host without a service manager every process is there, and each
    /// run would say it (docs/figures.md does).
    private var inRootGroup = false

    init(pid: Int32) { self.pid = pid }

    deinit { closeAll() }

    private func closeAll() {
        for file in cpuStat { file.close() }
        cpuStat = []
        pressure.cpu?.close(); pressure.memory?.close(); pressure.io?.close()
        pressure = (nil, nil, nil)
    }

    func read(into activity: inout Activity.EverySecond, now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        if !resolvedOnce || now &- resolvedAt >= 10_000_000_000 { resolve(now: now) }
        var throttled: UInt64?
        for file in cpuStat {
            guard case .success(let count) = file.read(into: buffer) else { continue }
            let value = ProcParser.throttledNanoseconds(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            // A v2 group without the cpu controller has a cpu.stat without throttling: no quota there.
            throttled = (throttled ?? 0) &+ (value ?? 0)
        }
        activity.throttledNanoseconds = hasQuota ? throttled : throttled.map { _ in 0 }
        func totals(_ file: KeptOpenFile?) -> (some: UInt64, full: UInt64?)? {
            guard let file, case .success(let count) = file.read(into: buffer) else { return nil }
            return ProcParser.pressure(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        let cpu = totals(pressure.cpu), memory = totals(pressure.memory), io = totals(pressure.io)
        activity.pressure = PressureTotals()
        activity.pressure.cpuSome = cpu?.some; activity.pressure.cpuFull = cpu?.full
        activity.pressure.memorySome = memory?.some; activity.pressure.memoryFull = memory?.full
        activity.pressure.ioSome = io?.some; activity.pressure.ioFull = io?.full
    }

    /// The directories of the process's v2 group and v1 `cpu` group, through the mounts here.
    private func resolve(now: UInt64) {
        resolvedAt = now
        resolvedOnce = true
        guard case .success(let ownGroups) = KeptOpenFile.contents(of: "/proc/\(pid)/cgroup", limit: 65536),
              case .success(let mounts) = KeptOpenFile.contents(of: "/proc/self/mountinfo", limit: 1 << 20) else {
            closeAll(); resolvedFrom = nil; quotaFiles = (nil, nil); hasQuota = false
            return
        }
        let mountTable = (count: mounts.count, hash: mounts.hashValue)
        if let before = resolvedFrom, before.groups == ownGroups, before.mounts == mountTable { return readQuota() }
        closeAll()
        resolvedFrom = (ownGroups, mountTable)
        let directories = Self.directories(groups: String(decoding: ownGroups, as: UTF8.self), mountInfo: String(decoding: mounts, as: UTF8.self))
        quotaFiles = (directories.unified.map { $0 + "/cpu.max" }, directories.cpu.map { $0 + "/cpu.cfs_quota_us" })
        inRootGroup = false
        if let unified = directories.unified {
            if case .success(let file) = KeptOpenFile.open(unified + "/cpu.stat") { cpuStat.append(file) }
            // Every group but the hierarchy's root has `cgroup.events`; the root of a cgroup
            // namespace (a container's own group) has it too, and its pressure is the container's.
            inRootGroup = access(unified + "/cgroup.events", F_OK) != 0
        }
        if let unified = directories.unified, !inRootGroup {
            if case .success(let file) = KeptOpenFile.open(unified + "/cpu.pressure") { pressure.cpu = file }
            if case .success(let file) = KeptOpenFile.open(unified + "/memory.pressure") { pressure.memory = file }
            if case .success(let file) = KeptOpenFile.open(unified + "/io.pressure") { pressure.io = file }
        }
        if let cpu = directories.cpu, case .success(let file) = KeptOpenFile.open(cpu + "/cpu.stat") { cpuStat.append(file) }
        readQuota()
    }

    /// Whether a quota applies now (one may be set or lifted at any time): read at every resolve.
    private func readQuota() {
        hasQuota = false
        if let path = quotaFiles.unified, case .success(let text) = KeptOpenFile.contents(of: path, limit: 256),
           !String(decoding: text, as: UTF8.self).hasPrefix("max") { hasQuota = true }
        if let path = quotaFiles.cpu, case .success(let text) = KeptOpenFile.contents(of: path, limit: 64),
           !String(decoding: text, as: UTF8.self).hasPrefix("-1") { hasQuota = true }
    }

    /// Where the groups of `/proc/PID/cgroup` (`groups`) are mounted (`mountInfo`, of this
    /// mount namespace): the v2 group's directory and the v1 `cpu` controller group's.
    static func directories(groups: String, mountInfo: String) -> (unified: String?, cpu: String?) {
        var unifiedGroup: String?, cpuGroup: String?
        for group in ProcessControlGroup.parse(groups) {
            if group.isUnified { unifiedGroup = String(group.path) }
            if group.has(controller: "cpu") { cpuGroup = String(group.path) }
        }
        var unified: String?, cpu: String?
        for mount in ControlGroupMount.parse(mountInfo) {
            if mount.isUnified, unified == nil, let group = unifiedGroup { unified = mount.directory(of: group) }
            if mount.has(controller: "cpu"), cpu == nil, let group = cpuGroup { cpu = mount.directory(of: group) }
        }
        return (unified, cpu)
    }
}
