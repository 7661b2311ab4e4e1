import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDEvents

/// A sink that records what the parser found, as strings.
struct RecordingSink: EventSink {
    var events: [String] = []
    mutating func action(label: UnsafeRawBufferPointer, count: Double) { events.append("action \(String(decoding: label, as: UTF8.self)) \(count)") }
    mutating func frame(milliseconds: Double, count: Double, source: FrameSource, end: UInt64?) {
        events.append("frame \(milliseconds) \(count)" + (source == .events ? "" : " \(source.rawValue)") + (end.map { " end \($0)" } ?? ""))
    }
    mutating func phase(name: UnsafeRawBufferPointer, residentBytes: UInt64?) { events.append("phase \(String(decoding: name, as: UTF8.self))" + (residentBytes.map { " rss \($0)" } ?? "")) }
    mutating func graphicsLoaded(api: UnsafeRawBufferPointer) { events.append("graphics \(String(decoding: api, as: UTF8.self))") }
    mutating func ignored() { events.append("ignored") }
    mutating func malformed() { events.append("malformed") }
}

func parse(_ text: String) -> [String] {
    var sink = RecordingSink()
    Array(text.utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &sink) }
    return sink.events
}

final class EventLineParserTests: XCTestCase {
    func testTheThreeEvents() {
        XCTAssertEqual(parse("perfhud.action:1|c|#action:Counter.incrementTapped"), ["action Counter.incrementTapped 1.0"])
        XCTAssertEqual(parse("perfhud.frame:16.7|ms"), ["frame 16.7 1.0"])
        XCTAssertEqual(parse("perfhud.frame:16.7|h"), ["frame 16.7 1.0"])
        XCTAssertEqual(parse("perfhud.phase:1|c|#phase:DrawingScreen"), ["phase DrawingScreen"])
    }

    func testPackedValuesSampleRatesNamespacesAndTags() {
        XCTAssertEqual(parse("perfhud.frame:16.7:16.9:33.4|d"), ["frame 16.7 1.0", "frame 16.9 1.0", "frame 33.4 1.0"])
        XCTAssertEqual(parse("perfhud.action:3|c|@0.5|#env:dev,action:Slider.changed"), ["action Slider.changed 6.0"])
        XCTAssertEqual(parse("myapp.perfhud.action:1|c|#action:A"), ["action A 1.0"])
        XCTAssertEqual(parse("myapp.perfhud.frame:8|ms|@0.25"), ["frame 8.0 4.0"])
        XCTAssertEqual(parse("notperfhud.action:1|c|#action:A"), ["ignored"], "a prefix must end in a dot")
        XCTAssertEqual(parse("requests:1|c"), ["ignored"])
        XCTAssertEqual(parse("perfhud.action:1|c|#action:A|c:abc|T1656581400"), ["action A 1.0"], "DogStatsD 1.2+ fields")
    }

    func testMalformedLinesAreCountedAndTheRestOfTheDatagramStillCounts() {
        let datagram = "perfhud.action:1|c|#action:A\ngarbage\nperfhud.frame:abc|ms\n\nperfhud.frame:5|ms\r\nperfhud.action:1|c\nperfhud.frame:1|x\nperfhud.action:1|c|@2|#action:B\n"
        XCTAssertEqual(parse(datagram), ["action A 1.0", "malformed", "malformed", "frame 5.0 1.0", "malformed", "malformed", "malformed"])
        for bad in [":", "|", "x:|c", ":1|c", "perfhud.frame:|ms", "perfhud.frame:1e999|ms", "perfhud.frame:-5|ms",
                    "perfhud.frame:nan|ms", "perfhud.frame:inf|ms", "perfhud.frame:0x10|ms", "perfhud.frame:1::2|d",
                    "perfhud.action:1|c|#action:", "perfhud.frame:5"] {
            XCTAssertEqual(parse(bad), ["malformed"], bad)
        }
    }

    func testTheEndTimeField() {
        XCTAssertEqual(parse("perfhud.frame:16.667|ms|#source:gl|end_ns:123456789012"), ["frame 16.667 1.0 gl end 123456789012"])
        XCTAssertEqual(parse("perfhud.frame:16|ms|end_ns:5|@0.5|#source:vulkan"), ["frame 16.0 2.0 vulkan end 5"], "anywhere after the type")
        XCTAssertEqual(parse("perfhud.frame:16|ms|end_ns:18446744073709551615"), ["frame 16.0 1.0 end 18446744073709551615"])
        XCTAssertEqual(parse("perfhud.frame:16|ms"), ["frame 16.0 1.0"], "optional: older senders omit it")
        // Packed: the line's end is the last value's; each value before ends where the next began.
        XCTAssertEqual(parse("perfhud.frame:10:20:30|d|end_ns:1000000000"),
                       ["frame 10.0 1.0 end 950000000", "frame 20.0 1.0 end 970000000", "frame 30.0 1.0 end 1000000000"])
        XCTAssertEqual(parse("perfhud.frame:10:20|d|end_ns:15000000"), ["frame 10.0 1.0 end 0", "frame 20.0 1.0 end 15000000"],
                       "an end before the clock's 0 is 0, which the aggregator disbelieves")
        // Other kinds and other metrics do not read it; other unknown fields stay ignored.
        XCTAssertEqual(parse("perfhud.action:1|c|#action:A|end_ns:x"), ["action A 1.0"])
        XCTAssertEqual(parse("perfhud.frame:16|ms|e:it-false,cn-app|x:1|end_nsx:1|T1656581400"), ["frame 16.0 1.0"],
                       "DogStatsD's e: (external data), unknown fields, a longer name: not the end time")
        // A sender that means to give the time and garbles it: the line is malformed, counted.
        for bad in ["end_ns:", "end_ns:abc", "end_ns:-1", "end_ns:+1", "end_ns:1.5", "end_ns:1e9", "end_ns: 1",
                    "end_ns:18446744073709551616", "end_ns:000000000000000000001"] {
            XCTAssertEqual(parse("perfhud.frame:16|ms|" + bad), ["malformed"], bad)
            XCTAssertEqual(parse("perfhud.frame:16:17|d|" + bad), ["malformed"], bad)
        }
    }

    func testSampleRatesAndCountsOutsideTheirBoundsAreMalformed() {
        // Issue 8: these once trapped the daemon or counted 10^19 events from one line.
        for bad in ["perfhud.frame:16|ms|@1e-19", "perfhud.frame:16|ms|@1e-8", "perfhud.frame:16|ms|@0", "perfhud.frame:16|ms|@-1",
                    "perfhud.frame:16|ms|@1.5", "perfhud.action:1e19|c|#action:x", "perfhud.action:1e300|c|@1e-300|#action:y",
                    "perfhud.action:1000001|c|#action:x", "perfhud.phase:1e7|c|#phase:P", "perfhud.frame:3600000|ms"] {
            XCTAssertEqual(parse(bad), ["malformed"], bad)
        }
        XCTAssertEqual(parse("perfhud.action:1000000|c|@0.0001|#action:x"), ["action x 10000000000.0"], "the bounds themselves are fine")
        XCTAssertEqual(parse("perfhud.frame:16|ms|@0.0001"), ["frame 16.0 10000.0"])
    }

    func testAFrameWithASampleRateIsWeightedNotRepeated() {
        let aggregator = EventAggregator()
        aggregator.startRecording()
        aggregator.withLock { ingest in
            ingest.setTime(1_000_000_000)
            Array("perfhud.frame:40|ms|@0.001".utf8).withUnsafeBytes { _ = EventLineParser.parse($0, into: &ingest) }
        }
        let observed = aggregator.drainRecorded().frames
        XCTAssertEqual(observed.count, 1, "one frame kept, carrying its weight")
        XCTAssertEqual(observed.first?.weight ?? 0, 1000, accuracy: 1e-9)
        let snapshot = aggregator.snapshot(at: 1_000_000_000)
        XCTAssertEqual(snapshot.framesTotal, 1000, accuracy: 1e-9)
        XCTAssertEqual(snapshot.jankyFrames, 1000, accuracy: 1e-9, "40 ms > 1.5 × 16.7 ms")
    }

    func testConversionsToIntegersNeverTrap() {
        XCTAssertEqual(Double.nan.clampedInt, 0)
        XCTAssertEqual(Double.infinity.clampedInt, Int.max)
        XCTAssertEqual((-1e300).clampedInt, Int.min)
        XCTAssertEqual(42.9.clampedInt, 42)
        XCTAssertFalse(Units.bytes(1e300).isEmpty)
        XCTAssertFalse(Units.compactPercent(.infinity).isEmpty)
        XCTAssertEqual(String(format1: .nan), "0.0")
    }

    func testNumbers() {
        func number(_ text: String) -> Double? { Array(text.utf8).withUnsafeBytes { EventLineParser.number($0) } }
        XCTAssertEqual(number("16.7"), 16.7)
        XCTAssertEqual(number("1e3"), 1000)
        XCTAssertEqual(number(".5"), 0.5)
        XCTAssertEqual(number("-2"), -2)
        XCTAssertNil(number("1.2.3"))
        XCTAssertNil(number(""))
        XCTAssertNil(number("e5"))
    }

    /// Random and mutated datagrams: the parser never crashes, and every non-empty line is
    /// accounted for exactly once.
    func testFuzzedDatagrams() {
        var generator = SystemRandomNumberGenerator()
        let seeds = ["perfhud.action:1|c|#action:Slider.changed", "perfhud.frame:16.7:33|d|@0.5", "perfhud.phase:1|c|#phase:X",
                     "perfhud.frame:16.667|ms|#source:gl|end_ns:123456789012"]
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = Array(seeds.randomElement(using: &generator)!.utf8)
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    let position = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[position] = UInt8.random(in: 0...255, using: &generator)
                    case 1: bytes.remove(at: position); if bytes.isEmpty { bytes = [0x7C] }
                    default: bytes.insert(Array(":|@#\n.,e-".utf8).randomElement(using: &generator)!, at: position)
                    }
                }
            }
            var sink = RecordingSink()
            let lines = bytes.withUnsafeBytes { EventLineParser.parse($0, into: &sink) }
            let frames = sink.events.filter { $0.hasPrefix("frame") }.count
            XCTAssertGreaterThanOrEqual(sink.events.count, lines, "every line is counted")
            XCTAssertLessThanOrEqual(sink.events.count - frames, lines)
        }
    }
}

final class EventAggregatorTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    private func feed(_ aggregator: EventAggregator, _ text: String, at time: UInt64) {
        aggregator.withLock { ingest in
            ingest.setTime(time)
            Array(text.utf8).withUnsafeBytes { ingest.countLines(EventLineParser.parse($0, into: &ingest)) }
        }
    }

    func testFrameFiguresAreExact() {
        let aggregator = EventAggregator()
        // 100 frames over one second: 90 of 16 ms, 5 of 30 ms (janky: > 25 ms), 5 of 50 ms (3 frames long).
        var durations = Array(repeating: 16.0, count: 90) + Array(repeating: 30.0, count: 5) + Array(repeating: 50.0, count: 5)
        durations.shuffle()
        for (index, duration) in durations.enumerated() {
            feed(aggregator, "perfhud.frame:\(duration)|ms", at: 10 * second + UInt64(index) * 10_000_000)
        }
        let snapshot = aggregator.snapshot(at: 11 * second)
        XCTAssertEqual(snapshot.fps, 100)
        XCTAssertEqual(snapshot.frameP50, 16)
        XCTAssertEqual(snapshot.frameP95, 30, "nearest rank: the 95th of 100 sorted values")
        XCTAssertEqual(snapshot.frameP99, 50)
        XCTAssertEqual(snapshot.fpsOnePercentLow, 20)
        XCTAssertEqual(snapshot.jankyFrames, 10)
        XCTAssertEqual(snapshot.droppedFrames, 5 * (2 - 1) + 5 * (3 - 1), "round(30/16.7)-1 = 1, round(50/16.7)-1 = 2")
        XCTAssertEqual(aggregator.snapshot(at: 25 * second).frameP99, nil, "the 10 s window has passed")
        XCTAssertEqual(aggregator.snapshot(at: 25 * second).jankyFrames, 10, "janky frames are cumulative")
    }

    func testHighFrequencyAboveTheThresholdNotBelowAndItLingersTenSeconds() {
        let aggregator = EventAggregator()
        for index in 0..<30 { feed(aggregator, "perfhud.action:1|c|#action:Slider.changed", at: 5 * second + UInt64(index) * 33_000_000) }
        for index in 0..<19 { feed(aggregator, "perfhud.action:1|c|#action:Button.tapped", at: 5 * second + UInt64(index) * 50_000_000) }
        let during = aggregator.snapshot(at: 6 * second)
        XCTAssertEqual(during.highFrequencyActions.map(\.action), ["Slider.changed"])
        XCTAssertEqual(during.highFrequencyActions.first?.rate, 30)
        XCTAssertEqual(during.actionsPerSecond, 49)
        let later = aggregator.snapshot(at: 14 * second)
        XCTAssertEqual(later.highFrequencyActions.first?.rate, 0)
        XCTAssertEqual(later.highFrequencyActions.first?.peak, 30, "listed with its peak")
        XCTAssertTrue(aggregator.snapshot(at: 17 * second).highFrequencyActions.isEmpty, "gone 10 s after")
    }

    func testLabelsAreCappedInNumberAndLength() {
        var configuration = EventConfiguration()
        configuration.maxActionLabels = 5
        let aggregator = EventAggregator(configuration: configuration)
        for index in 0..<1000 { feed(aggregator, "perfhud.action:1|c|#action:label\(index)", at: second) }
        feed(aggregator, "perfhud.action:1|c|#action:" + String(repeating: "x", count: 5000), at: second)
        let totals = aggregator.actionTotals()
        XCTAssertEqual(totals.count, 6)
        XCTAssertEqual(totals.last?.label, "__other__")
        XCTAssertEqual(totals.last?.total, 996)
        XCTAssertEqual(totals.map(\.total).reduce(0, +), 1001, "no action lost")
        let long = EventAggregator()
        feed(long, "perfhud.action:1|c|#action:" + String(repeating: "x", count: 5000), at: second)
        XCTAssertEqual(long.actionTotals().first?.label.utf8.count, 200)
    }

    func testTheLogFoldsRepeatsAndStaysBounded() {
        let aggregator = EventAggregator()
        for _ in 0..<37 { feed(aggregator, "perfhud.action:1|c|#action:Slider.changed", at: second) }
        feed(aggregator, "perfhud.action:1|c|#action:Done", at: second)
        XCTAssertEqual(aggregator.drainLog().entries, [ActionLogEntry(label: "Slider.changed", count: 37), ActionLogEntry(label: "Done", count: 1)])
        for index in 0..<100_000 { feed(aggregator, "perfhud.action:1|c|#action:L\(index % 2)", at: second) }
        let drained = aggregator.drainLog()
        XCTAssertEqual(drained.entries.count, 256)
        XCTAssertEqual(drained.entries.map(\.count).reduce(0, +) + drained.dropped, 100_000, "every action is either logged or counted as not shown")
    }

    func testPhasesAndCounters() {
        let aggregator = EventAggregator()
        feed(aggregator, "perfhud.phase:1|c|#phase:Home\nperfhud.phase:1|c|#phase:Gallery\nbad\nother.metric:1|g", at: 3 * second)
        let snapshot = aggregator.snapshot(at: 3 * second)
        XCTAssertEqual(snapshot.phase, "Gallery")
        XCTAssertEqual(snapshot.received, 4)
        XCTAssertEqual(snapshot.malformed, 1)
        XCTAssertEqual(snapshot.ignored, 1)
        XCTAssertEqual(aggregator.drainPhaseChanges().map(\.name), ["Home", "Gallery"])
        XCTAssertTrue(aggregator.drainPhaseChanges().isEmpty)
    }
}
