import XCTest
@testable import PerfHUDClient
@testable import PerfHUDSupport
@testable import PerfHUDEvents
@testable import PerfHUDPipeline
#if canImport(Glibc)
import Glibc
#endif

/// Issue 10, point 1: labels keep every enum case at every depth, as TCA's `.actionLabels` printer
/// writes them. Held to TCA's own text (Tests/Fixtures/tca, see its README): both printers' output
/// of the same actions gives the same labels, and the client helper gives them too for the same
/// enums.
final class TCALabelTests: XCTestCase {
    private static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/tca")

    private func labels(ofFixture name: String, chunk: Int = 5) throws -> (labels: [String], malformed: Int) {
        let bytes = Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
        var parser = ReducerLogParser()
        var result: [String] = []
        var start = 0
        while start < bytes.count {   // in small pieces, as a pipe delivers them
            result += parser.feed(bytes[start..<min(bytes.count, start + chunk)])
            start += chunk
        }
        return (result, parser.malformed)
    }

    /// The labels TCA gives these actions, one a line (debugtests: its DebugTests'
    /// testDebugCaseOutput assertions). The end-to-end test reads the same files.
    private static func expected(_ name: String) -> [String] {
        let text = (try? String(contentsOf: fixtures.appendingPathComponent(name), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
    static let debugTestsLabels = expected("debugtests.labels.txt")
    static let navigationLabels = expected("navigation.labels.txt")

    /// Both printers' text of the same actions (`NAME.actionLabels.txt`, `NAME.customDump.txt`)
    /// gives `labels`, and nothing is malformed.
    private func assertBothForms(_ name: String, give labels: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        for form in ["actionLabels", "customDump"] {
            let read = try self.labels(ofFixture: "\(name).\(form).txt")
            XCTAssertEqual(read.labels, labels, form, file: file, line: line)
            XCTAssertEqual(read.malformed, 0, form, file: file, line: line)
        }
    }

    func testTCAsDebugTestsInBothPrinterFormsGiveTCAsLabels() throws {
        XCTAssertEqual(Self.debugTestsLabels.count, 4)
        try assertBothForms("debugtests", give: Self.debugTestsLabels)
    }

    func testNavigationStackBindingAndPayloadsInBothFormsGiveTheSameLabels() throws {
        try assertBothForms("navigation", give: Self.navigationLabels)
    }

    func testTCAsDocumentationDumps() throws {
        let faq = try labels(ofFixture: "faq.customDump.txt")
        XCTAssertEqual(faq.labels, ["AppFeature.Action.syncUpsList(.addSyncUpButtonTapped)"])
        // `.onDelete(IndexSet(…))`: IndexSet is a struct, so TCA's label is the case alone.
        let syncUps = try labels(ofFixture: "syncups-ondelete.customDump.txt")
        XCTAssertEqual(syncUps.labels, ["AppFeature.Action.syncUpsList(.onDelete)"])
        XCTAssertEqual(faq.malformed + syncUps.malformed, 0)
    }

    func testEveryChunkSizeGivesTheSameLabels() throws {
        for chunk in [1, 2, 3, 64, 4096] {
            XCTAssertEqual(try labels(ofFixture: "navigation.customDump.txt", chunk: chunk).labels, Self.navigationLabels, "chunks of \(chunk)")
        }
    }

    /// A label read back is the same label: what the parser writes, it reads unchanged.
    func testLabelsAreFixedPoints() {
        for label in Self.debugTestsLabels + Self.navigationLabels + ["Feature.Action.pair(_: .a, _:)", "A.b(.c(_:))"] {
            XCTAssertEqual(ReducerLogParser.label(fromDump: label), label)
        }
    }

    func testUnlabelledCasesAmongSeveralPayloadsAreMarked() {
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Feature.Action.pair(.a, 1)"), "Feature.Action.pair(_: .a, _:)")
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Feature.Action.pair(1, .b(2))"), "Feature.Action.pair(_:, _: .b)")
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Feature.Action.pair(.a(.x(1)), .b)"), "Feature.Action.pair(_: .a(.x), _: .b)")
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Form.Action.binding(.set(WritableKeyPath<State, String>, \"x\"))"), "Form.Action.binding")
        XCTAssertEqual(ReducerLogParser.label(fromDump: "Feature.Action.settings(.set(.dark))"), "Feature.Action.settings(.set(.dark))",
                       "a case named set is still a case")
    }

    // MARK: the client helper names the same enums the same way

    enum DebugTests {
        enum Action {
            case action1(Bool, label: String)
            case action2(Bool, Int, String)
            case screenA(ScreenA)
            enum ScreenA {
                case row(index: Int, action: RowAction)
                enum RowAction {
                    case tapped
                    case textChanged(query: String)
                }
            }
        }
    }

    struct Item { var id: Int; var title: String }
    struct StackElementID { var generation: Int }
    enum StackAction<State, Action> {
        indirect case element(id: StackElementID, action: Action)
        case popFrom(id: StackElementID)
        case push(id: StackElementID, state: State)
    }
    enum Detail { enum Action { case delegate(Delegate); case titleChanged(String); enum Delegate { case saved(Item) } } }
    enum Path { enum Action { case detail(Detail.Action) } }
    enum AppFeature {
        enum Action {
            case path(StackAction<Int, Path.Action>)
            case slider(Slider)
            case moved(x: Double, y: Double)
            enum Slider { case changed(Double) }
        }
    }
    struct BindingAction { var value: Any }
    enum Form { enum Action { case binding(BindingAction) } }

    /// The type name drops the test class, as TCA's drops a test function's local context.
    private func label(_ action: Any) -> String {
        PerfHUD.label(of: action).replacingOccurrences(of: "TCALabelTests.", with: "")
    }

    func testClientHelperMatchesTheParserOnTheSameEnums() {
        let debugTests: [Any] = [
            DebugTests.Action.action1(true, label: "Blob"),
            DebugTests.Action.action2(true, 1, "Blob"),
            DebugTests.Action.screenA(.row(index: 1, action: .tapped)),
            DebugTests.Action.screenA(.row(index: 1, action: .textChanged(query: "Hi"))),
        ]
        XCTAssertEqual(debugTests.map(label), Self.debugTestsLabels)
        let id = StackElementID(generation: 1)
        let navigation: [Any] = [
            AppFeature.Action.path(.element(id: id, action: .detail(.delegate(.saved(Item(id: 1, title: "a")))))),
            AppFeature.Action.path(.element(id: id, action: .detail(.titleChanged("Groceries")))),
            AppFeature.Action.path(.popFrom(id: id)),
            AppFeature.Action.path(.push(id: StackElementID(generation: 2), state: 7)),
            AppFeature.Action.slider(.changed(0.5)),
            AppFeature.Action.moved(x: 1.5, y: -2),
            Form.Action.binding(BindingAction(value: "Hello")),
        ]
        XCTAssertEqual(navigation.map(label), Self.navigationLabels)
    }

    /// The client sends a label as a tag; TCA's labels hold commas (`index:, action:`), which a
    /// tag list splits on: they must arrive whole through the real socket and aggregator.
    func testClientLabelsWithCommasArriveWholeThroughTheSocket() throws {
        let (client, aggregator, receiver) = try LiveReceiver.open(named: "tca-labels")
        defer { receiver.close() }
        let reduce = client.reducer { (state: inout Int, action: DebugTests.Action) in state += 1 }
        var state = 0
        reduce(&state, .screenA(.row(index: 1, action: .textChanged(query: "Hi"))))
        reduce(&state, .action2(true, 1, "Blob"))
        client.action("a,b")            // outside parentheses a comma would end the tag: replaced
        client.flush()
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while aggregator.snapshot(at: monotonicNanoseconds()).actionsTotal < 3 && monotonicNanoseconds() < deadline { usleep(10_000) }
        let labels = Set(aggregator.actionTotals().map { $0.label.replacingOccurrences(of: "TCALabelTests.", with: "") })
        XCTAssertEqual(labels, ["DebugTests.Action.screenA(.row(index:, action: .textChanged(query:)))",
                                "DebugTests.Action.action2(_:, _:, _:)", "a;b"])
    }

    indirect enum List { case end, node(Int, List) }

    func testClientHelperStopsAtTheDepthLimitOnARecursiveEnum() {
        var list = List.end
        for value in 0..<10_000 { list = .node(value, list) }
        let text = PerfHUD.label(of: list)
        XCTAssertTrue(text.hasPrefix("TCALabelTests.List.node(_:, _: .node("), text)
        XCTAssertLessThan(text.count, 1000)
    }
}
