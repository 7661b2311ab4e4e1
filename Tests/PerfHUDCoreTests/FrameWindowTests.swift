import XCTest
@testable import PerfHUDEvents

/// The frame percentiles come from counts kept as frames arrive and leave the window
/// (`FrameWindow`, `DurationHistogram`) instead of a sort of the window every tick: they must be
/// what that sort gave — nearest rank over the durations of the frames that ended in the window,
/// at 1 µs — whatever order the frames arrive in, however long they are, and when the ring of the
/// newest frames drops the oldest.
final class FrameWindowTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    /// A seeded generator (xorshift): a failure can be run again.
    private struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
    }

    /// The sort the aggregator used to do: p50, p95, p99 by nearest rank, at 1 µs.
    private func sorted(_ durations: [Double]) -> [Double]? {
        guard !durations.isEmpty else { return nil }
        let ordered = durations.sorted()
        return [50.0, 95, 99].map { ordered[max(0, Int(($0 / 100 * Double(ordered.count)).rounded(.up)) - 1)].atResolution(1000) }
    }

    /// Datagrams of frames, with and without end times, at a rising clock, some frames long (over the
    /// histogram's fine range), some in bursts; a tick every 10 ms, sometimes read before the last
    /// datagram's arrival (frames that ended after the tick are not in its window).
    func testPercentilesAreThoseOfASortOfTheWindowThroughTheAggregator() {
        var random = Seeded(state: 0x9E37_79B9_7F4A_7C15)
        let aggregator = EventAggregator(configuration: { var c = EventConfiguration(); c.frameWindowSeconds = 2; return c }())
        aggregator.startRecording()
        var frames: [RecordedFrame] = []
        var clock = 5 * second
        var compared = 0
        for _ in 0..<1500 {
            clock += UInt64.random(in: 1_000_000...12_000_000, using: &random)
            var lines: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let milliseconds: Double
                switch Int.random(in: 0..<10, using: &random) {
                case 0: milliseconds = Double.random(in: 131...400, using: &random)        // past the fine range
                case 1: milliseconds = Double(Int.random(in: 0...3, using: &random))       // repeats, zero
                default: milliseconds = Double.random(in: 4...40, using: &random)
                }
                let text = String(format: "%.4f", milliseconds)
                if Bool.random(using: &random) {
                    let end = clock - UInt64.random(in: 0...900_000_000, using: &random)
                    lines.append("perfhud.frame:\(text)|ms|#source:gl|end_ns:\(end)")
                } else {
                    lines.append("perfhud.frame:\(text)|ms|#source:gl")
                }
            }
            if !lines.isEmpty {
                aggregator.withLock { ingest in
                    ingest.setTime(clock)
                    Array(lines.joined(separator: "\n").utf8).withUnsafeBytes { ingest.countLines(EventLineParser.parse($0, into: &ingest)) }
                }
            }
            frames += aggregator.drainRecorded().frames
            // The tick's clock: mostly after the datagram, sometimes read just before it arrived.
            let tick = Int.random(in: 0..<4, using: &random) == 0 ? clock - UInt64.random(in: 0...5_000_000, using: &random) : clock
            let snapshot = aggregator.snapshot(at: tick)
            let start = tick - 2 * second
            let expected = sorted(frames.filter { $0.time >= start && $0.time <= tick }.map(\.milliseconds))
            let got = snapshot.frameP50.map { [$0, snapshot.frameP95!, snapshot.frameP99!] }
            XCTAssertEqual(got, expected, "tick at \(tick)")
            if expected != nil { compared += 1 }
        }
        XCTAssertGreaterThan(compared, 1000)
    }

    /// The ring keeps the newest frames only (65,536 in the aggregator; 50 here): a dropped frame
    /// leaves the percentiles, as it left the sorted window. A clock read earlier than the last
    /// (a caller's, not the receiver's) counts the window afresh.
    func testDroppedFramesAndAClockThatGoesBack() {
        var random = Seeded(state: 42)
        var window = FrameWindow(capacity: 50)
        var kept: [(end: UInt64, milliseconds: Double)] = []
        var time = 100 * second
        for round in 0..<400 {
            time += UInt64.random(in: 0...30_000_000, using: &random)
            let milliseconds = round % 7 == 0 ? Double.random(in: 150...200, using: &random) : Double.random(in: 1...30, using: &random)
            let end = time - UInt64.random(in: 0...500_000_000, using: &random)
            window.append(end: end, milliseconds: milliseconds)
            kept.append((end, milliseconds)); if kept.count > 50 { kept.removeFirst() }
            let at = round % 50 == 49 ? time - 3 * second : time   // now and then, back in time
            let start = at - second
            let got = window.percentiles(start: start, time: at).map { [$0.p50, $0.p95, $0.p99] }
            XCTAssertEqual(got, sorted(kept.filter { $0.end >= start && $0.end <= at }.map(\.milliseconds)), "round \(round)")
        }
        window.removeAll()
        XCTAssertNil(window.percentiles(start: time - second, time: time), "a new frame source starts empty")
    }

    /// Durations the fine range cannot hold: below 0 (not from the parser) and past 131 ms, beside
    /// ones that round to the same microsecond.
    func testTheHistogramRanksLikeASort() {
        let histogram = DurationHistogram()
        let values = [-2.5, 0, 0.0004, 0.0006, 16.6665, 16.6666, 131.0714, 131.0716, 500, 3_599_999.9994, 16.6666]
        for value in values { histogram.add(value) }
        let ordered = values.sorted()
        for rank in ordered.indices { XCTAssertEqual(histogram.value(atRank: rank), ordered[rank].atResolution(1000), "rank \(rank)") }
        histogram.remove(500); histogram.remove(-2.5); histogram.remove(16.6666)
        let rest = [0, 0.0004, 0.0006, 16.6665, 16.6666, 131.0714, 131.0716, 3_599_999.9994]
        XCTAssertEqual((0..<histogram.count).map { histogram.value(atRank: $0) }, rest.map { $0.atResolution(1000) })
        XCTAssertNil(histogram.value(atRank: rest.count))
    }

    /// Every rank, from both ends of each level of the histogram's sums, against a sort, while
    /// durations come and go: clusters (a 60 FPS program's), a spread up past the fine range, and
    /// repeats of one microsecond.
    func testEveryRankMatchesASortAsDurationsComeAndGo() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Double {   // xorshift: the same sequence on every run
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state % 1_000_000) / 1_000_000
        }
        let histogram = DurationHistogram()
        var kept: [Double] = []
        for round in 0..<40 {
            for _ in 0..<50 {
                let kind = next()
                let value = kind < 0.6 ? 16.6 + next() * 0.4 : kind < 0.9 ? next() * 140 : 33.333
                histogram.add(value); kept.append(value)
            }
            for _ in 0..<(round % 3 == 2 ? 60 : 20) where !kept.isEmpty {
                let value = kept.remove(at: Int(next() * Double(kept.count)))
                histogram.remove(value)
            }
            let ordered = kept.sorted().map { $0.atResolution(1000) }
            XCTAssertEqual(histogram.count, ordered.count)
            XCTAssertEqual((0..<ordered.count).map { histogram.value(atRank: $0) }, ordered, "round \(round)")
        }
    }
}
