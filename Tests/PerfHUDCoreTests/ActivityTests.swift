import XCTest
@testable import PerfHUDSampling
@testable import PerfHUDStore

/// The parsers of the "why" files, on text as the kernel writes it, and the leak fit.
final class ActivityTests: XCTestCase {
    private func parse<T>(_ text: String, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        Array(text.utf8).withUnsafeBytes(body)
    }

    func testStatusGivesMemoryByKindAndSwitches() {
        let status = "Name:\tworker\nVmRSS:\t   3968 kB\nRssAnon:\t     972 kB\nRssFile:\t    2996 kB\nRssShmem:\t       4 kB\n"
            + "VmSwap:\t      12 kB\nvoluntary_ctxt_switches:\t135\nnonvoluntary_ctxt_switches:\t76\n"
        XCTAssertEqual(parse(status, ProcParser.memoryKinds),
                       ProcMemoryKinds(anonBytes: 972 * 1024, fileBytes: 2996 * 1024, shmemBytes: 4096, swapBytes: 12 * 1024))
        let switches = parse(status, ProcParser.contextSwitches)
        XCTAssertEqual(switches?.voluntary, 135)
        XCTAssertEqual(switches?.involuntary, 76)
        XCTAssertNil(parse("Name:\tkthreadd\nState:\tS (sleeping)\n", ProcParser.memoryKinds), "a kernel thread has none")
    }

    func testStatusIsParsedFromNearWhereItsFieldsWereWhateverMoved() {
        let head = (0..<40).map { "Field\($0):\t\($0 * 1000) kB\n" }.joined()
        let tail = "RssAnon:\t 972 kB\nRssFile:\t 2996 kB\nRssShmem:\t 4 kB\nVmSwap:\t 0 kB\n"
            + (0..<20).map { "Cpus\($0):\tff\n" }.joined() + "voluntary_ctxt_switches:\t135\nnonvoluntary_ctxt_switches:\t76\n"
        let expected = ProcMemoryKinds(anonBytes: 972 * 1024, fileBytes: 2996 * 1024, shmemBytes: 4096, swapBytes: 0)
        let first = parse(head + tail) { ProcParser.memoryKinds($0, near: 0) }
        XCTAssertEqual(first?.kinds, expected)
        XCTAssertEqual(first?.at, head.utf8.count)
        // The lines above grew or shrank since: found from the hint, or from the start.
        for text in ["Extra:\t1\n" + head + tail, String(head.dropFirst(40)) + tail, tail] {
            XCTAssertEqual(parse(text) { ProcParser.memoryKinds($0, near: first?.at ?? 0) }?.kinds, expected, text)
        }
        // Switches are searched from the end first; a long tail after them still finds them.
        let longTail = head + tail + (0..<30).map { "x86_Thread_feature\($0):\tyes\n" }.joined()
        for text in [head + tail, longTail, "voluntary_ctxt_switches:\t135\nnonvoluntary_ctxt_switches:\t76\n"] {
            let switches = parse(text, ProcParser.contextSwitches)
            XCTAssertEqual(switches?.voluntary, 135, text)
            XCTAssertEqual(switches?.involuntary, 76, text)
        }
        // The tail start falling between the two lines: "nonvoluntary_" is never taken for "voluntary_".
        let split = head + "voluntary_ctxt_switches:\t135\nnonvoluntary_ctxt_switches:\t76\n" + String(repeating: "z", count: 230) + "\n"
        XCTAssertEqual(parse(split, ProcParser.contextSwitches)?.voluntary, 135)
    }

    func testIOSchedstatLimitsAndPressure() {
        let io = "rchar: 6976\nwchar: 10\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 4096\n"
        XCTAssertEqual(parse(io, ProcParser.io), ProcIO(readChars: 6976, writeChars: 10, readBytes: 4096, writeBytes: 8192))
        let times = parse("11125202 21462900 4\n", ProcParser.schedstat)
        XCTAssertEqual(times?.runNanoseconds, 11125202)
        XCTAssertEqual(times?.waitNanoseconds, 21462900)
        XCTAssertNil(parse("garbage", ProcParser.schedstat))
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n"
            + "Max processes             127557               127557               processes \nMax open files            1024                 524288               files     \n"
        XCTAssertEqual(parse(limits, ProcParser.openFilesLimit), 1024)
        XCTAssertNil(parse("Max open files            unlimited            unlimited            files\n", ProcParser.openFilesLimit))
        let pressure = parse("some avg10=37.28 avg60=17.76 avg300=23.55 total=2704576211\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=42\n",
                             ProcParser.pressure)
        XCTAssertEqual(pressure?.some, 2704576211)
        XCTAssertEqual(pressure?.full, 42)
        XCTAssertEqual(parse("usage_usec 10\nnr_throttled 3\nthrottled_usec 2500\n", ProcParser.throttledNanoseconds), 2_500_000)
        XCTAssertEqual(parse("nr_periods 4\nnr_throttled 3\nthrottled_time 123456\n", ProcParser.throttledNanoseconds), 123456)
    }

    func testTheOOMScoreIsOneNumberAndTheHighestOfSeveralProcesses() {
        XCTAssertEqual(parse("667\n", ProcParser.oomScore), 667)
        XCTAssertEqual(parse("0\n", ProcParser.oomScore), 0, "0 read is 0")
        XCTAssertEqual(parse("2000", ProcParser.oomScore), 2000)
        for text in ["", "\n", "-1\n", "12a\n", "99999999\n"] { XCTAssertNil(parse(text, ProcParser.oomScore), text) }
        var a = Activity(), b = Activity()
        a.everySecond.levels.oomScore = 300
        b.everySecond.levels.oomScore = 900
        XCTAssertEqual(Activity.sum(a, b)?.everySecond.levels.oomScore, 900, "the process the kernel kills first")
        XCTAssertEqual(Activity.sum(a, Activity())?.everySecond.levels.oomScore, 300, "one unread: the other's")
        XCTAssertNil(Activity.sum(Activity(), Activity())?.everySecond.levels.oomScore, "none read: null, never 0")
    }

    func testTheGroupsOfAProcessAreFoundThroughTheMountsOfAHybridHost() {
        let groups = "4:memory:/a\n2:cpuacct:/\n1:cpu:/batch\n0::/system.slice/x.service\n"
        let mounts = "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
            + "31 25 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
            + "32 25 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        let found = ControlGroupPlaces.directories(groups: groups, mountInfo: mounts)
        XCTAssertEqual(found.unified, "/sys/fs/cgroup/unified/system.slice/x.service")
        XCTAssertEqual(found.cpu, "/sys/fs/cgroup/cpu/batch")
        XCTAssertNil(found.memory, "no memory hierarchy is mounted")
        let withMemory = mounts + "33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        let both = ControlGroupPlaces.directories(groups: groups, mountInfo: withMemory)
        XCTAssertEqual(both.memory, "/sys/fs/cgroup/memory/a")
        XCTAssertEqual(both.memoryMount, "/sys/fs/cgroup/memory")
        XCTAssertEqual(ControlGroupPlaces.groupAndAncestors("/sys/fs/cgroup/memory/a/b", upTo: "/sys/fs/cgroup/memory"),
                       ["/sys/fs/cgroup/memory/a/b", "/sys/fs/cgroup/memory/a", "/sys/fs/cgroup/memory"])
    }

    /// cgroup v2's memory controller is bound to v1 on this hybrid host (its cgroup2 has no
    /// controllers, nor has a container booted on it), so no real group here has a `memory.max`:
    /// the v2 path is read over a tree laid out as the kernel lays it, through a mount table that
    /// mounts cgroup2 there. (The v1 path is read from real groups: test_memory_limit.py.)
    func testTheSmallestV2LimitOfTheGroupAndThoseAboveItIsTheLimit() throws {
        let top = FileManager.default.temporaryDirectory.appendingPathComponent("perfhud-cgroup2-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: top) }
        let group = top + "/system.slice/web.service"
        try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: true)
        func write(_ directory: String, _ text: String) throws { try text.write(toFile: directory + "/memory.max", atomically: false, encoding: .utf8) }
        try write(top + "/system.slice", "1073741824\n")
        try write(group, "max\n")
        let mounts = "41 31 0:38 / \(top) rw,relatime - cgroup2 cgroup2 rw\n"
        let directories = ControlGroupPlaces.directories(groups: "0::/system.slice/web.service\n", mountInfo: mounts)
        XCTAssertEqual(directories.unified, group)
        let paths = ControlGroupMemoryLimit.limitPaths(directories)
        XCTAssertEqual(paths, [group + "/memory.max", top + "/system.slice/memory.max", top + "/memory.max"])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
        defer { buffer.deallocate() }
        func limit() -> UInt64? {
            let files = paths.compactMap { try? KeptOpenFile.open($0).get() }
            defer { files.forEach { $0.close() } }
            return ControlGroupMemoryLimit.smallest(in: files, buffer: buffer)
        }
        XCTAssertEqual(limit(), 1 << 30, "the slice's limit bounds the service, whose own is max")
        try write(group, "536870912\n")
        XCTAssertEqual(limit(), 512 << 20, "the smaller, the service's own")
        try write(group, "max\n"); try write(top + "/system.slice", "max\n")
        XCTAssertNil(limit(), "no limit anywhere: null, not 0")
    }

    /// The OOM kill count of a group: `oom_kill` of v2's memory.events (a line among `oom` and
    /// `oom_group_kill`) and of v1's memory.oom_control (after `oom_kill_disable`), as the kernel
    /// writes them; the kills since watching began, and when the count last rose.
    func testAGroupsOOMKillsAreReadFromEitherFileAndCountedSinceWatching() {
        let directories = ControlGroupPlaces.directories(groups: "0::/system.slice/web.service\n4:memory:/web\n",
                                                         mountInfo: "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                                                            + "33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n")
        XCTAssertEqual(ControlGroupOOMKills.countPaths(directories),
                       ["/sys/fs/cgroup/unified/system.slice/web.service/memory.events", "/sys/fs/cgroup/memory/web/memory.oom_control"])
        func kills(_ text: String) -> UInt64? { Array(text.utf8).withUnsafeBytes { ControlGroupCPU.value(of: "oom_kill", in: $0) } }
        XCTAssertEqual(kills("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n"), 2)
        XCTAssertEqual(kills("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n"), 7, "not oom_kill_disable's 0")
        XCTAssertNil(kills("oom_kill_disable 0\nunder_oom 0\n"), "a kernel before 4.13 has no count: unknown, not 0")
        var count = OOMKillCount()
        count.note(nil, at: 1)
        XCTAssertNil(count.sinceWatching, "no file: unknown")
        count.note(5, at: 2)
        XCTAssertEqual(count.sinceWatching, 0, "the kills before perfhud watched are not the target's")
        XCTAssertNil(count.lastRiseAt)
        count.note(6, at: 3)
        XCTAssertEqual(count.sinceWatching, 1)
        XCTAssertEqual(count.lastRiseAt, 3)
        count.note(6, at: 4)
        XCTAssertEqual(count.lastRiseAt, 3, "when it rose, not when it was read")
        var ended = Sample(monotonicNanoseconds: 3 + 2_000_000_000, wallSeconds: 0, alive: false)
        ended.oomKillAt = count.lastRiseAt
        XCTAssertTrue(ended.endedByOOMKill, "ended 2 s after a kill in its group")
        ended.monotonicNanoseconds = 3 + 4_000_000_000
        XCTAssertFalse(ended.endedByOOMKill, "a kill 4 s before it ended is another process's")
        ended.alive = true
        ended.monotonicNanoseconds = 3
        XCTAssertFalse(ended.endedByOOMKill, "a target that lives on was not killed")
    }

    /// The OOM score against a group's limit, as mm/oom_kill.c weighs a process for the group's kill.
    func testTheOOMScoreAgainstALimitIsTheKernels() {
        let page: UInt64 = 4096, limit: UInt64 = 32 << 20   // 8,192 pages
        // 4,096 pages resident of 8,192: badness 500 ‰ → (1000 + 500) × 2/3.
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 4096, swapBytes: 0, pageTableBytes: 0, adjust: 0, limitBytes: limit, pageSize: page), 1000)
        // Swap and page tables count as pages; oom_score_adj adds its thousandths of the limit.
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 2048, swapBytes: 2048 * page, pageTableBytes: 0, adjust: 0, limitBytes: limit, pageSize: page), 1000)
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 0, swapBytes: 0, pageTableBytes: 0, adjust: 500, limitBytes: limit, pageSize: page), 1000)
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 0, swapBytes: 0, pageTableBytes: 0, adjust: 0, limitBytes: limit, pageSize: page), 666)
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 9999, swapBytes: 0, pageTableBytes: 0, adjust: -1000, limitBytes: limit, pageSize: page), 0,
                       "OOM_SCORE_ADJ_MIN: never killed")
        XCTAssertEqual(OOMScore.againstLimit(residentPages: 100_000, swapBytes: 0, pageTableBytes: 0, adjust: 1000, limitBytes: limit, pageSize: page), 2000,
                       "at most 2000")
        XCTAssertNil(OOMScore.againstLimit(residentPages: 1, swapBytes: 0, pageTableBytes: 0, adjust: 0, limitBytes: 100, pageSize: page), "a limit under a page")
    }

    func testAMemoryLimitFileReadsAsBytesAndNoLimitAsNone() {
        func limit(_ text: String) -> UInt64? { Array(text.utf8).withUnsafeBytes { ControlGroupMemoryLimit.limit($0) } }
        XCTAssertEqual(limit("536870912\n"), 512 << 20)
        XCTAssertNil(limit("max\n"), "v2: no limit")
        XCTAssertNil(limit("9223372036854771712\n"), "v1's way of saying no limit")
        XCTAssertNil(limit("99999999999999999999999\n"), "no number that overflows")
        XCTAssertNil(limit(""))
    }

    func testTheLeakFitFlagsASteadyClimbOnlyOverAFullWindow() {
        var trend = LeakTrend(settings: .init(windowSeconds: 60, thresholdBytesPerHour: 50 * 1024 * 1024))
        var last: LeakTrend.Fit?
        for tick in 0...1200 {   // 120 s at 100 ms, 100 MiB/h with noise of ±64 KiB
            let t = Double(tick) / 10
            let fit = trend.add(time: t, bytes: 1e8 + t * 100 * 1048576 / 3600 + Double((tick * 7919) % 128 - 64) * 1024)
            if t < 60 { XCTAssertFalse(fit?.suspected ?? false, "not before the window is full (t = \(t))") }
            last = fit
        }
        XCTAssertEqual(last?.suspected, true)
        XCTAssertEqual(last!.bytesPerHour, 100 * 1048576, accuracy: 5 * 1048576)
        var plateau = LeakTrend(settings: .init(windowSeconds: 60))
        for tick in 0...1200 {
            let t = Double(tick) / 10
            last = plateau.add(time: t, bytes: 1e8 + min(t, 30) * 1e6)
        }
        XCTAssertEqual(last?.suspected, false, "grew, then stopped: the window holds only the plateau")
        XCTAssertEqual(last?.r2, 0)
    }
}
