import XCTest
@testable import PerfHUDStore
@testable import PerfHUDPipeline

/// The JSON row is written through `ByteBuffer` and integer formatting (issue 22): what a program
/// reading the rows sees must not change — each number as `RowFormatter.number` prints it
/// (rounded half away from zero, at the figure's resolution), texts of any length escaped, the
/// row valid JSON however large it grows past the buffer's first capacity.
final class JSONRowTests: XCTestCase {
    private func row(_ report: TargetFigures, command: String = "sleep") throws -> [String: Any] {
        let text = RowFormatter.json(report, commandName: command, status: .running)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// What a number printed as before the row was written from integers (libm's `round` of the
    /// scaled value, `String` of its parts): the reference.
    private func reference(_ value: Double, _ decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let magnitude = scaled.magnitude
        var text = (scaled < 0 ? "-" : "") + String(magnitude / UInt64(scale))
        var fraction = magnitude % UInt64(scale)
        if fraction != 0 {
            var digits = decimals
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            let fractionText = String(fraction)
            text += "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
        }
        return text
    }

    func testNumbersPrintAsTheirRoundedValueAtTheFiguresResolution() throws {
        var report = TargetFigures(wallSeconds: 1e9, elapsedSeconds: 1, pid: 1, alive: true, processCount: 1)
        var random = SystemRandomNumberGenerator()
        // Halves (away from zero), the largest double below one half, negatives, large and tiny values.
        var values: [Double] = [0, -0.0, 0.005, 0.015, 0.49999999999999994, 2.5, -2.5, 0.125, 1e15, 8.9e15, -1e-9, 99.995, 4503599627370497]
        for _ in 0..<2000 { values.append(Double.random(in: -1e6...1e6, using: &random)) }
        for _ in 0..<2000 { values.append(Double(Int.random(in: -10_000...10_000, using: &random)) / 1000) }
        for value in values {
            report.cpuPercent = value                    // 2 decimals
            report.cpuSecondsTotal = abs(value) / 1e6    // 6 decimals
            let text = RowFormatter.json(report, commandName: "x", status: .running)
            XCTAssertTrue(text.contains("\"cpu_percent\":" + reference(value, 2) + ","), "\(value): \(text.prefix(160))")
            XCTAssertTrue(text.contains("\"cpu_seconds_total\":" + reference(abs(value) / 1e6, 6) + ","), "\(value)")
            XCTAssertEqual(RowFormatter.number(value, decimals: 0), reference(value, 0))
        }
        // More than 64 bits hold at 6 decimals: the whole number, not a crash.
        report.cpuSecondsTotal = 8e15
        XCTAssertTrue(RowFormatter.json(report, commandName: "x", status: .running).contains("\"cpu_seconds_total\":8000000000000000,"))
    }

    func testALongCommandWithQuotesAndControlsIsEscapedAndTheRowStaysValid() throws {
        let report = TargetFigures(wallSeconds: 1e9, elapsedSeconds: 1, pid: 1, alive: true, processCount: 1)
        // ~20 KB of text: past the row buffer's first 2 KiB, with every byte that needs an escape.
        let command = String(repeating: "a\"b\\c\u{1B}[31m\n\td\u{7F}é\u{85}", count: 1500)
        let parsed = try row(report, command: command)
        XCTAssertEqual(parsed["command"] as? String, command)
        XCTAssertEqual(parsed["pid"] as? Int, 1)
        let plain = try row(report, command: "python3 -m http.server")
        XCTAssertEqual(plain["command"] as? String, "python3 -m http.server")
    }

    /// The test of 8 bytes at a time that lets a text be copied whole: each byte that needs an
    /// escape (and a C1 control, and a non-ASCII letter), at each place of texts of 1 to 20 bytes
    /// (inside a word, across two, in the tail), comes out escaped and the text reads back whole.
    func testEachByteThatNeedsAnEscapeIsFoundWhereverItStands() throws {
        let escaped: [Character] = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
            + ["\"", "\\", "\u{7F}", "\u{85}", "\u{9F}", "é"]
        for length in 1...20 {
            for place in 0..<length {
                for special in escaped {
                    var characters = Array(repeating: Character("a"), count: length)
                    characters[place] = special
                    let text = String(characters)
                    let quoted = RowFormatter.quoted(text)
                    XCTAssertFalse(quoted.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(length) \(place): \(quoted)")
                    XCTAssertFalse(quoted.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(length) \(place): \(quoted)")
                    let back = try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String
                    XCTAssertEqual(back, text, "\(length) \(place)")
                }
                let plain = String(repeating: "b", count: length)
                XCTAssertEqual(RowFormatter.quoted(plain), "\"" + plain + "\"")
            }
        }
    }
}
