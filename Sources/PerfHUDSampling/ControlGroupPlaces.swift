#if canImport(Glibc)
import Glibc
#endif

/// Where a process's control groups are, through this mount namespace: its v2 group's directory
/// and its v1 `cpu` and `memory` controller groups' (on a hybrid host both kinds; on a pure v2
/// host the v2 one alone). Looked up from `/proc/PID/cgroup` and perfhud's own mount table, again
/// every ten seconds (a process may move). One a target, shared by the readers of its groups'
/// files (`ControlGroupActivity`, `ControlGroupMemoryLimit`): each reopens its files when
/// `generation` changes.
package final class ControlGroupPlaces {
    package struct Directories: Equatable {
        package var unified: String?
        package var cpu: String?
        package var memory: String?
        /// The directory each one is mounted at, in the same order: the walk up to the top stops there.
        var unifiedMount: String?, memoryMount: String?, cpuMount: String?
    }

    package let pid: Int32
    package private(set) var directories = Directories()
    /// Changes each time `directories` may have (a reader reopens its files then).
    package private(set) var generation = 0
    private var resolvedAt: UInt64 = 0
    private var resolvedOnce = false
    /// `/proc/PID/cgroup` and the mount table as last resolved: unchanged (the usual case), the
    /// readers' files stay open and the mount table is not parsed again (measured:
    /// docs/benchmarks.md, "What the code's shape saves"). The mount table is kept as its length
    /// and hash: a copy of it was 1.8 KiB a daemon target here (heaptrack), and as much more as a
    /// host has mounts.
    private var resolvedFrom: (groups: [UInt8], mounts: (count: Int, hash: Int))?

    package init(pid: Int32) { self.pid = pid }

    /// Looks the directories up again when ten seconds have passed since the last time.
    package func refresh(now: UInt64) {
        guard !resolvedOnce || now &- resolvedAt >= 10_000_000_000 else { return }
        resolvedAt = now
        resolvedOnce = true
        guard case .success(let ownGroups) = KeptOpenFile.contents(of: "/proc/\(pid)/cgroup", limit: 65536),
              case .success(let mounts) = KeptOpenFile.contents(of: "/proc/self/mountinfo", limit: 1 << 20) else {
            if resolvedFrom != nil || directories != Directories() { generation += 1 }
            resolvedFrom = nil; directories = Directories()
            return
        }
        let mountTable = (count: mounts.count, hash: mounts.hashValue)
        if let before = resolvedFrom, before.groups == ownGroups, before.mounts == mountTable { return }
        resolvedFrom = (ownGroups, mountTable)
        directories = Self.directories(groups: String(decoding: ownGroups, as: UTF8.self), mountInfo: String(decoding: mounts, as: UTF8.self))
        generation += 1
    }

    /// Where the groups of `/proc/PID/cgroup` (`groups`) are mounted (`mountInfo`, of this
    /// mount namespace): the v2 group's directory and the v1 `cpu` and `memory` controller groups'.
    package static func directories(groups: String, mountInfo: String) -> Directories {
        var unifiedGroup: String?, cpuGroup: String?, memoryGroup: String?
        for group in ProcessControlGroup.parse(groups) {
            if group.isUnified { unifiedGroup = String(group.path) }
            if group.has(controller: "cpu") { cpuGroup = String(group.path) }
            if group.has(controller: "memory") { memoryGroup = String(group.path) }
        }
        var found = Directories()
        for mount in ControlGroupMount.parse(mountInfo) {
            if mount.isUnified, found.unified == nil, let group = unifiedGroup, let directory = mount.directory(of: group) {
                found.unified = directory; found.unifiedMount = mount.mountPoint
            }
            if mount.has(controller: "cpu"), found.cpu == nil, let group = cpuGroup, let directory = mount.directory(of: group) {
                found.cpu = directory; found.cpuMount = mount.mountPoint
            }
            if mount.has(controller: "memory"), found.memory == nil, let group = memoryGroup, let directory = mount.directory(of: group) {
                found.memory = directory; found.memoryMount = mount.mountPoint
            }
        }
        return found
    }

    /// `directory` and every directory above it up to `top` (the hierarchy's mount point), the
    /// group first. A directory outside `top` is alone.
    package static func groupAndAncestors(_ directory: String, upTo top: String) -> [String] {
        var result = [directory], current = directory
        while current.count > top.count, current.hasPrefix(top + "/"), let slash = current.lastIndex(of: "/") {
            current = String(current[..<slash])
            result.append(current)
        }
        return result
    }
}

/// The files of a process's groups a reader keeps open (`ControlGroupMemoryLimit`,
/// `ControlGroupOOMKills`): opened from `paths` of the places, and opened again when the
/// process's groups may have changed (`ControlGroupPlaces.generation`). A file that cannot be
/// opened is left out.
package final class KeptGroupFiles {
    private let places: ControlGroupPlaces
    private let paths: (ControlGroupPlaces.Directories) -> [String]
    package private(set) var files: [KeptOpenFile] = []
    /// The path of each file of `files`, in the same order.
    package private(set) var openedPaths: [String] = []
    private var generation = -1

    package init(places: ControlGroupPlaces, paths: @escaping (ControlGroupPlaces.Directories) -> [String]) {
        self.places = places
        self.paths = paths
    }

    deinit { closeAll() }

    private func closeAll() {
        for file in files { file.close() }
        files = []; openedPaths = []
    }

    /// The files now: the places looked up again when due, the files reopened when they moved.
    package func refreshed(now: UInt64) -> [KeptOpenFile] {
        places.refresh(now: now)
        if places.generation != generation {
            closeAll()
            generation = places.generation
            for path in paths(places.directories) {
                guard let file = try? KeptOpenFile.open(path).get() else { continue }
                files.append(file); openedPaths.append(path)
            }
        }
        return files
    }
}
