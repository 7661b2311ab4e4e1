import CProc2
#if canImport(Glibc)
import Glibc
#endif

/// What libproc2 tells about one process: the slow, once-a-second or once-ever facts.
public struct ProcessDescription: Equatable {
    public var pid: Int32
    public var parentPID: Int32
    public var commandName: String
    public var commandLine: String
    public var user: String
    public var startTicks: UInt64
    public var threads: Int
}

/// Process discovery and metadata through libproc2 (procps-ng).
///
/// Not the per-tick path: `procps_pids_select` costs ten times two `pread`s a call and its CPU
/// figures have 10 ms resolution (measured: docs/benchmarks.md, "What the code's shape saves"). It serves attach-time checks, command names and the children tree.
public final class ProcessDirectory {
    private var treeInfo: OpaquePointer?
    private var commandLineInfo: OpaquePointer?
    private static let commandLineItems: [pids_item] = [PIDS_ID_PID, PIDS_CMDLINE]

    // Positions of the items in each stack, in the order they are requested.
    private static let describeItems: [pids_item] = [
        PIDS_ID_PID, PIDS_ID_PPID, PIDS_CMD, PIDS_CMDLINE, PIDS_ID_EUSER, PIDS_TICS_BEGAN, PIDS_NLWP,
    ]
    private static let treeItems: [pids_item] = [PIDS_ID_PID, PIDS_ID_PPID, PIDS_TICS_BEGAN]

    /// Where the samplers that share this directory read their /proc files (4 KiB): they share its
    /// thread, and each file is parsed as soon as it is read. One for the daemon's hundreds of
    /// targets, not one each (800 KiB at 200 targets).
    public let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)

    public init() {}

    deinit {
        readBuffer.deallocate()
        if treeInfo != nil { procps_pids_unref(&treeInfo) }
        if commandLineInfo != nil { procps_pids_unref(&commandLineInfo) }
    }

    /// The description of `pid`, or nil when no such process exists.
    /// The corresponding C call is `procps_pids_select(…, PIDS_SELECT_PID)`.
    /// Its libproc2 context lives for the call only: a description is asked for when a process is
    /// found or execs, and a kept context held ~0.5 MiB of the daemon's heap (heaptrack).
    public func describe(pid: Int32) -> ProcessDescription? {
        var describeInfo: OpaquePointer?
        var items = Self.describeItems
        guard procps_pids_new(&describeInfo, &items, Int32(items.count)) >= 0 else { return nil }
        defer { procps_pids_unref(&describeInfo) }
        var wanted = [UInt32(bitPattern: pid)]
        guard let fetch = procps_pids_select(describeInfo, &wanted, 1, PIDS_SELECT_PID),
              let counts = fetch.pointee.counts, counts.pointee.total > 0,
              let stacks = fetch.pointee.stacks, let stack = stacks[0] else { return nil }
        func text(_ index: Int32) -> String {
            guard let pointer = perfhud_pids_str(stack, index) else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
        }
        return ProcessDescription(
            pid: perfhud_pids_s_int(stack, 0),
            parentPID: perfhud_pids_s_int(stack, 1),
            commandName: ProgramName.full(commandName: text(2), pid: pid),
            commandLine: StandInThread.commandLine(of: pid) ?? text(3),
            user: text(4),
            startTicks: perfhud_pids_ull_int(stack, 5),
            threads: Int(perfhud_pids_s_int(stack, 6))
        )
    }

    /// Every live descendant of `root` (children, grandchildren, …) with its start time.
    /// The corresponding C call is `procps_pids_reap(…, PIDS_FETCH_TASKS_ONLY)`.
    public func descendants(of root: Int32) -> [(pid: Int32, startTicks: UInt64)] {
        if treeInfo == nil {
            var items = Self.treeItems
            guard procps_pids_new(&treeInfo, &items, Int32(items.count)) >= 0 else { return [] }
        }
        guard let fetch = procps_pids_reap(treeInfo, PIDS_FETCH_TASKS_ONLY),
              let counts = fetch.pointee.counts, let stacks = fetch.pointee.stacks else { return [] }
        var childrenOf: [Int32: [(Int32, UInt64)]] = [:]
        for index in 0..<Int(counts.pointee.total) {
            guard let stack = stacks[index] else { continue }
            let pid = perfhud_pids_s_int(stack, 0)
            childrenOf[perfhud_pids_s_int(stack, 1), default: []].append((pid, perfhud_pids_ull_int(stack, 2)))
        }
        var result: [(pid: Int32, startTicks: UInt64)] = []
        var queue = [root]
        while let parent = queue.popLast() {
            for (pid, start) in childrenOf[parent] ?? [] where pid != root {
                result.append((pid, start))
                queue.append(pid)
            }
        }
        return result
    }

    /// Every process with its command line (arguments joined by spaces; the command name in
    /// brackets for kernel threads). The corresponding C call is `procps_pids_reap`.
    public func commandLines() -> [(pid: Int32, commandLine: String)] {
        if commandLineInfo == nil {
            var items = Self.commandLineItems
            guard procps_pids_new(&commandLineInfo, &items, Int32(items.count)) >= 0 else { return [] }
        }
        guard let fetch = procps_pids_reap(commandLineInfo, PIDS_FETCH_TASKS_ONLY),
              let counts = fetch.pointee.counts, let stacks = fetch.pointee.stacks else { return [] }
        var result: [(Int32, String)] = []
        for index in 0..<Int(counts.pointee.total) {
            guard let stack = stacks[index], let text = perfhud_pids_str(stack, 1) else { continue }
            result.append((perfhud_pids_s_int(stack, 0), String(cString: text)))
        }
        return result
    }

    /// Seconds since the epoch at which the system booted (`btime` of /proc/stat).
    public static var bootTime: Double? {
        guard case .success(let data) = KeptOpenFile.contents(of: "/proc/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingLeadingSpaces)
        }
        return nil
    }

    /// Online CPUs. The corresponding C call is `procps_cpu_count`.
    public static var onlineCPUs: Int { max(1, Int(procps_cpu_count())) }
    /// Clock ticks per second of /proc/PID/stat times. The corresponding C call is `procps_hertz_get`.
    public static var ticksPerSecond: UInt64 { UInt64(max(1, procps_hertz_get())) }
    public static var pageSize: UInt64 { UInt64(sysconf(Int32(_SC_PAGESIZE))) }
}
