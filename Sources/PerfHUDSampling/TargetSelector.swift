/// What a target names: one process, the PID a file holds, every process whose command line
/// matches, a systemd unit's processes, or units by a glob (the daemon's `--units`).
public enum TargetSelector: Equatable {
    case pid(Int32)
    /// Re-read whenever the process it names ends.
    case pidfile(String)
    /// Every process whose command line matches, summed as one group (a libproc2 scan).
    case match(String)
    /// A systemd unit: every process of its control group, followed across restarts.
    case unit(String)
    /// Every unit under `system.slice` whose name matches a glob, each a target of its own.
    case units(String)
    /// A container by its name or ID, as its runtime records it: every process of its control
    /// group, followed across a restart under the same name (`ContainerLookup`).
    case container(String)

    /// `--unit NAME` as systemctl reads it: a name without a type is a service (`nginx` is `nginx.service`).
    public static func unit(named name: String) -> TargetSelector {
        .unit(name.contains(".") ? name : name + ".service")
    }

    /// A group of processes (`--match`, `--unit`), not one process (and its tree).
    public var isGroup: Bool {
        switch self {
        case .pid, .pidfile: return false
        case .match, .unit, .units, .container: return true
        }
    }

    /// Whether a process no longer found leaves the target: every selector but `--pid`, whose
    /// process is the target until it ends (a pidfile's next PID replaces the last).
    public var followsMembers: Bool {
        if case .pid = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .pid(let pid): return "PID \(pid)"
        case .pidfile(let path): return "the PID in \(path)"
        case .match(let pattern): return "processes matching /\(pattern)/"
        case .unit(let unit): return "unit \(unit)"
        case .units(let pattern): return "units \(pattern)"
        case .container(let given): return "container \(given)"
        }
    }
}
