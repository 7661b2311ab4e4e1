// One recv of a sock_diag dump (the kernel's reply about TCP sockets, issue 33), parsed as the
// network figures will parse it. Must hold for any input: no crash, no hang, no read past the
// buffer (ASan), a socket only from a message that fits, counters only where tcp_info holds them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let batch = InetDiag.parse(UnsafeRawBufferPointer(start: data, count: size))
    precondition(batch.sockets.count * (16 + 72) <= size, "more sockets than messages fit")
    if batch.error != nil { precondition(batch.done, "an error ends the dump") }
    return 0
}
