/// perfhud's exit statuses (sysexits.h, as docs/exit-status.md lists them), and a launched program's own.
public struct ExitStatus: RawRepresentable, Equatable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitStatus(rawValue: 0)
    /// `report --fail-on`: a condition holds.
    public static let failure = ExitStatus(rawValue: 1)
    /// EX_USAGE: a malformed command line.
    public static let usage = ExitStatus(rawValue: 64)
    /// EX_DATAERR: input that is not what it should be (a file that is not a recording).
    public static let data = ExitStatus(rawValue: 65)
    /// EX_NOINPUT: no such PID, file or unit.
    public static let noInput = ExitStatus(rawValue: 66)
    /// EX_UNAVAILABLE: a service perfhud needs is not there (a port in use, no event socket).
    public static let unavailable = ExitStatus(rawValue: 69)
    /// EX_SOFTWARE: perfhud's own fault.
    public static let software = ExitStatus(rawValue: 70)
    /// EX_CANTCREAT: a file or socket perfhud must create.
    public static let cannotCreate = ExitStatus(rawValue: 73)
    /// EX_NOPERM: not allowed to read the target or a file.
    public static let noPermission = ExitStatus(rawValue: 77)
    /// EX_CONFIG: a configuration file that cannot be read as one (the daemon's `--config`).
    public static let config = ExitStatus(rawValue: 78)
    /// The shell's convention for a command found but not executable.
    public static let cannotRun = ExitStatus(rawValue: 126)
    /// The shell's convention for a command not found.
    public static let notFound = ExitStatus(rawValue: 127)

    /// A launched program's own exit code, passed on.
    public static func program(_ code: Int32) -> ExitStatus { ExitStatus(rawValue: code) }
    /// 128 + signal, as a shell reports a process ended by a signal.
    public static func signaled(_ signal: Int32) -> ExitStatus { ExitStatus(rawValue: 128 + signal) }

    public var description: String { String(rawValue) }
}
