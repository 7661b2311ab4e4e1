import PerfHUDStore

/// The target's CPU seconds by mode (user, system), defined once for the daemon's
/// `perfhud_target_cpu_seconds_total{mode}` (fed each tick's figures) and `export --format
/// openmetrics` (fed a recording's rows): the total is the row's `cpu_seconds_total` (the CPU
/// clock, nanoseconds: exact), and each row's increase is split by that row's user and system
/// shares (stat ticks, 10 ms resolution, over a longer window). So user + system is the JSON row's
/// total at every row, in every sink. A row without a split keeps the last one (user before any).
public struct CPUSecondsByMode {
    public private(set) var user = 0.0
    public private(set) var system = 0.0
    private var counted = 0.0
    private var userShare = 1.0

    public init() {}

    /// One row. A total lower than the one before (a process of the group left it) starts again from there.
    public mutating func add(_ report: TargetFigures) {
        if let userPercent = report.cpuUserPercent, let systemPercent = report.cpuSystemPercent, userPercent + systemPercent > 0 {
            userShare = userPercent / (userPercent + systemPercent)
        }
        guard let total = report.cpuSecondsTotal else { return }
        if total < counted { counted = total; return }
        let increase = total - counted
        counted = total
        user += increase * userShare
        system += increase * (1 - userShare)
    }
}
