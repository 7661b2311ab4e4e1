import XCTest
@testable import PerfHUDEvents

/// Frames counted by when they ended, not by when their datagram arrived (`FrameTiming`): the
/// aggregator is fed datagrams at explicit times, as the receiving thread would.
final class FrameTimingTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private let millisecond: UInt64 = 1_000_000

    /// One datagram, received at `time`, the way `EventReceiver` hands it over.
    private func deliver(_ aggregator: EventAggregator, _ text: String, at time: UInt64) {
        aggregator.withLock { ingest in
            ingest.setTime(time)
            Array(text.utf8).withUnsafeBytes { ingest.countLines(EventLineParser.parse($0, into: &ingest)) }
        }
    }

    private func frameBuckets(_ aggregator: EventAggregator) -> [Int64: Double] {
        aggregator.withLock { ingest in
            var buckets: [Int64: Double] = [:]
            for (id, count) in zip(ingest.allFrames.ids, ingest.allFrames.counts) where id >= 0 { buckets[id] = count }
            return buckets
        }
    }

    private func line(_ milliseconds: Double, end: UInt64?, source: String = "gl") -> String {
        "perfhud.frame:\(milliseconds)|ms|#source:\(source)" + (end.map { "|end_ns:\($0)" } ?? "")
    }

    func testABatchOf16LinesLandsInTheBucketsItsFramesEnded() {
        let aggregator = EventAggregator()
        aggregator.startRecording()
        // 16 frames of 16.7 ms ending from 10.000 s to 10.2505 s (267 ms of frames with the one
        // before), sent as one datagram that arrives at 10.260 s.
        let ends = (0..<16).map { 10 * second + UInt64(Double($0) * 16_700_000) }
        deliver(aggregator, ends.map { line(16.7, end: $0) }.joined(separator: "\n"), at: 10 * second + 260 * millisecond)
        // Bucket 100 (10.0-10.1 s): ends 0…83.5 ms, 6 frames; 101: 100.2…183.7 ms, 6; 102: 200.4…250.5 ms, 4.
        XCTAssertEqual(frameBuckets(aggregator), [100: 6, 101: 6, 102: 4])
        XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time), ends, "recorded at their end times")
    }

    /// A steady 60 FPS, sent the way the frame hooks send it: a datagram every 16 frames, arriving
    /// `delivery` after the last of them ended. Ticks every 100 ms (at a phase unrelated to the
    /// frames); at each, what has arrived by then is in, and the FPS is read.
    private func steadyStream(withEndTimes: Bool, delivery: UInt64, clockOffset: Int64 = 0) -> [(tick: UInt64, fps: Double)] {
        let aggregator = EventAggregator()
        let start = 20 * second + 3 * millisecond
        let period = 1e9 / 60
        let frames = 60 * 12
        var datagrams: [(arrival: UInt64, text: String)] = []
        var batch: [String] = []
        for index in 1...frames {
            let end = start + UInt64((Double(index) * period).rounded())
            batch.append(line(period / 1e6, end: withEndTimes ? UInt64(Int64(end) + clockOffset) : nil))
            if batch.count == 16 || index == frames {
                datagrams.append((end + delivery, batch.joined(separator: "\n")))
                batch = []
            }
        }
        var readings: [(UInt64, Double)] = []
        var next = 0
        var tick = start + 37 * millisecond
        while tick < start + 12 * second {
            while next < datagrams.count && datagrams[next].arrival <= tick {
                deliver(aggregator, datagrams[next].text, at: datagrams[next].arrival)
                next += 1
            }
            readings.append((tick, aggregator.snapshot(at: tick).fps))
            tick += 100 * millisecond
        }
        // Steady from 1.5 s in (a second of frames and the window's lag) to the last frame.
        return readings.filter { $0.0 >= start + 1_500 * millisecond && $0.0 <= start + 12 * second - 100 * millisecond }
    }

    func testASteady60FPSIn16FrameBatchesReads59To61AtEveryTick() {
        let readings = steadyStream(withEndTimes: true, delivery: 1 * millisecond)
        XCTAssertGreaterThan(readings.count, 95)
        for (tick, fps) in readings { XCTAssertTrue((59...61).contains(fps), "\(fps) FPS at \(Double(tick) / 1e9) s") }
        // A slower delivery (the batch sits in a busy socket for 120 ms): the window waits longer.
        for (tick, fps) in steadyStream(withEndTimes: true, delivery: 120 * millisecond) {
            XCTAssertTrue((59...61).contains(fps), "\(fps) FPS at \(Double(tick) / 1e9) s, 120 ms delivery")
        }
    }

    func testASteady60FPSFromASenderWithoutEndTimesIsPlacedBackAndReadsSteady() {
        for (tick, fps) in steadyStream(withEndTimes: false, delivery: 1 * millisecond) {
            XCTAssertTrue((59...61).contains(fps), "\(fps) FPS at \(Double(tick) / 1e9) s")
        }
    }

    func testASenderWithAnotherClockDoesNotPoisonTheFigures() {
        // A program in another time namespace: its CLOCK_MONOTONIC is 5 s behind or ahead of
        // perfhud's. Its end times are disbelieved and its frames placed back from arrival.
        for offset: Int64 in [-5_000_000_000, 5_000_000_000] {
            for (tick, fps) in steadyStream(withEndTimes: true, delivery: 1 * millisecond, clockOffset: offset) {
                XCTAssertTrue((59...61).contains(fps), "\(fps) FPS at \(Double(tick) / 1e9) s, clock \(offset) ns off")
            }
        }
    }

    func testLinesWithoutEndTimesArePlacedBackFromArrivalByTheirDurations() {
        let aggregator = EventAggregator()
        aggregator.startRecording()
        let arrival = 30 * second
        // 10, 20, then 30 and 40 packed: the last ends at arrival, each before it where the next began.
        deliver(aggregator, "perfhud.frame:10|ms\nperfhud.action:1|c|#action:A\nperfhud.frame:20|ms\nperfhud.frame:30:40|d", at: arrival)
        XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time),
                       [arrival - 90 * millisecond, arrival - 70 * millisecond, arrival - 40 * millisecond, arrival])
        // One frame a datagram (an unbatched sender): it ends at its arrival.
        deliver(aggregator, "perfhud.frame:16|ms", at: arrival + 16 * millisecond)
        XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time), [arrival + 16 * millisecond])
        // Long frames do not push the ones before them more than a second back.
        deliver(aggregator, "perfhud.frame:3000000|ms\nperfhud.frame:2000|ms\nperfhud.frame:5|ms", at: 40 * second)
        XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time), [39 * second, 40 * second - 5 * millisecond, 40 * second])
    }

    func testEndTimesAfterArrivalOrLongBeforeItAreNotBelieved() {
        let aggregator = EventAggregator()
        aggregator.startRecording()
        let arrival = 50 * second
        // Believed: up to a second before arrival, and arrival itself.
        deliver(aggregator, line(16, end: arrival - second) + "\n" + line(16, end: arrival), at: arrival)
        XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time), [arrival - second, arrival])
        // Not believed (after arrival, more than a second before it, 0): placed back from arrival.
        for bad: UInt64 in [arrival + 1, arrival + 3600 * second, arrival - second - 1, 0] {
            deliver(aggregator, line(16, end: bad) + "\n" + line(4, end: nil), at: arrival)
            XCTAssertEqual(aggregator.drainRecorded().frames.map(\.time), [arrival - 4 * millisecond, arrival], "end \(bad)")
        }
        XCTAssertEqual(aggregator.snapshot(at: arrival).malformed, 0, "well-formed, only not believed")
    }

    func testTheWindowLagsOnlyAsLongAsDeliveriesTake() {
        let aggregator = EventAggregator()
        // Unbatched: one frame a datagram, arriving as it ends. The FPS at 61.05 s counts 60.0–61.0 s.
        for index in 0..<120 { deliver(aggregator, line(10, end: nil, source: "vulkan"), at: 60 * second + UInt64(index) * 10 * millisecond) }
        XCTAssertEqual(aggregator.withLock { $0.frameTiming.lagBuckets(at: 61 * second) }, 0)
        XCTAssertEqual(aggregator.snapshot(at: 61 * second + 50 * millisecond).fps, 100)
        // One frame 250 ms late: the window now ends 3 buckets back, for 10 s.
        deliver(aggregator, line(10, end: 62 * second - 250 * millisecond, source: "vulkan"), at: 62 * second)
        XCTAssertEqual(aggregator.withLock { $0.frameTiming.lagBuckets(at: 62 * second) }, 3)
        XCTAssertEqual(aggregator.withLock { $0.frameTiming.lagBuckets(at: 71 * second) }, 3)
        XCTAssertEqual(aggregator.withLock { $0.frameTiming.lagBuckets(at: 73 * second) }, 0, "forgotten after 10 s")
    }

    func testFramePercentilesCoverTheWindowByEndTime() {
        let aggregator = EventAggregator()
        let snapshotTime = 100 * second
        // One datagram arriving 9.85 s before the snapshot: frames of 100 ms that ended 10.15 to
        // 10.05 s before it (outside the 10 s window), then frames of 50 ms that ended inside it.
        let outside = [10_150, 10_100, 10_050].map { line(100, end: snapshotTime - $0 * millisecond) }
        let inside = [9_990, 9_950, 9_900].map { line(50, end: snapshotTime - $0 * millisecond) }
        deliver(aggregator, (outside + inside).joined(separator: "\n"), at: snapshotTime - 9_850 * millisecond)
        for index in (0..<20).reversed() { deliver(aggregator, line(10, end: nil), at: snapshotTime - UInt64(index) * 100 * millisecond) }
        let snapshot = aggregator.snapshot(at: snapshotTime)
        XCTAssertEqual(snapshot.frameP99, 50, "the longest frame that ended in the window, although it arrived with older ones")
        XCTAssertEqual(snapshot.frameP50, 10)
    }

    func testTheFrameCounterIgnoresFramesOlderThanItsRing() {
        // A bucket 32 or more before the newest would share its slot: it is dropped, not allowed
        // to wipe the newer count.
        var counter = EventAggregator.BucketCounter()
        counter.add(5, bucket: 100)
        counter.add(1, bucket: 68)
        counter.add(2, bucket: 99)
        XCTAssertEqual(counter.lastSecond(current: 101), 7)
    }
}
