import XCTest
@testable import PerfHUDEvents

/// The keys a user typed, told from the terminal's replies on standard input (key-to-screen
/// latency counts keys only).
final class TypedKeysTests: XCTestCase {
    private let ms: UInt64 = 1_000_000

    /// What terminals send back to vim, tmux and kitty-aware programs, one of each kind.
    private let replies: [(name: String, bytes: String)] = [
        ("DA1", "\u{1B}[?62;22;52c"),
        ("DA2", "\u{1B}[>84;0;0c"),
        ("cursor position report", "\u{1B}[12;40R"),
        ("extended cursor position report", "\u{1B}[?12;40;1R"),
        ("DECRPM", "\u{1B}[?2004;2$y"),
        ("ANSI mode report", "\u{1B}[4;2$y"),
        ("OSC 11 colour, ST", "\u{1B}]11;rgb:0000/0000/0000\u{1B}\\"),
        ("OSC 10 colour, BEL", "\u{1B}]10;rgb:ffff/ffff/ffff\u{07}"),
        ("XTVERSION", "\u{1B}P>|tmux 3.3a\u{1B}\\"),
        ("XTGETTCAP", "\u{1B}P1+r524742=382F382F38\u{1B}\\"),
        ("focus in", "\u{1B}[I"),
        ("focus out", "\u{1B}[O"),
        ("window size report", "\u{1B}[8;30;100t"),
        ("status report", "\u{1B}[0n"),
        ("kitty keyboard flags", "\u{1B}[?1u"),
        ("kitty graphics", "\u{1B}_Gi=31;OK\u{1B}\\"),
    ]

    /// A reader whose program asked for a cursor position and turned focus reporting on.
    private func reader() -> TypedKeys {
        var keys = TypedKeys()
        keys.programWrote(Array("\u{1B}[?1004h\u{1B}[6n".utf8))
        return keys
    }

    /// Keys counted minus those withdrawn.
    private func net(_ readings: [TypedKeys.Reading]) -> Int {
        readings.reduce(0) { $0 + $1.keys - ($1.withdrawn == nil ? 0 : 1) }
    }

    func testEachReplyIsNotAKey() {
        for reply in replies {
            var keys = reader()
            XCTAssertEqual(keys.read(Array(reply.bytes.utf8), at: 10 * ms), TypedKeys.Reading(), reply.name)
        }
    }

    func testAReplySplitAnywhereAcrossTwoReadsIsNotAKey() {
        for reply in replies {
            let bytes = Array(reply.bytes.utf8)
            for cut in 1..<bytes.count {
                var keys = reader()
                let first = keys.read(bytes[..<cut], at: 10 * ms)
                let second = keys.read(bytes[cut...], at: 11 * ms)
                XCTAssertEqual(net([first, second]), 0, "\(reply.name) cut after \(cut) bytes")
                if first.keys == 1 { XCTAssertEqual(second.withdrawn, 10 * ms, "the key it looked like is taken back") }
                XCTAssertEqual(keys.read(Array("x".utf8), at: 12 * ms).keys, 1, "\(reply.name): a key after it counts")
            }
        }
    }

    func testAnEscapeAloneIsAKeyAtOnce() {
        var keys = TypedKeys()
        XCTAssertEqual(keys.read([0x1B], at: 10 * ms), TypedKeys.Reading(keys: 1))
        XCTAssertEqual(keys.read(Array("[A".utf8), at: 500 * ms).keys, 2, "typed long after: '[' and 'A', the Escape stands")
        XCTAssertEqual(keys.read([0x1B, 0x1B], at: 900 * ms).keys, 2, "Escape twice")
        XCTAssertEqual(keys.read(Array("a".utf8), at: 910 * ms).keys, 1, "then a key soon after: not Alt-a")
        XCTAssertEqual(keys.read(Array("\u{1B}a".utf8), at: 1000 * ms).keys, 1, "Alt-a")
    }

    func testKeysAreOneEachWhateverTheirBytes() {
        let typed: [(name: String, bytes: String)] = [
            ("letter", "a"), ("Enter", "\r"), ("Ctrl-C", "\u{03}"), ("é", "é"), ("日", "日"),
            ("Alt-x", "\u{1B}x"), ("up", "\u{1B}[A"), ("up, application mode", "\u{1B}OA"),
            ("F1", "\u{1B}OP"), ("F5", "\u{1B}[15~"), ("Ctrl-right", "\u{1B}[1;5C"), ("Shift-F3", "\u{1B}[1;2R"),
            ("Shift-Tab", "\u{1B}[Z"), ("kitty Ctrl-a", "\u{1B}[97;5u"),
            ("SGR mouse press", "\u{1B}[<0;10;5M"), ("SGR mouse release", "\u{1B}[<0;10;5m"),
            ("X10 mouse", "\u{1B}[M !!"), ("urxvt mouse", "\u{1B}[32;10;5M"),
            ("focus in, reporting off", "\u{1B}[I"),
            ("bracketed paste", "\u{1B}[200~two\u{1B}[Alines\r\u{1B}[201~"),
        ]
        for key in typed {
            var keys = TypedKeys()
            XCTAssertEqual(keys.read(Array(key.bytes.utf8), at: 10 * ms), TypedKeys.Reading(keys: 1), key.name)
            XCTAssertEqual(keys.read(Array("q".utf8), at: 500 * ms).keys, 1, "\(key.name): nothing left open")
        }
    }

    func testAKittyKeyReleaseIsNotAPress() {
        var keys = TypedKeys()
        XCTAssertEqual(keys.read(Array("\u{1B}[97;1:1u\u{1B}[97;1:3u".utf8), at: 10 * ms).keys, 1)
    }

    func testRepliesAndKeysInOneRead() {
        var keys = reader()
        let read = "a" + replies.map(\.bytes).joined() + "\u{1B}[A" + "日" + "\u{1B}[<0;3;4M" + "\r"
        XCTAssertEqual(keys.read(Array(read.utf8), at: 10 * ms), TypedKeys.Reading(keys: 5))
    }

    func testAPositionReportIsAReplyOnlyWhenAskedFor() {
        var keys = TypedKeys()
        let report = Array("\u{1B}[1;2R".utf8)
        XCTAssertEqual(keys.read(report, at: 10 * ms).keys, 1, "not asked for: Shift-F3")
        keys.programWrote(Array("\u{1B}[".utf8))
        keys.programWrote(Array("6n".utf8))                      // the request split across writes
        XCTAssertEqual(keys.read(report, at: 20 * ms).keys, 0, "asked for: the reply")
        XCTAssertEqual(keys.read(report, at: 30 * ms).keys, 1, "answered already: a key again")
    }

    func testFocusEventsAreNotKeysWhileReportingIsOn() {
        var keys = TypedKeys()
        let focusIn = Array("\u{1B}[I".utf8)
        XCTAssertEqual(keys.read(focusIn, at: 10 * ms).keys, 1)
        keys.programWrote(Array("\u{1B}[?1049;1004h".utf8))
        XCTAssertEqual(keys.read(focusIn, at: 20 * ms).keys, 0)
        keys.programWrote(Array("\u{1B}[?1004l".utf8))
        XCTAssertEqual(keys.read(focusIn, at: 30 * ms).keys, 1)
    }

    func testAPasteSplitAcrossReadsIsOneKey() {
        var keys = TypedKeys()
        let paste = Array("\u{1B}[200~line one\r\u{1B}line two\u{1B}[201~".utf8)
        var readings: [TypedKeys.Reading] = []
        for (offset, byte) in paste.enumerated() { readings.append(keys.read([byte], at: (10 + UInt64(offset)) * ms)) }
        XCTAssertEqual(net(readings), 1)
        XCTAssertEqual(keys.read(Array("ab".utf8), at: 100 * ms).keys, 2, "the paste ended")
    }

    func testAnUnterminatedSequenceIsGivenUp() {
        var keys = TypedKeys()
        XCTAssertEqual(keys.read(Array("\u{1B}]11;rgb:00".utf8), at: 10 * ms).keys, 0)
        XCTAssertEqual(keys.read(Array("ab".utf8), at: 300 * ms).keys, 2, "the next read comes too late to continue it")

        XCTAssertEqual(keys.read(Array("\u{1B}]11;rgb:00\rab".utf8), at: 400 * ms).keys, 3, "a control character ends it")

        let longString = [0x1B, UInt8(ascii: "P")] + [UInt8](repeating: UInt8(ascii: "7"), count: TypedKeys.maximumStringBytes - 2) + Array("xy".utf8)
        XCTAssertEqual(keys.read(longString, at: 500 * ms).keys, 2, "past the cap the string is given up and keys count again")

        let longSequence = Array("\u{1B}[".utf8) + [UInt8](repeating: UInt8(ascii: "1"), count: 10_000) + Array("xy".utf8)
        XCTAssertEqual(keys.read(longSequence, at: 600 * ms).keys, 10_000 - (TypedKeys.maximumSequenceBytes - 2) + 2,
                       "given up at the cap: what follows is read afresh")
        XCTAssertEqual(keys.read(Array("\u{1B}[?62c".utf8), at: 700 * ms).keys, 0, "and replies are told again")
    }

    func testGarbageNeverTraps() {
        var generator = SystemRandomNumberGenerator()
        var keys = reader()
        for round in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                [0x1B, 0x5B, 0x3F, 0x3B, 0x07, 0x9C, 0x5C, 0x4D][Int.random(in: 0...7, using: &generator)] as UInt8
            }
            let reading = keys.read(bytes, at: UInt64(round) * 30 * ms)
            XCTAssertLessThanOrEqual(reading.keys, bytes.count + 1)
        }
    }
}
