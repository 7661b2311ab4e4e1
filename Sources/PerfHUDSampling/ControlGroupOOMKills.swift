import PerfHUDSupport

/// How many processes the OOM killer killed in a process's control group: `oom_kill` of the
/// group's own `memory.events` (cgroup v2) or `memory.oom_control` (the v1 memory controller,
/// Linux 4.13+). The kernel counts a kill in the victim's group (and, on v2, in those above it),
/// whichever limit ran out — the group's, one above it, or the machine's. Read from files kept
/// open, reopened when the process's groups change (`ControlGroupPlaces`), and readable after
/// the process is gone: the group outlives it, and so the count of the kill that ended it.
package final class ControlGroupOOMKills {
    private let files: KeptGroupFiles

    package init(places: ControlGroupPlaces) { files = KeptGroupFiles(places: places, paths: Self.countPaths) }

    /// The group's count now; nil where no file has it (no memory controller on the group).
    package func read(now: UInt64, buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        _ = files.refreshed(now: now)
        return readOpenFiles(buffer: buffer)
    }

    /// The count from the files already open, the groups not looked up again: after the target
    /// ended (its `/proc/PID/cgroup` is gone with it).
    package func readOpenFiles(buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        for file in files.files {
            guard case .success(let count) = file.read(into: buffer),
                  let kills = ControlGroupCPU.value(of: "oom_kill", in: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { continue }
            return kills
        }
        return nil
    }

    /// The files that count the group's kills, the v2 group's first.
    package static func countPaths(_ directories: ControlGroupPlaces.Directories) -> [String] {
        [directories.unified.map { $0 + "/memory.events" }, directories.memory.map { $0 + "/memory.oom_control" }].compactMap { $0 }
    }
}

extension Sample {
    /// How an OOM kill that ended a target is said at every sink (the rows, the HUD, the summary,
    /// `report`, the daemon's journal): `killed by the OOM killer (group limit 32 MiB)`.
    public static func killedByOOMKiller(limitBytes: UInt64?) -> String {
        "killed by the OOM killer" + (limitBytes.map { " (group limit " + Units.bytes(Double($0)) + ")" } ?? "")
    }
}

/// The OOM kills of a target's group since perfhud began to watch it, and when the count last
/// rose: what says that a target which ended was killed for memory (`Sample.oomKills`).
package struct OOMKillCount {
    private var first: UInt64?
    package private(set) var sinceWatching: UInt64?
    package private(set) var lastRiseAt: UInt64?

    package init() {}

    package mutating func note(_ count: UInt64?, at now: UInt64) {
        guard let count else { return }
        let base = first ?? count
        first = base
        let kills = count >= base ? count - base : 0
        if let before = sinceWatching, kills > before { lastRiseAt = now }
        sinceWatching = kills
    }
}
