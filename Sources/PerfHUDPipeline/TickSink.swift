/// Where a tick goes. The sinks of a session — the HUD's screen (`ScreenSink`), the plain/JSON rows
/// (`RowWriter`), the end summary (`SessionSummary`), the recording (`Recorder`) — are handed
/// the same `Tick` values, one after the other, by one fan-out: `TickSinks` in a session and in
/// `replay` (whose ticks `RecordingRows` rebuilds from the recording). The daemon's `TickFanOut` is
/// the same for each target: its series (`TargetMetrics`), its journal (`TargetJournal`) and the
/// recording (`DaemonRecording`). A sink reads the tick alone, and derives nothing another sink
/// needs: what two sinks show is computed before the tick (`TargetWatcher`) or by one shared piece
/// of code (`RunFrames`, `RunAggregates`, `RunStorageIO`, `CPUSecondsByMode`).
public protocol TickSink: AnyObject {
    /// Whether the sink reads every frame and action of a tick (`Tick.everyFrame`). Said by each
    /// sink's type, with no default: the fan-out (`TickSinks`) has its watcher keep them when one of
    /// its sinks reads them, so a sink that needs them cannot be fed ticks without them, and a
    /// session that needs none does not pay for keeping them.
    static var readsEveryFrame: Bool { get }
    func consume(_ tick: Tick)
}

extension Sequence where Element == any TickSink {
    /// Whether one of these sinks reads every frame and action: what their watcher is told to keep
    /// (`TargetWatcher.keepsEveryFrame`), in a session (`TickSinks`) and in the daemon (`DaemonTarget`).
    package var readEveryFrame: Bool { contains { type(of: $0).readsEveryFrame } }
}
