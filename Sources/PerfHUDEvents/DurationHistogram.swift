#if canImport(Glibc)
import Glibc
#endif

/// Frame durations counted by their value at 1 µs — the resolution the percentiles are kept and
/// printed at (`atResolution(1000)`) — so that the k-th smallest is found by walking counts instead
/// of sorting the window every tick. Exact, not approximate: rounding to 1 µs keeps the order, so
/// the k-th smallest rounded duration is the rounded k-th smallest duration, which is what a sort
/// of the raw durations followed by `atResolution(1000)` gave.
///
/// Durations from 0 up to `fineMilliseconds` have a counter each (calloc'd: only the pages of the
/// durations that occur become resident; 60 FPS touches one or two of its 128), summed by 16 in
/// three levels above it (16 µs, 256 µs, 4.096 ms; the top has 32 sums): a percentile walks down
/// them, in each node from whichever end is nearer its rank, the top level from the lowest or the
/// highest sum in use: a few dozen sums. (Blocks of 128 µs walked from the lowest in use cost far
/// more: one frame of 1 ms put 130 blocks between it and 16.7 ms (measured: docs/benchmarks.md, "What the code's shape saves").) Longer ones (and negative ones, which the parser refuses but a caller could add) are
/// kept as values in sorted arrays: they are few a second.
package final class DurationHistogram {
    static let fineKeys = 1 << 17                                   // 131.072 ms
    static let fineMilliseconds = Double(fineKeys) / 1000
    /// Each sum counts 16 of the level below.
    private static let fanShift = 4
    private static let fan = 1 << fanShift
    /// `sums[0]` is the fine counters; `sums[level][i]` is the sum of `sums[level - 1][16 i ..< 16 i + 16]`.
    private static let levels = 4
    /// Allocated at the first duration in the fine range, not before: the daemon has a window per
    /// target, and most targets never send a frame. calloc'd or not, the lower levels (34 KiB) come
    /// from the heap and are resident at once (6.8 MiB at 200 targets, measured with heaptrack).
    private var sums: [UnsafeMutablePointer<UInt32>] = []
    /// Durations below 0 and from `fineMilliseconds` up, each sorted.
    private var below: [Double] = []
    private var above: [Double] = []
    package private(set) var count = 0
    /// Durations counted in `sums[0]`.
    private var fineCount = 0
    /// No top-level sum outside `lowestTop...highestTop` counts a duration (loose: a removal leaves
    /// them, a walk moves them in past empty sums). A walk's first level starts there, not at an
    /// end of the whole range: a 60 FPS program's frames are all in the 5th of the 32.
    private var lowestTop = Int.max, highestTop = -1

    package init() {}

    private func allocateSums() {
        sums = (0..<Self.levels).map { level in
            let count = Self.fineKeys >> (Self.fanShift * level)
            return calloc(count, MemoryLayout<UInt32>.stride)!.bindMemory(to: UInt32.self, capacity: count)
        }
    }

    deinit { for level in sums { free(level) } }

    /// The counter of a duration in the fine range, or nil outside it.
    @inline(__always)
    private static func key(_ milliseconds: Double) -> Int? {
        guard milliseconds >= 0, milliseconds < fineMilliseconds + 1 else { return nil }
        let key = Int((milliseconds * 1000).rounded())
        return key < fineKeys ? key : nil
    }

    /// Not-a-number durations (the parser refuses them) are not counted.
    package func add(_ milliseconds: Double) {
        guard !milliseconds.isNaN else { return }
        count += 1
        if let key = Self.key(milliseconds) {
            if sums.isEmpty { allocateSums() }
            sums.withUnsafeBufferPointer { sums in
                for level in 0..<Self.levels { sums[level][key >> (Self.fanShift * level)] &+= 1 }
            }
            fineCount += 1
            let top = key >> (Self.fanShift * (Self.levels - 1))
            lowestTop = min(lowestTop, top)
            highestTop = max(highestTop, top)
        } else if milliseconds < 0 {
            below.insert(milliseconds, at: below.firstIndex(notBelow: milliseconds))
        } else {
            above.insert(milliseconds, at: above.firstIndex(notBelow: milliseconds))
        }
    }

    /// Removes one duration added before.
    package func remove(_ milliseconds: Double) {
        guard !milliseconds.isNaN else { return }
        if let key = Self.key(milliseconds) {
            guard !sums.isEmpty, sums[0][key] > 0 else { return }
            sums.withUnsafeBufferPointer { sums in
                for level in 0..<Self.levels { sums[level][key >> (Self.fanShift * level)] -= 1 }
            }
            fineCount -= 1
        } else if milliseconds < 0 {
            let index = below.firstIndex(notBelow: milliseconds)
            guard index < below.count, below[index] == milliseconds else { return }
            below.remove(at: index)
        } else {
            let index = above.firstIndex(notBelow: milliseconds)
            guard index < above.count, above[index] == milliseconds else { return }
            above.remove(at: index)
        }
        count -= 1
    }

    /// The `rank`-th smallest duration (0 = the smallest) at 1 µs, or nil past the last.
    package func value(atRank rank: Int) -> Double? {
        guard rank >= 0, rank < count else { return nil }
        var rest = rank
        if rest < below.count { return below[rest].atResolution(1000) }
        rest -= below.count
        if rest >= fineCount {
            rest -= fineCount
            return rest < above.count ? above[rest].atResolution(1000) : nil
        }
        return sums.withUnsafeBufferPointer { sums in
            // Down the levels: in the node holding the rank, past the sums before it, from
            // whichever end of the node is nearer.
            let top = Self.levels - 1
            while lowestTop < highestTop && sums[top][lowestTop] == 0 { lowestTop += 1 }
            while highestTop > lowestTop && sums[top][highestTop] == 0 { highestTop -= 1 }
            var node = 0, nodeCount = fineCount
            for level in stride(from: top, through: 0, by: -1) {
                let first = level == top ? lowestTop : node << Self.fanShift
                let width = level == top ? highestTop - lowestTop + 1 : Self.fan
                let here = sums[level]
                if rest < nodeCount / 2 {
                    var index = first
                    while rest >= Int(here[index]) { rest -= Int(here[index]); index += 1 }
                    node = index
                } else {
                    var fromEnd = nodeCount - 1 - rest
                    var index = first + width - 1
                    while fromEnd >= Int(here[index]) { fromEnd -= Int(here[index]); index -= 1 }
                    node = index
                    rest = Int(here[index]) - 1 - fromEnd
                }
                nodeCount = Int(here[node])
            }
            return Double(node) / 1000
        }
    }

    /// Nearest rank: the smallest duration with at least `percent` % of them at or below it.
    package func percentile(_ percent: Double) -> Double? {
        guard count > 0 else { return nil }
        return value(atRank: rank(ofPercentile: percent))
    }

    private func rank(ofPercentile percent: Double) -> Int {
        max(0, Int((percent / 100 * Double(count)).rounded(.up)) - 1)
    }

    /// Three percentiles (`percentile`).
    package func percentiles(_ first: Double, _ second: Double, _ third: Double) -> (Double, Double, Double)? {
        guard count > 0, let a = value(atRank: rank(ofPercentile: first)), let b = value(atRank: rank(ofPercentile: second)),
              let c = value(atRank: rank(ofPercentile: third)) else { return nil }
        return (a, b, c)
    }
}
