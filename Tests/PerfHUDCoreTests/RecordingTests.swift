import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDPipeline
@testable import PerfHUDRecordings

final class RecordingTests: XCTestCase {
    // MARK: --fail-on expressions

    func testConditionsWithUnits() throws {
        let rss = try FailCondition("rss_peak_bytes > 200MiB")
        XCTAssertEqual(rss.metric, "rss_peak_bytes")
        XCTAssertEqual(rss.op, .greater)
        XCTAssertEqual(rss.value, .number(200 * 1024 * 1024))
        XCTAssertEqual(try FailCondition("fps_1pct_low<50").value, .number(50))
        XCTAssertEqual(try FailCondition("  frame_p99_ms >= 16.7 ms ").value, .number(16.7))
        XCTAssertEqual(try FailCondition("rss_end_bytes <= 5KB").value, .number(5000))
        XCTAssertEqual(try FailCondition("phase.Gallery.kept_bytes > 5MiB").metric, "phase.Gallery.kept_bytes")
        XCTAssertEqual(try FailCondition("rss_peak_bytes > baseline * 1.10").value, .baseline(factor: 1.10))
        XCTAssertEqual(try FailCondition("rss_peak_bytes > baseline").value, .baseline(factor: 1))
        XCTAssertEqual(try FailCondition("cpu_percent_avg != -3").op, .notEqual)
    }

    func testConditionsItCannotRead() {
        for text in ["", "rss_peak_bytes", "rss_peak_bytes >", "> 5", "rss_peak_bytes >> 5", "rss_peak_bytes > 5 parsecs",
                     "rss_peak_bytes > 1e3", "rss_peak_bytes > nan", "rss_peak_bytes > 0x10", "rss_peak_bytes > baseline * x",
                     "rss_peak_bytes > 1.2.3", "phase..x > 1", "9lives > 1", "rss_peak_bytes = 5", String(repeating: "a", count: 2000)] {
            XCTAssertThrowsError(try FailCondition(text), text) { error in
                XCTAssertEqual((error as? PerfHUDError)?.exitStatus, .usage, text)
            }
        }
    }

    func testConditionsHoldAgainstFiguresAndTheBaseline() throws {
        var recording = Recording()
        recording.samples = [.init(t: 0, cpuPercent: 10, residentBytes: 100), .init(t: 1, cpuPercent: 30, residentBytes: 300),
                             .init(t: 2, cpuPercent: 20, residentBytes: 200)]
        let summary = RecordingSummary(recording)
        var older = recording
        older.samples[1].residentBytes = 250
        let baseline = RecordingSummary(older)
        XCTAssertTrue(try FailCondition("rss_peak_bytes > 299").holds(for: summary, baseline: nil).holds)
        XCTAssertFalse(try FailCondition("rss_peak_bytes > 300").holds(for: summary, baseline: nil).holds)
        XCTAssertTrue(try FailCondition("rss_peak_bytes > baseline * 1.10").holds(for: summary, baseline: baseline).holds)
        XCTAssertFalse(try FailCondition("rss_peak_bytes > baseline * 1.25").holds(for: summary, baseline: baseline).holds)
        XCTAssertThrowsError(try FailCondition("rss_peak_bytes > baseline").holds(for: summary, baseline: nil))
        XCTAssertThrowsError(try FailCondition("no_such_thing > 1").holds(for: summary, baseline: nil))
        // A figure the run does not have (no frames) cannot hold, and says why.
        let noFrames = try FailCondition("fps_1pct_low < 50").holds(for: summary, baseline: nil)
        XCTAssertFalse(noFrames.holds)
        XCTAssertEqual(noFrames.unknown?.hasPrefix("the run has no fps_1pct_low: no frames were reported (figures it has: duration_s, samples, cpu_percent_avg"), true, noFrames.unknown ?? "")
        XCTAssertNil(try FailCondition("rss_peak_bytes > 300").holds(for: summary, baseline: nil).unknown)
    }

    func testRSSAtStartIsATickAfterTheLastExec() {
        var recording = Recording()
        recording.meta = ["tick_seconds": "0.1"]
        func row(_ t: Double, _ bytes: UInt64, execs: Int) -> Recording.SampleRow {
            var sample = Recording.SampleRow(t: t, residentBytes: bytes)
            sample.execsSeen = execs
            return sample
        }
        // The wrapper just launched (600 KiB), the wrapper running, the program just exec'd, the program.
        recording.samples = [row(0, 600 << 10, execs: 0), row(0.1, 3 << 20, execs: 0), row(0.4, 700 << 10, execs: 1),
                             row(0.5, 12 << 20, execs: 1), row(0.6, 30 << 20, execs: 1)]
        XCTAssertEqual(RecordingSummary(recording).rssStartBytes, 12 << 20)
        recording.samples = Array(recording.samples.prefix(3))
        XCTAssertEqual(RecordingSummary(recording).rssStartBytes, 700 << 10, "too short for a settled row: the program's first")
        recording.samples = [row(0, 5 << 20, execs: 0), row(0.1, 6 << 20, execs: 0)]
        XCTAssertEqual(RecordingSummary(recording).rssStartBytes, 6 << 20, "a tick after the start")
    }

    func testAHistoryPast256MiBIsRefusedWithTheFigureAndWhatFits() {
        var watch = WatchConfiguration()
        watch.tickNanoseconds = 1_000_000
        watch.historyNanoseconds = 165 * 60 * 1_000_000_000
        XCTAssertEqual(watch.historyBytes, 9_900_000 * 56)
        XCTAssertEqual(watch.historyMemoryProblem, "--history 2h45m at --tick 1ms keeps 9900000 samples, 528.7 MiB of memory (at most 256.0 MiB): "
                       + "give a shorter --history (at most 1h19m at this tick) or a coarser --tick (5ms or more)")
        watch.tickNanoseconds = 5_000_000
        XCTAssertNil(watch.historyMemoryProblem)
        watch.tickNanoseconds = 100_000_000
        watch.historyNanoseconds = 600_000_000_000
        XCTAssertEqual(watch.historyBytes, 6000 * 56, "the default: 328 KiB")
        XCTAssertNil(watch.historyMemoryProblem)
    }

    func testAConditionOnAPhaseTheRunNeverEnteredNamesThePhasesItHas() throws {
        var recording = Recording()
        recording.samples = [.init(t: 0, cpuPercent: 10, residentBytes: 100, phase: "Home"), .init(t: 1, cpuPercent: 30, residentBytes: 300, phase: "Gallery"),
                             .init(t: 2, cpuPercent: 20, residentBytes: 200, phase: "Editor")]
        recording.phases = [.init(name: "Home", t: 0, tExit: 1, entryBytes: 100, exitBytes: 300), .init(name: "Gallery", t: 1, tExit: 2, entryBytes: 300, exitBytes: 200),
                            .init(name: "Editor", t: 2, tExit: nil, entryBytes: 200, exitBytes: nil), .init(name: "Home", t: 2.5, tExit: nil, entryBytes: 200, exitBytes: nil)]
        let summary = RecordingSummary(recording)
        XCTAssertEqual(summary.phaseNamesOfRun, ["Home", "Gallery", "Editor"])
        let typo = try FailCondition("phase.Galery.kept_bytes > 1MiB").holds(for: summary, baseline: nil)
        XCTAssertFalse(typo.holds)
        XCTAssertEqual(typo.unknown, "the run never entered phase \"Galery\" (phases: Home, Gallery, Editor)")
        let open = try FailCondition("phase.Editor.kept_bytes > 1MiB").holds(for: summary, baseline: nil)
        XCTAssertEqual(open.unknown, "the run has no kept_bytes for phase \"Editor\": it was never left, or its memory at exit was not read")
        XCTAssertNil(try FailCondition("phase.Gallery.kept_bytes > 1MiB").holds(for: summary, baseline: nil).unknown)
        let onlyEditor = RecordingSummary(recording, phase: "Editor")
        XCTAssertEqual(try FailCondition("phase.Gallery.kept_bytes > 1MiB").holds(for: onlyEditor, baseline: nil).unknown,
                       "the run has phase \"Gallery\", but --phase \"Editor\" leaves it out")
        let againstBaseline = try FailCondition("phase.Gallery.kept_bytes > baseline").holds(for: summary, baseline: RecordingSummary(Recording()))
        XCTAssertEqual(againstBaseline.unknown, "the baseline never entered phase \"Gallery\" (it reported no phases)")
    }

    // MARK: the summary's figures

    func testNearestRankPercentiles() {
        let values = (1...1000).map(Double.init)
        XCTAssertEqual(RecordingSummary.percentile(values, 99), 990)
        XCTAssertEqual(RecordingSummary.percentile(values, 99.9), 999)
        XCTAssertEqual(RecordingSummary.percentile(values, 50), 500)
        XCTAssertEqual(RecordingSummary.percentile([7], 99.9), 7)
        XCTAssertNil(RecordingSummary.percentile([], 50))
    }

    func testFrameFiguresAsMangoHudAndTheLiveView() {
        var recording = Recording()
        recording.meta = ["refresh_hz": "60", "jank_factor": "1.5"]
        recording.samples = [.init(t: 0), .init(t: 10)]
        // 990 frames of 16 ms, 9 of 40 ms (janky, one dropped each: round(2.4) - 1), one of 100 ms (5 dropped).
        recording.frames = (0..<1000).map { .init(t: Double($0) / 100, milliseconds: $0 < 990 ? 16 : $0 < 999 ? 40 : 100) }
        let summary = RecordingSummary(recording)
        XCTAssertEqual(summary.durationSeconds, 10)
        XCTAssertEqual(summary.fpsAvg, 100)                       // frames over time
        XCTAssertEqual(summary.frameP99, 16)
        XCTAssertEqual(summary.fps1PercentLow, 1000 / 16)
        XCTAssertEqual(summary.frameP999, 40)
        XCTAssertEqual(summary.fps01PercentLow, 25)
        XCTAssertEqual(summary.jankyFrames, 10)
        XCTAssertEqual(summary.droppedFrames, 9 * 1 + 5)
    }

    func testCPUMemoryActionsAndPhases() {
        var recording = Recording()
        recording.meta = ["action_threshold": "20"]
        recording.samples = [.init(t: 0, cpuPercent: nil, residentBytes: 100, phase: "Home"),
                             .init(t: 1, cpuPercent: 10, residentBytes: 500, phase: "Gallery"),
                             .init(t: 2, cpuPercent: 50, residentBytes: 400, phase: "Gallery"),
                             .init(t: 3, cpuPercent: 30, residentBytes: 150, phase: "Home")]
        recording.phases = [.init(name: "Home", t: 0, tExit: 0.5, entryBytes: 100, exitBytes: 120),
                            .init(name: "Gallery", t: 0.5, tExit: 2.5, entryBytes: 120, exitBytes: 150),
                            .init(name: "Home", t: 2.5, tExit: nil, entryBytes: 150, exitBytes: nil)]
        // As a recording has them: at the time of the tick that drained them (here, its rows').
        recording.actions = (0..<10).map { _ in .init(t: 1, label: "Slider.changed", count: 3) }
            + [.init(t: 2, label: "Save", count: 1)]
        let summary = RecordingSummary(recording)
        XCTAssertEqual(summary.cpuPercentAvg, 30)
        XCTAssertEqual(summary.cpuPercentMax, 50)
        XCTAssertEqual(summary.rssPeakBytes, 500)
        XCTAssertEqual(summary.rssEndBytes, 150)
        XCTAssertEqual(summary.actionsTotal, 31)
        XCTAssertEqual(summary.highFrequencyActions.map(\.action), ["Slider.changed"])
        XCTAssertEqual(summary.highFrequencyActions.first?.peak, 30)
        XCTAssertEqual(summary.phases.map(\.name), ["Home", "Gallery"])
        XCTAssertEqual(summary.phases[0].visits, 2)
        XCTAssertEqual(summary.phases[0].keptBytes, 20)
        XCTAssertEqual(summary.phases[1].keptBytes, 30)
        XCTAssertEqual(summary.value(of: "phase.Gallery.kept_bytes"), .some(30))
        XCTAssertEqual(summary.value(of: "phase.Gallery.nonsense"), nil)
        let gallery = RecordingSummary(recording, phase: "Gallery")
        XCTAssertEqual(gallery.durationSeconds, 2)
        XCTAssertEqual(gallery.cpuPercentAvg, 30)
        XCTAssertEqual(gallery.rssPeakBytes, 500)
        XCTAssertEqual(gallery.actionsTotal, 31)
    }

    func testPhasesSideBySideWithTheBaseline() {
        var recording = Recording()
        recording.samples = [.init(t: 0, residentBytes: 10), .init(t: 4, residentBytes: 10)]
        recording.phases = [.init(name: "Home", t: 0, tExit: 1, entryBytes: 100, exitBytes: 300),
                            .init(name: "Gallery", t: 1, tExit: 4, entryBytes: 300, exitBytes: 20 << 20)]
        var older = recording
        older.phases = [.init(name: "Home", t: 0, tExit: 2, entryBytes: 100, exitBytes: 200),
                        .init(name: "Settings", t: 2, tExit: 4, entryBytes: 200, exitBytes: 200)]
        let markdown = SummaryFormatter.markdown(RecordingSummary(recording), recording: recording, baseline: RecordingSummary(older))
        XCTAssertTrue(markdown.contains("| phase | kept (baseline) | kept | change | time (baseline) | time |"), markdown)
        XCTAssertTrue(markdown.contains("| Home | +100 B | +200 B | +100 B | 2 s | 1 s |"), markdown)
        XCTAssertTrue(markdown.contains("| Gallery | n/a | +20.0 MiB |  | n/a | 3 s |"), markdown)
        XCTAssertTrue(markdown.contains("| Settings | ±0 B | n/a |  | 2 s | n/a |"), markdown)
        // Without a baseline, no comparison.
        XCTAssertFalse(SummaryFormatter.markdown(RecordingSummary(recording), recording: recording).contains("kept (baseline)"))
    }
}
