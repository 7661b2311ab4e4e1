#if canImport(Glibc)
import Glibc
#endif

/// A control group's memory as the kernel counts it for the group (what its limit is held to, and
/// what `docker stats`, cAdvisor and the kubelet show), rather than as its processes' pages: page
/// cache the group's processes filled, kernel memory they caused (sockets, page tables), tmpfs
/// files they wrote, and the memory of processes that have left count here and in no `/proc` figure.
public struct GroupMemory: Equatable, Sendable {
    /// Everything charged to the group: v2 `memory.current`, v1 `memory.usage_in_bytes`.
    public var usedBytes: UInt64
    /// `usedBytes` less the inactive file cache (v2 `inactive_file`, v1 `total_inactive_file` of
    /// `memory.stat`): the kubelet's working set, its eviction figure, and `docker stats`' MEM USAGE.
    public var workingSetBytes: UInt64
    /// Anonymous memory (v2 `anon`, v1 `total_rss`), the file cache (v2 `file`, v1 `total_cache`:
    /// tmpfs and shared memory included) and kernel memory (v2 `kernel`, else its parts; v1
    /// `memory.kmem.usage_in_bytes`); nil where the group's files do not say.
    public var anonBytes: UInt64?
    public var fileBytes: UInt64?
    public var kernelBytes: UInt64?

    public init(usedBytes: UInt64, workingSetBytes: UInt64, anonBytes: UInt64? = nil, fileBytes: UInt64? = nil, kernelBytes: UInt64? = nil) {
        (self.usedBytes, self.workingSetBytes) = (usedBytes, workingSetBytes)
        (self.anonBytes, self.fileBytes, self.kernelBytes) = (anonBytes, fileBytes, kernelBytes)
    }
}

/// Reads a control group's memory (`GroupMemory`): the v2 group's where it has the memory
/// controller (`memory.current`: pure v2 hosts, containers), else the v1 `memory` controller's
/// group at the same path (v1 and hybrid hosts, such as this project's machines). Someone else's
/// group, read and never changed; its files are kept open.
package final class ControlGroupMemory {
    package enum Layout: Equatable { case unified, v1 }

    package let layout: Layout
    private let usageFile: KeptOpenFile
    private let statFile: KeptOpenFile
    /// v1 only: kernel memory has a file of its own there.
    private let kernelFile: KeptOpenFile?

    private init(layout: Layout, usage: KeptOpenFile, stat: KeptOpenFile, kernel: KeptOpenFile?) {
        (self.layout, usageFile, statFile, kernelFile) = (layout, usage, stat, kernel)
    }

    deinit {
        usageFile.close(); statFile.close(); kernelFile?.close()
    }

    /// The group `group` (as `/proc/PID/cgroup` names it, below the hierarchies' roots), or nil
    /// where no hierarchy has its memory counted (a v2 group whose parent did not enable the
    /// memory controller, a v1 host without the `memory` controller).
    package static func existing(group: String) -> ControlGroupMemory? {
        var status = stat()
        let unified = stat("/sys/fs/cgroup/cgroup.controllers", &status) == 0 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified"
        if let found = open(.unified, unified + group, usage: "memory.current", kernel: nil) { return found }
        return open(.v1, "/sys/fs/cgroup/memory" + group, usage: "memory.usage_in_bytes", kernel: "memory.kmem.usage_in_bytes")
    }

    private static func open(_ layout: Layout, _ directory: String, usage: String, kernel: String?) -> ControlGroupMemory? {
        guard case .success(let usageFile) = KeptOpenFile.open(directory + "/" + usage) else { return nil }
        guard case .success(let statFile) = KeptOpenFile.open(directory + "/memory.stat") else { usageFile.close(); return nil }
        let kernelFile = kernel.flatMap { try? KeptOpenFile.open(directory + "/" + $0).get() }
        return ControlGroupMemory(layout: layout, usage: usageFile, stat: statFile, kernel: kernelFile)
    }

    /// The group's memory now; nil once the group is gone or unreadable.
    package func read(buffer: UnsafeMutableRawBufferPointer) -> GroupMemory? {
        guard case .success(let count) = usageFile.read(into: buffer),
              let used = ControlGroupMemoryLimit.limit(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { return nil }
        var kernelBytes: UInt64?
        if let kernelFile, case .success(let count) = kernelFile.read(into: buffer) {
            kernelBytes = ControlGroupMemoryLimit.limit(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        guard case .success(let statCount) = statFile.read(into: buffer) else { return nil }
        return Self.memory(used: used, stat: UnsafeRawBufferPointer(rebasing: buffer[0..<statCount]), layout: layout, kernelBytes: kernelBytes)
    }

    /// The figures of `memory.stat`'s text (`stat`) and the group's usage.
    package static func memory(used: UInt64, stat: UnsafeRawBufferPointer, layout: Layout, kernelBytes: UInt64?) -> GroupMemory {
        func value(_ key: StaticString) -> UInt64? { ControlGroupCPU.value(of: key, in: stat) }
        switch layout {
        case .unified:
            let inactive = value("inactive_file") ?? 0
            // `kernel` (Linux 5.18 and later); before, the parts it sums.
            var kernel = value("kernel")
            if kernel == nil, let stack = value("kernel_stack") {
                kernel = stack &+ (value("pagetables") ?? 0) &+ (value("percpu") ?? 0) &+ (value("sock") ?? 0) &+ (value("slab") ?? 0)
            }
            return GroupMemory(usedBytes: used, workingSetBytes: used > inactive ? used - inactive : 0,
                               anonBytes: value("anon"), fileBytes: value("file"), kernelBytes: kernel)
        case .v1:
            let inactive = value("total_inactive_file") ?? 0
            return GroupMemory(usedBytes: used, workingSetBytes: used > inactive ? used - inactive : 0,
                               anonBytes: value("total_rss"), fileBytes: value("total_cache"), kernelBytes: kernelBytes)
        }
    }
}
