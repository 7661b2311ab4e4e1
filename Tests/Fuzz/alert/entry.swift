// One `--alert` expression, as a user (or a daemon's configuration) writes it: it must read or be
// refused with one usage line — no crash, no hang — and a rule it reads must decide a run of rows
// without trapping, whatever its figure, limit or duration.
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDStore
import PerfHUDPipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let rule = try AlertRule(text)
        precondition(rule.limit.isFinite, "a limit of \(rule.limit)")
        var tracker = AlertTracker(AlertRules([rule]))
        for index in 0..<8 {
            let time = Double(index) / 10
            var figures = TargetFigures(wallSeconds: time, elapsedSeconds: time, pid: 1, alive: true, cpuPercent: Double(index * 20),
                                        residentBytes: UInt64(index) << 30, threads: index, processCount: 1)
            figures.leakSuspected = index % 2 == 0
            let nanoseconds = UInt64(index) * 100_000_000
            var tick = Tick(monotonicNanoseconds: nanoseconds, sample: Sample(monotonicNanoseconds: nanoseconds, wallSeconds: time, alive: true),
                            figures: figures, events: nil, commandName: "x", status: .running, phases: PhaseHistory(), isFinal: index == 7)
            tracker.apply(to: &tick)
            for span in tick.alerts.ended { precondition(span.heldSeconds >= 0 && !span.sentence.contains("\n")) }
        }
    } catch let error as PerfHUDError {
        precondition(error.exitStatus == .usage, "\(error)")
        precondition(!error.message.contains("\n") || text.contains("\n"), "a message of more than one line")
    } catch {
        preconditionFailure("an error that is not a PerfHUDError: \(error)")
    }
    return 0
}
