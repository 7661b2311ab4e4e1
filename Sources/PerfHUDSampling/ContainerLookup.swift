import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// A container as its runtime records it.
public struct ContainerRecord: Equatable {
    /// The full ID (64 hex digits).
    public var id: String
    public var names: [String]
    /// Which runtime's record: `podman`.
    public var runtime: String
    /// Where it was read, for the messages that say what was looked at.
    public var source: String

    /// What the target is called: its first name, else the first 12 digits of its ID (as `ps` shows).
    public var label: String { names.first ?? String(id.prefix(12)) }
}

/// Finds a container by its name or ID: the runtime's own record gives the ID, and the ID names
/// the control group its processes are in (`libpod-ID`, `libpod-ID.scope`, `docker-ID.scope`,
/// `cri-containerd-ID.scope`, `crio-ID.scope`, or a group named by the ID alone below a `docker`
/// group: the systemd and cgroupfs drivers' layouts), found anywhere in the hierarchy
/// systemd keeps (`UnitControlGroup.root`).
///
/// The records are read from the runtime's state on disk, not asked of its API socket: podman's
/// socket runs only where `podman.socket` is enabled, running `podman inspect` would start a
/// process at every look, and `containers.json` is the record podman itself keeps (containers/
/// storage), readable by root, one small file.
public struct ContainerLookup {
    /// Podman's (rootful) records.
    public static let podmanRecords = "/var/lib/containers/storage/overlay-containers/containers.json"
    private let recordFiles: [(runtime: String, path: String)]
    private let hierarchy: UnitControlGroup

    public init(recordFiles: [(runtime: String, path: String)] = [("podman", ContainerLookup.podmanRecords)],
                hierarchy: UnitControlGroup = UnitControlGroup()) {
        self.recordFiles = recordFiles
        self.hierarchy = hierarchy
    }

    /// Every container the runtimes have a record of (running or not).
    public func records() -> [ContainerRecord] {
        recordFiles.flatMap { file -> [ContainerRecord] in
            guard case .success(let data) = KeptOpenFile.contents(of: file.path, limit: 64 << 20) else { return [] }
            return Self.podmanRecords(String(decoding: data, as: UTF8.self), source: file.path)
        }
    }

    /// The records of podman's `containers.json`: `[{"id": "…", "names": ["web"], …}, …]`.
    package static func podmanRecords(_ text: String, source: String) -> [ContainerRecord] {
        guard case .array(let entries)? = JSONValue.parse(text) else { return [] }
        return entries.compactMap { entry in
            guard case .object(let fields) = entry, case .string(let id)? = fields["id"], isID(id) else { return nil }
            var names: [String] = []
            if case .array(let values)? = fields["names"] {
                for case .string(let name) in values { names.append(name) }
            }
            return ContainerRecord(id: id, names: names, runtime: "podman", source: source)
        }
    }

    /// The container `given` names: a name, or an ID or its first digits (at least 3, one container's).
    public func find(_ given: String) -> Result<ContainerRecord, PerfHUDError> {
        let all = records()
        if let named = all.first(where: { $0.names.contains(given) }) { return .success(named) }
        let lowered = given.lowercased()
        if lowered.count >= 3, Self.isHex(lowered) {
            let matching = all.filter { $0.id.hasPrefix(lowered) }
            if matching.count == 1 { return .success(matching[0]) }
            if matching.count > 1 {
                return .failure(PerfHUDError(.usage, "\(given) begins the IDs of \(matching.count) containers: give more of it or the name"))
            }
        }
        let looked = recordFiles.map(\.path).joined(separator: ", ")
        return .failure(PerfHUDError(.noInput, "no container named \(TerminalText.escaped(given)) (the runtimes' records read: \(looked))"))
    }

    /// The container's control group, below the hierarchy's root, or nil while it has none (not
    /// running). Breadth first over the whole tree (containers sit under `machine.slice`,
    /// `system.slice`, `libpod_parent`, `kubepods…`, or a user's slice for a rootless one).
    public func group(of id: String) -> String? {
        hierarchy.firstGroup(descendingInto: { _ in true }) { name, parent in Self.names(name, id, under: parent) }
    }

    /// Whether the group directory `name` (in `parent`) is the container `id`'s.
    static func names(_ name: String, _ id: String, under parent: String) -> Bool {
        guard name.hasSuffix(id) || name.hasSuffix(id + ".scope") else { return false }
        var stem = name.hasSuffix(".scope") ? String(name.dropLast(6)) : name
        for prefix in ["libpod-", "docker-", "cri-containerd-", "crio-"] where stem.hasPrefix(prefix) {
            stem.removeFirst(prefix.count)
            return stem == id
        }
        // The cgroupfs driver of docker: /docker/ID.
        return stem == id && parent.hasSuffix("/docker")
    }

    private static func isID(_ text: String) -> Bool { text.count == 64 && isHex(text) }

    private static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
