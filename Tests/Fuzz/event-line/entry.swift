// One datagram of the event protocol, parsed into the real aggregator the way the receiving
// thread does it, then a snapshot as the HUD or the daemon takes one. Must hold for any input:
// no crash, no hang, every line counted once, every figure finite and not negative.
import PerfHUDEvents

/// Keeps every frame, as a recording's or the daemon's aggregator does: each is checked below.
let aggregator: EventAggregator = {
    let made = EventAggregator()
    made.startRecording()
    return made
}()
nonisolated(unsafe) var clock: UInt64 = 1_000_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    clock &+= 37_000_000   // time moves, so buckets, rates and the frame window are exercised
    let before = aggregator.snapshot(at: clock)
    let (lines, counted) = aggregator.withLock { ingest -> (Int, UInt64) in
        ingest.setTime(clock)
        let before = ingest.malformedCount &+ ingest.ignoredCount
        let lines = EventLineParser.parse(UnsafeRawBufferPointer(start: data, count: size), into: &ingest)
        ingest.countLines(lines)
        return (lines, ingest.malformedCount &+ ingest.ignoredCount &- before)
    }
    let after = aggregator.snapshot(at: clock)
    var frameWeights = 0.0
    for frame in aggregator.drainRecorded().frames {
        precondition(frame.milliseconds.isFinite && frame.milliseconds >= 0 && frame.weight.isFinite && frame.weight > 0,
                     "frame \(frame.milliseconds) ms × \(frame.weight)")
        frameWeights += frame.weight
    }
    precondition(after.received == before.received &+ UInt64(lines))
    precondition(counted <= UInt64(lines), "a line counted twice as malformed or ignored")
    let figures = [after.fps, after.jankyFrames, after.droppedFrames, after.framesTotal, after.actionsPerSecond,
                   after.actionsTotal, after.frameP50 ?? 0, after.frameP95 ?? 0, after.frameP99 ?? 0,
                   after.fpsOnePercentLow ?? 0] + after.highFrequencyActions.flatMap { [$0.rate, $0.peak] }
    for figure in figures { precondition(figure.isFinite && figure >= 0, "a figure is \(figure)") }
    precondition(after.framesTotal - before.framesTotal >= frameWeights * 0.999, "frames lost")
    _ = aggregator.drainLog()
    _ = aggregator.drainPhaseChanges()
    return 0
}
