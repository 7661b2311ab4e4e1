import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline

/// Finds each target's processes: at the start, every `--discovery` interval for a target that is
/// down or whose group changes members (`--match`, `--unit`), and when inotify says its unit
/// started or stopped.
///
/// A missing target is normal: it is looked for again, and why it is missing is logged once per
/// reason. Coming up is noticed here; going away is seen by the tick (`TickFanOut`).
final class TargetDiscovery {
    private let configuration: DaemonConfiguration
    /// Shared with the planner: one reader of /proc for the daemon.
    private let directory: ProcessDirectory
    private let unitWatch: UnitWatch
    private let sockets: EventSockets
    private let status: StatusReporter

    init(configuration: DaemonConfiguration, directory: ProcessDirectory, unitWatch: UnitWatch, sockets: EventSockets, status: StatusReporter) {
        self.configuration = configuration
        self.directory = directory
        self.unitWatch = unitWatch
        self.sockets = sockets
        self.status = status
    }

    /// Looks for the targets due a look (down, or a group that rescans). - Returns: whether any target's members changed.
    func discoverDue(_ targets: [DaemonTarget], now: UInt64) -> Bool {
        var changed = false
        for target in targets where now &- target.lastDiscovery >= configuration.discoveryNanoseconds && (target.group.isEmpty || target.rescans) {
            changed = discover(target, now: now) || changed
        }
        return changed
    }

    /// Looks for a target's processes. - Returns: whether its members changed.
    @discardableResult
    func discover(_ target: DaemonTarget, now: UInt64) -> Bool {
        target.lastDiscovery = now
        let found = target.resolver.resolve()
        unitWatch.watchGroup(of: target)
        switch found {
        case .success(let pids):
            let changed = target.group.take(found: pids, wholeGroup: target.resolver.wholeGroupPath,
                                            retiresMissing: target.spec.selector.followsMembers,
                                            directory: directory, open: { pid in
                let sampler = try ProcessSampler(pid: pid, includeChildren: configuration.watch.includeChildren, directory: directory)
                sampler.gpu = GPUWatch()   // one GPU thread for all targets (`GPUMonitor.shared`)
                let net = NetworkWatch()   // one network thread for all targets (`NetworkMonitor.shared`)
                net.waitsAtEnd = false     // a member's end does not hold the daemon's tick
                sampler.net = net
                return sampler
            }, failed: { error in status.noteReason(target, (error as? PerfHUDError)?.message ?? "\(error)") })
            if changed && !target.group.isEmpty {
                target.remember()
                target.metrics?.learnedInfo = DaemonTarget.learnedLabels(target.resolver)
                sockets.follow(target)
                status.follow(target)
                if !target.wasUp {
                    status.log(.notice, target, "target is up: \(TargetGroup.listing(target.group.pids)) (\(TerminalText.escaped(target.group.commandName)))")
                }
                target.wasUp = true
                target.downSince = nil
                target.warned.targetFound()
                status.publish()
            }
            return changed
        case .failure(let reason):
            // Its PID given to another process is a warning: a dashboard would otherwise wait for the target.
            if target.group.isEmpty { status.noteReason(target, reason.message, level: target.resolver.pidReused ? .warning : .notice) }
            return false
        }
    }
}
