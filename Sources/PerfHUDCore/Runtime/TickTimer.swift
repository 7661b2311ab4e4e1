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
        return read(descriptor, &count, 8) == 8 ? count : 0
    }
}
