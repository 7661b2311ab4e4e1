/// Where a tick goes. Every sink — the HUD's screen (`ScreenSink`), the plain/JSON rows
/// (`ReportWriter`), the end summary (`SessionSummary`), the recording (`Recorder`), the daemon's
/// metrics and journal — is handed the same `Tick` values, one after the other, by one fan-out:
/// `TickSinks` in a HUD session and in `replay` (whose ticks `RecordingRows` rebuilds from the
/// recording), the daemon's `TickFanOut` for each of its targets (the journal, the
/// recording, the metrics). A sink derives nothing another sink
/// needs: what two sinks show is computed before the tick (`TargetWatcher`) or by one shared piece
/// of code (`RunFrames`, `RunAggregates`, `RunStorageIO`, `CPUSecondsByMode`).
public protocol TickSink: AnyObject {
    func consume(_ tick: Tick)
}
