// One recv of a sock_diag dump (the kernel's reply about TCP sockets, issue 33), parsed as the
// network figures will parse it. Must hold for any input: no crash, no hang, no read past the
// buffer (ASan), a socket only from a message that fits, counters only where tcp_info holds them.
import PerfHUDSampling

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let batch = InetDiag.parse(UnsafeRawBufferPointer(start: data, count: size))
    precondition(batch.sockets.count * (16 + 72) <= size, "more sockets than messages fit")
    if batch.error != nil { precondition(batch.done, "an error ends the dump") }
    // The same bytes as answers to look-ups: each answer a message that fits, errors included.
    var answered = 0
    let answers = InetDiag.parseAnswers(UnsafeRawBufferPointer(start: data, count: size)) { _, _ in answered += 1 }
    precondition(answers == answered && answers * 16 <= size, "more answers than messages fit")
    return 0
}
