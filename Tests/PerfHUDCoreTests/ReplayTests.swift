import XCTest
@testable import PerfHUDCore
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
        var cursor = ReplayCursor(recording: recording(samples: 60), capacity: 100, historySeconds: 10)
        var actions: [String] = [], ended: [String] = []
        for step in 0...60 {
            let passed = cursor.move(to: Double(step) * 0.1)
            actions += passed.actions.map(\.label)
            ended += passed.endedPhases.map(\.name)
        }
        XCTAssertEqual(actions, ["tap 5", "tap 15", "tap 25", "tap 35", "tap 45", "tap 55"])
        XCTAssertEqual(ended, ["Home"])
        XCTAssertEqual(cursor.phases.lastFinishedByName.first?.keptBytes, 30)
        XCTAssertTrue(cursor.isAtLastSample)
    }

    func testASeekBackGivesTheStateMovingForwardGave() {
        let recording = recording(samples: 60)
        var forward = ReplayCursor(recording: recording, capacity: 20, historySeconds: 2)
        for step in 0...45 { _ = forward.move(to: Double(step) * 0.1) }
        var seeked = ReplayCursor(recording: recording, capacity: 20, historySeconds: 2)
        _ = seeked.move(to: 5.9)
        let passed = seeked.move(to: 4.5)
        XCTAssertTrue(passed.actions.isEmpty, "a seek does not replay the log")
        XCTAssertEqual(seeked.index, forward.index)
        XCTAssertEqual(seeked.phases.current?.name, "Gallery")
        XCTAssertEqual(seeked.phases.lastFinishedByName.map(\.name), forward.phases.lastFinishedByName.map(\.name))
        // The graph's window (the last 2 s) holds the same samples either way.
        for figure in [TimeSeries.Figure.residentBytes, .cpuPercent, .phase] {
            XCTAssertEqual(seeked.series.minMax(figure, width: 20, from: 2.5, to: 4.5), forward.series.minMax(figure, width: 20, from: 2.5, to: 4.5))
        }
        // Then forward again: the actions after the seek point, once.
        XCTAssertEqual(seeked.move(to: 5.6).actions.map(\.label), ["tap 55"])
    }

    func testBeforeTheFirstSampleThereIsNone() {
        var cursor = ReplayCursor(recording: recording(samples: 5), capacity: 10, historySeconds: 1)
        _ = cursor.move(to: 0.25)
        XCTAssertEqual(cursor.index, 2)
        _ = cursor.move(to: -1)
        XCTAssertEqual(cursor.index, -1)
        XCTAssertNil(cursor.sample)
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
        let aggregator = EventAggregator()
        var live: [String] = []
        let wallStart = Double(Recorder.milliseconds(unix: Double(time(nil)))) / 1000
        for tick in 0..<5 {
            let elapsed = Double(tick) * 0.1 + 0.0004 * Double(tick)   // not whole milliseconds
            // Figures at the resolution `MetricsStore` and `EventAggregator` keep them at.
            let cpus = Double(ProcessDirectory.onlineCPUs)
            let report = Report(wallSeconds: wallStart + elapsed + 0.0123456, elapsedSeconds: elapsed, pid: 42, alive: true,
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
            recorder.record(report, at: start + UInt64(elapsed * 1e9), commandName: command, events: events, phases: PhaseHistory(),
                            aggregator: aggregator)
            live.append(ReportFormatter.json(report, commandName: command, status: .running, events: events))
        }
        recorder.recordEnd(exitCode: 3, exitSignal: nil)
        recorder.close()
        let recording = try Recording(path: path)
        XCTAssertEqual(recording.targetEnded, .exited(code: 3, signal: nil))
        let rows = RecordingRows(recording)
        XCTAssertEqual(rows.count, 6, "five samples and the exit row")
        let replayed = (0..<rows.count).map { index -> String in
            let row = rows.row(index)
            return ReportFormatter.json(row.report, commandName: row.commandName, status: row.status, events: row.events)
        }
        for (index, line) in live.enumerated() {
            XCTAssertEqual(replayed[index], line)
        }
        XCTAssertTrue(replayed[5].hasSuffix(",\"exit_code\":3,\"exit_signal\":null}"), replayed[5])
        XCTAssertEqual(replayed[5].replacingOccurrences(of: ",\"exit_code\":3,\"exit_signal\":null}", with: "}"), live[4])
    }
}
