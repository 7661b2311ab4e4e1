#if canImport(Glibc)
import Glibc
#endif

/// A count several threads add to.
public final class LockedCounter: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()
    private var count = 0

    public init() {}
    deinit { pthread_mutex_destroy(lock); lock.deallocate() }

    public func increment(by amount: Int = 1) {
        pthread_mutex_lock(lock); count += amount; pthread_mutex_unlock(lock)
    }

    public var value: Int {
        pthread_mutex_lock(lock); defer { pthread_mutex_unlock(lock) }
        return count
    }
}
