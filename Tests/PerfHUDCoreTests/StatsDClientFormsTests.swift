import XCTest
@testable import PerfHUDEvents

/// Issue 10, point 2: what plain StatsD and DogStatsD clients send, beside the tagged form. The
/// lines are the ones PyPI `statsd` 4.0.1 and `datadog` 0.56.0 were seen to send (docs/events.md).
final class StatsDClientFormsTests: XCTestCase {
    func testPlainStatsDPutsTheLabelInTheName() {
        XCTAssertEqual(parse("perfhud.action.Counter.tapped:1|c"), ["action Counter.tapped 1.0"])
        XCTAssertEqual(parse("perfhud.phase.Gallery:1|c"), ["phase Gallery"])
        XCTAssertEqual(parse("myapp.perfhud.action.Feature.Action.slider(.changed):1|c"), ["action Feature.Action.slider(.changed) 1.0"])
        XCTAssertEqual(parse("my.app.perfhud.phase.Settings.Detail:1|c"), ["phase Settings.Detail"])
        XCTAssertEqual(parse("perfhud.action.A.b:3|c|@0.5"), ["action A.b 6.0"], "a sample rate scales it as in the tagged form")
        XCTAssertEqual(parse("perfhud.action.A.b:1|c\nperfhud.action.A.b:1|c"), ["action A.b 1.0", "action A.b 1.0"])
        XCTAssertEqual(parse("notperfhud.action.A:1|c"), ["ignored"], "a namespace ends in a dot")
    }

    /// The rule for ':' in a label: the count is after the last ':' before the first '|'.
    func testALabelMayHoldColonsTheCountIsAfterTheLast() {
        XCTAssertEqual(parse("perfhud.action.Feature.Action.moved(x:, y:):1|c"), ["action Feature.Action.moved(x:, y:) 1.0"])
        XCTAssertEqual(parse("perfhud.action.DebugTests.Action.screenA(.row(index:, action: .tapped)):2|c"),
                       ["action DebugTests.Action.screenA(.row(index:, action: .tapped)) 2.0"])
        XCTAssertEqual(parse("perfhud.phase.a:b:1|c"), ["phase a:b"])
        for bad in ["perfhud.action.:1|c", "perfhud.action.A:|c", "perfhud.action.A:x|c", "perfhud.action.A:1|ms",
                    "perfhud.action.A(x:):1|g", "perfhud.phase.P:-1|c", "perfhud.action.A:2e6|c"] {
            XCTAssertEqual(parse(bad), ["malformed"], bad)
        }
    }

    /// The Swift client and `perfhud emit` send TCA labels as tags; their commas are inside parentheses.
    func testATaggedLabelKeepsTheCommasInsideItsParentheses() {
        XCTAssertEqual(parse("perfhud.action:1|c|#action:Feature.Action.moved(x:, y:)"), ["action Feature.Action.moved(x:, y:) 1.0"])
        XCTAssertEqual(parse("perfhud.action:1|c|#action:A.pair(_:, _:),env:dev"), ["action A.pair(_:, _:) 1.0"])
        XCTAssertEqual(parse("perfhud.action:1|c|#env:a(b,c),action:X"), ["action X 1.0"])
        XCTAssertEqual(parse("perfhud.action:1|c|#action:A(,env:x"), ["action A(,env:x 1.0"], "never closed: to the end of the tags")
    }

    func testDogStatsDEventsAndServiceChecksAreIgnoredNotMalformed() {
        XCTAssertEqual(parse("_e{5,4}:title|text"), ["ignored"])
        XCTAssertEqual(parse("_e{5,4}:title|text|d:1656581400|p:low|t:info|#env:dev"), ["ignored"])
        XCTAssertEqual(parse("_sc|name|0"), ["ignored"])
        XCTAssertEqual(parse("_sc|db.up|2|d:1656581400|h:host|#env:dev|m:down"), ["ignored"])
        XCTAssertEqual(parse("_e{5,4}:title|text\n_sc|name|0\nperfhud.action.A:1|c"), ["ignored", "ignored", "action A 1.0"])
        for bad in ["_e{", "_e{5}:t|x", "_e{a,4}:t|x", "_e{5,4}t|x", "_sc|", "_sc||0", "_sc|name|", "_sc|name|7", "_sc|name|0x"] {
            XCTAssertEqual(parse(bad), ["malformed"], bad)
        }
    }

    func testTheNameFormReachesTheAggregatorLikeTheTaggedForm() {
        let aggregator = EventAggregator()
        let datagram = "perfhud.action.Counter.tapped:1|c\nperfhud.action:1|c|#action:Counter.tapped\nperfhud.phase.Gallery:1|c\n_e{1,1}:a|b"
        aggregator.withLock { ingest in
            ingest.setTime(1_000_000_000)
            let lines = Array(datagram.utf8).withUnsafeBytes { EventLineParser.parse($0, into: &ingest) }
            ingest.countLines(lines)
        }
        let snapshot = aggregator.snapshot(at: 1_100_000_000)
        XCTAssertEqual(snapshot.actionsTotal, 2)
        XCTAssertEqual(snapshot.phase, "Gallery")
        XCTAssertEqual(snapshot.ignored, 1)
        XCTAssertEqual(snapshot.malformed, 0)
        XCTAssertEqual(aggregator.actionTotals().map(\.label), ["Counter.tapped"])
    }
}
