import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling

/// A session's ticks are deadlines its wait ends at (`TickSchedule`): as with the timerfd they
/// replace, a tick is due at start + k × interval whatever time the tick itself took (no drift),
/// and a late wake-up is one tick that knows how many periods passed.
final class TickScheduleTests: XCTestCase {
    func testDeadlinesDoNotDriftAndALateWakeUpCountsTheMissedPeriods() {
        let ms: UInt64 = 1_000_000
        var ticks = TickSchedule(intervalNanoseconds: 10 * ms, now: 1_000 * ms)
        XCTAssertEqual(ticks.deadline, 1_010 * ms)
        XCTAssertEqual(ticks.expirations(now: 1_009 * ms), 0, "not due yet")
        XCTAssertEqual(ticks.expirations(now: 1_013 * ms), 1, "woken 3 ms late")
        XCTAssertEqual(ticks.deadline, 1_020 * ms, "the next deadline keeps the period, not the late wake-up")
        XCTAssertEqual(ticks.expirations(now: 1_020 * ms), 1, "exactly on time")
        XCTAssertEqual(ticks.expirations(now: 1_055 * ms), 3, "1030, 1040, 1050 passed")
        XCTAssertEqual(ticks.deadline, 1_060 * ms)
        XCTAssertEqual(ticks.expirations(now: 1_055 * ms), 0, "asked again at once: nothing more")
    }
}

/// When the reads made less often than every tick are due (`SampleCadence`): a row of its own at
/// ticks of a second or more, whatever the jitter; the tick nearest a second at shorter ones.
final class SampleCadenceTests: XCTestCase {
    let ms: UInt64 = 1_000_000

    /// Ticks `interval` apart, each `jitter(k)` off: which of them read the once-a-second files.
    func reads(interval: UInt64, count: Int, jitter: (Int) -> Int64) -> [Int] {
        var lastRead: UInt64 = 0, lastSample: UInt64 = 0, read: [Int] = []
        for k in 1...count {
            let now = UInt64(Int64(10_000 * ms) + Int64(k) * Int64(interval) + jitter(k))
            let cadence = SampleCadence(tickNanoseconds: lastSample == 0 ? 0 : now - lastSample)
            lastSample = now
            if cadence.isDue(lastRead: lastRead, every: 1_000 * ms, now: now) { lastRead = now; read.append(k) }
        }
        return read
    }

    func testAtASecondTickEveryRowReadsEvenWhenTheTicksJitter() {
        // A millisecond early or late, by turns: "a second or more since" read every other row.
        XCTAssertEqual(reads(interval: 1_000 * ms, count: 10, jitter: { $0 % 2 == 0 ? -Int64(ms) : Int64(ms) }), Array(1...10))
        XCTAssertEqual(reads(interval: 2_000 * ms, count: 5, jitter: { _ in 0 }), Array(1...5))
    }

    func testAtShorterTicksTheReadIsAtTheTickNearestASecond() {
        // 100 ms ticks, some a few ms early: every tenth tick reads, not every eleventh.
        let read = reads(interval: 100 * ms, count: 41, jitter: { $0 % 3 == 0 ? -Int64(3 * ms) : 0 })
        XCTAssertEqual(read, [1, 11, 21, 31, 41])
        // 300 ms ticks: 0.9 s is nearer a second than 1.2 s.
        XCTAssertEqual(reads(interval: 300 * ms, count: 10, jitter: { _ in 0 }), [1, 4, 7, 10])
    }

    func testAReadDueAtAGivenTime() {
        let cadence = SampleCadence(tickNanoseconds: 100 * ms)
        XCTAssertTrue(cadence.isDue(at: 1_040 * ms, now: 1_000 * ms), "due within half a tick")
        XCTAssertFalse(cadence.isDue(at: 1_060 * ms, now: 1_000 * ms), "the next tick is nearer")
    }
}
