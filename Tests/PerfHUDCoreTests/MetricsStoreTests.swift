import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDStore

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

    func testTheFirstSampleTakesItsWindowFromTheProcesssStart() {
        var store = MetricsStore(pid: 1, capacity: 100, startNanoseconds: 0, onlineCPUs: 4, ticksPerSecond: 100)
        var first = sample(at: 10, cpu: 2.5, user: 200, system: 50, rss: 1)
        first.processStartNanoseconds = 5_000_000_000
        XCTAssertEqual(store.record(first).cpuPercent!, 50, accuracy: 1e-6, "2.5 s of CPU in the 5 s it has lived")
        let second = store.record(sample(at: 10.1, cpu: 2.6, user: 210, system: 50, rss: 1))
        XCTAssertEqual(second.cpuPercent!, 100, accuracy: 1e-6, "then the tick's window, as before")
    }

    func testTrendIsBytesPerSecondOverTenSeconds() {
        var store = MetricsStore(pid: 1, capacity: 1000, startNanoseconds: 0, onlineCPUs: 1, ticksPerSecond: 100)
        var report: TargetFigures?
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
