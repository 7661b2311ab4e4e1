import PerfHUDSupport

/// The frames of the percentile window (`--frame-window`, by end time), kept so that the
/// percentiles of a tick cost a walk of counts rather than a sort of every duration of the window:
/// each frame enters the histogram when it arrives and leaves it when the window passes its end,
/// or when the ring (the newest 65,536 frames) drops it.
///
/// The window at `time` is the frames with `start ≤ end ≤ time`. Frames are kept in the order they
/// arrived; their end times are in that order but for frames placed back from their arrival, by at
/// most `FrameTiming.maximumDelayNanoseconds` (a frame ends no later than it arrives and no more than
/// that before). So the frames that may have left since the last tick all lie between the oldest
/// frame still counted and the first frame ending a delay after the window's start; and a frame
/// ending after `time` (it arrived after the tick's clock was read) lies among the newest, up to the
/// first that ended a delay before `time`.
package struct FrameWindow {
    private var ends: RingBuffer<UInt64>
    private var durations: RingBuffer<Double>
    /// Whether each frame is counted in `histogram`.
    private var counted: RingBuffer<Bool>
    private let histogram = DurationHistogram()
    /// Frames appended so far; the ring holds the last `ends.count` of them.
    private var appended = 0
    /// The oldest frame (by arrival number) that may still be counted.
    private var oldestCounted = 0
    private var start: UInt64 = 0
    private var newestEnd: UInt64 = 0
    /// Frames taken out for one query (they ended after its time), put back after it.
    private var heldBack: [Int] = []

    package init(capacity: Int) {
        ends = RingBuffer(capacity: capacity, filler: 0)
        durations = RingBuffer(capacity: capacity, filler: 0)
        counted = RingBuffer(capacity: capacity, filler: false)
    }

    package var isEmpty: Bool { ends.isEmpty }

    /// The ring index of arrival number `number` (which must still be in the ring).
    @inline(__always)
    private func index(_ number: Int) -> Int { number - (appended - ends.count) }

    package mutating func append(end: UInt64, milliseconds: Double) {
        if ends.count == ends.capacity {
            if counted[0] { histogram.remove(durations[0]) }   // the oldest is overwritten
            oldestCounted = max(oldestCounted, appended - ends.count + 1)
        }
        ends.append(end)
        durations.append(milliseconds)
        appended += 1
        // A frame that ended before the window's start leaves again at the next query.
        histogram.add(milliseconds)
        counted.append(true)
        newestEnd = max(newestEnd, end)
    }

    /// Forgets every frame (a new frame source replaces the old one).
    package mutating func removeAll() {
        uncountAll()
        ends.removeAll(); durations.removeAll(); counted.removeAll()
        appended = 0; oldestCounted = 0; newestEnd = 0
    }

    private mutating func uncountAll() {
        for number in oldestCounted..<appended where counted[index(number)] {
            histogram.remove(durations[index(number)])
            counted.set(index(number), false)
        }
        oldestCounted = appended
    }

    /// p50, p95 and p99 (nearest rank, at 1 µs) of the frames that ended in `[start, time]`, nil
    /// without any.
    package mutating func percentiles(start newStart: UInt64, time: UInt64) -> (p50: Double, p95: Double, p99: Double)? {
        if newStart < start {
            // The window went back (a caller's clock, not the receiver's): count it afresh.
            uncountAll()
            oldestCounted = appended - ends.count
            for number in oldestCounted..<appended where ends[index(number)] >= newStart {
                histogram.add(durations[index(number)])
                counted.set(index(number), true)
            }
        }
        start = newStart
        leave(before: newStart)
        holdBack(after: time)
        defer { putBack() }
        guard let (p50, p95, p99) = histogram.percentiles(50, 95, 99) else { return nil }
        return (p50, p95, p99)
    }

    /// Uncounts the frames that ended before `start`.
    private mutating func leave(before start: UInt64) {
        let horizon = start &+ FrameTiming.maximumDelayNanoseconds
        var number = max(oldestCounted, appended - ends.count)
        var prefixDone = true
        while number < appended {
            let slot = index(number)
            let end = ends[slot]
            if end >= horizon { break }   // it and every later frame ended at or after `start`
            if counted[slot] && end < start {
                histogram.remove(durations[slot])
                counted.set(slot, false)
            }
            if prefixDone && !counted[slot] { oldestCounted = number + 1 } else { prefixDone = false }
            number += 1
        }
    }

    /// Uncounts, until `putBack`, the frames that ended after `time`.
    private mutating func holdBack(after time: UInt64) {
        guard newestEnd > time else { return }
        let horizon = time > FrameTiming.maximumDelayNanoseconds ? time - FrameTiming.maximumDelayNanoseconds : 0
        var number = appended - 1
        while number >= max(oldestCounted, appended - ends.count) {
            let slot = index(number)
            let end = ends[slot]
            if end <= horizon { break }   // it arrived by `time`, and so did every earlier frame
            if counted[slot] && end > time {
                histogram.remove(durations[slot])
                heldBack.append(slot)
            }
            number -= 1
        }
    }

    private mutating func putBack() {
        for slot in heldBack { histogram.add(durations[slot]) }
        heldBack.removeAll(keepingCapacity: true)
    }
}
