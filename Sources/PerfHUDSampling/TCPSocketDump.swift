#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// A sock_diag netlink socket, asked for the sockets of the network namespace it was made in
/// (`InetDiag`): what `ss -ti` reads, without packet capture and without privilege. A dump scales
/// with the namespace's sockets, not the target's (issue 33, item 7), so the network monitor makes
/// one a pass and namespace, for every target in it. Kept open from pass to pass (one socket a
/// namespace; closing it lets a namespace whose processes are gone go too).
public final class TCPSocketDump {
    public let descriptor: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
    private var sequence: UInt32 = 0

    /// A socket of the calling thread's network namespace. - Throws: `SystemError` (EMFILE where
    /// the descriptors have run out).
    public init() throws {
        descriptor = socket(16 /* AF_NETLINK */, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 4 /* NETLINK_SOCK_DIAG */)
        // Every stored property is set by now, so a throw from here runs `deinit`, which frees the
        // buffer: freed here as well, it was freed twice (the daemon aborted, "double free or
        // corruption", once its descriptors ran out).
        guard descriptor >= 0 else { throw SystemError(errno) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        buffer.deallocate()
    }

    /// The sockets of `protocol` in `states`, both families (`info`: with `tcp_info`), given one at a
    /// time to `each` as they are parsed; or the errno of what failed.
    public func dump(protocol: UInt8 = InetDiag.tcpProtocol, states: UInt32 = InetDiag.connectedStates, info: Bool = true,
                     _ each: (InetDiag.Socket) -> Void) -> SystemError? {
        for family in [UInt8(AF_INET), UInt8(AF_INET6)] {
            sequence &+= 1
            let request = InetDiag.request(family: family, sequence: sequence, protocol: `protocol`, states: states, info: info)
            if let error = Self.sendToKernel(request, on: descriptor) { return error }
            while true {
                let count: Int
                switch SystemCall.receive(descriptor, into: buffer) {
                case .success(let received): count = received
                case .failure(let error): return error
                }
                let batch = InetDiag.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                batch.sockets.forEach(each)
                if let error = batch.error {
                    // A kernel without IPv6 (or without UDP's diag module) has no such sockets: none, not a failure.
                    if family == UInt8(AF_INET6) && (error == EAFNOSUPPORT || error == ENOENT) { break }
                    return SystemError(error)
                }
                if batch.done || count == 0 { break }
            }
        }
        return nil
    }

    /// Asks for each of `sockets` by its id (`InetDiag.lookupRequest`), 64 at a time (their answers
    /// fit the socket's receive buffer), giving each its answer: the socket now, or nil (gone).
    public func lookup(_ sockets: [InetDiag.Socket], _ each: (_ index: Int, _ now: InetDiag.Socket?) -> Void) -> SystemError? {
        var start = 0
        while start < sockets.count {
            let end = min(sockets.count, start + 64)
            let first = sequence &+ 1
            var requests: [UInt8] = []
            requests.reserveCapacity((end - start) * 72)
            for index in start..<end {
                sequence &+= 1
                requests += InetDiag.lookupRequest(sockets[index], sequence: sequence)
            }
            if let error = Self.sendToKernel(requests, on: descriptor) { return error }
            var answered = 0
            while answered < end - start {
                let count: Int
                switch SystemCall.receive(descriptor, into: buffer) {
                case .success(let received): count = received
                case .failure(let error): return error
                }
                if count == 0 { break }
                answered += InetDiag.parseAnswers(UnsafeRawBufferPointer(rebasing: buffer[..<count])) { answer, socket in
                    let index = start + Int(answer &- first)
                    if index >= start && index < end { each(index, socket) }
                }
            }
            start = end
        }
        return nil
    }

    /// Sends one netlink request to the kernel: nil, or the errno of what failed (a request sent in
    /// part is a failure: the kernel takes a datagram whole or not at all).
    private static func sendToKernel(_ request: [UInt8], on descriptor: Int32) -> SystemError? {
        // struct sockaddr_nl (12 bytes: family, pad, pid 0 = the kernel, groups), which Glibc's module lacks.
        var kernel: (UInt16, UInt16, UInt32, UInt32) = (16, 0, 0, 0)
        let sent = request.withUnsafeBytes { bytes in
            withUnsafePointer(to: &kernel) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { SystemCall.send(descriptor, bytes, to: $0, length: 12) }
            }
        }
        switch sent {
        case .success(let count): return count == request.count ? nil : SystemError(EMSGSIZE)
        case .failure(let error): return error
        }
    }

    /// Every TCP socket (connected states) of the calling thread's namespace, in one array.
    public static func sockets() -> Result<[InetDiag.Socket], SystemError> {
        do {
            let dump = try TCPSocketDump()
            var all: [InetDiag.Socket] = []
            if let failure = dump.dump({ all.append($0) }) { return .failure(failure) }
            return .success(all)
        } catch {
            return .failure(error as? SystemError ?? SystemError(EINVAL))
        }
    }
}
