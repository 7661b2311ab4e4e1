import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol (sd_notify(3)): datagrams to $NOTIFY_SOCKET.
///
/// Written by hand rather than with libsystemd's `sd_notify`, which libproc2 already links: that
/// one sends on a blocking socket, so a notify socket nobody reads (its queue holds
/// `net.unix.max_dgram_qlen` datagrams, 10 on some machines) would stop the sampling loop in
/// `sendmsg` — metrics gone stale, SIGTERM unanswered. Here every send is `MSG_DONTWAIT`; what
/// cannot be sent is dropped and counted (`dropped`), and the next ping tries again.
///
/// The variables are read once and removed from the environment (as `sd_notify`'s
/// `unset_environment` does), so no child process inherits them and speaks for us.
public final class SystemdNotifier: @unchecked Sendable {
    private let address: sockaddr_un?
    private let addressLength: socklen_t
    private let socket: Int32
    private let counter = LockedCounter()
    /// Half of $WATCHDOG_USEC, when systemd asks for watchdog pings.
    public let watchdogInterval: UInt64?

    /// Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID, then unsets them.
    public init() {
        let path = getenv("NOTIFY_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        var interval: UInt64? = nil
        if let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = UInt64(text), microseconds > 0 {
            // WATCHDOG_PID, when set, must name us.
            let owner = getenv("WATCHDOG_PID").map { String(cString: $0) }
            if owner == nil || Int32(owner!) == getpid() { interval = microseconds * 1000 / 2 }
        }
        watchdogInterval = interval
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(name) }

        var made = sockaddr_un()
        made.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array((path ?? "").utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }   // an abstract socket: a leading NUL, no terminator
        if let _ = path, bytes.count < MemoryLayout.size(ofValue: made.sun_path) {
            withUnsafeMutableBytes(of: &made.sun_path) { raw in
                raw.copyBytes(from: bytes)
                if !abstract { raw[bytes.count] = 0 }
            }
            address = made
            addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        } else {
            address = nil
            addressLength = 0
            socket = -1
        }
    }

    deinit { if socket >= 0 { close(socket) } }

    public var isEnabled: Bool { address != nil }

    /// Notifications that could not be sent (the socket's queue was full, or it was gone).
    public var dropped: Int { counter.value }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…") without waiting. Returns whether it was sent.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard var address, socket >= 0 else { return false }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                message.withUnsafeBytes { bytes in
                    retryingInterrupts {
                        sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), target, addressLength)
                    }
                }
            }
        }
        if case .failure = sent { counter.increment(); return false }
        return true
    }
}
