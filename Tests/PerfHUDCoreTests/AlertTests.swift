import Foundation
import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDRender

/// `--alert`: what it reads, when it holds (`AlertTracker`), and how each bar shows it.
final class AlertTests: XCTestCase {
    func testARuleReadsTheFailOnGrammarWithADuration() throws {
        let rule = try AlertRule("  cpu_percent > 80 for 20s ")
        XCTAssertEqual(rule.text, "cpu_percent > 80 for 20s")
        XCTAssertEqual(rule.field, .cpu_percent)
        XCTAssertEqual(rule.op, .greater)
        XCTAssertEqual(rule.limit, 80)
        XCTAssertEqual(rule.forNanoseconds, 20_000_000_000)
        let memory = try AlertRule("rss_bytes >= 1.5GiB")
        XCTAssertEqual(memory.limit, 1.5 * 1024 * 1024 * 1024)
        XCTAssertEqual(memory.forNanoseconds, 0)
        XCTAssertEqual(try AlertRule("fps < 50 for 1m30s").forNanoseconds, 90_000_000_000)
        XCTAssertEqual(try AlertRule("leak_suspected == 1").field, .leak_suspected, "a true/false figure compares as 1 or 0")
    }

    func testARuleThatDoesNotReadSaysWhy() {
        func message(_ text: String) -> String {
            do { _ = try AlertRule(text); return "" } catch let error as PerfHUDError { return error.message } catch { return "\(error)" }
        }
        XCTAssertEqual(message("cpu_percnt > 5"), "cannot read --alert \"cpu_percnt > 5\": no figure \"cpu_percnt\" in a row: did you mean \"cpu_percent\"?")
        XCTAssertTrue(message("cpu_percent > 5 for soon").contains("'soon' after 'for' is not a duration"))
        XCTAssertTrue(message("cpu_percent > 5 for 0s").contains("after 'for' is not a duration"))
        XCTAssertTrue(message("cpu_percent > baseline * 2").contains("not the baseline"))
        XCTAssertTrue(message("phase == 1").contains("phase is not a number"))
        XCTAssertTrue(message("> 5").hasPrefix("cannot read --alert \"> 5\": no figure before the comparison"))
        XCTAssertTrue(message("cpu_percent > 5\u{1B}[2J").contains("\\u{1b}"), "a control character is shown escaped")
    }

    /// Ticks of a target whose CPU is `cpu[i]` at `i` × 100 ms (nil: unknown).
    private func ticks(_ cpu: [Double?], exitAt: Int? = nil) -> [Tick] {
        cpu.enumerated().map { index, value in
            let time = Double(index) / 10
            var figures = TargetFigures(wallSeconds: 1_700_000_000 + time, elapsedSeconds: time, pid: 7, alive: exitAt != index, processCount: 1)
            figures.cpuPercent = value
            let nanoseconds = UInt64(index) * 100_000_000
            let sample = Sample(monotonicNanoseconds: nanoseconds, wallSeconds: figures.wallSeconds, alive: figures.alive)
            let status: TargetStatus = exitAt == index ? .exited(code: 0, signal: nil) : .running
            return Tick(monotonicNanoseconds: nanoseconds, sample: sample, figures: figures, events: nil, commandName: "x",
                        status: status, phases: PhaseHistory(), isFinal: exitAt == index)
        }
    }

    private func run(_ rule: String, _ cpu: [Double?], exitAt: Int? = nil) throws -> (holding: [Bool], started: [Int], spans: [AlertSpan]) {
        var tracker = AlertTracker(AlertRules([try AlertRule(rule)]))
        var holding: [Bool] = [], started: [Int] = [], spans: [AlertSpan] = []
        for (index, tick) in ticks(cpu, exitAt: exitAt).enumerated() {
            var tick = tick
            tracker.apply(to: &tick)
            holding.append(!tick.alerts.holding.isEmpty)
            if !tick.alerts.started.isEmpty { started.append(index) }
            spans += tick.alerts.ended
        }
        return (holding, started, spans + tracker.finish())
    }

    func testItHoldsOnceOverTheLineForItsDurationAndEndsAtTheFirstRowUnder() throws {
        let result = try run("cpu_percent > 50 for 300ms", [10, 60, 70, 80, 90, 95, 20, 60, 60, 10])
        // Over the line from 0.1 s: it holds at 0.4 s (0.3 s later), not before; the short second stretch never holds.
        XCTAssertEqual(result.holding, [false, false, false, false, true, true, false, false, false, false])
        XCTAssertEqual(result.started, [4], "one start")
        XCTAssertEqual(result.spans.count, 1)
        XCTAssertEqual(result.spans[0].sinceElapsedSeconds, 0.1)
        XCTAssertEqual(result.spans[0].untilElapsedSeconds, 0.6)
        XCTAssertEqual(result.spans[0].heldSeconds, 0.5, accuracy: 1e-9, "from when it crossed the line")
        XCTAssertEqual(result.spans[0].value, 95, "the figure at its last row over the line")
        XCTAssertFalse(result.spans[0].endedWithRun)
    }

    func testAnUnknownFigureIsNeverOverTheLine() throws {
        let result = try run("cpu_percent < 50", [nil, 10, nil, 10])
        XCTAssertEqual(result.holding, [false, true, false, true], "null is no figure, so no alert")
    }

    func testTheEndOfTheRunEndsWhatHolds() throws {
        let ended = try run("cpu_percent > 50", [60, 60, 60])
        XCTAssertEqual(ended.spans.count, 1)
        XCTAssertTrue(ended.spans[0].endedWithRun)
        XCTAssertEqual(ended.spans[0].untilElapsedSeconds, 0.2, "at the last row")
        // A target that ends by itself: its exit row has no figures; the run's end ends the alert there.
        let exited = try run("cpu_percent > 50", [60, 60, 60], exitAt: 2)
        XCTAssertEqual(exited.spans.count, 1)
        XCTAssertTrue(exited.spans[0].endedWithRun)
        XCTAssertEqual(exited.spans[0].untilElapsedSeconds, 0.2)
        XCTAssertTrue(exited.spans[0].sentence.hasSuffix("to the end of the run"), exited.spans[0].sentence)
    }

    func testAOneShotCallerCarriesWhenTheFigureCrossed() throws {
        var tracker = AlertTracker(AlertRules([try AlertRule("cpu_percent > 50 for 1s")]))
        var first = ticks([60])[0]
        tracker.apply(to: &first)
        XCTAssertEqual(tracker.pendingSince, [0])
        var next = AlertTracker(AlertRules([try AlertRule("cpu_percent > 50 for 1s")]))
        next.pendingSince = tracker.pendingSince
        var later = ticks(Array(repeating: 60, count: 11))[10]   // 1 s on
        next.apply(to: &later)
        XCTAssertEqual(later.alerts.started.count, 1)
    }

    func testTheRowCarriesTheAlertsHoldingOnlyWithRules() throws {
        var tick = ticks([60])[0]
        var row = ByteBuffer(capacity: 4096)
        RowFormatter.appendJSON(tick.figures, commandName: "x", status: .running, events: nil, fields: Figure.all, to: &row)
        RowFormatter.appendAlerts(tick.alerts, to: &row)
        XCTAssertFalse(row.withBytes { String(decoding: $0, as: UTF8.self) }.contains("alerts"), "no key without --alert")
        var tracker = AlertTracker(AlertRules([try AlertRule("cpu_percent > 50"), try AlertRule("threads > 1")]))
        tracker.apply(to: &tick)
        row.removeAll()
        RowFormatter.appendJSON(tick.figures, commandName: "x", status: .running, events: nil, fields: Figure.all, to: &row)
        RowFormatter.appendAlerts(tick.alerts, to: &row)
        let text = row.withBytes { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(text.hasSuffix(",\"alerts\":[\"cpu_percent > 50\"]}"), text)
    }

    func testTmuxGetsItsOwnStyleAndNoFormatFromAName() {
        let line = Palette(enabled: true).inverse(Palette(enabled: true).bold("PID 1") + " a#(rm)" + Palette(enabled: true).red("9%"))
        XCTAssertEqual(TmuxStyle.line(fromSGR: line), "#[reverse]#[bold]PID 1#[nobold,nodim] a##(rm)#[fg=red]9%#[fg=default]#[default]")
        XCTAssertEqual(TmuxStyle.style("1;31"), "#[bold,fg=red]")
        XCTAssertEqual(TmuxStyle.style(""), "#[default]")
        XCTAssertEqual(TmuxStyle.line(fromSGR: "a\u{1B}[2Jb\u{7}c"), "abc", "what is not SGR, and control characters, are dropped")
    }

    func testEachBarEscapesWhatIsUntrusted() throws {
        var figures = TargetFigures(wallSeconds: 0, elapsedSeconds: 1, pid: 9, alive: true, cpuPercent: 12.5, residentBytes: 1 << 20, threads: 2, processCount: 1)
        figures.memoryLimitBytes = nil
        let name = "x#{E:y}<b>&"
        let tmux = StatusText.line(figures, commandName: name, status: .running, events: nil, alerts: AlertStates(), note: nil, format: .tmux, color: true)
        XCTAssertEqual(tmux, "PID 9 x##{E:y}<b>& CPU 12.5% RSS 1.0 MiB thr 2")
        let waybar = StatusText.line(figures, commandName: name, status: .running, events: nil, alerts: AlertStates(), note: nil, format: .waybar, color: true)
        let object = try JSONSerialization.jsonObject(with: Data(waybar.utf8)) as? [String: Any]
        XCTAssertEqual(object?["text"] as? String, "PID 9 x#{E:y}&lt;b&gt;&amp;  CPU 12.5%  RSS 1.0 MiB  thr 2")
        XCTAssertEqual(object?["class"] as? String, "normal")
        XCTAssertEqual(object?["percentage"] as? Int, 13)
    }
}
