/// A target's network figures as a tick carries them (`Sample.net`, `Report.netBox`): made once a
/// second (a pass of the network monitor) and shared by reference, as `GPUFiguresBox` is.
public final class NetworkFiguresBox: Equatable {
    public let value: NetworkFigures
    public init(_ value: NetworkFigures) { self.value = value }
    public static func == (a: NetworkFiguresBox, b: NetworkFiguresBox) -> Bool { a === b || a.value == b.value }
}

/// The network figures of one target at one tick (`Report.net`; docs/network.md): unknown is nil,
/// never 0; a target with no sockets reads a measured 0.
public struct NetworkFigures: Equatable {
    /// Bytes sent and received each second over the last pass, and since perfhud started watching.
    public var txBytesPerSecond: Double?
    public var rxBytesPerSecond: Double?
    public var txBytesTotal: UInt64?
    public var rxBytesTotal: UInt64?
    /// Established TCP connections of the target now.
    public var tcpConnections: Double?
    /// Retransmitted TCP segments each second over the last pass, and since perfhud started watching.
    public var tcpRetransmitsPerSecond: Double?
    public var tcpRetransmitsTotal: UInt64?
    /// Retransmitted segments over the segments that carried data, in the last pass (percent).
    public var tcpRetransmitPercent: Double?
    /// The mean smoothed round-trip time of the established connections (ms).
    public var tcpRTTms: Double?
    /// Where the bytes come from (`NetworkSource`): `tcp`, `netns` or `unit`.
    public var source: String?
    /// Why a figure is unknown (or part of the traffic is not counted: UDP); nil when all is counted.
    public var unreportedReason: String?

    public init() {}

    /// All the figures unknown, for `reason`.
    public init(unreported reason: String) { unreportedReason = reason }

    /// Two processes' figures as one target's (the daemon's groups): sums; the RTT weighted by connections.
    public static func sum(_ a: NetworkFiguresBox?, _ b: NetworkFiguresBox?) -> NetworkFiguresBox? {
        guard let boxA = a, let boxB = b else { return a ?? b }
        let (a, b) = (boxA.value, boxB.value)
        func add<T: AdditiveArithmetic>(_ x: T?, _ y: T?) -> T? { x.flatMap { x in y.map { x + $0 } } }
        var result = a
        result.txBytesPerSecond = add(a.txBytesPerSecond, b.txBytesPerSecond)
        result.rxBytesPerSecond = add(a.rxBytesPerSecond, b.rxBytesPerSecond)
        result.txBytesTotal = add(a.txBytesTotal, b.txBytesTotal)
        result.rxBytesTotal = add(a.rxBytesTotal, b.rxBytesTotal)
        result.tcpConnections = add(a.tcpConnections, b.tcpConnections)
        result.tcpRetransmitsPerSecond = add(a.tcpRetransmitsPerSecond, b.tcpRetransmitsPerSecond)
        result.tcpRetransmitsTotal = add(a.tcpRetransmitsTotal, b.tcpRetransmitsTotal)
        result.tcpRetransmitPercent = max(a.tcpRetransmitPercent ?? -1, b.tcpRetransmitPercent ?? -1)
        if result.tcpRetransmitPercent == -1 { result.tcpRetransmitPercent = nil }
        let (ca, cb) = (a.tcpConnections ?? 0, b.tcpConnections ?? 0)
        switch (a.tcpRTTms, b.tcpRTTms) {
        case let (x?, y?) where ca + cb > 0: result.tcpRTTms = (x * ca + y * cb) / (ca + cb)
        case let (x, y): result.tcpRTTms = x ?? y
        }
        result.source = a.source ?? b.source
        result.unreportedReason = a.unreportedReason ?? b.unreportedReason
        return NetworkFiguresBox(result)
    }
}

/// Where a target's network bytes come from (`net_source`): recorded as a code.
public enum NetworkSource {
    /// The target's TCP sockets (sock_diag): TCP payload bytes; UDP not counted.
    public static let tcp = "tcp"
    /// The interfaces of the target's own network namespace (`/proc/PID/net/dev`): every protocol, headers included.
    public static let netns = "netns"
    /// systemd's IP accounting of the target's unit (`IPAccounting=yes`, the daemon's `--unit`): every protocol.
    public static let unit = "unit"
    static let codes = ReasonCodes([tcp, netns, unit])
}

/// Why a target's network figures are unknown or incomplete (`net_unreported_reason`): a fixed list
/// (`codes`, append only), recorded as `GPUUnreported`'s is.
public enum NetworkUnreported {
    public static let notReadYet = "network not read yet"
    public static let stale = "stale: the network was not read for over 3 s"
    public static let udpNotCounted = "UDP not counted: the kernel keeps no bytes per UDP socket"
    public static let noPermission = "no permission to read the target's sockets (/proc/PID/fd)"
    public static let namespaceNotEntered = "the target's network namespace may not be entered: its TCP sockets are not read"
    public static let sockDiagFailed = "the kernel's socket list (sock_diag) could not be read"
    public static let noThread = "network not read: no thread for it"
    public static let unitNotAccounted = "the unit's IP accounting is off (IPAccounting=no): its TCP is counted, not its UDP"

    static let codes = ReasonCodes([notReadYet, stale, udpNotCounted, noPermission, namespaceNotEntered, sockDiagFailed, noThread,
                                    unitNotAccounted])
}
