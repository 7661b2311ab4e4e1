#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The "why" figures of one process (`Activity`), read from files kept open and re-read with
/// `pread`: every tick `io` and each thread's `schedstat` (the run-queue delay is per thread: the
/// process's own `schedstat` is its main thread's), memory by kind from the sampler's `statm`;
/// about once a second `status` (shared memory, swap), each thread's `status` (context
/// switches), the descriptor count and limit, `oom_score`, the busiest threads.
///
/// Threads are listed again when the thread count of `stat` changes, when a thread's file fails
/// (it ended), and once a second. Each thread's counters are summed as increases, so the totals
/// never go back when a thread ends; a thread that appears after the first listing counts from
/// its start (its counters begin at 0).
package final class ProcessActivity {
    package let pid: Int32
    private let taskPath: String
    private var io: KeptOpenFile?
    private var status: KeptOpenFile?
    /// Where `RssAnon:` was in `status` last time: the next parse starts near it.
    private var memoryKindsAt = 0
    /// What `status` said at its last read (once a second), and when; nil: no memory (a kernel thread).
    private var statusKinds: ProcMemoryKinds?
    private var statusReadAt: UInt64 = 0
    private let pageSize = ProcessDirectory.pageSize
    private var fdDirectory: Int32 = -1
    private var limits: KeptOpenFile?
    private var oomScore: KeptOpenFile?
    /// What the OOM killer weighs the process by, for its score against a group's limit
    /// (`OOMScore`): its page tables (status `VmPTE`, read with the memory by kind), its
    /// `oom_score_adj` (once a second), its resident pages (the tick's statm).
    private var oomScoreAdjust: KeptOpenFile?
    private var pageTableBytes: UInt64?
    private var residentPages: UInt64 = 0
    /// Files that may not be read (another user's process): tried once, then null.
    private var ioDenied = false, fdsDenied = false, statusDenied = false, oomScoreDenied = false
    private var threads: [ThreadFiles] = []
    private var listedAt: UInt64 = 0
    private var listedOnce = false
    private var relistNeeded = true
    private var threadsReadable = true
    /// The sums of the threads' increases.
    private var wait: UInt64 = 0, voluntary: UInt64 = 0, involuntary: UInt64 = 0
    /// When the busiest threads were last computed, and at what run times.
    private var lastSecond: UInt64 = 0
    /// When the threads' `schedstat` files were last read, and when they are due again: every
    /// tick while that is cheap; a target with many threads is read less often, so the pass costs
    /// at most 1/1000 of the time between two (0.1 % of a core, a twentieth of what perfhud costs at
    /// --tick 10ms: ~190 µs of CPU a tick on these VMs).
    private var threadsReadAt: UInt64 = 0
    private var threadsDue: UInt64 = 0

    struct ThreadFiles {
        package let tid: Int32
        package let schedstat: KeptOpenFile
        package var status: KeptOpenFile?
        package var run: UInt64
        package var wait: UInt64
        var runAtLastSecond: UInt64
        package var voluntary: UInt64
        package var involuntary: UInt64
        /// Counters read before (false: the first read of `status` sets the baseline of a thread
        /// of the first listing; a later thread counts from 0).
        var switchesKnown: Bool
        /// Appeared after the first listing: its counters from its start are counted.
        let countsFromStart: Bool
    }

    /// Where `status` (memory by kind) and `fd` are read: the process's directory, or, after its
    /// main thread ended, a live thread's (`StandInThread`): the leader's read as empty then.
    private var processFilesPath: String

    package init(pid: Int32) {
        self.pid = pid
        taskPath = "/proc/\(pid)/task"
        processFilesPath = "/proc/\(pid)"
    }

    /// Reads memory by kind and the descriptors through `path` from now on (nil: the process's own).
    func readProcessFiles(through path: String?) {
        let path = path ?? "/proc/\(pid)"
        guard path != processFilesPath else { return }   // the files kept open are those already
        processFilesPath = path
        status?.close(); status = nil
        statusReadAt = 0
        if fdDirectory >= 0 { close(fdDirectory); fdDirectory = -1 }
    }

    deinit {
        io?.close(); status?.close(); limits?.close(); oomScore?.close(); oomScoreAdjust?.close()
        if fdDirectory >= 0 { close(fdDirectory) }
        for thread in threads { thread.schedstat.close(); thread.status?.close() }
    }

    /// What may not be read, once each (for the caller to say once).
    private var denials: [String] = []
    var hasDenials: Bool { !denials.isEmpty }

    /// Notes a file that could not be opened, unless the process has ended meanwhile (a child
    /// gone between its `stat` and this read: its directory is gone too): an end is no refusal,
    /// and says nothing to the user. A file a kernel lacks (`io` without task I/O accounting) is said.
    private func refused(_ error: SystemError, _ file: String, _ consequence: String) {
        let ended = (error == .noSuchFile || error == .noSuchProcess) && access(processFilesPath, F_OK) != 0
        guard !ended else { return }
        denials.append("\(file) (\(error)): \(consequence)")
    }
    func takeDenials() -> [String] { defer { denials.removeAll() }; return denials }

    /// The every-tick figures: run-queue delay over the threads, faults (from the `stat` already
    /// read), I/O, memory by kind.
    func readEveryTick(into activity: inout Activity, stat: ProcStat, statm: ProcStatm, includeReaped: Bool, now: UInt64,
                       cadence: SampleCadence, buffer: UnsafeMutableRawBufferPointer) {
        activity.minorFaults = stat.minorFaults &+ (includeReaped ? stat.childrenMinorFaults : 0)
        activity.majorFaults = stat.majorFaults &+ (includeReaped ? stat.childrenMajorFaults : 0)
        if io == nil && !ioDenied {
            switch KeptOpenFile.open("/proc/\(pid)/io") {
            case .success(let file): io = file
            case .failure(let error): ioDenied = true; refused(error, "/proc/\(pid)/io", "the I/O figures are null")
            }
        }
        if let io, case .success(let count) = io.read(into: buffer) {
            activity.io = ProcParser.io(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        if status == nil && !statusDenied {
            switch KeptOpenFile.open(processFilesPath + "/status") {
            case .success(let file): status = file
            case .failure(let error): statusDenied = true; refused(error, "/proc/\(pid)/status", "memory by kind is null")
            }
        }
        // Memory by kind every tick from `statm`, already read (RssAnon = resident - shared, RssFile =
        // shared - RssShmem): `status` costs the kernel ~9 µs a read, 7 % of a tick, so it is read
        // once a second, for shared memory and swap (and whether there is memory at all).
        if let status, cadence.isDue(lastRead: statusReadAt, every: 1_000_000_000, now: now), case .success(let count) = status.read(into: buffer) {
            let read = ProcParser.memoryKinds(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), near: memoryKindsAt)
            statusKinds = read?.kinds
            memoryKindsAt = read?.at ?? 0
            pageTableBytes = ProcParser.number(after: "VmPTE:", in: UnsafeRawBufferPointer(rebasing: buffer[0..<count])).map { $0 &* 1024 }
            statusReadAt = now
        }
        residentPages = statm.residentPages
        if let kinds = statusKinds {
            let resident = statm.residentPages &* pageSize, shared = min(resident, statm.sharedPages &* pageSize)
            let shmem = min(shared, kinds.shmemBytes)
            activity.memory = ProcMemoryKinds(anonBytes: resident - shared, fileBytes: shared - shmem, shmemBytes: shmem, swapBytes: kinds.swapBytes)
        }
        activity.waitReadAt = threadsReadAt
        guard cadence.isDue(at: threadsDue, now: now) else {
            activity.waitNanoseconds = threadsReadable ? wait : nil
            return
        }
        let started = monotonicNanoseconds()
        if relistNeeded || threads.count != stat.threads || now &- listedAt >= 1_000_000_000 { listThreads(now: now, buffer: buffer) }
        for index in threads.indices {
            guard case .success(let count) = threads[index].schedstat.read(into: buffer),
                  let times = ProcParser.schedstat(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else {
                relistNeeded = true
                continue
            }
            if times.waitNanoseconds > threads[index].wait { wait &+= times.waitNanoseconds - threads[index].wait }
            threads[index].wait = times.waitNanoseconds
            threads[index].run = times.runNanoseconds
        }
        activity.waitNanoseconds = threadsReadable ? wait : nil
        threadsReadAt = now
        activity.waitReadAt = now
        threadsDue = now &+ min(1_000_000_000, (monotonicNanoseconds() &- started) &* 1000)
    }

    /// The once-a-second figures: context switches over the threads, descriptors, the OOM score,
    /// and (when `busiest`) the busiest threads since the last call. `readLimit`: the root's
    /// descriptor limit.
    /// - Parameter groupLimitBytes: the memory limit the process is under (its groups' smallest):
    ///   its `oom_score` is then the one against that limit (`OOMScore`), else the machine's.
    func readEverySecond(into activity: inout Activity.EverySecond, now: UInt64, busiest: Bool, readLimit: Bool,
                         groupLimitBytes: UInt64? = nil, buffer: UnsafeMutableRawBufferPointer) {
        for index in threads.indices {
            if threads[index].status == nil {
                guard case .success(let file) = KeptOpenFile.open(taskPath + "/\(threads[index].tid)/status") else { continue }
                threads[index].status = file
            }
            guard let file = threads[index].status, case .success(let count) = file.read(into: buffer),
                  let switches = ProcParser.contextSwitches(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { continue }
            if threads[index].switchesKnown {
                if switches.voluntary > threads[index].voluntary { voluntary &+= switches.voluntary - threads[index].voluntary }
                if switches.involuntary > threads[index].involuntary { involuntary &+= switches.involuntary - threads[index].involuntary }
            } else if threads[index].countsFromStart {
                // A thread that began after perfhud came (one of the first listing: its switches before are not counted).
                voluntary &+= switches.voluntary; involuntary &+= switches.involuntary
            }
            threads[index].voluntary = switches.voluntary
            threads[index].involuntary = switches.involuntary
            threads[index].switchesKnown = true
        }
        activity.voluntarySwitches = threadsReadable ? voluntary : nil
        activity.involuntarySwitches = threadsReadable ? involuntary : nil
        activity.levels.fdsOpen = openDescriptors(buffer: buffer)
        if readLimit {
            if limits == nil, case .success(let file) = KeptOpenFile.open("/proc/\(pid)/limits") { limits = file }
            if let limits, case .success(let count) = limits.read(into: buffer) {
                activity.levels.fdsLimit = ProcParser.openFilesLimit(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
        activity.levels.oomScore = readOOMScore(buffer: buffer)
        if let limit = groupLimitBytes, activity.levels.oomScore != nil, let adjust = readOOMScoreAdjust(buffer: buffer) {
            let swap = statusKinds?.swapBytes ?? 0
            activity.levels.oomScore = OOMScore.againstLimit(residentPages: residentPages, swapBytes: swap, pageTableBytes: pageTableBytes ?? 0,
                                                             adjust: adjust, limitBytes: limit, pageSize: pageSize)
        }
        if busiest { activity.levels.busiestThreads = busiestThreads(now: now) }
    }

    /// `/proc/PID/oom_score_adj` (-1000 to 1000), kept open; nil where it may not be read.
    private func readOOMScoreAdjust(buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if oomScoreAdjust == nil, case .success(let file) = KeptOpenFile.open("/proc/\(pid)/oom_score_adj") { oomScoreAdjust = file }
        guard let oomScoreAdjust, case .success(let count) = oomScoreAdjust.read(into: buffer) else { return nil }
        return Int(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), as: UTF8.self).split(separator: "\n").first ?? "")
    }

    /// `/proc/PID/oom_score`, kept open (readable by anyone); nil where it may not be read.
    private func readOOMScore(buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        if oomScore == nil && !oomScoreDenied {
            switch KeptOpenFile.open("/proc/\(pid)/oom_score") {
            case .success(let file): oomScore = file
            case .failure(let error): oomScoreDenied = true; refused(error, "/proc/\(pid)/oom_score", "oom_score is null")
            }
        }
        guard let oomScore, case .success(let count) = oomScore.read(into: buffer) else { return nil }
        return ProcParser.oomScore(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// The three threads that used the most CPU since the last call (only those that used any).
    private func busiestThreads(now: UInt64) -> [BusyThread] {
        let elapsed = now &- lastSecond
        defer {
            lastSecond = now
            for index in threads.indices { threads[index].runAtLastSecond = threads[index].run }
        }
        guard lastSecond != 0, elapsed > 0 else { return [] }
        var top: [(index: Int, used: UInt64)] = []
        for index in threads.indices {
            let used = threads[index].run &- min(threads[index].run, threads[index].runAtLastSecond)
            guard used > 0 else { continue }
            top.append((index, used))
            if top.count > 3 { top.sort { $0.used > $1.used }; top.removeLast() }
        }
        return top.sorted { $0.used > $1.used }.map { entry in
            let tid = threads[entry.index].tid
            return BusyThread(pid: pid, tid: tid, name: BusyThread.shownName(threadName(tid) ?? "?"),
                              // A thread runs on one CPU at most: a little over 100 is the jitter
                              // between when its schedstat and the clock were read, not time it ran.
                              cpuPercent: min(100, Double(entry.used) / Double(elapsed) * 100).atResolution(10))
        }
    }

    /// A thread's `comm` (at most 15 bytes and a line feed): read into a small buffer, not
    /// `KeptOpenFile.contents`, whose 64 KiB chunk cost more than the rest of the second's work.
    private func threadName(_ tid: Int32) -> String? {
        guard case .success(let file) = KeptOpenFile.open(taskPath + "/\(tid)/comm") else { return nil }
        defer { file.close() }
        var bytes = [UInt8](repeating: 0, count: 64)
        guard case .success(let count) = bytes.withUnsafeMutableBytes({ file.read(into: $0) }) else { return nil }
        let name = bytes[0..<count]
        return String(decoding: name.last == UInt8(ascii: "\n") ? name.dropLast() : name, as: UTF8.self)
    }

    /// Open descriptors: the size `stat` gives `/proc/PID/fd` (Linux 6.2 on), else its entries counted.
    private func openDescriptors(buffer: UnsafeMutableRawBufferPointer) -> UInt64? {
        if fdDirectory < 0 && !fdsDenied {
            let opened = DescriptorBudget.keeping(SystemCall.open(processFilesPath + "/fd", O_RDONLY | O_DIRECTORY))
            switch opened {
            case .success(let descriptor): fdDirectory = descriptor
            case .failure(let error): fdsDenied = true; refused(error, "/proc/\(pid)/fd", "fds_open is null")
            }
        }
        guard fdDirectory >= 0 else { return nil }
        var info = stat()
        guard fstat(fdDirectory, &info) == 0 else { return nil }
        if info.st_size > 0 { return UInt64(info.st_size) }
        // Older kernels: count the entries ("." and ".." aside).
        guard let listing = opendir(processFilesPath + "/fd") else { return nil }
        defer { closedir(listing) }
        var entries: UInt64 = 0
        while let entry = readdir(listing) {
            if withUnsafeBytes(of: entry.pointee.d_name, { $0[0] }) != UInt8(ascii: ".") { entries += 1 }
        }
        // The listing's own descriptor is one of them.
        return entries > 0 ? entries - 1 : 0
    }

    /// Lists `/proc/PID/task` and opens the `schedstat` of threads not seen before.
    private func listThreads(now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        relistNeeded = false
        listedAt = now
        guard let directory = opendir(taskPath) else {
            if threads.isEmpty { threadsReadable = false }
            return
        }
        defer { closedir(directory) }
        var listed: [Int32] = []
        while let entry = readdir(directory) {
            let tid = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Int32 in
                var value: Int32 = 0
                for byte in raw {
                    if byte == 0 { break }
                    guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return 0 }
                    value = value &* 10 &+ Int32(byte &- UInt8(ascii: "0"))
                }
                return value
            }
            if tid > 0 { listed.append(tid) }
        }
        listed.sort()
        var kept: [ThreadFiles] = []
        kept.reserveCapacity(listed.count)
        var old = 0
        for tid in listed {
            while old < threads.count && threads[old].tid < tid { threads[old].schedstat.close(); threads[old].status?.close(); old += 1 }
            if old < threads.count && threads[old].tid == tid { kept.append(threads[old]); old += 1; continue }
            guard case .success(let file) = KeptOpenFile.open(taskPath + "/\(tid)/schedstat") else { continue }
            var times: (runNanoseconds: UInt64, waitNanoseconds: UInt64) = (0, 0)
            // Threads of the first listing: what they did before perfhud came is not counted.
            if !listedOnce, case .success(let count) = file.read(into: buffer),
               let read = ProcParser.schedstat(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                times = read
            }
            kept.append(ThreadFiles(tid: tid, schedstat: file, status: nil, run: times.runNanoseconds, wait: times.waitNanoseconds,
                                    runAtLastSecond: times.runNanoseconds, voluntary: 0, involuntary: 0, switchesKnown: false,
                                    countsFromStart: listedOnce))
        }
        while old < threads.count { threads[old].schedstat.close(); threads[old].status?.close(); old += 1 }
        threads = kept
        if !listed.isEmpty { threadsReadable = true }
        listedOnce = true
    }
}
