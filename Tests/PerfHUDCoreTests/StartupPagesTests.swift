import XCTest
@testable import PerfHUDSupport

/// Written before the release, in the test executable's writable data (initialised in the file,
/// so its page starts as a page of the file): the release must keep the written value.
nonisolated(unsafe) private var writtenBeforeRelease = 41

/// `StartupPages.release()` drops the executable's pages from the process — here the test
/// runner's own, which then goes on running the rest of the tests from refaulted pages.
final class StartupPagesTests: XCTestCase {
    private func residentKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        return try XCTUnwrap(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }

    func testReleasedPagesComeBackAndWrittenDataStays() throws {
        writtenBeforeRelease += 1
        let before = try residentKilobytes()
        let released = StartupPages.release()
        XCTAssertGreaterThan(released, 0, "start-up left pages of the executable resident")
        XCTAssertLessThan(try residentKilobytes(), before, "the process's file pages went down")
        XCTAssertEqual(writtenBeforeRelease, 42, "a page the process wrote is its own, never dropped")
        // Code and constants of the executable, faulted back in from the file.
        XCTAssertEqual(String(describing: ExitStatus.self), "ExitStatus")
        XCTAssertEqual([3, 1, 2].sorted(), [1, 2, 3])
    }
}
