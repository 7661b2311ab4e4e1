import PerfHUDEvents

/// A run's frames, counted once for every place that sums them up: the HUD's end summary (fed each
/// tick's frames), `report` and its `--fail-on`, `--baseline` and HTML charts (fed a recording's
/// frames, each with the weight it was counted with live). A frame stands for `weight` frames (a
/// sampled line, `|@0.1`, for 10), in the total, janky, dropped and the percentiles alike, as the
/// live figures count it (`EventAggregator`); janky and dropped are `FrameJudge`'s, judged in the
/// order the frames were counted, as live.
///
/// One source at a time, as live: frames of a higher-ranked source replace what a lower one counted.
///
/// Durations are kept by their value at 1 µs, each with its weight (`WeightedDurations`).
public struct RunFrames {
    public var budget: FrameBudget { judge.budget }
    private var judge: FrameJudge
    /// The frames counted, each by its weight, by duration.
    public private(set) var durations = WeightedDurations()
    /// Frames counted, each by its weight.
    public var total: Double { durations.total }
    public private(set) var janky = 0.0
    public private(set) var dropped = 0.0
    public private(set) var source: FrameSource?

    public init(budget: FrameBudget) { judge = FrameJudge(budget: budget) }

    /// Counts one frame of `milliseconds` standing for `weight` frames; with `counted` false, only
    /// judges it (a frame outside the phase `report --phase` counts still sets the pace, as live).
    /// - Returns: whether it is janky and counted (the HTML report marks those).
    @discardableResult
    public mutating func add(milliseconds: Double, weight: Double = 1, source frameSource: FrameSource? = nil, counted: Bool = true) -> Bool {
        guard Self.isCountable(milliseconds: milliseconds, weight: weight) else { return false }
        switch Self.admit(frameSource, over: &source) {
        case .refused: return false
        case .restarted: self = RunFrames(budget: budget); source = frameSource
        case .admitted: break
        }
        let verdict = judge.judge(milliseconds)
        guard counted else { return false }
        durations.add(milliseconds: milliseconds, weight: weight)
        if verdict.janky { janky += weight }
        dropped += verdict.dropped * weight
        return verdict.janky
    }

    /// A frame with a duration and a weight (one without is not counted anywhere).
    static func isCountable(milliseconds: Double, weight: Double) -> Bool { milliseconds.isFinite && weight.isFinite && weight > 0 }

    package enum Admission { case admitted, refused, restarted }
    /// One source at a time: a frame of a lower-ranked source than `current` is refused; one of a
    /// higher rank restarts the count (`current` becomes its source); a frame that does not say
    /// its source is admitted. The run's frames and each phase's (`PhaseFrames`) go through it.
    package static func admit(_ frameSource: FrameSource?, over current: inout FrameSource?) -> Admission {
        guard let frameSource else { return .admitted }
        guard let before = current, frameSource != before else { current = frameSource; return .admitted }
        if frameSource.rank < before.rank { return .refused }
        current = frameSource
        return frameSource.rank > before.rank ? .restarted : .admitted
    }

    /// Nearest rank, weighted (`WeightedDurations.percentile`). Nil without frames.
    public func percentile(_ percent: Double) -> Double? { durations.percentile(percent) }

    /// Several percentiles in one pass over the sorted durations, in the order asked.
    public func percentiles(_ percents: [Double]) -> [Double?] { durations.percentiles(percents) }

    /// 1000 / the duration at `percent` (MangoHud's "1 % low" at 99): nil without frames.
    public func low(_ percent: Double) -> Double? { durations.low(percent) }
}

/// Frame durations, each by its weight, kept by their value at 1 µs (the resolution a recording
/// keeps them at) with the weight summed per value: exact weighted nearest-rank percentiles in
/// memory bounded by the distinct durations (a steady program has a few thousand), not by the
/// length of the run.
public struct WeightedDurations {
    /// The weights counted.
    public private(set) var total = 0.0
    /// Weight per duration in µs.
    private var weights: [Int64: Double] = [:]

    public init() {}

    package mutating func add(milliseconds: Double, weight: Double) {
        total += weight
        weights[Int64((milliseconds * 1000).rounded()), default: 0] += weight
    }

    /// Nearest rank, weighted: the smallest duration with at least `percent` % of the frames' weight at
    /// or below it (with weights of 1, the ⌈p/100 × n⌉-th smallest). Nil without frames.
    public func percentile(_ percent: Double) -> Double? {
        percentiles([percent])[0]
    }

    /// Several percentiles in one pass over the sorted durations, in the order asked.
    public func percentiles(_ percents: [Double]) -> [Double?] {
        guard total > 0 else { return percents.map { _ in nil } }
        let sorted = weights.keys.sorted()
        return percents.map { percent in
            // The tolerance keeps 99.9 % of 1000 at 999 (binary 99.9 is a hair above).
            let rank = Swift.min(total, Swift.max(1e-9, (percent / 100 * total - 1e-9).rounded(.up)))
            var below = 0.0
            for key in sorted {
                below += weights[key]!
                if below >= rank - 1e-9 { return Double(key) / 1000 }
            }
            return sorted.last.map { Double($0) / 1000 }
        }
    }

    /// 1000 / the duration at `percent` (MangoHud's "1 % low" at 99): nil without frames.
    public func low(_ percent: Double) -> Double? {
        percentile(percent).flatMap { $0 > 0 ? 1000 / $0 : nil }
    }
}
