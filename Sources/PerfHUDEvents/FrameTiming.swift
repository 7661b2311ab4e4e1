/// When frames ended, and how long the FPS window must wait for them (PRODUCT.md: `fps` counts the
/// frames that *ended* in the last second, by their own end time; batched senders must not make
/// it jump).
///
/// Senders batch: the frame hooks send 16 lines a datagram (≈ 267 ms of frames at 60 FPS), so a
/// frame arrives up to a quarter of a second after it ended. Stamped at arrival, a whole batch
/// landed in one 100 ms bucket and a steady 60 FPS read 48, 64, 64, 48. Instead:
///  - a line with `end_ns` is placed at that time, if it is believable (`believedEnd`);
///  - the frames of a datagram without it are placed back from its arrival by their durations:
///    the last ends at arrival, the one before where the last began, and so on (`placeNext`);
///  - the FPS window ends where every frame has arrived: behind the snapshot time by the largest
///    delivery delay (arrival − end) of the last 10 s, rounded up to a 100 ms bucket and capped at
///    a second (`lagBuckets`). A sender that does not batch has a delay of ~0 and no lag.
package struct FrameTiming {
    /// The longest a frame may take to arrive and still be placed at its end: the same as the
    /// longest the FPS window waits (10 buckets). A frame later than that could only be counted
    /// in a second the window has already passed, and a sender whose clock is not perfhud's (a
    /// program in another time namespace, a bad clock) would empty the FPS: such end times are
    /// disbelieved, and the frame placed back from its arrival as if it had none.
    static let maximumDelayNanoseconds: UInt64 = 1_000_000_000
    static let maximumLagBuckets: Int64 = 10
    /// How long a delivery delay keeps the window waiting after it was seen.
    static let delayMemorySeconds: Int64 = 10

    struct Unplaced {
        package var milliseconds: Double
        package var count: Double
        package var source: FrameSource
    }

    /// Frames of the current datagram that carry no end time, in order: placed when it ends.
    private(set) var unplaced: [Unplaced] = []
    /// Their durations, summed: how far back from arrival the first of them began.
    private(set) var unplacedNanoseconds: UInt64 = 0
    /// The largest delay seen in each second of arrival, in a ring of 16 seconds; the current
    /// second's is kept aside (`noteDelay` runs for every frame) and enters the ring when the
    /// second changes.
    private var delaySeconds = [Int64](repeating: -1, count: 16)
    private var delayMaxima = [UInt64](repeating: 0, count: 16)
    private var currentSecond: Int64 = -1
    private var currentMaximum: UInt64 = 0

    /// `unplaced` grows with the first frames and keeps its room (it is swapped, not freed): not
    /// reserved up front, where its 24 KiB were resident pages for every target of a daemon.
    package init() {}

    @inline(__always)
    mutating func addUnplaced(_ frame: Unplaced) {
        unplaced.append(frame)
        unplacedNanoseconds &+= Self.nanoseconds(frame.milliseconds)
    }

    /// Swaps the unplaced frames with `spare` (their storage is kept: swap the empty array back
    /// after use) and returns their summed duration. Swapped out rather than read in place, so
    /// the caller may mutate what holds this timing while it goes through them.
    @inline(__always)
    static func takeUnplaced(_ timing: inout FrameTiming, _ spare: inout [Unplaced]) -> UInt64 {
        swap(&timing.unplaced, &spare)
        defer { timing.unplacedNanoseconds = 0 }
        return timing.unplacedNanoseconds
    }

    /// `end` if it can be when a frame that arrived at `arrival` ended: not after its arrival (the
    /// same clock read later), not more than `maximumDelayNanoseconds` before it.
    @inline(__always)
    static func believedEnd(_ end: UInt64, arrival: UInt64) -> UInt64? {
        end <= arrival && arrival - end <= maximumDelayNanoseconds ? end : nil
    }

    /// The end of the next frame placed back: `remaining` is the duration of it and the frames
    /// after it (`unplacedNanoseconds` for the first), and becomes theirs after it. The last ends at
    /// `arrival`; none more than `maximumDelayNanoseconds` before it (a sender cannot push frames
    /// into the past with long durations).
    @inline(__always)
    static func placeNext(_ remaining: inout UInt64, milliseconds: Double, arrival: UInt64) -> UInt64 {
        let duration = nanoseconds(milliseconds)
        remaining = remaining > duration ? remaining - duration : 0
        let earliest = arrival > maximumDelayNanoseconds ? arrival - maximumDelayNanoseconds : 0
        return max(arrival > remaining ? arrival - remaining : 0, earliest)
    }

    @inline(__always)
    private static func nanoseconds(_ milliseconds: Double) -> UInt64 {
        milliseconds > 0 ? UInt64(min(milliseconds, 3_600_000) * 1e6) : 0   // the parser's bound: < 1 hour
    }

    /// A frame that arrived in `bucket` (100 ms) took `delay` ns to arrive.
    @inline(__always)
    mutating func noteDelay(_ delay: UInt64, bucket: Int64) {
        let second = bucket / Int64(EventAggregator.bucketsPerSecond)
        if second == currentSecond {
            if delay > currentMaximum { currentMaximum = delay }
            return
        }
        if second < currentSecond { return }   // the receiver's clock does not go back
        if currentSecond >= 0 {
            let slot = Int(currentSecond & 15)
            delaySeconds[slot] = currentSecond
            delayMaxima[slot] = currentMaximum
        }
        currentSecond = second
        currentMaximum = delay
    }

    /// How many 100 ms buckets the FPS window at `time` ends before the current one: the largest
    /// delay seen in the last `delayMemorySeconds`, rounded up to a bucket, at most a second.
    package func lagBuckets(at time: UInt64) -> Int64 {
        let second = Int64(time / 1_000_000_000)
        var largest: UInt64 = currentSecond > second - Self.delayMemorySeconds ? currentMaximum : 0
        for slot in 0..<delaySeconds.count where delaySeconds[slot] > second - Self.delayMemorySeconds {
            largest = max(largest, delayMaxima[slot])
        }
        let bucket = EventAggregator.bucketNanoseconds
        return min(Self.maximumLagBuckets, Int64((largest + bucket - 1) / bucket))
    }

    /// A new source replaces the frames counted so far: its delays start afresh.
    mutating func forgetDelays() {
        for slot in delaySeconds.indices { delaySeconds[slot] = -1; delayMaxima[slot] = 0 }
        currentSecond = -1
        currentMaximum = 0
    }
}
