import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's log lines, for the journal or a terminal; never waits for whoever reads them.
///
/// - Under systemd with stderr connected to the journal (`JOURNAL_STREAM` names stderr's device
///   and inode), entries go to journald's native socket with their priority and structured fields
///   (`PERFHUD_TARGET`, `PERFHUD_TARGET_PID`, `PERFHUD_UNIT`): `journalctl PERFHUD_TARGET_PID=…`.
/// - With `JOURNAL_STREAM` set otherwise, or the native socket unusable: `<N>` priority prefixes on
///   stderr, which journald reads from a stream.
/// - Elsewhere: plain `perfhud: level: …` lines on stderr.
/// What cannot be written at once is dropped and counted (`dropped`): a stalled journal or a pipe
/// nobody drains must not stop the sampling. Written by hand: three levels and these destinations
/// do not need swift-log's machinery.
public final class DaemonLog: @unchecked Sendable {
    public enum Level: Int32 { case error = 3, warning = 4, notice = 5, info = 6 }

    private let prefixed: Bool
    private var journal: JournalSocket?
    private let stream = NonBlockingWriter(descriptor: 2)
    private var journalDrops = 0
    private let mutex = Mutex()
    private var context: [(name: String, value: String)] = []

    public init() {
        let variable = getenv("JOURNAL_STREAM").map { String(cString: $0) }
        prefixed = variable != nil
        if let variable, Self.describesStandardError(variable) { journal = JournalSocket() }
    }

    /// Lines that could not be written at once and were dropped.
    public var dropped: Int { stream.dropped + mutex.withLock { journalDrops } }

    /// Fields added to every later entry (the target's PID, the unit): journal only.
    public func setContext(_ fields: [(name: String, value: String)]) {
        mutex.withLock { context = fields }
    }

    /// - Parameter fields: the structured fields of this entry's target, in place of the context
    ///   (a daemon of several targets: `PERFHUD_TARGET` says which one a line is about).
    public func log(_ level: Level, _ message: String, fields: [(name: String, value: String)]? = nil) {
        let text = TerminalText.escaped(message, maxLength: 2000)
        let handled: Bool = mutex.withLock {
            guard let socket = journal else { return false }
            let fields = [("PRIORITY", String(level.rawValue)), ("SYSLOG_IDENTIFIER", "perfhud"), ("MESSAGE", text)] + (fields ?? context)
            switch socket.send(fields) {
            case .sent: return true
            case .full: journalDrops += 1; return true
            case .unavailable: journal = nil; return false   // the journal went away: stderr from now on
            }
        }
        if handled { return }
        let line: String
        if prefixed {
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
        stream.write(Array(line.utf8))
    }

    public func info(_ message: String) { log(.info, message) }
    public func notice(_ message: String) { log(.notice, message) }
    public func warning(_ message: String) { log(.warning, message) }
    public func error(_ message: String) { log(.error, message) }

    /// `JOURNAL_STREAM` is `DEVICE:INODE` of the journal stream systemd connected: it speaks for
    /// stderr only when stderr is still that stream (not redirected by a wrapper script).
    static func describesStandardError(_ variable: String) -> Bool {
        let parts = variable.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
