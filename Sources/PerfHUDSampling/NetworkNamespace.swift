import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// One network namespace as the network monitor asks it: a sock_diag socket made in it (a dump
/// answers for the namespace its socket was made in), and, where perfhud may (`CAP_NET_ADMIN`), a
/// socket that hears the kernel's destroy events of its TCP sockets: a closing socket's final
/// counters, for the connections shorter than a pass. Made on the monitor's thread, entering the
/// namespace with `setns` for the moment it takes (a thread's own namespace changes, not the
/// process's); dropped when no target is in it any more (the sockets would keep it alive).
package final class NetworkNamespace {
    package let identity: UInt64
    package let dump: TCPSocketDump
    /// The destroy events' socket; -1 where perfhud may not hear them.
    package private(set) var destroyEvents: Int32 = -1
    /// Whether destroy events were lost (the socket's buffer overflowed) since the last pass.
    var lostDestroyEvents = false
    /// Who a socket that closes between passes belongs to: by its cookie, or the listening port it was accepted from.
    var cookieOwners: [UInt64: [ObjectIdentifier]] = [:]
    var portOwners: [UInt32: [ObjectIdentifier]] = [:]
    /// The local ports of the targets' TCP sockets at the last pass (family << 16 | port): a peer's
    /// socket that closes with one of them as its remote port was the other end of a target's.
    var targetPorts = Set<UInt32>()

    // sock_diag's multicast groups (linux/sock_diag.h): SKNLGRP_INET_TCP_DESTROY 1, SKNLGRP_INET6_TCP_DESTROY 3.
    private static let tcpDestroyGroups: [Int32] = [1, 3]

    /// The namespace's sockets, made in the calling thread's namespace. - Throws: `SystemError`.
    package init(identity: UInt64) throws {
        self.identity = identity
        dump = try TCPSocketDump()
        destroyEvents = Self.subscribe()
    }

    deinit { if destroyEvents >= 0 { close(destroyEvents) } }

    /// A socket bound to the TCP destroy groups, or -1 (not permitted: root or CAP_NET_ADMIN only).
    private static func subscribe() -> Int32 {
        let descriptor = socket(16 /* AF_NETLINK */, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                                4 /* NETLINK_SOCK_DIAG */)
        guard descriptor >= 0 else { return -1 }
        // Bound first (port id 0: the kernel picks one): an unbound socket's memberships are taken
        // and never delivered to.
        var local: (UInt16, UInt16, UInt32, UInt32) = (16, 0, 0, 0)
        let bound = withUnsafePointer(to: &local) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, 12) }
        }
        guard bound == 0 else { close(descriptor); return -1 }
        for group in tcpDestroyGroups {
            var value = group
            // SOL_NETLINK 270, NETLINK_ADD_MEMBERSHIP 1
            guard setsockopt(descriptor, 270, 1, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                close(descriptor)
                return -1
            }
        }
        // Room for a burst of closes (about 350 bytes an event) between two reads: 4 MiB where allowed.
        var room: Int32 = 4 << 20
        if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &room, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        }
        return descriptor
    }

    /// Reads every destroy event waiting, giving each closed socket to `each`.
    package func drainDestroyEvents(into buffer: UnsafeMutableRawBufferPointer, _ each: (InetDiag.Socket) -> Void) {
        guard destroyEvents >= 0 else { return }
        while true {
            let count: Int
            switch SystemCall.receive(destroyEvents, into: buffer, flags: Int32(MSG_DONTWAIT)) {
            case .success(let received): count = received
            case .failure(let error) where error.code == ENOBUFS: lostDestroyEvents = true; continue
            case .failure: return
            }
            if count == 0 { return }
            InetDiag.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count])).sockets.forEach(each)
        }
    }

    /// The identity of `pid`'s network namespace (the inode of `/proc/PID/ns/net`), or the errno.
    package static func identity(of pid: Int32) -> Result<UInt64, SystemError> {
        var status = stat()
        guard stat("/proc/\(pid)/ns/net", &status) == 0 else { return .failure(SystemError(errno)) }
        return .success(UInt64(status.st_ino))
    }

    /// The identity of perfhud's own namespace.
    package static let own: UInt64 = (try? identity(of: getpid()).get()) ?? 0

    /// Makes the namespace of `pid` (identity `identity`): directly where it is perfhud's own, else
    /// entering it on this thread and coming back. - Throws: `SystemError` (EPERM: may not enter).
    package static func make(identity: UInt64, via pid: Int32) throws -> NetworkNamespace {
        if identity == own { return try NetworkNamespace(identity: identity) }
        let home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)
        guard home >= 0 else { throw SystemError(errno) }
        defer { close(home) }
        let there = open("/proc/\(pid)/ns/net", O_RDONLY | O_CLOEXEC)
        guard there >= 0 else { throw SystemError(errno) }
        defer { close(there) }
        guard perfhud_enter_network_namespace(there) == 0 else { throw SystemError(errno) }
        let made = Result { try NetworkNamespace(identity: identity) }
        // Back home: a thread left in the target's namespace would ask it about every other target.
        precondition(perfhud_enter_network_namespace(home) == 0, "perfhud-net could not return to its network namespace")
        return try made.get()
    }

    /// The bytes received and sent by the interfaces of `pid`'s namespace but loopback (`/proc/PID/net/dev`).
    static func interfaceTotals(of pid: Int32) -> (received: UInt64, sent: UInt64)? {
        guard case .success(let bytes) = KeptOpenFile.contents(of: "/proc/\(pid)/net/dev") else { return nil }
        return parseInterfaceTotals(String(decoding: bytes, as: UTF8.self))
    }

    /// `/proc/net/dev`'s text summed over interfaces but `lo`: received bytes (the first number after
    /// the name) and sent bytes (the ninth).
    package static func parseInterfaceTotals(_ text: String) -> (received: UInt64, sent: UInt64)? {
        var received: UInt64 = 0, sent: UInt64 = 0, found = false
        for line in text.split(separator: "\n").dropFirst(2) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: " ")
            let numbers = line[line.index(after: colon)...].split(separator: " ")
            guard numbers.count >= 9, let rx = UInt64(numbers[0]), let tx = UInt64(numbers[8]) else { continue }
            found = true
            if name == "lo" { continue }
            received &+= rx; sent &+= tx
        }
        return found ? (received, sent) : nil
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return s
    }
}
