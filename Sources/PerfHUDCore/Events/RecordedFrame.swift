/// One frame, for a recording.
public struct RecordedFrame: Equatable {
    /// When it ended (see `FrameTiming`).
    public var time: UInt64
    public var milliseconds: Double
    public var source: FrameSource
}
