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
        while SystemCall.read(descriptor, record: &info) {
            result.append(Int32(info.ssi_signo))
        }
        return result
    }
}
