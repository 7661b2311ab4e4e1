/// A count several threads add to.
public final class LockedCounter: @unchecked Sendable {
    private let mutex = Mutex()
    private var count = 0

    public init() {}

    public func increment(by amount: Int = 1) { mutex.withLock { count += amount } }

    public var value: Int { mutex.withLock { count } }
}
