/// The CPU a process may use, in cores: the smallest CPU quota of its control group and of every
/// group above it (a group's quota bounds all below it) — `cpu.max` of the v2 groups (`50000
/// 100000`: half a core; `max 100000`: none), `cpu.cfs_quota_us` over `cpu.cfs_period_us` of the
/// v1 `cpu` controller's (`-1`: none). What `docker run --cpus 0.5`, a pod's CPU limit and
/// systemd's `CPUQuota=` set. Nil where no group has a quota, or the files are not there. Read
/// once a second with the memory limit, from files kept open (`ControlGroupPlaces`).
package final class ControlGroupCPULimit {
    private let files: KeptGroupFiles

    package init(places: ControlGroupPlaces) { files = KeptGroupFiles(places: places, paths: Self.quotaPaths) }

    /// The limit now, in cores; nil where none applies.
    package func read(now: UInt64, buffer: UnsafeMutableRawBufferPointer) -> Double? {
        let open = files.refreshed(now: now)
        var texts: [String: String] = [:]
        for (file, path) in zip(open, files.openedPaths) {
            guard case .success(let count) = file.read(into: buffer) else { continue }
            texts[path] = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), as: UTF8.self)
        }
        return Self.smallest(texts)
    }

    /// The quota files of the groups in `directories` and of those above them, the group's first.
    package static func quotaPaths(_ directories: ControlGroupPlaces.Directories) -> [String] {
        var paths: [String] = []
        if let group = directories.unified, let top = directories.unifiedMount {
            paths += ControlGroupPlaces.groupAndAncestors(group, upTo: top).map { $0 + "/cpu.max" }
        }
        if let group = directories.cpu, let top = directories.cpuMount {
            for directory in ControlGroupPlaces.groupAndAncestors(group, upTo: top) {
                paths += [directory + "/cpu.cfs_quota_us", directory + "/cpu.cfs_period_us"]
            }
        }
        return paths
    }

    /// The smallest quota the files' texts (by path) give, in cores; nil where none does.
    package static func smallest(_ texts: [String: String]) -> Double? {
        var smallest: Double?
        for (path, text) in texts {
            var cores: Double?
            if path.hasSuffix("/cpu.max") {
                cores = cpuMax(text)
            } else if path.hasSuffix("/cpu.cfs_quota_us") {
                let directory = path.dropLast("/cpu.cfs_quota_us".count)
                if let period = texts[directory + "/cpu.cfs_period_us"] { cores = quota(text, period: period) }
            }
            if let cores { smallest = Swift.min(smallest ?? cores, cores) }
        }
        return smallest
    }

    /// `cpu.max`: `QUOTA PERIOD` in microseconds, or `max PERIOD` (none).
    package static func cpuMax(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let quota = Double(fields[0]), let period = Double(fields[1]), quota > 0, period > 0 else { return nil }
        return quota / period
    }

    /// v1: `cpu.cfs_quota_us` (`-1`: none) over `cpu.cfs_period_us`.
    package static func quota(_ quota: String, period: String) -> Double? {
        guard let quota = Double(quota.trimmingTrailingNewline), let period = Double(period.trimmingTrailingNewline),
              quota > 0, period > 0 else { return nil }
        return quota / period
    }
}

private extension String {
    var trimmingTrailingNewline: Substring { self[...].prefix { $0 != "\n" && $0 != " " } }
}
