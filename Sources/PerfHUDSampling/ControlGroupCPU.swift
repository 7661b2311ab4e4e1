#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The CPU time a control group has used: every process that ever was in it, the ones that lived
/// for less than a tick too. Nanoseconds; the split in clock ticks, as `/proc/PID/stat` gives it.
public struct ControlGroupUsage: Equatable {
    public var cpuNanoseconds: UInt64
    public var userTicks: UInt64
    public var systemTicks: UInt64

    public init(cpuNanoseconds: UInt64, userTicks: UInt64, systemTicks: UInt64) {
        (self.cpuNanoseconds, self.userTicks, self.systemTicks) = (cpuNanoseconds, userTicks, systemTicks)
    }

    /// Both counts added (a group's count after what earlier groups counted).
    public static func + (a: ControlGroupUsage, b: ControlGroupUsage) -> ControlGroupUsage {
        ControlGroupUsage(cpuNanoseconds: a.cpuNanoseconds &+ b.cpuNanoseconds, userTicks: a.userTicks &+ b.userTicks,
                          systemTicks: a.systemTicks &+ b.systemTicks)
    }
}

/// A control group of its own for the program `run --include-children` launches: the kernel counts
/// the CPU time of the whole tree there as it is spent (`cpu.stat` usage_usec in cgroup v2,
/// `cpuacct.usage` in v1), exact to the microsecond, whereas `/proc` only shows a child's time once
/// its parent has reaped it, in one lump, and never shows a child that lived between two looks.
///
/// Made where the system allows: under perfhud's own v2 group (a delegated subtree, or as root),
/// at the top of the v2 hierarchy (root), in the v1 `cpuacct` hierarchy (root). The group is
/// created empty; the program joins it between fork and exec (see `perfhud_spawn_job`), so its
/// children are born in it. It is removed when the last user lets go of it, or at exit; a group
/// left behind by a perfhud that was killed is removed by the next one (see `sweepStale`).
public final class ControlGroupCPU {
    public enum Hierarchy: String { case unified = "cgroup2", cpuacct = "cgroup1-cpuacct" }

    /// Set (to anything but empty or 0) to make no group: `--include-children` then counts
    /// children from `/proc` as `attach` does. For tests and troubleshooting.
    public static let disablingVariable = "PERFHUD_NO_CGROUP"

    public let hierarchy: Hierarchy
    /// The group's directory.
    public let path: String
    /// Its path inside the hierarchy, as `/proc/PID/cgroup` shows it.
    package let hierarchyPath: String
    private let usageFile: KeptOpenFile
    /// cgroup v1's user/system split (`cpuacct.stat`, clock ticks); v2 has it in `cpu.stat`.
    private let splitFile: KeptOpenFile?
    /// Kept open in v2 only: v1 keeps the list of a descriptor from its first read for as long
    /// as it is read again within a second (`cgroup_pidlist_start`), so it is opened each time there.
    private let membersFile: KeptOpenFile
    private var buffer: UnsafeMutableRawBufferPointer
    private var removed = false
    /// Made by perfhud (`make`, removed at the end), or someone else's it reads (`existing`).
    private let owned: Bool
    private let ticksPerSecond = ProcessDirectory.ticksPerSecond

    private static let prefix = "perfhud-run-"

    private init(hierarchy: Hierarchy, path: String, hierarchyPath: String,
                 usageFile: KeptOpenFile, splitFile: KeptOpenFile?, membersFile: KeptOpenFile, owned: Bool = true) {
        self.owned = owned
        self.hierarchy = hierarchy
        self.path = path
        self.hierarchyPath = hierarchyPath
        self.usageFile = usageFile
        self.splitFile = splitFile
        self.membersFile = membersFile
        buffer = .allocate(byteCount: 4096, alignment: 16)
        if owned { PendingRemovals.add(path) }
    }

    deinit {
        remove()
        buffer.deallocate()
    }

    // MARK: making one

    /// A new, empty group in the first place that allows it, or nil (not root, no delegated
    /// subtree, no cgroup file system, or disabled by `PERFHUD_NO_CGROUP`).
    public static func make() -> ControlGroupCPU? {
        if environmentFlag(disablingVariable) { return nil }
        let name = prefix + String(getpid())
        for place in candidatePlaces() {
            sweepStale(in: place.directory)
            let directory = place.directory + "/" + name
            if mkdir(directory, 0o755) != 0 {
                guard errno == EEXIST, rmdir(directory) == 0, mkdir(directory, 0o755) == 0 else { continue }
            }
            let hierarchyPath = (place.hierarchyPath == "/" ? "" : place.hierarchyPath) + "/" + name
            if let group = open(place.hierarchy, directory: directory, hierarchyPath: hierarchyPath) { return group }
            _ = rmdir(directory)
        }
        return nil
    }

    /// Someone else's group (a container's, a unit's: `group` as `/proc/PID/cgroup` names it), read
    /// and never removed: in the v2 hierarchy (at the root, or `unified` on a hybrid host, where a
    /// group without controllers still counts its usage), else in v1's `cpuacct`. Nil where it is
    /// in none of them, or unreadable.
    public static func existing(group: String) -> ControlGroupCPU? {
        var status = stat()
        let unified = stat("/sys/fs/cgroup/cgroup.controllers", &status) == 0 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified"
        let places: [(Hierarchy, String)] = [(.unified, unified), (.cpuacct, "/sys/fs/cgroup/cpuacct"), (.cpuacct, "/sys/fs/cgroup/cpu,cpuacct")]
        for (hierarchy, mount) in places where stat(mount + group, &status) == 0 {
            if let found = open(hierarchy, directory: mount + group, hierarchyPath: group, owned: false) { return found }
        }
        return nil
    }

    private static func open(_ hierarchy: Hierarchy, directory: String, hierarchyPath: String, owned: Bool = true) -> ControlGroupCPU? {
        // Joining takes write access to cgroup.procs here (and, in v2, in the common ancestor,
        // which is where we are: a group made beside us but not writable by us is of no use).
        guard !owned || access(directory + "/cgroup.procs", W_OK) == 0,
              case .success(let members) = KeptOpenFile.open(directory + "/cgroup.procs") else { return nil }
        let usageName = hierarchy == .unified ? "cpu.stat" : "cpuacct.usage"
        guard case .success(let usage) = KeptOpenFile.open(directory + "/" + usageName) else { members.close(); return nil }
        var split: KeptOpenFile?
        if hierarchy == .cpuacct, case .success(let file) = KeptOpenFile.open(directory + "/cpuacct.stat") { split = file }
        let group = ControlGroupCPU(hierarchy: hierarchy, path: directory, hierarchyPath: hierarchyPath,
                                    usageFile: usage, splitFile: split, membersFile: members, owned: owned)
        guard group.usage() != nil else { return nil }     // deinit removes the directory (ours)
        return group
    }

    package struct Place: Equatable {
        package var hierarchy: Hierarchy
        /// Where the new group goes.
        package var directory: String
        /// That directory's path inside the hierarchy.
        package var hierarchyPath: String
    }

    /// Where a group may go, best first: beside perfhud in v2 (works in a delegated subtree
    /// without root; its parent has no controllers enabled, so the group changes no scheduling),
    /// the top of v2, then v1 cpuacct, beside perfhud and at the top.
    package static func candidatePlaces(mountInfo: String? = nil, ownGroups: String? = nil) -> [Place] {
        let mounts = mountInfo ?? text(of: "/proc/self/mountinfo")
        let groups = ownGroups ?? text(of: "/proc/self/cgroup")
        var unifiedOwn: String?, cpuacctOwn: String?
        for group in ProcessControlGroup.parse(groups) {
            if group.isUnified { unifiedOwn = String(group.path) }
            if group.has(controller: "cpuacct") { cpuacctOwn = String(group.path) }
        }
        var unified: [Place] = [], cpuacct: [Place] = []
        for mount in ControlGroupMount.parse(mounts) {
            let isUnified = mount.isUnified
            guard isUnified || mount.has(controller: "cpuacct"), let own = isUnified ? unifiedOwn : cpuacctOwn else { continue }
            let hierarchy: Hierarchy = isUnified ? .unified : .cpuacct
            var places: [Place] = []
            // perfhud's own group, seen through this mount (whose root may be a sub-group).
            if let directory = mount.directory(of: own) {
                places.append(Place(hierarchy: hierarchy, directory: directory, hierarchyPath: own))
            }
            let top = Place(hierarchy: hierarchy, directory: mount.mountPoint, hierarchyPath: mount.root)
            if !places.contains(top) { places.append(top) }
            if isUnified { unified += places } else { cpuacct += places }
        }
        return unified + cpuacct
    }

    /// Removes groups of ours whose perfhud is gone (killed before it could remove them). A group
    /// that still has processes stays (rmdir fails): its perfhud's program outlived it.
    static func sweepStale(in directory: String) {
        guard let listing = opendir(directory) else { return }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix), let owner = Int32(name.dropFirst(prefix.count)), owner != getpid() else { continue }
            if kill(owner, 0) != 0 && errno == ESRCH { _ = rmdir(directory + "/" + name) }
        }
    }

    // MARK: using it

    /// A write-only descriptor of the group's `cgroup.procs` for the program to join by
    /// (close-on-exec), or -1. The caller closes it.
    public func joiningDescriptor() -> Int32 {
        switch retryingInterrupts({ Glibc.open(path + "/cgroup.procs", O_WRONLY | O_CLOEXEC) }) {
        case .success(let descriptor): return descriptor
        case .failure: return -1
        }
    }

    /// Whether `pid` is in the group (`/proc/PID/cgroup`): the check that joining worked.
    public func contains(pid: Int32) -> Bool {
        ProcessControlGroup.parse(Self.text(of: "/proc/\(pid)/cgroup")).contains { group in
            group.path == hierarchyPath && (hierarchy == .unified ? group.isUnified : group.has(controller: "cpuacct"))
        }
    }

    /// The group's CPU time so far; nil once it is removed or unreadable.
    public func usage() -> ControlGroupUsage? {
        guard !removed, case .success(let count) = usageFile.read(into: buffer) else { return nil }
        let text = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        switch hierarchy {
        case .unified:
            guard let usage = Self.value(of: "usage_usec", in: text) else { return nil }
            let user = Self.value(of: "user_usec", in: text) ?? 0, system = Self.value(of: "system_usec", in: text) ?? 0
            return ControlGroupUsage(cpuNanoseconds: usage &* 1000,
                                     userTicks: user &* ticksPerSecond / 1_000_000,
                                     systemTicks: system &* ticksPerSecond / 1_000_000)
        case .cpuacct:
            guard let usage = Self.number(at: 0, in: text) else { return nil }
            var result = ControlGroupUsage(cpuNanoseconds: usage, userTicks: 0, systemTicks: 0)
            if let splitFile, case .success(let count) = splitFile.read(into: buffer) {
                let split = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                result.userTicks = Self.value(of: "user", in: split) ?? 0
                result.systemTicks = Self.value(of: "system", in: split) ?? 0
            }
            return result
        }
    }

    /// The processes in the group now (`cgroup.procs`), into `pids`; false when unreadable.
    public func members(into pids: inout [Int32]) -> Bool {
        pids.removeAll(keepingCapacity: true)
        guard !removed else { return false }
        var file = membersFile
        if hierarchy == .cpuacct {
            guard case .success(let fresh) = KeptOpenFile.open(path + "/cgroup.procs") else { return false }
            file = fresh
        }
        defer { if hierarchy == .cpuacct { file.close() } }
        while true {
            guard case .success(let count) = file.read(into: buffer) else { return false }
            if count == buffer.count {       // more than fits: a bigger buffer, and again
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                buffer.deallocate()
                buffer = bigger
                continue
            }
            var value: Int32 = 0, inNumber = false
            for byte in UnsafeRawBufferPointer(rebasing: buffer[0..<count]) {
                if byte >= 48 && byte <= 57 {
                    value = value &* 10 &+ Int32(byte - 48); inNumber = true
                } else {
                    if inNumber { pids.append(value) }
                    value = 0; inNumber = false
                }
            }
            if inNumber { pids.append(value) }
            return true
        }
    }

    /// Removes the group (after its last read). Processes still in it keep it (rmdir fails with
    /// EBUSY): a program that has just ended may take a moment to leave, so a few tries; after
    /// that it is left to the next perfhud's sweep.
    public func remove() {
        guard !removed else { return }
        removed = true
        usageFile.close(); splitFile?.close(); membersFile.close()
        guard owned else { return }
        Self.removeDirectory(path)
        PendingRemovals.remove(path)
    }

    static func removeDirectory(_ path: String) {
        for attempt in 0..<10 {
            if rmdir(path) == 0 || errno == ENOENT { return }
            guard errno == EBUSY, attempt < 9 else { return }
            usleep(10_000)
        }
    }

    // MARK: text

    private static func text(of path: String) -> String {
        guard case .success(let data) = KeptOpenFile.contents(of: path, limit: 1 << 16) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The number after `key ` at the start of a line of `text` (`cpu.stat`, `cpuacct.stat`).
    package static func value(of key: StaticString, in text: UnsafeRawBufferPointer) -> UInt64? {
        let keyBytes = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < text.count {
            var lineEnd = lineStart
            while lineEnd < text.count && text[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let length = keyBytes.count
            if lineEnd - lineStart > length, text[lineStart + length] == UInt8(ascii: " "),
               memcmp(text.baseAddress! + lineStart, keyBytes.baseAddress!, length) == 0 {
                return number(at: lineStart + length + 1, in: text)
            }
            lineStart = lineEnd + 1
        }
        return nil
    }

    private static func number(at start: Int, in text: UnsafeRawBufferPointer) -> UInt64? {
        var index = start, value: UInt64 = 0, digits = 0
        while index < text.count, text[index] >= 48, text[index] <= 57 {
            value = value &* 10 &+ UInt64(text[index] - 48); index += 1; digits += 1
        }
        return digits > 0 ? value : nil
    }
}

/// Groups still to be removed when perfhud exits (`exit` runs no deinitializers). A group is made
/// and removed on any thread that runs a session (a daemon's targets'), and the list read at exit.
private enum PendingRemovals {
    private static let lock = Mutex()
    nonisolated(unsafe) private static var paths: [String] = []
    nonisolated(unsafe) private static var installed = false

    static func add(_ path: String) {
        lock.withLock {
            paths.append(path)
            if !installed {
                installed = true
                atexit { PendingRemovals.removeAll() }
            }
        }
    }

    static func remove(_ path: String) { lock.withLock { paths.removeAll { $0 == path } } }

    static func removeAll() {
        let all = lock.withLock { () -> [String] in
            defer { paths.removeAll() }
            return paths
        }
        for path in all { ControlGroupCPU.removeDirectory(path) }
    }
}
