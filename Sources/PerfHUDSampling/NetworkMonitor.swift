import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// Reads every watched target's network once a second on a thread of its own (`perfhud-net`), never
/// on the tick: a sock_diag dump answers for every TCP socket of a namespace, and costs with the
/// host's sockets, not the target's (issue 33). One dump a namespace and pass serves every target
/// in it (the daemon's many); a tick takes its target's last published figures and never waits.
///
/// A pass: each target's socket inodes (`/proc/PID/fd`) and namespace; one dump of each namespace
/// (TCP, connected and listening, with `tcp_info`), each socket given to the targets that hold it
/// (`TCPAccounting`); where a target holds sockets TCP does not account for, a dump of UDP, to say
/// UDP is not counted; for a target in a network namespace of its own, its interfaces' totals.
/// Between passes the thread waits on the namespaces' destroy events (a closing socket's final
/// counters), and on a target's asking for a pass (a new one, or one whose target ended).
public final class NetworkMonitor: @unchecked Sendable {
    public static let shared = NetworkMonitor()
    static let passNanoseconds: UInt64 = 1_000_000_000
    /// After a pass is asked for at a target's end: the destroy events of its last sockets come
    /// from a kernel work queue, within milliseconds.
    static let settleNanoseconds: UInt64 = 50_000_000

    private let mutex = Mutex()
    private var started = false
    private var wake: Int32 = -1
    /// Under `mutex`: what each target asked for, and what it was last told.
    private var requests: [ObjectIdentifier: Request] = [:]
    private var lastPassAt: UInt64 = 0
    private var passesDone: UInt64 = 0

    private struct Request {
        var pids: [Int32]
        /// A systemd unit whose IP accounting counts the bytes (`NetworkWatch(unit:)`).
        var unit: String?
        var sequence: UInt64 = 0
        var figures: NetworkFiguresBox?
        /// When the pass that made `figures` began.
        var passBegan: UInt64 = 0
    }

    /// The monitor thread's own: each target's accounting and the namespaces it has sockets in.
    package var states: [ObjectIdentifier: TargetState] = [:]
    private var namespaces: [UInt64: NetworkNamespace] = [:]
    package let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)

    package final class TargetState {
        var accounting = TCPAccounting()
        package var inodes = Set<UInt64>()
        var udpSockets = 0
        /// The target's socket inodes as the last dump sorted them out: TCP (by cookie), UDP, the rest
        /// (unix, netlink, …). An inode none of them holds (a socket made since) asks for a dump.
        var tcpInodes: [UInt64: UInt64] = [:]
        var udpInodes = Set<UInt64>()
        var otherInodes = Set<UInt64>()
        /// The target's TCP sockets of the last pass by namespace and cookie, with their ids: looked up
        /// one by one while no new socket appears.
        package var sockets: [UInt64: [UInt64: InetDiag.Socket]] = [:]
        /// Whether the target ever held a UDP socket: its totals lack those bytes for good.
        var hadUDP = false
        /// Whether a connection of the target's user, in its namespace, closed that no pass had
        /// seen and none of its listening ports accepted: maybe its own, opened and closed between
        /// two passes (an HTTP client without keep-alive), whose bytes are then not in its totals.
        var missedShortConnection = false
        /// Who owns the target's first process (`/proc/PID`'s owner), looked up once.
        lazy var uid: UInt32? = {
            var status = stat()
            return rootPID > 0 && stat("/proc/\(rootPID)", &status) == 0 ? status.st_uid : nil
        }()
        var denied = false
        var namespaceFailure: SystemError?
        var dumpFailure: SystemError?
        var rootNamespace: UInt64?
        /// The namespace its first process was last seen in (its sockets' once it is gone).
        var lastNamespace: UInt64?
        package var rootPID: Int32 = 0
        /// The totals at the last pass and when, for the rates.
        package var previous: (at: UInt64, sent: UInt64, received: UInt64, retransmits: UInt64, dataSegments: UInt64, opened: UInt64)?
        /// The namespace's interface totals when perfhud started watching it (source `netns`).
        var interfacesAtStart: (namespace: UInt64, received: UInt64, sent: UInt64)?
        /// The unit's IP accounting now and when perfhud started watching it (source `unit`); nil
        /// where it has none (`IPAccounting=no`) or it could not be read.
        var unitBytes: (received: UInt64, sent: UInt64)?
        var unitAtStart: (received: UInt64, sent: UInt64)?
        var unitNotAccounted = false
        var unitNotRead = false
        /// When D-Bus is asked again after it refused (a dynamic user is refused at every try).
        var unitRetryAt: UInt64 = 0
    }

    /// The figures published for `owner` if newer than `seen` (nil when unchanged), with their
    /// sequence, and when the thread last ended a pass (0: none yet).
    package func latest(for owner: ObjectIdentifier, after seen: UInt64) -> (figures: NetworkFiguresBox?, sequence: UInt64, passAt: UInt64, passBegan: UInt64) {
        mutex.withLock {
            guard let request = requests[owner], request.sequence != seen else { return (nil, seen, lastPassAt, 0) }
            return (request.figures, request.sequence, lastPassAt, request.passBegan)
        }
    }

    /// The processes `owner` is (asked at its first call for a pass at once: the totals count from then).
    func want(_ pids: [Int32], unit: String? = nil, for owner: ObjectIdentifier) {
        let new = mutex.withLock { () -> Bool in
            if requests[owner] != nil { requests[owner]?.pids = pids; return false }
            requests[owner] = Request(pids: pids, unit: unit)
            return true
        }
        if new { passSoon() }
    }

    package func forget(_ owner: ObjectIdentifier) { _ = mutex.withLock { requests.removeValue(forKey: owner) } }

    /// Asks the thread for a pass now (a target's end: its last bytes).
    func passSoon() {
        // An eventfd takes 8 bytes a write (a pipe's one-byte poke would fail).
        var one: UInt64 = 1
        if wake >= 0 { _ = write(wake, &one, 8) }
    }

    /// Starts the thread, once. - Returns: false where it could not be started.
    @discardableResult
    package func start() -> Bool {
        mutex.withLock { () -> Bool in
            if started { return wake >= 0 }
            started = true
            wake = perfhud_wake_descriptor()
            guard wake >= 0 else { return false }
            if !startDetachedThread({ self.run() }) {
                close(wake); wake = -1
                return false
            }
            return true
        }
    }

    private func run() {
        perfhud_name_thread("perfhud-net")
        var nextPass = monotonicNanoseconds()
        var descriptors: [pollfd] = []
        while true {
            let now = monotonicNanoseconds()
            if now >= nextPass {
                pass(now: now)
                nextPass = max(nextPass &+ Self.passNanoseconds, monotonicNanoseconds() &+ Self.passNanoseconds / 2)
                continue
            }
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            let listening = namespaces.values.filter { $0.destroyEvents >= 0 }
            for namespace in listening { descriptors.append(pollfd(fd: namespace.destroyEvents, events: Int16(POLLIN), revents: 0)) }
            let timeout = Int32(min((nextPass - now) / 1_000_000 + 1, 1000))
            guard case .success(let ready) = SystemCall.poll(&descriptors, timeoutMilliseconds: timeout), ready > 0 else { continue }
            for (index, namespace) in listening.enumerated() where descriptors[index + 1].revents != 0 {
                namespace.drainDestroyEvents(into: buffer) { closed($0, in: namespace) }
            }
            if descriptors[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
                // Asked for a pass: let the destroy events of a target's last sockets come first.
                let settle = monotonicNanoseconds() &+ Self.settleNanoseconds
                nextPass = min(nextPass, settle)
            }
        }
    }

    /// A socket of `namespace` closed: its final counters go to the targets it was theirs.
    package func closed(_ socket: InetDiag.Socket, in namespace: NetworkNamespace) {
        let owners = namespace.cookieOwners[socket.cookie]
            ?? namespace.portOwners[TCPAccounting.portKey(family: socket.family, port: socket.localPort)] ?? []
        for owner in owners { states[owner]?.accounting.closed(socket) }
        guard owners.isEmpty else { return }
        // Whose it was, a destroy event does not say (no PID, no control group: measured on Linux
        // 6.18): a target of the same user in the namespace says it may have been its own. Not a
        // client's at all: one from a port below the ephemeral range (a server's accepted socket);
        // nor the other end of a target's own connection (a peer of its server, of its client).
        guard Self.ephemeralPorts.contains(socket.localPort),
              namespace.portOwners[TCPAccounting.portKey(family: socket.family, port: socket.remotePort)] == nil,
              !namespace.targetPorts.contains(TCPAccounting.portKey(family: socket.family, port: socket.remotePort)) else { return }
        let loopback = socket.remoteAddress.isLoopback(family: socket.family)
        for (owner, state) in states where !state.missedShortConnection && (state.rootNamespace ?? state.lastNamespace) == namespace.identity {
            // In a namespace of its own only its loopback is counted by sockets (its interfaces count the rest).
            guard state.uid == socket.uid && (state.rootNamespace == nil || loopback) else { continue }
            // And only a target that ran since its last pass can have opened and closed it.
            let pids = mutex.withLock { requests[owner]?.pids ?? [] }
            if pids.contains(where: { pid in Self.cpuTime(of: pid).map { $0 != watched[pid]?.cpu } ?? false }) { state.missedShortConnection = true }
        }
    }

    /// The ports a client's socket is given (`ip_local_port_range`, perfhud's namespace's; Linux's
    /// default where it cannot be read).
    static let ephemeralPorts: ClosedRange<UInt16> = {
        guard case .success(let bytes) = KeptOpenFile.contents(of: "/proc/sys/net/ipv4/ip_local_port_range", limit: 64) else { return 32768...60999 }
        let numbers = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { UInt16($0) }
        return numbers.count == 2 && numbers[0] <= numbers[1] ? numbers[0]...numbers[1] : 32768...60999
    }()

    /// The socket inodes of one process, reused from pass to pass.
    private var pidInodes = Set<UInt64>()
    /// What a pass knows of each watched process: its `/proc/PID/fd` kept open (`TCPAccounting.socketInodes(directory:…)`),
    /// and, from the pass that last listed it, its CPU time, network namespace and socket inodes.
    /// A process whose CPU clock has not moved since has not run: it cannot have opened, closed or
    /// received a descriptor, nor entered another namespace, so its sockets are those of then and
    /// are not listed again — one clock read instead of nine system calls (the fd listing and a
    /// readlink per descriptor), where most watched processes sleep most seconds. Their sockets'
    /// counters are read every pass all the same (a sleeping process's data is still acked).
    private final class Watched {
        var listing: Int32 = -1
        var cpu = UInt64.max
        var namespace: UInt64 = 0
        var inodes = Set<UInt64>()
        deinit { if listing >= 0 { close(listing) } }
    }
    private var watched: [Int32: Watched] = [:]
    /// Where every listing's entries are read (`TCPAccounting.listingBufferBytes`): one for the thread.
    private let listingBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TCPAccounting.listingBufferBytes, alignment: 8)

    /// The namespace and sockets of `pid` into `inodes`; nil where it is gone or may not be read
    /// (`denied`: because it may not).
    private func namespaceAndSockets(of pid: Int32, into inodes: inout Set<UInt64>, denied: inout Bool) -> UInt64? {
        let process = watched[pid] ?? { let made = Watched(); watched[pid] = made; return made }()
        // Read before the listing: a process that runs after it shows a clock that moved next pass.
        let cpu = Self.cpuTime(of: pid)
        if let cpu, cpu == process.cpu {
            inodes.formUnion(process.inodes)
            return process.namespace
        }
        process.cpu = .max
        guard case .success(let namespace) = NetworkNamespace.identity(of: pid) else {
            if errno == EACCES || errno == EPERM { denied = true }
            return nil
        }
        if process.listing < 0 {
            switch DescriptorBudget.keeping(SystemCall.open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY)) {
            case .success(let opened): process.listing = opened
            case .failure(let error): errno = error.code   // read below: a refusal is said as one
            }
        }
        guard process.listing >= 0, TCPAccounting.socketInodes(directory: process.listing, buffer: listingBuffer, into: &inodes) else {
            if errno == EACCES || errno == EPERM { denied = true }
            if process.listing >= 0 { close(process.listing); process.listing = -1 }   // gone: whoever has the PID next is opened anew
            return namespace
        }
        (process.cpu, process.namespace, process.inodes) = (cpu ?? .max, namespace, inodes)
        return namespace
    }

    /// The CPU time of process `pid` (its threads' and theirs alone, in nanoseconds), nil where it
    /// is gone. The clock's id is the kernel's for a process (`MAKE_PROCESS_CPUCLOCK(pid,
    /// CPUCLOCK_SCHED)`, its ABI): glibc's `clock_getcpuclockid` checks it with a system call more.
    private static func cpuTime(of pid: Int32) -> UInt64? {
        var time = timespec()
        guard clock_gettime(clockid_t((~pid) << 3 | 2), &time) == 0 else { return nil }
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// One pass over every target.
    private func pass(now: UInt64) {
        let wanted = mutex.withLock { requests.mapValues(\.pids) }
        let units = mutex.withLock { requests.compactMapValues(\.unit) }
        for owner in states.keys where wanted[owner] == nil { states[owner] = nil }
        // Each target's namespaces and socket inodes.
        struct Work { var via: Int32; var inodeOwners: [UInt64: [ObjectIdentifier]] = [:]; var owners: [ObjectIdentifier] = [] }
        var work: [UInt64: Work] = [:]
        for (owner, pids) in wanted {
            let state = states[owner] ?? { let made = TargetState(); states[owner] = made; return made }()
            state.inodes.removeAll(keepingCapacity: true)
            state.udpSockets = 0; state.denied = false
            state.namespaceFailure = nil; state.dumpFailure = nil
            state.rootNamespace = nil; state.rootPID = pids.first ?? 0
            state.accounting.beginPass()
            for (index, pid) in pids.enumerated() {
                pidInodes.removeAll(keepingCapacity: true)
                guard let namespace = namespaceAndSockets(of: pid, into: &pidInodes, denied: &state.denied) else { continue }
                if index == 0 { state.rootNamespace = namespace }
                // In place (`work[namespace]!`): an entry taken out, changed and put back copied its
                // inodes' table for every target of a namespace shared by all (quadratic in targets).
                if work[namespace] == nil { work[namespace] = Work(via: pid) }
                for inode in pidInodes where state.inodes.insert(inode).inserted { work[namespace]!.inodeOwners[inode, default: []].append(owner) }
                // A target's processes come one after another: it is the last owner if it is one.
                if work[namespace]!.owners.last != owner { work[namespace]!.owners.append(owner) }
            }
            if let namespace = state.rootNamespace { state.lastNamespace = namespace }
            // A target whose processes are gone: its sockets, known by their cookies, still close where they were.
            if state.rootNamespace == nil, let last = state.lastNamespace, namespaces[last] != nil {
                var entry = work[last] ?? Work(via: 0)
                if !entry.owners.contains(owner) { entry.owners.append(owner) }
                work[last] = entry
            }
        }
        // What was known of processes no target has any more.
        if !watched.isEmpty {
            let wantedPIDs = Set(wanted.values.joined())
            for pid in watched.keys where !wantedPIDs.contains(pid) { watched[pid] = nil }
        }
        // systemd's IP accounting of the units asked about (over D-Bus: milliseconds, on this thread only).
        for (owner, unit) in units {
            guard let state = states[owner], now >= state.unitRetryAt else { continue }
            var ingress: UInt64 = 0, egress: UInt64 = 0
            let read = perfhud_unit_ip_bytes(unit, &ingress, &egress)
            if read < 0 { state.unitRetryAt = now &+ 10_000_000_000 }
            state.unitBytes = read == 0 ? (ingress, egress) : nil
            state.unitNotAccounted = read == 1
            state.unitNotRead = read < 0
            if read == 0, state.unitAtStart == nil { state.unitAtStart = (ingress, egress) }
        }
        // Each namespace's TCP sockets, for every target in it: a dump, or look-ups (`readSockets`).
        for (identity, entry) in work {
            let namespace: NetworkNamespace
            if let known = namespaces[identity] {
                namespace = known
            } else if entry.via != 0 {
                do {
                    namespace = try NetworkNamespace.make(identity: identity, via: entry.via)
                    namespaces[identity] = namespace
                } catch {
                    for owner in entry.owners { states[owner]?.namespaceFailure = error as? SystemError ?? SystemError(EINVAL) }
                    continue
                }
            } else { continue }
            readSockets(of: namespace, inodeOwners: entry.inodeOwners, owners: entry.owners)
        }
        // What was sorted out of sockets the targets no longer hold is let go.
        for state in states.values {
            state.otherInodes.formIntersection(state.inodes)
            state.udpInodes.formIntersection(state.inodes)
            if state.tcpInodes.keys.contains(where: { !state.inodes.contains($0) }) {
                state.tcpInodes = state.tcpInodes.filter { state.inodes.contains($0.key) }
            }
        }
        // Each target's figures; then who the sockets closing before the next pass belong to.
        let endedAt = monotonicNanoseconds()
        var published: [ObjectIdentifier: NetworkFiguresBox] = [:]
        for (owner, state) in states { published[owner] = NetworkFiguresBox(figures(of: state, at: endedAt)) }
        for namespace in namespaces.values {
            namespace.cookieOwners.removeAll(keepingCapacity: true); namespace.portOwners.removeAll(keepingCapacity: true)
            namespace.targetPorts.removeAll(keepingCapacity: true)
        }
        for (identity, entry) in work {
            guard let namespace = namespaces[identity] else { continue }
            for owner in entry.owners {
                guard let state = states[owner] else { continue }
                for cookie in state.accounting.knownCookies { namespace.cookieOwners[cookie, default: []].append(owner) }
                for port in state.accounting.listeningPorts { namespace.portOwners[port, default: []].append(owner) }
                for socket in state.sockets[identity]?.values ?? [:].values {
                    namespace.targetPorts.insert(TCPAccounting.portKey(family: socket.family, port: socket.localPort))
                }
            }
        }
        // A namespace no target is in any more is let go (its sockets would keep it alive).
        for identity in namespaces.keys where work[identity] == nil { namespaces[identity] = nil }
        mutex.withLock {
            passesDone += 1
            lastPassAt = endedAt
            for (owner, figures) in published where requests[owner] != nil {
                requests[owner]?.figures = figures
                requests[owner]?.sequence = passesDone
                requests[owner]?.passBegan = now
            }
        }
    }

    /// A target's figures after a pass.
    private func figures(of state: TargetState, at now: UInt64) -> NetworkFigures {
        let (connections, rtt) = state.accounting.endPass()
        if state.denied && state.inodes.isEmpty { return NetworkFigures(unreported: NetworkUnreported.noPermission) }
        var figures = NetworkFigures()
        var sent = state.accounting.sentBytes, received = state.accounting.receivedBytes
        figures.source = NetworkSource.tcp
        // A namespace of its own: its interfaces count every protocol, from when perfhud started watching.
        if let namespace = state.rootNamespace ?? state.lastNamespace, namespace != NetworkNamespace.own {
            if state.rootNamespace != nil, let totals = NetworkNamespace.interfaceTotals(of: state.rootPID) {
                if state.interfacesAtStart?.namespace != namespace { state.interfacesAtStart = (namespace, totals.received, totals.sent) }
                if let start = state.interfacesAtStart {
                    (sent, received) = (totals.sent &- min(totals.sent, start.sent), totals.received &- min(totals.received, start.received))
                }
                // Its interfaces leave `lo` out (a peer in the namespace, a sidecar on localhost,
                // is not traffic of the namespace's): what its own TCP sockets carried over it is
                // the target's all the same.
                sent &+= state.accounting.loopbackSent
                received &+= state.accounting.loopbackReceived
                figures.source = NetworkSource.netns
            } else if state.interfacesAtStart != nil, let last = state.previous {
                // Gone: what its namespace counted stays.
                (sent, received) = (last.sent, last.received)
                figures.source = NetworkSource.netns
            }
        }
        // A unit that accounts its IP traffic: systemd's counters, every protocol.
        if let bytes = state.unitBytes, let start = state.unitAtStart {
            (sent, received) = (bytes.sent &- min(bytes.sent, start.sent), bytes.received &- min(bytes.received, start.received))
            figures.source = NetworkSource.unit
        }
        let tcpRead = state.namespaceFailure == nil && state.dumpFailure == nil
        figures.txBytesTotal = figures.source == NetworkSource.netns || tcpRead ? sent : nil
        figures.rxBytesTotal = figures.txBytesTotal == nil ? nil : received
        if tcpRead {
            figures.tcpConnections = Double(connections)
            figures.tcpRTTms = rtt?.atResolution(1000)
            figures.tcpRetransmitsTotal = state.accounting.retransmits
            figures.tcpConnectionsOpenedTotal = state.accounting.opened
        }
        if let last = state.previous, now > last.at {
            let seconds = Double(now - last.at) / 1e9
            // At the figures' resolution (whole bytes, hundredths), as the recording keeps them: the
            // live summary's means are then the report's.
            func rate(_ a: UInt64, _ b: UInt64, _ resolution: Double = 1) -> Double { (Double(a &- min(a, b)) / seconds).atResolution(resolution) }
            if figures.txBytesTotal != nil {
                figures.txBytesPerSecond = rate(sent, last.sent)
                figures.rxBytesPerSecond = rate(received, last.received)
            }
            if tcpRead {
                figures.tcpRetransmitsPerSecond = rate(state.accounting.retransmits, last.retransmits, 100)
                figures.tcpConnectionsOpenedPerSecond = rate(state.accounting.opened, last.opened, 100)
                let segments = state.accounting.dataSegments &- min(state.accounting.dataSegments, last.dataSegments)
                let resent = state.accounting.retransmits &- min(state.accounting.retransmits, last.retransmits)
                figures.tcpRetransmitPercent = segments > 0 ? min(100, Double(resent) / Double(segments) * 100).atResolution(100) : 0
            }
        }
        state.previous = (now, sent, received, state.accounting.retransmits, state.accounting.dataSegments, state.accounting.opened)
        if state.namespaceFailure != nil {
            figures.unreportedReason = NetworkUnreported.namespaceNotEntered
        } else if state.dumpFailure != nil {
            figures.unreportedReason = NetworkUnreported.sockDiagFailed
        } else if (state.hadUDP || state.udpSockets > 0) && figures.source == NetworkSource.tcp {
            state.hadUDP = true
            figures.unreportedReason = NetworkUnreported.udpNotCounted
        } else if state.missedShortConnection && figures.source != NetworkSource.unit {
            figures.unreportedReason = NetworkUnreported.shortConnectionsNotCounted
        } else if state.unitNotAccounted {
            figures.unreportedReason = NetworkUnreported.unitNotAccounted
        } else if state.unitNotRead {
            figures.unreportedReason = NetworkUnreported.unitNotRead
        }
        return figures
    }
}
