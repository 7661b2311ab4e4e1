#if canImport(Glibc)
import Glibc
#endif

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
    /// Every running container whose name matches a glob, each a target of its own (the daemon's `--containers`).
    case containers(String)
    /// A control group named by its path below the hierarchy's root (`/system.slice/web.service`,
    /// `/kubepods/burstable/pod…`), for the layouts no unit or container name covers: every process
    /// of the group and of the groups below it.
    case controlGroup(String)
    /// A Kubernetes pod on this node, `NAMESPACE/POD`: every process of its containers, as one
    /// group, followed across a pod made again under its name (`PodLookup`).
    case pod(String)
    /// Every pod on this node whose `NAMESPACE/POD` matches a glob, each a target (the daemon's `--pods`).
    case pods(String)

    /// `--unit NAME` as systemctl reads it: a name without a type is a service (`nginx` is `nginx.service`).
    public static func unit(named name: String) -> TargetSelector {
        .unit(name.contains(".") ? name : name + ".service")
    }

    /// `--cgroup PATH` as given: a path below the hierarchy's root, or a directory of a mounted
    /// hierarchy (`/sys/fs/cgroup/memory/docker/ID`), which names the same group.
    public static func controlGroup(given path: String) -> TargetSelector {
        var group = path
        while group.count > 1 && group.hasSuffix("/") { group.removeLast() }
        let prefix = "/sys/fs/cgroup"
        if group.hasPrefix(prefix + "/") {
            group.removeFirst(prefix.count)
            // The mount's own directory (`/memory`, `/unified`, `/cpu,cpuacct`, `/systemd`), where
            // it is one (a hierarchy's root has its cgroup.procs): on a pure v2 host there is none.
            let first = group.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            var status = stat()
            if stat("/sys/fs/cgroup/cgroup.controllers", &status) != 0, !first.isEmpty,
               stat("/sys/fs/cgroup/" + first + "/cgroup.procs", &status) == 0 {
                group.removeFirst(first.count + 1)
                if group.isEmpty { group = "/" }
            }
        }
        if !group.hasPrefix("/") { group = "/" + group }
        return .controlGroup(group)
    }

    /// A group of processes (`--match`, `--unit`), not one process (and its tree).
    public var isGroup: Bool {
        switch self {
        case .pid, .pidfile: return false
        case .match, .unit, .units, .container, .containers, .controlGroup, .pod, .pods: return true
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
        case .containers(let pattern): return "containers \(pattern)"
        case .controlGroup(let path): return "control group \(path)"
        case .pod(let given): return "pod \(given)"
        case .pods(let pattern): return "pods \(pattern)"
        }
    }
}
