/// The figures of one report, derived from the samples: what the HUD, plain and JSON show.
public struct Report: Equatable {
    public var wallSeconds: Double
    public var elapsedSeconds: Double
    public var pid: Int32
    public var alive: Bool
    /// CPU time over wall time of the last tick window; 100 = one core busy.
    public var cpuPercent: Double?
    public var cpuMachinePercent: Double?
    /// The user / system split of `cpuPercent`, from stat ticks over the last `MetricsStore.splitWindowSeconds`.
    public var cpuUserPercent: Double?
    public var cpuSystemPercent: Double?
    public var residentBytes: UInt64?
    /// Least-squares-free trend: RSS change over the last 10 s, per second.
    public var residentTrendBytesPerSecond: Double?
    public var proportionalBytes: UInt64?
    public var virtualBytes: UInt64?
    public var threads: Int?
    public var processCount: Int
    /// Cumulative CPU seconds of the target (and descendants) since it started. Never decreases.
    public var cpuSecondsTotal: Double?
}
