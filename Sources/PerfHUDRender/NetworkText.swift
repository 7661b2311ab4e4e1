import PerfHUDSampling

/// The network as the HUD's details line shows it: `net ↑ 10.7 MiB/s ↓ 2.7 MiB/s tcp 7 retr 3/s
/// rtt 0.3ms` (sent, received, established connections, retransmitted segments a second — in red
/// past `retransmitAlarmPercent` of the data segments —, the mean smoothed RTT). Pure.
package enum NetworkText {
    /// Past this share of the data segments sent, retransmits are a problem worth a look (the
    /// alert `PerfhudTCPRetransmits` uses the same 1 %).
    static let retransmitAlarmPercent = 1.0

    /// The details line's field, and whether it is past a limit; nil while there is nothing to say.
    package static func details(_ net: NetworkFigures, paint: Palette) -> (text: String, alarm: Bool)? {
        if net.unreportedReason == NetworkUnreported.stale { return ("net " + paint.yellow("stale"), false) }
        guard let sent = net.txBytesPerSecond, let received = net.rxBytesPerSecond else {
            // Before the second pass there is no rate: the field appears with it.
            return nil
        }
        var text = "net ↑ " + DetailsLine.rate(sent) + " ↓ " + DetailsLine.rate(received)
        var alarm = false
        if let connections = net.tcpConnections {
            text += " tcp " + DetailsLine.count(connections)
            if let retransmits = net.tcpRetransmitsPerSecond, retransmits > 0 {
                let retr = "retr " + DetailsLine.count(retransmits) + "/s"
                alarm = (net.tcpRetransmitPercent ?? 0) > retransmitAlarmPercent
                text += " " + (alarm ? paint.red(paint.bold(retr)) : retr)
            }
            if let rtt = net.tcpRTTms { text += " rtt " + milliseconds(rtt) }
        }
        if net.unreportedReason == NetworkUnreported.udpNotCounted { text += paint.dim(" +udp not counted") }
        return (text, alarm)
    }

    /// `0.3ms`, `12ms`, `1.2s`.
    package static func milliseconds(_ value: Double) -> String {
        if value >= 1000 { return String(format1: value / 1000) + "s" }
        return (value < 9.95 ? String(format1: value) : String(value.rounded().clampedInt)) + "ms"
    }
}
