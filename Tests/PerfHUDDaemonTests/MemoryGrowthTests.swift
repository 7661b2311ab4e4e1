import XCTest
@testable import PerfHUDDaemon
import PerfHUDCore

final class MemoryGrowthTests: XCTestCase {
    private func series(_ rss: (Double) -> Double, minutes: Double = 10) -> TimeSeries {
        var series = TimeSeries(capacity: 10_000)
        var time = 0.0
        while time <= minutes * 60 {
            series.append(time: time, cpuPercent: nil, residentBytes: rss(time), proportionalBytes: nil, userTicks: nil, systemTicks: nil)
            time += 1
        }
        return series
    }

    func testASteadySlopeIsGrowth() {
        let leak = series { 200e6 + $0 * 200_000 }          // +12 MB a minute
        let growth = MemoryGrowth.steadyGrowth(in: leak)
        XCTAssertNotNil(growth)
        XCTAssertEqual(growth!.increase, 300 * 200_000, accuracy: 1)
    }

    func testASpikeOrAPlateauIsNot() {
        XCTAssertNil(MemoryGrowth.steadyGrowth(in: series { $0 > 590 ? 400e6 : 200e6 }), "a spike of seconds")
        XCTAssertNil(MemoryGrowth.steadyGrowth(in: series { $0 < 200 ? 200e6 + $0 * 1e6 : 400e6 }), "grew, then stopped")
        XCTAssertNil(MemoryGrowth.steadyGrowth(in: series { _ in 300e6 }))
        XCTAssertNil(MemoryGrowth.steadyGrowth(in: series({ 200e6 + $0 * 1e6 }, minutes: 4)), "too little history")
        XCTAssertNil(MemoryGrowth.steadyGrowth(in: series { 2e9 + $0 * 100_000 }), "30 MB on 2 GB is under 10 %")
    }
}
