import XCTest
@testable import PerfHUDSupport

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

    /// The room grows with the elements (a daemon's many targets keep their history's room
    /// unreserved until they fill it), and stops growing at `capacity`: once full, appends do not
    /// allocate.
    func testRoomGrowsUpToCapacityThenStays() {
        for capacity in [1, 15, 16, 17, 33, 100, 600] {
            var ring = RingBuffer(capacity: capacity, filler: 0)
            var model: [Int] = []
            for value in 0..<(3 * capacity + 5) {
                ring.append(value)
                model.append(value)
                if model.count > capacity { model.removeFirst() }
                XCTAssertLessThanOrEqual(ring.storage.count, capacity)
                if value < 8 { XCTAssertLessThan(ring.storage.capacity, 64, "room for the first few only") }
            }
            XCTAssertEqual(ring.elements, model, "capacity \(capacity)")
            let room = ring.storage.capacity
            let before = ring.storage.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            for value in 0..<capacity { ring.append(value) }
            XCTAssertEqual(ring.storage.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }, before, "reallocated when full")
            XCTAssertEqual(ring.storage.capacity, room)
        }
    }

    func testCapacityNeverGrows() {
        var ring = RingBuffer(capacity: 3, filler: 0)
        for value in 0..<1000 { ring.append(value) }
        XCTAssertEqual(ring.capacity, 3)
        XCTAssertEqual(ring.elements, [997, 998, 999])
    }
}
