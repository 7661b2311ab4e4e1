import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud emit action NAME | frame MS | phase NAME`: one event from a shell script.
struct Emit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emit",
        abstract: "Send one event (action NAME, frame MS or phase NAME) to a perfhud event socket.")

    enum Kind: String, ExpressibleByArgument, CaseIterable { case action, frame, phase }

    @Argument(help: "action, frame or phase.")
    var kind: Kind

    @Argument(help: "The action's label, the frame's duration in milliseconds, or the phase's name.")
    var value: String

    @Option(help: "The event socket (default: $PERFHUD_SOCKET).")
    var events: String?

    @Option(name: .customLong("rss-of"),
            help: "phase: send the resident memory of this process with the line (default: the process that ran emit; 0: none).")
    var rssOf: Int32?

    func validate() throws {
        if kind == .frame {
            guard let milliseconds = Double(value), milliseconds.isFinite, milliseconds >= 0 else {
                throw ValidationError("frame wants a duration in milliseconds, such as 16.7; got \(value)")
            }
        }
        if let rssOf, rssOf < 0 {
            throw ValidationError("--rss-of wants " + (Accepted.form(of: "--rss-of", in: "emit") ?? "a PID") + "; got '\(rssOf)'")
        }
        guard !value.isEmpty else { throw ValidationError("\(kind.rawValue) wants a value") }
        guard !value.contains("\n") && !value.contains("|") else {
            throw ValidationError("\(kind.rawValue) names cannot contain newlines or '|'")
        }
    }

    func run() throws {
        guard let path = events ?? getenv("PERFHUD_SOCKET").map({ String(cString: $0) }), !path.isEmpty else {
            throw ValidationError("no event socket: pass --events PATH or run under `perfhud run` (PERFHUD_SOCKET)")
        }
        let line: String
        switch kind {
        // Labels in the metric name, where commas and colons are theirs (`moved(x:, y:)`).
        case .action: line = "perfhud.action.\(value):1|c"
        case .frame: line = "perfhud.frame:\(value)|ms"
        // The program's RSS as it enters the phase (`#rss:`), so perfhud books what the phase then
        // takes on it, however late it reads the line; none where it cannot be read.
        case .phase: line = "perfhud.phase.\(value):1|c" + (Self.residentBytes(of: rssOf ?? getppid()).map { "|#rss:\($0)" } ?? "")
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        let sent = EventReceiver.withAddress(path) { address, length in
            bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, address, length) }
        }
        if sent < 0 {
            throw PerfHUDError(.unavailable, "cannot send to \(path): \(SystemError.current)")
        }
    }

    /// Resident bytes of `pid` (`/proc/PID/statm`, as perfhud reads a target's); nil for 0 or where unreadable.
    static func residentBytes(of pid: Int32) -> UInt64? {
        guard pid > 0, case .success(let file) = KeptOpenFile.open("/proc/\(pid)/statm") else { return nil }
        defer { file.close() }
        return file.readStatm().map { $0.residentPages * UInt64(sysconf(Int32(_SC_PAGESIZE))) }
    }
}
