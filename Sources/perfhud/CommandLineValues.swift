import PerfHUDSupport

/// A duration on the command line: `250ms`, `2s`, `10m`, `1m30s`.
struct DurationValue: ReadableValue {
    let nanoseconds: UInt64
    init?(commandLine text: String) {
        guard let value = DurationText.nanoseconds(text) else { return nil }
        nanoseconds = value
    }
    var seconds: Double { Double(nanoseconds) / 1e9 }
}

/// `HOST:PORT` on the command line (`--statsd-udp`, `--metrics-listen`); an IPv6 address in
/// brackets, as a URL writes it: `[::1]:9469`, `[::]:9469`. Without them (`::1:9469`) it is
/// refused: which colon ends the address?
struct HostAndPort: ReadableValue {
    let host: String
    let port: UInt16
    init?(commandLine argument: String) {
        guard let colon = argument.lastIndex(of: ":"), let port = UInt16(argument[argument.index(after: colon)...]), port > 0 else { return nil }
        var host = argument[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = host.dropFirst().dropLast()
            guard host.contains(":") else { return nil }
        } else if host.contains(":") || host.contains("[") || host.contains("]") {
            return nil
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }
}
