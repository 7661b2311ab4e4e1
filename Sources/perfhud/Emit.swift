import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud emit action NAME | frame MS | phase NAME`: one event from a shell script.
struct Emit: ParsableCommand {
    // The usage is said here: ArgumentParser's would read `[<kind> <value> ...]`, as both are read
    // from the words of the line that are none of the options (`UsageMessage.arguments`).
    static let configuration = CommandConfiguration(
        commandName: "emit",
        abstract: "Send one event (action NAME, frame MS or phase NAME) to a perfhud event socket.",
        usage: "perfhud emit <kind> <value> [--events <events>] [--rss-of <rss-of>]")

    enum Kind: String, CaseIterable, ReadableValue { case action, frame, phase }

    /// The kind and the value, and whatever else of the line is none of the options: refused in validate().
    @Argument(parsing: .allUnrecognized,
              help: ArgumentHelp("action, frame or phase, then the action's label, the frame's duration in milliseconds, or the phase's name.",
                                 valueName: "kind> <value"))
    var words: [String] = []

    @Option(parsing: .unconditional, help: "The event socket (default: $PERFHUD_SOCKET).")
    var events: Given<String>?

    @Option(name: .customLong("rss-of"), parsing: .unconditional,
            help: "phase: send the resident memory of this process with the line (default: the process that ran emit; 0: none).")
    var rssOf: Given<Int32>?

    /// The event, read: what it is, its value, where it goes (nil: $PERFHUD_SOCKET) and whose RSS a phase carries.
    struct Event {
        let kind: Kind, value: String, events: String?, rssOf: Int32?
    }

    func validate() throws {
        _ = try event()
    }

    /// The arguments read; a refusal (`Refusal`) for the first that is missing or does not read.
    func event() throws -> Event {
        let arguments = try UsageMessage.arguments(words, of: Self.self, named: ["<kind>", "<value>"])
        guard let kind = arguments[0] else { throw Refusal.because(Accepted.complaint("<kind>", got: nil, in: "emit")) }
        let read = try Given<Kind>(argument: kind).value("<kind>", in: "emit")
        guard let value = arguments[1], !value.isEmpty else { throw Refusal.because("\(read.rawValue) wants a value") }
        if read == .frame {
            guard let milliseconds = Double(value), milliseconds.isFinite, milliseconds >= 0 else {
                throw Refusal.because("frame wants a duration in milliseconds, such as 16.7; got \(Accepted.quoted(value))")
            }
        }
        guard !value.contains("\n") && !value.contains("|") else {
            throw Refusal.because("\(read.rawValue) names cannot contain newlines or '|'")
        }
        return Event(kind: read, value: value, events: try events?.value("--events") { !$0.isEmpty },
                     rssOf: try rssOf?.value("--rss-of", in: "emit") { $0 >= 0 })
    }

    func run() throws {
        let event = try event()
        guard let path = event.events ?? getenv("PERFHUD_SOCKET").map({ String(cString: $0) }), !path.isEmpty else {
            throw PerfHUDError(.usage, "no event socket: pass --events PATH or run under `perfhud run` (PERFHUD_SOCKET)")
        }
        let line: String
        let value = event.value
        switch event.kind {
        // Labels in the metric name, where commas and colons are theirs (`moved(x:, y:)`).
        case .action: line = "perfhud.action.\(value):1|c"
        case .frame: line = "perfhud.frame:\(value)|ms"
        // The program's RSS as it enters the phase (`#rss:`), so perfhud books what the phase then
        // takes on it, however late it reads the line; none where it cannot be read.
        case .phase: line = "perfhud.phase.\(value):1|c" + (Self.residentBytes(of: event.rssOf ?? getppid()).map { "|#rss:\($0)" } ?? "")
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
