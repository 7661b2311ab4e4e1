import XCTest
@testable import PerfHUDStore

final class TimeSeriesTests: XCTestCase {
    private func series(_ values: [(Double, Double?)], capacity: Int = 100) -> TimeSeries {
        var series = TimeSeries(capacity: capacity)
        for (time, value) in values {
            series.append(time: time, cpuPercent: nil, residentBytes: value, proportionalBytes: nil, userTicks: nil, systemTicks: nil)
        }
        return series
    }

    func testDownsamplingKeepsASingleSampleSpike() {
        var values: [(Double, Double?)] = (0..<100).map { (Double($0) / 10, 100) }
        values[57].1 = 5000
        let columns = series(values).minMax(.residentBytes, width: 5, from: 0, to: 10)
        XCTAssertEqual(columns.compactMap { $0?.upperBound }.max(), 5000)
        XCTAssertEqual(columns[2], 100...5000)
        XCTAssertEqual(columns[0], 100...100)
    }

    func testMissingSamplesAreGapsNotZeros() {
        let values: [(Double, Double?)] = [(0, 10), (1, nil), (2, nil), (3, 40)]
        let columns = series(values).minMax(.residentBytes, width: 4, from: 0, to: 4)
        XCTAssertEqual(columns[0], 10...10)
        XCTAssertNil(columns[1])
        XCTAssertNil(columns[2])
        XCTAssertEqual(columns[3], 40...40)
    }

    func testBridgingFillsColumnsBetweenConsecutiveTicksOnly() {
        let values: [(Double, Double?)] = [(0, 10), (0.25, 20), (3, 30)]
        let columns = series(values).minMax(.residentBytes, width: 40, from: 0, to: 4, bridging: 0.3)
        XCTAssertEqual(columns[1], 10...20, "columns between ticks 0.25 s apart are bridged")
        XCTAssertNil(columns[10], "a 2.75 s hole stays a gap")
    }

    func testWindowAfterTheRingWrapped() {
        let values: [(Double, Double?)] = (0..<50).map { (Double($0), Double($0)) }
        let ring = series(values, capacity: 10)    // keeps times 40…49
        XCTAssertEqual(ring.count, 10)
        let columns = ring.minMax(.residentBytes, width: 1, from: 0, to: 100)
        XCTAssertEqual(columns[0], 40...49)
        XCTAssertEqual(ring.index(atOrBefore: 45), 5)
        XCTAssertNil(ring.index(atOrBefore: 39))
    }
}
