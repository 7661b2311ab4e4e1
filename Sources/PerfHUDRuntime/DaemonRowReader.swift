#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// `perfhud status --target NAME`: the rows a running daemon makes of its target NAME, read from
/// the target's feed beside its event socket (`NAME.feed`) instead of sampling the target again.
/// The feed sends the last row as a reader connects, then one at each of the daemon's full reads.
public final class DaemonRowReader {
    public let path: String
    private let descriptor: Int32
    private var pending: [UInt8] = []

    /// Where a daemon's sockets are when none is given: root's daemon's, then this user's.
    static func directories() -> [String] {
        var candidates = ["/run/perfhud"]
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") { candidates.append(runtime + "/perfhud") }
        candidates.append("/tmp/perfhud-\(geteuid())")
        return candidates
    }

    /// - Parameter directory: the daemon's `--events` directory; nil: where a daemon puts them by default.
    /// - Throws: `PerfHUDError` `.unavailable` (69) when no daemon feeds `name` there.
    public init(target name: String, directory: String?) throws {
        let file = EventReceiver.fileName(label: name)
        let candidates = (directory.map { [$0] } ?? Self.directories()).map { $0 + "/" + file + ".feed" }
        for candidate in candidates {
            let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else { continue }
            if EventReceiver.withAddress(candidate, { SystemCall.connect(socket, to: $0, length: $1) }) == .success(true) {
                path = candidate
                descriptor = socket
                return
            }
            close(socket)
        }
        throw PerfHUDError(.unavailable, "no daemon feeds a target named \(FailCondition.quoted(name)) (looked for \(candidates.joined(separator: ", "))): is `perfhud daemon` running, and is NAME its target's label?")
    }

    deinit { close(descriptor) }

    /// The next line of the feed, waiting at most `timeoutMilliseconds` (-1: as long as it takes);
    /// nil when the daemon went away or nothing came in time.
    public func nextLine(timeoutMilliseconds: Int32) -> String? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var slot = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard case .success(let ready) = SystemCall.poll(&slot, timeoutMilliseconds: timeoutMilliseconds), ready > 0 else { return nil }
            guard case .success(let count) = SystemCall.read(descriptor, into: &chunk), count > 0 else { return nil }
            pending += chunk[..<count]
            // A row is ~3 KB; a line without an end past 1 MiB is no row.
            if pending.count > 1 << 20 { return nil }
        }
    }
}
