/// The memory limit a process is under: the smallest limit of its control group and of every group
/// above it (a group's limit bounds all below it) — `memory.max` of the v2 groups (on a pure v2
/// host, in a container), `memory.limit_in_bytes` of the v1 `memory` controller's (on v1 and hybrid
/// hosts, such as Debian 12 under an older service manager). Nil where none applies: no group has
/// a limit, or the files are not there (a v2 group whose parent has not enabled the memory
/// controller has no `memory.max`). Read once a second from files kept open, reopened when the
/// process's groups change (`ControlGroupPlaces`).
package final class ControlGroupMemoryLimit {
    private let files: KeptGroupFiles

    package init(places: ControlGroupPlaces) { files = KeptGroupFiles(places: places, paths: Self.limitPaths) }

    /// The limit now, in bytes; nil where unlimited or not known.
    package func read(now: UInt64, buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        Self.smallest(in: files.refreshed(now: now), buffer: buffer)
    }

    /// The limit files of the groups in `directories` and of those above them, the group's first.
    package static func limitPaths(_ directories: ControlGroupPlaces.Directories) -> [String] {
        var paths: [String] = []
        if let group = directories.unified, let top = directories.unifiedMount {
            paths += ControlGroupPlaces.groupAndAncestors(group, upTo: top).map { $0 + "/memory.max" }
        }
        if let group = directories.memory, let top = directories.memoryMount {
            paths += ControlGroupPlaces.groupAndAncestors(group, upTo: top).map { $0 + "/memory.limit_in_bytes" }
        }
        return paths
    }

    /// The smallest limit the files hold now; nil where none does.
    package static func smallest(in files: [KeptOpenFile], buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        var smallest: UInt64?
        for file in files {
            guard case .success(let count) = file.read(into: buffer),
                  let limit = limit(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { continue }
            smallest = Swift.min(smallest ?? limit, limit)
        }
        return smallest
    }

    /// v1 writes "no limit" as the largest count of pages it can hold times the page size
    /// (9223372036854771712 on x86-64), not as a word; anything from 2^62 up is taken as none.
    static let unlimitedFrom: UInt64 = 1 << 62

    /// A limit file's text: a decimal number of bytes, or `max` (v2: none). Nil for none, or for
    /// text that is neither.
    package static func limit(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        var value: UInt64 = 0, digits = 0
        for byte in bytes {
            guard byte >= 48 && byte <= 57 else { break }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - 48))
            if overflow1 || overflow2 { return nil }
            value = sum; digits += 1
        }
        guard digits > 0, value < unlimitedFrom else { return nil }
        return value
    }
}
