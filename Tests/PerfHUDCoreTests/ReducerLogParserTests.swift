import XCTest
@testable import PerfHUDEvents

final class ReducerLogParserTests: XCTestCase {
    private func labels(_ text: String, chunk: Int = 7) -> [String] {
        var parser = ReducerLogParser()
        var result: [String] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {   // fed in small pieces, as a pipe delivers them
            result += parser.feed(bytes[start..<min(bytes.count, start + chunk)])
            start += chunk
        }
        return result
    }

    func testActionLabelsPrinterOneLineForm() {
        let text = """
        received action: AppFeature.Action.counter(.incrementButtonTapped)
        received action: Feature.Action.slider(.changed(_:))
        some other output
        MyFeature: received action: Feature.Action.moved(x:, y:)

        """
        XCTAssertEqual(labels(text), ["AppFeature.Action.counter(.incrementButtonTapped)",
                                      "Feature.Action.slider(.changed(_:))", "Feature.Action.moved(x:, y:)"])
    }

    func testCustomDumpPrinterMultiLineForm() {
        let text = """
        received action:
          AppFeature.Action.counter(.incrementButtonTapped)
          AppFeature.State(
            _counter: Counter.State(
        -     count: 0
        +     count: 1
            )
          )

        received action:
          Feature.Action.slider(
            .changed(0.75)
          )
          (No state changes)

        received action:
          Feature.Action.save(
            Item(
              id: 42,
              name: "a (tricky), name"
            )
          )
          (No state changes)

        received action:
          Feature.Action.moved(x: 3, y: 4)
          (No state changes)

        """
        XCTAssertEqual(labels(text), ["AppFeature.Action.counter(.incrementButtonTapped)",
                                      "Feature.Action.slider(.changed)", "Feature.Action.save",
                                      "Feature.Action.moved(x:, y:)"])
    }

    func testJSONLines() {
        let text = """
        {"action": "Feature.Action.buttonTapped", "time": 1}
        {"level":"info","payload":{"action":"nested, not counted"},"action":"Top\\u0041"}
        {"noaction": true}
        not json
        {"action": ""}

        """
        XCTAssertEqual(labels(text), ["Feature.Action.buttonTapped", "TopA"])
    }

    func testColouredOutputFromAProgram() {
        let text = "\u{1B}[32mreceived action: \u{1B}[1mFeature.Action.tap\u{1B}[0m\r\n"
        XCTAssertEqual(labels(text), ["Feature.Action.tap"])
    }
    // MARK: bounded whatever the input (issue 8)

    func testAStrayBracketEndsTheLineAsMalformedAndTheNextLineCounts() {
        var parser = ReducerLogParser()
        let found = parser.feed(Array("received action: A(]\nreceived action: Feature.Action.tapped\n".utf8))
        XCTAssertEqual(found, ["Feature.Action.tapped"])
        XCTAssertEqual(parser.malformed, 1)
        XCTAssertNil(ReducerLogParser.label(fromDump: "A(]"))
        XCTAssertNil(ReducerLogParser.label(fromDump: "A(x: 1, ]"))
        XCTAssertNil(ReducerLogParser.label(fromDump: "A(.b(1)"), "a parenthesis never closed")
    }

    func testNestingUpToTheLimitParsesAndDeeperIsMalformed() {
        func nested(_ depth: Int) -> String {
            "A" + String(repeating: "(.b", count: depth - 1) + String(repeating: ")", count: depth - 1)
        }
        let limit = ReducerLogParser.maximumDepth
        XCTAssertEqual(ReducerLogParser.label(fromDump: nested(limit)), nested(limit))
        XCTAssertNil(ReducerLogParser.label(fromDump: nested(limit + 1)))
    }

    func testAHugeDeepDumpIsDroppedAndTheParserResynchronises() {
        // 128 KiB of ".(" in the multi-line form: once crashed the stack.
        var text = "received action:\n  Feature.Action.deep(\n"
        for _ in 0..<2048 { text += "    " + String(repeating: ".(", count: 32) + "\n" }
        text += "  )\nreceived action: Feature.Action.after\n"
        var parser = ReducerLogParser()
        XCTAssertEqual(parser.feed(Array(text.utf8)), ["Feature.Action.after"])
        XCTAssertEqual(parser.malformed, 1)
        XCTAssertNil(ReducerLogParser.label(fromDump: String(repeating: ".(", count: 65536)))
    }

    func testWellFormedLabelsAreUnchangedByTheBounds() {
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Feature.Action.slider(.changed(0.5))"), "Feature.Action.slider(.changed)")
        XCTAssertEqual(ReducerLogParser.label(fromDump: "A.Action.moved(x: 1, y: [2, 3], \"a)\")"), "A.Action.moved(x:, y:, _:)")
    }

    func testChunkedAndOneShotAgreeOnTheRegressionInputs() {
        let text = "received action: A(]\nreceived action:\n  X(\n    .(.(.(\n  )\nreceived action: B.c(.d(1))\n{\"action\": \"J\"}\n"
        var whole = ReducerLogParser()
        let expected = whole.feed(Array(text.utf8))
        for chunk in 1...9 { XCTAssertEqual(labels(text, chunk: chunk), expected, "pieces of \(chunk) bytes") }
        XCTAssertEqual(expected, ["B.c(.d)", "J"])
    }
}
