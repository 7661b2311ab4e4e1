/// A run's actions by label, counted as they come: each label's total, and its peak rate — the
/// most it was dispatched over a second ending at one of its ticks, as the live view counts it.
/// Memory is a label's last second of ticks, not the run's every action: `report`'s top and
/// high-frequency actions, and the live summary line's, are summed by this one piece of code.
package struct RunActions {
    package struct Label {
        package var total = 0.0
        package var peak = 0.0
        /// The label's counts in the second up to its last tick.
        package var window: [(t: Double, count: Double)] = []
    }
    package private(set) var total = 0.0
    package private(set) var labels: [String: Label] = [:]

    /// One tick's count of `label`, at `t` (seconds since the start), in time order.
    package mutating func add(label: String, count: Double, t: Double) {
        total += count
        labels[label, default: Label()].add(count: count, t: t)
    }
}

extension RunActions.Label {
    fileprivate mutating func add(count: Double, t: Double) {
        total += count
        window.append((t, count))
        window.removeAll { $0.t <= t - 1 }
        peak = max(peak, window.reduce(0) { $0 + $1.count })
    }
}
