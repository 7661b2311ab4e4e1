import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// Finds the processes a target names: a PID, a pidfile, a command-line pattern or a unit (the
/// daemon's targets, and `attach --match` / `--unit`).
/// A target that is not there yet is normal: `resolve` then says why, and is asked again later.
public final class TargetResolver {
    public let selector: TargetSelector
    private let directory: ProcessDirectory
    private var pattern = regex_t()
    private var compiled = false
    private let controlGroups: UnitControlGroup
    private var unitGroup: String?
    private let containers: ContainerLookup
    /// The container's group below the hierarchy's root while it runs, and its record as last found.
    private var containerGroup: String?
    package private(set) var container: ContainerRecord?
    private let pods: PodLookup
    /// The pod's group below the hierarchy's root while it runs, and its record as last found.
    private var podGroup: String?
    package private(set) var pod: PodRecord?
    /// Whether the `--cgroup` group was there at the last look.
    private var namedGroupFound = false
    /// When the `--pid` target started (clock ticks after boot), from the first time it was found.
    private var pidStartTicks: UInt64?
    /// Whether the last `resolve` found the `--pid` target's PID given to another process.
    package private(set) var pidReused = false
    /// The unit's control group below the hierarchy's root (`/system.slice/web.service`) while it exists.
    package var unitGroupPath: String? { unitGroup }
    /// The control group that is the whole target while it exists (a unit's, a container's), as
    /// `/proc/PID/cgroup` names it; nil for the other selectors.
    package var wholeGroupPath: String? {
        switch selector {
        case .unit: return unitGroup
        case .container: return containerGroup
        case .controlGroup(let path): return namedGroupFound ? path : nil
        case .pod: return podGroup
        case .pid, .pidfile, .match, .units, .containers, .pods: return nil
        }
    }
    /// The root of the hierarchy the unit's group was found in.
    package var controlGroupRoot: String { controlGroups.root }

    /// - Throws: `PerfHUDError` `.usage` when the pattern is not a valid extended regular expression.
    public init(selector: TargetSelector, directory: ProcessDirectory = ProcessDirectory(),
                controlGroups: UnitControlGroup = UnitControlGroup(), containers: ContainerLookup? = nil) throws {
        self.selector = selector
        self.directory = directory
        self.controlGroups = controlGroups
        self.containers = containers ?? ContainerLookup(hierarchy: controlGroups)
        pods = PodLookup(hierarchy: controlGroups)
        if case .match(let expression) = selector {
            let status = regcomp(&pattern, expression, REG_EXTENDED | REG_NOSUB)
            guard status == 0 else {
                var message = [CChar](repeating: 0, count: 256)
                regerror(status, &pattern, &message, message.count)
                throw PerfHUDError(.usage, "invalid --match pattern /\(expression)/: \(Self.text(message))")
            }
            compiled = true
        }
    }

    deinit { if compiled { regfree(&pattern) } }

    /// regerror's message: the bytes before its NUL.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// - Throws: `PerfHUDError` `.usage` when `expression` is not a valid extended regular
    ///   expression (a line of `--config` then says which).
    package static func checkPattern(_ expression: String) throws {
        var compiled = regex_t()
        let status = regcomp(&compiled, expression, REG_EXTENDED | REG_NOSUB)
        defer { if status == 0 { regfree(&compiled) } }
        guard status == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(status, &compiled, &message, message.count)
            throw PerfHUDError(.usage, "invalid --match pattern /\(expression)/: \(Self.text(message))")
        }
    }

    /// The target's root PIDs, or why there are none now.
    public func resolve() -> Result<[Int32], PerfHUDError> {
        switch selector {
        case .pid(let pid):
            pidReused = false
            guard let stat = ProcParser.stat(ofProcess: String(pid)), stat.threadGroupLives else {
                return .failure(PerfHUDError(.noInput, "no process with PID \(pid)"))
            }
            // The target is the process first found, not the number: once it ends, the kernel may
            // give its PID to another (a PID's start time tells them apart; a reused PID has a later one).
            pidReused = pidStartTicks.map { $0 != stat.startTicks } ?? false
            if pidReused {
                let name = directory.describe(pid: pid)?.commandName ?? "?"
                return .failure(PerfHUDError(.noInput, "PID \(pid) is another process now (\(TerminalText.escaped(name))): the target ended"))
            }
            pidStartTicks = stat.startTicks
            return .success([pid])
        case .pidfile(let path):
            let data: [UInt8]
            switch KeptOpenFile.contents(of: path, limit: 64) {
            case .success(let bytes): data = bytes
            case .failure(let error): return .failure(PerfHUDError(.noInput, "cannot read \(path): \(error)"))
            }
            let text = String(decoding: data, as: UTF8.self)
            guard let pid = Int32(text.split(separator: "\n").first.map { String($0).trimmingTrailingSpaces } ?? ""), pid > 0 else {
                return .failure(PerfHUDError(.noInput, "\(path) holds no PID"))
            }
            return Self.exists(pid) ? .success([pid]) : .failure(PerfHUDError(.noInput, "PID \(pid) from \(path) is not running"))
        case .match:
            // Never perfhud itself, nor another perfhud whose command line holds the pattern (a
            // second daemon's `--match a=nginx`): its memory and CPU are not the program's.
            let ourselves = getpid()
            let matches = directory.commandLines().filter { candidate in
                candidate.pid != ourselves && regexec(&pattern, candidate.commandLine, 0, nil, 0) == 0 && !Self.isPerfhud(candidate.pid)
            }.map(\.pid)
            return matches.isEmpty ? .failure(PerfHUDError(.noInput, "no process matches")) : .success(matches)
        case .unit(let unit):
            return unitProcesses(unit)
        case .units(let pattern):
            // Not a target itself: the daemon makes one `.unit` target per unit it finds.
            return .failure(PerfHUDError(.noInput, "units \(pattern) are targets each"))
        case .containers(let pattern):
            // Not a target itself: the daemon makes one `.container` target per container it finds.
            return .failure(PerfHUDError(.noInput, "containers \(pattern) are targets each"))
        case .controlGroup(let path):
            return controlGroupProcesses(path)
        case .pod(let given):
            return podProcesses(given)
        case .pods(let pattern):
            // Not a target itself: the daemon makes one `.pod` target per pod it finds.
            return .failure(PerfHUDError(.noInput, "pods \(pattern) are targets each"))
        case .container(let given):
            return containerProcesses(given)
        }
    }

    /// The processes of a container's control group. Its group is remembered until it goes away;
    /// then the name is looked up again, so a container removed and started again under the same
    /// name (a new ID, a new group) is found as the same target.
    package func containerProcesses(_ given: String) -> Result<[Int32], PerfHUDError> {
        let found = processes(ofGroup: &containerGroup, find: {
            containers.find(given).map { record in
                container = record
                return containers.group(of: record)
            }
        }, named: { "container \(TerminalText.escaped(given))" + (container.map { " (\($0.runtime) ID \($0.id.prefix(12)))" } ?? "") })
        // No group of its own (rootless podman on a v1 or hybrid host): its first process's tree,
        // from its runtime's PID file; its CPU is then its processes' own clocks, summed.
        if case .failure = found, containerGroup == nil, let record = container, let first = containers.firstProcess(of: record) {
            return .success([first] + directory.descendants(of: first).map(\.pid))
        }
        return found
    }

    /// The processes of a pod's control group (all its containers'), looked for again by its name
    /// once it is gone: a pod made again under its name (a new UID) is the same target.
    package func podProcesses(_ given: String) -> Result<[Int32], PerfHUDError> {
        processes(ofGroup: &podGroup, find: {
            pods.find(given).map { record in
                pod = record
                return pods.group(of: record.uid)
            }
        }, named: { "pod \(TerminalText.escaped(given))" + (pod.map { " (UID \($0.uid))" } ?? "") })
    }

    /// The processes of a group named by its path (`--cgroup`): in the hierarchy systemd keeps,
    /// else in the first v1 hierarchy that has it (a group made in one controller's tree alone).
    package func controlGroupProcesses(_ path: String) -> Result<[Int32], PerfHUDError> {
        let hierarchies = [controlGroups] + Self.otherHierarchies.filter { $0 != controlGroups.root }.map { UnitControlGroup(root: $0) }
        for hierarchy in hierarchies {
            guard let pids = hierarchy.processes(in: path) else { continue }
            namedGroupFound = true
            return pids.isEmpty ? .failure(PerfHUDError(.noInput, "control group \(TerminalText.escaped(path)) has no processes")) : .success(pids)
        }
        namedGroupFound = false
        let looked = hierarchies.map { $0.root + path }.joined(separator: ", ")
        return .failure(PerfHUDError(.noInput, "no control group \(TerminalText.escaped(path)) (looked for \(looked))"))
    }

    /// The hierarchies a `--cgroup` path is looked for in after systemd's.
    static let otherHierarchies = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/pids"]

    /// The processes of the group remembered in `group` (below the hierarchy's root), and of the
    /// groups below it. Once it is gone (or before it was looked for), `find` looks for it again:
    /// nil while there is none (`named` is not running), or why it cannot be looked for.
    private func processes(ofGroup group: inout String?, find: () -> Result<String?, PerfHUDError>,
                            named: () -> String) -> Result<[Int32], PerfHUDError> {
        var pids = group.flatMap(controlGroups.processes(in:))
        if pids == nil {
            switch find() {
            case .failure(let why):
                group = nil
                return .failure(why)
            case .success(let found):
                group = found
                pids = found.flatMap(controlGroups.processes(in:))
            }
        }
        guard let pids else { return .failure(PerfHUDError(.noInput, "\(named()) is not running")) }
        return pids.isEmpty ? .failure(PerfHUDError(.noInput, "\(named()) has no processes")) : .success(pids)
    }

    /// Whether `pid` runs: a zombie (ended, not yet reaped by its parent) does not, or a pidfile
    /// naming one would make the target flap between up and gone at every look; a process whose
    /// main thread ended while others run does (`ProcStat.threadGroupLives`).
    package static func exists(_ pid: Int32) -> Bool {
        ProcParser.stat(ofProcess: String(pid))?.threadGroupLives ?? false
    }

    /// The processes of a unit's control group, found in the control-group tree (see
    /// `UnitControlGroup`); the group's path is remembered until it goes away.
    package func unitProcesses(_ unit: String) -> Result<[Int32], PerfHUDError> {
        processes(ofGroup: &unitGroup, find: { .success(controlGroups.find(unit)) }, named: { unit })
    }

    /// Whether `pid` runs perfhud: the same executable file as this process (whatever its path), or
    /// a program named `perfhud` (another installation). Watch one with `--pid`.
    package static func isPerfhud(_ pid: Int32) -> Bool {
        var theirs = stat()
        if stat("/proc/\(pid)/exe", &theirs) == 0, let ours = ownExecutable, theirs.st_dev == ours.dev, theirs.st_ino == ours.ino { return true }
        guard case .success(let name) = KeptOpenFile.contents(of: "/proc/\(pid)/comm", limit: 64) else { return false }
        return name.split(separator: UInt8(ascii: "\n")).first.map { String(decoding: $0, as: UTF8.self) } == "perfhud"
    }

    /// This executable's file (device and inode), read once.
    private static let ownExecutable: (dev: UInt64, ino: UInt64)? = {
        var ours = stat()
        return stat("/proc/self/exe", &ours) == 0 ? (UInt64(ours.st_dev), UInt64(ours.st_ino)) : nil
    }()
}
