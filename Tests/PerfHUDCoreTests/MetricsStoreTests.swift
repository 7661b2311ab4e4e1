import XCTest
@testable import PerfHUDCore

final class MetricsStoreTests: XCTestCase {
    private func sample(at seconds: Double, cpu: Double, user: UInt64, system: UInt64, rss: UInt64, alive: Bool = true) -> Sample {
        Sample(monotonicNanoseconds: UInt64(seconds * 1e9), wallSeconds: seconds, alive: alive,
               cpuNanoseconds: UInt64(cpu * 1e9), userTicks: user, systemTicks: system, residentBytes: rss,
               virtualBytes: rss * 2, proportionalBytes: nil, threads: 1)
    }

    func testCPUPercentIsCPUTimeOverWallTimeOfTheTick() {
        var store = MetricsStore(pid: 1, capacity: 100, startNanoseconds: 0, onlineCPUs: 4, ticksPerSecond: 100)
        XCTAssertNil(store.record(sample(at: 1, cpu: 0, user: 0, system: 0, rss: 1)).cpuPercent,
                     "one sample has no window yet")
        let report = store.record(sample(at: 1.1, cpu: 0.15, user: 12, system: 3, rss: 1))
        XCTAssertEqual(report.cpuPercent!, 150, accuracy: 1e-6, "0.15 s of CPU in 0.1 s is one and a half cores")
        XCTAssertEqual(report.cpuMachinePercent!, 37.5, accuracy: 1e-6)
        XCTAssertEqual(report.cpuUserPercent!, 120, accuracy: 1e-6, "split 12:3 by stat ticks")
        XCTAssertEqual(report.cpuSystemPercent!, 30, accuracy: 1e-6)
        XCTAssertNil(report.proportionalBytes, "PSS unavailable stays nil, never 0")
    }

    func testTrendIsBytesPerSecondOverTenSeconds() {
        var store = MetricsStore(pid: 1, capacity: 1000, startNanoseconds: 0, onlineCPUs: 1, ticksPerSecond: 100)
        var report: Report?
        for step in 0...200 {
            let time = Double(step) / 10
            report = store.record(sample(at: time, cpu: time / 2, user: 0, system: 0, rss: UInt64(1_000_000 + step * 100_000)))
        }
        XCTAssertEqual(report!.residentTrendBytesPerSecond!, 1_000_000, accuracy: 1)
    }

    func testAnEndedTargetIsAGapNotAZero() {
        var store = MetricsStore(pid: 1, capacity: 10, startNanoseconds: 0, onlineCPUs: 1, ticksPerSecond: 100)
        store.record(sample(at: 0, cpu: 0, user: 0, system: 0, rss: 100))
        let report = store.record(sample(at: 0.1, cpu: 1, user: 0, system: 0, rss: 0, alive: false))
        XCTAssertNil(report.cpuPercent)
        XCTAssertNil(report.residentBytes)
        XCTAssertTrue(store.series.value(.residentBytes, at: 1).isNaN)
    }
}

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
