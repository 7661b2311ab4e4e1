/// How frames and actions are judged; from the command line.
public struct EventConfiguration: Equatable {
    /// Per second; a label at or above it is high-frequency.
    public var actionThreshold: Double = 20
    /// The display's refresh rate: the frame budget is 1000 / refresh ms.
    public var refreshHz: Double = 60

    public var jankFactor: Double = 1.5
    /// Frames are judged against the program's own recent pace (`--refresh` not given), not the
    /// refresh's budget (`FrameJudge`).
    public var paced = false
    public var frameWindowSeconds: Double = 10
    public var maxActionLabels = 200
    public static let maxLabelBytes = 200
    public static let otherLabel = "__other__"
    /// A high-frequency label stays listed this long after its rate falls below the threshold.
    public static let highFrequencyLingerSeconds = 10.0

    public init() {}
    /// Janky and dropped, as every figure of frames defines them.
    public var frameBudget: FrameBudget { FrameBudget(refreshHz: refreshHz, jankFactor: jankFactor, paced: paced) }
}
