/// One frame, for a recording.
public struct RecordedFrame: Equatable {
    /// When it ended (see `FrameTiming`).
    public var time: UInt64
    public var milliseconds: Double
    public var source: FrameSource
    /// How many frames it stands for: 1 / the sample rate of its line (`|@0.1`: 10), else 1.
    public var weight: Double = 1
    public init(time: UInt64, milliseconds: Double, source: FrameSource, weight: Double = 1) {
        self.time = time; self.milliseconds = milliseconds; self.source = source; self.weight = weight
    }
}

/// Every frame and action since the last drain (`EventAggregator.drainRecorded`), as a tick
/// carries them (`Tick.everyFrame`): the frames each stamped with its own end time and carrying its
/// weight (a sampled line's frames stand for more), the actions per label.
public struct EveryFrame {
    public var frames: [RecordedFrame]
    public var actions: [(label: String, count: Double)]
    public init(frames: [RecordedFrame] = [], actions: [(label: String, count: Double)] = []) {
        self.frames = frames; self.actions = actions
    }
}
