// One /proc/PID/fdinfo/FD of a DRM descriptor (a driver's text: untrusted, as any file a process's
// driver writes), parsed and passed twice through the client accounting the GPU thread does, then
// attributed. Must hold for any input: no crash, no hang, every share in 0…100 and finite.
import PerfHUDSampling

nonisolated(unsafe) var clients = DRMClients()
nonisolated(unsafe) var clock: UInt64 = 1_000_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let info = DRMFdinfo.parse(Substring(text)) else { return 0 }
    precondition(info.key != nil, "a client without a key")
    for _ in 0..<2 {
        clock &+= 1_000_000_000
        var reading = GPUReading()
        reading.devices = [GPUDevice(name: "fuzz", id: "fuzz")]
        reading.clients = clients.pass([(info, [1, 2])], now: clock) { _ in 0 }
        precondition(reading.clients.count == 1, "one client")
        let figures = reading.figures(of: [2])
        if let busy = figures.busyPercent { precondition(busy.isFinite && busy >= 0 && busy <= 100, "busy \(busy)") }
        precondition(figures.memoryBytes == info.memoryBytes, "memory")
    }
    return 0
}
