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
/// of 128 µs whose sums let a walk skip them; a walk starts at the lowest or the highest block in
/// use, whichever end is nearer its rank (a 60 FPS program's frames fill one or two blocks, so a
/// percentile is a walk of those, not of the ~130 empty blocks below 16.7 ms). Longer ones (and negative ones, which the parser
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
    /// Durations counted in `fine`.
    private var fineCount = 0
    /// No block outside `lowestBlock...highestBlock` counts a duration (the bounds may be loose:
    /// a removal leaves them, a walk moves them in past empty blocks).
    private var lowestBlock = Int.max, highestBlock = -1

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
            let block = key >> Self.blockShift
            blocks[block] &+= 1
            fineCount += 1
            lowestBlock = min(lowestBlock, block)
            highestBlock = max(highestBlock, block)
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
            fineCount -= 1
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
        if rest >= fineCount {
            rest -= fineCount
            return rest < above.count ? above[rest].atResolution(1000) : nil
        }
        while lowestBlock < highestBlock && blocks[lowestBlock] == 0 { lowestBlock += 1 }
        while highestBlock > lowestBlock && blocks[highestBlock] == 0 { highestBlock -= 1 }
        return blocks.withUnsafeBufferPointer { blocks in
            if rest < fineCount / 2 {
                // Up from the lowest block in use.
                for block in lowestBlock...highestBlock {
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
            } else {
                // Down from the highest, counting ranks from the top.
                var fromTop = fineCount - 1 - rest
                for block in stride(from: highestBlock, through: lowestBlock, by: -1) {
                    let inBlock = Int(blocks[block])
                    if fromTop >= inBlock { fromTop -= inBlock; continue }
                    var key = (block << Self.blockShift) + Self.blockKeys - 1
                    while true {
                        let here = Int(fine[key])
                        if fromTop < here { return Double(key) / 1000 }
                        fromTop -= here
                        key -= 1
                    }
                }
            }
            return nil   // not reached: the blocks count `fineCount` durations
        }
    }

    /// Nearest rank: the smallest duration with at least `percent` % of them at or below it.
    func percentile(_ percent: Double) -> Double? {
        guard count > 0 else { return nil }
        return value(atRank: rank(ofPercentile: percent))
    }

    private func rank(ofPercentile percent: Double) -> Int {
        max(0, Int((percent / 100 * Double(count)).rounded(.up)) - 1)
    }

    /// Three percentiles (`percentile`).
    func percentiles(_ first: Double, _ second: Double, _ third: Double) -> (Double, Double, Double)? {
        guard count > 0, let a = value(atRank: rank(ofPercentile: first)), let b = value(atRank: rank(ofPercentile: second)),
              let c = value(atRank: rank(ofPercentile: third)) else { return nil }
        return (a, b, c)
    }
}
