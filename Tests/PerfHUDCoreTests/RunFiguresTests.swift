import XCTest
@testable import PerfHUDCore

/// The run's figures are computed once (`RunFrames`, `RunStorageIO`, `CPUSecondsByMode`) and say
/// the same live (the end summary, the daemon) and from a recording (`report`, `export`).
final class RunFiguresTests: XCTestCase {
    private let budget = FrameBudget(refreshHz: 60, jankFactor: 1.5)

    // MARK: frames, each by its weight

    func testASampledFrameCountsItsWeightInTheTotalJankyDroppedAndPercentiles() {
        var frames = RunFrames(budget: budget)
        for _ in 0..<34 { frames.add(milliseconds: 16.7, weight: 10) }   // `perfhud.frame:16.7|ms|@0.1`
        frames.add(milliseconds: 40, weight: 10)                         // janky, one refresh dropped
        XCTAssertEqual(frames.total, 350)
        XCTAssertEqual(frames.janky, 10)
        XCTAssertEqual(frames.dropped, 10)
        XCTAssertEqual(frames.percentile(50), 16.7)
        // 340 of 350 are 16.7 ms: 97.1 %; the 99th percentile is the janky frame's.
        XCTAssertEqual(frames.percentile(97), 16.7)
        XCTAssertEqual(frames.percentile(99), 40)
        XCTAssertEqual(frames.low(99), 25)
    }

    func testWeightedPercentilesAreThoseOfTheFramesTheyStandFor() {
        // Each weighted frame written out as that many frames gives the same nearest ranks.
        let weighted: [(ms: Double, weight: Double)] = [(5, 3), (16.667, 40), (33.4, 2), (8, 1), (120, 4), (16.001, 50)]
        var frames = RunFrames(budget: budget)
        for frame in weighted { frames.add(milliseconds: frame.ms, weight: frame.weight) }
        let expanded = weighted.flatMap { Array(repeating: $0.ms, count: Int($0.weight)) }.sorted()
        for percent in [1.0, 10, 50, 90, 95, 97, 99, 99.9, 100] {
            XCTAssertEqual(frames.percentile(percent), RecordingSummary.percentile(expanded, percent), "p\(percent)")
        }
    }

    func testAHigherRankedSourceReplacesWhatALowerOneCountedAsLive() {
        var frames = RunFrames(budget: budget)
        for _ in 0..<5 { frames.add(milliseconds: 50, source: .tty) }
        for _ in 0..<3 { frames.add(milliseconds: 16, source: .events) }
        frames.add(milliseconds: 50, source: .tty)   // lower-ranked: not counted once events came
        XCTAssertEqual(frames.total, 3)
        XCTAssertEqual(frames.janky, 0)
        XCTAssertEqual(frames.source, .events)
    }

    // MARK: janky against the program's own pace (no --refresh) or the refresh's budget

    func testASteady30FPSHasNoJankyFrameAgainstItsOwnPaceButAllAgainstA60HzBudget() {
        var paced = RunFrames(budget: FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true))
        var refresh = RunFrames(budget: budget)
        for index in 0..<300 {
            let ms = 33.333 + (index % 2 == 0 ? 0.4 : -0.4)      // a steady 30 FPS, a little jitter
            paced.add(milliseconds: ms)
            refresh.add(milliseconds: ms)
        }
        XCTAssertEqual(paced.janky, 0)
        XCTAssertEqual(paced.dropped, 0)
        XCTAssertEqual(refresh.janky, 300, "33 ms is 2 budgets of a 60 Hz display: janky, as before")
        XCTAssertEqual(refresh.dropped, 300)
    }

    func testAgainstItsPaceExactlyTheStuttersAreJankyAndSayHowManyFramesTheyCost() {
        var frames = RunFrames(budget: FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true))
        // At 30 FPS: 2.1, 1.8 and 3.6 paces (janky), and 1.35 (within the jank factor of 1.5: not).
        var stutters: [Int: Double] = [100: 70, 150: 60, 230: 120, 260: 45]
        for index in 0..<300 { frames.add(milliseconds: stutters.removeValue(forKey: index) ?? 33.3) }
        XCTAssertEqual(frames.janky, 3)
        XCTAssertEqual(frames.dropped, 1 + 1 + 3, "round(70/33.3) − 1, round(60/33.3) − 1, round(120/33.3) − 1; 45 ms drops none")
    }

    func testNoFrameIsJankyBeforeThereIsAPaceAndAStallDoesNotMoveIt() {
        var judge = FrameJudge(budget: FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true))
        XCTAssertEqual((0..<4).map { _ in judge.judge(500).janky }, [false, false, false, false], "a start-up frame has no pace to be late for")
        var steady = FrameJudge(budget: FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true))
        for _ in 0..<30 { _ = steady.judge(16.7) }
        // Ten stalls in a row: the median of the last 30 is still 16.7, so each is janky.
        XCTAssertEqual((0..<10).map { _ in steady.judge(200).janky }, Array(repeating: true, count: 10))
        XCTAssertEqual(steady.pace(), 16.7)
    }

    func testThePaceIsTheMedianOfTheLast30FramesWhateverTheirOrder() {
        // Kept in order as frames come (not sorted per frame): the same median as a sort of the last 30.
        var judge = FrameJudge(budget: FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true))
        var generator = SystemRandomNumberGenerator()
        var times: [Double] = []
        for index in 0..<2_000 {
            // Repeats, ties and a wide spread: at 1 µs, as the judge keeps them.
            let time = index % 7 == 0 ? 16.667 : (Double.random(in: 0...120, using: &generator) * 1000).rounded() / 1000
            _ = judge.judge(time)
            times.append(time)
            let last = times.suffix(30).sorted()
            XCTAssertEqual(judge.pace(), times.count >= 5 ? last[last.count / 2] : nil, "after frame \(index)")
        }
    }

    func testWithPhasesEveryFrameSetsThePaceAndOnlyThoseInsideCount() {
        // A stutter inside the phase window is judged against the pace the frames before it set,
        // although those are outside the window: as live, where every frame is judged in order.
        let frames = (0..<60).map { Recording.Frame(t: Double($0) * 0.0333, milliseconds: $0 == 45 ? 90 : 33.3, weight: 1, source: .gl) }
        let budget = FrameBudget(refreshHz: 60, jankFactor: 1.5, paced: true)
        var marked: [Double] = []
        let counted = RecordingSummary.runFrames(frames, budget: budget, inside: [(start: 1.4, end: 2.0)]) { marked.append($0.t) }
        XCTAssertEqual(counted.janky, 1)
        XCTAssertEqual(marked, [45 * 0.0333])
        XCTAssertEqual(counted.total, Double(frames.filter { $0.t >= 1.4 && $0.t <= 2.0 }.count))
    }

    func testTheLiveAggregatorJudgesAgainstThePaceAsTheRunDoes() {
        var configuration = EventConfiguration()
        configuration.paced = true
        let aggregator = EventAggregator(configuration: configuration)
        var durations = Array(repeating: 33.3, count: 40)
        durations[20] = 80; durations[30] = 150
        let lines = durations.map { "perfhud.frame:\($0)|ms" }.joined(separator: "\n")
        aggregator.withLock { ingest in
            ingest.setTime(1_000_000_000)
            Array(lines.utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &ingest) }
        }
        let live = aggregator.snapshot(at: 3_000_000_000)
        var run = RunFrames(budget: configuration.frameBudget)
        for ms in durations { run.add(milliseconds: ms) }
        XCTAssertEqual(live.jankyFrames, 2)
        XCTAssertEqual(live.jankyFrames, run.janky)
        XCTAssertEqual(live.droppedFrames, run.dropped)
    }

    func testTheLiveAggregatorAndTheRunCountJankAndDropsAlike() {
        let aggregator = EventAggregator()
        let lines = "perfhud.frame:16.7|ms|@0.1\nperfhud.frame:40|ms|@0.5\nperfhud.frame:100|ms\nperfhud.frame:16.7:70|d|@0.25"
        aggregator.withLock { ingest in
            ingest.setTime(1_000_000_000)
            Array(lines.utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &ingest) }
        }
        let live = aggregator.snapshot(at: 3_000_000_000)
        var run = RunFrames(budget: EventConfiguration().frameBudget)
        for (ms, weight) in [(16.7, 10.0), (40, 2), (100, 1), (16.7, 4), (70, 4)] { run.add(milliseconds: ms, weight: weight) }
        XCTAssertEqual(live.framesTotal, run.total)
        XCTAssertEqual(live.jankyFrames, run.janky)
        XCTAssertEqual(live.droppedFrames, run.dropped)
    }

    // MARK: a recording keeps the weight, so report says what the live run said

    func testReportCountsARecordedSampledFrameAsTheLiveRowDid() throws {
        let path = NSTemporaryDirectory() + "perfhud-weights-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 5, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        // 6 s at 60 FPS sent one line in ten (`|@0.1`): 36 lines, 360 frames.
        let summary = SessionSummary(tickNanoseconds: 100_000_000, budget: EventConfiguration().frameBudget)
        var framesTotal = 0.0
        for tick in 0...60 {
            let time = UInt64(tick) * 100_000_000
            let frames = tick == 0 ? [] : (0..<(tick % 5 == 0 ? 3 : 0)).map { index in
                RecordedFrame(time: time - UInt64(index) * 16_700_000, milliseconds: 16.7, source: .events, weight: 10)
            }
            framesTotal += frames.reduce(0) { $0 + $1.weight }
            var events = EventSnapshot()
            events.framesTotal = framesTotal
            var tickValue = ReplayTests.tick(Report(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                             at: time, commandName: "x", events: events)
            tickValue.frames = frames
            recorder.record(tickValue)
            summary.add(tickValue)
        }
        recorder.close()
        XCTAssertEqual(framesTotal, 360)
        let recording = try Recording(path: path)
        XCTAssertEqual(recording.frames.count, 36, "one row a line")
        XCTAssertEqual(recording.frames.map(\.weight), Array(repeating: 10, count: 36))
        let report = RecordingSummary(recording)
        XCTAssertEqual(report.frames, 360)
        XCTAssertEqual(report.fpsAvg, 60)
        let passes = try FailCondition("fps_avg < 50").holds(for: report, baseline: nil)
        XCTAssertEqual(passes.holds, false, "a gate on fps_avg passes a program at 60 FPS")
        // The end summary says the report's figures, by the same code.
        let text = summary.text(commandName: "x", recordPath: nil)
        XCTAssertTrue(text.contains("frames 360 (60 FPS avg"), text)
        // And `replay`'s ticks, rebuilt from the recording with their frames, say it again.
        let replayed = SessionSummary(tickNanoseconds: 100_000_000, budget: recording.frameBudget)
        let rows = RecordingRows(recording)
        for index in 0..<rows.count { replayed.add(rows.row(index)) }
        XCTAssertEqual(replayed.text(commandName: "x", recordPath: nil), text)
        XCTAssertEqual((0..<rows.count).reduce(0.0) { $0 + rows.row($1).frames.reduce(0) { $0 + $1.weight } }, 360)
    }

    func testReplayedTicksHaveThePhasesAndTheirKeptMemoryAsLive() throws {
        let path = NSTemporaryDirectory() + "perfhud-replayed-phases-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 5, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        var phases = PhaseHistory()
        var live: [[Tick.EndedPhase]] = []
        for tick in 0...6 {
            var ended: [Tick.EndedPhase] = []
            // Home from the start with 10 MiB, Gallery at 0.25 s with 30, Home again at 0.45 s with 12.
            for (at, name, bytes) in [(0.0, "Home", 10), (0.25, "Gallery", 30), (0.45, "Home", 12)] as [(Double, String, UInt64)]
            where at <= Double(tick) / 10 && at > Double(tick - 1) / 10 {
                let leaving = phases.current
                phases.enter(name, at: at, residentBytes: bytes << 20)
                if let leaving { ended.append(.init(name: leaving.name, keptBytes: phases.records.dropLast().last?.keptBytes)) }
            }
            live.append(ended)
            var events = EventSnapshot()
            events.phase = phases.current?.name
            var value = ReplayTests.tick(Report(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                         at: UInt64(tick) * 100_000_000, commandName: "x", events: events, phases: phases)
            value.endedPhases = ended
            recorder.record(value)
        }
        recorder.close()
        let rows = RecordingRows(try Recording(path: path))
        XCTAssertEqual((0..<rows.count).map { rows.row($0).endedPhases }, live)
        XCTAssertEqual(rows.map(\.endedPhases), live, "in order, as replay and report take them")
        XCTAssertEqual(live[3], [.init(name: "Home", keptBytes: 20 << 20)])
        XCTAssertEqual(rows.row(6).phases.records.map(\.name), ["Home", "Gallery", "Home"])
        XCTAssertEqual(rows.row(2).phases.current?.name, "Home")
    }

    func testAPhasesFramesAreTheSameLiveAndInTheRecordingWhenOneEndsWithinAMillisecondOfItsStart() throws {
        let path = NSTemporaryDirectory() + "perfhud-phase-frames-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let start: UInt64 = 5_000_000_000
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 5, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: start, warn: { XCTFail($0) })
        let live = RunSummary(budget: budget, tickSeconds: 0.1, keepsEvents: true, startNanoseconds: start)
        var phases = PhaseHistory()
        for tick in 0...20 {
            let time = start + UInt64(tick) * 100_000_000
            // Gallery begins 0.3 ms into second 1, between two frames 0.1 ms and 0.6 ms into it;
            // each phase has frames of its own length (16 ms at Home, 33 ms in the Gallery).
            if tick == 0 { phases.enter("Home", at: 0, residentBytes: nil) }
            if tick == 10 { phases.enter("Gallery", at: 1.0003, residentBytes: nil) }
            let frames = tick == 0 ? [] : [100_000, 600_000, 50_000_000].map { offset -> RecordedFrame in
                let end = time - 100_000_000 + UInt64(offset)
                let inGallery = Double(end - start) / 1e9 >= 1.0003
                return RecordedFrame(time: end, milliseconds: inGallery ? 33.3337 : 16.6664, source: .events)
            }
            var events = EventSnapshot()
            events.phase = phases.current?.name
            var value = ReplayTests.tick(Report(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                         at: time, commandName: "x", events: events, phases: phases)
            value.frames = frames
            recorder.record(value)
            live.consume(value)
        }
        recorder.close()
        let liveFigures = RecordingSummary(live, budget: budget, actionThreshold: 20)
        let recorded = RecordingSummary(try Recording(path: path))
        XCTAssertEqual(liveFigures.phases.map(\.name), ["Home", "Gallery"])
        XCTAssertEqual(liveFigures.phases.map(\.fpsAvg), recorded.phases.map(\.fpsAvg), "each phase counts the same frames")
        XCTAssertEqual(liveFigures.fpsAvg, recorded.fpsAvg)
        XCTAssertEqual(liveFigures.frameP99, recorded.frameP99, "the same durations")
    }

    // MARK: I/O and CPU totals

    func testStorageIOIsEachRowsRateTimesItsIntervalInTheSummaryAndTheReport() {
        var io = RunStorageIO()
        var report = Report(wallSeconds: 0, elapsedSeconds: 0, pid: 1, alive: true, processCount: 1)
        for (t, rate) in [(0.0, 999.0), (0.1, 1000), (0.25, 2000), (1.25, 0), (1.5, 400)] {
            report.ioReadBytesPerSecond = rate
            report.ioWriteBytesPerSecond = rate / 2
            io.add(t: t, report)
        }
        // The first row starts the count (its rate is over time before it).
        XCTAssertEqual(io.readBytes!, 1000 * 0.1 + 2000 * 0.15 + 0 + 400 * 0.25, accuracy: 1e-9)
        XCTAssertEqual(io.writtenBytes!, io.readBytes! / 2, accuracy: 1e-9)
        XCTAssertNil(RunStorageIO().readBytes, "no row, no figure (not 0)")
    }

    func testCPUSecondsByModeAddUpToTheClocksTotalAtEveryRow() {
        var modes = CPUSecondsByMode()
        var report = Report(wallSeconds: 0, elapsedSeconds: 0, pid: 1, alive: true, processCount: 1)
        for (total, user, system) in [(0.5, 80.0, 20.0), (0.75, 50, 50), (0.751, 0, 0), (1.5, 10, 90)] as [(Double, Double, Double)] {
            report.cpuSecondsTotal = total
            report.cpuUserPercent = user
            report.cpuSystemPercent = system
            modes.add(report)
            XCTAssertEqual(modes.user + modes.system, total, accuracy: 1e-12)
        }
        XCTAssertEqual(modes.user, 0.5 * 0.8 + 0.25 * 0.5 + 0.001 * 0.5 + 0.749 * 0.1, accuracy: 1e-12)
    }

    // MARK: a phase's memory, as the program said it

    func testAPhaseLineCarriesTheSendersResidentMemory() {
        XCTAssertEqual(parse("perfhud.phase:1|c|#phase:Gallery,rss:1048576"), ["phase Gallery rss 1048576"])
        XCTAssertEqual(parse("perfhud.phase.Gallery:1|c|#rss:4096"), ["phase Gallery rss 4096"])
        XCTAssertEqual(parse("perfhud.phase:1|c|#rss:77,phase:Editor"), ["phase Editor rss 77"])
        XCTAssertEqual(parse("perfhud.phase:1|c|#phase:Gallery,rss:12x"), ["phase Gallery"], "an unreadable RSS is left out, not the phase")
        XCTAssertEqual(parse("perfhud.phase:1|c|#phase:Gallery"), ["phase Gallery"])
    }

    func testTheSendersMemoryWinsOverTheReceiversLateRead() {
        let aggregator = EventAggregator()
        aggregator.residentProbe = { 99 << 20 }   // what the receiver would read, after the program allocated
        aggregator.withLock { ingest in
            ingest.setTime(1)
            Array("perfhud.phase:1|c|#phase:Keeps,rss:16777216\nperfhud.phase:1|c|#phase:Plain".utf8).withUnsafeBytes {
                _ = EventLineParser.parse($0, into: &ingest)
            }
        }
        XCTAssertEqual(aggregator.drainPhaseChanges().map(\.residentBytes), [16 << 20, 99 << 20])
    }
}
