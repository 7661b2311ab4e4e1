import XCTest
import Dispatch
@testable import PerfHUDClient
@testable import PerfHUDSupport
@testable import PerfHUDPipeline
#if canImport(Glibc)
import Glibc
#endif

enum Feature {
    enum Action {
        case slider(SliderAction)
        case buttonTapped
        case textChanged(String)
        case moved(x: Int, y: Int)
        case pair(Int, Bool)
        enum SliderAction { case changed(Double), released }
    }
}

final class ClientTests: XCTestCase {
    func testLabelsNameTheCasePathAndDropAssociatedValues() {
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.slider(.changed(0.5))), "Feature.Action.slider(.changed)")
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.slider(.released)), "Feature.Action.slider(.released)")
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.buttonTapped), "Feature.Action.buttonTapped")
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.textChanged("secret")), "Feature.Action.textChanged")
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.moved(x: 1, y: 2)), "Feature.Action.moved(x:, y:)")
        XCTAssertEqual(PerfHUD.label(of: Feature.Action.pair(1, true)), "Feature.Action.pair(_:, _:)")
    }

    func testWithoutASocketEveryCallIsANoOp() {
        let client = PerfHUD(socketPath: nil)
        XCTAssertFalse(client.isEnabled)
        client.action("A"); client.frame(milliseconds: 16); client.frameTick(); client.phase("P"); client.flush()
        XCTAssertEqual(client.sentLines, 0)
        XCTAssertEqual(client.droppedLines, 0)
    }

    /// Many threads, one socket: every line arrives (the receiver keeps up at this rate), and the
    /// reducer helper reports each action's label.
    func testActionsFromManyThreadsArriveWithoutLoss() throws {
        let (client, aggregator, receiver) = try LiveReceiver.open(named: "client")
        defer { receiver.close() }
        // The returned reducer is thread-safe (what this test checks), though not typed @Sendable: a program's own reducer need not be.
        nonisolated(unsafe) let reduce = client.reducer { (state: inout Int, action: Feature.Action) -> Int in state += 1; return state }
        let threads = 4, perThread = 5000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var state = 0
            for index in 0..<perThread {
                _ = reduce(&state, index % 2 == 0 ? .buttonTapped : .slider(.changed(Double(index))))
                if index % 100 == 0 { usleep(1000) }   // a program's pace, not a flood
            }
        }
        client.frame(milliseconds: 16.7)
        client.phase("Done")
        client.flush()
        // Until the last datagram (the frame and the phase, sent after every action) is in: the
        // actions alone being counted left the test reading the snapshot before it (a failure).
        let deadline = monotonicNanoseconds() + 5_000_000_000
        func arrived() -> Bool {
            let snapshot = aggregator.snapshot(at: monotonicNanoseconds())
            return snapshot.actionsTotal >= Double(threads * perThread) && snapshot.phase == "Done"
        }
        while !arrived() && monotonicNanoseconds() < deadline { usleep(10_000) }
        let totals = Dictionary(uniqueKeysWithValues: aggregator.actionTotals().map { ($0.label, $0.total) })
        XCTAssertEqual(client.droppedLines, 0)
        XCTAssertEqual(totals["Feature.Action.buttonTapped"], Double(threads * perThread / 2))
        XCTAssertEqual(totals["Feature.Action.slider(.changed)"], Double(threads * perThread / 2))
        let snapshot = aggregator.snapshot(at: monotonicNanoseconds())
        XCTAssertEqual(snapshot.framesTotal, 1)
        XCTAssertEqual(snapshot.phase, "Done")
        XCTAssertEqual(snapshot.malformed, 0)
    }
}
