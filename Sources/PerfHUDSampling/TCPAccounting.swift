import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// A target's TCP totals from one sock_diag pass to the next (issue 33): each socket's counters are
/// cumulative, so the last values of each are kept and their increases added. A socket that closes
/// leaves the dump, and what it counted stays in the totals: they never go back.
///
/// Totals count from when perfhud started watching: the first pass only notes where each socket
/// stood. A socket first seen later was opened since, and counts from its start (its
/// `bytes_acked` less the 1 its SYN adds).
///
/// A socket is the target's when one of its processes holds it (its inode is in `/proc/PID/fd`), and
/// stays the target's by its cookie once seen: a closed socket still sending its last bytes (FIN_WAIT)
/// has no descriptor. Its end (`closed`, from the kernel's destroy events where perfhud may hear them)
/// adds its final counters; a connection that both opened and closed between two passes is the
/// target's when it was accepted from one of the target's listening ports.
public struct TCPAccounting {
    struct Last { package var acked: UInt64; package var received: UInt64; package var retransmits: UInt32; package var dataSegments: UInt32 }
    private var last: [UInt64: Last] = [:]
    private var next: [UInt64: Last] = [:]
    private var listeningNext = Set<UInt32>()
    /// Sockets known to be the target's that left the dump, and the pass since when: kept a while,
    /// so that their end still finds them (a socket shut down both ways leaves the kernel's tables
    /// at once, while its descriptor stays open until `close`, which sends the destroy event).
    private var vanishedSince: [UInt64: Int] = [:]
    package static let retainedPasses = 30
    public private(set) var passes = 0
    public private(set) var sentBytes: UInt64 = 0
    public private(set) var receivedBytes: UInt64 = 0
    public private(set) var retransmits: UInt64 = 0
    public private(set) var dataSegments: UInt64 = 0
    /// TCP connections the target opened or accepted since perfhud started watching: each socket
    /// first seen after the first pass, and each accepted from its listening ports that closed
    /// before a pass saw it (its destroy event). Listening sockets are not connections.
    public private(set) var opened: UInt64 = 0
    /// What its sockets to a loopback address carried (in `sentBytes` and `receivedBytes` too):
    /// traffic no interface but `lo` sees, which a namespace's own count leaves out.
    public private(set) var loopbackSent: UInt64 = 0
    public private(set) var loopbackReceived: UInt64 = 0
    /// (family << 16 | port) of the target's listening sockets at the last pass.
    public private(set) var listeningPorts = Set<UInt32>()
    private var connections = 0, rttSum = 0.0, rttCount = 0

    public init() {}

    /// The cookies of the sockets known to be the target's (seen in the last pass).
    var knownCookies: Dictionary<UInt64, Last>.Keys { last.keys }
    public func knows(_ cookie: UInt64) -> Bool { last[cookie] != nil }

    package static func portKey(family: UInt8, port: UInt16) -> UInt32 { UInt32(family) << 16 | UInt32(port) }

    /// Starts a pass: `see` each of the target's sockets of the dump, then `endPass`.
    public mutating func beginPass() {
        next.removeAll(keepingCapacity: true)
        listeningNext.removeAll(keepingCapacity: true)
        connections = 0; rttSum = 0; rttCount = 0
    }

    /// One of the target's sockets in this pass's dump.
    public mutating func see(_ socket: InetDiag.Socket) {
        if socket.state == InetDiag.tcpListen {
            listeningNext.insert(Self.portKey(family: socket.family, port: socket.localPort))
            return
        }
        let now = Last(acked: socket.bytesAcked ?? 0, received: socket.bytesReceived ?? 0, retransmits: socket.totalRetransmits ?? 0,
                       dataSegments: socket.dataSegmentsOut ?? 0)
        if passes > 0 && last[socket.cookie] == nil { opened &+= 1 }
        add(now, key: socket.cookie, fresh: passes > 0, loopback: socket.remoteAddress.isLoopback(family: socket.family))
        next[socket.cookie] = now
        vanishedSince[socket.cookie] = nil
        if socket.state == InetDiag.tcpEstablished {
            connections += 1
            if let rtt = socket.rttMicroseconds { rttSum += Double(rtt) / 1000; rttCount += 1 }
        }
    }

    /// Ends a pass. - Returns: the established connections seen and their mean smoothed RTT (ms; nil without one).
    public mutating func endPass() -> (connections: Int, rttMilliseconds: Double?) {
        for (cookie, value) in last where next[cookie] == nil {
            let since = vanishedSince[cookie] ?? passes
            if passes - since < Self.retainedPasses { next[cookie] = value; vanishedSince[cookie] = since } else { vanishedSince[cookie] = nil }
        }
        swap(&last, &next)
        swap(&listeningPorts, &listeningNext)
        passes += 1
        return (connections, rttCount > 0 ? rttSum / Double(rttCount) : nil)
    }

    /// A socket's end (a destroy event: its final counters). - Returns: whether it was the target's
    /// (known by its cookie, or accepted from one of its listening ports since the last pass).
    @discardableResult
    public mutating func closed(_ socket: InetDiag.Socket) -> Bool {
        let now = Last(acked: socket.bytesAcked ?? 0, received: socket.bytesReceived ?? 0, retransmits: socket.totalRetransmits ?? 0,
                       dataSegments: socket.dataSegmentsOut ?? 0)
        let loopback = socket.remoteAddress.isLoopback(family: socket.family)
        if last[socket.cookie] != nil {
            add(now, key: socket.cookie, fresh: true, loopback: loopback)
            last[socket.cookie] = nil
            vanishedSince[socket.cookie] = nil
            return true
        }
        // A connection has a peer: the listening socket itself (closed at the end) has none.
        guard passes > 0, socket.remotePort != 0, listeningPorts.contains(Self.portKey(family: socket.family, port: socket.localPort)) else { return false }
        add(now, key: socket.cookie, fresh: true, loopback: loopback)
        opened &+= 1
        return true
    }

    /// Adds the increase of a socket's counters since the last pass; one not seen before counts from
    /// its start where `fresh` (opened since perfhud watches), else from where it stands (the first pass).
    private mutating func add(_ now: Last, key: UInt64, fresh: Bool, loopback: Bool) {
        let before = last[key] ?? (fresh ? Last(acked: min(1, now.acked), received: 0, retransmits: 0, dataSegments: 0) : now)
        // Counters that went back (a cookie of a new socket: never, but a forged reply may say so): from the new start.
        let sent = now.acked >= before.acked ? now.acked - before.acked : now.acked &- min(1, now.acked)
        let received = now.received >= before.received ? now.received - before.received : now.received
        sentBytes &+= sent
        receivedBytes &+= received
        if loopback { loopbackSent &+= sent; loopbackReceived &+= received }
        retransmits &+= UInt64(now.retransmits >= before.retransmits ? now.retransmits - before.retransmits : now.retransmits)
        dataSegments &+= UInt64(now.dataSegments >= before.dataSegments ? now.dataSegments - before.dataSegments : now.dataSegments)
    }

    /// The inodes of the sockets `pid` holds open (`/proc/PID/fd/N` → `socket:[INODE]`). - Returns:
    /// false where its descriptors may not be read (or it is gone).
    @discardableResult
    public static func socketInodes(of pid: Int32, into inodes: inout Set<UInt64>) -> Bool {
        guard case .success(let directory) = SystemCall.open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY) else { return false }
        defer { close(directory) }
        return withUnsafeTemporaryAllocation(byteCount: listingBufferBytes, alignment: 8) { buffer in
            socketInodes(directory: directory, buffer: buffer, into: &inodes)
        }
    }

    /// Room for the entries of one getdents64 call: 150 descriptors or so; more take more calls.
    public static let listingBufferBytes = 4096

    /// The same from `directory`, a process's `/proc/PID/fd` kept open (`O_DIRECTORY`) and read again
    /// from its start, its entries into `buffer` (`listingBufferBytes`, the caller's, shared by every
    /// listing): the network thread's, once a second for every target, which saves an open, an fstat
    /// and a close a pass. Like a kept-open /proc file, it fails once its process is gone, whoever has
    /// the PID now. - Returns: false when it could not be read.
    ///
    /// getdents64 by hand, not opendir: a DIR carries a 32 KiB buffer of its own, resident for each
    /// kept-open listing (6.4 MiB of a daemon watching 200 targets, measured with heaptrack). On
    /// bytes: each entry's name is handed to readlinkat(2) where the kernel wrote it, and the link is
    /// matched in place (a String per entry, per link and per prefix made this ~9,400 instructions a
    /// target a pass, most of the daemon's work between scrapes).
    public static func socketInodes(directory: Int32, buffer: UnsafeMutableRawBufferPointer, into inodes: inout Set<UInt64>) -> Bool {
        guard lseek(directory, 0, SEEK_SET) == 0, let base = buffer.baseAddress else { return false }
        let prefix: [UInt8] = Array("socket:[".utf8)
        // struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then the name.
        let lengthOffset = 16, nameOffset = 19
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { link in
            while true {
                let filled = perfhud_getdents(directory, base, UInt(buffer.count))
                if filled == 0 { return true }
                if filled < 0 { return false }   // gone (ENOENT, ESRCH) or refused (EACCES): errno says which
                var offset = 0
                while offset + nameOffset < filled {
                    let record = base.advanced(by: offset)
                    let length = Int(record.loadUnaligned(fromByteOffset: lengthOffset, as: UInt16.self))
                    guard length > nameOffset else { return false }   // never from the kernel; not a loop forever
                    offset += length
                    let name = record.advanced(by: nameOffset).assumingMemoryBound(to: CChar.self)
                    if name.pointee == CChar(UInt8(ascii: ".")) { continue }   // "." and "..": no descriptors
                    let count = readlinkat(directory, name, UnsafeMutableRawPointer(link.baseAddress!).assumingMemoryBound(to: CChar.self), link.count)
                    guard count > prefix.count + 1, link[count - 1] == UInt8(ascii: "]"),
                          (0..<prefix.count).allSatisfy({ link[$0] == prefix[$0] }) else { continue }
                    var inode: UInt64 = 0
                    var digits = true
                    for index in prefix.count..<(count - 1) {
                        let digit = link[index] &- UInt8(ascii: "0")
                        guard digit < 10, inode < UInt64.max / 10 else { digits = false; break }
                        inode = inode * 10 + UInt64(digit)
                    }
                    if digits { inodes.insert(inode) }
                }
            }
        }
    }
}
