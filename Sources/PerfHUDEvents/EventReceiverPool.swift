import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// One thread receiving for many event sockets: the daemon's targets each have a socket, and a
/// thread with its own recvmmsg buffer (64 × 64 KiB) each would cost what the targets do not.
/// It polls every member's socket and the wake-up pipe; members join and leave under its lock
/// (a byte on the pipe makes it take the new list).
public final class EventReceiverPool: @unchecked Sendable {
    private let mutex = Mutex()
    private var members: [EventReceiver] = []
    private var wake: (read: Int32, write: Int32) = (-1, -1)
    private var thread: pthread_t?
    private var stopping = false

    public init() {}

    package func add(_ receiver: EventReceiver) {
        mutex.withLock { members.append(receiver) }
        startIfNeeded()
        poke()
    }

    package func remove(_ receiver: EventReceiver) {
        mutex.withLock { members.removeAll { $0 === receiver } }
        poke()
    }

    /// Ends the thread (the members have left or are let go with it).
    public func stop() {
        guard let thread else { return }
        mutex.withLock { stopping = true }
        poke()
        pthread_join(thread, nil)
        self.thread = nil
        close(wake.read); close(wake.write)
    }

    private func poke() {
        if wake.write >= 0 { SystemCall.poke(wake.write) }
    }

    private func startIfNeeded() {
        guard thread == nil else { return }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC); _ = fcntl(end, F_SETFL, O_NONBLOCK) }
        wake = (ends[0], ends[1])
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = createThreadBlockingSignals(&handle, nil, { context in
            let pool = Unmanaged<EventReceiverPool>.fromOpaque(context!).takeRetainedValue()
            pool.loop()
            return nil
        }, context)
        if created == 0 { thread = handle } else { Unmanaged<EventReceiverPool>.fromOpaque(context).release() }
    }

    private func loop() {
        _ = EventReceiver.preferPromptWakeups()
        guard let batch = perfhud_batch_create(EventReceiver.batchCapacity, 65536) else { return }
        defer { perfhud_batch_destroy(batch) }
        var drained = [UInt8](repeating: 0, count: 64)
        while true {
            let (current, done) = mutex.withLock { (members, stopping) }
            if done { return }
            var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            descriptors += current.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            guard case .success = SystemCall.poll(&descriptors) else { return }
            if descriptors[0].revents != 0 { _ = SystemCall.read(wake.read, into: &drained) }
            for (index, member) in current.enumerated() where descriptors[index + 1].revents != 0 {
                member.receivePooled(batch: batch)
            }
        }
    }
}
