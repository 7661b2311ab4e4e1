#if canImport(Glibc)
import Glibc
#endif

/// Log lines for the journal: under systemd (JOURNAL_STREAM set) each line carries its syslog
/// priority as a `<N>` prefix, which journald reads; elsewhere plain `perfhud: level: …` lines.
/// Written by hand: three levels and one destination do not need swift-log's machinery.
public struct DaemonLog {
    public enum Level: Int32 { case error = 3, warning = 4, notice = 5, info = 6 }
    private let journal: Bool

    public init() { journal = getenv("JOURNAL_STREAM") != nil }

    public func log(_ level: Level, _ message: String) {
        let text = TerminalText.escaped(message, maxLength: 2000)
        let line: String
        if journal {
            line = "<\(level.rawValue)>" + text + "\n"
        } else {
            let name: String
            switch level {
            case .error: name = "error"
            case .warning: name = "warning"
            case .notice: name = "notice"
            case .info: name = "info"
            }
            line = "perfhud: \(name): " + text + "\n"
        }
        _ = line.withCString { fputs($0, stderr) }
        fflush(stderr)
    }

    public func info(_ message: String) { log(.info, message) }
    public func notice(_ message: String) { log(.notice, message) }
    public func warning(_ message: String) { log(.warning, message) }
    public func error(_ message: String) { log(.error, message) }
}

/// systemd's notification protocol (sd_notify(3)): datagrams to $NOTIFY_SOCKET.
/// Written by hand: it is one sendto, and libsystemd would be a C dependency for it.
public final class SystemdNotifier {
    private let path: String?
    private let socket: Int32
    /// Half of $WATCHDOG_USEC, when systemd asks for watchdog pings.
    public let watchdogInterval: UInt64?

    public init() {
        path = getenv("NOTIFY_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        socket = path == nil ? -1 : Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = UInt64(text), microseconds > 0 {
            // WATCHDOG_PID, when set, must name us.
            if let owner = getenv("WATCHDOG_PID").map({ String(cString: $0) }), Int32(owner) != getpid() {
                watchdogInterval = nil
            } else {
                watchdogInterval = microseconds * 1000 / 2
            }
        } else {
            watchdogInterval = nil
        }
    }

    deinit { if socket >= 0 { close(socket) } }

    public var isEnabled: Bool { path != nil }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…").
    public func notify(_ state: String) {
        guard let path, socket >= 0 else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }   // an abstract socket: a leading NUL, no terminator
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                message.withUnsafeBytes { sendto(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
    }
}
