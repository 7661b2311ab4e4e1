import PerfHUDSupport
import PerfHUDSampling

/// Gives each target the daemon is told of its `target` label, before any is watched.
///
/// Labels are planned together, at the start and at each reload, because a clash must refuse the
/// whole configuration (a usage error at the start, the old configuration kept on SIGHUP) rather
/// than leave two targets exporting the same series.
struct TargetPlanner {
    /// Where an unnamed target's command name is read (shared with discovery).
    let directory: ProcessDirectory

    /// Each new target's label: its name, else its unit's, else its command name now (else what
    /// names it: the PID, the pidfile's name, the pattern). Two that would share one are refused.
    /// - Parameter kept: targets already watched, which keep their labels (a reload).
    func plan(_ specs: [TargetSpec], keeping kept: [DaemonTarget]) throws -> [(TargetSpec, String)] {
        var taken = Dictionary(kept.map { ($0.label, $0.spec) }, uniquingKeysWith: { first, _ in first })
        var planned: [(TargetSpec, String)] = []
        for spec in specs where !kept.contains(where: { $0.spec == spec }) {
            if planned.contains(where: { $0.0 == spec }) { continue }
            let label = try Self.label(of: spec, directory: directory)
            if let other = taken[label] {
                throw PerfHUDError(.usage, "\(other.description) and \(spec.description) would both be target=\"\(label)\": "
                                   + "name them, as in --match web='gunicorn: master' or --pid db=1234")
            }
            taken[label] = spec
            planned.append((spec, label))
        }
        return planned
    }

    static func label(of spec: TargetSpec, directory: ProcessDirectory) throws -> String {
        if let name = spec.name { return name }
        switch spec.selector {
        case .unit(let unit): return unit
        case .units(let pattern), .containers(let pattern), .pods(let pattern): return pattern
        case .pod(let given): return given
        case .controlGroup(let path): return path
        case .container(let given):
            // Its name, also where it was given by ID (`podman ps`'s NAMES).
            if case .success(let record) = ContainerLookup().find(given) { return record.label }
            return given
        case .pid(let pid):
            return directory.describe(pid: pid)?.commandName ?? String(pid)
        case .pidfile(let path):
            if case .success(let pids) = try TargetResolver(selector: spec.selector, directory: directory).resolve(),
               let first = pids.min(), let name = directory.describe(pid: first)?.commandName { return name }
            let base = path.split(separator: "/").last.map(String.init) ?? path
            return base.hasSuffix(".pid") ? String(base.dropLast(4)) : base
        case .match(let pattern):
            if case .success(let pids) = try TargetResolver(selector: spec.selector, directory: directory).resolve(),
               let first = pids.min(), let name = directory.describe(pid: first)?.commandName { return name }
            return pattern
        }
    }

    /// The `--units` patterns among `specs`: not targets, ways to find them.
    static func patterns(_ specs: [TargetSpec]) -> [String] {
        specs.compactMap { spec in if case .units(let pattern) = spec.selector { return pattern } else { return nil } }
    }

    /// The `--containers` patterns among `specs`.
    static func containerPatterns(_ specs: [TargetSpec]) -> [String] {
        specs.compactMap { spec in if case .containers(let pattern) = spec.selector { return pattern } else { return nil } }
    }

    /// The `--pods` patterns among `specs`.
    static func podPatterns(_ specs: [TargetSpec]) -> [String] {
        specs.compactMap { spec in if case .pods(let pattern) = spec.selector { return pattern } else { return nil } }
    }
}

extension TargetSpec {
    /// `--units PATTERN`, `--containers PATTERN`: not a target, a way to find them.
    public var isPattern: Bool {
        switch selector {
        case .units, .containers, .pods: return true
        case .pid, .pidfile, .match, .unit, .container, .controlGroup, .pod: return false
        }
    }
}
