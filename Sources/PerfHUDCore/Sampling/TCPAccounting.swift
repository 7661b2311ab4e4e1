#if canImport(Glibc)
import Glibc
#endif

/// A target's TCP totals from one sock_diag dump to the next (issue 33): each socket's counters are
/// cumulative, so the last values of each are kept and their increases added. A socket that closes
/// leaves the dump, and what it counted stays in the totals: they never go back.
///
/// Totals count from when perfhud started watching: the first pass only notes where each socket
/// stood. A socket first seen later was opened since, and counts from its start (its
/// `bytes_acked` less the 1 its SYN adds).
public struct TCPAccounting {
    private struct Last { var acked: UInt64; var received: UInt64; var retransmits: UInt32 }
    private var last: [UInt64: Last] = [:]
    private var passes = 0
    public private(set) var sentBytes: UInt64 = 0
    public private(set) var receivedBytes: UInt64 = 0
    public private(set) var retransmits: UInt64 = 0

    public init() {}

    /// One pass: the dump's sockets, of which the target's are `inodes`. Returns its established
    /// connections and their mean smoothed RTT (ms; nil without one).
    public mutating func update(_ sockets: [InetDiag.Socket], inodes: Set<UInt64>) -> (connections: Int, rttMilliseconds: Double?) {
        var next: [UInt64: Last] = [:]
        var connections = 0, rttSum = 0.0, rttCount = 0
        for socket in sockets where inodes.contains(socket.inode) && socket.inode != 0 {
            let now = Last(acked: socket.bytesAcked ?? 0, received: socket.bytesReceived ?? 0, retransmits: socket.totalRetransmits ?? 0)
            let before = last[socket.inode] ?? (passes == 0 ? now : Last(acked: min(1, now.acked), received: 0, retransmits: 0))
            // Counters that went back (an inode reused by a new socket): counted from the new one's start.
            sentBytes &+= now.acked >= before.acked ? now.acked - before.acked : now.acked &- min(1, now.acked)
            receivedBytes &+= now.received >= before.received ? now.received - before.received : now.received
            retransmits &+= UInt64(now.retransmits >= before.retransmits ? now.retransmits - before.retransmits : now.retransmits)
            next[socket.inode] = now
            if socket.state == 1 {   // TCP_ESTABLISHED
                connections += 1
                if let rtt = socket.rttMicroseconds { rttSum += Double(rtt) / 1000; rttCount += 1 }
            }
        }
        last = next
        passes += 1
        return (connections, rttCount > 0 ? rttSum / Double(rttCount) : nil)
    }

    /// The inodes of the sockets `pid` holds open (`/proc/PID/fd/N` → `socket:[INODE]`).
    public static func socketInodes(of pid: Int32, into inodes: inout Set<UInt64>) {
        var buffer = [UInt8](repeating: 0, count: 64)
        forEachEntry(in: "/proc/\(pid)/fd") { descriptors, name in
            let count = readlinkat(descriptors, name, &buffer, buffer.count)
            guard count > 9 else { return }
            let target = buffer[..<count]
            guard target.starts(with: Array("socket:[".utf8)), target.last == UInt8(ascii: "]"),
                  let inode = UInt64(String(decoding: target.dropFirst(8).dropLast(), as: UTF8.self)) else { return }
            inodes.insert(inode)
        }
    }
}
