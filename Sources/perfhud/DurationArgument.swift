import ArgumentParser
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDRender
import PerfHUDOutput

/// A duration on the command line: `250ms`, `2s`, `10m`, `1m30s`.
struct DurationArgument: ExpressibleByArgument {
    let nanoseconds: UInt64
    /// As typed, for a message about it.
    let text: String
    init?(argument: String) {
        guard let value = DurationText.nanoseconds(argument) else { return nil }
        nanoseconds = value
        text = argument
    }
    init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
        text = DurationText.format(nanoseconds: nanoseconds)
    }
    var defaultValueDescription: String { DurationText.format(nanoseconds: nanoseconds) }
}

/// `HOST:PORT` on the command line (`--statsd-udp`, `--metrics-listen`); an IPv6 address in
/// brackets, as a URL writes it: `[::1]:9469`, `[::]:9469`. Without them (`::1:9469`) it is
/// refused: which colon ends the address?
struct HostAndPort: ExpressibleByArgument {
    let host: String
    let port: UInt16
    init?(argument: String) {
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
    var defaultValueDescription: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension SessionConfiguration.Output: ExpressibleByArgument {}
extension HUDStyle.Position: ExpressibleByArgument {}
extension AcceptPolicy: ExpressibleByArgument {}
extension FrameMode: ExpressibleByArgument {}
