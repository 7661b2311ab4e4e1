import XCTest
@testable import PerfHUDSampling
@testable import PerfHUDPipeline
@testable import PerfHUDRecordings

/// `report` on the "why" figures: the HTML charts and the sentences appear for a recording that
/// has them and not for an older one; a thread's name (the target's to choose) is escaped; the
/// busiest threads' lines have gaps where a thread's CPU is unknown; the I/O totals are the rates
/// over their intervals.
final class WhyReportTests: XCTestCase {
    /// 10 s at 100 ms: two threads, "hot" at 90 % and "<b>cold</b>" at 10 %, listed from 1 s on;
    /// 1 MiB written a second; 100 descriptors of 1024; waiting 50 %.
    static func recording(format: Int64 = 4, ioReadable: Bool = true) -> Recording {
        var recording = Recording()
        recording.format = format
        recording.meta = ["target_command": "app", "target_pid": "42", "tick_seconds": "0.1"]
        for index in 0...100 {
            var row = Recording.SampleRow(t: Double(index) / 10, cpuPercent: 100, residentBytes: 10 << 20)
            guard format >= 4 else { recording.samples.append(row); continue }
            row.figures.cpuWaitPercent = 50
            if index > 0 && ioReadable { row.figures.ioWriteBytesPerSecond = Double(1 << 20); row.figures.ioReadBytesPerSecond = 0 }
            row.figures.minorFaultsPerSecond = 0
            row.figures.majorFaultsPerSecond = 0
            row.figures.fdsOpen = 100
            row.figures.fdsLimit = 1024
            row.figures.residentAnonBytes = 8 << 20
            row.figures.busiestThreads = index < 10 ? [] : [BusyThread(pid: 42, tid: 43, name: "hot", cpuPercent: 90),
                                                          BusyThread(pid: 42, tid: 44, name: "<b>cold</b>", cpuPercent: 10)]
            row.figures.residentTrendBytesPerHour = 0
            row.figures.residentTrendR2 = 0
            row.figures.leakSuspected = false
            recording.samples.append(row)
        }
        return recording
    }

    static func page(_ recording: Recording) -> String {
        HTMLReport.page(.init(recording: recording, summary: RecordingSummary(recording), path: "run.db"))
    }

    func testTheChartsAndSentencesOfARecordingWithTheFigures() throws {
        let page = Self.page(Self.recording())
        for title in ["Waiting for a CPU", "Busiest threads", "Storage I/O", "Open file descriptors"] {
            XCTAssertTrue(page.contains("<h3>\(title)</h3><svg"), title)
        }
        XCTAssertTrue(page.contains("<h3>Page faults</h3><p class=\"note\">none: no page was faulted in during the run</p>"), "all zero: one line, no chart")
        XCTAssertTrue(page.contains("<li><b>busiest thread</b>: hot (TID 43): 90 % of one core over its busiest second, 1 s in</li>"), page)
        XCTAssertTrue(page.contains("written 10.0 MiB in total"), "1 MiB/s over the 10 s the rows cover")
        XCTAssertTrue(page.contains("limit 1024 (far above: not drawn)"), "100 of 1024: the limit would flatten the line")
        XCTAssertFalse(page.contains("<b>cold</b>"), "a thread's name is escaped")
        XCTAssertTrue(page.contains("&lt;b&gt;cold&lt;/b&gt;"))
        let why = WhySummary(Self.recording(), phase: nil)
        XCTAssertEqual(try XCTUnwrap(why.writtenBytes), 10 * 1048576, accuracy: 1)
        XCTAssertEqual(why.busiest?.tid, 43)
    }

    func testTheBusiestThreadsLinesAreUnknownBeforeTheFirstListAndBelowTheThird() {
        var recording = Self.recording()
        // From 5 s on three other threads take the list: "<b>cold</b>" is below the third, unknown.
        for index in 50...100 {
            recording.samples[index].figures.busiestThreads = [BusyThread(pid: 42, tid: 43, name: "hot", cpuPercent: 90)]
                + (45...47).map { BusyThread(pid: 42, tid: Int32($0), name: "w\($0)", cpuPercent: 20) }.prefix(2)
        }
        let threads = HTMLReportCharts.busiestThreads(recording)
        XCTAssertEqual(threads.map(\.name), ["hot", "w45", "w46", "<b>cold</b>"])
        let hot = threads[0].points, cold = threads[3].points
        XCTAssertTrue(hot[..<10].allSatisfy { $0.value == nil }, "before the first list: not known yet")
        XCTAssertEqual(hot[10].value, 90)
        XCTAssertEqual(cold[20].value, 10)
        XCTAssertNil(cold[60].value, "three others listed: below the third, not 0")
        XCTAssertEqual(threads[0].busiestSeconds, 9.1, accuracy: 0.01)
    }

    func testAnOlderRecordingHasNoneOfIt() {
        let recording = Self.recording(format: 3)
        let page = Self.page(recording)
        XCTAssertFalse(page.contains("Waiting for a CPU") || page.contains("Busiest threads") || page.contains("Why it is slow"), page)
        let markdown = SummaryFormatter.markdown(RecordingSummary(recording), recording: recording)
        XCTAssertFalse(markdown.contains("cpu_wait_percent") || markdown.contains("Why it is slow"), markdown)
        XCTAssertTrue(markdown.contains("| cpu_percent_avg | 100 % |"), markdown)
    }

    func testUnreadableIOIsSaidNotDrawn() {
        let recording = Self.recording(ioReadable: false)
        let page = Self.page(recording)
        XCTAssertTrue(page.contains("<h3>Storage I/O</h3><p class=\"note\">not read"), page)
        let markdown = SummaryFormatter.markdown(RecordingSummary(recording), recording: recording)
        XCTAssertTrue(markdown.contains("- **storage I/O**: not read"), markdown)
        XCTAssertTrue(markdown.contains("- **busiest thread**: hot (TID 43): 90 %"), markdown)
        XCTAssertTrue(markdown.contains("- **descriptors**: peak 100 open of a limit of 1024 (9.8 %)"), markdown)
        XCTAssertTrue(markdown.contains("- **leak**: not suspected"), markdown)
    }
}
