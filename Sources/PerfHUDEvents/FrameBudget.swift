/// What a frame is judged against: the display's refresh (`--refresh` given) or the program's
/// own recent pace (the default). Janky and dropped are judged frame after frame by `FrameJudge`,
/// the one definition the live figures (`EventAggregator`), the run's figures (`RunFrames`: the
/// end summary and `report`) and the HTML report's marks all use (docs/figures.md, Definitions).
public struct FrameBudget: Equatable {
    /// The display refresh the budget comes from (`--refresh`, default 60).
    public let refreshHz: Double
    /// A frame longer than this × the budget (or the pace) is janky (`--jank-factor`, default 1.5).
    public let jankFactor: Double
    /// Judged against the program's own recent pace (no `--refresh` given), not the refresh.
    public let paced: Bool

    public init(refreshHz: Double, jankFactor: Double, paced: Bool = false) {
        self.refreshHz = refreshHz
        self.jankFactor = jankFactor
        self.paced = paced
    }

    /// How a recording names the reference (`jank_reference`): `pace`, or `refresh`.
    public var referenceName: String { paced ? "pace" : "refresh" }

    /// One refresh, in milliseconds.
    public var milliseconds: Double { 1000 / refreshHz }
    /// The longest frame that is not janky, in milliseconds.
    public var jankLimitMilliseconds: Double { jankFactor * milliseconds }

    /// Against the refresh: longer than jank factor × the budget.
    @inline(__always)
    func isJanky(_ frameMilliseconds: Double) -> Bool { frameMilliseconds > jankLimitMilliseconds }

    /// Against the refresh: the refreshes a frame missed, max(0, round(duration / budget) − 1).
    @inlinable @inline(__always)
    package func dropped(_ frameMilliseconds: Double) -> Double { max(0, (frameMilliseconds / milliseconds).rounded() - 1) }
}

/// Janky and dropped, judged frame after frame in the order the frames were counted.
///
/// With `--refresh` given, against the display's budget (1000 / refresh ms): a frame longer than
/// jank factor × the budget is janky, and it dropped round(duration / budget) − 1 refreshes.
///
/// Without it, against the program's own recent pace, as frame-time tools count stutter
/// (CapFrameX's stutter: a frame time some factor above the recent average; PerfDog's jank: above
/// twice the mean of the frames before it): the pace is the median of the previous
/// `paceFrames` frames' times — a median, so that the stutters themselves do not move it — and a
/// frame longer than jank factor × the pace is janky, and stands for round(duration / pace) − 1
/// dropped frames. A game presenting at a steady 30 FPS has no janky frame, where a 60 Hz budget
/// made nearly all of them janky. Until `minimumPaceFrames` frames have been seen there is no
/// pace, and no frame is janky. A sampled line (`|@0.1`) is one frame time of the pace, and
/// counts by its weight.
///
/// Live and from a recording the frames come in the same order (the recording keeps them in the
/// order they were counted), so the two say the same.
public struct FrameJudge {
    public let budget: FrameBudget
    package static let paceFrames = 30
    static let minimumPaceFrames = 5
    /// The newest frame times, a ring of `paceFrames`.
    private var recent: [Double] = []
    private var next = 0
    /// The same times in order, kept so as each frame comes: the one it pushes out of the ring
    /// leaves, it goes in where it belongs. Sorting a copy of the ring for each frame's median was
    /// 5,300 instructions of the demo's tick at 60 FPS, more than all its other frame figures.
    private var sorted: [Double] = []

    public init(budget: FrameBudget) {
        self.budget = budget
        if budget.paced { recent.reserveCapacity(Self.paceFrames); sorted.reserveCapacity(Self.paceFrames) }
    }

    /// The verdict on the next frame, which then joins the pace. Judged at 1 µs, the resolution a
    /// recording keeps a frame at: live and from the recording, the same numbers.
    public mutating func judge(_ measured: Double) -> (janky: Bool, dropped: Double) {
        let milliseconds = (measured * 1000).rounded() / 1000
        guard budget.paced else { return (budget.isJanky(milliseconds), budget.dropped(milliseconds)) }
        defer { remember(milliseconds) }
        guard let pace = pace(), pace > 0 else { return (false, 0) }
        return (milliseconds > budget.jankFactor * pace, max(0, (milliseconds / pace).rounded() - 1))
    }

    /// The median of the recent frame times (the upper one of an even count); nil before enough frames.
    public func pace() -> Double? {
        guard recent.count >= Self.minimumPaceFrames else { return nil }
        return sorted[sorted.count / 2]
    }

    private mutating func remember(_ milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds >= 0 else { return }
        if recent.count < Self.paceFrames {
            recent.append(milliseconds)
            sorted.insert(milliseconds, at: sorted.firstIndex(notBelow: milliseconds))
        } else {
            // The old time's slot is found (the same value went in) and the times between it and
            // the new one's place move over by one: no element is added or removed.
            let leaving = sorted.firstIndex(notBelow: recent[next])
            var place = sorted.firstIndex(notBelow: milliseconds)
            sorted.withUnsafeMutableBufferPointer { times in
                if place > leaving {
                    place -= 1
                    for index in leaving..<place { times[index] = times[index + 1] }
                } else {
                    for index in stride(from: leaving, to: place, by: -1) { times[index] = times[index - 1] }
                }
                times[place] = milliseconds
            }
            recent[next] = milliseconds
        }
        next = (next + 1) % Self.paceFrames
    }
}
