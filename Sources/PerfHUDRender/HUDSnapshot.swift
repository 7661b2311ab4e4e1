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
    /// The `--alert`s holding, and which figures one watches (`AlertStates`).
    public var alerts = AlertStates()

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
    /// The frame the HUD draws, live (`Session`) and replayed (`ReplaySession`) alike: the latest
    /// tick a `ScreenSink` was handed — its figures, events, phases and the target's name (before
    /// the first, `commandName` and no figures) — and the history its graph draws.
    package init(latest: Tick?, pid: Int32, commandName: String, series: TimeSeries, tickNanoseconds: UInt64,
                 historyNanoseconds: UInt64, status: TargetStatus, elapsedSeconds: Double) {
        self.init(pid: pid, commandName: latest?.commandName ?? commandName, figures: latest?.figures, series: series,
                  tickNanoseconds: tickNanoseconds, historySeconds: Double(historyNanoseconds) / 1e9,
                  status: status, elapsedSeconds: elapsedSeconds)
        events = latest?.events
        phases = latest?.phases ?? PhaseHistory()
        alerts = latest?.alerts ?? AlertStates()
    }
}
