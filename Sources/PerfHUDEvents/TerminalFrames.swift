import PerfHUDSupport

/// Frames of a terminal program, read from what it writes to its terminal (`--frames tty`), and
/// the time from each key it is sent to the first screen update after it (key-to-screen latency).
///
/// Only a program that draws as a terminal program does has frames: from the first cursor
/// addressing (`CSI row;col H` or `f`, `CSI row d`, `CSI n A`), clearing (`CSI J`, `ESC c`), switch to
/// the alternate screen (`CSI ? 1049 h`, `? 47 h`, `? 1047 h`) or synchronized update (`CSI ? 2026 h`).
/// Lines of log output — a GUI program's banner, a browser's warnings, colours included — are not
/// frames: before such drawing, bursts are not counted (issue 18: pygame's banner made 5 "frames",
/// then `FPS 0`, of a game drawing 60).
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
    /// The program has drawn as a terminal program does (see above): its bursts are frames.
    public private(set) var drawsScreen = false
    private var control = ControlScanner()
    private var inUpdate = false
    private var lastEnd: UInt64?
    private var burstLastByte: UInt64?
    /// How far the bytes so far match `ESC [ ? 2 0 2 6`, across reads.
    private var matched = 0
    private static let prefix: [UInt8] = [0x1B, 0x5B, 0x3F, 0x32, 0x30, 0x32, 0x36]
    /// Keys sent and not yet answered by a frame, oldest first (at most `maximumPendingKeys`).
    private var pendingKeys: [UInt64] = []
    package static let maximumPendingKeys = 256

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
        var updatesEnded = 0
        if !drawsScreen { drawsScreen = control.findsDrawing(in: bytes) }
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
                    updatesEnded += 1
                }
                continue
            }
            if byte == Self.prefix[matched] { matched += 1 } else { matched = byte == 0x1B ? 1 : 0 }
            if matched == 0, !inUpdate { shown = true }        // not (yet) an update's begin or end
        }
        if updatesEnded > 0 { endUpdates(updatesEnded, at: time, into: &frames) }
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
        guard drawsScreen else { return }
        var duration: Double?
        if let lastEnd, time > lastEnd, time - lastEnd < Self.idleNanoseconds { duration = Double(time - lastEnd) / 1e6 }
        lastEnd = time
        frames.append(Frame(end: time, milliseconds: duration))
    }

    /// `count` synchronized updates that ended in one read, at `time` or before. Each is a frame:
    /// a read holds several when perfhud was not scheduled while the program drew (a loaded
    /// machine), and counting them as one lost frames (149 drawn, 143 counted). Their ends are not in
    /// the stream (only the read's time is), so they are placed back from the read at the program's
    /// recent pace (the median of its last frames read one at a time), and the first takes the rest
    /// of the time since the frame before: a steady program's frames keep their durations, and a
    /// stall followed by a quick frame stays one long frame and one short (spread evenly, a 150 ms
    /// stall and the 10 ms frame after it read together made two janky 80 ms frames). Without a
    /// pace yet, they are spread evenly. After an idle pause (or for the program's first), the first
    /// starts the clock again and the others of the read came right after it, at 0 ms.
    private mutating func endUpdates(_ count: Int, at time: UInt64, into frames: inout [Frame]) {
        guard let last = lastEnd, time > last, time - last < Self.idleNanoseconds, drawsScreen else {
            end(at: time, into: &frames)
            if drawsScreen { for _ in 1..<count { frames.append(Frame(end: time, milliseconds: 0)) } }
            return
        }
        burstLastByte = nil
        let span = time - last
        let step = count == 1 ? span : min(recentPace ?? span / UInt64(count), span / UInt64(count))
        var previous = last
        for index in 0..<count {
            let end = time - UInt64(count - 1 - index) * step
            frames.append(Frame(end: end, milliseconds: Double(end - previous) / 1e6))
            previous = end
        }
        if count == 1 { notePace(span) }
        lastEnd = time
    }

    /// The durations of the last 16 frames read one at a time (ns), for `recentPace`.
    private var paces = RingBuffer<UInt64>(capacity: 16, filler: 0)

    private mutating func notePace(_ nanoseconds: UInt64) { paces.append(nanoseconds) }

    /// The median of `paces`; nil before any.
    private var recentPace: UInt64? {
        guard paces.count > 0 else { return nil }
        return (0..<paces.count).map { paces[$0] }.sorted()[paces.count / 2]
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

/// Finds, across reads, the first control sequence of a program drawing a screen (see
/// `TerminalFrames`). A parser of ECMA-48's escape and CSI forms, reduced to what it needs: the
/// private marker `?`, the first parameter and the final byte.
struct ControlScanner {
    private enum State { case ground, escape, csi }
    private var state = State.ground
    private var isPrivate = false
    private var firstParameter = 0
    private var inFirstParameter = true

    /// Whether `bytes` hold (or end) such a sequence.
    mutating func findsDrawing<Bytes: Collection>(in bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        for byte in bytes {
            switch state {
            case .ground:
                if byte == 0x1B { state = .escape }
            case .escape:
                if byte == UInt8(ascii: "[") {
                    state = .csi; isPrivate = false; firstParameter = 0; inFirstParameter = true
                } else if byte == UInt8(ascii: "c") {
                    return true                                   // RIS: the screen reset
                } else {
                    state = byte == 0x1B ? .escape : .ground
                }
            case .csi:
                switch byte {
                case UInt8(ascii: "?") where firstParameter == 0 && inFirstParameter:
                    isPrivate = true
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if inFirstParameter && firstParameter < 100_000 { firstParameter = firstParameter * 10 + Int(byte - 0x30) }
                case UInt8(ascii: ";"), UInt8(ascii: ":"):
                    inFirstParameter = false
                case 0x20...0x2F, 0x3C...0x3F:                    // intermediates, other private markers
                    break
                case 0x40...0x7E:                                 // the final byte
                    state = .ground
                    if isPrivate {
                        if byte == UInt8(ascii: "h") && [1049, 47, 1047, 2026].contains(firstParameter) { return true }
                    } else if [UInt8(ascii: "H"), UInt8(ascii: "f"), UInt8(ascii: "d"), UInt8(ascii: "A"), UInt8(ascii: "J")].contains(byte) {
                        return true
                    }
                case 0x1B:
                    state = .escape
                default:                                          // a control character inside: cancelled
                    state = .ground
                }
            }
        }
        return false
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
