#if canImport(Glibc)
import Glibc
#endif

/// Throttling and pressure of the control group a process is in, read about once a second:
/// `cpu.stat` of its cgroup v2 group (`throttled_usec`) or of its v1 `cpu` controller group
/// (`throttled_time`), and `cpu.pressure`, `memory.pressure`, `io.pressure` of its v2 group — on
/// a hybrid host under the v2 mount (`/sys/fs/cgroup/unified`). Where the groups are:
/// `ControlGroupPlaces`, shared with the memory limit's reader.
final class ControlGroupActivity {
    private let places: ControlGroupPlaces
    private var cpuStat: [KeptOpenFile] = []
    private var pressure: (cpu: KeptOpenFile?, memory: KeptOpenFile?, io: KeptOpenFile?) = (nil, nil, nil)
    /// Whether a CPU quota applies to the group (`cpu.max` not `max`, or `cpu.cfs_quota_us` ≠ -1).
    private var hasQuota = false
    /// The `places.generation` the files were opened for.
    private var generation = -1
    /// When the quota was last read (it is read again every ten seconds: one may be set or
    /// lifted at any time). Its own clock: the memory limit's reader may be the one whose call
    /// looks the groups up again.
    private var quotaReadAt: UInt64?
    private var quotaFiles: (unified: String?, cpu: String?) = (nil, nil)
    /// The process is in the root of the v2 hierarchy: that group's pressure is the whole
    /// machine's (it equals `/proc/pressure/*`), not the process's, so none is read for it. Not
    /// said as a warning: on a host without a service manager every process is there, and each
    /// run would say it (docs/figures.md does).
    private var inRootGroup = false

    package init(places: ControlGroupPlaces) { self.places = places }

    deinit { closeAll() }

    private func closeAll() {
        for file in cpuStat { file.close() }
        cpuStat = []
        pressure.cpu?.close(); pressure.memory?.close(); pressure.io?.close()
        pressure = (nil, nil, nil)
    }

    package func read(into activity: inout Activity.EverySecond, now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        places.refresh(now: now)
        let reopened = places.generation != generation
        if reopened { reopen() }
        if reopened || quotaReadAt.map({ now &- $0 >= 10_000_000_000 }) ?? true {
            quotaReadAt = now
            readQuota()
        }
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

    /// Opens the files of the process's v2 group and v1 `cpu` group, where `places` says they are.
    private func reopen() {
        closeAll()
        generation = places.generation
        let directories = places.directories
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
    }

    /// Whether a quota applies now.
    private func readQuota() {
        hasQuota = false
        if let path = quotaFiles.unified, case .success(let text) = KeptOpenFile.contents(of: path, limit: 256),
           !String(decoding: text, as: UTF8.self).hasPrefix("max") { hasQuota = true }
        if let path = quotaFiles.cpu, case .success(let text) = KeptOpenFile.contents(of: path, limit: 64),
           !String(decoding: text, as: UTF8.self).hasPrefix("-1") { hasQuota = true }
    }
}
