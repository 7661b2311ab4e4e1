// A reducer log (TCA's _printChanges output or JSON lines), as `--actions-from` reads it: fed
// whole, and fed again in pieces whose sizes come from the input itself (as a pipe delivers them).
// Must hold for any input: no crash, no hang, both ways find the same labels, and every label is
// bounded by the line it came from.
import PerfHUDEvents

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var whole = ReducerLogParser()
    let expected = whole.feed(bytes)
    var pieces = ReducerLogParser()
    var found: [String] = []
    var start = 0
    var step = 0
    while start < size {
        let length = 1 + Int(bytes[step % size] % 17)   // 1…17 bytes, chosen by the input
        found += pieces.feed(bytes[start..<min(size, start + length)])
        start += length
        step += 1
    }
    precondition(found == expected, "chunked \(found) != whole \(expected)")
    precondition(pieces.malformed == whole.malformed)
    for label in expected {
        precondition(!label.isEmpty && label.utf8.count <= ReducerLogParser.maximumDumpBytes * 2, "label of \(label.utf8.count) bytes")
    }
    return 0
}
