import PerfHUDSupport

/// The sampled history as a struct of arrays: one ring buffer per figure, sharing one index.
///
/// Values are `Double` with NaN for a gap (unknown or unreadable): a missed sample is never zero.
/// Times are seconds since the session started, monotonic, so they only increase.
public struct TimeSeries {
    public enum Figure: CaseIterable {
        case cpuPercent, residentBytes, proportionalBytes, userTicks, systemTicks, phase
    }

    public private(set) var times: RingBuffer<Double>
    private var columns: [RingBuffer<Double>]

    public init(capacity: Int) {
        times = RingBuffer(capacity: capacity, filler: .nan)
        columns = Array(repeating: RingBuffer(capacity: capacity, filler: .nan), count: Figure.allCases.count)
    }

    /// Memory a row takes: the time and one `Double` a figure.
    public static let bytesPerSample = (1 + Figure.allCases.count) * MemoryLayout<Double>.size

    public var count: Int { times.count }
    public var capacity: Int { times.capacity }

    /// Appends one row; a nil figure is a gap.
    public mutating func append(time: Double, cpuPercent: Double?, residentBytes: Double?,
                                proportionalBytes: Double?, userTicks: Double?, systemTicks: Double?, phase: Double? = nil) {
        times.append(time)
        columns[0].append(cpuPercent ?? .nan)
        columns[1].append(residentBytes ?? .nan)
        columns[2].append(proportionalBytes ?? .nan)
        columns[3].append(userTicks ?? .nan)
        columns[4].append(systemTicks ?? .nan)
        columns[5].append(phase ?? .nan)
    }

    public func value(_ figure: Figure, at index: Int) -> Double {
        columns[Self.position(figure)][index]
    }

    /// The newest row at or before `time`, by binary search; nil when every row is later.
    public func index(atOrBefore time: Double) -> Int? {
        var low = 0, high = count - 1, found: Int? = nil
        while low <= high {
            let middle = (low + high) / 2
            if times[middle] <= time { found = middle; low = middle + 1 } else { high = middle - 1 }
        }
        return found
    }

    /// The last non-gap value of `figure` in each of `width` columns of `start...end` (nil where
    /// none): for a figure that is a category, such as the phase, rather than a quantity.
    public func lastValues(_ figure: Figure, width: Int, from start: Double, to end: Double) -> [Double?] {
        var result = [Double?](repeating: nil, count: max(0, width))
        guard width > 0, end > start, count > 0 else { return result }
        let column = columns[Self.position(figure)]
        let scale = Double(width) / (end - start)
        var row = index(atOrBefore: start).map { times[$0] < start ? $0 + 1 : $0 } ?? 0
        while row < count, times[row] <= end {
            let value = column[row]
            if !value.isNaN { result[min(width - 1, max(0, Int((times[row] - start) * scale)))] = value }
            row += 1
        }
        return result
    }

    /// Downsamples `figure` over the time window `start...end` to `width` columns, keeping the
    /// minimum and maximum of each column so that a one-sample spike is never averaged away.
    /// A column with no sample, or only gaps, is nil — unless it lies between two samples at most
    /// `bridging` seconds apart: those are consecutive ticks, and the columns between them get
    /// the range of the two, so jitter of the tick against the column grid leaves no holes.
    public func minMax(_ figure: Figure, width: Int, from start: Double, to end: Double,
                       bridging: Double = 0) -> [ClosedRange<Double>?] {
        var result = [ClosedRange<Double>?](repeating: nil, count: max(0, width))
        guard width > 0, end > start, count > 0 else { return result }
        let column = columns[Self.position(figure)]
        let scale = Double(width) / (end - start)
        let first = index(atOrBefore: start).map { times[$0] < start ? $0 + 1 : $0 } ?? 0
        var row = first
        var previous: (slot: Int, time: Double, value: Double)? = nil
        while row < count {
            let time = times[row]
            if time > end { break }
            let value = column[row]
            row += 1
            guard !value.isNaN else { previous = nil; continue }
            let slot = min(width - 1, max(0, Int((time - start) * scale)))
            if let range = result[slot] {
                result[slot] = min(range.lowerBound, value)...max(range.upperBound, value)
            } else {
                result[slot] = value...value
            }
            if let previous, slot > previous.slot + 1, time - previous.time <= bridging {
                let bridge = min(previous.value, value)...max(previous.value, value)
                for between in (previous.slot + 1)..<slot { result[between] = bridge }
            }
            previous = (slot, time, value)
        }
        return result
    }

    @inline(__always)
    private static func position(_ figure: Figure) -> Int {
        switch figure {
        case .cpuPercent: return 0
        case .residentBytes: return 1
        case .proportionalBytes: return 2
        case .userTicks: return 3
        case .systemTicks: return 4
        case .phase: return 5
        }
    }
}
