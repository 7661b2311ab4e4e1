#if canImport(Glibc)
import Glibc
#endif

public struct HTTPServerError: Error, CustomStringConvertible {
    public var description: String
}

/// A minimal HTTP/1.1 server for `GET /metrics`, driven by the daemon's own poll loop.
///
/// Every socket is non-blocking and every connection has a deadline and bounded buffers, so a
/// slow or malformed client costs a slot, never a stall of the sampling. Written by hand rather
/// than with Hummingbird: one endpoint does not justify SwiftNIO's build minutes on CI, nor a
/// second event loop beside the sampler's.
public final class MetricsHTTPServer {
    public struct Response {
        public var status: Int
        public var contentType: String
        public var body: String
        public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: String) {
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    struct Connection {
        var input: [UInt8] = []
        var output: [UInt8] = []
        var written = 0
        var deadline: UInt64
        var responding: Bool { !output.isEmpty }
    }

    public let listener: Int32
    public let address: String
    private var connections: [Int32: Connection] = [:]
    static let maxConnections = 32
    static let maxRequestBytes = 8192
    static let timeoutNanoseconds: UInt64 = 10_000_000_000

    /// Listens on `host:port` (IPv4). The corresponding C calls are `socket`, `bind`, `listen`.
    public init(host: String, port: UInt16) throws {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &socketAddress.sin_addr) == 1 else {
            throw HTTPServerError(description: "--listen wants an IPv4 address, got \(host)")
        }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(descriptor, 64) == 0 else {
            let error = SystemError.current
            close(descriptor)
            throw HTTPServerError(description: "cannot listen on \(host):\(port): \(error)")
        }
        listener = descriptor
        address = "\(host):\(port)"
    }

    deinit {
        for descriptor in connections.keys { close(descriptor) }
        close(listener)
    }

    /// The descriptors to poll: the listener and each connection, for reading or writing.
    public func descriptors() -> [pollfd] {
        var result = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for (descriptor, connection) in connections {
            result.append(pollfd(fd: descriptor, events: Int16(connection.responding ? POLLOUT : POLLIN), revents: 0))
        }
        return result
    }

    /// Handles what `poll` reported for `descriptor`; `respond` answers a request path.
    public func handle(_ descriptor: pollfd, now: UInt64, respond: (String) -> Response) {
        guard descriptor.revents != 0 else { return }
        if descriptor.fd == listener { accept(now: now); return }
        guard var connection = connections[descriptor.fd] else { return }
        if connection.responding {
            let remaining = connection.output.count - connection.written
            let sent = connection.output.withUnsafeBytes {
                send(descriptor.fd, $0.baseAddress! + connection.written, remaining, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { connection.written += sent }
            if (sent < 0 && errno != EAGAIN && errno != EINTR) || connection.written == connection.output.count {
                drop(descriptor.fd); return
            }
            connections[descriptor.fd] = connection
            return
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor.fd, &buffer, buffer.count, 0)
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { drop(descriptor.fd); return }
        if count > 0 { connection.input += buffer[0..<count] }
        if let response = Self.request(connection.input, respond: respond) {
            connection.output = Self.serialize(response, head: Self.isHead(connection.input))
            connection.input = []
        }
        connections[descriptor.fd] = connection
    }

    /// Closes connections past their deadline.
    public func expire(now: UInt64) {
        for (descriptor, connection) in connections where now > connection.deadline { drop(descriptor) }
    }

    private func accept(now: UInt64) {
        while true {
            let descriptor = Glibc.accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            if connections.count >= Self.maxConnections {
                let busy = Self.serialize(Response(status: 503, body: "too many connections\n"), head: false)
                _ = busy.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                close(descriptor)
                continue
            }
            connections[descriptor] = Connection(deadline: now + Self.timeoutNanoseconds)
        }
    }

    private func drop(_ descriptor: Int32) {
        connections[descriptor] = nil
        close(descriptor)
    }

    /// A response once the request head is complete (or hopeless); nil while more is needed.
    static func request(_ input: [UInt8], respond: (String) -> Response) -> Response? {
        guard let headEnd = find([13, 10, 13, 10], in: input) ?? find([10, 10], in: input) else {
            return input.count > maxRequestBytes ? Response(status: 431, body: "request header too large\n") : nil
        }
        let head = String(decoding: input[0..<headEnd], as: UTF8.self)
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return Response(status: 400, body: "bad request\n") }
        guard parts[0] == "GET" || parts[0] == "HEAD" else { return Response(status: 405, body: "method not allowed\n") }
        let path = String(parts[1].split(separator: "?", maxSplits: 1).first ?? "")
        return respond(path)
    }

    static func isHead(_ input: [UInt8]) -> Bool { input.starts(with: Array("HEAD ".utf8)) }

    static func serialize(_ response: Response, head: Bool) -> [UInt8] {
        let reasons = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                       431: "Request Header Fields Too Large", 503: "Service Unavailable"]
        let body = Array(response.body.utf8)
        var text = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Status")\r\n"
        text += "Content-Type: \(response.contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(text.utf8) + (head ? [] : body)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
