#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// Finds the live descendants of a process on every tick, for the price of one read of the
/// `/proc` directory: a process's parent is read (from its stat) once, when its PID first appears,
/// and remembered while that PID keeps appearing.
///
/// Why not libproc2 every tick: `procps_pids_reap` opens and parses the stat of *every* process
/// on each call, which on a busy machine costs milliseconds (see `perfhud benchmark-sampler
/// --discovery`). Why not `/proc/PID/task/TID/children`: it exists only with CONFIG_PROC_CHILDREN,
/// which common kernels (this one too) lack, and it needs one read per thread of every tracked process.
///
/// A process is a descendant when its parent was the root or a descendant when it was first
/// seen. It stays one when reparented (its parent died): it was started by the tree, and its time
/// is the tree's. A PID that dies and is reused between two scans keeps its old parent here;
/// the caller checks start times when it opens a process, and a child missed this way reaches the
/// totals through its parent's cutime/cstime like any child that lived less than a tick.
public final class DescendantScan {
    private struct Entry {
        var parent: Int32
        var startTicks: UInt64
        /// nil while not worked out yet.
        var inTree: Bool?
        var generation: UInt32
    }

    private var entries: [Int32: Entry] = [:]
    private var generation: UInt32 = 0
    private var fresh: [Int32] = []
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)

    public init() {}

    deinit { buffer.deallocate() }

    /// The descendants of `root` alive now, with their start times, into `result`.
    public func descendants(of root: Int32, into result: inout [(pid: Int32, startTicks: UInt64)]) {
        result.removeAll(keepingCapacity: true)
        guard let directory = opendir("/proc") else { return }
        generation &+= 1
        fresh.removeAll(keepingCapacity: true)
        var seen = 0
        while let entry = readdir(directory) {
            let pid = withUnsafeBytes(of: entry.pointee.d_name) { Self.pid(named: $0) }
            guard pid > 0 else { continue }
            if entries[pid] != nil {
                entries[pid]!.generation = generation
                seen += 1
            } else if let stat = readStat(pid) {
                entries[pid] = Entry(parent: stat.parentPID, startTicks: stat.startTicks, inTree: nil, generation: generation)
                fresh.append(pid)
                seen += 1
            }
        }
        closedir(directory)
        // Some are gone since the last scan.
        if entries.count > seen { entries = entries.filter { $0.value.generation == generation } }
        for pid in fresh where pid != root { _ = inTree(pid, root: root, depth: 0) }
        for (pid, entry) in entries where entry.inTree == true && pid != root {
            result.append((pid, entry.startTicks))
        }
    }

    /// Whether `pid` descends from `root`, worked out up its parents and remembered.
    private func inTree(_ pid: Int32, root: Int32, depth: Int) -> Bool {
        guard let entry = entries[pid] else { return false }
        if let known = entry.inTree { return known }
        let parent = entry.parent
        let answer: Bool
        if parent == root { answer = true }
        else if parent <= 1 || depth > 256 { answer = false }
        else { answer = inTree(parent, root: root, depth: depth + 1) }
        entries[pid]!.inTree = answer
        return answer
    }

    private func readStat(_ pid: Int32) -> ProcStat? {
        var path: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)    // "/proc/2147483647/stat" fits in 32 bytes
        return withUnsafeMutableBytes(of: &path) { raw -> ProcStat? in
            var at = 0
            func put(_ byte: UInt8) { raw[at] = byte; at += 1 }
            for byte in "/proc/".utf8 { put(byte) }
            var digits: [UInt8] = []
            var value = pid
            repeat { digits.append(UInt8(48 + value % 10)); value /= 10 } while value > 0
            for byte in digits.reversed() { put(byte) }
            for byte in "/stat".utf8 { put(byte) }
            put(0)
            guard case .success(let descriptor) = SystemCall.open(cPath: raw.baseAddress!.assumingMemoryBound(to: CChar.self), O_RDONLY) else {
                return nil
            }
            defer { close(descriptor) }
            guard case .success(let count) = SystemCall.read(descriptor, into: buffer), count > 0 else { return nil }
            return ProcParser.stat(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// The PID a `/proc` entry names, or 0 for the other entries (`self`, `meminfo`, …).
    private static func pid(named name: UnsafeRawBufferPointer) -> Int32 {
        var value: Int32 = 0
        for byte in name {
            if byte == 0 { break }
            guard byte >= 48 && byte <= 57, value < 214_748_364 else { return 0 }
            value = value * 10 + Int32(byte - 48)
        }
        return value
    }
}
