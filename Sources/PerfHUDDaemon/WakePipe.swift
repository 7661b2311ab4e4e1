import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// The sampling loop's wake-up pipe: `stop()` and the signal handlers (`StopSignals`) write a
/// byte to it, the loop polls its other end. 1 asks to stop, 2 (SIGHUP) to reload, 3 (a scrape)
/// to read every figure of every target now.
///
/// A pipe rather than a flag because the loop sleeps in poll(2): only a descriptor wakes it at once.
/// Both ends are non-blocking: a signal handler writes to it and must never block there.
final class WakePipe {
    /// What the wake-up asked for, the bytes read at once.
    struct Requests {
        var stop = false
        var reload = false
        var scrape = false
        /// Every writer has gone (end of file): the loop cannot be woken any more.
        var closed = false
    }

    private let readEnd: Int32
    /// What a stop signal's handler writes a byte to.
    let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// What the loop polls.
    var descriptor: Int32 { readEnd }

    /// Asks the loop to stop (1) or reload (2); a full pipe already has a request waiting.
    func send(_ request: UInt8) {
        Self.send(request, to: writeEnd)
    }

    /// The same from a signal handler, which can reach only a global: write(2) is async-signal-safe.
    static func send(_ request: UInt8, to descriptor: Int32) {
        var byte = request
        _ = withUnsafeBytes(of: &byte) { SystemCall.write(descriptor, $0) }
    }

    /// The requests waiting (up to 16 bytes of them: a burst of signals asks for no more).
    func receive() -> Requests {
        var bytes = [UInt8](repeating: 0, count: 16)
        var requests = Requests()
        switch SystemCall.read(readEnd, into: &bytes) {
        case .success(0): requests.closed = true
        case .success(let count):
            requests.stop = bytes.prefix(count).contains(1)
            requests.reload = bytes.prefix(count).contains(2)
            requests.scrape = bytes.prefix(count).contains(3)
        case .failure: break   // EAGAIN: woken for nothing
        }
        return requests
    }
}
