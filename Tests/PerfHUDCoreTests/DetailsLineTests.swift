import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDStore
@testable import PerfHUDRender

/// The HUD's details line: its fields, their limits, and fitting a width by dropping fields.
final class DetailsLineTests: XCTestCase {
    private let plain = Palette(enabled: false)

    /// A report with every "why" figure, none past its limit.
    private func report() -> TargetFigures {
        var report = TargetFigures(wallSeconds: 0, elapsedSeconds: 10, pid: 1, alive: true, processCount: 1)
        report.cpuWaitPercent = 12
        report.voluntarySwitchesPerSecond = 1170
        report.involuntarySwitchesPerSecond = 30
        report.minorFaultsPerSecond = 3400
        report.majorFaultsPerSecond = 0
        report.ioReadBytesPerSecond = 0
        report.ioWriteBytesPerSecond = 12 * 1024 * 1024
        report.fdsOpen = 37
        report.fdsLimit = 1024
        report.residentAnonBytes = 40 << 20
        report.residentFileBytes = 8 << 20
        report.residentShmemBytes = 0
        report.busiestThreads = [BusyThread(pid: 1, tid: 2, name: "worker-3", cpuPercent: 98)]
        report.cpuThrottledPercent = 0
        report.leakSuspected = false
        return report
    }

    func testTheLineSaysEachFigure() {
        let line = DetailsLine.render(report(), note: nil, width: 300, paint: plain, unicode: true)
        XCTAssertEqual(line, " wait 12% │ throttled 0% │ cs 1.2k/s (inv 30) │ flt 3.4k/s │ io r 0 B/s w 12.0 MiB/s │ fds 37/1024"
                             + " │ anon 40.0 MiB file 8.0 MiB │ busiest worker-3 98%")
    }

    func testTheOOMScoreFollowsMemoryWhenRead() {
        var report = report()
        report.everySecond.oomScore = 667
        let line = DetailsLine.render(report, note: nil, width: 300, paint: plain, unicode: true)
        XCTAssertTrue(line.contains(" │ anon 40.0 MiB file 8.0 MiB │ oom 667 │ busiest worker-3 98%"), line)
        XCTAssertFalse(DetailsLine.render(self.report(), note: nil, width: 300, paint: plain, unicode: true).contains("oom"), "not read: not shown")
    }

    func testANarrowLineDropsTheLeastImportantFieldsFirstAndNeverWraps() {
        let full = DetailsLine.render(report(), note: nil, width: 300, paint: plain, unicode: true)
        for width in [0, 1, 5, 20, 40, 60, 80, 100] {
            let line = DetailsLine.render(report(), note: nil, width: width, paint: plain, unicode: true)
            XCTAssertLessThanOrEqual(TerminalText.displayWidth(line), width, line)
            XCTAssertFalse(line.contains("\n"))
            if width >= 20 { XCTAssertTrue(line.hasPrefix(" wait 12%"), "waiting stays longest: \(line)") }
        }
        let sixty = DetailsLine.render(report(), note: nil, width: 60, paint: plain, unicode: true)
        XCTAssertEqual(sixty, " wait 12% │ cs 1.2k/s (inv 30) │ flt 3.4k/s │ fds 37/1024", "throttled 0 and memory go first, then the rightmost of equals")
        XCTAssertTrue(full.contains("busiest worker-3"))
    }

    func testFitDropsByPriorityThenFromTheRight() {
        let fields = [DetailsLine.Field(priority: 1, text: "aaaa"), DetailsLine.Field(priority: 2, text: "bbbb"),
                      DetailsLine.Field(priority: 0, text: "cccc"), DetailsLine.Field(priority: 2, text: "dddd")]
        XCTAssertEqual(DetailsLine.fit(fields, separator: "|", width: 100), " aaaa|bbbb|cccc|dddd")
        XCTAssertEqual(DetailsLine.fit(fields, separator: "|", width: 15), " aaaa|bbbb|cccc")
        XCTAssertEqual(DetailsLine.fit(fields, separator: "|", width: 14), " aaaa|cccc")
        XCTAssertEqual(DetailsLine.fit(fields, separator: "|", width: 9), " cccc")
        XCTAssertEqual(DetailsLine.fit(fields, separator: "|", width: 3), " cc", "the last field alone is cut")
    }

    func testFiguresPastTheirLimitsAreHighlightedAndKept() {
        var report = report()
        report.cpuWaitPercent = 180
        report.fdsOpen = 900
        report.cpuThrottledPercent = 35
        report.majorFaultsPerSecond = 4
        report.leakSuspected = true
        report.residentTrendBytesPerHour = 120 * 1024 * 1024
        let paint = Palette(enabled: true)
        let fields = DetailsLine.fields(report, paint: paint)
        let red = "\u{1B}[31m"
        for figure in ["leak? +120.0 MiB/h", "wait 180%", "throttled 35%", "maj 4/s", "fds 900/1024"] {
            let field = fields.first { $0.text.contains(figure) }
            XCTAssertNotNil(field, figure)
            XCTAssertTrue(field?.text.contains(red + "\u{1B}[1m" + figure) == true, "\(figure) highlighted: \(field?.text ?? "")")
            XCTAssertEqual(field?.priority, 0, figure)
        }
        let calm = DetailsLine.fields(self.report(), paint: paint)
        XCTAssertFalse(calm.contains { $0.text.contains(red) }, "nothing past a limit, nothing highlighted: \(calm)")
        // Only the past-the-limit fields survive a narrow terminal.
        let narrow = DetailsLine.render(report, note: nil, width: 70, paint: plain, unicode: true)
        XCTAssertTrue(narrow.hasPrefix(" leak? +120.0 MiB/h │ wait 180% │ throttled 35%"), narrow)
    }

    func testAThreadNameIsEscaped() {
        var report = report()
        report.busiestThreads = [BusyThread(pid: 1, tid: 2, name: "ev\u{1B}[2J\u{9B}x", cpuPercent: 50)]
        let line = DetailsLine.render(report, note: nil, width: 300, paint: plain, unicode: true)
        XCTAssertTrue(line.contains("busiest ev\\e[2J\\u{9b}x 50%"), line)
        XCTAssertFalse(line.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B }, line)
    }

    func testASCIILocaleAndNotes() {
        let ascii = DetailsLine.render(report(), note: nil, width: 300, paint: Palette(enabled: true), unicode: false)
        XCTAssertTrue(ascii.utf8.allSatisfy { $0 < 0x80 }, ascii)
        XCTAssertTrue(ascii.contains(" | "), ascii)
        XCTAssertEqual(DetailsLine.render(nil, note: nil, width: 80, paint: plain, unicode: true), " why: no figures yet")
        XCTAssertEqual(DetailsLine.render(report(), note: "not in this file", width: 10, paint: plain, unicode: true), " not in th")
    }

    func testCountsAreShort() {
        XCTAssertEqual([0, 29.6, 999.4, 999.6, 1234, 9949, 34_400, 999_400, 1_240_000].map(DetailsLine.count),
                       ["0", "30", "999", "1.0k", "1.2k", "9.9k", "34k", "999k", "1.2M"])
    }

    func testTheHUDHasTheLineUnderTheStatusLineOnlyWhenShown() {
        var snapshot = HUDSnapshot(pid: 1, commandName: "x", figures: report(), series: TimeSeries(capacity: 10),
                                   tickNanoseconds: 100_000_000, historySeconds: 600, status: .running, elapsedSeconds: 1)
        let size = TerminalSize(rows: 24, columns: 200)
        let hidden = HUDRenderer.render(snapshot, size: size, style: HUDStyle(color: false))
        let shown = HUDRenderer.render(snapshot, size: size, style: HUDStyle(color: false, showsDetails: true))
        XCTAssertEqual(shown.count, hidden.count + 1)
        XCTAssertEqual(shown.count, HUDRenderer.height(for: size, style: HUDStyle(showsDetails: true)))
        XCTAssertTrue(shown[1].hasPrefix(" wait 12%"), shown[1])
        XCTAssertFalse(hidden.joined().contains("wait 12%"))
        snapshot.detailsNote = "details: not in this file"
        XCTAssertEqual(HUDRenderer.render(snapshot, size: size, style: HUDStyle(color: false, showsDetails: true))[1], " details: not in this file")
        // Small terminals: the program keeps three rows; every line fits.
        for rows in 1...10 {
            for columns in [1, 30, 60] {
                let size = TerminalSize(rows: rows, columns: columns)
                let lines = HUDRenderer.render(snapshot, size: size, style: HUDStyle(showsDetails: true))
                XCTAssertEqual(lines.count, HUDRenderer.height(for: size, style: HUDStyle(showsDetails: true)))
                if rows >= 4 { XCTAssertGreaterThanOrEqual(rows - lines.count, 3, "\(rows) rows") }
                for line in lines { XCTAssertLessThanOrEqual(TerminalText.displayWidth(line), columns) }
            }
        }
    }
}
