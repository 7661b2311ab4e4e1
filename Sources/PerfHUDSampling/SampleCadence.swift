/// How often a sampler's ticks come, and so when a read made less often than every tick (the
/// once-a-second figures, `status`, `smaps_rollup`, a many-threaded target's `schedstat`) is due.
///
/// Such a read is due at the tick nearest to when it is wanted, not at the first tick past it: at
/// a 1 s tick whose samples jitter by a millisecond, "a second or more since the last read"
/// skipped every other row, which then repeated the row before's busiest threads, context
/// switches and pressure as if they were its own (issue 31). With half a tick of slack, ticks of a
/// second or more read at every tick (each row has its own interval's value) and shorter ticks
/// read at the one closest to a second after the last read.
package struct SampleCadence {
    /// The time since the sample before; 0 for the first.
    package let tickNanoseconds: UInt64

    /// Whether a read wanted at `due` (CLOCK_MONOTONIC) is due at the sample taken `now`.
    package func isDue(at due: UInt64, now: UInt64) -> Bool {
        now &+ tickNanoseconds / 2 >= due
    }

    /// Whether a read made every `period`, last at `lastRead` (0: never), is due `now`.
    package func isDue(lastRead: UInt64, every period: UInt64, now: UInt64) -> Bool {
        lastRead == 0 || isDue(at: lastRead &+ period, now: now)
    }
}
