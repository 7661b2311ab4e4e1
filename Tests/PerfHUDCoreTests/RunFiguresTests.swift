import XCTest
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDOutput
@testable import PerfHUDRecordings

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
            var tickValue = ReplayTests.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                             at: time, commandName: "x", events: events)
            tickValue.everyFrame = EveryFrame(frames: frames)
            recorder.consume(tickValue)
            summary.consume(tickValue)
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
        for index in 0..<rows.count { replayed.consume(rows.row(index)) }
        XCTAssertEqual(replayed.text(commandName: "x", recordPath: nil), text)
        XCTAssertEqual((0..<rows.count).reduce(0.0) { $0 + (rows.row($1).everyFrame?.frames ?? []).reduce(0) { $0 + $1.weight } }, 360)
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
            var value = ReplayTests.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                         at: UInt64(tick) * 100_000_000, commandName: "x", events: events, phases: phases)
            value.endedPhases = ended
            recorder.consume(value)
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
        let live = RunSummary(budget: budget, tickSeconds: 0.1, countsPhasesAndActions: true, startNanoseconds: start)
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
            var value = ReplayTests.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(tick) / 10, pid: 5, alive: true, processCount: 1),
                                         at: time, commandName: "x", events: events, phases: phases)
            value.everyFrame = EveryFrame(frames: frames)
            recorder.consume(value)
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

    /// Each phase's frames and the run's actions are counted as the ticks come, with no list of the
    /// run's frames kept: they must be what the definitions give over the whole run's lists. Frames
    /// arrive up to 300 ms after they ended, some after the tick's own time (they wait for the next
    /// row), a few at the very millisecond a phase began (both visits count them), a visit lasts no
    /// time at all, a phase is entered twice in a row, the source changes up (the counts restart)
    /// and down (refused), and the last tick, which perfhud ended, is not a row.
    func testPhaseFramesAndActionsCountedAsTheyComeAreWhatTheRunsListsGive() {
        var seed: UInt64 = 7
        func random(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        let start: UInt64 = 3_000_000_000
        // The program's timeline, in whole milliseconds since the start: phases entered (at their
        // arrival), frames (ended, arrived), actions (arrived).
        var phaseAt: [(ms: Int, name: String)] = [(0, "A")]
        var frameAt: [(end: Int, arrival: Int, milliseconds: Double, source: FrameSource, weight: Double)] = []
        var ms = 0
        while ms < 6_000 {
            let duration = [7, 16, 17, 33, 50][random(5)]
            ms += duration
            let source: FrameSource = ms < 1_500 ? .tty : (random(50) == 0 ? .tty : .events)
            frameAt.append((ms, ms + (random(3) == 0 ? random(300) : 0), Double(duration) + Double(random(1000)) / 1000,
                            source, random(10) == 0 ? 10 : 1))
            if random(15) == 0 {
                // A phase that begins the very millisecond this frame ended, or a little later.
                let at = ms + (random(2) == 0 ? 0 : 1 + random(20))
                phaseAt.append((at, ["A", "B", "C"][random(3)]))
                if random(4) == 0 { phaseAt.append((at, "C")) }   // a visit of no time
            }
        }
        phaseAt.append((6_050, "B"))   // after the last row: entered by the final tick
        phaseAt.sort { $0.ms < $1.ms }
        let ticks = 600   // rows at 0, 10 ms … 5.99 s; then the final tick at 6.1 s, not a row
        for only in [nil, "B"] as [String?] {
            let run = RunSummary(budget: budget, tickSeconds: 0.01, phase: only, countsPhasesAndActions: true, startNanoseconds: start)
            var history = PhaseHistory()
            var counted: [Recording.Frame] = [], actions: [Recording.Action] = []
            var nextPhase = 0, nextFrame = 0, afterTheirTick = 0
            for tick in 0...ticks {
                let final = tick == ticks
                let now = final ? 6_100 : tick * 10
                // Phases that arrived by the tick's time are in; frames that arrived up to 3 ms
                // after it are too (they are drained after the sample is taken).
                while nextPhase < phaseAt.count && phaseAt[nextPhase].ms <= now {
                    history.enter(phaseAt[nextPhase].name, at: Double(phaseAt[nextPhase].ms) / 1000, residentBytes: nil)
                    nextPhase += 1
                }
                var frames: [RecordedFrame] = []
                while nextFrame < frameAt.count && frameAt[nextFrame].arrival <= now + 3 {
                    let frame = frameAt[nextFrame]
                    frames.append(RecordedFrame(time: start + UInt64(frame.end) * 1_000_000, milliseconds: frame.milliseconds,
                                                source: frame.source, weight: frame.weight))
                    if frame.end > now { afterTheirTick += 1 }
                    nextFrame += 1
                }
                let tickActions: [(label: String, count: Double)] = tick % 7 == 0 ? [("Tap", 1)] : tick % 3 == 0 ? [("Scroll", Double(random(40)))] : []
                var value = ReplayTests.tick(TargetFigures(wallSeconds: 1e9, elapsedSeconds: Double(now) / 1000, pid: 5, alive: true, processCount: 1),
                                             at: start + UInt64(now) * 1_000_000, commandName: "x", events: EventSnapshot(), phases: history)
                value.everyFrame = EveryFrame(frames: frames, actions: tickActions)
                if final { value.isFinal = true; value.endedByPerfhud = true }
                run.consume(value)
                counted += frames.map { Recording.Frame($0, since: start) }
                actions += tickActions.map { Recording.Action(t: Double(now) / 1000, label: $0.label, count: $0.count) }
            }
            let summary = RecordingSummary(run, budget: budget, actionThreshold: 50, countedOrder: only == nil ? nil : counted)
            XCTAssertGreaterThan(afterTheirTick, 10, "frames that ended after their tick's time")
            XCTAssertGreaterThan(counted.filter { frame in phaseAt.contains { Double($0.ms) / 1000 == frame.t } }.count, 5, "frames at a phase's first millisecond")

            // The definitions, over the lists: the visits from the timeline; a visit not left ends at the last row.
            let lastRow = Double(ticks - 1) / 100
            let visits = phaseAt.indices.map { index in
                Recording.Phase(name: phaseAt[index].name, t: Double(phaseAt[index].ms) / 1000,
                                tExit: index + 1 < phaseAt.count ? Double(phaseAt[index + 1].ms) / 1000 : nil, entryBytes: nil, exitBytes: nil)
            }
            XCTAssertEqual(run.visits.map(\.name), visits.map(\.name))
            for name in only.map({ [$0] }) ?? ["A", "B", "C"] {
                let windows = RecordingSummary.windows(visits: visits, start: 0, end: lastRow, phase: name)
                let expected = RecordingSummary.runFrames(counted, budget: budget, inside: windows)
                let phase = summary.phases.first { $0.name == name }
                XCTAssertGreaterThan(expected.total, 10, "phase \(name) has frames to count")
                XCTAssertEqual(phase?.fpsAvg, expected.total / windows.reduce(0) { $0 + max(0, $1.end - $1.start) }, "phase \(name)")
                XCTAssertEqual(phase?.fps1PercentLow, expected.low(99), "phase \(name)")
            }
            let inside = { (t: Double) in RecordingSummary.windows(visits: visits, start: 0, end: lastRow, phase: only).contains { t >= $0.start && t <= $0.end } }
            var totals: [String: Double] = [:], peaks: [String: Double] = [:]
            for action in actions where only == nil || inside(action.t) {
                totals[action.label, default: 0] += action.count
                let second = actions.filter { $0.label == action.label && $0.t > action.t - 1 && $0.t <= action.t && (only == nil || inside($0.t)) }
                peaks[action.label] = max(peaks[action.label] ?? 0, second.reduce(0) { $0 + $1.count })
            }
            XCTAssertEqual(summary.actionsTotal, totals.values.reduce(0, +))
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: summary.topActions.map { ($0.action, $0.total) }), totals)
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: summary.topActions.map { ($0.action, $0.peak) }), peaks)
            XCTAssertEqual(summary.highFrequencyActions.map(\.action), peaks.filter { $0.value >= 50 }.sorted { $0.value > $1.value }.map(\.key))
        }
    }

    // MARK: I/O and CPU totals

    func testStorageIOIsEachRowsRateTimesItsIntervalInTheSummaryAndTheReport() {
        var io = RunStorageIO()
        var report = TargetFigures(wallSeconds: 0, elapsedSeconds: 0, pid: 1, alive: true, processCount: 1)
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
        var report = TargetFigures(wallSeconds: 0, elapsedSeconds: 0, pid: 1, alive: true, processCount: 1)
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
