#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// A `/metrics` endpoint to read over plain HTTP: `http://HOST[:PORT][/PATH]` (an IPv6 address
/// in brackets; the path `/metrics` unless one is given). Fetching is one HTTP/1.0 GET on a new
/// connection (HTTP/1.0: the answer is never chunked), bounded in time and size, so that a
/// daemon that stalls or a server that is not one costs `perfhud top` a refresh, not its keys
/// for long.
public struct MetricsEndpoint: Equatable {
    public let host: String
    public let port: UInt16
    public let path: String
    /// As the user wrote it (for messages).
    public let text: String

    /// The longest wait for one answer, connection included.
    public static let timeoutMilliseconds: Int32 = 2000
    /// A bigger answer is not a perfhud daemon's (256 targets are a few MiB).
    public static let maximumBytes = 64 << 20

    /// nil when `text` is not an http URL with a host.
    public init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        let rest = text.dropFirst(7)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count > 1 ? parts[1] : nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == "@" || $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } ?? false }) else { return nil }
        if let portText {
            guard let port = UInt16(portText), port > 0 else { return nil }
            self.port = port
        } else {
            self.port = 80
        }
        guard !path.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? true }) else { return nil }
        self.host = String(host)
        self.path = path.isEmpty || path == "/" ? "/metrics" : String(path)
        self.text = text
    }

    public enum Failure: Error, Equatable {
        /// Nothing listens, or nothing answers (connection refused, no route, timed out).
        case noAnswer(String)
        /// Something answered, but not with metrics (an HTTP error, not HTTP, too big).
        case badAnswer(String)

        public var reason: String {
            switch self {
            case .noAnswer(let why), .badAnswer(let why): return why
            }
        }
    }

    /// The body of a 200 answer to GET.
    public func fetch() -> Result<[UInt8], Failure> {
        let deadline = monotonicNanoseconds() &+ UInt64(Self.timeoutMilliseconds) * 1_000_000
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.noAnswer("cannot resolve \(TerminalText.escaped(host)): " + String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var lastError = Failure.noAnswer("connection refused")
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let current = address {
            address = current.pointee.ai_next
            switch connect(to: current.pointee, deadline: deadline) {
            case .success(let descriptor):
                defer { close(descriptor) }
                return exchange(on: descriptor, deadline: deadline)
            case .failure(let error): lastError = error
            }
        }
        return .failure(lastError)
    }

    private func connect(to address: addrinfo, deadline: UInt64) -> Result<Int32, Failure> {
        let descriptor = socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), address.ai_protocol)
        guard descriptor >= 0 else { return .failure(.noAnswer(String(cString: strerror(errno)).lowercased())) }
        if case .failure(let failure) = SystemCall.connect(descriptor, to: address.ai_addr, length: address.ai_addrlen) {
            let error = failure.description
            close(descriptor)
            return .failure(.noAnswer(error.lowercased()))
        }
        guard wait(descriptor, for: Int16(POLLOUT), until: deadline) else { close(descriptor); return .failure(.noAnswer("timed out")) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { close(descriptor); return .failure(.noAnswer(String(cString: strerror(error)).lowercased())) }
        return .success(descriptor)
    }

    private func exchange(on descriptor: Int32, deadline: UInt64) -> Result<[UInt8], Failure> {
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(hostHeader)\r\nAccept: text/plain\r\nUser-Agent: perfhud-top\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count {
            guard wait(descriptor, for: Int16(POLLOUT), until: deadline) else { return .failure(.noAnswer("timed out")) }
            switch request[sent...].withUnsafeBytes({ SystemCall.send(descriptor, $0, flags: Int32(MSG_NOSIGNAL)) }) {
            case .success(let written): sent += written
            case .failure(.wouldBlock): continue          // poll said writable, the socket disagreed: wait again
            case .failure(let error): return .failure(.noAnswer(error.description.lowercased()))
            }
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            guard wait(descriptor, for: Int16(POLLIN), until: deadline) else { return .failure(.noAnswer("timed out")) }
            let count: Int
            switch buffer.withUnsafeMutableBytes({ SystemCall.receive(descriptor, into: $0) }) {
            case .success(let received): count = received
            case .failure(.wouldBlock): continue
            case .failure(let error): return .failure(.noAnswer(error.description.lowercased()))
            }
            if count == 0 { break }
            answer += buffer[0..<count]
            guard answer.count <= Self.maximumBytes else { return .failure(.badAnswer("an answer of more than \(Self.maximumBytes >> 20) MiB")) }
        }
        return Self.body(ofResponse: answer)
    }

    /// The body of an HTTP response when its status is 200; the `Content-Length` it gives, when
    /// it gives one, is what is taken.
    package static func body(ofResponse answer: [UInt8]) -> Result<[UInt8], Failure> {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = answer.indices.first(where: { answer[$0...].starts(with: separator) }) else {
            return .failure(.badAnswer(answer.isEmpty ? "an empty answer" : "not an HTTP answer"))
        }
        let head = String(decoding: answer[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let status = head.first?.split(separator: " ", maxSplits: 2) ?? []
        guard status.count >= 2, status[0].hasPrefix("HTTP/1.") else { return .failure(.badAnswer("not an HTTP answer")) }
        guard status[1] == "200" else {
            return .failure(.badAnswer("HTTP " + TerminalText.escaped(status.dropFirst().joined(separator: " "), maxLength: 60)))
        }
        var body = Array(answer[(end + 4)...])
        for line in head.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length",
                  let length = Int(parts[1].trimmingCharacters(in: " \t")) else { continue }
            if length < body.count { body.removeLast(body.count - length) }
        }
        return .success(body)
    }

    private func wait(_ descriptor: Int32, for events: Int16, until deadline: UInt64) -> Bool {
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { return false }
            var slot = [pollfd(fd: descriptor, events: events, revents: 0)]
            let result = SystemCall.poll(&slot, timeoutMilliseconds: Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000)))
            if case .success(let ready) = result, ready > 0 { return true }
            if case .failure = result { return false }
        }
    }
}

private extension Substring {
    func trimmingCharacters(in blanks: String) -> String {
        String(drop { blanks.contains($0) }.reversed().drop { blanks.contains($0) }.reversed())
    }
}
