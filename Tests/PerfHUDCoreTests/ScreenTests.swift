import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDRender
@testable import PerfHUDTerminal

/// The screen as a person sees it: `Screen` writes into a `VirtualTerminal`, and the tests read
/// rows, cursor and scroll region back. (The same behaviours run against tmux and pyte in
/// Tests/EndToEnd; these run in-process, in milliseconds, on every edge at once.)
final class ScreenTests: XCTestCase {
    private var status = TargetStatus.running

    private func snapshot(name: String = "myapp") -> HUDSnapshot {
        var store = MetricsStore(pid: 4242, capacity: 100, startNanoseconds: 0, onlineCPUs: 2, ticksPerSecond: 100)
        for step in 0..<20 {
            store.record(Sample(monotonicNanoseconds: UInt64(step) * 100_000_000, wallSeconds: 0, alive: true,
                                cpuNanoseconds: UInt64(step) * 50_000_000, userTicks: UInt64(step) * 4, systemTicks: UInt64(step),
                                residentBytes: UInt64(100 + step) << 20, virtualBytes: 1 << 30, proportionalBytes: nil, threads: 3))
        }
        return HUDSnapshot(pid: 4242, commandName: name, figures: store.latest, series: store.series,
                           tickNanoseconds: 100_000_000, historySeconds: 600, status: status, elapsedSeconds: 2)
    }

    private func makeScreen(rows: Int = 24, columns: Int = 80, position: HUDStyle.Position = .top,
                            ownsKeys: Bool = false, name: String = "myapp") -> (Screen, VirtualTerminal) {
        let terminal = VirtualTerminal(rows: rows, columns: columns)
        let screen = Screen(device: terminal, style: HUDStyle(position: position, color: false, graphRows: 4), ownsKeys: ownsKeys)
        screen.snapshot = { [unowned self] in snapshot(name: name) }
        screen.targetRunning = { [unowned self] in status == .running }
        return (screen, terminal)
    }

    private func output(_ screen: Screen, _ text: String) { screen.showProgramOutput(Array(text.utf8)[...]) }

    func testTheHUDIsPinnedAboveAScrollRegionThatHoldsTheProgram() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        XCTAssertEqual(screen.layout.hudHeight, 6)
        XCTAssertTrue(terminal.line(0).contains("PID 4242 myapp"), terminal.line(0))
        XCTAssertTrue(terminal.line(1).contains("memory (RSS)"), terminal.line(1))
        XCTAssertEqual(terminal.top, 6, "the program's area starts under the HUD")
        XCTAssertEqual(terminal.bottom, 23)
        XCTAssertEqual(terminal.row, 6, "the cursor waits at the top of the program's area")
        XCTAssertEqual(screen.programSize, TerminalSize(rows: 18, columns: 80))
        XCTAssertEqual(terminal.inputMode, .raw, "run passes every key on")

        for index in 1...200 { output(screen, "line \(index)\r\n") }
        XCTAssertTrue(terminal.line(0).contains("PID 4242 myapp"), "200 lines later the status line is still there")
        XCTAssertEqual(terminal.line(22), "line 200")
        XCTAssertEqual(terminal.line(6), "line 184", "the area scrolled, not the HUD")
    }

    func testAProgramAddressingRowOneWritesUnderTheHUD() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        output(screen, "\u{1B}[2J\u{1B}[1;1Htop-left\u{1B}[18;5Hbottom")
        XCTAssertEqual(terminal.line(6), "top-left")
        XCTAssertEqual(terminal.line(23), "    bottom")
        screen.draw(force: true)
        XCTAssertTrue(terminal.line(0).contains("PID 4242"), "a clear screen by the program is repaired: " + terminal.line(0))
    }

    func testAtTheBottomTheProgramKeepsTheTopRows() {
        let (screen, terminal) = makeScreen(position: .bottom)
        screen.setUp()
        screen.draw(force: true)
        XCTAssertTrue(terminal.line(18).contains("PID 4242"), terminal.line(18))
        XCTAssertEqual(terminal.top, 0)
        XCTAssertEqual(terminal.bottom, 17)
        output(screen, "hello\r\n")
        XCTAssertEqual(terminal.line(0), "hello")
        screen.restore()
        XCTAssertEqual(terminal.row, 23, "after the end the prompt comes below the HUD")
        XCTAssertEqual(terminal.bottom, 23, "no scroll region is left behind")
    }

    func testRestoringGivesTheWholeTerminalBackWithTheCursorWhereTheProgramLeftIt() {
        let (screen, terminal) = makeScreen(ownsKeys: true)
        screen.setUp()
        XCTAssertFalse(terminal.cursorVisible, "the HUD's own session hides the cursor")
        XCTAssertEqual(terminal.inputMode, .keys)
        output(screen, "one\r\ntwo\r\n")
        let row = terminal.row
        screen.restore()
        XCTAssertTrue(terminal.cursorVisible)
        XCTAssertEqual([terminal.top, terminal.bottom], [0, 23])
        XCTAssertEqual(terminal.row, row, "the shell prompt follows the program's last line")
        XCTAssertNil(terminal.inputMode, "input settings restored")
        XCTAssertEqual(terminal.crashRestore, screen.restoreSequence(), "a crash writes the same")
    }

    func testAResizeMovesTheRegionAndRedrawsTheHUD() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        terminal.resize(rows: 40, columns: 100)
        XCTAssertEqual(screen.relayout(), TerminalSize(rows: 34, columns: 100))
        XCTAssertEqual([terminal.top, terminal.bottom], [6, 39])
        XCTAssertTrue(terminal.line(0).contains("PID 4242"))
        XCTAssertFalse(terminal.line(0).count > 100)
    }

    func testAResizeWaitsUntilTheProgramsEscapeSequenceEnds() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        output(screen, "\u{1B}[3")              // a sequence cut between two reads
        terminal.resize(rows: 30, columns: 80)
        XCTAssertNil(screen.relayout())
        XCTAssertTrue(screen.needsRelayout)
        output(screen, "1mred\u{1B}[0m")
        XCTAssertEqual(screen.relayout(), TerminalSize(rows: 24, columns: 80))
        XCTAssertFalse(screen.needsRelayout)
    }

    func testNoticesAndEscapedNamesAppearInTheProgramsArea() {
        let (screen, terminal) = makeScreen(name: "evil\u{1B}[2J")
        screen.setUp()
        screen.draw(force: true)
        screen.notice("attached to PID 4242")
        XCTAssertEqual(terminal.line(6), "perfhud: attached to PID 4242")
        XCTAssertTrue(terminal.line(0).contains("evil\\e[2J"), "a name is shown, not obeyed: " + terminal.line(0))
    }

    func testTheSummaryAfterAFullAreaLeavesTheLastFrameWhole() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        for index in 1...100 { output(screen, "line \(index)\r\n") }
        screen.notice("PID 4242 (myapp) exited, status 0", kind: .end)
        screen.restore(thenWrite: "perfhud: one\nperfhud: two\nperfhud: three\n")
        XCTAssertTrue(terminal.line(0).contains("PID 4242 myapp"), "the status line stays: " + terminal.line(0))
        XCTAssertTrue(terminal.line(1).contains("memory (RSS)"))
        XCTAssertEqual(Array(terminal.lines[19...22]), ["perfhud: PID 4242 (myapp) exited, status 0", "perfhud: one", "perfhud: two", "perfhud: three"])
        XCTAssertEqual(terminal.line(18), "line 100")
        XCTAssertEqual(terminal.row, 23, "the prompt's row, the last")
        XCTAssertEqual([terminal.top, terminal.bottom], [0, 23])
    }

    func testEachLineClearsWhatItCoversAndTheEndNoticeWhatIsBelow() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        // A full-screen program's rows, then its cursor back up in the middle of them (top -d 1).
        output(screen, (1...18).map { "\u{1B}[\($0);1H" + String(repeating: "x", count: 79) }.joined() + "\u{1B}[5;1H")
        screen.notice("PID 4242 (top) killed by signal 15", kind: .end)
        screen.restore(thenWrite: "perfhud: summary\n")
        XCTAssertEqual(terminal.line(10), "perfhud: PID 4242 (top) killed by signal 15", "nothing of top's row after it")
        XCTAssertEqual(terminal.line(11), "perfhud: summary")
        XCTAssertEqual(Array(terminal.lines[12...23]), Array(repeating: "", count: 12), "nothing of top's screen below:\n" + terminal.text)
        XCTAssertEqual(terminal.line(9), String(repeating: "x", count: 79), "the program's rows above stay")
    }

    func testAtTheBottomTheEndNoticeClearsOnlyTheProgramsArea() {
        let (screen, terminal) = makeScreen(position: .bottom)
        screen.setUp()
        screen.draw(force: true)
        output(screen, (1...18).map { "\u{1B}[\($0);1Hrow \($0)" }.joined() + "\u{1B}[3;1H")
        screen.notice("ended", kind: .end)
        XCTAssertEqual(terminal.line(2), "perfhud: ended")
        XCTAssertEqual(terminal.line(3), "")
        XCTAssertEqual(terminal.line(17), "")
        XCTAssertTrue(terminal.line(18).contains("PID 4242"), "the HUD below is untouched: " + terminal.line(18))
    }

    func testGrowingClearsTheProgramsAreaOfWhatTheTerminalPulledBack() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        output(screen, "a line\r\n")
        terminal.resize(rows: 40, columns: 80)
        terminal.feed(Array("\u{1B}[20;1H⣿⣿⣿ an old graph row".utf8))   // what tmux brings back from its history
        terminal.feed(Array("\u{1B}[8;1H".utf8))
        XCTAssertEqual(screen.relayout(), TerminalSize(rows: 34, columns: 80))
        XCTAssertTrue(terminal.line(0).contains("PID 4242"))
        XCTAssertEqual(Array(terminal.lines[6...39]), Array(repeating: "", count: 34))
        XCTAssertEqual(terminal.row, 7, "the cursor stays where the program had it")
        terminal.resize(rows: 30, columns: 80)
        output(screen, "kept\r\n")
        XCTAssertNotNil(screen.relayout())
        XCTAssertTrue(terminal.lines.contains("kept"), "a shrink clears nothing")
    }

    func testRepeatedActionsFoldIntoOneLineAndTheRestIsCounted() {
        let (screen, terminal) = makeScreen(rows: 12, ownsKeys: true)
        screen.setUp()
        let slider = ActionLogEntry(label: "Feature.Action.slider(.changed)", count: 1)
        screen.showActionLog([slider, slider, slider], dropped: 0, highFrequency: ["Feature.Action.slider(.changed)"])
        XCTAssertEqual(terminal.line(6), "Feature.Action.slider(.changed) ×3 (high-frequency)")
        XCTAssertEqual(terminal.line(7), "")
        screen.showActionLog([slider], dropped: 0, highFrequency: [])
        XCTAssertEqual(terminal.line(6), "Feature.Action.slider(.changed) ×4", "rewritten in place, not a new line")
        screen.notice("something else")
        screen.showActionLog([slider], dropped: 0, highFrequency: [])
        XCTAssertEqual(terminal.line(8), "Feature.Action.slider(.changed)", "after another line the count starts again")

        let many = (0..<50).map { ActionLogEntry(label: "A\($0)", count: 1) }
        screen.showActionLog(many, dropped: 7, highFrequency: [])
        XCTAssertTrue(terminal.lines.contains("… 53 more actions"), "the line that counts what did not fit stays on screen:\n" + terminal.text)
        XCTAssertEqual(terminal.line(10), "A49")
        XCTAssertTrue(terminal.line(0).contains("PID 4242") || terminal.line(0).isEmpty, "the log stays out of the HUD")
    }

    func testResumingPutsAFullScreenProgramBackOnTheAlternateScreen() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        output(screen, "\u{1B}[?1049h\u{1B}[1;1Hfull screen")
        XCTAssertTrue(terminal.alternateScreen)
        screen.restore()
        XCTAssertFalse(terminal.alternateScreen, "the shell gets the main screen back")
        screen.resume()
        XCTAssertTrue(terminal.alternateScreen, "fg returns to the program's screen")
        XCTAssertTrue(terminal.line(0).contains("PID 4242"), "with the HUD drawn whole")
        XCTAssertEqual([terminal.top, terminal.bottom], [6, 23])
        screen.restore()
        XCTAssertFalse(terminal.alternateScreen, "and leaves it again at the end")
    }

    func testFramesAreDiffedAndThrottled() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        screen.draw(force: true)
        let before = terminal.written.count
        screen.invalidate()
        screen.draw()
        XCTAssertEqual(terminal.written.count, before, "a second frame within 50 ms is held back")
        status = .exited(code: 3, signal: nil)
        screen.invalidate()
        screen.draw()
        XCTAssertGreaterThan(terminal.written.count, before, "the end of the target is shown at once")
        XCTAssertTrue(terminal.line(0).contains("Exited, status 3"), terminal.line(0))
        let after = terminal.written.count
        screen.drawFinalFrame()
        let unchanged = terminal.written.count - after
        XCTAssertEqual(unchanged, 0, "an unchanged frame writes nothing")
    }

    func testEveryFrameIsOneSynchronizedUpdate() {
        let (screen, terminal) = makeScreen()
        screen.setUp()
        output(screen, "text\r\n")
        screen.draw(force: true)
        let stream = String(decoding: terminal.written, as: UTF8.self)
        XCTAssertEqual(stream.components(separatedBy: ControlSequence.beginSynchronizedUpdate).count,
                       stream.components(separatedBy: ControlSequence.endSynchronizedUpdate).count)
        XCTAssertTrue(stream.hasSuffix(ControlSequence.endSynchronizedUpdate) || stream.hasSuffix(ControlSequence.showCursor))
    }
}
