import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP with `--config`: the file is read again and the targets follow it.
///
/// Targets added start, targets removed are dropped at once, targets kept keep their series and
/// counters. All or nothing: a file with an error, or labels that would clash, changes nothing
/// (logged), so a typo never stops the watching of a host.
final class ConfigurationReload {
    private let configuration: DaemonConfiguration
    private let planner: TargetPlanner
    private let roster: TargetRoster
    private let sockets: EventSockets
    private let discovery: TargetDiscovery
    private let units: UnitDiscovery
    private let containers: ContainerDiscovery
    private let status: StatusReporter

    init(configuration: DaemonConfiguration, planner: TargetPlanner, roster: TargetRoster, sockets: EventSockets,
         discovery: TargetDiscovery, units: UnitDiscovery, containers: ContainerDiscovery, status: StatusReporter) {
        self.configuration = configuration
        self.planner = planner
        self.roster = roster
        self.sockets = sockets
        self.discovery = discovery
        self.units = units
        self.containers = containers
        self.status = status
    }

    /// Re-reads `--config` (nothing without one).
    func reload() {
        guard let path = configuration.configPath else { return }
        let log = status.log
        let specs: [TargetSpec]
        let planned: [(TargetSpec, String)]
        let wanted: [TargetSpec]
        do {
            specs = try TargetsFile.read(path)
            wanted = (configuration.targets + specs).filter { !$0.isPattern }
            planned = try planner.plan(wanted, keeping: roster.targets.filter { !$0.discovered && wanted.contains($0.spec) })
        } catch let error as PerfHUDError {
            log.error("\(error.message); the configuration stays as it was")
            return
        } catch {
            log.error("\(error); the configuration stays as it was")
            return
        }
        roster.unitPatterns = TargetPlanner.patterns(configuration.targets + specs)
        roster.containerPatterns = TargetPlanner.containerPatterns(configuration.targets + specs)
        roster.podPatterns = TargetPlanner.podPatterns(configuration.targets + specs)
        var removed: [DaemonTarget] = []
        for target in roster.targets {
            // A found target stays while a pattern of its kind still matches it.
            var patterns = roster.unitPatterns
            if case .container = target.spec.selector { patterns = roster.containerPatterns }
            if case .pod = target.spec.selector { patterns = roster.podPatterns }
            let stays = target.discovered ? patterns.contains { fnmatch($0, target.label, 0) == 0 } : wanted.contains(target.spec)
            if !stays { removed.append(target) }
        }
        for target in removed {
            target.close()
            status.log(.notice, target, "target dropped: no longer in \(path)")
        }
        roster.targets.removeAll { target in removed.contains { $0 === target } }
        roster.refused.removeAll()
        let now = monotonicNanoseconds()
        for (spec, label) in planned {
            guard let target = roster.admit(spec, label: label, discovered: false) else { continue }
            try? sockets.open(target, required: false)
            status.log(.notice, target, "target added from \(path)")
            discovery.discover(target, now: now)
        }
        units.scan(now: now)
        containers.scan(now: now)
        sockets.shareTargets()
        log.notice("reloaded \(path): \(StatusReporter.count(roster.targets.count))")
        status.publish()
    }
}
