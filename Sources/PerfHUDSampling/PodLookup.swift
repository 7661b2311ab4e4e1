import PerfHUDSupport

/// A Kubernetes pod on this node, as the kubelet lays it out.
public struct PodRecord: Equatable {
    public var namespace: String
    public var name: String
    /// The pod's UID (`6a0d5c55-…`): what its control group and its log directory are named by.
    public var uid: String

    /// `NAMESPACE/POD`, as `--pod` and the `target` label name it.
    public var label: String { namespace + "/" + name }
}

/// Finds a Kubernetes pod by its namespace and name on this node, from what every node has: the
/// kubelet's `/var/log/pods/NAMESPACE_POD_UID/` (one directory a pod, made as it starts, whatever
/// the runtime) gives the UID, and the UID names the pod's control group, in which all its
/// containers are: `kubepods-<qos>-pod<UID>.slice` (the systemd driver, the UID's `-` written `_`;
/// `kubepods-pod<UID>.slice` for a Guaranteed pod) or `pod<UID>` (the cgroupfs driver, under
/// `kubepods/<qos>/`). Read from disk rather than asked of the CRI socket or the API server:
/// nothing to authenticate to, nothing that answers only while the kubelet runs.
public struct PodLookup {
    public static let podLogs = "/var/log/pods"
    private let logDirectory: String
    private let hierarchy: UnitControlGroup

    public init(logDirectory: String = PodLookup.podLogs, hierarchy: UnitControlGroup = UnitControlGroup()) {
        self.logDirectory = logDirectory
        self.hierarchy = hierarchy
    }

    /// The pods the kubelet has a log directory of (running or lately ended).
    public func pods() -> [PodRecord] {
        var found: [PodRecord] = []
        forEachEntry(in: logDirectory) { _, name in
            if let pod = Self.pod(directoryName: name) { found.append(pod) }
        }
        return found
    }

    /// `NAMESPACE_POD_UID` (neither name may hold `_`: Kubernetes' DNS names).
    package static func pod(directoryName name: String) -> PodRecord? {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, isUID(parts[2]) else { return nil }
        return PodRecord(namespace: String(parts[0]), name: String(parts[1]), uid: String(parts[2]))
    }

    /// The pod `given` names (`NAMESPACE/POD`): where the kubelet kept the directory of an earlier
    /// pod of that name (a StatefulSet's pod made again has a new UID), the one that runs.
    public func find(_ given: String) -> Result<PodRecord, PerfHUDError> {
        let named = pods().filter { $0.label == given }
        if let running = named.first(where: { group(of: $0.uid) != nil }) ?? named.first { return .success(running) }
        let why = given.contains("/") ? "" : ": name it NAMESPACE/POD"
        return .failure(PerfHUDError(.noInput, "no pod \(TerminalText.escaped(given)) on this node (the kubelet's pods read: \(logDirectory))" + why))
    }

    /// The pod's control group below the hierarchy's root, or nil while it has none.
    public func group(of uid: String) -> String? {
        hierarchy.firstGroup(descendingInto: { _ in true }) { name, _ in Self.uid(ofGroupNamed: name) == uid }
    }

    /// The running pods' groups by UID, from one walk of the tree (`--pods`); a pod's own
    /// sub-groups (its containers') are not walked.
    public func runningGroups() -> [String: String] {
        var found: [String: String] = [:]
        hierarchy.eachGroup { name, parent in
            guard let uid = Self.uid(ofGroupNamed: name) else { return .descend }
            if found[uid] == nil { found[uid] = parent + "/" + name }
            return .skip
        }
        return found
    }

    /// The pod UID a group directory is named by: `kubepods-burstable-pod<UID>.slice` and
    /// `kubepods-pod<UID>.slice` (the UID's `-` as `_`), or `pod<UID>`; nil for any other.
    package static func uid(ofGroupNamed name: String) -> String? {
        let sliced = name.hasSuffix(".slice")
        let stem = sliced ? name.dropLast(6) : Substring(name)
        guard stem.count >= 39 else { return nil }
        let before = stem.dropLast(36)
        guard before.hasSuffix("pod"), sliced ? before.hasPrefix("kubepods-") : before == "pod" else { return nil }
        let uid = sliced ? String(stem.suffix(36)).replacingUnderscores : String(stem.suffix(36))
        return isUID(Substring(uid)) ? uid : nil
    }

    /// 8-4-4-4-12 hex digits.
    static func isUID(_ text: Substring) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12]
            && groups.allSatisfy { $0.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) } }
    }
}

private extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
