/// A cumulative CPU total as shown: never decreasing, never growing faster than the machine can
/// spend (wall time × online CPUs between two samples), and exact once the target has ended.
///
/// Why a bound is needed: where no control group counts a tree's CPU as it is spent, a child's
/// time reaches `/proc` only when its parent reaps it (cutime/cstime), all at once. With the tree
/// rediscovered every tick, a child that was never seen alive started after the previous tick,
/// so its time was spent since then: the lump *fits* the last interval on average, but its
/// exact place in time is lost with the child (/proc keeps neither its start nor its end), and a
/// reaped grandchild, a child missed by the scan or the 10 ms granularity of cutime can still
/// arrive as more than the interval could hold. Whatever exceeds interval × CPUs is carried into
/// the following ticks, where it is shown as soon as there is room: no tick claims more than the
/// machine has, nothing is lost, and the carry drains at the first idle moment (the error is at
/// most the lump's spread over the ticks it takes). The alternative, spreading every unexplained
/// lump back over an assumed lifetime, would rewrite rows already written; carrying forward never
/// does. When the target has ended (no more rates are derived) the carry is shown at once, so
/// `cpu_seconds_total` ends exact.
public struct MachineBoundedCPUTotal {
    private let onlineCPUs: UInt64
    /// The largest total read so far: what has really been spent.
    public private(set) var measured: UInt64 = 0
    /// What has been shown; `measured - shown` is the carry.
    public private(set) var shown: UInt64 = 0
    private var lastNanoseconds: UInt64?

    public init(onlineCPUs: Int = ProcessDirectory.onlineCPUs) {
        self.onlineCPUs = UInt64(max(1, onlineCPUs))
    }

    /// Takes a total read at `now` (CLOCK_MONOTONIC, the sample's own time: rates are derived
    /// from the same clock) and returns the total to show. `ended`: the target is gone, show all.
    public mutating func update(reading: UInt64, at now: UInt64, ended: Bool = false) -> UInt64 {
        measured = max(measured, reading)
        guard let last = lastNanoseconds, !ended else {
            // The first reading is the baseline (what the target had spent before we looked).
            shown = measured
            lastNanoseconds = now
            return shown
        }
        let room = (now > last ? now - last : 0).multipliedReportingOverflow(by: onlineCPUs)
        shown = room.overflow ? measured : min(measured, shown &+ room.partialValue)
        lastNanoseconds = now
        return shown
    }
}
