import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDRender
@testable import PerfHUDTerminal

final class RenderingTests: XCTestCase {
    private func snapshot(name: String = "myapp", status: TargetStatus = .running, samples: Int = 50) -> HUDSnapshot {
        var store = MetricsStore(pid: 4242, capacity: 1000, startNanoseconds: 0, onlineCPUs: 2, ticksPerSecond: 100)
        for step in 0..<samples {
            store.record(Sample(monotonicNanoseconds: UInt64(step) * 100_000_000, wallSeconds: 0, alive: true,
                                cpuNanoseconds: UInt64(step) * 50_000_000, userTicks: UInt64(step) * 4, systemTicks: UInt64(step),
                                residentBytes: UInt64(100 + (step % 10) * 10) << 20, virtualBytes: 1 << 30,
                                proportionalBytes: nil, threads: 3))
        }
        return HUDSnapshot(pid: 4242, commandName: name, figures: store.latest, series: store.series,
                           tickNanoseconds: 100_000_000, historySeconds: 600, status: status, elapsedSeconds: 5)
    }

    func testEveryLineFitsEveryWidth() {
        for columns in [1, 10, 40, 80, 132, 300] {
            for rows in [1, 3, 8, 24, 60] {
                let size = TerminalSize(rows: rows, columns: columns)
                let lines = HUDRenderer.render(snapshot(), size: size, style: HUDStyle())
                XCTAssertEqual(lines.count, HUDRenderer.height(for: size, style: HUDStyle()))
                XCTAssertLessThan(lines.count, rows + (rows == 1 ? 1 : 0) , "the program keeps at least a row")
                for line in lines { XCTAssertLessThanOrEqual(TerminalText.displayWidth(line), columns, "\(columns)x\(rows): \(line)") }
            }
        }
    }

    func testStatusLineShowsTheFiguresAPersonLooksFor() {
        let line = HUDRenderer.render(snapshot(), size: TerminalSize(rows: 30, columns: 160), style: HUDStyle(color: false))[0]
        XCTAssertTrue(line.contains("PID 4242 myapp"), line)
        XCTAssertTrue(line.contains("RSS 190.0 MiB │ +"), "the trend follows RSS: " + line)
        XCTAssertTrue(line.contains("CPU 50.0%"), line)
        XCTAssertTrue(line.contains("u 40 s 10"), line)
        XCTAssertTrue(line.contains("RSS 190.0 MiB"), line)
        XCTAssertTrue(line.contains("PSS n/a"), line)
        XCTAssertTrue(line.contains("thr 3"), line)
        XCTAssertTrue(line.contains("tick 100ms"), line)
    }

    func testGraphLabelsCurrentMinimumMaximumAndSpan() {
        let lines = HUDRenderer.render(snapshot(), size: TerminalSize(rows: 30, columns: 120), style: HUDStyle(color: false, graphRows: 4))
        XCTAssertEqual(lines.count, 6)
        XCTAssertTrue(lines[1].contains("min 100.0 MiB"), lines[1])
        XCTAssertTrue(lines[1].contains("max 190.0 MiB"), lines[1])
        XCTAssertTrue(lines[1].contains("over the last"), lines[1])
        let braille = lines[2...].joined().unicodeScalars.filter { $0.value > 0x2800 && $0.value <= 0x28FF }
        XCTAssertFalse(braille.isEmpty, "the graph has dots")
    }

    func testAnASCIIStyleWritesNothingBeyondASCII() {
        let style = HUDStyle(color: true, graphRows: 4, unicode: false)
        let lines = HUDRenderer.render(snapshot(name: "caf\u{e9}"), size: TerminalSize(rows: 30, columns: 160), style: style)
        for line in lines { XCTAssertTrue(line.utf8.allSatisfy { $0 < 0x80 }, line) }
        XCTAssertTrue(lines[0].contains("PID 4242\u{1B}[22m caf?\u{1B}"), "a name beyond ASCII keeps its width: " + lines[0])
        XCTAssertTrue(lines[0].contains(" | "), lines[0])
        XCTAssertEqual(TerminalText.ascii("key→screen … ⚠ x ×2 ±0 B ■ ▶ 日"), "key->screen ... ! x x2 +-0 B # > ??")
    }

    func testEscapeSequencesInTheCommandNameNeverReachTheTerminal() {
        let name = "evil\u{1B}[2J\u{1B}]0;pwned\u{07}\u{9B}31m"
        let line = HUDRenderer.render(snapshot(name: name), size: TerminalSize(rows: 30, columns: 200), style: HUDStyle(color: false))[0]
        XCTAssertFalse(line.contains("\u{1B}[2J"))
        XCTAssertFalse(line.contains("\u{07}"))
        XCTAssertFalse(line.unicodeScalars.contains { $0.value == 0x9B })
        XCTAssertTrue(line.contains("evil\\e[2J"), line)
    }

    func testNoColorMeansNoColourCodes() {
        let lines = HUDRenderer.render(snapshot(), size: TerminalSize(rows: 30, columns: 160), style: HUDStyle(color: false))
        for line in lines {
            for code in ["[31m", "[32m", "[33m", "[36m", "[2m"] { XCTAssertFalse(line.contains(code), line) }
        }
        let coloured = HUDRenderer.render(snapshot(), size: TerminalSize(rows: 30, columns: 160), style: HUDStyle(color: true))
        XCTAssertTrue(coloured.joined().contains("\u{1B}[3"), "colour is on by default")
    }

    func testAnExitedTargetSaysSo() {
        let line = HUDRenderer.render(snapshot(status: .exited(code: 3, signal: nil)), size: TerminalSize(rows: 30, columns: 160), style: HUDStyle(color: false))[0]
        XCTAssertTrue(line.contains("Exited, status 3"), line)
    }

    func testFrameWriterRewritesOnlyChangedLines() {
        var writer = FrameWriter()
        let first = writer.update(lines: ["a", "b", "c"], firstRow: 1)
        XCTAssertTrue(first.contains("\u{1B}[1;1H") && first.contains("\u{1B}[3;1H"))
        let second = writer.update(lines: ["a", "B", "c"], firstRow: 1)
        XCTAssertEqual(second.components(separatedBy: "H").count - 1, 1)
        XCTAssertTrue(second.contains("\u{1B}[2;1H") && second.contains("B"))
        XCTAssertEqual(writer.update(lines: ["a", "B", "c"], firstRow: 1), "")
        writer.invalidate()
        XCTAssertFalse(writer.update(lines: ["a", "B", "c"], firstRow: 1).isEmpty)
    }
}

extension RenderingTests {
    func testEightyColumnsKeepPIDCPUAndRSSWhateverElseThereIs() {
        var snapshot = self.snapshotForNarrowTest()
        var events = EventSnapshot()
        events.framesTotal = 100; events.fps = 59; events.frameP99 = 30; events.jankyFrames = 3
        events.actionsTotal = 500; events.actionsPerSecond = 120
        events.highFrequencyActions = [.init(action: "Editor.Action.slider(.changed)", rate: 120, peak: 121)]
        snapshot.events = events
        let line = HUDRenderer.render(snapshot, size: TerminalSize(rows: 24, columns: 80), style: HUDStyle(color: false))[0]
        XCTAssertTrue(line.contains("PID 4242") && line.contains("CPU") && line.contains("RSS"), line)
        XCTAssertTrue(line.contains("FPS 59"), "frames come next: " + line)
        XCTAssertLessThanOrEqual(TerminalText.displayWidth(line), 80)
    }

    private func snapshotForNarrowTest() -> HUDSnapshot {
        var store = MetricsStore(pid: 4242, capacity: 100, startNanoseconds: 0, onlineCPUs: 2, ticksPerSecond: 100)
        for step in 0..<20 {
            store.record(Sample(monotonicNanoseconds: UInt64(step) * 100_000_000, wallSeconds: 0, alive: true,
                                cpuNanoseconds: UInt64(step) * 50_000_000, userTicks: UInt64(step) * 4, systemTicks: UInt64(step),
                                residentBytes: 100 << 20, virtualBytes: 1 << 30, proportionalBytes: 90 << 20, threads: 3))
        }
        return HUDSnapshot(pid: 4242, commandName: "perfhud-demo", figures: store.latest, series: store.series,
                           tickNanoseconds: 100_000_000, historySeconds: 600, status: .running, elapsedSeconds: 2)
    }
}
