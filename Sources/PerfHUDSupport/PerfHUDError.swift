/// Every error perfhud reports to its user: what happened, in the user's words, and what kind of
/// failure it is. The kind decides the exit status, here and nowhere else.
public struct PerfHUDError: Error, Equatable, CustomStringConvertible {
    /// What kind of failure: an opaque set, so that kinds can be added.
    public struct Kind: Equatable, Sendable {
        fileprivate let status: ExitStatus
        /// The command line cannot be read or combines options that do not go together.
        public static let usage = Kind(status: .usage)
        /// The input is not what it should be.
        public static let data = Kind(status: .data)
        /// No such process, file or unit.
        public static let noInput = Kind(status: .noInput)
        /// Something perfhud needs is not available (an address in use, a socket it cannot reach).
        public static let unavailable = Kind(status: .unavailable)
        /// A file or socket perfhud must create cannot be.
        public static let cannotCreate = Kind(status: .cannotCreate)
        /// Not allowed to read the target or a file.
        public static let noPermission = Kind(status: .noPermission)
        /// A configuration file has an error (the message names its line).
        public static let config = Kind(status: .config)
        /// The command to run was found but cannot be run.
        public static let cannotRun = Kind(status: .cannotRun)
        /// The command to run was not found.
        public static let notFound = Kind(status: .notFound)
        /// perfhud's own fault.
        public static let software = Kind(status: .software)
    }

    public let kind: Kind
    /// One line, without the `perfhud: ` prefix.
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The one mapping from kinds of failure to exit statuses.
    public var exitStatus: ExitStatus { kind.status }

    public var description: String { message }

    /// A failed system call on `path` as the user sees it: missing (66), forbidden (77), or else `otherwise`.
    public static func reading(_ path: String, _ error: SystemError, otherwise: Kind = .noInput) -> PerfHUDError {
        let kind: Kind = error == .permissionDenied || error == .notPermitted ? .noPermission
            : error == .noSuchFile ? .noInput : otherwise
        return PerfHUDError(kind, "cannot read \(path): \(error)")
    }
}
