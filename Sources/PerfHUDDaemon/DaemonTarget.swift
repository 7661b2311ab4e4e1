import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline
import PerfHUDOutput
import PerfHUDRecordings
#if canImport(Glibc)
import Glibc
#endif

/// One target of the daemon: its processes (`TargetGroup`), its pipeline (`TargetWatcher`), its
/// event socket, its series (`TargetMetrics`, labelled `target="label"`), its warnings.
///
/// A target that goes away keeps its series (`perfhud_target_up` 0, counters as they were) until
/// it has been gone for `--forget-after`; then its series leave the registry. If it comes back,
/// before or after, it continues: the group's totals never go back, and forgotten series are made
/// again.
final class DaemonTarget {
    let spec: TargetSpec
    /// The `target` label, fixed for the target's life.
    let label: String
    /// Found by `--units` (dropped once forgotten), not named by the operator.
    let discovered: Bool
    let resolver: TargetResolver
    /// `--include-children`: each of its processes counts its descendants.
    let includeChildren: Bool
    let group: TargetGroup
    let watcher: TargetWatcher
    private let registry: DaemonMetrics
    /// Nil while forgotten.
    private(set) var metrics: TargetMetrics?
    /// Where its ticks go, in order (`TickFanOut`): its metrics while not forgotten, its journal
    /// entries and the recording once the fan-out attached them.
    private(set) var sinks: [TickSink] = []
    private var journal: TargetJournal?
    private var recording: DaemonRecording?
    var warned = DaemonWarnings()
    var wasUp = false
    /// When the target was last seen going away (CLOCK_MONOTONIC); nil while up or never seen.
    var downSince: UInt64?
    var lastDiscovery = UInt64(0)
    /// Its last tick while it had a process (nil while absent): what the status summaries read.
    var latest: Tick?
    /// When its every figure was last read (CLOCK_MONOTONIC; 0: never), and how many event lines
    /// it had sent by then: between two full reads a tick reads its RSS alone (`DaemonService.tick`).
    var lastFull = UInt64(0)
    var linesAtFull = UInt64(0)
    /// Where the socket is also linked as `PID.sock` (the default directory only).
    var linkDirectory: String?
    /// Names of the socket that stay (`/run/perfhud/UNIT.sock` for a unit labelled otherwise).
    var fixedLinks: [String] = []

    /// Samples a target keeps (the store's least): the daemon shows no history.
    static let historyCapacity = 2

    init(spec: TargetSpec, label: String, discovered: Bool, configuration: DaemonConfiguration, metrics registry: DaemonMetrics,
         directory: ProcessDirectory) throws {
        self.spec = spec
        self.label = label
        self.discovered = discovered
        self.registry = registry
        resolver = try TargetResolver(selector: spec.selector, directory: directory)
        includeChildren = configuration.watch.includeChildren
        group = TargetGroup(includeChildren: configuration.watch.includeChildren, isGroup: spec.selector.isGroup)
        // A unit's bytes are systemd's own where it accounts them (IPAccounting=yes): every protocol.
        if case .unit(let unit) = spec.selector { group.unitNetwork = NetworkWatch(unit: unit) }
        let events = SessionEvents(configuration: configuration.watch.events)
        // No history: only the HUD draws one (its memory graph); a target's figures come from the
        // sample before and the leak fit its own. A full 10-minute ring was ~33 KiB a target.
        watcher = TargetWatcher(source: group, events: events, pid: 0, capacity: DaemonTarget.historyCapacity,
                                fallbackName: "", leak: configuration.watch.leak)
        alerts = configuration.watch.alerts.isEmpty ? nil : AlertTracker(AlertRules(configuration.watch.alerts))
        remember()
    }

    /// `--alert`: which hold, decided at each tick before its sinks see it (`TickFanOut`).
    var alerts: AlertTracker?

    var events: SessionEvents { watcher.events }
    var isUp: Bool { !group.isEmpty }

    /// The structured fields of its journal entries.
    var journalFields: [(name: String, value: String)] {
        var fields = [(name: "PERFHUD_TARGET", value: label)]
        if let first = group.pids.first { fields.append((name: "PERFHUD_TARGET_PID", value: String(first))) }
        if case .unit(let unit) = spec.selector { fields.append((name: "PERFHUD_UNIT", value: unit)) }
        return fields
    }

    /// A --pid or --pidfile target is looked for only while it is missing; a --match or --unit
    /// group is rescanned every few seconds for members that come and go.
    var rescans: Bool {
        switch spec.selector {
        case .pid, .pidfile: return false
        case .match, .unit, .units, .container, .containers, .controlGroup, .pod, .pods: return true
        }
    }

    /// Its series exist again (a forgotten target that came back).
    /// What `perfhud_target_info` says beside `comm` and `pid`: the group a `--match`, `--unit` or
    /// `--container` target is (`match`, `unit`, `container`), and whether each process counts its descendants
    /// (`include_children="true"`), so that `perfhud top` opens the HUD of what the row counts
    /// (`perfhud attach --match PATTERN [--include-children]`).
    static func infoLabels(_ selector: TargetSelector, includeChildren: Bool) -> [(String, String)] {
        // Each said only where it says something: a --pid target's info stays {target, comm, pid}.
        var labels = includeChildren ? [("include_children", "true")] : []
        switch selector {
        case .match(let pattern): labels.append(("match", pattern))
        case .unit(let unit): labels.append(("unit", unit))
        case .container(let given): labels.append(("container", given))
        case .controlGroup(let path): labels.append(("cgroup", path))
        case .pod(let given): labels.append(("pod", given))
        case .pid, .pidfile, .units, .containers, .pods: break
        }
        return labels
    }

    /// What the target was found to be, for `perfhud_target_info` (`TargetMetrics.learnedInfo`):
    /// a container's runtime, full ID and image, as its runtime's record says (`ContainerRecord`).
    /// A pod's container, or a pod, says its `namespace` and `pod` (and the container its
    /// `container` name in the pod), as kube-state-metrics' series do: joinable with them.
    static func learnedLabels(_ resolver: TargetResolver) -> [(String, String)] {
        if let pod = resolver.pod { return [("namespace", pod.namespace), ("pod", pod.name), ("pod_uid", pod.uid)] }
        guard let record = resolver.container else { return [] }
        var labels = [("runtime", record.runtime), ("container_id", record.id)] + (record.image.map { [("image", $0)] } ?? [])
        if let kubernetes = record.kubernetes {
            labels += [("namespace", kubernetes.namespace), ("pod", kubernetes.pod), ("container", kubernetes.container)]
        }
        return labels
    }

    func remember() {
        guard metrics == nil else { return }
        metrics = registry.makeTarget(label: label, infoLabels: Self.infoLabels(spec.selector, includeChildren: includeChildren))
        sinksChanged()
    }

    /// Its series leave the registry.
    func forget() {
        guard let metrics else { return }
        registry.remove(metrics)
        self.metrics = nil
        sinksChanged()
    }

    /// The fan-out's sinks of this target besides its metrics: its journal, and the recording
    /// where the daemon records.
    /// Its rows to the readers of `NAME.feed` beside its event socket (as a session's `--feed`).
    var feed: RowFeed? {
        didSet { sinksChanged() }
    }

    func attach(journal: TargetJournal, recording: DaemonRecording?) {
        self.journal = journal
        self.recording = recording
        sinksChanged()
    }

    var hasJournal: Bool { journal != nil }

    /// The sinks in the order they are handed a tick; the watcher keeps every frame and action
    /// where one of them reads them (the metrics do: their histogram and action counters).
    private func sinksChanged() {
        sinks = [metrics as TickSink?, journal, recording, feed].compactMap { $0 }
        if sinks.readEveryFrame { watcher.keepsEveryFrame = true }
    }

    /// Closes its socket and takes its series away (dropped from the configuration).
    func close() {
        feed = nil
        forget()
        events.stop()
    }
}
