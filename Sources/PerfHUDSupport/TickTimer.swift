import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// A periodic timer as a descriptor (timerfd on CLOCK_MONOTONIC): no drift, and a read tells how
/// many periods passed, so a missed tick is seen as such.
public final class TickTimer {
    public let descriptor: Int32

    public init(intervalNanoseconds: UInt64) {
        descriptor = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        let period = timespec(tv_sec: Int(intervalNanoseconds / 1_000_000_000), tv_nsec: Int(intervalNanoseconds % 1_000_000_000))
        var specification = itimerspec(it_interval: period, it_value: period)
        timerfd_settime(descriptor, 0, &specification, nil)
    }

    deinit { close(descriptor) }

    /// Periods elapsed since the last call (0 if none).
    public func expirations() -> UInt64 {
        var count: UInt64 = 0
        return SystemCall.read(descriptor, record: &count) ? count : 0
    }
}

/// The ticks of a session as deadlines on CLOCK_MONOTONIC, for a loop that waits in `ppoll`
/// anyway: the wait's timeout is the next tick, so a tick costs that one system call where a
/// timerfd in the poll set cost the poll and a read of the timer (measured: Benchmarks/README.md).
/// Like the timerfd, no drift (deadlines are start + k × interval) and a late wake-up is one tick
/// that counts the periods it missed.
public struct TickSchedule {
    public let intervalNanoseconds: UInt64
    /// The next tick's time.
    public private(set) var deadline: UInt64

    public init(intervalNanoseconds: UInt64, now: UInt64 = monotonicNanoseconds()) {
        self.intervalNanoseconds = max(intervalNanoseconds, 1)
        deadline = now &+ self.intervalNanoseconds
    }

    /// Periods elapsed by `now` since the last call (0 if the next tick is not due), the deadline
    /// moved past `now`.
    public mutating func expirations(now: UInt64 = monotonicNanoseconds()) -> UInt64 {
        guard now >= deadline else { return 0 }
        let periods = (now - deadline) / intervalNanoseconds + 1
        deadline &+= periods &* intervalNanoseconds
        return periods
    }
}

