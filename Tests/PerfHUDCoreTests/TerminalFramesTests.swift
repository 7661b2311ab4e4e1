import XCTest
@testable import PerfHUDEvents

/// Frames read from a terminal program's output, and which source of frames is shown.
final class TerminalFramesTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let begin = Array("\u{1B}[?2026h".utf8), end = Array("\u{1B}[?2026l".utf8)
    /// Cursor addressing: from it on, the program draws a screen and its bursts are frames.
    private let home = Array("\u{1B}[H".utf8)

    func testSynchronizedUpdatesAreFramesTimedFromEndToEnd() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        var ended: [TerminalFrames.Frame] = []
        for (index, at) in [100, 117, 133, 183, 200].enumerated() {
            ended += frames.output(begin + Array("frame \(index)".utf8) + end, at: UInt64(at) * ms).frames
        }
        XCTAssertTrue(frames.usesSynchronizedOutput)
        XCTAssertEqual(ended.map(\.milliseconds), [nil, 17, 16, 50, 17], "the first only starts the clock")
    }

    /// A loaded machine: perfhud was not scheduled while the program drew three updates, and one
    /// read finds them all. Each is a frame (they were counted as one), spread evenly from the frame
    /// before to the read: 3 frames and 60 ms, as the program drew them.
    func testUpdatesFoundInOneReadAreEachAFrame() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        XCTAssertEqual(frames.output(begin + end, at: 100 * ms).frames, [TerminalFrames.Frame(end: 100 * ms, milliseconds: nil)])
        let three = begin + Array("a".utf8) + end + begin + Array("b".utf8) + end + begin + Array("c".utf8) + end
        XCTAssertEqual(frames.output(three, at: 160 * ms).frames, [
            TerminalFrames.Frame(end: 120 * ms, milliseconds: 20), TerminalFrames.Frame(end: 140 * ms, milliseconds: 20),
            TerminalFrames.Frame(end: 160 * ms, milliseconds: 20),
        ])
        // After an idle pause the first starts the clock again; the others came right after it.
        XCTAssertEqual(frames.output(three, at: 2_000 * ms).frames, [
            TerminalFrames.Frame(end: 2_000 * ms, milliseconds: nil), TerminalFrames.Frame(end: 2_000 * ms, milliseconds: 0),
            TerminalFrames.Frame(end: 2_000 * ms, milliseconds: 0),
        ])
        XCTAssertEqual(frames.output(begin + end, at: 2_016 * ms).frames, [TerminalFrames.Frame(end: 2_016 * ms, milliseconds: 16)])
    }

    /// Once the program has a pace (frames read one at a time), frames read together are placed
    /// back at it: a 150 ms stall and the 10 ms frame after it, read together, stay one long frame
    /// and one short (one janky frame, not two of 80 ms), and a steady 10 ms stream read late keeps
    /// its 10 ms frames.
    func testFramesReadTogetherKeepTheProgramsPace() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        let update = begin + Array("x".utf8) + end
        for at in stride(from: 100, through: 200, by: 10) { _ = frames.output(update, at: UInt64(at) * ms) }
        XCTAssertEqual(frames.output(update + update, at: 360 * ms).frames, [
            TerminalFrames.Frame(end: 350 * ms, milliseconds: 150), TerminalFrames.Frame(end: 360 * ms, milliseconds: 10),
        ])
        let late = frames.output(Array(repeating: update, count: 40).flatMap { $0 }, at: 760 * ms).frames
        XCTAssertEqual(late.count, 40)
        XCTAssertEqual(Set(late.map(\.milliseconds)), [10])
        XCTAssertEqual(late.last?.end, 760 * ms)
    }

    /// The aggregator takes such frames at their ends, before the read: counted, and in the
    /// seconds they ended in.
    func testFramesReadTogetherCountWhereTheyEnded() {
        let aggregator = EventAggregator()
        let t0: UInt64 = 1_000_000 * ms
        aggregator.addFrames((1...100).map { (milliseconds: 10.0, end: t0 + UInt64($0) * 10 * ms) }, source: .tty, arrival: t0 + 1_000 * ms)
        let snapshot = aggregator.snapshot(at: t0 + 1_000 * ms)
        XCTAssertEqual(snapshot.framesTotal, 100)
        XCTAssertEqual(snapshot.frameP50, 10)
        // The FPS window ends as far back as frames arrived late (here ~1 s): a second later it
        // is the second they were drawn in, whole.
        XCTAssertEqual(aggregator.snapshot(at: t0 + 2_000 * ms).fps, 100, accuracy: 1)
    }

    func testAnUpdateSplitAcrossReadsAndSequencesCutAnywhereAreOneFrame() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        let stream = begin + Array("a".utf8) + end + begin + Array("b".utf8) + end
        var count = 0
        for (offset, byte) in stream.enumerated() { count += frames.output([byte], at: UInt64(offset) * ms).frames.count }
        XCTAssertEqual(count, 2)
    }

    func testWithoutSynchronizedOutputABurstEndsInQuiet() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        XCTAssertEqual(frames.output(home + Array("top of a frame".utf8), at: 100 * ms).frames, [])
        XCTAssertEqual(frames.output(Array("rest of it".utf8), at: 104 * ms).frames, [], "4 ms later: the same burst")
        XCTAssertEqual(frames.tick(at: 110 * ms).frames, [], "6 ms of quiet is not yet the end")
        XCTAssertEqual(frames.tick(at: 113 * ms).frames, [TerminalFrames.Frame(end: 104 * ms, milliseconds: nil)],
                       "it ended at its last byte")
        XCTAssertEqual(frames.output(Array("next".utf8), at: 120 * ms).frames, [])
        XCTAssertEqual(frames.output(Array("and next".utf8), at: 140 * ms).frames, [TerminalFrames.Frame(end: 120 * ms, milliseconds: 16)])
    }

    func testAPauseOfASecondIsIdleNotALongFrame() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        _ = frames.output(begin + end, at: 0)
        XCTAssertEqual(frames.output(begin + end, at: 1500 * ms).frames.map(\.milliseconds), [nil])
        XCTAssertEqual(frames.output(begin + end, at: 1516 * ms).frames.map(\.milliseconds), [16])
    }

    func testLinesOfLogOutputAreNotFramesUntilTheProgramDrawsAScreen() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        let banner = "pygame 2.6.1 (SDL 2.28.4, Python 3.11.7)\r\nHello from the pygame community.\r\n"
        let colouredLog = "\u{1B}[1;31mERROR\u{1B}[0m dbus: failed to connect\u{1B}[K\r\n"   // grep's colours end in CSI K
        var counted = 0
        for (step, text) in [banner, colouredLog, "50%\r", "51%\r", "\u{1B}[?25l\u{1B}[2Kprogress\r"].enumerated() {
            counted += frames.output(Array(text.utf8), at: UInt64(step) * 100 * ms).frames.count
            counted += frames.tick(at: UInt64(step) * 100 * ms + 50 * ms).frames.count
        }
        XCTAssertEqual(counted, 0, "lines, colours, carriage returns, erased lines, a hidden cursor")
        XCTAssertFalse(frames.drawsScreen)
        for (step, sequence) in ["\u{1B}[12;1H", "\u{1B}[2J", "\u{1B}[?1049h", "\u{1B}[3A", "\u{1B}c"].enumerated() {
            var fresh = TerminalFrames(quietNanoseconds: 8 * ms)
            // Cut anywhere: the sequence split across two reads.
            let bytes = Array(sequence.utf8)
            _ = fresh.output(bytes[..<(bytes.count / 2)], at: 0)
            _ = fresh.output(bytes[(bytes.count / 2)...], at: 1 * ms)
            XCTAssertTrue(fresh.drawsScreen, "sequence \(step)")
        }
        _ = frames.output(Array("\u{1B}[1;1Hframe 1".utf8), at: 1000 * ms)
        XCTAssertEqual(frames.tick(at: 1010 * ms).frames.map(\.milliseconds), [nil], "drawing: its bursts are frames")
        _ = frames.output(Array("\u{1B}[1;1Hframe 2".utf8), at: 1016 * ms)
        XCTAssertEqual(frames.tick(at: 1030 * ms).frames.map(\.milliseconds), [16])
    }

    func testWhyThereAreNoFramesIsSaid() {
        var events = EventSnapshot()
        XCTAssertEqual(FramesUnreported.reason(events, presentHooks: true, readsTerminal: true, terminalDrawn: false), "no GL/Vulkan/SDL/terminal drawing")
        events.glLoaded = true
        XCTAssertEqual(FramesUnreported.reason(events, presentHooks: true, readsTerminal: true, terminalDrawn: false), "GL loaded, no present seen")
        XCTAssertEqual(FramesUnreported.reason(events, presentHooks: true, readsTerminal: true, terminalDrawn: true), FramesUnreported.terminalIdle)
        XCTAssertNil(FramesUnreported.reason(events, presentHooks: false, readsTerminal: false, terminalDrawn: false), "--frames none: nothing watched")
        events.framesTotal = 1
        XCTAssertNil(FramesUnreported.reason(events, presentHooks: true, readsTerminal: true, terminalDrawn: false), "frames are counted")
        for reason in FramesUnreported.codes.all { XCTAssertEqual(FramesUnreported.codes.reason(code: FramesUnreported.codes.code(reason)), reason) }
    }

    func testEachKeyWaitsForTheNextFrame() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        frames.keySent(at: 10 * ms)
        frames.keySent(at: 30 * ms)
        XCTAssertEqual(frames.output(begin + end, at: 50 * ms).latencies, [40, 20])
        frames.keySent(at: 60 * ms)
        XCTAssertEqual(frames.output(begin, at: 70 * ms).latencies, [], "an update not yet ended answers nothing")
        XCTAssertEqual(frames.output(end, at: 75 * ms).latencies, [15])
    }

    func testAKeyIsAnsweredByTheFirstOutputAfterItNotTheEndOfTheBurst() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        _ = frames.output(home, at: 0)
        XCTAssertEqual(frames.tick(at: 9 * ms).frames.count, 1)
        frames.keySent(at: 10 * ms)
        XCTAssertEqual(frames.output(Array("\r\n1\n".utf8), at: 12 * ms).latencies, [2], "the echo of Enter")
        for at in stride(from: 13, through: 2000, by: 1) {            // a stream without pause
            XCTAssertEqual(frames.output(Array("2\n".utf8), at: UInt64(at) * ms).latencies, [])
        }
        XCTAssertEqual(frames.tick(at: 2100 * ms).frames.count, 1, "the stream is still one frame")
    }

    func testWithSynchronizedOutputOnlyWhatTheTerminalShowsAnswers() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        _ = frames.output(begin + end, at: 0)
        frames.keySent(at: 10 * ms)
        XCTAssertEqual(frames.output(begin + Array("drawing".utf8), at: 12 * ms).latencies, [], "not shown before its end")
        XCTAssertEqual(frames.output(Array("more".utf8) + end, at: 14 * ms).latencies, [4])
        frames.keySent(at: 20 * ms)
        XCTAssertEqual(frames.output(Array("\u{1B}[2Jplain".utf8), at: 21 * ms).latencies, [1], "written outside any update: shown at once")
    }

    func testAWithdrawnKeyIsNotAnswered() {
        var frames = TerminalFrames(quietNanoseconds: 8 * ms)
        frames.keySent(at: 10 * ms)
        frames.keySent(at: 11 * ms)
        frames.keyWithdrawn(sentAt: 11 * ms)
        XCTAssertEqual(frames.output(Array("x".utf8), at: 15 * ms).latencies, [5])
    }

    func testLatencyPercentilesAreNearestRank() {
        var window = LatencyWindow()
        XCTAssertNil(window.percentile(50))
        for value in 1...100 { window.add(Double(value)) }
        XCTAssertEqual(window.percentile(50), 50)
        XCTAssertEqual(window.percentile(99), 99)
    }

    func testTheHighestRankedSourceIsShownAndReplacesWhatALowerOneCounted() {
        let aggregator = EventAggregator()
        let t0: UInt64 = 1_000_000 * ms          // monotonic time is uptime: well past the 10 s window
        for step in 1...5 { aggregator.addFrames([(milliseconds: 100, end: t0 + UInt64(step) * 100 * ms)], source: .tty, arrival: t0 + UInt64(step) * 100 * ms) }
        XCTAssertEqual(aggregator.snapshot(at: t0 + 600 * ms).frameSource, .tty)
        XCTAssertEqual(aggregator.snapshot(at: t0 + 600 * ms).framesTotal, 5)
        aggregator.addFrames([(milliseconds: 16, end: t0 + 700 * ms)], source: .gl, arrival: t0 + 700 * ms)
        aggregator.addFrames([(milliseconds: 33, end: t0 + 710 * ms)], source: .tty, arrival: t0 + 710 * ms)     // the same frames, seen twice: dropped
        let shown = aggregator.snapshot(at: t0 + 720 * ms)
        XCTAssertEqual(shown.frameSource, .gl)
        XCTAssertEqual(shown.framesTotal, 1, "gl's frames only")
        XCTAssertEqual(shown.frameP99, 16)
        aggregator.addFrames([(milliseconds: 20, end: t0 + 730 * ms)], source: .vulkan, arrival: t0 + 730 * ms)
        XCTAssertEqual(aggregator.snapshot(at: t0 + 740 * ms).framesTotal, 1, "a second hook of the same rank does not add up")
    }

    func testHookFramesCarryTheirSourceAndTheProgramsWin() {
        var sink = RecordingSink()
        let lines = "perfhud.frame:16.7|ms|#source:gl\nperfhud.frame:16.7|ms|#source:vulkan\nperfhud.frame:16.7|ms\nperfhud.frame:5|ms|#source:other\nperfhud.frame:16.7|ms|#source:sdl"
        Array(lines.utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &sink) }
        XCTAssertEqual(sink.events, ["frame 16.7 1.0 gl", "frame 16.7 1.0 vulkan", "frame 16.7 1.0", "frame 5.0 1.0", "frame 16.7 1.0 sdl"])
    }

    func testTheHooksSayWhichGraphicsAPIWasLoaded() {
        XCTAssertEqual(parse("perfhud.graphics:1|c|#api:gl\nperfhud.graphics:1|c|#api:vulkan"), ["graphics gl", "graphics vulkan"])
        XCTAssertEqual(parse("perfhud.graphics:1|c"), ["malformed"], "no api")
        let aggregator = EventAggregator()
        aggregator.withLock { ingest in
            ingest.setTime(1_000_000 * ms)
            Array("perfhud.graphics:1|c|#api:gl".utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &ingest) }
        }
        let snapshot = aggregator.snapshot(at: 1_000_000 * ms)
        XCTAssertTrue(snapshot.glLoaded)
        XCTAssertFalse(snapshot.vulkanLoaded)
        XCTAssertEqual(snapshot.framesTotal, 0)
    }
}
