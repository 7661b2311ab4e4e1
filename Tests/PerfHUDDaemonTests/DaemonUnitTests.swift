import XCTest
@testable import PerfHUDDaemon
@testable import PerfHUDCore
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
        read.activity = Activity()
        read.activity?.fdsOpen = 12
        read.activity?.fdsLimit = 1024
        var store = MetricsStore(pid: 7, capacity: 4, startNanoseconds: 0)
        var report = store.record(read)
        report.residentTrendBytesPerHour = 3600          // the leak fit needs a second of readings
        report.leakSuspected = false
        metrics.makeTarget(label: "x").update(target: DaemonMetrics.Target(sample: read, report: report, commandName: "x", pid: 7,
                                                                           startTimeSeconds: 1, ticksPerSecond: 100),
                                              events: EventSnapshot(), actionTotals: [("A", 1)])
        metrics.update(sampleSeconds: 0.001)
        let text = exposition(metrics)
        for figure in Figure.all {
            guard let metric = figure.metric else { continue }
            XCTAssertTrue(text.contains("\n" + metric.name + " ") || text.contains("\n" + metric.name + "{"), metric.name)
        }
    }

    func testMetricsFollowTheTargetAndCountersNeverGoBack() {
        let registry = DaemonMetrics()
        let metrics = registry.makeTarget(label: "web")
        var events = EventSnapshot()
        events.framesTotal = 10
        let read = sample(cpu: 0, user: 300, rss: 4096, pss: nil, threads: 4)
        var store = MetricsStore(pid: 42, capacity: 4, startNanoseconds: 0)
        let target = DaemonMetrics.Target(sample: read, report: store.record(read), commandName: "web",
                                          pid: 42, startTimeSeconds: 1000, ticksPerSecond: 100)
        metrics.update(target: target, events: events, actionTotals: [("A", 3)])
        var text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_target_up{target=\"web\"}"), 1)
        XCTAssertEqual(value(text, "perfhud_target_resident_memory_bytes{target=\"web\"}"), 4096)
        XCTAssertEqual(value(text, "perfhud_target_cpu_seconds_total{target=\"web\",mode=\"user\"}"), 3)
        XCTAssertEqual(value(text, "perfhud_frames_total{target=\"web\"}"), 10)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"web\",action=\"A\"}"), 3)
        XCTAssertEqual(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"42\"}"), 1)
        XCTAssertFalse(text.contains("perfhud_target_proportional_memory_bytes{"), "unknown PSS is absent, not 0")

        // A restarted target's CPU starts again from 0: the counter holds, then grows again.
        var restarted = target
        restarted.sample.userTicks = 100
        restarted.pid = 43
        metrics.update(target: restarted, events: events, actionTotals: [("A", 5)])
        text = exposition(registry)
        XCTAssertGreaterThanOrEqual(value(text, "perfhud_target_cpu_seconds_total{target=\"web\",mode=\"user\"}")!, 3)
        XCTAssertEqual(value(text, "perfhud_actions_total{target=\"web\",action=\"A\"}"), 5)
        XCTAssertNil(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"42\"}"), "the old PID's info is gone")
        XCTAssertEqual(value(text, "perfhud_target_info{target=\"web\",comm=\"web\",pid=\"43\"}"), 1)

        events.frameSource = .gl
        metrics.update(target: restarted, events: events, actionTotals: [("A", 5)])
        events.frameSource = .events
        metrics.update(target: restarted, events: events, actionTotals: [("A", 5)])
        text = exposition(registry)
        XCTAssertEqual(value(text, "perfhud_frame_source_info{target=\"web\",source=\"events\"}"), 1)
        XCTAssertNil(value(text, "perfhud_frame_source_info{target=\"web\",source=\"gl\"}"), "one source at a time")

        metrics.update(target: nil, events: events, actionTotals: [])
        text = exposition(registry)
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
        let series = TimeSeries(capacity: 10)
        var events = EventSnapshot()
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 120, peak: 120)]
        XCTAssertEqual(warnings.check(events: events, series: series, threshold: 20),
                       ["high-frequency action Slider.changed: 120/s (threshold 20/s)"])
        XCTAssertEqual(warnings.check(events: events, series: series, threshold: 20), [], "not again every tick")
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 0, peak: 120)]   // listed, no longer dispatched
        XCTAssertEqual(warnings.check(events: events, series: series, threshold: 20), [])
        events.highFrequencyActions = [.init(action: "Slider.changed", rate: 90, peak: 120)]
        XCTAssertEqual(warnings.check(events: events, series: series, threshold: 20).count, 1, "a new burst is news")
    }

    func testMemoryGrowthIsWarnedOnceUntilItStops() {
        var warnings = DaemonWarnings()
        var series = TimeSeries(capacity: 2000)
        var lines: [String] = []
        for second in 0...900 {
            let rss = second <= 700 ? 200e6 + Double(second) * 200_000 : 200e6
            series.append(time: Double(second), cpuPercent: nil, residentBytes: rss, proportionalBytes: nil, userTicks: nil, systemTicks: nil)
            lines += warnings.check(events: EventSnapshot(), series: series, threshold: 20)
        }
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("memory keeps growing: RSS ") ?? false, "\(lines)")
    }
}
