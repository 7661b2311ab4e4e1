// One `--fail-on` expression, as a user (or a CI configuration) writes it: it must read or be
// refused with a usage error — no crash, no hang — and a condition it reads must evaluate against
// a summary without trapping, whatever the figure or the factor.
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDRecordings

let summary: RecordingSummary = {
    var recording = Recording()
    recording.samples = [.init(t: 0, cpuPercent: 5, residentBytes: 100, phase: "Gallery"), .init(t: 1, cpuPercent: 7, residentBytes: 300)]
    recording.frames = [.init(t: 0.5, milliseconds: 16.7)]
    recording.phases = [.init(name: "Gallery", t: 0, tExit: 1, entryBytes: 100, exitBytes: 300)]
    return RecordingSummary(recording)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let condition = try FailCondition(text)
        precondition(!condition.metric.isEmpty)
        if case .number(let value) = condition.value { precondition(value.isFinite, "a limit of \(value)") }
        _ = try? condition.holds(for: summary, baseline: summary)
    } catch let error as PerfHUDError {
        precondition(error.exitStatus == .usage, "\(error)")
        precondition(!error.message.contains("\n") || text.contains("\n"), "a message of more than one line")
    } catch {
        preconditionFailure("an error that is not a PerfHUDError: \(error)")
    }
    return 0
}
