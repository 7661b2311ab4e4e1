#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling

/// `--containers PATTERN`: every running container whose name matches becomes a target (named
/// after it, up to `--max-targets`); one that stops goes down, and is forgotten after
/// `--forget-after` (`TargetForgetting`), as `--units` does with units. `--pods PATTERN` does the
/// same with the node's Kubernetes pods (`NAMESPACE/POD`, `PodLookup`).
///
/// Running containers are found by their control groups (one walk of the tree a discovery
/// interval, `ContainerLookup.runningGroups`); the runtimes' records, which give the names, are
/// read again only when a container ID not seen before is running: on a node whose containers do
/// not change, a look costs the walk alone.
final class ContainerDiscovery {
    private let configuration: DaemonConfiguration
    private let roster: TargetRoster
    private let discovery: TargetDiscovery
    private let sockets: EventSockets
    private let status: StatusReporter
    private let lookup = ContainerLookup()
    private let podLookup = PodLookup()
    /// The records of the containers seen running, by ID (kept while they run).
    private var known: [String: ContainerRecord] = [:]
    /// Running containers no record names (a runtime whose records perfhud does not read), by ID:
    /// said once each, and not read for again until another container starts.
    private var unnamed = Set<String>()
    private var lastRunningCount = 0
    private var lastScan = UInt64(0)

    init(configuration: DaemonConfiguration, roster: TargetRoster, discovery: TargetDiscovery, sockets: EventSockets, status: StatusReporter) {
        self.configuration = configuration
        self.roster = roster
        self.discovery = discovery
        self.sockets = sockets
        self.status = status
    }

    /// Looks for containers again once the discovery interval since the last look has passed.
    func scanIfDue(now: UInt64) {
        if now &- lastScan >= configuration.discoveryNanoseconds { scan(now: now) }
    }

    /// Makes a target of each running container that matches a pattern and is not watched yet.
    func scan(now: UInt64) {
        lastScan = now
        scanPods(now: now)
        guard !roster.containerPatterns.isEmpty else { return }
        var running = lookup.runningGroups()
        // Rootless podman's on a v1 or hybrid host: no group, their first process in a PID file.
        for record in lookup.runningWithoutGroup() where running[record.id] == nil {
            running[record.id] = ""
            known[record.id] = record
        }
        // containerd's own containers (`ctr run`): named by IDs of their own, in groups their spec names.
        for task in ContainerLookup.containerdTasks() where running[task.id] == nil {
            guard let record = known[task.id] ?? ContainerLookup.containerdRecord(namespace: task.namespace, id: task.id),
                  let group = lookup.group(of: record) else { continue }
            running[task.id] = group
            known[task.id] = record
        }
        if running.keys.contains(where: { known[$0] == nil && !unnamed.contains($0) }) {
            for record in lookup.records() where running[record.id] != nil { known[record.id] = record }
            for (id, group) in running where known[id] == nil && unnamed.insert(id).inserted {
                // Watched under its ID where a pattern takes that (`*`), never under a guessed name.
                known[id] = lookup.unnamed(id: id, group: group)
                status.log.notice("container \(id.prefix(12)) (\(TerminalText.escaped(group))) runs, but no runtime's record read names it: known by its ID")
            }
        }
        known = known.filter { running[$0.key] != nil }
        unnamed = unnamed.filter { running[$0] != nil }
        // One of them named since (its runtime wrote its record after its group was made): read again.
        if known.values.contains(where: { $0.names.isEmpty }), running.count != lastRunningCount {
            for record in lookup.records() where running[record.id] != nil { known[record.id] = record }
        }
        lastRunningCount = running.count
        // Oldest name first is not known; by name, so the order of admission is the same each time.
        for record in known.values.sorted(by: { $0.label < $1.label }) {
            let names = record.names.isEmpty ? [record.label] : record.names
            guard let pattern = roster.containerPatterns.first(where: { pattern in names.contains { fnmatch(pattern, $0, 0) == 0 } }) else { continue }
            let name = record.label
            guard !roster.targets.contains(where: { $0.label == name || $0.spec.selector == .container(name) }) else { continue }
            if let target = roster.admit(TargetSpec(name: nil, selector: .container(name)), label: name, discovered: true) {
                try? sockets.open(target, required: false)
                status.log(.notice, target, "found container \(TerminalText.escaped(name)) (\(record.runtime), \(pattern))")
                discovery.discover(target, now: now)
            }
        }
    }

    /// Makes a target of each running pod that matches a `--pods` pattern and is not watched yet.
    private func scanPods(now: UInt64) {
        guard !roster.podPatterns.isEmpty else { return }
        let running = podLookup.runningGroups()
        guard !running.isEmpty else { return }
        for pod in podLookup.pods().sorted(by: { $0.label < $1.label }) where running[pod.uid] != nil {
            guard let pattern = roster.podPatterns.first(where: { fnmatch($0, pod.label, 0) == 0 }) else { continue }
            guard !roster.targets.contains(where: { $0.label == pod.label || $0.spec.selector == .pod(pod.label) }) else { continue }
            if let target = roster.admit(TargetSpec(name: nil, selector: .pod(pod.label)), label: pod.label, discovered: true) {
                try? sockets.open(target, required: false)
                status.log(.notice, target, "found pod \(TerminalText.escaped(pod.label)) (\(pattern))")
                discovery.discover(target, now: now)
            }
        }
    }
}
