import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// Signals delivered as readable events on a descriptor (signalfd), so that they arrive on the
/// same loop as ticks, keys and program output, never in an asynchronous handler.
public final class SignalChannel {
    public let descriptor: Int32
    public static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGCHLD, SIGTSTP, SIGCONT]
    /// Those perfhud leaves alone when its parent started it ignoring them (`nohup`'s SIGHUP, the
    /// SIGINT and SIGQUIT of a script's background job): as any program, it neither acts on them
    /// nor forwards them to the program it runs. Blocked, they would be read all the same: the
    /// kernel queues a blocked signal even when it is ignored.
    public static let keptIgnored: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    /// Blocks the handled signals and opens a signalfd for them. SIGPIPE is ignored: a closed
    /// terminal or pipe shows up as a failed write instead. A SIGCHLD ignored at start is set back
    /// to its default: ignored, the kernel would reap perfhud's children before it could wait.
    public init() {
        var set = sigset_t()
        sigemptyset(&set)
        if perfhud_signal_is_ignored(SIGCHLD) != 0 { Glibc.signal(SIGCHLD, SIG_DFL) }
        for signal in Self.handled where !(Self.keptIgnored.contains(signal) && perfhud_signal_is_ignored(signal) != 0) {
            sigaddset(&set, signal)
        }
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

extension SignalChannel {
    /// Calls `body` with spawn attributes that give a child what a shell gives the programs it
    /// starts: no signal blocked, and the ones perfhud handles or ignores (SIGPIPE) at their defaults.
    public static func withChildAttributes<T>(_ body: (inout posix_spawnattr_t) -> T) -> T {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in handled + [SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return body(&attributes)
    }
}
