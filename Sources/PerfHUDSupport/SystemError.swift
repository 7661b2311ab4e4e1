#if canImport(Glibc)
import Glibc
#endif

/// An errno value from a failed system call, with its name for messages.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    /// The errno of the last failed call on this thread.
    public static var current: SystemError { SystemError(errno) }
    public var description: String { String(cString: strerror(code)) }

    public static let noSuchProcess = SystemError(ESRCH)
    public static let noSuchFile = SystemError(ENOENT)
    public static let permissionDenied = SystemError(EACCES)
    public static let notPermitted = SystemError(EPERM)
    public static let interrupted = SystemError(EINTR)
    public static let wouldBlock = SystemError(EAGAIN)
}

/// Calls `body` until it does not fail with EINTR: `SystemCall` and the kept-open files go through it.
@inlinable @inline(__always)
public func retryingInterrupts<T: BinaryInteger>(_ body: () -> T) -> Result<T, SystemError> {
    while true {
        let result = body()
        if result >= 0 { return .success(result) }
        let code = errno
        if code != EINTR { return .failure(SystemError(code)) }
    }
}
