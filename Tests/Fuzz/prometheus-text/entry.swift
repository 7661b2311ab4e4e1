// What a /metrics endpoint answers, as `perfhud top` reads it (`--from` may name any server):
// parsed, made into rows against the previous input (as two consecutive scrapes), sorted by every
// key and drawn at several widths. Must hold for any input: no crash, no hang; every sample named
// as the format names metrics; every drawn line fits its width and holds no control character
// but the table's own SGR escapes (names and labels from the input are shown escaped).
import PerfHUDSupport
import PerfHUDRender
import PerfHUDTop

nonisolated(unsafe) var previous: TopScrape?
nonisolated(unsafe) var clock: UInt64 = 1_000_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let parsed = PrometheusText.parse(Array(UnsafeBufferPointer(start: data, count: size)))
    let lines = UnsafeBufferPointer(start: data, count: size).filter { $0 == 10 }.count + 1
    precondition(parsed.samples.count + parsed.malformed <= lines, "more samples than lines")
    for sample in parsed.samples {
        precondition(!sample.name.isEmpty && sample.name.utf8.allSatisfy { isNameByte($0) } && !(0x30...0x39).contains(sample.name.utf8.first!),
                     "metric name \(sample.name.debugDescription)")
        precondition(sample.labels.count <= PrometheusText.maximumLabels)
        for name in sample.labels.keys { precondition(!name.isEmpty && name.utf8.allSatisfy { isNameByte($0) && $0 != 58 }) }
    }
    clock &+= 1_000_000_000
    let current = TopScrape(samples: parsed.samples, time: clock)
    let rows = TopRows.rows(previous: previous, current: current)
    previous = current
    precondition(Set(rows.map(\.target)).count == rows.count, "a target twice")
    for sort in TopSort.allCases {
        let sorted = TopRows.sorted(rows, by: sort)
        precondition(sorted.count == rows.count)
        for width in [1, 20, 60, 200] {
            let screen = TopRenderer.Screen(rows: sorted, selected: sorted.isEmpty ? nil : 0, sort: sort, source: "http://127.0.0.1:9469")
            for unicode in [true, false] {
                for line in TopRenderer.lines(screen, size: TerminalSize(rows: 12, columns: width), style: HUDStyle(color: true, unicode: unicode)) {
                    precondition(TerminalText.displayWidth(line) <= width, "a line of \(TerminalText.displayWidth(line)) columns in \(width): \(line.debugDescription)")
                    precondition(!withoutSGR(line).unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                                 "a control character on screen: \(line.debugDescription)")
                    if !unicode { precondition(line.unicodeScalars.allSatisfy(\.isASCII), "not ASCII: \(line.debugDescription)") }
                }
            }
        }
    }
    return 0
}

func isNameByte(_ byte: UInt8) -> Bool {
    (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || byte == 95 || byte == 58
}

/// `line` without its SGR escapes (`ESC [ digits ; … m`), which the table writes itself.
func withoutSGR(_ line: String) -> String {
    var result = ""
    var scalars = Array(line.unicodeScalars)[...]
    while let scalar = scalars.first {
        if scalar == "\u{1B}", scalars.dropFirst().first == "[" {
            let rest = scalars.dropFirst(2)
            let parameters = rest.prefix { ("0"..."9").contains($0) || $0 == ";" }
            if rest.dropFirst(parameters.count).first == "m" { scalars = rest.dropFirst(parameters.count + 1); continue }
        }
        result.unicodeScalars.append(scalar)
        scalars = scalars.dropFirst()
    }
    return result
}
