import XCTest
@testable import PerfHUDDaemon
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's own logic, in-process: which processes it watches, how a group adds up, what
/// /metrics then says, and what it warns about how often.
final class DaemonUnitTests: XCTestCase {
    private var children: [pid_t] = []

    override func tearDown() {
        for child in children { kill(child, SIGKILL); var status: Int32 = 0; waitpid(child, &status, 0) }
        children = []
    }

    /// A `sleep` whose command line starts with `marker`, for --match to find.
    private func spawnSleeper(marker: String) -> pid_t {
        var pid = pid_t()
        let status = withCStrings([marker, "30"]) { argv in posix_spawn(&pid, "/bin/sleep", nil, nil, argv, environ) }
        XCTAssertEqual(status, 0)
        children.append(pid)
        // posix_spawn returns once the exec has begun; the command line is set a moment later.
        for _ in 0..<400 {
            if case .success(let bytes) = KeptOpenFile.contents(of: "/proc/\(pid)/cmdline", limit: 4096),
               String(decoding: bytes, as: UTF8.self).hasPrefix(marker) { break }
            usleep(2500)
        }
        return pid
    }

    /// A tick as the daemon's watcher makes one: the target's figures (none when `absent`), the
    /// event figures, and the frames and actions since the tick before.
    private func tick(_ sample: Sample, _ figures: TargetFigures, command: String, events: EventSnapshot,
                      actions: [(String, Double)] = [], frames: [RecordedFrame] = [], absent: Bool = false) -> Tick {
        Tick(monotonicNanoseconds: 1, sample: sample, figures: figures, events: events, commandName: command,
             status: absent ? .absent : .running, phases: PhaseHistory(),
             everyFrame: EveryFrame(frames: frames, actions: actions.map { (label: $0.0, count: $0.1) }))
    }

    private func sample(cpu: UInt64, user: UInt64, rss: UInt64?, pss: UInt64?, threads: Int, alive: Bool = true) -> Sample {
        Sample(monotonicNanoseconds: 1, wallSeconds: 1, alive: alive, cpuNanoseconds: cpu, userTicks: user, systemTicks: user / 2,
               residentBytes: rss, virtualBytes: rss.map { $0 * 3 }, proportionalBytes: pss, threads: threads)
    }

    // MARK: target resolution

    func testAPIDIsFoundWhileItRunsAndMissedWithAReasonAfter() throws {
        let pid = spawnSleeper(marker: "resolve-pid")
        let resolver = try TargetResolver(selector: .pid(pid))
        XCTAssertEqual(try resolver.resolve().get(), [pid])
        kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0); children.removeAll()
        guard case .failure(let reason) = resolver.resolve() else { return XCTFail("a reaped PID is not a target") }
        XCTAssertEqual(reason.message, "no process with PID \(pid)")
    }

    func testAPidfileIsReadWithItsNewlineAndAnEmptyOneSaysSo() throws {
        let pid = spawnSleeper(marker: "resolve-pidfile")
        let path = "/tmp/perfhud-pidfile-\(getpid())"
        defer { unlink(path) }
        FileManagerless.write(path, "\(pid) \t\n")
        XCTAssertEqual(try TargetResolver(selector: .pidfile(path)).resolve().get(), [pid])
        FileManagerless.write(path, "\n")
        guard case .failure(let reason) = try TargetResolver(selector: .pidfile(path)).resolve() else { return XCTFail() }
        XCTAssertEqual(reason.message, "\(path) holds no PID")
        guard case .failure(let missing) = try TargetResolver(selector: .pidfile(path + ".none")).resolve() else { return XCTFail() }
        XCTAssertTrue(missing.message.hasPrefix("cannot read \(path).none"), missing.message)
    }

    func testAPatternFindsEveryMatchButNotTheDaemonItself() throws {
        let marker = "perfhud-match-\(getpid())"
        let first = spawnSleeper(marker: marker), second = spawnSleeper(marker: marker)
        // This test process's own command line does not hold the marker; a pattern matching
        // everything would find it, and the daemon must leave itself out.
        XCTAssertEqual(Set(try TargetResolver(selector: .match(marker)).resolve().get()), [first, second])
        XCTAssertFalse(try TargetResolver(selector: .match(".")).resolve().get().contains(getpid()))
    }

    func testABadPatternIsAUsageErrorThatSaysWhy() {
        XCTAssertThrowsError(try TargetResolver(selector: .match("([unclosed"))) { error in
            let failure = error as? PerfHUDError
            XCTAssertEqual(failure?.exitStatus, .usage)
            XCTAssertTrue(failure?.message.hasPrefix("invalid --match pattern /([unclosed/: ") ?? false, "\(error)")
        }
    }

    // MARK: sums across a group

    func testAGroupAddsUpAndKnowsPSSOnlyWhenEveryMemberDoes() {
        let a = sample(cpu: 1_000, user: 10, rss: 100, pss: 80, threads: 2)
        let b = sample(cpu: 500, user: 4, rss: 50, pss: 40, threads: 3, alive: false)
        let both = TargetGroup.sum(a, b)
        XCTAssertEqual(both.cpuNanoseconds, 1_500)
        XCTAssertEqual(both.userTicks, 14)
        XCTAssertEqual(both.residentBytes, 150)
        XCTAssertEqual(both.virtualBytes, 450)
        XCTAssertEqual(both.proportionalBytes, 120)
        XCTAssertEqual(both.threads, 5)
        XCTAssertEqual(both.processCount, 2)
        XCTAssertTrue(both.alive, "a group is up while any member is")
        XCTAssertNil(TargetGroup.sum(a, sample(cpu: 1, user: 1, rss: 1, pss: nil, threads: 1)).proportionalBytes,
                     "PSS of a member it may not read makes the group's unknown, not smaller")
    }

    func testListingsStayShort() {
        XCTAssertEqual(TargetGroup.listing([7]), "PID 7")
        XCTAssertEqual(TargetGroup.listing((1...10).map { Int32($0) }.reversed()), "PIDs 1, 2, 3, 4, 5, 6, 7, 8, …")
    }

    // MARK: metric updates

    private func exposition(_ metrics: DaemonMetrics) -> String { String(decoding: metrics.exposition(), as: UTF8.self) }

    private func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    func testEveryFigureTheTableExportsIsInTheExposition() {
        let metrics = DaemonMetrics()
        var read = sample(cpu: 5, user: 3, rss: 4096, pss: 2048, threads: 2)
        // Every figure read, so that every metric of the table has its series.
        var activity = Activity()
        activity.everySecond.levels.fdsOpen = 12
        activity.everySecond.levels.fdsLimit = 1024
        activity.everySecond.levels.oomScore = 667
        activity.waitNanoseconds = 1; activity.everySecond.voluntarySwitches = 2; activity.everySecond.involuntarySwitches = 3
        activity.minorFaults = 4; activity.majorFaults = 5
        activity.io = ProcIO(readChars: 6, writeChars: 7, readBytes: 8, writeBytes: 9)
        activity.memory = ProcMemoryKinds(anonBytes: 10, fileBytes: 11, shmemBytes: 12, swapBytes: 13)
        activity.everySecond.throttledNanoseconds = 14
        activity.everySecond.pressure.cpuSome = 15; activity.everySecond.pressure.cpuFull = 16; activity.everySecond.pressure.memorySome = 17
        activity.everySecond.pressure.memoryFull = 18; activity.everySecond.pressure.ioSome = 19; activity.everySecond.pressure.ioFull = 20
        activity.everySecond.levels.busiestThreads = [BusyThread(pid: 7, tid: 7, name: "x", cpuPercent: 50)]
        read.activity = activity
        read.memoryLimitBytes = 512 << 20                // read once a second, whatever else is collected
        read.cpuLimitCores = 0.5
        read.groupMemory = GroupMemory(usedBytes: 40 << 20, workingSetBytes: 38 << 20, anonBytes: 1 << 20, fileBytes: 39 << 20, kernelBytes: 1 << 18)
        read.proportionalReadAt = read.monotonicNanoseconds   // read at this tick: age 0
        var store = MetricsStore(pid: 7, capacity: 4, startNanoseconds: 0)
        var report = store.record(read)
        report.residentTrendBytesPerHour = 3600          // the leak fit needs a second of readings
        report.leakSuspected = false
        report.cpuPercent = 50                           // the first sample has no interval
        report.gpu.busyPercent = 17; report.gpu.memoryBytes = 1 << 30   // read on the GPU thread
        var net = NetworkFigures()                       // read on the network thread
        net.txBytesTotal = 5_000; net.rxBytesTotal = 700; net.tcpConnections = 2; net.tcpRetransmitsTotal = 3
        net.tcpConnectionsOpenedTotal = 9
        net.tcpRetransmitPercent = 1.5; net.tcpRTTms = 0.25
        report.net = net
        var events = EventSnapshot()                     // a frame seen: the FPS gauge exists
        events.framesTotal = 3; events.fps = 3; events.actionsPerSecond = 1
        read.startTicks = 100
        metrics.makeTarget(label: "x").consume(tick(read, report, command: "x", events: events, actions: [("A", 1)],
                                                    frames: [RecordedFrame(time: 1, milliseconds: 16, source: .events)]))
        metrics.update(sampleSeconds: 0.001)
        let text = exposition(metrics)
        for figure in Figure.all {
            guard let metric = figure.metric else { continue }
            let labels = metric.labels.map { ",\($0.name)=\"\($0.value)\"" }.joined()
            XCTAssertTrue(text.contains("\n" + metric.name + "{target=\"x\"" + labels + (metric.kind == .labelled ? "" : "}")), metric.series)
        }
        XCTAssertEqual(value(text, "perfhud_target_oom_score{target=\"x\"}"), 667, "the once-a-second figures reach the daemon as read")
        // The frames and actions since the tick before, from the tick alone.
        XCTAssertEqual(value(text, "perfhud_frame_duration_seconds_count{target=\"x\"}"), 1, text)
        XCTAssertEqual(value(text, "perfhud_frame_duration_seconds_bucket{target=\"x\",le=\"0.016666666666666666\"}"), 1, text)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"x\",action=\"A\"}"), 1)
        XCTAssertNotNil(value(text, "perfhud_target_start_time_seconds{target=\"x\"}"), "the start, from the sample's clock ticks")
        XCTAssertEqual(value(text, "perfhud_target_memory_limit_bytes{target=\"x\"}"), Double(512 << 20))
        // The network's: its totals mirrored into counters, the rest gauges in base units.
        XCTAssertEqual(value(text, "perfhud_target_network_transmit_bytes_total{target=\"x\"}"), 5_000)
        XCTAssertEqual(value(text, "perfhud_target_network_receive_bytes_total{target=\"x\"}"), 700)
        XCTAssertEqual(value(text, "perfhud_target_tcp_retransmits_total{target=\"x\"}"), 3)
        XCTAssertEqual(value(text, "perfhud_target_tcp_connections{target=\"x\"}"), 2)
        XCTAssertEqual(value(text, "perfhud_target_tcp_retransmit_ratio{target=\"x\"}"), 0.015)
        XCTAssertEqual(value(text, "perfhud_target_tcp_rtt_seconds{target=\"x\"}"), 0.00025)
    }

    /// A --unit or --match group with --include-children: each member sums its descendants, so a
    /// member below another is left to that one's tree (issue 44, item 11: counted twice before).
    func testAGroupsMembersBelowAnotherAreLeftToItsTree() {
        // 10 → 11 → 12, 10 → 13; 20 alone; 30's parent 25 is not a member: 30 is a top.
        let parents: [Int32: Int32] = [10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 25: 1, 30: 25]
        XCTAssertEqual(TargetGroup.topmost([12, 10, 11, 13, 20, 30]) { parents[$0] }, [10, 20, 30])
        XCTAssertEqual(TargetGroup.topmost([12, 13]) { parents[$0] }, [12, 13], "siblings' parent not a member: both stay")
        XCTAssertEqual(TargetGroup.topmost([11, 12]) { _ in nil }, [11, 12], "parents unknown (gone): each its own")
    }

    func testATargetWithNoProcessHasATickAndItsActionsAndFramesStillCount() {
        // A group with no member (a --match that found nothing yet, a service between two lives).
        let group = TargetGroup(includeChildren: false, isGroup: true)
        let events = SessionEvents(configuration: EventConfiguration())
        let watcher = TargetWatcher(source: group, events: events, pid: 0, capacity: 2, fallbackName: "")
        watcher.keepsEveryFrame = true
        events.aggregator.withLock { ingest in
            ingest.setTime(monotonicNanoseconds())
            Array("perfhud.action:2|c|#action:Saved\nperfhud.frame:16|ms".utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &ingest) }
        }
        let tick = watcher.tick()
        XCTAssertEqual(tick.status, .absent)
        XCTAssertFalse(tick.isRow, "no row: nothing of the target was read")
        XCTAssertNil(tick.figures.residentBytes, "unknown, not 0")
        XCTAssertNil(tick.figures.cpuPercent)
        XCTAssertEqual(tick.everyFrame?.actions.map(\.label), ["Saved"])
        XCTAssertEqual(tick.everyFrame?.frames.count, 1)
        let registry = DaemonMetrics()
        let metrics = registry.makeTarget(label: "svc")
        metrics.consume(tick)
        let text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_target_up{target=\"svc\"}"), 0)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"svc\",action=\"Saved\"}"), 2)
        XCTAssertEqual(value(text, "perfhud_frame_duration_seconds_count{target=\"svc\"}"), 1)
        XCTAssertNil(value(text, "perfhud_target_resident_memory_bytes{target=\"svc\"}"))
        XCTAssertTrue(watcher.tick().everyFrame?.actions.isEmpty ?? false, "each action handed over once")
    }

    func testMetricsFollowTheTargetAndCountersNeverGoBack() {
        let registry = DaemonMetrics()
        let metrics = registry.makeTarget(label: "web")
        var events = EventSnapshot()
        events.framesTotal = 10
        // 4.5 s of CPU by the CPU clock; the first row has no user/system split yet: all user until one comes.
        let read = sample(cpu: 4_500_000_000, user: 300, rss: 4096, pss: nil, threads: 4)
        var store = MetricsStore(pid: 42, capacity: 4, startNanoseconds: 0)
        let target = tick(read, store.record(read), command: "web", events: events, actions: [("A", 3)])
        metrics.consume(target)
        var text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_target_up{target=\"web\"}"), 1)
        XCTAssertEqual(value(text, "perfhud_target_resident_memory_bytes{target=\"web\"}"), 4096)
        XCTAssertEqual(value(text, "perfhud_target_cpu_seconds_total{target=\"web\",mode=\"user\"}"), 4.5)
        XCTAssertEqual(value(text, "perfhud_target_cpu_seconds_total{target=\"web\",mode=\"system\"}"), 0)
        XCTAssertEqual(value(text, "perfhud_frames_total{target=\"web\"}"), 10)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"web\",action=\"A\"}"), 3)
        XCTAssertEqual(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"42\"}"), 1)
        XCTAssertFalse(text.contains("perfhud_target_proportional_memory_bytes{"), "unknown PSS is absent, not 0")

        // A restarted target's CPU starts again from 0: the counter holds, then grows again.
        var restarted = target
        restarted.sample.userTicks = 100
        restarted.figures.cpuSecondsTotal = 1
        restarted.figures.pid = 43
        restarted.everyFrame = EveryFrame(actions: [("A", 2)])   // two more since the tick before
        metrics.consume(restarted)
        text = exposition(registry)
        XCTAssertGreaterThanOrEqual(value(text, "perfhud_target_cpu_seconds_total{target=\"web\",mode=\"user\"}")!, 4.5)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"web\",action=\"A\"}"), 5)
        XCTAssertNil(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"42\"}"), "the old PID's info is gone")
        XCTAssertEqual(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"43\"}"), 1)

        restarted.everyFrame = EveryFrame()
        restarted.events?.frameSource = .gl
        metrics.consume(restarted)
        restarted.events?.frameSource = .events
        metrics.consume(restarted)
        text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_frame_source_info{target=\"web\",source=\"events\"}"), 1)
        XCTAssertNil(value(text, "perfhud_frame_source_info{target=\"web\",source=\"gl\"}"), "one source at a time")

        var absent = restarted
        absent.status = .absent
        metrics.consume(absent)
        text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"web\",action=\"A\"}"), 5, "each action counted once")
        XCTAssertEqual(value(text, "perfhud_target_up{target=\"web\"}"), 0)
        XCTAssertNil(value(text, "perfhud_target_resident_memory_bytes{target=\"web\"}"), "no stale figures for a target that is gone")
        XCTAssertEqual(value(text, "perfhud_frames_total{target=\"web\"}"), 10, "counters stay")

        // Forgotten (gone for --forget-after): every series of the target leaves the exposition.
        registry.remove(metrics)
        text = exposition(registry)
        XCTAssertFalse(text.contains("target=\"web\""), text)
    }

    // MARK: what is logged, how often

    func testEachReasonIsLoggedOnceUntilTheTargetIsFound() {
        var warnings = DaemonWarnings()
        XCTAssertTrue(warnings.isNewReason("no process matches"))
        XCTAssertFalse(warnings.isNewReason("no process matches"), "the same reason every 2 s is logged once")
        XCTAssertTrue(warnings.isNewReason("web.service is not running"))
        warnings.targetFound()
        XCTAssertTrue(warnings.isNewReason("web.service is not running"), "after the target came and went, it is news again")
    }

    func testAHighFrequencyActionIsWarnedOnceWhileItLasts() {
        var warnings = DaemonWarnings()
        var events = EventSnapshot()
        func check() -> [String] { warnings.check(events: events, figures: nil, threshold: 20, leakWindow: 300) }
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 120, peak: 120)]
        XCTAssertEqual(check(), ["high-frequency action Slider.changed: 120/s (threshold 20/s)"])
        XCTAssertEqual(check(), [], "not again every tick")
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 0, peak: 120)]   // listed, no longer dispatched
        XCTAssertEqual(check(), [])
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 90, peak: 120)]
        XCTAssertEqual(check().count, 1, "a new burst is news")
    }

    func testASuspectedLeakIsWarnedOnceWhenItBeginsAndOnceWhenItEnds() {
        var warnings = DaemonWarnings()
        var lines: [String] = []
        // The leak fit of a real store: 1 s ticks, a 60 s window, RSS +1 MiB a second for 200 s, then flat.
        var store = MetricsStore(pid: 7, capacity: 16, startNanoseconds: 0,
                                 leak: LeakTrend.Settings(windowSeconds: 60, thresholdBytesPerHour: 50 * 1024 * 1024))
        var suspectedAt: [Int] = []
        for second in 0...400 {
            var read = sample(cpu: 0, user: 0, rss: UInt64(200 << 20) + UInt64(min(second, 200)) << 20, pss: nil, threads: 1)
            read.monotonicNanoseconds = UInt64(second + 1) * 1_000_000_000
            let report = store.record(read)
            if report.leakSuspected == true { suspectedAt.append(second) }
            // A tick of a target that is down says nothing.
            lines += warnings.check(events: EventSnapshot(), figures: second == 150 ? nil : report, threshold: 20, leakWindow: 60)
        }
        XCTAssertFalse(suspectedAt.isEmpty)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("memory keeps growing: RSS ") && lines[0].contains("a leak is suspected"), lines[0])
        XCTAssertTrue(lines[0].contains("over the last 60 s"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("memory no longer keeps growing"), lines[1])
    }

    // MARK: the why figures

    func testTheWhyFamiliesCountTheKernelsTotalsAndLeaveUnknownOnesOut() {
        let registry = DaemonMetrics()
        let metrics = registry.makeTarget(label: "db")
        var read = sample(cpu: 0, user: 0, rss: 4096, pss: nil, threads: 2)
        var activity = Activity()
        activity.waitNanoseconds = 1_500_000_000
        activity.everySecond.voluntarySwitches = 40
        activity.everySecond.involuntarySwitches = 2
        activity.minorFaults = 1000
        activity.majorFaults = 3
        activity.memory = ProcMemoryKinds(anonBytes: 8192, fileBytes: 4096, shmemBytes: 0, swapBytes: nil)
        activity.everySecond.levels.busiestThreads = [BusyThread(pid: 7, tid: 8, name: "worker \"3\"", cpuPercent: 97.5)]
        read.activity = activity
        var store = MetricsStore(pid: 7, capacity: 4, startNanoseconds: 0)
        func update(_ read: Sample) -> String {
            metrics.consume(tick(read, store.record(read), command: "db", events: EventSnapshot()))
            return exposition(registry)
        }
        var text = update(read)
        let t = "target=\"db\""
        XCTAssertEqual(value(text, "perfhud_target_cpu_wait_seconds_total{\(t)}"), 1.5)
        XCTAssertEqual(value(text, "perfhud_target_context_switches_total{\(t),kind=\"voluntary\"}"), 40)
        XCTAssertEqual(value(text, "perfhud_target_context_switches_total{\(t),kind=\"involuntary\"}"), 2)
        XCTAssertEqual(value(text, "perfhud_target_page_faults_total{\(t),kind=\"minor\"}"), 1000)
        XCTAssertEqual(value(text, "perfhud_target_memory_bytes{\(t),kind=\"anon\"}"), 8192)
        XCTAssertEqual(value(text, "perfhud_target_memory_bytes{\(t),kind=\"shmem\"}"), 0, "0 read is 0")
        XCTAssertEqual(value(text, "perfhud_target_busiest_thread_cpu_ratio{\(t)}"), 0.975)
        XCTAssertEqual(value(text, "perfhud_target_busiest_thread_info{\(t),thread=\"worker \\\"3\\\"\"}"), 1, text)
        XCTAssertEqual(text.components(separatedBy: "# TYPE perfhud_target_memory_bytes gauge").count, 2, "one family, one TYPE line")
        for absent in ["perfhud_target_io_bytes_total{", "kind=\"swap\"", "perfhud_target_cpu_throttled_seconds_total{",
                       "perfhud_target_pressure_seconds_total{"] {
            XCTAssertFalse(text.contains(absent), "unknown is no series, never 0: \(absent)")
        }

        // Counters follow the kernel's totals; a total that went back (a member left) is the new start.
        read.activity?.everySecond.voluntarySwitches = 100
        read.activity?.everySecond.levels.busiestThreads = [BusyThread(pid: 7, tid: 9, name: "io", cpuPercent: 20)]
        text = update(read)
        XCTAssertEqual(value(text, "perfhud_target_context_switches_total{\(t),kind=\"voluntary\"}"), 100)
        XCTAssertNil(value(text, "perfhud_target_busiest_thread_info{\(t),thread=\"worker \\\"3\\\"\"}"), "one thread at a time")
        XCTAssertEqual(value(text, "perfhud_target_busiest_thread_info{\(t),thread=\"io\"}"), 1)
        read.activity?.everySecond.voluntarySwitches = 30
        _ = update(read)
        read.activity?.everySecond.voluntarySwitches = 50
        text = update(read)
        XCTAssertEqual(value(text, "perfhud_target_context_switches_total{\(t),kind=\"voluntary\"}"), 120)

        // Down: the gauges go, the counters stay.
        metrics.consume(tick(read, store.record(read), command: "db", events: EventSnapshot(), absent: true))
        text = exposition(registry)
        XCTAssertNil(value(text, "perfhud_target_memory_bytes{\(t),kind=\"anon\"}"))
        XCTAssertNil(value(text, "perfhud_target_busiest_thread_cpu_ratio{\(t)}"))
        XCTAssertEqual(value(text, "perfhud_target_context_switches_total{\(t),kind=\"voluntary\"}"), 120)
    }
}

/// A group's figures combine its members' (issue 43, item 3): a field `TargetGroup.sum` forgot
/// took its first member's value, silently (a group's RSS would be one process's).
final class GroupCombinationTests: XCTestCase {
    /// A sample with every field read, each value different from `member`'s other samples'.
    private func member(_ n: UInt64) -> Sample {
        let d = Double(n)
        var sample = Sample(monotonicNanoseconds: n, wallSeconds: d, alive: n == 1, cpuNanoseconds: n, userTicks: n, systemTicks: n,
                            residentBytes: n, virtualBytes: n, proportionalBytes: n, threads: Int(n), processCount: Int(n))
        sample.memoryLimitBytes = n << 20
        sample.cpuLimitCores = d / 4
        sample.groupMemory = GroupMemory(usedBytes: n, workingSetBytes: n, anonBytes: n, fileBytes: n, kernelBytes: n)
        sample.stopped = n == 1
        sample.proportionalReadAt = n
        sample.memoryUnreportedReason = "m\(n)"
        sample.countsProcessesOnce = n == 1
        sample.oomKills = n
        sample.oomKillAt = n
        sample.processStartNanoseconds = n
        sample.execsSeen = Int(n)
        sample.startTicks = n
        var activity = Activity()
        activity.waitNanoseconds = n; activity.waitReadAt = n; activity.minorFaults = n; activity.majorFaults = n
        activity.io = ProcIO(readChars: n, writeChars: n, readBytes: n, writeBytes: n)
        activity.memory = ProcMemoryKinds(anonBytes: n, fileBytes: n, shmemBytes: n, swapBytes: n)
        activity.everySecond.readAt = n
        activity.everySecond.voluntarySwitches = n; activity.everySecond.involuntarySwitches = n
        activity.everySecond.throttledNanoseconds = n
        activity.everySecond.pressure.cpuSome = n; activity.everySecond.pressure.cpuFull = n
        activity.everySecond.pressure.memorySome = n; activity.everySecond.pressure.memoryFull = n
        activity.everySecond.pressure.ioSome = n; activity.everySecond.pressure.ioFull = n
        activity.everySecond.levels.fdsOpen = n; activity.everySecond.levels.fdsLimit = n; activity.everySecond.levels.oomScore = n
        activity.everySecond.levels.busiestThreads = [BusyThread(pid: Int32(n), tid: Int32(n), name: "t\(n)", cpuPercent: d)]
        sample.activity = activity
        var gpu = GPUFigures()
        gpu.busyPercent = d; gpu.memoryBytes = n; gpu.memoryBusyPercent = d; gpu.encoderPercent = d; gpu.decoderPercent = d
        gpu.unreportedReason = "r\(n)"
        var device = GPUDevice(name: "g\(n)", id: "id\(n)")
        device.busyPercent = d; device.memoryUsedBytes = n; device.memoryTotalBytes = n; device.temperatureCelsius = d
        device.powerWatts = d; device.clockMHz = d; device.throttleReasons = n
        gpu.device = device
        sample.gpu = GPUFiguresBox(gpu)
        var net = NetworkFigures()
        net.txBytesPerSecond = d; net.rxBytesPerSecond = d; net.txBytesTotal = n; net.rxBytesTotal = n; net.tcpConnections = d
        net.tcpRetransmitsPerSecond = d; net.tcpRetransmitsTotal = n; net.tcpRetransmitPercent = d; net.tcpRTTms = d
        net.tcpConnectionsOpenedTotal = n; net.tcpConnectionsOpenedPerSecond = d
        net.source = "s\(n)"; net.unreportedReason = "u\(n)"
        sample.net = NetworkFiguresBox(net)
        return sample
    }

    /// Every leaf of a value by its path (`activity.io.readBytes`), optionals and boxes looked
    /// into; nil: a field not read (`<nil>`).
    private func leaves(_ value: Any, _ path: String = "") -> [String: String] {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return [path: "<nil>"] }
            return leaves(wrapped, path)
        }
        guard mirror.displayStyle == .struct || mirror.displayStyle == .class, !mirror.children.isEmpty else { return [path: "\(value)"] }
        var result: [String: String] = [:]
        for child in mirror.children {
            guard let label = child.label else { continue }
            result.merge(leaves(child.value, path.isEmpty ? label : path + "." + label)) { first, _ in first }
        }
        return result
    }

    func testEveryFieldOfAGroupCombinesItsMembersOrIsSaidToBeOnes() {
        let one = member(1), two = member(2)
        let fields = leaves(one)
        XCTAssertEqual(fields.filter { $0.value == "<nil>" }.map(\.key), [], "the fixture leaves a field unread: set it in member(_:)")
        XCTAssertEqual(Set(leaves(two).keys), Set(fields.keys))
        // Combined: in one order or the other the group's value is not its first member's (a
        // peak is the first's when the first is the larger, the smallest when it is the smaller).
        let forward = leaves(TargetGroup.sum(one, two)), backward = leaves(TargetGroup.sum(two, one))
        let twoFields = leaves(two)
        for path in fields.keys.sorted() where !TargetGroup.takenFromOneMember.contains(path) {
            XCTAssertTrue(forward[path] != fields[path] || backward[path] != twoFields[path],
                          "\(path) is the first member's in a group (\(fields[path]!) + \(twoFields[path]!) gave \(forward[path]!)): combine it in TargetGroup.sum, or say it is one member's (takenFromOneMember)")
        }
        for path in TargetGroup.takenFromOneMember {
            XCTAssertNotNil(fields[path], "takenFromOneMember names \(path), which Sample does not have")
        }
    }
}
