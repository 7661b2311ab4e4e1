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
/// durations that occur become resident; 60 FPS touches one or two of its 128), grouped in blocks
/// of 128 µs whose sums let a walk skip them. Longer ones (and negative ones, which the parser
/// refuses but a caller could add) are kept as values in sorted arrays: they are few a second.
final class DurationHistogram {
    static let fineKeys = 1 << 17                                   // 131.072 ms
    static let fineMilliseconds = Double(fineKeys) / 1000
    private static let blockShift = 7
    private static let blockKeys = 1 << blockShift
    private let fine: UnsafeMutablePointer<UInt32>
    private var blocks = [UInt32](repeating: 0, count: DurationHistogram.fineKeys >> DurationHistogram.blockShift)
    /// Durations below 0 and from `fineMilliseconds` up, each sorted.
    private var below: [Double] = []
    private var above: [Double] = []
    private(set) var count = 0

    init() {
        fine = calloc(Self.fineKeys, MemoryLayout<UInt32>.stride)!.bindMemory(to: UInt32.self, capacity: Self.fineKeys)
    }

    deinit { free(fine) }

    /// The counter of a duration in the fine range, or nil outside it.
    @inline(__always)
    private static func key(_ milliseconds: Double) -> Int? {
        guard milliseconds >= 0, milliseconds < fineMilliseconds + 1 else { return nil }
        let key = Int((milliseconds * 1000).rounded())
        return key < fineKeys ? key : nil
    }

    /// Not-a-number durations (the parser refuses them) are not counted.
    func add(_ milliseconds: Double) {
        guard !milliseconds.isNaN else { return }
        count += 1
        if let key = Self.key(milliseconds) {
            fine[key] &+= 1
            blocks[key >> Self.blockShift] &+= 1
        } else if milliseconds < 0 {
            below.insert(milliseconds, at: Self.insertionPoint(of: milliseconds, in: below))
        } else {
            above.insert(milliseconds, at: Self.insertionPoint(of: milliseconds, in: above))
        }
    }

    /// Removes one duration added before.
    func remove(_ milliseconds: Double) {
        guard !milliseconds.isNaN else { return }
        if let key = Self.key(milliseconds) {
            guard fine[key] > 0 else { return }
            fine[key] -= 1
            blocks[key >> Self.blockShift] -= 1
        } else if milliseconds < 0 {
            let index = Self.insertionPoint(of: milliseconds, in: below)
            guard index < below.count, below[index] == milliseconds else { return }
            below.remove(at: index)
        } else {
            let index = Self.insertionPoint(of: milliseconds, in: above)
            guard index < above.count, above[index] == milliseconds else { return }
            above.remove(at: index)
        }
        count -= 1
    }

    /// The first index of `values` (sorted) whose value is not below `value`.
    private static func insertionPoint(of value: Double, in values: [Double]) -> Int {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The `rank`-th smallest duration (0 = the smallest) at 1 µs, or nil past the last.
    func value(atRank rank: Int) -> Double? {
        guard rank >= 0, rank < count else { return nil }
        var rest = rank
        if rest < below.count { return below[rest].atResolution(1000) }
        rest -= below.count
        for block in blocks.indices {
            let inBlock = Int(blocks[block])
            if rest >= inBlock { rest -= inBlock; continue }
            var key = block << Self.blockShift
            while true {
                let here = Int(fine[key])
                if rest < here { return Double(key) / 1000 }
                rest -= here
                key += 1
            }
        }
        return rest < above.count ? above[rest].atResolution(1000) : nil
    }

    /// Nearest rank: the smallest duration with at least `percent` % of them at or below it.
    func percentile(_ percent: Double) -> Double? {
        guard count > 0 else { return nil }
        return value(atRank: rank(ofPercentile: percent))
    }

    private func rank(ofPercentile percent: Double) -> Int {
        max(0, Int((percent / 100 * Double(count)).rounded(.up)) - 1)
    }

    /// Three percentiles (`percentile`), ascending, in one walk of the counts: a tick asks for
    /// p50, p95 and p99, and a walk each was ~5k instructions a tick of a 60 FPS program.
    func percentiles(_ first: Double, _ second: Double, _ third: Double) -> (Double, Double, Double)? {
        guard count > 0 else { return nil }
        let ranks = (rank(ofPercentile: first), rank(ofPercentile: second), rank(ofPercentile: third))
        var found: (Double, Double, Double) = (0, 0, 0)
        var next = 0   // which of the three ranks is looked for
        @inline(__always) func wanted() -> Int { next == 0 ? ranks.0 : next == 1 ? ranks.1 : ranks.2 }
        @inline(__always) func take(_ value: Double) {
            switch next { case 0: found.0 = value; case 1: found.1 = value; default: found.2 = value }
            next += 1
        }
        while next < 3 && wanted() < below.count { take(below[wanted()].atResolution(1000)) }
        var before = below.count   // durations before the block or key being looked at
        var block = 0
        while next < 3 && block < blocks.count {
            let inBlock = Int(blocks[block])
            if wanted() >= before + inBlock { before += inBlock; block += 1; continue }
            var key = block << Self.blockShift
            let blockEnd = key + Self.blockKeys
            while next < 3 && key < blockEnd {
                let here = Int(fine[key])
                while next < 3 && wanted() < before + here { take(Double(key) / 1000) }
                before += here
                key += 1
            }
            block += 1
        }
        while next < 3 {
            let rest = wanted() - before
            guard rest < above.count else { return nil }
            take(above[rest].atResolution(1000))
        }
        return found
    }
}
