import XCTest
@testable import PerfHUDCore

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
