// A container runtime's record of its containers (podman's containers.json, Docker's config.v2.json:
// files of the runtime's, read as root and parsed by hand, `JSONValue`), as `ContainerLookup` reads it. Must hold
// for any input: no crash, no hang (nesting is bounded), every record a full 64-digit ID.
import PerfHUDSampling

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for record in ContainerLookup.podmanRecords(text, source: "fuzz") {
        precondition(record.id.count == 64, "an ID of \(record.id.count) digits")
        precondition(!record.label.isEmpty, "no label")
    }
    if let record = ContainerLookup.dockerRecord(text, source: "fuzz") {
        precondition(record.id.count == 64, "an ID of \(record.id.count) digits")
        precondition(!record.label.isEmpty && !record.label.hasPrefix("/"), "a label of \(record.label)")
    }
    return 0
}
