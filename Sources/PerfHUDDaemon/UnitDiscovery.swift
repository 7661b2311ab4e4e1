import PerfHUDSupport

/// `--units PATTERN`: every matching unit under system.slice becomes a target (named after it);
/// one that stops goes down, and is forgotten after `--forget-after` (`TargetForgetting`).
///
/// Also where inotify's reports are acted on, for `--units` and `--unit` targets alike: a unit
/// that starts or stops is looked at again at once rather than at the next discovery interval.
final class UnitDiscovery {
    private let configuration: DaemonConfiguration
    private let roster: TargetRoster
    private let unitWatch: UnitWatch
    private let discovery: TargetDiscovery
    private let sockets: EventSockets
    private let status: StatusReporter
    /// When the units were last looked for (CLOCK_MONOTONIC).
    private var lastScan = UInt64(0)

    init(configuration: DaemonConfiguration, roster: TargetRoster, unitWatch: UnitWatch, discovery: TargetDiscovery,
         sockets: EventSockets, status: StatusReporter) {
        self.configuration = configuration
        self.roster = roster
        self.unitWatch = unitWatch
        self.discovery = discovery
        self.sockets = sockets
        self.status = status
    }

    /// What the loop polls for inotify's events.
    var descriptor: Int32 { unitWatch.descriptor }

    /// Looks for units again once the interval since the last look has passed.
    func scanIfDue(now: UInt64) {
        if now &- lastScan >= unitWatch.rescanInterval(discoveryNanoseconds: configuration.discoveryNanoseconds) { scan(now: now) }
    }

    /// Makes a target of each matching unit not watched yet (up to `--max-targets`).
    func scan(now: UInt64) {
        lastScan = now
        guard !roster.unitPatterns.isEmpty else { return }
        unitWatch.watchUnitsDirectory()
        var seen = Set<String>()
        for pattern in roster.unitPatterns {
            for unit in unitWatch.units(matching: pattern) where seen.insert(unit).inserted {
                guard !roster.targets.contains(where: { $0.label == unit || $0.spec.selector == .unit(unit) }) else { continue }
                if let target = roster.admit(TargetSpec(name: nil, selector: .unit(unit)), label: unit, discovered: true) {
                    try? sockets.open(target, required: false)
                    status.log(.notice, target, "found unit \(unit) (\(pattern))")
                    discovery.discover(target, now: now)
                }
            }
        }
    }

    /// inotify said a unit started or stopped, or units came or went: look at those now.
    func unitsChanged(now: UInt64) {
        guard let (changed, overflowed, unitsCameOrWent) = unitWatch.drain() else { return }
        if unitsCameOrWent { scan(now: now) }
        for target in roster.targets {
            guard case .unit = target.spec.selector else { continue }
            let own = target.resolver.unitEventsFile.map { changed.contains($0) } ?? false
            // A unit that starts makes its group (a new directory): a target that is down looks again.
            if own || overflowed || (unitsCameOrWent && target.group.isEmpty) {
                discovery.discover(target, now: now)
            }
        }
        // Also when no member changed: a unit's group that has just appeared lets its first
        // sender in before its processes are seen (EventReceiver.setControlGroups).
        sockets.shareTargets()
    }
}
