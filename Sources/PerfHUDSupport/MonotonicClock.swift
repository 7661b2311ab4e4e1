#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds of CLOCK_MONOTONIC: immune to wall-clock steps, used for every rate.
@inlinable @inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Seconds since the Unix epoch (CLOCK_REALTIME), for timestamps people read.
@inlinable @inline(__always)
public func wallClockSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), nanoseconds: what a read
/// costs perfhud, whatever else the machine runs meanwhile.
@inlinable @inline(__always)
public func threadCPUNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
