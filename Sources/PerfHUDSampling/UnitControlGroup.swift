import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// Finds a systemd unit's processes by reading the control-group file system, without asking
/// systemd.
///
/// systemd puts every unit's processes in a control group named after the unit
/// (`…/system.slice/nginx.service`, `…/system-perfhud.slice/perfhud@web.service`, or under any
/// `Slice=`). Reading that tree needs no D-Bus: `systemctl show` over D-Bus fails for a
/// `DynamicUser=` service on a real systemd (`Transport endpoint is not connected`), and every
/// spawned `systemctl` would inherit our notify socket. `cgroup.procs` files are world-readable,
/// so this works for any unit whatever user it runs as. Written by hand: libsystemd's
/// `sd_pid_get_unit` answers the other question (a PID's unit), not this one.
public struct UnitControlGroup {
    /// Where systemd keeps its hierarchy: cgroup v2 at the root, or the v1 `name=systemd` tree
    /// (legacy and hybrid layouts, which also mirror units into `unified`).
    public let root: String
    /// Subtrees that hold user sessions and user managers: a system unit is never there.
    package static let skipped: Set<String> = ["user.slice", "init.scope"]
    /// How deep units nest below the root (slices within slices); deeper is not searched.
    package static let maximumDepth = 8

    public init(root: String? = nil) {
        if let root { self.root = root; return }
        var status = stat()
        if stat("/sys/fs/cgroup/cgroup.controllers", &status) == 0 {
            self.root = "/sys/fs/cgroup"
        } else if stat("/sys/fs/cgroup/systemd/cgroup.procs", &status) == 0 {
            self.root = "/sys/fs/cgroup/systemd"
        } else {
            self.root = "/sys/fs/cgroup/unified"
        }
    }

    /// The unit's control group, as a path below `root` (`/system.slice/web.service`), or nil
    /// while the unit has none (not running). Breadth first, so the shallowest match wins.
    public func find(_ unit: String) -> String? {
        // Units nest only in slices, and in units that delegate (their own sub-groups).
        firstGroup(skipping: Self.skipped, descendingInto: { $0.hasSuffix(".slice") }) { name, _ in name == unit }
    }

    /// The first group, breadth first (the shallowest), whose name and parent (`/a.slice`, below
    /// `root`) `matches`, looking below those groups `descendingInto` allows and never in `skipping`.
    package func firstGroup(skipping: Set<String> = [], descendingInto: (String) -> Bool,
                            where matches: (String, String) -> Bool) -> String? {
        var found: String?
        eachGroup { name, parent in
            if skipping.contains(name) { return .skip }
            if matches(name, parent) { found = parent + "/" + name; return .stop }
            return descendingInto(name) ? .descend : .skip
        }
        return found
    }

    /// What a walk does after a group (`eachGroup`).
    package enum Visit { case descend, skip, stop }

    /// Calls `visit` with every group (its name, its parent below `root`), breadth first, down to
    /// `maximumDepth`, looking below the groups it says `.descend` of, until it says `.stop`.
    package func eachGroup(_ visit: (String, String) -> Visit) {
        var level = [""]
        for _ in 0..<Self.maximumDepth {
            var next: [String] = []
            for group in level {
                for name in Self.subdirectories(root + group) {
                    switch visit(name, group) {
                    case .descend: next.append(group + "/" + name)
                    case .skip: break
                    case .stop: return
                    }
                }
            }
            if next.isEmpty { return }
            level = next
        }
    }

    /// Every PID in the group and the groups below it (a delegating unit puts its processes in
    /// sub-groups), or nil when the group is gone.
    public func processes(in group: String) -> [Int32]? {
        var pids: [Int32] = []
        var pending = [root + group]
        var seenGroup = false
        while let path = pending.popLast() {
            guard case .success(let data) = KeptOpenFile.contents(of: path + "/cgroup.procs") else { continue }
            seenGroup = true
            pids += Self.integers(data)
            pending += Self.subdirectories(path).map { path + "/" + $0 }
        }
        return seenGroup ? pids : nil
    }

    /// The units under `system.slice` whose names match the glob `pattern` (fnmatch(3): `*`,
    /// `?`, `[…]`): one directory read, cheap enough to repeat every discovery interval.
    public func units(matching pattern: String) -> [String] {
        Self.subdirectories(root + "/system.slice").filter { name in
            !name.hasSuffix(".slice") && fnmatch(pattern, name, 0) == 0
        }.sorted()
    }

    /// Whether systemd knows the unit: it has a control group now, or a unit file (or a template
    /// for an instance) in one of the system manager's unit directories.
    public func isKnown(_ unit: String) -> Bool {
        if find(unit) != nil { return true }
        var names = [unit]
        if let at = unit.firstIndex(of: "@"), let dot = unit.lastIndex(of: ".") , at < dot {
            names.append(String(unit[...at]) + String(unit[dot...]))   // foo@bar.service → foo@.service
        }
        var status = stat()
        for directory in Self.unitDirectories {
            for name in names where lstat(directory + "/" + name, &status) == 0 { return true }
        }
        return false
    }

    /// Why `unit` is refused, with what was looked for: `unknown unit web.service (no control group
    /// of that name under /sys/fs/cgroup/systemd, no unit file in systemd's 13 unit directories; a
    /// name without a type is a .service: --container or --cgroup for a container's group)`.
    public func unknownUnitMessage(_ unit: String) -> String {
        var message = "unknown unit \(unit) (no control group of that name under \(root), no unit file in systemd's \(Self.unitDirectories.count) unit directories"
        if unit.hasSuffix(".service") { message += "; a name without a type is a .service" }
        if unit.hasPrefix("libpod-") || unit.hasPrefix("docker-") || unit.hasPrefix("cri-containerd-") || unit.hasPrefix("crio-") {
            message += "; a container's group: --container ID or --cgroup PATH"
        }
        return message + ")"
    }

    /// systemd.unit(5)'s system unit search path.
    package static let unitDirectories = [
        "/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
        "/run/systemd/generator.early", "/etc/systemd/system", "/etc/systemd/system.attached",
        "/run/systemd/system", "/run/systemd/system.attached", "/run/systemd/generator",
        "/usr/local/lib/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system",
        "/run/systemd/generator.late",
    ]

    package static func subdirectories(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package static func integers(_ data: [UInt8]) -> [Int32] {
        var values: [Int32] = []
        var current: Int32 = 0
        var digits = 0
        for byte in data {
            if byte >= 48 && byte <= 57, digits < 9 {
                current = current * 10 + Int32(byte - 48)
                digits += 1
            } else {
                if digits > 0 { values.append(current) }
                current = 0
                digits = 0
            }
        }
        if digits > 0 { values.append(current) }
        return values
    }
}
