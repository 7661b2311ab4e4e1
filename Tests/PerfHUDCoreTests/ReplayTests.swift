import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDRecordings
#if canImport(Glibc)
import Glibc
#endif

final class ReplayTests: XCTestCase {
    // MARK: the playhead and its keys

    func testPlayheadMovesBySpeedStopsAtTheEndAndPauses() {
        var playhead = ReplayPlayhead(start: 1, end: 11)
        playhead.advance(realSeconds: 2)
        XCTAssertEqual(playhead.position, 3)
        playhead.faster()
        playhead.advance(realSeconds: 2)
        XCTAssertEqual(playhead.position, 7)
        playhead.togglePause()
        playhead.advance(realSeconds: 5)
        XCTAssertEqual(playhead.position, 7)
        XCTAssertEqual(playhead.description, "paused 00:00:06/00:00:10")
        playhead.togglePause()
        playhead.advance(realSeconds: 100)
        XCTAssertEqual(playhead.position, 11)
        XCTAssertTrue(playhead.atEnd)
        XCTAssertEqual(playhead.description, "end 00:00:10/00:00:10")
        playhead.seek(by: -100)
        XCTAssertEqual(playhead.position, 1)
        XCTAssertEqual(playhead.description, "replay ×2 00:00:00/00:00:10")
        for _ in 0..<20 { playhead.slower() }
        XCTAssertEqual(playhead.speed, ReplayPlayhead.slowest)
        for _ in 0..<20 { playhead.faster() }
        XCTAssertEqual(playhead.speed, ReplayPlayhead.fastest)
        XCTAssertEqual(ReplayPlayhead(start: 0, end: 1, speed: 1000).speed, ReplayPlayhead.fastest)
    }

    func testKeysFromWhatTerminalsSend() {
        XCTAssertEqual(ReplayKey.parse(Array(" q+-=".utf8)), [.pause, .quit, .faster, .slower, .faster])
        XCTAssertEqual(ReplayKey.parse(Array("\u{1B}[C\u{1B}[D\u{1B}OC".utf8)), [.seek(5), .seek(-5), .seek(5)])
        XCTAssertEqual(ReplayKey.parse(Array("\u{1B}[1;2C\u{1B}[1;2D".utf8)), [.seek(60), .seek(-60)])
        XCTAssertEqual(ReplayKey.parse(Array("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}OH".utf8)), [.start, .end, .start, .end, .start])
        // Unknown sequences and bytes are skipped; a sequence cut at the end is dropped.
        XCTAssertEqual(ReplayKey.parse(Array("x\u{1B}[15~ \u{1B}[".utf8)), [.pause])
        XCTAssertEqual(ReplayKey.parse([0x1B]), [])
    }

    // MARK: the HUD's state at a point of the recording

    private func recording(samples: Int) -> Recording {
        var recording = Recording()
        for index in 0..<samples {
            var sample = Recording.SampleRow(t: Double(index) * 0.1, cpuPercent: Double(index % 7), residentBytes: UInt64(1000 + index),
                                             phase: index < 30 ? "Home" : "Gallery")
            sample.proportionalBytes = UInt64(500 + index)
            recording.samples.append(sample)
            if index % 10 == 5 { recording.actions.append(.init(t: sample.t, label: "tap \(index)", count: 2)) }
        }
        recording.phases = [.init(name: "Home", t: 0, tExit: 3, entryBytes: 1000, exitBytes: 1030),
                            .init(name: "Gallery", t: 3, tExit: nil, entryBytes: 1030, exitBytes: nil)]
        return recording
    }

    func testMovingForwardPassesEachActionAndPhaseEndOnce() {
        var cursor = ReplayCursor(rows: RecordingRows(recording(samples: 60)), capacity: 100, historySeconds: 10)
        var actions: [String] = [], ended: [String] = []
        for step in 0...60 {
            let passed = cursor.move(to: Double(step) * 0.1)
            actions += passed.flatMap { $0.log.map(\.label) }
            ended += passed.flatMap { $0.endedPhases.map(\.name) }
        }
        XCTAssertEqual(actions, ["tap 5", "tap 15", "tap 25", "tap 35", "tap 45", "tap 55"])
        XCTAssertEqual(ended, ["Home"])
        XCTAssertEqual(cursor.tick?.phases.lastFinishedByName.first?.keptBytes, 30)
        XCTAssertTrue(cursor.isAtLastSample)
    }

    func testASeekBackGivesTheStateMovingForwardGave() {
        let recording = recording(samples: 60)
        var forward = ReplayCursor(rows: RecordingRows(recording), capacity: 20, historySeconds: 2)
        for step in 0...45 { _ = forward.move(to: Double(step) * 0.1) }
        var seeked = ReplayCursor(rows: RecordingRows(recording), capacity: 20, historySeconds: 2)
        _ = seeked.move(to: 5.9)
        let passed = seeked.move(to: 4.5)
        XCTAssertTrue(passed.isEmpty, "a seek does not replay the log")
        XCTAssertEqual(seeked.index, forward.index)
        XCTAssertEqual(seeked.tick?.phases.current?.name, "Gallery")
        XCTAssertEqual(seeked.tick?.phases.lastFinishedByName.map(\.name), forward.tick?.phases.lastFinishedByName.map(\.name))
        XCTAssertEqual(seeked.tick?.figures.residentBytes, forward.tick?.figures.residentBytes)
        // The graph's window (the last 2 s) holds the same samples either way.
        for figure in [TimeSeries.Figure.residentBytes, .cpuPercent, .phase] {
            XCTAssertEqual(seeked.series.minMax(figure, width: 20, from: 2.5, to: 4.5), forward.series.minMax(figure, width: 20, from: 2.5, to: 4.5))
        }
        // Then forward again: the actions after the seek point, once.
        XCTAssertEqual(seeked.move(to: 5.6).flatMap { $0.log.map(\.label) }, ["tap 55"])
    }

    func testBeforeTheFirstSampleThereIsNone() {
        var cursor = ReplayCursor(rows: RecordingRows(recording(samples: 5)), capacity: 10, historySeconds: 1)
        _ = cursor.move(to: 0.25)
        XCTAssertEqual(cursor.index, 2)
        _ = cursor.move(to: -1)
        XCTAssertEqual(cursor.index, -1)
        XCTAssertNil(cursor.sample)
        XCTAssertNil(cursor.tick)
        XCTAssertEqual(cursor.series.count, 0)
    }

    // MARK: what a replay prints: the live rows

    func testRecordedRowsComeBackAsTheLiveRows() throws {
        let path = NSTemporaryDirectory() + "perfhud-replay-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let start: UInt64 = 1_000_000_000
        var configuration = EventConfiguration()
        configuration.refreshHz = 60
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 42, command: "sh", commandLine: "sh -c x",
                                                                 tickNanoseconds: 100_000_000, events: configuration),
                                    startNanoseconds: start, warn: { XCTFail($0) })
        var live: [String] = []
        let wallStart = Double(Recording.milliseconds(unix: Double(time(nil)))) / 1000
        for tick in 0..<5 {
            let elapsed = Double(tick) * 0.1 + 0.0004 * Double(tick)   // not whole milliseconds
            // Figures at the resolution `MetricsStore` and `EventAggregator` keep them at.
            let cpus = Double(ProcessDirectory.onlineCPUs)
            let report = TargetFigures(wallSeconds: wallStart + elapsed + 0.0123456, elapsedSeconds: elapsed, pid: 42, alive: true,
                                cpuPercent: 33.33, cpuMachinePercent: (33.33 / cpus).atResolution(100), cpuUserPercent: 30, cpuSystemPercent: 3.33,
                                residentBytes: 4096 * UInt64(tick + 1), residentTrendBytesPerSecond: 12, proportionalBytes: 2048,
                                virtualBytes: 1 << 30, threads: 3, processCount: 1, cpuSecondsTotal: 0.0123456 * Double(tick))
            var events = EventSnapshot()
            events.fps = 59.94
            events.framesTotal = Double(tick * 6)
            events.frameP99 = 17.001
            events.fpsOnePercentLow = (1000 / 17.001).atResolution(100)
            events.rejected = tick >= 2 ? ["peer uid": UInt64(tick)] : [:]
            let command = tick < 3 ? "sh" : "sleep"   // an exec
            recorder.consume(Self.tick(report, at: start + UInt64(elapsed * 1e9), commandName: command, events: events))
            live.append(RowFormatter.json(report, commandName: command, status: .running, events: events))
        }
        // The exit row: a tick of its own, the target no longer alive, with how it ended.
        let elapsed = 0.5
        let exitReport = TargetFigures(wallSeconds: wallStart + elapsed, elapsedSeconds: elapsed, pid: 42, alive: false, processCount: 0,
                                cpuSecondsTotal: 0.0493824)
        var exitTick = Self.tick(exitReport, at: start + UInt64(elapsed * 1e9), commandName: "sleep", events: EventSnapshot(),
                                 status: .exited(code: 3, signal: nil))
        exitTick.isFinal = true
        recorder.consume(exitTick)
        live.append(RowFormatter.json(exitReport, commandName: "sleep", status: exitTick.status, events: exitTick.events))
        recorder.close()
        let recording = try Recording(path: path)
        XCTAssertEqual(recording.targetEnded, .exited(code: 3, signal: nil))
        let rows = RecordingRows(recording)
        XCTAssertEqual(rows.count, 6, "five samples and the exit row, not repeated")
        XCTAssertEqual(rows.exitRow, 5)
        let replayed = (0..<rows.count).map { index -> String in
            let row = rows.row(index)
            return RowFormatter.json(row.figures, commandName: row.commandName, status: row.status, events: row.events)
        }
        XCTAssertEqual(replayed, live)
        XCTAssertTrue(replayed[5].hasSuffix(",\"exit_code\":3,\"exit_signal\":null}"), replayed[5])
        XCTAssertTrue(replayed[5].contains("\"alive\":false"), replayed[5])
    }

    /// The recorder rounds a figure to its stored resolution without libm's `round` (a call per
    /// figure per tick): the same integer `rounded()` gives, halves away from zero, at the edges
    /// where adding 0.5 would not (0.49999999999999994 + 0.5 is 1.0), and clamped like `clampedInt`.
    func testAFigureIsStoredRoundedAsRoundedGivesIt() {
        let edges: [Double] = [0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1.0.nextDown,
                               33.335 * 100, 4503599627370495.5, 4503599627370497, 9007199254740994, 1e15 + 0.5, 9.1e18, 9.3e18,
                               -9.3e18, 1e300, -1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
        var values = edges
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 { values.append(Double.random(in: -1e7...1e7, using: &generator).rounded(.down) + [0.5, 0.25, 0.75][Int.random(in: 0...2)]) }
        for value in values {
            XCTAssertEqual(value.nearestInteger, Int64(value.rounded().clampedInt), "\(value)")
        }
    }

    func testAnOlderRecordingRepeatsItsLastSampleAsTheExitRow() throws {
        let path = NSTemporaryDirectory() + "perfhud-replay-old-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 42, command: "sh", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        for tick in 0..<3 {
            recorder.consume(Self.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 42, alive: true, processCount: 1),
                                      at: UInt64(tick) * 100_000_000, commandName: "sh", events: nil))
        }
        recorder.setMeta("target_ended", "1")     // as sessions before the exit row was a tick of its own wrote it
        recorder.setMeta("exit_code", "0")
        recorder.close()
        let rows = RecordingRows(try Recording(path: path))
        XCTAssertEqual(rows.count, 4)
        XCTAssertEqual(rows.row(3).figures, rows.row(2).figures)
        XCTAssertEqual(rows.row(3).status, .exited(code: 0, signal: nil))
        XCTAssertEqual(rows.row(2).status, .running)
    }

    /// A tick as the watcher hands it to the recorder.
    static func tick(_ report: TargetFigures, at time: UInt64, commandName: String, events: EventSnapshot?, phases: PhaseHistory = PhaseHistory(),
                     status: TargetStatus = .running) -> Tick {
        let sample = Sample(monotonicNanoseconds: time, wallSeconds: report.wallSeconds, alive: report.alive, processCount: report.processCount)
        return Tick(monotonicNanoseconds: time, sample: sample, figures: report, events: events, commandName: commandName,
                    status: status, phases: phases)
    }



    // MARK: a file that lies

    func testAForgedRecordingIsReadWithoutATrap() throws {
        let path = NSTemporaryDirectory() + "perfhud-forged-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 7, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        var phases = PhaseHistory()
        phases.enter("Home", at: 0, residentBytes: 10)
        for tick in 0..<4 {
            var events = EventSnapshot()
            events.framesTotal = 1
            recorder.consume(Self.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 7, alive: true, cpuPercent: 5,
                                             residentBytes: 100, processCount: 1),
                                      at: UInt64(tick) * 100_000_000, commandName: "x", events: events, phases: phases))
        }
        recorder.close()
        // What a damaged or forged file can say: negative sizes and counts, times and skews at the
        // ends of Int64, settings out of any range, reasons that do not parse.
        let database = try SQLiteDatabase(path: path, create: false)
        try database.execute("""
            UPDATE sample_log SET rss_bytes = -5, received = -1, wall_skew_ms = 9223372036854775807, cpu_centi = 9223372036854775807 WHERE rowid = 1;
            UPDATE sample_log SET t_ms = 9223372036854775807, rejected_reasons = '=;==5;x=99999999999999999999999;;' WHERE rowid = 2;
            UPDATE sample_log SET t_ms = -9223372036854775808, wall_skew_ms = -9223372036854775808 WHERE rowid = 3;
            INSERT INTO frame_log VALUES (1, -1, 0, NULL), (9223372036854775807, 5000, 1, NULL), (100, 9223372036854775807, 2, NULL);
            INSERT INTO frame_log VALUES (150, 16000, 0, -1e308), (160, 16000, 0, 1e308), (170, 16000, 99, 0);
            INSERT INTO names(name) VALUES ('a');
            INSERT INTO action_log VALUES (200, 1, 1e308), (300, 1, -1);
            INSERT INTO phases VALUES (1e300, 'Far', -1, -1e300, 9223372036854775807), (0.2, 'Gallery', 50, NULL, NULL);
            INSERT INTO phases VALUES (0.05, 'Big', 0, 0.1, 9223372036854775807), (0.1, 'Big', 0, 0.15, 9223372036854775807);
            UPDATE meta SET value = '1e300' WHERE key = 'started_at_unix';
            UPDATE meta SET value = 'nan' WHERE key = 'tick_seconds';
            UPDATE meta SET value = '0' WHERE key = 'refresh_hz';
            UPDATE meta SET value = '-3' WHERE key = 'online_cpus';
            UPDATE meta SET value = 'inf' WHERE key = 'jank_factor';
            """)
        database.close()
        let recording = try Recording(path: path)
        XCTAssertEqual(recording.samples.count, 2, "the rows with impossible times are skipped")
        XCTAssertTrue(recording.warnings.contains { $0.contains("impossible") }, "\(recording.warnings)")
        XCTAssertNil(recording.samples[0].residentBytes, "a negative size is no size")
        XCTAssertEqual(recording.tickSeconds, 0.1)
        XCTAssertEqual(recording.refreshHz, 60)
        // Everything that reads a recording gets through it.
        let rows = RecordingRows(recording)
        for index in 0..<rows.count {
            let row = rows.row(index)
            XCTAssertFalse(RowFormatter.json(row.figures, commandName: row.commandName, status: row.status, events: row.events).isEmpty)
            XCTAssertFalse(RowFormatter.plain(row.figures, commandName: row.commandName, status: row.status, events: row.events).isEmpty)
        }
        let summary = RecordingSummary(recording)
        XCTAssertEqual(summary.phases.first { $0.name == "Big" }?.keptBytes, .max, "two visits that kept Int64.max saturate")
        XCTAssertEqual(summary.frames, 3, "frames of an impossible weight count as one each")
        XCTAssertFalse(SummaryFormatter.json(summary, recording: recording, baseline: summary).isEmpty)
        XCTAssertFalse(SummaryFormatter.markdown(summary, recording: recording, baseline: summary).isEmpty)
        var cursor = ReplayCursor(rows: rows, capacity: 10, historySeconds: 1)
        var playhead = ReplayPlayhead(start: recording.samples[0].t, end: recording.samples.last!.t)
        _ = cursor.move(to: playhead.end)
        playhead.seek(by: 1e300)
        XCTAssertFalse(playhead.description.isEmpty)
        _ = cursor.move(to: playhead.position)
        var export = ""
        RecordingExport.csv(recording) { export += $0 }
        RecordingExport.openMetrics(recording) { export += $0 }
        XCTAssertTrue(export.hasSuffix("# EOF\n"))
    }
}
