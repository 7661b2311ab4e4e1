import XCTest
@testable import PerfHUDTerminal

final class ProgramOutputTranslatorTests: XCTestCase {
    private func translate(_ chunks: [String], offset: Int = 6, rows: Int = 18) -> (String, ProgramOutputTranslator.Effects, ProgramOutputTranslator) {
        var translator = ProgramOutputTranslator(offset: offset, programRows: rows)
        var output: [UInt8] = []
        var effects: ProgramOutputTranslator.Effects = []
        for chunk in chunks { effects.formUnion(translator.translate(Array(chunk.utf8), into: &output)) }
        return (String(decoding: output, as: UTF8.self), effects, translator)
    }

    func testAbsoluteRowsAreShiftedBelowTheHUD() {
        XCTAssertEqual(translate(["\u{1B}[H"]).0, "\u{1B}[7;1H")
        XCTAssertEqual(translate(["\u{1B}[5;10H"]).0, "\u{1B}[11;10H")
        XCTAssertEqual(translate(["\u{1B}[3;4f"]).0, "\u{1B}[9;4H")
        XCTAssertEqual(translate(["\u{1B}[12d"]).0, "\u{1B}[18d")
        XCTAssertEqual(translate(["\u{1B}[99;1H"]).0, "\u{1B}[24;1H", "rows past the program's area are clamped")
    }

    func testScrollRegionIsShiftedAndTheCursorHomedToTheProgramsFirstRow() {
        XCTAssertEqual(translate(["\u{1B}[r"]).0, "\u{1B}[7;24r\u{1B}[7;1H")
        XCTAssertEqual(translate(["\u{1B}[2;10r"]).0, "\u{1B}[8;16r\u{1B}[7;1H")
    }

    func testSequencesSplitAcrossReadsAreTranslatedWhole() {
        let (text, _, translator) = translate(["ab\u{1B}", "[1", "0;2", "H", "cd"])
        XCTAssertEqual(text, "ab\u{1B}[16;2Hcd")
        XCTAssertTrue(translator.isAtBoundary)
        var partial = ProgramOutputTranslator(offset: 6, programRows: 18)
        var output: [UInt8] = []
        _ = partial.translate(Array("x\u{1B}[1".utf8), into: &output)
        XCTAssertFalse(partial.isAtBoundary, "the HUD must not be drawn inside a sequence")
        _ = partial.translate([0xE2], into: &output)
    }

    func testEraseDisplayAndAlternateScreenReportDamage() {
        XCTAssertTrue(translate(["\u{1B}[2J"]).1.contains(.hudDamaged))
        let (_, effects, translator) = translate(["\u{1B}[?1049h"])
        XCTAssertTrue(effects.contains(.hudDamaged))
        XCTAssertTrue(translator.alternateScreen)
        XCTAssertTrue(translate(["\u{1B}c"]).1.contains(.terminalReset))
        XCTAssertTrue(translate(["plain text\r\n"]).1.isEmpty)
    }

    func testOtherSequencesPassThroughUntouched() {
        let text = "\u{1B}[1;31mred\u{1B}[0m\u{1B}]0;title\u{07}\u{1B}[2K\u{1B}(B é"
        XCTAssertEqual(translate([text]).0, text)
        XCTAssertFalse(translate(["\u{1B}[?25l"]).2.cursorVisible)
    }

    func testBottomHUDOnlyClamps() {
        XCTAssertEqual(translate(["\u{1B}[5;1H"], offset: 0).0, "\u{1B}[5;1H")
        XCTAssertEqual(translate(["\u{1B}[40;1H"], offset: 0).0, "\u{1B}[18;1H")
    }

    func testCursorReportsAreShiftedBack() {
        let translator = ProgramOutputTranslator(offset: 6, programRows: 18)
        XCTAssertEqual(translator.translateInput(Array("\u{1B}[10;5R".utf8)), Array("\u{1B}[4;5R".utf8))
        XCTAssertEqual(translator.translateInput(Array("abc".utf8)), Array("abc".utf8))
    }
}
