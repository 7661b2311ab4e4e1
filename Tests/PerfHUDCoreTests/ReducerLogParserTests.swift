import XCTest
@testable import PerfHUDCore

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
                                      "Feature.Action.slider(.changed(_:))", "Feature.Action.save(_:)",
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
}
