import PerfHUDCore

/// What the daemon warns about, and how often: each reason a target is missing once (not every
/// look), each action once when it becomes high-frequency (not every tick while it stays so), and
/// steady memory growth once until it stops. A journal that repeats itself every second is one
/// nobody reads.
struct DaemonWarnings {
    private var lastReason = ""
    private var highFrequencyKnown = Set<String>()
    private var growthWarned = false

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

    /// The warnings this tick brings: actions that just became high-frequency, memory that
    /// started to grow steadily.
    mutating func check(events: EventSnapshot, series: TimeSeries, threshold: Double) -> [String] {
        var lines: [String] = []
        let current = Set(events.highFrequencyActions.filter { $0.rate > 0 }.map { $0.action })
        for action in events.highFrequencyActions where current.contains(action.action) && !highFrequencyKnown.contains(action.action) {
            lines.append("high-frequency action \(action.action): \(action.rate.clampedInt)/s (threshold \(threshold.clampedInt)/s)")
        }
        highFrequencyKnown = current
        if let growth = MemoryGrowth.steadyGrowth(in: series) {
            if !growthWarned {
                lines.append("memory keeps growing: RSS \(Units.bytes(growth.current)), \(Units.signedBytes(growth.increase)) in 5 minutes")
            }
            growthWarned = true
        } else {
            growthWarned = false
        }
        return lines
    }
}
