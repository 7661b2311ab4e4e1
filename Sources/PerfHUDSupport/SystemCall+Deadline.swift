import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

// In a file of its own: the fuzz targets compile SystemCall.swift with swiftc alone, without the
// C shims' module, which ppoll needs (<poll.h> declares it only under _GNU_SOURCE).
extension SystemCall {
    /// ppoll(2) until `deadline` (CLOCK_MONOTONIC nanoseconds; past: returns at once). An
    /// interrupted call returns 0 (nothing ready): the caller looks at the clock and its signals again.
    public static func poll(_ descriptors: inout [pollfd], until deadline: UInt64) -> Result<Int32, SystemError> {
        let now = monotonicNanoseconds()
        let rest = deadline > now ? deadline - now : 0
        var timeout = timespec(tv_sec: Int(rest / 1_000_000_000), tv_nsec: Int(rest % 1_000_000_000))
        let result = descriptors.withUnsafeMutableBufferPointer { slots in
            perfhud_ppoll(slots.baseAddress, UInt(slots.count), &timeout)
        }
        if result >= 0 { return .success(result) }
        let code = errno
        return code == EINTR ? .success(0) : .failure(SystemError(code))
    }
}
