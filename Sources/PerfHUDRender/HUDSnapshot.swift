import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// Everything the HUD draws, frozen for one frame. Rendering is a pure function of this and the
/// terminal size.
public struct HUDSnapshot {
    public var pid: Int32
    public var commandName: String
    public var figures: TargetFigures?
    public var series: TimeSeries
    public var tickNanoseconds: UInt64
    public var historySeconds: Double
    public var status: TargetStatus
    public var elapsedSeconds: Double
    /// What the program reported; nil without an event socket.
    public var events: EventSnapshot?
    public var phases = PhaseHistory()
    /// Said in place of the frame figures while there are none (attach: "frames not reported").
    public var framesNote: String?
    /// Said in the graph's header in place of RSS figures when the target has none (a kernel thread).
    public var memoryNote: String?
    /// `perfhud replay`: where it is and how fast (`replay ×2 0:01:23/0:05:00`), in place of the clock.
    public var playback: String?
    /// Said on the details line in place of the figures (a recording made before they were kept).
    public var detailsNote: String?

    public init(pid: Int32, commandName: String, figures: TargetFigures?, series: TimeSeries, tickNanoseconds: UInt64,
                historySeconds: Double, status: TargetStatus, elapsedSeconds: Double) {
        self.pid = pid
        self.commandName = commandName
        self.figures = figures
        self.series = series
        self.tickNanoseconds = tickNanoseconds
        self.historySeconds = historySeconds
        self.status = status
        self.elapsedSeconds = elapsedSeconds
    }
}

extension HUDSnapshot {
    /// The frame of a live session: the last tick's figures, events and phases, the store's series.
    package init(pid: Int32, commandName: String, figures: TargetFigures?, series: TimeSeries, watch: WatchConfiguration, status: TargetStatus,
         elapsedSeconds: Double, events: EventSnapshot?, phases: PhaseHistory) {
        self.init(pid: pid, commandName: commandName, figures: figures, series: series,
                  tickNanoseconds: watch.tickNanoseconds, historySeconds: Double(watch.historyNanoseconds) / 1e9,
                  status: status, elapsedSeconds: elapsedSeconds)
        self.events = events
        self.phases = phases
    }
}
