/// How the target stands, as the HUD reports it.
public enum TargetStatus: Equatable {
    case running
    /// Exited with a status code, or killed by a signal; both nil when it is not our child.
    case exited(code: Int32?, signal: Int32?)

    public var description: String {
        switch self {
        case .running: return "running"
        case .exited(let code?, _): return "exited, status \(code)"
        case .exited(_, let signal?): return "killed by signal \(signal)"
        case .exited: return "exited"
        }
    }
}

/// Everything the HUD draws, frozen for one frame. Rendering is a pure function of this and the
/// terminal size.
public struct HUDSnapshot {
    public var pid: Int32
    public var commandName: String
    public var report: Report?
    public var series: TimeSeries
    public var tickNanoseconds: UInt64
    public var historySeconds: Double
    public var status: TargetStatus
    public var elapsedSeconds: Double
    /// What the program reported; nil without an event socket.
    public var events: EventSnapshot?
    public var phases = PhaseHistory()

    public init(pid: Int32, commandName: String, report: Report?, series: TimeSeries, tickNanoseconds: UInt64,
                historySeconds: Double, status: TargetStatus, elapsedSeconds: Double) {
        self.pid = pid
        self.commandName = commandName
        self.report = report
        self.series = series
        self.tickNanoseconds = tickNanoseconds
        self.historySeconds = historySeconds
        self.status = status
        self.elapsedSeconds = elapsedSeconds
    }
}

/// Where the HUD sits and how it looks.
public struct HUDStyle: Equatable {
    public enum Position: String, CaseIterable { case top, bottom }
    public var position: Position
    public var color: Bool
    public var graphRows: Int

    public init(position: Position = .top, color: Bool = true, graphRows: Int = 4) {
        self.position = position
        self.color = color
        self.graphRows = graphRows
    }
}

public struct TerminalSize: Equatable {
    public var rows: Int
    public var columns: Int
    public init(rows: Int, columns: Int) { self.rows = rows; self.columns = columns }
}
