#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with a stable address (a class owns it), for state several threads touch.
/// Written by hand: the standard library's `Synchronization.Mutex` needs macOS 15 where this
/// package is type-checked for macOS 13, and a pthread mutex is all the few users here need.
public final class Mutex: @unchecked Sendable {
    @usableFromInline let handle: UnsafeMutablePointer<pthread_mutex_t> = {
        let handle = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(handle, nil)
        return handle
    }()

    public init() {}
    deinit { pthread_mutex_destroy(handle); handle.deallocate() }

    /// Runs `body` holding the mutex.
    @inlinable @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(handle)
        defer { pthread_mutex_unlock(handle) }
        return try body()
    }
}
