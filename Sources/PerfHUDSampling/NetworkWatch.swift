#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// One target's view of the network monitor (`ProcessSampler.net`): its figures, taken again when
/// a pass has published new ones (once a second), stale past `GPUMonitor.staleNanoseconds`.
public final class NetworkWatch {
    private let monitor: NetworkMonitor
    private var seen: UInt64 = 0
    private var figures = NetworkFiguresBox(NetworkFigures(unreported: NetworkUnreported.notReadYet))
    private let startedAt = monotonicNanoseconds()
    private var pids: [Int32] = []
    private var asked = false
    /// Whether the target's end waits (up to `endWaitNanoseconds`) for a last pass: a HUD's or a
    /// run's last row holds the last bytes; the daemon does not hold its tick for it.
    public var waitsAtEnd = true
    static let endWaitNanoseconds: UInt64 = 500_000_000

    /// The systemd unit whose IP accounting counts the bytes, where it has it on (the daemon's
    /// `--unit` targets: `overlay`).
    public let unit: String?

    public init(monitor: NetworkMonitor = .shared, unit: String? = nil) {
        self.monitor = monitor
        self.unit = unit
        if !monitor.start() { figures = NetworkFiguresBox(NetworkFigures(unreported: NetworkUnreported.noThread)) }
    }

    deinit { monitor.forget(ObjectIdentifier(self)) }

    private static let stale = NetworkFiguresBox(NetworkFigures(unreported: NetworkUnreported.stale))

    /// The figures of the processes `pids()` lists (asked each time a pass has published: the
    /// processes of a tree change).
    package func figures(at now: UInt64, pids: () -> [Int32]) -> NetworkFiguresBox {
        let owner = ObjectIdentifier(self)
        if seen == 0 && !asked {
            self.pids = pids()
            monitor.want(self.pids, unit: unit, for: owner)
            asked = true
        }
        let (next, sequence, passAt, _) = monitor.latest(for: owner, after: seen)
        if let next {
            seen = sequence
            figures = next
            let members = pids()
            if members != self.pids { self.pids = members; monitor.want(members, for: owner) }
        }
        return GPUMonitor.isStale(since: max(passAt, startedAt), at: now) ? Self.stale : figures
    }

    /// A unit's group figures (`figures`, the members' TCP summed) with the unit's bytes in place of
    /// the sockets' where systemd accounts them: every protocol, UDP included.
    public func overlay(_ group: NetworkFiguresBox?, at now: UInt64) -> NetworkFiguresBox? {
        let unitFigures = figures(at: now) { [] }.value
        guard unitFigures.source == NetworkSource.unit else {
            guard let reason = unitFigures.unreportedReason, [NetworkUnreported.unitNotAccounted, NetworkUnreported.unitNotRead].contains(reason),
                  var merged = group?.value, merged.unreportedReason == nil
            else { return group }
            merged.unreportedReason = reason
            return NetworkFiguresBox(merged)
        }
        var merged = group?.value ?? NetworkFigures()
        merged.txBytesTotal = unitFigures.txBytesTotal
        merged.rxBytesTotal = unitFigures.rxBytesTotal
        merged.txBytesPerSecond = unitFigures.txBytesPerSecond
        merged.rxBytesPerSecond = unitFigures.rxBytesPerSecond
        merged.source = NetworkSource.unit
        if merged.unreportedReason == NetworkUnreported.udpNotCounted { merged.unreportedReason = nil }
        return NetworkFiguresBox(merged)
    }

    /// The figures after the target ended: one more pass for its last bytes (where `waitsAtEnd`).
    func figuresAtEnd(at now: UInt64) -> NetworkFiguresBox {
        let owner = ObjectIdentifier(self)
        guard waitsAtEnd, seen != 0 else { return figures }
        let askedAt = monotonicNanoseconds()
        monitor.passSoon()
        let deadline = askedAt &+ Self.endWaitNanoseconds
        // A pass that began before the end may still be under way: the one wanted began after it.
        while monotonicNanoseconds() < deadline {
            let (next, sequence, _, began) = monitor.latest(for: owner, after: seen)
            if let next {
                seen = sequence; figures = next
                if began >= askedAt { break }
            }
            usleep(5_000)
        }
        waitsAtEnd = false   // once
        return figures
    }
}
