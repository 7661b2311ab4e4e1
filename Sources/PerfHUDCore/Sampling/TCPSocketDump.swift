#if canImport(Glibc)
import Glibc
#endif

/// Asks the kernel for every TCP socket of the calling thread's network namespace, with its
/// `tcp_info` (sock_diag netlink: `InetDiag`): what `ss -ti` reads, without packet capture and
/// without privilege. It scales with the host's sockets, not the target's (issue 33, item 7).
public enum TCPSocketDump {
    /// The sockets of both families, or the errno of what failed.
    public static func sockets() -> Result<[InetDiag.Socket], SystemError> {
        let descriptor = socket(16 /* AF_NETLINK */, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 4 /* NETLINK_SOCK_DIAG */)
        guard descriptor >= 0 else { return .failure(SystemError(errno)) }
        defer { close(descriptor) }
        var all: [InetDiag.Socket] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 8)
        defer { buffer.deallocate() }
        for (sequence, family) in [(UInt32(1), UInt8(AF_INET)), (UInt32(2), UInt8(AF_INET6))] {
            let request = InetDiag.request(family: family, sequence: sequence)
            // struct sockaddr_nl (12 bytes: family, pad, pid 0 = the kernel, groups), which Glibc's module lacks.
            var kernel: (UInt16, UInt16, UInt32, UInt32) = (16, 0, 0, 0)
            let sent = request.withUnsafeBytes { bytes in
                withUnsafePointer(to: &kernel) { address in
                    address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, 12)
                    }
                }
            }
            guard sent == request.count else { return .failure(SystemError(errno)) }
            while true {
                let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
                if count < 0 {
                    if errno == EINTR { continue }
                    return .failure(SystemError(errno))
                }
                let batch = InetDiag.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                all += batch.sockets
                if let error = batch.error { return .failure(SystemError(error)) }
                if batch.done || count == 0 { break }
            }
        }
        return .success(all)
    }
}
