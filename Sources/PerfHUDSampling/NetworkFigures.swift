/// A target's network figures as a tick carries them (`Sample.net`, `TargetFigures.netBox`): made once a
/// second (a pass of the network monitor) and shared by reference (`FiguresBox`).
public typealias NetworkFiguresBox = FiguresBox<NetworkFigures>

/// The network figures of one target at one tick (`TargetFigures.net`; docs/network.md): unknown is nil,
/// never 0; a target with no sockets reads a measured 0.
public struct NetworkFigures: Equatable, Sendable {
    /// Bytes sent and received each second over the last pass, and since perfhud started watching.
    public var txBytesPerSecond: Double?
    public var rxBytesPerSecond: Double?
    public var txBytesTotal: UInt64?
    public var rxBytesTotal: UInt64?
    /// Established TCP connections of the target now.
    public var tcpConnections: Double?
    /// TCP connections opened (connected or accepted) each second over the last pass, and since
    /// perfhud started watching (`TCPAccounting.opened`).
    public var tcpConnectionsOpenedPerSecond: Double?
    public var tcpConnectionsOpenedTotal: UInt64?
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
        result.tcpConnectionsOpenedPerSecond = add(a.tcpConnectionsOpenedPerSecond, b.tcpConnectionsOpenedPerSecond)
        result.tcpConnectionsOpenedTotal = add(a.tcpConnectionsOpenedTotal, b.tcpConnectionsOpenedTotal)
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
