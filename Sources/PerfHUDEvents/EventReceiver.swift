import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The event socket: a Unix datagram socket read by a dedicated thread in batches (recvmmsg),
/// each datagram checked against its sender's credentials (SO_PASSCRED) and parsed into the
/// aggregator. Optionally a UDP socket as well (`--statsd-udp`), read by the same thread.
public final class EventReceiver {
    public let path: String
    public let aggregator: EventAggregator
    private let socket: Int32
    private var udpSocket: Int32 = -1
    private var wakeRead: Int32 = -1
    private var wakeWrite: Int32 = -1
    private var thread: pthread_t?
    private var links: [String] = []
    private let filter: PeerFilter
    /// With a pool: whose thread receives, and the lock that keeps its receiving and `stop()`'s
    /// last drain and close apart.
    private var pool: EventReceiverPool?
    private let drainMutex = Mutex()
    private var closed = false

    /// The default path: `$XDG_RUNTIME_DIR/perfhud/PID.sock`, else `/tmp/perfhud-UID/PID.sock`.
    /// The directory is created 0700 and must be ours and private.
    /// - Returns: the path, and why a preferred directory was passed over (for a warning).
    public static func defaultPath(pid: Int32) throws -> (path: String, warnings: [String]) {
        let (directory, warnings) = try privateDirectory()
        return (directory + "/\(pid).sock", warnings)
    }

    /// perfhud's private runtime directory, `$XDG_RUNTIME_DIR/perfhud`, else `/tmp/perfhud-UID`:
    /// the event sockets' and `perfhud status`'s state files' (made 0700, checked ours and private).
    public static func privateDirectory() throws -> (path: String, warnings: [String]) {
        var candidates: [String] = []
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            candidates.append(runtime + "/perfhud")
        }
        candidates.append("/tmp/perfhud-\(geteuid())")
        var warnings: [String] = []
        for directory in candidates {
            do {
                try preparePrivateDirectory(directory)
                return (directory, warnings)
            } catch let error as PerfHUDError { warnings.append(error.message) }
        }
        throw PerfHUDError(.cannotCreate, warnings.joined(separator: "; "))
    }

    /// Creates `directory` 0700, or checks that it is a real directory of ours that nobody else
    /// may enter: a socket in a directory others can write is a socket others can replace.
    static func preparePrivateDirectory(_ directory: String) throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw PerfHUDError(.cannotCreate, "cannot create \(directory): \(SystemError.current)")
        }
        var status = stat()
        guard lstat(directory, &status) == 0 else {
            throw PerfHUDError(.cannotCreate, "cannot inspect \(directory): \(SystemError.current)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw PerfHUDError(.cannotCreate, "refusing \(directory): not a directory") }
        guard status.st_uid == geteuid() else { throw PerfHUDError(.cannotCreate, "refusing \(directory): owned by another user") }
        guard status.st_mode & 0o077 == 0 else {
            throw PerfHUDError(.cannotCreate, "refusing \(directory): others may access it (mode \(String(status.st_mode & 0o777, radix: 8)))")
        }
    }

    /// Binds the socket at `path` (mode 0600). A stale socket of ours is replaced; a symlink, a
    /// live socket or anything else at the path is refused.
    /// - Parameter mode: the socket file's mode: 0600, or 0666 for a daemon whose target runs as
    ///   another user (the credential check then decides who may send).
    public init(path: String, aggregator: EventAggregator, policy: AcceptPolicy?, targetPID: Int32, mode: mode_t = 0o600) throws {
        self.path = path
        self.aggregator = aggregator
        filter = PeerFilter(policy: policy, targetPID: targetPID)
        guard path.utf8.count < 108 else { throw PerfHUDError(.cannotCreate, "socket path too long (108 bytes at most): \(path)") }
        try Self.clearPath(path)
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw PerfHUDError(.cannotCreate, "cannot create a socket: \(SystemError.current)") }
        let previousMask = umask(0o177)
        let bound = Self.withAddress(path) { bind(socket, $0, $1) }
        umask(previousMask)
        guard bound == 0 else {
            let error = SystemError.current
            close(socket)
            throw PerfHUDError(.cannotCreate, "cannot bind \(path): \(error)")
        }
        chmod(path, mode)
        _ = perfhud_enable_credentials(socket)
        var size: Int32 = 4 << 20    // room for bursts; the kernel caps it at rmem_max
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { stop() }

    public static func clearPath(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        let type = status.st_mode & S_IFMT
        if type == S_IFLNK { throw PerfHUDError(.cannotCreate, "refusing \(path): it is a symbolic link") }
        guard type == S_IFSOCK, status.st_uid == geteuid() else {
            throw PerfHUDError(.cannotCreate, "refusing \(path): something that is not our socket is there")
        }
        // A socket file with nobody bound to it refuses connections: stale, left by a crash.
        let probe = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        // Blocking, on a datagram socket: connecting only names the peer, so it is done at once.
        if withAddress(path, { SystemCall.connect(probe, to: $0, length: $1) }) == .success(true) {
            throw PerfHUDError(.cannotCreate, "\(path) is in use by another perfhud")
        }
        unlink(path)
    }

    /// A daemon target's label as the name of its files (`NAME.sock`, `NAME.feed`): letters,
    /// digits and `_.-@` kept, anything else `_`, 80 bytes at most, no leading dot.
    public static func fileName(label: String) -> String {
        let kept = label.unicodeScalars.prefix(80).map { scalar -> Character in
            let character = Character(scalar)
            return scalar.isASCII && (character.isLetter || character.isNumber || "_.-@".contains(character)) ? character : "_"
        }
        let name = String(kept)
        return name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }

    public static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Also listens on UDP `host:port` (`--statsd-udp`), an IPv4 or IPv6 address. UDP carries no
    /// credentials: the address is the only guard, which is why the default is loopback.
    public func listenUDP(host: String, port: UInt16) throws {
        var address4 = sockaddr_in(), address6 = sockaddr_in6()
        address4.sin_family = sa_family_t(AF_INET)
        address4.sin_port = port.bigEndian
        address6.sin6_family = sa_family_t(AF_INET6)
        address6.sin6_port = port.bigEndian
        let family: Int32
        if inet_pton(AF_INET, host, &address4.sin_addr) == 1 { family = AF_INET }
        else if inet_pton(AF_INET6, host, &address6.sin6_addr) == 1 { family = AF_INET6 }
        else { throw PerfHUDError(.cannotCreate, "--statsd-udp wants an IP address, such as 127.0.0.1 or [::1]; got \(host)") }
        let descriptor = Glibc.socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let bound = family == AF_INET
            ? withUnsafePointer(to: &address4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            : withUnsafePointer(to: &address6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        guard bound == 0 else {
            let error = SystemError.current
            close(descriptor)
            throw PerfHUDError(.cannotCreate, "cannot listen on \(family == AF_INET6 ? "[\(host)]" : host):\(port): \(error)")
        }
        // As for the Unix socket: the default 208 KiB held too few of a StatsD client's burst
        // (PyPI statsd's pipeline lost ~10 % of 20,000 lines in 512-byte datagrams without it).
        var size: Int32 = 4 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        udpSocket = descriptor
    }

    /// Another name for the socket (a hard link), so a launched program finds it by its own PID.
    public func addLink(_ linkPath: String) {
        unlink(linkPath)
        if link(path, linkPath) == 0 { links.append(linkPath) }
    }

    /// The socket's other names are exactly `linkPaths` (a daemon's targets come and go): names no
    /// longer wanted are removed; a new one is added only where nothing live is in the way (a
    /// stale socket is replaced, another perfhud's socket or a stranger's file is left alone).
    public func setLinks(_ linkPaths: [String]) {
        for name in links where !linkPaths.contains(name) { unlink(name) }
        links = links.filter { linkPaths.contains($0) }
        for name in linkPaths where !links.contains(name) {
            guard (try? Self.clearPath(name)) != nil else { continue }
            if link(path, name) == 0 { links.append(name) }
        }
    }

    public func setTarget(pid: Int32) { filter.setTarget(pid: pid) }
    /// Several targets (a daemon's `--match` or `--unit` group).
    public func setTargets(_ pids: [Int32]) { filter.setTargets(pids) }
    /// The processes of the daemon's targets, this one's among them (they are its own first): the
    /// others' datagrams are refused here whatever `--accept-from` says (`other_target`), so one
    /// target cannot speak for another.
    public func setDaemonTargets(_ pids: Set<Int32>) { filter.setDaemonTargets(pids) }
    /// A unit target's control group (`/system.slice/web.service`) and the other targets' units:
    /// a sender in one of them is that unit's even before the daemon has seen it (a unit that
    /// has just started sends at once), whoever its parent is.
    public func setControlGroups(target: String?, others: [String]) { filter.setControlGroups(target: target, others: others) }

    /// Starts the receiving thread.
    public func start() {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = createThreadBlockingSignals(&handle, nil, { context in
            let receiver = Unmanaged<EventReceiver>.fromOpaque(context!).takeRetainedValue()
            receiver.receiveLoop()
            return nil
        }, context)
        if created == 0 { thread = handle } else { Unmanaged<EventReceiver>.fromOpaque(context).release() }
    }

    /// Stops the thread (or leaves the pool, after draining what is queued) and removes the
    /// socket's names.
    public func stop() {
        if let pool {
            self.pool = nil
            pool.remove(self)
            drainMutex.withLock {
                guard !closed else { return }
                if let batch = perfhud_batch_create(Self.batchCapacity, 65536) {
                    receive(from: socket, checksCredentials: true, batch: batch)
                    perfhud_batch_destroy(batch)
                }
                closed = true
                close(socket)
            }
        }
        if let thread {
            SystemCall.poke(wakeWrite)
            pthread_join(thread, nil)
            self.thread = nil
        }
        if wakeRead >= 0 { close(wakeRead); close(wakeWrite); wakeRead = -1; wakeWrite = -1 }
        if socket >= 0 {
            for name in links { unlink(name) }
            links = []
            unlink(path)
        }
        if udpSocket >= 0 { close(udpSocket); udpSocket = -1 }
    }

    /// Asks the scheduler to run the calling receiving thread as soon as a datagram wakes it: the
    /// lowest real-time priority where perfhud may (root, CAP_SYS_NICE, RLIMIT_RTPRIO), else a 0.1 ms
    /// slice and nice -10 where allowed. On a machine with every CPU busy, only the real-time
    /// priority read a phase's RSS before the program's next allocation (docs/events.md, measured).
    /// `PERFHUD_NO_REALTIME=1` keeps it an ordinary thread.
    static func preferPromptWakeups() -> Int32 {
        perfhud_prefer_prompt_wakeups(100_000, -10, environmentFlag("PERFHUD_NO_REALTIME") ? 0 : 1)
    }

    /// Datagrams taken from the socket in one recvmmsg(2).
    static let batchCapacity: UInt32 = 64

    private func receiveLoop() {
        // A phase's memory is read when its event is parsed here (unless the line carries the
        // program's own): a receiver that waits for a CPU while the program goes on allocating
        // books that memory on the phase before. Ask to run at once when woken (`receiverPriority`).
        _ = Self.preferPromptWakeups()
        guard let batch = perfhud_batch_create(Self.batchCapacity, 65536) else { return }
        defer { perfhud_batch_destroy(batch) }
        var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: udpSocket, events: Int16(POLLIN), revents: 0)]
        while true {
            for index in descriptors.indices { descriptors[index].revents = 0 }
            guard case .success = SystemCall.poll(&descriptors) else { return }
            // Asked to stop: what is queued still counts (a program's last frames, sent as it
            // exits, belong in the last report).
            let stopping = descriptors[0].revents != 0
            if descriptors[1].fd >= 0 && (stopping || descriptors[1].revents != 0) {
                receive(from: descriptors[1].fd, checksCredentials: true, batch: batch)
            }
            if descriptors[2].fd >= 0 && (stopping || descriptors[2].revents != 0) {
                receive(from: descriptors[2].fd, checksCredentials: false, batch: batch)
            }
            if stopping { return }
        }
    }

    /// A batch this full says the senders outrun the receiver: the queue has likely filled again
    /// while it was parsed, so the next batch is taken at once rather than after a poll(2). A
    /// Unix socket's queue holds 11 datagrams where net.unix.max_dgram_qlen is the kernel's 10
    /// (512 where systemd set it), so a batch is seldom the full 64 there. Below it, back to
    /// poll: a sender slower than the receiver leaves one or two datagrams a wake-up, and one more
    /// recvmmsg would find nothing.
    static let drainAgainAt: Int32 = 8

    /// Takes what is queued on `descriptor`, batch by batch, into the aggregator.
    private func receive(from descriptor: Int32, checksCredentials: Bool, batch: OpaquePointer) {
        while true {
            let received = perfhud_batch_receive(descriptor, batch)
            if received <= 0 { break }
            let count = Int(received)
            // Who sent each datagram is decided before the aggregator's lock is taken (deciding
            // may read /proc); consecutive datagrams of one sender, the usual batch, ask once.
            withUnsafeTemporaryAllocation(of: Refusal.self, capacity: count) { refusals in
                var last: (pid: Int32, uid: UInt32, refusal: Refusal)? = nil
                for message in 0..<count {
                    var refusal = Refusal.none
                    if perfhud_batch_truncated(batch, UInt32(message)) != 0 {
                        refusal = .truncated
                    } else if checksCredentials {
                        var pid: Int32 = 0
                        var uid: UInt32 = 0
                        if perfhud_batch_sender(batch, UInt32(message), &pid, &uid) != 1 {
                            refusal = .noCredentials
                        } else if let last, last.pid == pid, last.uid == uid {
                            refusal = last.refusal
                        } else {
                            refusal = filter.refusal(pid: pid, uid: uid)
                            last = (pid, uid, refusal)
                        }
                    }
                    refusals[message] = refusal
                }
                let now = monotonicNanoseconds()
                aggregator.withLock { ingest in
                    ingest.setTime(now)
                    for message in 0..<count {
                        if let reason = refusals[message].reason { ingest.reject(reason: reason); continue }
                        var length = 0
                        guard let data = perfhud_batch_data(batch, UInt32(message), &length) else { continue }
                        let lines = EventLineParser.parse(UnsafeRawBufferPointer(start: data, count: length), into: &ingest)
                        ingest.countLines(lines)
                    }
                }
            }
            if received < Self.drainAgainAt { break }
        }
    }

    /// Called by the pool's thread when the socket is readable.
    func receivePooled(batch: OpaquePointer) {
        drainMutex.withLock {
            guard !closed else { return }
            receive(from: socket, checksCredentials: true, batch: batch)
        }
    }

    package var descriptor: Int32 { socket }

    /// Received by `pool`'s one thread rather than a thread of its own (the daemon's targets:
    /// one thread and one 4 MiB batch buffer for all of them). No UDP with a pool.
    public func start(in pool: EventReceiverPool) {
        self.pool = pool
        pool.add(self)
    }
}
