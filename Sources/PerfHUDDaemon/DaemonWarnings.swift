import PerfHUDSupport
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// What the daemon warns about, and how often: each reason a target is missing once (not every
/// look), each action once when it becomes high-frequency (not every tick while it stays so), and
/// a suspected leak (`leak_suspected`, the fit of `LeakTrend`) once when it begins and once when it
/// ends. A journal that repeats itself every second is one nobody reads.
struct DaemonWarnings {
    private var lastReason = ""
    private var highFrequencyKnown = Set<String>()
    /// Whether the last known `leak_suspected` was true.
    private var leakSuspected = false
    /// The group's OOM kills already said (`oom_kills`): each new one is said once.
    private var oomKillsSaid: UInt64?

    /// Whether `reason` (why the target is not there) is new and should be logged.
    mutating func isNewReason(_ reason: String) -> Bool {
        guard reason != lastReason else { return false }
        lastReason = reason
        return true
    }

    /// The target is there: a later reason is news again.
    mutating func targetFound() { lastReason = "" }

    /// The last reason logged, for the status line systemd shows.
    var reason: String { lastReason }

    /// The warnings this tick brings: actions that just became high-frequency, a leak suspected
    /// or no longer suspected (`figures`: the tick's, nil while the target is absent, which
    /// changes nothing; `leakWindow`: --leak-window, for the line).
    mutating func check(events: EventSnapshot, figures: TargetFigures?, threshold: Double, leakWindow: Double) -> [String] {
        var lines: [String] = []
        let current = Set(events.highFrequencyActions.filter { $0.rate > 0 }.map { $0.action })
        for action in events.highFrequencyActions where current.contains(action.action) && !highFrequencyKnown.contains(action.action) {
            lines.append("high-frequency action \(action.action): \(action.rate.clampedInt)/s (threshold \(threshold.clampedInt)/s)")
        }
        highFrequencyKnown = current
        if let report = figures, let suspected = report.leakSuspected, suspected != leakSuspected {
            leakSuspected = suspected
            let rss = report.residentBytes.map { "RSS \(Units.bytes(Double($0))), " } ?? ""
            let slope = report.residentTrendBytesPerHour.map { Units.signedBytes($0) + "/h" } ?? "?"
            let r2 = report.residentTrendR2.map { RowFormatter.number($0, decimals: 2) } ?? "?"
            let window = RowFormatter.number(leakWindow, decimals: leakWindow < 10 ? 1 : 0) + " s"
            lines.append(suspected
                ? "memory keeps growing: \(rss)\(slope) over the last \(window) (r² \(r2)): a leak is suspected"
                : "memory no longer keeps growing: \(rss)\(slope) over the last \(window) (r² \(r2)): the leak is no longer suspected")
        }
        if let report = figures, let kills = report.oomKills {
            if let said = oomKillsSaid, kills > said {
                let limit = report.memoryLimitBytes.map { " under its limit of " + Units.bytes(Double($0)) } ?? ""
                lines.append("the OOM killer killed \(kills - said) process\(kills - said == 1 ? "" : "es") in the target's control group\(limit)"
                             + " (\(kills) since perfhud began to watch it)")
            }
            oomKillsSaid = kills
        }
        return lines
    }
}
