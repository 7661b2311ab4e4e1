import PerfHUDSupport

/// `--forget-after`: a target gone that long loses its series, so a host's churn (units that come
/// and go, PIDs that are not coming back) does not grow the exposition for ever.
///
/// A target named by the operator stays watched (it may come back, and its series are made again);
/// a unit `--units` found is dropped altogether.
final class TargetForgetting {
    private let configuration: DaemonConfiguration
    private let roster: TargetRoster
    private let status: StatusReporter

    init(configuration: DaemonConfiguration, roster: TargetRoster, status: StatusReporter) {
        self.configuration = configuration
        self.roster = roster
        self.status = status
    }

    /// Forgets the targets down for `--forget-after` by `now`.
    func forgetTargets(now: UInt64) {
        var dropped = false
        for target in roster.targets {
            guard !target.isUp, let since = target.downSince, now &- since >= configuration.forgetAfterNanoseconds else { continue }
            target.downSince = nil
            target.forget()
            status.log(.notice, target, "target forgotten: gone for \(configuration.forgetAfterNanoseconds / 1_000_000_000) s, its series removed")
            if target.discovered { target.close(); dropped = true }
        }
        if dropped {
            roster.targets.removeAll { $0.discovered && $0.metrics == nil }
            status.publish()
        }
    }
}
