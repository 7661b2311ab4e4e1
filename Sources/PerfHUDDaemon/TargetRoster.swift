import PerfHUDSupport
import PerfHUDSampling

/// The targets the daemon watches now, and who may join them.
///
/// One list that every part of the daemon reads (the loop, discovery, the sockets, the status),
/// held in one place so that admission (`--max-targets`) is decided once for targets named at the
/// start, added on reload and found by `--units` alike.
final class TargetRoster {
    private let configuration: DaemonConfiguration
    private let metrics: DaemonMetrics
    private let log: DaemonLog
    /// The daemon's one libproc2 reader, which every target's resolver shares (all on the daemon's
    /// loop): a resolver of its own kept a `--match` target a context holding every process's
    /// command line after its first look.
    private let directory: ProcessDirectory
    /// In the order they were admitted: the first is the single target, and the status lists them so.
    var targets: [DaemonTarget] = []
    /// `--units` patterns (command line and configuration file).
    var unitPatterns: [String] = []
    /// `--containers` patterns (command line and configuration file).
    var containerPatterns: [String] = []
    /// `--pods` patterns (command line and configuration file).
    var podPatterns: [String] = []
    /// Whether anything is looked for by a pattern (`--units`, `--containers`, `--pods`).
    var hasPatterns: Bool { !unitPatterns.isEmpty || !containerPatterns.isEmpty || !podPatterns.isEmpty }
    /// Targets and units refused past `--max-targets`, by label: each logged and counted once
    /// (forgotten on reload, when the operator may have made room).
    var refused = Set<String>()

    init(configuration: DaemonConfiguration, metrics: DaemonMetrics, log: DaemonLog, directory: ProcessDirectory) {
        self.configuration = configuration
        self.metrics = metrics
        self.log = log
        self.directory = directory
    }

    /// Watches one more target, unless `--max-targets` are watched already.
    @discardableResult
    func admit(_ spec: TargetSpec, label: String, discovered: Bool) -> DaemonTarget? {
        guard targets.count < configuration.maxTargets else {
            if refused.insert(label).inserted {
                metrics.targetRefused()
                log.warning("refusing target \(label) (\(spec.selector.description)): --max-targets \(configuration.maxTargets) are watched already")
            }
            return nil
        }
        do {
            let target = try DaemonTarget(spec: spec, label: label, discovered: discovered, configuration: configuration,
                                          metrics: metrics, directory: directory)
            targets.append(target)
            return target
        } catch {
            log.error("target \(label): \((error as? PerfHUDError)?.message ?? "\(error)")")
            return nil
        }
    }
}
