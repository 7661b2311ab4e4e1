import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDPipeline
@testable import PerfHUDRender

final class ParsingTests: XCTestCase {
    private func withBytes<T>(_ text: String, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        Array(text.utf8).withUnsafeBytes(body)
    }

    func testStatWithParenthesesAndSpacesInTheCommandName() {
        let line = "4242 (evil) S 1 2 (x) R 17 4242 4242 0 -1 4194560 100 0 0 0 1234 567 89 10 20 0 7 0 98765 123456789 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
        let stat = withBytes(line) { ProcParser.stat($0) }
        XCTAssertEqual(stat?.state, UInt8(ascii: "R"))
        XCTAssertEqual(stat?.parentPID, 17)
        XCTAssertEqual(stat?.userTicks, 1234)
        XCTAssertEqual(stat?.systemTicks, 567)
        XCTAssertEqual(stat?.childrenUserTicks, 89)
        XCTAssertEqual(stat?.childrenSystemTicks, 10)
        XCTAssertEqual(stat?.threads, 7)
        XCTAssertEqual(stat?.startTicks, 98765)
        XCTAssertEqual(stat?.virtualBytes, 123456789)
        XCTAssertEqual(stat?.flags, 4194560)
        XCTAssertEqual(stat?.isKernelThread, false)
    }

    func testTheCommandNameHashTellsAnExecAndFlagsTellAKernelThread() {
        func parse(_ comm: String, flags: Int = 4194560) -> ProcStat? {
            withBytes("7 (\(comm)) S 1 7 7 0 -1 \(flags) 0 0 0 0 1 1 0 0 20 0 1 0 5 1000 10\n") { ProcParser.stat($0) }
        }
        XCTAssertEqual(parse("bash")?.commandNameHash, parse("bash")?.commandNameHash)
        XCTAssertNotEqual(parse("bash")?.commandNameHash, parse("python3")?.commandNameHash, "an exec changes the name")
        XCTAssertNotEqual(parse("a) (b")?.commandNameHash, parse("a")?.commandNameHash, "the whole name, up to the last parenthesis")
        XCTAssertEqual(parse("kthreadd", flags: 0x208040)?.isKernelThread, true)
    }

    func testTheAddressSpaceTellsAnExecThatKeepsTheName() {
        func parse(startCode: Int, stack: Int) -> ProcStat? {
            withBytes("7 (python3) S 1 7 7 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 5 1000 10 0 \(startCode) \(startCode + 4096) \(stack) 0 0\n") { ProcParser.stat($0) }
        }
        XCTAssertEqual(parse(startCode: 0x5555_0000, stack: 0x7ffc_0000)?.addressSpaceHash, parse(startCode: 0x5555_0000, stack: 0x7ffc_0000)?.addressSpaceHash)
        XCTAssertNotEqual(parse(startCode: 0x5555_0000, stack: 0x7ffc_0000)?.addressSpaceHash, parse(startCode: 0x5555_0000, stack: 0x7ffd_0000)?.addressSpaceHash,
                          "a new stack: the same name exec'd again")
        XCTAssertEqual(parse(startCode: 0x5555_0000, stack: 0x7ffc_0000)?.commandNameHash, parse(startCode: 0x5600_0000, stack: 0x7ffd_0000)?.commandNameHash)
        XCTAssertEqual(withBytes("7 (python3) S 1 7 7 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 5 1000 10 0 0 0 0 0 0\n") { ProcParser.stat($0) }?.addressSpaceHash, 0,
                       "an exiting process has no address space: none, not a new one")
    }

    func testStatOfThisProcessMatchesItsPID() throws {
        let file = try KeptOpenFile.open("/proc/self/stat").get()
        defer { file.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { buffer.deallocate() }
        let count = try file.read(into: buffer).get()
        let stat = ProcParser.stat(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        XCTAssertEqual(stat?.parentPID, getppid())
        XCTAssertGreaterThan(stat?.threads ?? 0, 0)
    }

    func testTruncatedInputIsRejected() {
        XCTAssertNil(withBytes("12 (x) S 1 2 3") { ProcParser.stat($0) })
        XCTAssertNil(withBytes("no parenthesis") { ProcParser.stat($0) })
        XCTAssertNil(withBytes("") { ProcParser.statm($0) })
        XCTAssertNil(withBytes("123") { ProcParser.statm($0) })
    }

    func testStatm() {
        let statm = withBytes("5000 1200 300 10 0 900 0\n") { ProcParser.statm($0) }
        XCTAssertEqual(statm, ProcStatm(sizePages: 5000, residentPages: 1200, sharedPages: 300))
        XCTAssertEqual(withBytes("5000 1200\n") { ProcParser.statm($0) }, ProcStatm(sizePages: 5000, residentPages: 1200), "no shared field: 0")
    }

    func testProportionalSetSize() {
        let text = "55a0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:                3200 kB\nPss:                1024 kB\nPss_Anon:            512 kB\n"
        XCTAssertEqual(withBytes(text) { ProcParser.proportionalSetSize($0) }, 1024 * 1024)
        XCTAssertNil(withBytes("Rss: 1 kB\n") { ProcParser.proportionalSetSize($0) })
    }

    func testDurations() {
        XCTAssertEqual(DurationText.nanoseconds("250ms"), 250_000_000)
        XCTAssertEqual(DurationText.nanoseconds("2s"), 2_000_000_000)
        XCTAssertEqual(DurationText.nanoseconds("10m"), 600_000_000_000)
        XCTAssertEqual(DurationText.nanoseconds("1.5s"), 1_500_000_000)
        XCTAssertEqual(DurationText.nanoseconds("1h"), 3_600_000_000_000)
        XCTAssertEqual(DurationText.nanoseconds("1m30s"), 90_000_000_000)
        XCTAssertEqual(DurationText.nanoseconds("1h30m"), 5_400_000_000_000)
        XCTAssertEqual(DurationText.nanoseconds("1s500ms"), 1_500_000_000)
        for bad in ["", "ms", "10", "-1s", "1e3s", "abc", "1..2s", "nans", "infs", "1m30", "1 s", "1sec", "s1"] {
            XCTAssertNil(DurationText.nanoseconds(bad), bad)
        }
        XCTAssertEqual(DurationText.format(nanoseconds: 100_000_000), "100ms")
        XCTAssertEqual(DurationText.format(nanoseconds: 600_000_000_000), "10m")
        XCTAssertEqual(DurationText.format(nanoseconds: 1_500_000_000), "1.5s")
        for nanoseconds: UInt64 in [90_000_000_000, 5_400_000_000_000, 2_000_000] {   // what format writes, nanoseconds reads
            XCTAssertEqual(DurationText.nanoseconds(DurationText.format(nanoseconds: nanoseconds)), nanoseconds)
        }
        XCTAssertEqual(DurationText.clock(seconds: 3723), "01:02:03")
    }

    func testJSONStringsEscapeControlCharacters() {
        XCTAssertEqual(RowFormatter.quoted("a\"b\\c\n\u{1B}"), "\"a\\\"b\\\\c\\n\\u001b\"")
        XCTAssertEqual(RowFormatter.quoted("é\u{9B}x\u{7F}"), "\"é\\u009bx\\u007f\"")
        XCTAssertEqual(RowFormatter.rfc3339(0.5), "1970-01-01T00:00:00.500Z")
    }

    /// A process lives while any of its threads does: a zombie leader whose thread count still
    /// counts others (its main thread called pthread_exit) runs on; a zombie alone has ended.
    func testAThreadGroupLivesWhileAnyThreadDoes() {
        func stat(_ state: String, threads: Int) -> ProcStat? {
            withBytes("7 (burn) \(state) 1 7 7 0 -1 4194560 0 0 0 0 30 0 0 0 20 0 \(threads) 0 5 0 0\n") { ProcParser.stat($0) }
        }
        XCTAssertEqual(stat("R", threads: 1)?.threadGroupLives, true)
        XCTAssertEqual(stat("S", threads: 4)?.threadGroupLives, true)
        XCTAssertEqual(stat("Z", threads: 2)?.threadGroupLives, true, "main thread ended, a worker runs")
        XCTAssertEqual(stat("Z", threads: 2)?.leaderEnded, true)
        XCTAssertEqual(stat("Z", threads: 1)?.threadGroupLives, false, "the whole group ended, not yet reaped")
        XCTAssertEqual(stat("Z", threads: 1)?.leaderEnded, false)
        XCTAssertEqual(stat("X", threads: 1)?.threadGroupLives, false)
        XCTAssertEqual(stat("R", threads: 3)?.leaderEnded, false)
    }
}

final class NumberFormattingTests: XCTestCase {
    func testJSONNumbers() {
        XCTAssertEqual(RowFormatter.number(52.3), "52.3")
        XCTAssertEqual(RowFormatter.number(0), "0")
        XCTAssertEqual(RowFormatter.number(-1.25), "-1.25")
        XCTAssertEqual(RowFormatter.number(-0.004), "0")
        XCTAssertEqual(RowFormatter.number(0.05), "0.05")
        XCTAssertEqual(RowFormatter.number(199.999), "200")
        XCTAssertEqual(RowFormatter.number(1.000123, decimals: 6), "1.000123")
        XCTAssertEqual(RowFormatter.number(.nan), "null")
        XCTAssertEqual(RowFormatter.number(nil), "null")
    }

    func testDisplayWidth() {
        XCTAssertEqual(TerminalText.displayWidth("abc"), 3)
        XCTAssertEqual(TerminalText.displayWidth("\u{1B}[1;31mab\u{1B}[0m"), 2)
        XCTAssertEqual(TerminalText.displayWidth("⠀⣿│é"), 4)
        XCTAssertEqual(TerminalText.displayWidth("日本"), 4)
        XCTAssertEqual(TerminalText.displayWidth("e\u{301}"), 1)
    }

    func testBrailleCells() {
        let lines = BrailleGraph.draw([0...0, 1...1, nil, 3...3], rows: 1, low: 0, high: 3)
        XCTAssertEqual(lines.count, 1)
        XCTAssertEqual(lines[0].unicodeScalars.count, 2)
        // column 0: bottom dot (level 0), column 1: level 1, column 2: gap, column 3: top dot.
        XCTAssertEqual(lines[0].unicodeScalars.first!.value, 0x2800 | 0x40 | 0x20)
        XCTAssertEqual(lines[0].unicodeScalars.last!.value, 0x2800 | 0x08)
    }

    func testASCIICellsForALocaleThatIsNotUTF8() {
        // A flat line at the bottom, one in the middle, a rise across the whole cell, a gap.
        let bottom = BrailleGraph.draw([0...0, 0...0], rows: 1, low: 0, high: 3, ascii: true)
        let middle = BrailleGraph.draw([1...1, 2...2], rows: 1, low: 0, high: 3, ascii: true)
        let rise = BrailleGraph.draw([0...3, 3...3, nil, nil], rows: 1, low: 0, high: 3, ascii: true)
        XCTAssertEqual(bottom, ["_"])
        XCTAssertEqual(middle, ["-"])
        XCTAssertEqual(rise, ["| "])
        XCTAssertEqual(BrailleGraph.draw([3...3, 3...3], rows: 1, low: 0, high: 3, ascii: true), ["'"])
    }

    func testLocaleCodesets() {
        for name in ["UTF-8", "utf8", "UTF8", "utf-8"] { XCTAssertTrue(LocaleCharset.isUTF8(codeset: name), name) }
        for name in ["ANSI_X3.4-1968", "ISO-8859-1", ""] { XCTAssertFalse(LocaleCharset.isUTF8(codeset: name), name) }
    }

    func testJSONStringArraysAsARecordingKeepsACommandLine() {
        XCTAssertEqual(JSONText.strings(#"["perfhud","run","--","sh","-c","echo \"hi\"\t\u00e9"]"#),
                       ["perfhud", "run", "--", "sh", "-c", "echo \"hi\"\t\u{e9}"])
        XCTAssertEqual(JSONText.strings(" [ ] "), [])
        for broken in ["", "[", "[\"a\"", "[\"a\",]", "[1]", "[\"a\" \"b\"]", "[\"\\u12\"]", "{\"a\": 1}"] {
            XCTAssertNil(JSONText.strings(broken), broken)
        }
    }
}
