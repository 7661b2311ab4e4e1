import XCTest
import Foundation
@testable import PerfHUDSupport
@testable import PerfHUDSampling

/// Finding a container (issue 45): its runtime's record gives the ID, the ID names its control
/// group. The records are podman's `containers.json` as podman 4.3 wrote it on this machine; the
/// hierarchy a directory tree laid out as the runtimes' drivers lay theirs (the real runtime is
/// in Tests/EndToEnd/test_containers.py).
final class ContainerLookupTests: XCTestCase {
    let web = "1501e7666b9efcf4b2775ab6f433618ef6d58d72d932a3420465ec6f581a92f3"
    let db = "150" + String(repeating: "a", count: 61)

    private func layout(_ groups: [String], records: String) throws -> (ContainerLookup, String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("containers-\(getpid())-\(UUID().uuidString)").path
        for group in groups {
            try FileManager.default.createDirectory(atPath: root + group, withIntermediateDirectories: true)
            // Every group has its cgroup.procs, empty above the one the process is in.
            var path = root
            for part in group.split(separator: "/") {
                path += "/" + part
                let procs = path + "/cgroup.procs"
                if !FileManager.default.fileExists(atPath: procs) { try "".write(toFile: procs, atomically: true, encoding: .utf8) }
            }
            try "\(getpid())\n".write(toFile: root + group + "/cgroup.procs", atomically: true, encoding: .utf8)
        }
        try records.write(toFile: root + "/containers.json", atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        return (ContainerLookup(sources: [.podman(root + "/containers.json")], hierarchy: UnitControlGroup(root: root)), root)
    }

    func testANameOrTheFirstDigitsOfAnIDFindTheRecordAndTheIDItsGroup() throws {
        let records = #"[{"id":"\#(web)","names":["web"],"image":"e65e"},{"id":"\#(db)","names":["db","db-alias"]}]"#
        // podman's cgroupfs driver (this machine), and the systemd driver's scope under machine.slice.
        let (lookup, root) = try layout(["/libpod_parent/libpod-\(web)", "/machine.slice/libpod-\(db).scope/container"], records: records)
        XCTAssertEqual(try lookup.find("web").get().id, web)
        XCTAssertEqual(try lookup.find("db-alias").get().id, db)
        XCTAssertEqual(try lookup.find("1501e7").get().label, "web", "an ID's first digits, one container's")
        XCTAssertEqual(lookup.group(of: web), "/libpod_parent/libpod-\(web)")
        XCTAssertEqual(lookup.group(of: db), "/machine.slice/libpod-\(db).scope")
        XCTAssertEqual(UnitControlGroup(root: root).processes(in: lookup.group(of: db)!), [getpid()], "a sub-group's processes are the container's")
        guard case .failure(let ambiguous) = lookup.find("15") else { return XCTFail("two digits are too few") }
        XCTAssertTrue(ambiguous.message.hasPrefix("no container named 15"), ambiguous.message)
        guard case .failure(let both) = lookup.find("150") else { return XCTFail("150 begins both IDs") }
        XCTAssertEqual(both.message, "150 begins the IDs of 2 containers: give more of it or the name")
        guard case .failure(let missing) = lookup.find("cache") else { return XCTFail() }
        XCTAssertTrue(missing.message.hasPrefix("no container named cache (the runtimes' records read: "), missing.message)
    }

    func testTheDriversGroupNamesAndNoOther() {
        for name in ["libpod-\(web)", "libpod-\(web).scope", "docker-\(web).scope", "cri-containerd-\(web).scope", "crio-\(web).scope"] {
            XCTAssertTrue(ContainerLookup.names(name, web, under: "/any"), name)
        }
        XCTAssertTrue(ContainerLookup.names(web, web, under: "/docker"), "docker's cgroupfs driver: /docker/ID")
        XCTAssertTrue(ContainerLookup.names(web, web, under: "/kubepods/burstable/pod6a0d5c55-2f3e-4b8a-9c1d-0e2f3a4b5c6d"),
                      "the kubelet's cgroupfs driver: /kubepods/<qos>/pod<UID>/ID")
        XCTAssertFalse(ContainerLookup.names(web, web, under: "/system.slice"), "a bare ID elsewhere is not a runtime's")
        XCTAssertFalse(ContainerLookup.names("conmon", web, under: "/libpod_parent"))
        XCTAssertFalse(ContainerLookup.names("libpod-conmon-\(web).scope", web, under: "/machine.slice"), "podman's monitor is not the container")
    }

    func testRecordsThatAreNotWholeAreLeftOut() {
        XCTAssertEqual(ContainerLookup.podmanRecords(#"[{"id":"\#(web)"}]"#, source: "x").map(\.label), ["1501e7666b9e"], "no name: the ID's first 12")
        XCTAssertEqual(ContainerLookup.podmanRecords(#"[{"id":"abc","names":["x"]}]"#, source: "x"), [], "not a whole ID")
        XCTAssertEqual(ContainerLookup.podmanRecords(#"{"id":"\#(web)"}"#, source: "x"), [])
        XCTAssertEqual(ContainerLookup.podmanRecords(String(repeating: "[", count: 200), source: "x"), [], "nesting is bounded")
    }

    func testDockersRecordGivesTheNameWithoutItsSlashAndTheImage() throws {
        // What docker.io 20.10 wrote on this machine (trimmed to the fields read and a few beside them).
        let text = #"{"ID":"\#(web)","Name":"/web","State":{"Running":true,"Pid":7232},"Config":{"Hostname":"1501e7666b9e","Image":"nginx:1.25","Cmd":["nginx"]}}"#
        let record = try XCTUnwrap(ContainerLookup.dockerRecord(text, source: "config.v2.json"))
        XCTAssertEqual(record, ContainerRecord(id: web, names: ["web"], runtime: "docker", source: "config.v2.json", image: "nginx:1.25"))
        XCTAssertNil(ContainerLookup.dockerRecord(#"{"ID":"abc","Name":"/x"}"#, source: "x"), "not a whole ID")
        XCTAssertEqual(ContainerLookup.dockerRecord(#"{"ID":"\#(web)","Name":"/"}"#, source: "x")?.label, "1501e7666b9e", "no name: the ID's first 12")
        // podman's image name is in its metadata, JSON within a string.
        let podman = #"[{"id":"\#(db)","names":["db"],"metadata":"{\"image-name\":\"localhost/db:1\",\"name\":\"db\"}"}]"#
        XCTAssertEqual(ContainerLookup.podmanRecords(podman, source: "x").first?.image, "localhost/db:1")
    }

    func testContainerdsSpecNamesItsContainerAndItsGroup() throws {
        // `ctr run IMAGE web`: named by its ID, its group the spec's cgroupsPath (containerd 1.6 here).
        let ctr = try XCTUnwrap(ContainerLookup.containerdRecord(#"{"ociVersion":"1.0.2","linux":{"cgroupsPath":"/default/web"}}"#,
                                                                 id: "web", namespace: "default", source: "config.json"))
        XCTAssertEqual(ctr.names, ["web"]); XCTAssertEqual(ctr.groupPath, "/default/web"); XCTAssertEqual(ctr.runtime, "containerd")
        XCTAssertEqual(ContainerLookup.containerdRecord(#"{"linux":{}}"#, id: "api", namespace: "team", source: "x")?.names, ["api", "team/api"])
        // A pod's container, by the CRI's annotations, its group as systemd lays the slice out; its sandbox is none.
        let cri = #"{"annotations":{"io.kubernetes.cri.container-type":"container","io.kubernetes.cri.container-name":"nginx","#
            + #""io.kubernetes.cri.sandbox-name":"web-0","io.kubernetes.cri.sandbox-namespace":"shop","io.kubernetes.cri.image-name":"nginx:1.25"},"#
            + #""linux":{"cgroupsPath":"kubepods-burstable-pod1_2.slice:cri-containerd:\#(web)"}}"#
        let pod = try XCTUnwrap(ContainerLookup.containerdRecord(cri, id: web, namespace: "k8s.io", source: "x"))
        XCTAssertEqual(pod.label, "shop/web-0/nginx"); XCTAssertEqual(pod.image, "nginx:1.25")
        XCTAssertEqual(pod.groupPath, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice/cri-containerd-\(web).scope")
        XCTAssertNil(ContainerLookup.containerdRecord(#"{"annotations":{"io.kubernetes.cri.container-type":"sandbox"}}"#, id: web, namespace: "k8s.io", source: "x"))
        XCTAssertNil(ContainerLookup.containerdRecord("not json", id: "web", namespace: "default", source: "x"))
        XCTAssertEqual(ContainerLookup.groupPath(cgroupsPath: "system.slice:docker:\(web)"), "/system.slice/docker-\(web).scope")
        XCTAssertEqual(ContainerLookup.groupPath(cgroupsPath: "-.slice:prefix:name"), "/prefix-name.scope")
        XCTAssertEqual(ContainerLookup.groupPath(cgroupsPath: "default/web"), "/default/web")
    }

    func testRunningContainersAreFoundByTheirGroupsInOneWalk() throws {
        // Docker's cgroupfs driver, podman's systemd driver with a sub-group of its own, a kubelet's
        // containerd container under a pod, and groups that are no container's.
        let (lookup, _) = try layout(["/docker/\(web)", "/machine.slice/libpod-\(db).scope/container",
                                      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-\(String(repeating: "c", count: 64)).scope",
                                      "/system.slice/docker-\(String(repeating: "d", count: 63)).scope", "/system.slice/nginx.service"], records: "[]")
        XCTAssertEqual(lookup.runningGroups(), [
            web: "/docker/\(web)", db: "/machine.slice/libpod-\(db).scope",
            String(repeating: "c", count: 64): "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-\(String(repeating: "c", count: 64)).scope",
        ])
    }
}

/// Pods and their containers on a Kubernetes node (issue 45): the kubelet's names of its log
/// directories and links, and the groups its systemd and cgroupfs drivers make.
final class PodLookupTests: XCTestCase {
    let uid = "6a0d5c55-2f3e-4b8a-9c1d-0e2f3a4b5c6d"
    let id = String(repeating: "ab", count: 32)

    func testTheKubeletsLogLinkNamesAPodsContainer() throws {
        let record = try XCTUnwrap(ContainerLookup.kubeletRecord(fileName: "web-0_shop_nginx-\(id).log", source: "/var/log/containers"))
        XCTAssertEqual(record.id, id)
        XCTAssertEqual(record.label, "shop/web-0/nginx")
        XCTAssertEqual(record.kubernetes?.namespace, "shop"); XCTAssertEqual(record.kubernetes?.pod, "web-0"); XCTAssertEqual(record.kubernetes?.container, "nginx")
        for name in ["web-0_shop_nginx-\(id).txt", "web-0_nginx-\(id).log", "a_b_c_d-\(id).log", "web-0_shop_nginx-\(id.dropLast()).log",
                     "web-0_shop_nginx\(id).log", "__-\(id).log"] {
            XCTAssertNil(ContainerLookup.kubeletRecord(fileName: name, source: "x"), name)
        }
    }

    func testAPodsDirectoryAndItsGroupAreNamedByItsUID() {
        XCTAssertEqual(PodLookup.pod(directoryName: "shop_web-0_\(uid)"), PodRecord(namespace: "shop", name: "web-0", uid: uid))
        XCTAssertNil(PodLookup.pod(directoryName: "shop_web-0_not-a-uid"))
        XCTAssertNil(PodLookup.pod(directoryName: "web-0_\(uid)"))
        let underscored = uid.replacingOccurrences(of: "-", with: "_")
        // The systemd driver (Burstable, BestEffort, Guaranteed) and the cgroupfs driver.
        for name in ["kubepods-burstable-pod\(underscored).slice", "kubepods-besteffort-pod\(underscored).slice", "kubepods-pod\(underscored).slice", "pod\(uid)"] {
            XCTAssertEqual(PodLookup.uid(ofGroupNamed: name), uid, name)
        }
        for name in ["kubepods-burstable.slice", "pod\(underscored)", "machine-pod\(underscored).slice", "cri-containerd-\(id).scope", "pod"] {
            XCTAssertNil(PodLookup.uid(ofGroupNamed: name), name)
        }
    }
}

/// A group's own figures (issue 45): its memory as the kernel counts it and its CPU quota, from
/// the files' text as kernel 6.1 (v2) and this machine's hybrid v1 write them.
final class ControlGroupFiguresTests: XCTestCase {
    private func memory(_ stat: String, used: UInt64, layout: ControlGroupMemory.Layout, kernel: UInt64? = nil) -> GroupMemory {
        Array(stat.utf8).withUnsafeBytes { ControlGroupMemory.memory(used: used, stat: $0, layout: layout, kernelBytes: kernel) }
    }

    func testTheWorkingSetIsTheUsageLessInactiveFileAsTheKubeletsAndDockerStats() {
        let v2 = "anon 8388608\nfile 33554432\nkernel 1048576\nkernel_stack 65536\nshmem 0\ninactive_anon 0\nactive_anon 8388608\ninactive_file 25165824\nactive_file 8388608\n"
        XCTAssertEqual(memory(v2, used: 42_991_616, layout: .unified),
                       GroupMemory(usedBytes: 42_991_616, workingSetBytes: 42_991_616 - 25_165_824, anonBytes: 8_388_608, fileBytes: 33_554_432, kernelBytes: 1_048_576))
        // Before Linux 5.18 there is no `kernel` line: its parts.
        let older = "anon 4096\nfile 0\nkernel_stack 16384\npagetables 8192\npercpu 512\nsock 0\nslab 65536\ninactive_file 0\n"
        XCTAssertEqual(memory(older, used: 100_000, layout: .unified).kernelBytes, 16384 + 8192 + 512 + 65536)
        // v1: the hierarchy's totals (`total_`), the group's own lines beside them are not the figures.
        let v1 = "cache 0\nrss 65536\nshmem 0\ninactive_file 0\ntotal_cache 41955328\ntotal_rss 61440\ntotal_shmem 41943040\ntotal_inactive_file 4096\n"
        XCTAssertEqual(memory(v1, used: 42_659_840, layout: .v1, kernel: 270_336),
                       GroupMemory(usedBytes: 42_659_840, workingSetBytes: 42_659_840 - 4096, anonBytes: 61440, fileBytes: 41_955_328, kernelBytes: 270_336))
        XCTAssertEqual(memory("inactive_file 9000\n", used: 4096, layout: .unified).workingSetBytes, 0, "never below 0 (the counts are read apart)")
    }

    func testTheCPUQuotaIsTheSmallestUpTheTreeInCores() {
        XCTAssertEqual(ControlGroupCPULimit.cpuMax("50000 100000\n"), 0.5)
        XCTAssertNil(ControlGroupCPULimit.cpuMax("max 100000\n"), "no quota")
        XCTAssertNil(ControlGroupCPULimit.cpuMax("garbage"))
        XCTAssertEqual(ControlGroupCPULimit.quota("150000\n", period: "100000\n"), 1.5)
        XCTAssertNil(ControlGroupCPULimit.quota("-1\n", period: "100000\n"), "v1's none")
        let texts = ["/a/b/cpu.max": "max 100000\n", "/a/cpu.max": "200000 100000\n",
                     "/v1/a/b/cpu.cfs_quota_us": "25000\n", "/v1/a/b/cpu.cfs_period_us": "100000\n",
                     "/v1/a/cpu.cfs_quota_us": "-1\n", "/v1/a/cpu.cfs_period_us": "100000\n",
                     "/v1/c/cpu.cfs_quota_us": "10000\n"]   // a quota without its period says nothing
        XCTAssertEqual(ControlGroupCPULimit.smallest(texts), 0.25)
        XCTAssertNil(ControlGroupCPULimit.smallest(["/a/cpu.max": "max 100000\n"]))
        var directories = ControlGroupPlaces.Directories()
        directories.cpu = "/sys/fs/cgroup/cpu,cpuacct/docker/x"
        directories.cpuMount = "/sys/fs/cgroup/cpu,cpuacct"
        XCTAssertEqual(ControlGroupCPULimit.quotaPaths(directories), [
            "/sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct/docker/x/cpu.cfs_period_us",
            "/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us",
        ])
    }

    func testACgroupPathIsBelowTheHierarchysRootHoweverItIsGiven() {
        XCTAssertEqual(TargetSelector.controlGroup(given: "/system.slice/web.service/"), .controlGroup("/system.slice/web.service"))
        XCTAssertEqual(TargetSelector.controlGroup(given: "docker/abc"), .controlGroup("/docker/abc"))
        var status = stat()
        let pureV2 = stat("/sys/fs/cgroup/cgroup.controllers", &status) == 0
        // A hierarchy's directory: the mount's own name goes on a v1 or hybrid host; on pure v2 there is none.
        XCTAssertEqual(TargetSelector.controlGroup(given: "/sys/fs/cgroup/memory/docker/abc"), .controlGroup(pureV2 ? "/memory/docker/abc" : "/docker/abc"))
        XCTAssertEqual(TargetSelector.controlGroup(given: "/sys/fs/cgroup/system.slice"), .controlGroup("/system.slice"), "not a hierarchy's directory")
    }
}
