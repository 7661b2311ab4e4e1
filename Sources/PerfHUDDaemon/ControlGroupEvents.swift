import PerfHUDSupport
import PerfHUDSampling
#if canImport(Glibc)
import Glibc
#endif

/// Tells the daemon when a unit starts or stops, and when units appear under `system.slice`,
/// as it happens (inotify) instead of after the next poll.
///
/// - A unit's group in the v2 hierarchy has `cgroup.events`, whose `populated` line the kernel
///   changes (and notifies as a modification) when the group's first process arrives or its last
///   leaves: the moment a unit starts or stops. Hybrid hosts mirror units into
///   `/sys/fs/cgroup/unified`, which has it too; a pure v1 host has none (polling stays).
/// - Units appearing and going: systemd makes and removes a directory under `system.slice`,
///   which inotify reports as a creation or deletion in that directory (v1 and v2 alike).
///
/// Processes forking inside a populated group change no file that notifies, so the daemon still
/// re-reads a running unit's `cgroup.procs` every discovery interval; what this saves is the
/// delay (a unit is up or down at once, not up to 2 s later) and the directory read of
/// `system.slice` every 2 s for `--units`. Written by hand: no Swift package here wraps inotify,
/// and it is three system calls.
final class ControlGroupEvents {
    let descriptor: Int32
    /// What each watch is on (a `cgroup.events` file or a directory of units).
    private var paths: [Int32: String] = [:]
    private var watches: [String: Int32] = [:]

    /// Nil where inotify cannot be had (a limit reached, a seccomp filter): polling does it all.
    init?() {
        if getenv("PERFHUD_NO_INOTIFY") != nil { return nil }
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor < 0 { return nil }
    }

    deinit { close(descriptor) }

    /// The `cgroup.events` that notifies for a unit's group (`/system.slice/web.service`, below
    /// `root`), or nil on a hierarchy without one.
    static func eventsFile(root: String, group: String) -> String? {
        for hierarchy in [root, "/sys/fs/cgroup/unified"] {
            let path = hierarchy + group + "/cgroup.events"
            if access(path, R_OK) == 0 { return path }
        }
        return nil
    }

    /// Watches a `cgroup.events` file (modified) or a directory (entries made or removed).
    /// - Returns: whether it is watched (it may have gone meanwhile).
    /// Asked again each time a unit's group is found: a unit that restarted has a new group at
    /// the same path, and the kernel does not say that the old file went (kernfs keeps its inode
    /// while watched: no IN_IGNORED), so the path is watched anew whenever it names another file
    /// (the kernel gives the same watch for the same file).
    @discardableResult
    func watch(_ path: String, directory: Bool) -> Bool {
        let mask = directory ? UInt32(IN_CREATE | IN_DELETE | IN_ONLYDIR) : UInt32(IN_MODIFY)
        let watch = inotify_add_watch(descriptor, path, mask)
        guard watch >= 0 else { return false }
        if let old = watches[path], old != watch {
            inotify_rm_watch(descriptor, old)
            paths[old] = nil
        }
        paths[watch] = path
        watches[path] = watch
        return true
    }

    func isWatching(_ path: String) -> Bool { watches[path] != nil }

    /// The paths whose watches fired since the last call; `overflowed` when the kernel dropped
    /// events (then everything must be looked at).
    func drain() -> (changed: Set<String>, overflowed: Bool) {
        var changed = Set<String>()
        var overflowed = false
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            guard case .success(let count) = SystemCall.read(descriptor, into: UnsafeMutableRawBufferPointer(start: buffer, count: size)),
                  count > 0 else { break }   // EAGAIN: all read
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true; continue }
                guard let path = paths[event.wd] else { continue }
                if event.mask & UInt32(IN_IGNORED) != 0 {
                    // The file went with its group (the unit stopped): the watch is gone.
                    paths[event.wd] = nil
                    watches[path] = nil
                }
                changed.insert(path)
            }
        }
        return (changed, overflowed)
    }
}

extension TargetResolver {
    /// The unit's `cgroup.events` while its group exists and the hierarchy has one.
    var unitEventsFile: String? { unitGroupPath.flatMap { ControlGroupEvents.eventsFile(root: controlGroupRoot, group: $0) } }
}
