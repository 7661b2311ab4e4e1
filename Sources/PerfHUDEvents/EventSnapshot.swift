/// What the event stream says at one moment: the figures of docs/figures.md's Definitions.
public struct EventSnapshot: Equatable, Sendable {
    /// The figures of a session without an event socket, for code that reads a figure from a
    /// snapshot it was not given (the report figures of a row are read beside it).
    package static let empty = EventSnapshot()

    public struct HighFrequencyAction: Equatable, Sendable {
        public var action: String
        public var rate: Double
        public var peak: Double
        public init(action: String, rate: Double, peak: Double) {
            self.action = action; self.rate = rate; self.peak = peak
        }
    }
    public var fps: Double = 0
    public var frameP50: Double?
    public var frameP95: Double?
    public var frameP99: Double?
    public var fpsOnePercentLow: Double?
    public var jankyFrames: Double = 0
    public var droppedFrames: Double = 0
    public var framesTotal: Double = 0
    /// Where the frames shown come from; nil before the first.
    public var frameSource: FrameSource?
    /// The frame hooks said the program loaded OpenGL/EGL, Vulkan (`perfhud.graphics`).
    public var glLoaded = false
    public var vulkanLoaded = false
    /// Why no frame figure is shown, where perfhud can tell (`run` with its frame sources):
    /// `GL loaded, no present seen`, `no GL/Vulkan/SDL/terminal drawing`, … (`FramesUnreported`).
    /// Nil while frames are counted, and where nothing could be seen (attach, `--frames none`).
    public var framesUnreportedReason: String?
    /// Key-to-screen latency of a program perfhud runs (see `TerminalFrames`); nil before a key.
    public var inputLatencyP50: Double?
    public var inputLatencyP99: Double?
    public var actionsPerSecond: Double = 0
    public var actionsTotal: Double = 0
    public var highFrequencyActions: [HighFrequencyAction] = []
    public var phase: String?
    public var received: UInt64 = 0
    public var malformed: UInt64 = 0
    public var ignored: UInt64 = 0
    public var rejected: [String: UInt64] = [:]
    public var rejectedTotal: UInt64 { rejected.values.reduce(0, +) }
    /// The display refresh the frame budget comes from.
    public var refreshHz: Double = 60
    /// Frames are judged against the program's own pace, not the refresh (`FrameJudge`).
    public var paced = false

    public init() {}

    /// Whether any event has arrived yet: before that, frame and action figures are unknown.
    public var hasFrames: Bool { framesTotal > 0 }
    public var hasActions: Bool { actionsTotal > 0 }
}
