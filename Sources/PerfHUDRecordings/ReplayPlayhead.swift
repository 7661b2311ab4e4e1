import PerfHUDSupport
import PerfHUDPipeline

/// Where a replay is in its recording, how fast it goes and whether it is paused: the keys of
/// `perfhud replay` act on it, the frame timer moves it. Times are the recording's seconds.
public struct ReplayPlayhead: Equatable {
    public let start: Double
    public let end: Double
    public private(set) var position: Double
    public private(set) var speed: Double
    public private(set) var paused = false
    /// `+` and `-` double and halve the speed within these bounds.
    public static let slowest = 1.0 / 16, fastest = 64.0
    /// `←` / `→`, and with Shift.
    public static let step = 5.0, bigStep = 60.0

    public init(start: Double, end: Double, speed: Double = 1) {
        self.start = start
        self.end = max(start, end)
        position = start
        self.speed = min(Self.fastest, max(Self.slowest, speed))
    }

    public var atEnd: Bool { position >= end }

    /// Real time passed: the position moves by it times the speed, unless paused; it stops at the end.
    public mutating func advance(realSeconds: Double) {
        guard !paused, realSeconds > 0 else { return }
        position = min(end, position + realSeconds * speed)
    }

    public mutating func seek(by seconds: Double) { seek(to: position + seconds) }
    public mutating func seek(to time: Double) { position = min(end, max(start, time)) }
    public mutating func togglePause() { paused.toggle() }
    public mutating func faster() { speed = min(Self.fastest, speed * 2) }
    public mutating func slower() { speed = max(Self.slowest, speed / 2) }

    /// What the status line says: `replay ×2 0:01:23/0:05:00`, `paused …`, `end …`.
    public var description: String {
        let state = atEnd ? "end" : paused ? "paused" : "replay ×" + RowFormatter.number(speed, decimals: 4)
        return state + " " + DurationText.clock(seconds: position - start) + "/" + DurationText.clock(seconds: end - start)
    }
}

/// A key of `perfhud replay`, from the bytes the terminal sends.
public enum ReplayKey: Equatable {
    case pause, quit, faster, slower, start, end
    /// `d`: the details line shown or hidden.
    case details
    case seek(Double)

    /// The keys in `bytes`, in order; unknown bytes and sequences are skipped.
    public static func parse(_ bytes: [UInt8]) -> [ReplayKey] {
        var keys: [ReplayKey] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: " "): keys.append(.pause)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
            case UInt8(ascii: "+"), UInt8(ascii: "="): keys.append(.faster)
            case UInt8(ascii: "-"), UInt8(ascii: "_"): keys.append(.slower)
            case UInt8(ascii: "l"): keys.append(.seek(ReplayPlayhead.step))
            case UInt8(ascii: "h"): keys.append(.seek(-ReplayPlayhead.step))
            case UInt8(ascii: "g"): keys.append(.start)
            case UInt8(ascii: "G"): keys.append(.end)
            case UInt8(ascii: "d"): keys.append(.details)
            case 0x1B:
                // CSI or SS3: ESC [ params final, ESC O final. Arrows C/D (Shift: ";2"), Home H/1~, End F/4~.
                guard index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") else { continue }
                index += 1
                var parameters: [UInt8] = []
                while index < bytes.count, (0x30...0x3F).contains(bytes[index]) { parameters.append(bytes[index]); index += 1 }
                guard index < bytes.count else { break }
                let final = bytes[index]
                index += 1
                let shifted = parameters.elementsEqual(Array("1;2".utf8))
                let step = shifted ? ReplayPlayhead.bigStep : ReplayPlayhead.step
                switch final {
                case UInt8(ascii: "C"): keys.append(.seek(step))
                case UInt8(ascii: "D"): keys.append(.seek(-step))
                case UInt8(ascii: "H"): keys.append(.start)
                case UInt8(ascii: "F"): keys.append(.end)
                case UInt8(ascii: "~") where parameters == [UInt8(ascii: "1")] || parameters == [UInt8(ascii: "7")]: keys.append(.start)
                case UInt8(ascii: "~") where parameters == [UInt8(ascii: "4")] || parameters == [UInt8(ascii: "8")]: keys.append(.end)
                default: break
                }
            default: break
            }
        }
        return keys
    }
}
