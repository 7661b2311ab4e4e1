/// Frames of a terminal program, read from what it writes to its terminal (`--frames tty`), and
/// the time from each key it is sent to the first screen update after it (key-to-screen latency).
///
/// A frame is one synchronized update (`CSI ? 2026 h` … `CSI ? 2026 l`) once the program has used
/// one; before that (and for programs that never do), an output burst: bytes with no pause
/// longer than `quietNanoseconds` between them, ending at its last byte. A frame's duration is the
/// time from the end of the frame before it, as for presents. A pause of a second or more is the
/// program idling (a terminal program draws when it has something to show), not a frame: the
/// next frame starts the clock again.
///
/// A key's latency ends at the first screen update after it, as Typometer's first changed pixel:
/// the first output after the key — or, once the program uses synchronized updates, the end of the
/// first update after it (the terminal shows nothing of an update before its end), or output
/// written outside any update, whichever comes first. Not the end of the burst a key started: an
/// Enter that starts a long stream is answered by its first line.
///
/// Limits: a burst is a guess — a program that writes one frame in pieces with pauses longer than
/// the gap makes several frames, and one that streams without pause makes one long frame.
public struct TerminalFrames {
    /// A frame that ended: when, and how long since the frame before (nil after an idle pause).
    public struct Frame: Equatable {
        public var end: UInt64
        public var milliseconds: Double?
    }

    public let quietNanoseconds: UInt64
    public static let idleNanoseconds: UInt64 = 1_000_000_000
    public private(set) var usesSynchronizedOutput = false
    private var inUpdate = false
    private var lastEnd: UInt64?
    private var burstLastByte: UInt64?
    /// How far the bytes so far match `ESC [ ? 2 0 2 6`, across reads.
    private var matched = 0
    private static let prefix: [UInt8] = [0x1B, 0x5B, 0x3F, 0x32, 0x30, 0x32, 0x36]
    /// Keys sent and not yet answered by a frame, oldest first (at most `maximumPendingKeys`).
    private var pendingKeys: [UInt64] = []
    static let maximumPendingKeys = 256

    public init(quietNanoseconds: UInt64) {
        self.quietNanoseconds = quietNanoseconds
    }

    /// A key sent to the program now.
    public mutating func keySent(at time: UInt64) {
        if pendingKeys.count < Self.maximumPendingKeys { pendingKeys.append(time) }
    }

    /// The key sent at `time` was not one after all (the start of a terminal reply): not answered.
    public mutating func keyWithdrawn(sentAt time: UInt64) {
        if let index = pendingKeys.lastIndex(of: time) { pendingKeys.remove(at: index) }
    }

    /// Bytes the program wrote at `time`.
    /// - Returns: the frames they ended, and the latencies (ms) of the keys those frames answered.
    public mutating func output<Bytes: Collection>(_ bytes: Bytes, at time: UInt64) -> (frames: [Frame], latencies: [Double])
    where Bytes.Element == UInt8 {
        var frames: [Frame] = []
        var latencies: [Double] = []
        if !usesSynchronizedOutput, let last = burstLastByte, time &- last > quietNanoseconds {
            end(at: last, into: &frames)          // the burst before ended in quiet
        }
        var shown = false                                     // the screen changes: keys are answered
        for byte in bytes {
            if matched == Self.prefix.count {
                matched = 0
                if byte == UInt8(ascii: "h") {
                    usesSynchronizedOutput = true
                    inUpdate = true
                    burstLastByte = nil
                } else if byte == UInt8(ascii: "l"), inUpdate {
                    inUpdate = false
                    shown = true
                    end(at: time, into: &frames)
                }
                continue
            }
            if byte == Self.prefix[matched] { matched += 1 } else { matched = byte == 0x1B ? 1 : 0 }
            if matched == 0, !inUpdate { shown = true }        // not (yet) an update's begin or end
        }
        if !usesSynchronizedOutput { burstLastByte = time }
        if shown { answerKeys(at: time, into: &latencies) }
        return (frames, latencies)
    }

    /// The passage of time: a burst followed by `quietNanoseconds` of silence has ended.
    /// (No latencies: keys are answered by output, not by quiet.)
    public mutating func tick(at time: UInt64) -> (frames: [Frame], latencies: [Double]) {
        var frames: [Frame] = []
        if !usesSynchronizedOutput, let last = burstLastByte, time &- last > quietNanoseconds {
            burstLastByte = nil
            end(at: last, into: &frames)
        }
        return (frames, [])
    }

    private mutating func end(at time: UInt64, into frames: inout [Frame]) {
        burstLastByte = nil
        var duration: Double?
        if let lastEnd, time > lastEnd, time - lastEnd < Self.idleNanoseconds { duration = Double(time - lastEnd) / 1e6 }
        lastEnd = time
        frames.append(Frame(end: time, milliseconds: duration))
    }

    /// Keys sent before the screen changed at `time` are answered by it.
    private mutating func answerKeys(at time: UInt64, into latencies: inout [Double]) {
        var answered = 0
        for key in pendingKeys where key <= time {
            latencies.append(Double(time - key) / 1e6)
            answered += 1
        }
        pendingKeys.removeFirst(answered)
    }
}

/// Key-to-screen latencies: the last 1,024, nearest-rank percentiles as for frames.
public struct LatencyWindow {
    private var values = RingBuffer<Double>(capacity: 1024, filler: 0)
    public init() {}
    public mutating func add(_ milliseconds: Double) { values.append(milliseconds) }
    public var isEmpty: Bool { values.count == 0 }

    /// The nearest-rank `percent` percentile; nil with no latency yet.
    public func percentile(_ percent: Double) -> Double? {
        guard values.count > 0 else { return nil }
        var sorted = (0..<values.count).map { values[$0] }
        sorted.sort()
        return sorted[max(0, Int((percent / 100 * Double(sorted.count)).rounded(.up)) - 1)]
    }
}
