#if canImport(Glibc)
import Glibc
#endif
/// The kernel's answers about TCP sockets (sock_diag netlink, `SOCK_DIAG_BY_FAMILY` with
/// `INET_DIAG_INFO`: each socket's `struct tcp_info`, as `ss -ti` reads it), parsed: for the network
/// figures per process (issue 33). Written by hand: no Swift package speaks sock_diag, and the
/// request and reply are a few fixed C structs (linux/inet_diag.h, linux/tcp.h; offsets below).
///
/// The reply is untrusted input in the sense that matters here (a kernel of another version, a
/// truncated read): every length is checked; a message or attribute that does not fit ends the parse.
public enum InetDiag {
    /// One socket: its inode (what `/proc/PID/fd` links to: `socket:[INODE]`; 0 in a destroy event,
    /// the socket already closed), its cookie (the kernel's id of it for its whole life: what a
    /// socket is known by once its descriptor is closed), its local port, and `tcp_info`'s counters,
    /// nil where the kernel's `tcp_info` is too short to hold them (older kernels) or not asked for.
    public struct Socket: Equatable {
        public var inode: UInt64
        public var state: UInt8
        public var family: UInt8 = 0
        public var localPort: UInt16 = 0
        public var cookie: UInt64 = 0
        /// The rest of the kernel's id of the socket (`inet_diag_sockid`), as it gave it: what an exact
        /// look-up of this one socket sends back (`lookupRequest`).
        public var remotePort: UInt16 = 0
        public var localAddress = RawAddress(), remoteAddress = RawAddress()
        public var interface: UInt32 = 0
        /// Its owner (`idiag_uid`: the user whose process made it), also in a destroy event.
        public var uid: UInt32 = 0
        public var bytesAcked: UInt64?
        public var bytesReceived: UInt64?
        public var totalRetransmits: UInt32?
        public var segmentsOut: UInt32?
        /// Segments that carried data (`tcpi_data_segs_out`): what a retransmitted share is of.
        public var dataSegmentsOut: UInt32?
        /// Smoothed round-trip time, microseconds.
        public var rttMicroseconds: UInt32?
    }

    /// 16 bytes of an address as the kernel wrote them (network order, IPv4 in the first 4).
    public struct RawAddress: Equatable {
        package var first: UInt64 = 0, second: UInt64 = 0

        /// A loopback address: 127.0.0.0/8 (an IPv4 socket's), ::1, or ::ffff:127.x.x.x.
        package func isLoopback(family: UInt8) -> Bool {
            withUnsafeBytes(of: self) { bytes in
                if family == UInt8(AF_INET) { return bytes[0] == 127 }
                if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
                return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
            }
        }
    }

    /// What a batch of netlink messages said: its sockets, and whether the dump is done (NLMSG_DONE,
    /// or an error: `error` then holds the kernel's errno).
    public struct Batch {
        public var sockets: [Socket] = []
        public var done = false
        public var error: Int32?
    }

    // netlink and sock_diag constants (linux/netlink.h, linux/sock_diag.h, linux/inet_diag.h).
    static let headerSize = 16            // struct nlmsghdr
    static let messageSize = 72           // struct inet_diag_msg
    static let inodeOffset = 68, cookieOffset = 44, localPortOffset = 4, uidOffset = 64
    public static let tcpEstablished: UInt8 = 1, tcpListen: UInt8 = 10, tcpTimeWait: UInt8 = 6
    public static let tcpProtocol: UInt8 = 6, udpProtocol: UInt8 = 17
    /// Every state but LISTEN and TIME_WAIT (no bytes of their own: a time-wait socket is a small
    /// stand-in whose counters went with the full socket).
    public static let connectedStates: UInt32 = 0xfff & ~UInt32(1 << tcpListen) & ~UInt32(1 << tcpTimeWait)
    public static let listeningStates = UInt32(1 << tcpListen)
    public static let allStates: UInt32 = 0xfff
    static let typeDone: UInt16 = 3, typeError: UInt16 = 2
    static let sockDiagByFamily: UInt16 = 20
    static let attributeInfo: UInt16 = 2  // INET_DIAG_INFO
    // struct tcp_info (linux/tcp.h): where each counter is.
    static let rttOffset = 68, totalRetransOffset = 100, bytesAckedOffset = 120, bytesReceivedOffset = 128, segmentsOutOffset = 136
    static let dataSegmentsOutOffset = 156

    /// The request: a dump of `family`'s (AF_INET 2, AF_INET6 10) sockets of `protocol` (TCP 6,
    /// UDP 17) in `states` (a bit per state), with `tcp_info` when `info`.
    public static func request(family: UInt8, sequence: UInt32, protocol: UInt8 = tcpProtocol, states: UInt32 = connectedStates,
                               info: Bool = true) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerSize + 56)
        func put32(_ value: UInt32, at offset: Int) { withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<offset + 4, with: $0) } }
        func put16(_ value: UInt16, at offset: Int) { withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<offset + 2, with: $0) } }
        put32(UInt32(bytes.count), at: 0)
        put16(sockDiagByFamily, at: 4)
        put16(0x0001 | 0x0300, at: 6)        // NLM_F_REQUEST | NLM_F_DUMP
        put32(sequence, at: 8)
        bytes[16] = family
        bytes[17] = `protocol`
        bytes[18] = info ? 1 << (UInt8(attributeInfo) - 1) : 0
        put32(states, at: 20)
        return bytes
    }

    /// The request for one socket, by its id (ports, addresses, interface, cookie) as a dump gave it:
    /// answered with that socket and its `tcp_info`, or an error (ENOENT: it is gone). Costs the
    /// kernel a hash look-up, where a dump walks every socket of the namespace.
    public static func lookupRequest(_ socket: Socket, sequence: UInt32) -> [UInt8] {
        var bytes = request(family: socket.family, sequence: sequence, states: allStates)
        bytes[6] = 0x01; bytes[7] = 0                         // NLM_F_REQUEST alone: not a dump
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: socket.localPort.bigEndian, toByteOffset: 24, as: UInt16.self)
            raw.storeBytes(of: socket.remotePort.bigEndian, toByteOffset: 26, as: UInt16.self)
            raw.storeBytes(of: socket.localAddress.first, toByteOffset: 28, as: UInt64.self)
            raw.storeBytes(of: socket.localAddress.second, toByteOffset: 36, as: UInt64.self)
            raw.storeBytes(of: socket.remoteAddress.first, toByteOffset: 44, as: UInt64.self)
            raw.storeBytes(of: socket.remoteAddress.second, toByteOffset: 52, as: UInt64.self)
            raw.storeBytes(of: socket.interface.littleEndian, toByteOffset: 60, as: UInt32.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: socket.cookie).littleEndian, toByteOffset: 64, as: UInt32.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: socket.cookie >> 32).littleEndian, toByteOffset: 68, as: UInt32.self)
        }
        return bytes
    }

    /// Parses one `recv` of answers to look-ups: each message's sequence number, and its socket, or
    /// nil for an error (ENOENT: the socket is gone). - Returns: how many answers it held.
    @discardableResult
    public static func parseAnswers(_ data: UnsafeRawBufferPointer, _ each: (_ sequence: UInt32, _ socket: Socket?) -> Void) -> Int {
        var offset = 0, answers = 0
        while offset + headerSize <= data.count {
            let length = Int(data.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let type = data.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self).littleEndian
            let sequence = data.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self).littleEndian
            guard length >= headerSize, offset + length <= data.count else { break }
            if type == typeError {
                answers += 1
                each(sequence, nil)
            } else if type == sockDiagByFamily {
                answers += 1
                // One message parsed as a dump's: the same bounds.
                each(sequence, parse(UnsafeRawBufferPointer(rebasing: data[offset..<offset + length])).sockets.first)
            }
            offset += (length + 3) & ~3
        }
        return answers
    }

    /// Parses one `recv` of a dump.
    public static func parse(_ data: UnsafeRawBufferPointer) -> Batch {
        var batch = Batch()
        var offset = 0
        while offset + headerSize <= data.count {
            let length = Int(data.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            let type = data.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self).littleEndian
            guard length >= headerSize, offset + length <= data.count else { break }
            if type == typeDone { batch.done = true; break }
            if type == typeError {
                batch.done = true
                // A negative errno (0: the acknowledgement of a request, not an error); any 32 bits read.
                if length >= headerSize + 4 {
                    let code = Int32(littleEndian: data.loadUnaligned(fromByteOffset: offset + headerSize, as: Int32.self))
                    if code != 0 { batch.error = code == .min ? .max : abs(code) }
                }
                break
            }
            if type == sockDiagByFamily, length >= headerSize + messageSize {
                let body = offset + headerSize
                var socket = Socket(inode: UInt64(data.loadUnaligned(fromByteOffset: body + inodeOffset, as: UInt32.self).littleEndian),
                                    state: data[body + 1])
                socket.family = data[body]
                socket.localPort = UInt16(bigEndian: data.loadUnaligned(fromByteOffset: body + localPortOffset, as: UInt16.self))
                // The cookie: two host-order 32-bit halves, low first (`sock_diag_save_cookie`).
                let low = UInt64(UInt32(littleEndian: data.loadUnaligned(fromByteOffset: body + cookieOffset, as: UInt32.self)))
                let high = UInt64(UInt32(littleEndian: data.loadUnaligned(fromByteOffset: body + cookieOffset + 4, as: UInt32.self)))
                socket.cookie = high << 32 | low
                socket.remotePort = UInt16(bigEndian: data.loadUnaligned(fromByteOffset: body + localPortOffset + 2, as: UInt16.self))
                socket.localAddress = RawAddress(first: data.loadUnaligned(fromByteOffset: body + 8, as: UInt64.self),
                                                 second: data.loadUnaligned(fromByteOffset: body + 16, as: UInt64.self))
                socket.remoteAddress = RawAddress(first: data.loadUnaligned(fromByteOffset: body + 24, as: UInt64.self),
                                                  second: data.loadUnaligned(fromByteOffset: body + 32, as: UInt64.self))
                socket.interface = UInt32(littleEndian: data.loadUnaligned(fromByteOffset: body + 40, as: UInt32.self))
                socket.uid = UInt32(littleEndian: data.loadUnaligned(fromByteOffset: body + uidOffset, as: UInt32.self))
                var attribute = body + messageSize
                let end = offset + length
                while attribute + 4 <= end {
                    let attributeLength = Int(data.loadUnaligned(fromByteOffset: attribute, as: UInt16.self).littleEndian)
                    let attributeType = data.loadUnaligned(fromByteOffset: attribute + 2, as: UInt16.self).littleEndian & 0x3fff
                    guard attributeLength >= 4, attribute + attributeLength <= end else { break }
                    if attributeType == attributeInfo {
                        let info = attribute + 4, size = attributeLength - 4
                        func field<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T? {
                            at + MemoryLayout<T>.size <= size ? T(littleEndian: data.loadUnaligned(fromByteOffset: info + at, as: T.self)) : nil
                        }
                        socket.rttMicroseconds = field(rttOffset, UInt32.self)
                        socket.totalRetransmits = field(totalRetransOffset, UInt32.self)
                        socket.bytesAcked = field(bytesAckedOffset, UInt64.self)
                        socket.bytesReceived = field(bytesReceivedOffset, UInt64.self)
                        socket.segmentsOut = field(segmentsOutOffset, UInt32.self)
                        socket.dataSegmentsOut = field(dataSegmentsOutOffset, UInt32.self)
                    }
                    attribute += (attributeLength + 3) & ~3
                }
                batch.sockets.append(socket)
            }
            offset += (length + 3) & ~3
        }
        return batch
    }
}
