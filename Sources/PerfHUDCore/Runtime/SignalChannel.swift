import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// Signals delivered as readable events on a descriptor (signalfd), so that they arrive on the
/// same loop as ticks, keys and program output, never in an asynchronous handler.
public final class SignalChannel {
    public let descriptor: Int32
    public static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCHLD, SIGTSTP, SIGCONT]

    /// Blocks the handled signals and opens a signalfd for them. SIGPIPE is ignored: a closed
    /// terminal or pipe shows up as a failed write instead.
    public init() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in Self.handled { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        Glibc.signal(SIGPIPE, SIG_IGN)
        descriptor = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
    }

    deinit { close(descriptor) }

    /// The signals waiting, in arrival order.
    public func drain() -> [Int32] {
        var result: [Int32] = []
        var info = signalfd_siginfo()
        while read(descriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            result.append(Int32(info.ssi_signo))
        }
        return result
    }
}

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
