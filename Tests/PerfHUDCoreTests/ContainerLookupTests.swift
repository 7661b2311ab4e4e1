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
}
