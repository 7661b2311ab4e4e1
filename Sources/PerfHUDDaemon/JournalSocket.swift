import PerfHUDSupport
import PerfHUDEvents
#if canImport(Glibc)
import Glibc
#endif

/// journald's native protocol (systemd.journal-fields(7), "Native Journal Protocol"): one
/// datagram of `FIELD=value` lines per entry to /run/systemd/journal/socket, so entries carry
/// structured fields (`PERFHUD_TARGET_PID=…`) that `journalctl FIELD=value` selects.
///
/// Written by hand rather than with libsystemd's `sd_journal_send`, which libproc2 already links:
/// that one sends on a blocking socket, and a journald that stalls would stall sampling with it.
/// Here a send is `MSG_DONTWAIT`: an entry that does not fit is dropped (the caller counts it).
public final class JournalSocket {
    static let path = "/run/systemd/journal/socket"
    private let socket: Int32

    /// nil when the journal's socket cannot be made (then the caller writes to stderr).
    public init?() {
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
    }

    deinit { close(socket) }

    public enum Outcome { case sent, full, unavailable }

    /// Sends one entry. `full`: journald is not keeping up (drop it); `unavailable`: there is no
    /// journal to send to (use another destination).
    public func send(_ fields: [(name: String, value: String)]) -> Outcome {
        let entry = Self.encode(fields)
        let result = EventReceiver.withAddress(Self.path) { target, length in
            entry.withUnsafeBytes { bytes in
                retryingInterrupts {
                    sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), target, length)
                }
            }
        }
        switch result {
        case .success: return .sent
        case .failure(let error) where error.code == EAGAIN || error.code == ENOBUFS: return .full
        case .failure: return .unavailable
        }
    }

    /// `NAME=value\n`, or for a value with a newline the binary form: `NAME\n`, the length as a
    /// little-endian 64-bit number, the value, `\n`.
    static func encode(_ fields: [(name: String, value: String)]) -> [UInt8] {
        var entry: [UInt8] = []
        for (name, value) in fields {
            let bytes = Array(value.utf8)
            entry += Array(name.utf8)
            if bytes.contains(10) {
                entry.append(10)
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { entry += $0 }
            } else {
                entry.append(UInt8(ascii: "="))
            }
            entry += bytes
            entry.append(10)
        }
        return entry
    }
}
