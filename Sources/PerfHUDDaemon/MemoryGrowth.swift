import PerfHUDCore

/// Steady memory growth: a slope over minutes, not one spike.
public enum MemoryGrowth {
    /// The lowest RSS of the last minute is higher than RSS five minutes ago by 10 % and at least
    /// 16 MiB, and RSS halfway between lies between the two: it rose, stayed up, and rose
    /// steadily. Nil when that does not hold or the history is shorter than `window`.
    public static func steadyGrowth(in series: TimeSeries, window: Double = 300) -> (current: Double, increase: Double)? {
        guard let now = series.times.last, now >= window else { return nil }
        func resident(at time: Double) -> Double? {
            series.index(atOrBefore: time).map { series.value(.residentBytes, at: $0) }.flatMap { $0.isFinite ? $0 : nil }
        }
        guard let current = resident(at: now), let before = resident(at: now - window),
              let halfway = resident(at: now - window / 2) else { return nil }
        let lastMinute = series.minMax(.residentBytes, width: 1, from: now - window / 5, to: now)[0]
        guard let floor = lastMinute?.lowerBound else { return nil }
        guard floor - before > max(16 * 1024 * 1024, before * 0.1), halfway > before, halfway < floor else { return nil }
        return (current, current - before)
    }
}
