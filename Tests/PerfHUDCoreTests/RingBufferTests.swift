import XCTest
@testable import PerfHUDCore

/// Exhaustive small-state tests, as swift-collections tests its deques: every capacity × start
/// slot × number of appends, checked against a plain array holding the last `capacity` values.
final class RingBufferTests: XCTestCase {
    func testEveryCapacityStartAndCount() {
        for capacity in 1...8 {
            for start in 0..<capacity {
                for appends in 0...(2 * capacity + 1) {
                    var ring = RingBuffer(capacity: capacity, filler: -1, startingAt: start)
                    var model: [Int] = []
                    for value in 0..<appends {
                        ring.append(value)
                        model.append(value)
                        if model.count > capacity { model.removeFirst() }
                        XCTAssertEqual(ring.count, model.count)
                        XCTAssertEqual(ring.elements, model, "capacity \(capacity) start \(start) after \(value + 1) appends")
                        XCTAssertEqual(ring.first, model.first)
                        XCTAssertEqual(ring.last, model.last)
                    }
                    ring.removeAll()
                    XCTAssertTrue(ring.isEmpty)
                    ring.append(99)
                    XCTAssertEqual(ring.elements, [99])
                }
            }
        }
    }

    func testCapacityNeverGrows() {
        var ring = RingBuffer(capacity: 3, filler: 0)
        for value in 0..<1000 { ring.append(value) }
        XCTAssertEqual(ring.capacity, 3)
        XCTAssertEqual(ring.elements, [997, 998, 999])
    }
}
