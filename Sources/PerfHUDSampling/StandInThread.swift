#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// A live thread of a process whose main thread has ended (`ProcStat.leaderEnded`), read in the
/// leader's place for what belongs to the whole process: its memory (`statm`, `status`,
/// `smaps_rollup`) and its descriptors (`fd`). The leader, a zombie, reads as having none of
/// either while the process runs on; every thread shares the process's. Its CPU is not read here:
/// the leader's `stat` times and CPU clock stay the whole group's.
package final class StandInThread {
    package let tid: Int32
    /// `/proc/PID/task/TID`: where the process's memory and files are read while this thread lives.
    package let path: String
    package let statm: KeptOpenFile

    private init(tid: Int32, path: String, statm: KeptOpenFile) {
        self.tid = tid
        self.path = path
        self.statm = statm
    }

    deinit { statm.close() }

    /// The first thread of `pid` other than the leader that still has the process's memory; nil
    /// when none has (every thread is ending, or the listing may not be read).
    package static func find(in pid: Int32, buffer: UnsafeMutableRawBufferPointer) -> StandInThread? {
        for tid in otherThreads(of: pid) {
            let path = "/proc/\(pid)/task/\(tid)"
            guard case .success(let statm) = KeptOpenFile.open(path + "/statm") else { continue }
            let thread = StandInThread(tid: tid, path: path, statm: statm)
            if thread.readStatm(buffer: buffer) != nil { return thread }
        }
        return nil
    }

    /// The command line of a process whose main thread has ended, as a live thread reads it (the
    /// leader's reads as empty then, which libproc2 shows as `[name] <defunct>`); nil otherwise.
    package static func commandLine(of pid: Int32) -> String? {
        guard ProcParser.stat(ofProcess: String(pid))?.leaderEnded == true else { return nil }
        for tid in otherThreads(of: pid) {
            guard case .success(let bytes) = KeptOpenFile.contents(of: "/proc/\(pid)/task/\(tid)/cmdline", limit: 1 << 16),
                  !bytes.isEmpty else { continue }
            return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
        }
        return nil
    }

    /// The threads of `pid` other than its leader, as `/proc/PID/task` lists them (none where it
    /// may not be listed). Only when the leader has ended: not on the per-tick path.
    private static func otherThreads(of pid: Int32) -> [Int32] {
        var tids: [Int32] = []
        forEachEntry(in: "/proc/\(pid)/task") { _, name in
            if let tid = Int32(name), tid != pid { tids.append(tid) }
        }
        return tids
    }

    /// The process's `statm` as this thread sees it; nil once the thread has ended (it has no
    /// memory then: a size of 0).
    package func readStatm(buffer: UnsafeMutableRawBufferPointer) -> ProcStatm? {
        guard case .success(let count) = statm.read(into: buffer),
              let parsed = ProcParser.statm(UnsafeRawBufferPointer(rebasing: buffer[0..<count])), parsed.sizePages > 0 else { return nil }
        return parsed
    }
}
