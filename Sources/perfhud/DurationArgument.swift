import ArgumentParser
import PerfHUDCore

/// A duration on the command line: `250ms`, `2s`, `10m`.
struct DurationArgument: ExpressibleByArgument {
    let nanoseconds: UInt64
    init?(argument: String) {
        guard let value = DurationText.nanoseconds(argument) else { return nil }
        nanoseconds = value
    }
    init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    var defaultValueDescription: String { DurationText.format(nanoseconds: nanoseconds) }
}

/// `HOST:PORT` on the command line (`--statsd-udp`, `--metrics-listen`).
struct HostAndPort: ExpressibleByArgument {
    let host: String
    let port: UInt16
    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":"), let port = UInt16(argument[argument.index(after: colon)...]), port > 0 else { return nil }
        host = String(argument[..<colon])
        self.port = port
        if host.isEmpty { return nil }
    }
    var defaultValueDescription: String { "\(host):\(port)" }
}

extension SessionConfiguration.Output: ExpressibleByArgument {}
extension HUDStyle.Position: ExpressibleByArgument {}
extension AcceptPolicy: ExpressibleByArgument {}
extension FrameMode: ExpressibleByArgument {}
