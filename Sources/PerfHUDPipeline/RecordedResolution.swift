import PerfHUDEvents

/// The resolution a recording keeps its events at, defined once: `Recorder` writes frames and
/// actions with it, and the live summary (`RunSummary`) rounds them the same way. A figure that
/// picks events by time — a phase's frames and actions, split where the phase began — then picks
/// the same events live and from the file: a frame 0.4 ms after a phase began is the phase's in
/// both, where the exact time live and the whole millisecond recorded once put it on two sides
/// (a phase's `fps_avg` differed between the summary and `replay`, seen on a loaded machine).
extension Recording {
    /// A moment (CLOCK_MONOTONIC) as whole milliseconds since `start`, truncated; 0 before it.
    public static func milliseconds(at time: UInt64, since start: UInt64) -> Int64 {
        Int64(time >= start ? (time - start) / 1_000_000 : 0)
    }

    /// Seconds since the start in whole milliseconds, rounded as `--output json` rounds
    /// `elapsed_seconds`, so a replayed row prints the same.
    public static func milliseconds(elapsed seconds: Double) -> Int64 { (seconds * 1000).nearestInteger }

    /// A frame's duration in whole microseconds.
    public static func microseconds(frame milliseconds: Double) -> Int64 { (milliseconds * 1000).nearestInteger }
}

extension Recording.Frame {
    /// A live frame as its recording reads back (the `frames` view: `t_ms / 1000.0`, `us / 1000.0`).
    public init(_ frame: RecordedFrame, since start: UInt64) {
        self.init(t: Double(Recording.milliseconds(at: frame.time, since: start)) / 1000.0,
                  milliseconds: Double(Recording.microseconds(frame: frame.milliseconds)) / 1000.0,
                  weight: frame.weight, source: frame.source)
    }
}

extension Recording {
    /// A tick's time (seconds since the start) as its recording reads it back: an action counted
    /// in that tick is at this time.
    public static func recordedSeconds(elapsed seconds: Double) -> Double { Double(milliseconds(elapsed: seconds)) / 1000.0 }
}
