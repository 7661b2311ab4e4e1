import XCTest
@testable import PerfHUDDaemon
@testable import PerfHUDSupport
@testable import PerfHUDSampling
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon reads of systemd's layout and how it writes to peers that may stall.
final class DaemonPeersTests: XCTestCase {
    private var root = ""

    override func setUp() {
        var template = Array("/tmp/perfhud-cgroup-XXXXXX".utf8CString)
        root = String(cString: mkdtemp(&template)!)
    }

    override func tearDown() { _ = system("rm -rf '\(root)'") }

    /// A directory laid out as a control-group tree, with the given PIDs in `cgroup.procs`.
    private func group(_ path: String, _ pids: [Int32] = []) {
        var built = root
        for part in path.split(separator: "/") {
            built += "/" + part
            mkdir(built, 0o755)
        }
        let text = pids.map { "\($0)\n" }.joined()
        FileManagerless.write(built + "/cgroup.procs", text)
    }

    func testAUnitIsFoundInItsSliceAndItsSubGroupsAreSummed() {
        group("", [1])
        group("init.scope", [1])
        group("user.slice/user-1000.slice/user@1000.service/app.slice/web.service", [900])   // a user's, not ours
        group("system.slice", [])
        group("system.slice/web.service", [101, 102])
        group("system.slice/web.service/worker", [103])
        group("system.slice/system-perfhud.slice/perfhud@web.service", [200])
        let tree = UnitControlGroup(root: root)
        XCTAssertEqual(tree.find("web.service"), "/system.slice/web.service")
        XCTAssertEqual(tree.processes(in: "/system.slice/web.service")?.sorted(), [101, 102, 103])
        XCTAssertEqual(tree.find("perfhud@web.service"), "/system.slice/system-perfhud.slice/perfhud@web.service")
        XCTAssertNil(tree.find("app.slice"), "units are not looked for inside other units or user sessions")
        XCTAssertNil(tree.find("db.service"))
        XCTAssertNil(tree.processes(in: "/system.slice/db.service"), "a group that is gone is nil, not empty")
    }

    func testAUnitUnderItsOwnSliceIsFound() {
        group("custom.slice/nested.slice/batch.service", [7])
        XCTAssertEqual(UnitControlGroup(root: root).find("batch.service"), "/custom.slice/nested.slice/batch.service")
    }

    func testAStoppedUnitThatRestartsIsFoundAgainByTheResolver() throws {
        group("system.slice")
        let resolver = try TargetResolver(selector: .unit("web.service"), controlGroups: UnitControlGroup(root: root))
        guard case .failure(let reason) = resolver.resolve() else { return XCTFail("not running yet") }
        XCTAssertEqual(reason.description, "web.service is not running")
        group("system.slice/web.service", [getpid()])
        XCTAssertEqual(try resolver.resolve().get(), [getpid()])
        _ = system("rm -rf '\(root)/system.slice/web.service'")
        group("system.slice/web.service", [getppid()])
        XCTAssertEqual(try resolver.resolve().get(), [getppid()], "the new group's processes, not the old ones")
    }

    func testPIDListsAreReadWhateverTheirSpacing() {
        XCTAssertEqual(UnitControlGroup.integers(Array("1\n22\n333\n".utf8)), [1, 22, 333])
        XCTAssertEqual(UnitControlGroup.integers(Array("4194304".utf8)), [4194304])
        XCTAssertEqual(UnitControlGroup.integers([]), [])
    }

    func testAZombieIsNotARunningTarget() {
        var child = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("true"), nil]
        XCTAssertEqual(posix_spawnp(&child, "true", nil, nil, argv, environ), 0)
        // Not reaped: a zombie once it has ended.
        var zombie = false
        for _ in 0..<500 where !zombie {
            usleep(10_000)
            if case .success(let data) = KeptOpenFile.contents(of: "/proc/\(child)/stat"),
               let stat = data.withUnsafeBytes({ ProcParser.stat($0) }) { zombie = stat.state == UInt8(ascii: "Z") }
        }
        XCTAssertTrue(zombie)
        XCTAssertFalse(TargetResolver.exists(child))
        XCTAssertTrue(TargetResolver.exists(getpid()))
        var status: Int32 = 0
        waitpid(child, &status, 0)
        XCTAssertFalse(TargetResolver.exists(child), "reaped: gone")
    }

    func testJournalEntriesUseTheBinaryFormOnlyForValuesWithNewlines() {
        let entry = JournalSocket.encode([("PRIORITY", "4"), ("MESSAGE", "a\nb")])
        var expected = Array("PRIORITY=4\nMESSAGE\n".utf8)
        expected += [3, 0, 0, 0, 0, 0, 0, 0]
        expected += Array("a\nb\n".utf8)
        XCTAssertEqual(entry, expected)
    }

    func testAPipeNobodyDrainsDropsAndCountsLinesInsteadOfWaiting() {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[0]); close(ends[1]) }
        let writer = NonBlockingWriter(descriptor: ends[1])
        let line = Array(String(repeating: "x", count: 999).utf8) + [10]
        var written = 0
        for _ in 0..<200 { if writer.write(line) { written += 1 } }   // 200 KB into a 64 KiB pipe
        XCTAssertGreaterThan(written, 0)
        XCTAssertEqual(writer.dropped, 200 - written)
        XCTAssertGreaterThan(writer.dropped, 0)
        XCTAssertEqual(fcntl(ends[1], F_GETFL) & O_NONBLOCK, 0, "the descriptor we were handed keeps its flags")
        // Whatever arrived is whole lines.
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count <= 0 { break }
            total += count
        }
        XCTAssertEqual(total, written * line.count)
    }

    func testAStreamSocketCutShortFinishesTheLineBeforeTheNext() {
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[0]); close(pair[1]) }
        let writer = NonBlockingWriter(descriptor: pair[1])
        let line = Array(String(repeating: "y", count: 2999).utf8) + [10]
        for _ in 0..<400 { writer.write(line) }
        XCTAssertGreaterThan(writer.dropped, 0)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<3 {
            while true {
                let count = recv(pair[0], &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count <= 0 { break }
                received += buffer[0..<count]
            }
            writer.write(line)   // the reader caught up: the cut line is finished first
        }
        while true {
            let count = recv(pair[0], &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        XCTAssertEqual(received.count % line.count, 0, "only whole lines")
        XCTAssertTrue(received.split(separator: 10).allSatisfy { $0.count == 2999 })
    }
}

/// Writes a small file (no Foundation in this package).
enum FileManagerless {
    static func write(_ path: String, _ text: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { return }
        _ = text.withCString { Glibc.write(descriptor, $0, strlen($0)) }
        close(descriptor)
    }
}
