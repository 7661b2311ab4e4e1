import PerfHUDSupport
#if canImport(Glibc)
import Glibc
#endif

/// A container as its runtime records it.
public struct ContainerRecord: Equatable {
    /// The full ID (64 hex digits).
    public var id: String
    public var names: [String]
    /// Which runtime's record: `podman`, `docker`.
    public var runtime: String
    /// Where it was read, for the messages that say what was looked at.
    public var source: String
    /// The image it was made from, as it was named when the container was made (`nginx:1.25`);
    /// nil where the record does not say.
    public var image: String?
    /// A Kubernetes pod's container: its namespace, its pod and its name in the pod (the kubelet's
    /// names, which kube-state-metrics' series carry too); nil elsewhere.
    public var kubernetes: (namespace: String, pod: String, container: String)?
    /// Its control group below the hierarchy's root where the record says it (containerd's OCI
    /// spec, `linux.cgroupsPath`); nil where the group is found by the ID (`group(of:)`).
    public var groupPath: String?
    /// Where its runtime writes the PID of its first process (podman's conmon: `userdata/pidfile`),
    /// for a container that has no control group of its own (rootless podman on a cgroup v1 or
    /// hybrid host runs its containers in the user's session's groups).
    public var pidFiles: [String] = []

    public init(id: String, names: [String], runtime: String, source: String, image: String? = nil) {
        (self.id, self.names, self.runtime, self.source, self.image) = (id, names, runtime, source, image)
    }

    public static func == (a: ContainerRecord, b: ContainerRecord) -> Bool {
        (a.id, a.names, a.runtime, a.source, a.image) == (b.id, b.names, b.runtime, b.source, b.image)
            && a.kubernetes?.namespace == b.kubernetes?.namespace && a.kubernetes?.pod == b.kubernetes?.pod
            && a.kubernetes?.container == b.kubernetes?.container && a.groupPath == b.groupPath
    }

    /// What the target is called: its first name, else the first 12 digits of its ID (as `ps` shows).
    public var label: String { names.first ?? String(id.prefix(12)) }
}

/// Finds a container by its name or ID: the runtime's own record gives the ID, and the ID names
/// the control group its processes are in (`libpod-ID`, `libpod-ID.scope`, `docker-ID.scope`,
/// `cri-containerd-ID.scope`, `crio-ID.scope`, or a group named by the ID alone below a `docker`
/// group: the systemd and cgroupfs drivers' layouts), found anywhere in the hierarchy
/// systemd keeps (`UnitControlGroup.root`).
///
/// The records are read from the runtimes' state on disk, not asked of their API sockets:
/// podman's socket runs only where `podman.socket` is enabled, running `podman inspect` would
/// start a process at every look, and Docker's socket answers only while dockerd runs and grants
/// whoever may use it root on the host (a DaemonSet mounting it would). The files are the records
/// the runtimes keep themselves, readable by root: podman's `containers.json` (containers/storage;
/// a rootless user's under their home), Docker's `config.v2.json` of each container.
public struct ContainerLookup {
    /// Where a runtime keeps its records.
    public enum RecordSource: Equatable {
        /// A containers/storage `containers.json` (podman, buildah, CRI-O's storage).
        case podman(String)
        /// Docker's containers directory: a directory a container, its `config.v2.json` in it.
        case docker(String)
        /// The kubelet's `/var/log/containers`: a link a pod's container, named
        /// `POD_NAMESPACE_CONTAINER-ID.log`, whatever runtime runs it (every node has it).
        case kubelet(String)
        /// containerd's running tasks: `NAMESPACE/ID/config.json`, each the OCI spec it runs.
        case containerd(String)

        var path: String {
            switch self {
            case .podman(let path), .docker(let path), .kubelet(let path), .containerd(let path): return path
            }
        }
    }

    /// Podman's (rootful) records.
    public static let podmanRecords = "/var/lib/containers/storage/overlay-containers/containers.json"
    /// Docker's (rootful) containers.
    public static let dockerContainers = "/var/lib/docker/containers"
    /// containerd's running tasks (its runtime v2 shim's state).
    public static let containerdTasks = "/run/containerd/io.containerd.runtime.v2.task"
    /// The kubelet's links to its containers' logs.
    public static let kubeletContainerLogs = "/var/log/containers"
    /// A rootless podman user's records, below their home directory, by storage driver (rootless
    /// podman uses `vfs` where the kernel or fuse-overlayfs does not let it use `overlay`).
    static let rootlessRecords = ["/.local/share/containers/storage/overlay-containers/containers.json",
                                  "/.local/share/containers/storage/vfs-containers/containers.json"]

    /// The runtimes' records on this host: rootful podman and Docker, and rootless podman of each
    /// home directory under `/home` that has records.
    public static func hostSources() -> [RecordSource] {
        var sources: [RecordSource] = [.podman(podmanRecords), .docker(dockerContainers), .kubelet(kubeletContainerLogs), .containerd(containerdTasks)]
        for user in UnitControlGroup.subdirectories("/home") {
            for records in rootlessRecords where access("/home/" + user + records, R_OK) == 0 { sources.append(.podman("/home/" + user + records)) }
        }
        return sources
    }

    private let sources: [RecordSource]
    private let hierarchy: UnitControlGroup

    public init(sources: [RecordSource]? = nil, hierarchy: UnitControlGroup = UnitControlGroup()) {
        self.sources = sources ?? Self.hostSources()
        self.hierarchy = hierarchy
    }

    /// Every container the runtimes have a record of (running or not).
    public func records() -> [ContainerRecord] {
        sources.flatMap { source -> [ContainerRecord] in
            switch source {
            case .podman(let path):
                guard case .success(let data) = KeptOpenFile.contents(of: path, limit: 64 << 20) else { return [] }
                let runRoots = Self.podmanRunRoots(records: path)
                return Self.podmanRecords(String(decoding: data, as: UTF8.self), source: path).map { record in
                    var record = record
                    record.pidFiles = runRoots.map { $0 + "/" + record.id + "/userdata/pidfile" }
                    return record
                }
            case .docker(let directory):
                return UnitControlGroup.subdirectories(directory).compactMap { entry in
                    let path = directory + "/" + entry + "/config.v2.json"
                    guard Self.isID(entry), case .success(let data) = KeptOpenFile.contents(of: path, limit: 4 << 20) else { return nil }
                    return Self.dockerRecord(String(decoding: data, as: UTF8.self), source: path)
                }
            case .kubelet(let directory):
                var found: [ContainerRecord] = []
                forEachEntry(in: directory) { _, name in
                    if let record = Self.kubeletRecord(fileName: name, source: directory) { found.append(record) }
                }
                return found
            case .containerd(let directory):
                return Self.containerdTasks(in: directory).compactMap { Self.containerdRecord(in: directory, namespace: $0.namespace, id: $0.id) }
            }
        }
    }

    /// Where podman keeps the run-time state of the containers whose records are at `records`
    /// (`…/storage/DRIVER-containers/containers.json`): root's under /run/containers/storage, a
    /// rootless user's under their runtime directory, or /tmp/podman-run-UID without one.
    static func podmanRunRoots(records: String) -> [String] {
        let parts = records.split(separator: "/")
        guard parts.count >= 2 else { return [] }
        let driver = String(parts[parts.count - 2])
        guard records.hasPrefix("/home/") else { return ["/run/containers/storage/" + driver] }
        var status = stat()
        guard stat(records, &status) == 0 else { return [] }
        return ["/run/user/\(status.st_uid)/containers/" + driver, "/tmp/podman-run-\(status.st_uid)/containers/" + driver]
    }

    /// The running containers of rootless users' records that have no control group (their
    /// first process is running): what `--containers` adds to those it finds by their groups.
    public func runningWithoutGroup() -> [ContainerRecord] {
        let rootless = sources.filter { source in
            if case .podman(let path) = source { return path.hasPrefix("/home/") }
            return false
        }
        guard !rootless.isEmpty else { return [] }
        return ContainerLookup(sources: rootless, hierarchy: hierarchy).records().filter { firstProcess(of: $0) != nil }
    }

    /// The first process of a container that has no control group of its own, from its runtime's
    /// PID file, while it runs; nil else.
    public func firstProcess(of record: ContainerRecord) -> Int32? {
        for path in record.pidFiles {
            guard case .success(let data) = KeptOpenFile.contents(of: path, limit: 64),
                  let pid = Int32(String(decoding: data.prefix { $0 >= 48 && $0 <= 57 }, as: UTF8.self)), pid > 0,
                  TargetResolver.exists(pid) else { continue }
            return pid
        }
        return nil
    }

    /// The records of podman's `containers.json`: `[{"id": "…", "names": ["web"], "metadata":
    /// "{\"image-name\": \"…\"}"}, …]` (the metadata is JSON in a string).
    package static func podmanRecords(_ text: String, source: String) -> [ContainerRecord] {
        guard case .array(let entries)? = JSONValue.parse(text) else { return [] }
        return entries.compactMap { entry in
            guard case .object(let fields) = entry, case .string(let id)? = fields["id"], isID(id) else { return nil }
            var names: [String] = []
            if case .array(let values)? = fields["names"] {
                for case .string(let name) in values { names.append(name) }
            }
            var image: String?
            if case .string(let metadata)? = fields["metadata"], case .object(let meta)? = JSONValue.parse(metadata),
               case .string(let named)? = meta["image-name"] { image = named }
            return ContainerRecord(id: id, names: names, runtime: "podman", source: source, image: image)
        }
    }

    /// The record a kubelet's log link's name makes: `web-0_shop_nginx-ID.log` is the container
    /// `nginx` of the pod `web-0` in the namespace `shop` (none of the three names may hold `_`,
    /// Kubernetes' DNS names), named `shop/web-0/nginx`.
    package static func kubeletRecord(fileName: String, source: String) -> ContainerRecord? {
        guard fileName.hasSuffix(".log") else { return nil }
        let stem = fileName.dropLast(4)
        guard stem.count > 65, stem.dropLast(64).last == "-" else { return nil }
        let id = String(stem.suffix(64))
        let parts = stem.dropLast(65).split(separator: "_", omittingEmptySubsequences: false)
        guard isID(id), parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        let (pod, namespace, container) = (String(parts[0]), String(parts[1]), String(parts[2]))
        var record = ContainerRecord(id: id, names: [namespace + "/" + pod + "/" + container], runtime: "kubelet", source: source + "/" + fileName)
        record.kubernetes = (namespace, pod, container)
        return record
    }

    /// containerd's running tasks (`NAMESPACE/ID` directories, one directory read a namespace), but
    /// those of `k8s.io` (a pod's: the kubelet's links name them, and a node has hundreds of specs
    /// to parse) and `moby` (Docker's: its records name them).
    public static func containerdTasks(in directory: String = containerdTasks) -> [(namespace: String, id: String)] {
        UnitControlGroup.subdirectories(directory).filter { $0 != "k8s.io" && $0 != "moby" }.flatMap { namespace in
            UnitControlGroup.subdirectories(directory + "/" + namespace).map { (namespace, $0) }
        }
    }

    /// The record of one containerd task, from its spec; nil where it cannot be read.
    public static func containerdRecord(in directory: String = containerdTasks, namespace: String, id: String) -> ContainerRecord? {
        let path = directory + "/" + namespace + "/" + id + "/config.json"
        guard case .success(let data) = KeptOpenFile.contents(of: path, limit: 4 << 20) else { return nil }
        return containerdRecord(String(decoding: data, as: UTF8.self), id: id, namespace: namespace, source: path)
    }

    /// The record of a containerd task's OCI spec (`config.json`): named by its ID (`ctr run IMAGE
    /// web` names it `web`; in a namespace other than `default`, `NAMESPACE/ID` too); a pod's
    /// container (the `k8s.io` namespace) by the CRI's annotations, `NAMESPACE/POD/CONTAINER`, its
    /// image too; a pod's sandbox (its pause process) is not a container of its own. The group is
    /// the spec's `linux.cgroupsPath`.
    package static func containerdRecord(_ text: String, id: String, namespace: String, source: String) -> ContainerRecord? {
        guard !id.isEmpty, case .object(let spec)? = JSONValue.parse(text) else { return nil }
        var annotations: [String: String] = [:]
        if case .object(let fields)? = spec["annotations"] {
            for case let (key, .string(value)) in fields { annotations[key] = value }
        }
        var record = ContainerRecord(id: id, names: namespace == "default" ? [id] : [id, namespace + "/" + id], runtime: "containerd", source: source)
        if let type = annotations["io.kubernetes.cri.container-type"] {
            guard type == "container", let container = annotations["io.kubernetes.cri.container-name"],
                  let pod = annotations["io.kubernetes.cri.sandbox-name"], let podNamespace = annotations["io.kubernetes.cri.sandbox-namespace"] else { return nil }
            record.names = [podNamespace + "/" + pod + "/" + container]
            record.kubernetes = (podNamespace, pod, container)
            record.image = annotations["io.kubernetes.cri.image-name"]
        }
        if case .object(let linux)? = spec["linux"], case .string(let path)? = linux["cgroupsPath"] { record.groupPath = groupPath(cgroupsPath: path) }
        return record
    }

    /// An OCI `cgroupsPath` as a path below the hierarchy's root: `/default/web` as it is;
    /// systemd's `SLICE:PREFIX:NAME` as systemd lays it out (`kubepods-burstable-pod1.slice:
    /// cri-containerd:ID` is `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/
    /// cri-containerd-ID.scope`: a slice's name says the slices above it).
    package static func groupPath(cgroupsPath path: String) -> String? {
        let parts = path.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return path.isEmpty ? nil : (path.hasPrefix("/") ? path : "/" + path) }
        let slice = String(parts[0]), scope = parts[1].isEmpty ? String(parts[2]) : parts[1] + "-" + parts[2]
        var slices: [String] = []
        if slice != "-.slice" && slice.hasSuffix(".slice") {
            let words = slice.dropLast(6).split(separator: "-")
            for end in 1...max(1, words.count) { slices.append(words.prefix(end).joined(separator: "-") + ".slice") }
        }
        return "/" + (slices + [scope + ".scope"]).joined(separator: "/")
    }

    /// The record of Docker's `config.v2.json`: `{"ID": "…", "Name": "/web", "Config": {"Image": "nginx:1.25"}, …}`.
    package static func dockerRecord(_ text: String, source: String) -> ContainerRecord? {
        guard case .object(let fields)? = JSONValue.parse(text), case .string(let id)? = fields["ID"], isID(id) else { return nil }
        var names: [String] = []
        if case .string(let name)? = fields["Name"] {
            let bare = name.hasPrefix("/") ? String(name.dropFirst()) : name
            if !bare.isEmpty { names.append(bare) }
        }
        var image: String?
        if case .object(let config)? = fields["Config"], case .string(let named)? = config["Image"] { image = named }
        return ContainerRecord(id: id, names: names, runtime: "docker", source: source, image: image)
    }

    /// The container `given` names: a name, or an ID or its first digits (at least 3, one container's).
    public func find(_ given: String) -> Result<ContainerRecord, PerfHUDError> {
        let all = records()
        let named = all.filter { $0.names.contains(given) }
        // Two runtimes may each have one of the name: the running one (whose group there is).
        if let running = named.count > 1 ? named.first(where: { group(of: $0) != nil }) : nil { return .success(running) }
        if let first = named.first { return .success(first) }
        let lowered = given.lowercased()
        if lowered.count >= 3, Self.isHex(lowered) {
            let matching = all.filter { $0.id.hasPrefix(lowered) }
            if matching.count == 1 { return .success(matching[0]) }
            if matching.count > 1 {
                return .failure(PerfHUDError(.usage, "\(given) begins the IDs of \(matching.count) containers: give more of it or the name"))
            }
            // Running, but no record read names it (containerd's own containers, a runtime whose
            // records are elsewhere): found by its group, and named by its ID, never by a guess.
            let running = runningGroups().filter { $0.key.hasPrefix(lowered) }
            if running.count == 1, let (id, group) = running.first { return .success(unnamed(id: id, group: group)) }
        }
        let looked = sources.map(\.path).joined(separator: ", ")
        return .failure(PerfHUDError(.noInput, "no container named \(TerminalText.escaped(given)) (the runtimes' records read: \(looked))"))
    }

    /// A container no record read names, running in `group`: its label is its ID's first 12 digits,
    /// its runtime the one its group's name says (`docker`, `podman`, `containerd`, `cri-o`), its
    /// source why it has no name.
    public func unnamed(id: String, group: String) -> ContainerRecord {
        let name = group.split(separator: "/").last.map(String.init) ?? ""
        let runtime = name.hasPrefix("libpod-") ? "podman" : name.hasPrefix("cri-containerd-") ? "containerd"
            : name.hasPrefix("crio-") ? "cri-o" : name.hasPrefix("docker-") || group.hasPrefix("/docker/") ? "docker" : "unknown"
        return ContainerRecord(id: id, names: [], runtime: runtime,
                               source: "no record read names it (\(sources.map(\.path).joined(separator: ", "))): named by its ID")
    }

    /// The container's control group, below the hierarchy's root, or nil while it has none (not
    /// running). Breadth first over the whole tree (containers sit under `machine.slice`,
    /// `system.slice`, `libpod_parent`, `kubepods…`, or a user's slice for a rootless one).
    public func group(of record: ContainerRecord) -> String? {
        guard let path = record.groupPath else { return group(of: record.id) }
        var status = stat()
        return stat(hierarchy.root + path, &status) == 0 ? path : nil
    }

    public func group(of id: String) -> String? {
        hierarchy.firstGroup(descendingInto: { _ in true }) { name, parent in Self.names(name, id, under: parent) }
    }

    /// Whether the group directory `name` (in `parent`) is the container `id`'s.
    static func names(_ name: String, _ id: String, under parent: String) -> Bool {
        name.hasSuffix(id) || name.hasSuffix(id + ".scope") ? self.id(ofGroupNamed: name, under: parent) == id : false
    }

    /// The container ID a group directory `name` (in `parent`) is named by, or nil where it is
    /// not a container's: `libpod-ID`, `libpod-ID.scope`, `docker-ID.scope`,
    /// `cri-containerd-ID.scope`, `crio-ID.scope`, or the ID alone below a `docker` group.
    static func id(ofGroupNamed name: String, under parent: String) -> String? {
        let stem = name.hasSuffix(".scope") ? name.dropLast(6) : name[...]
        guard stem.count >= 64 else { return nil }
        let id = String(stem.suffix(64))
        guard isID(id) else { return nil }
        let prefix = stem.dropLast(64)
        if ["libpod-", "docker-", "cri-containerd-", "crio-"].contains(String(prefix)) { return id }
        // The cgroupfs drivers: Docker's /docker/ID, the kubelet's /kubepods/<qos>/pod<UID>/ID.
        guard prefix.isEmpty else { return nil }
        let above = parent.split(separator: "/").last.map(String.init) ?? ""
        return above == "docker" || (PodLookup.uid(ofGroupNamed: above) != nil && !above.hasSuffix(".slice")) ? id : nil
    }

    /// The running containers' groups by ID (below the hierarchy's root), from one walk of the
    /// whole tree: what `--containers` looks for new containers with. A container's own
    /// sub-groups are not walked.
    public func runningGroups() -> [String: String] {
        var found: [String: String] = [:]
        hierarchy.eachGroup { name, parent in
            guard let id = Self.id(ofGroupNamed: name, under: parent) else { return .descend }
            if found[id] == nil { found[id] = parent + "/" + name }
            return .skip
        }
        return found
    }

    static func isID(_ text: String) -> Bool { text.count == 64 && isHex(text) }

    private static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
