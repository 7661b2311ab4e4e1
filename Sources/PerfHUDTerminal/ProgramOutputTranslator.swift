/// Rewrites what a program writes to its pseudo-terminal so that it stays inside its own area of
/// the screen, below (or above) the HUD.
///
/// The program believes the screen is `programRows` high and starts at row 1. A VT500 parser
/// (Paul Williams' state machine, reduced to what matters here) finds the sequences that address
/// rows absolutely and shifts them by `offset`: CUP/HVP (`H`, `f`), VPA (`d`) and the scroll region
/// (DECSTBM `r`). Sequences that may have painted over the HUD (erase in display, alternate screen,
/// reset) are passed on and reported, so the HUD is repainted in the same write.
///
/// Written by hand: no Swift package parses VT streams, and a full terminal emulator in between
/// (tmux's approach) would cost far more per byte than rewriting a handful of sequences.
public struct ProgramOutputTranslator {
    public struct Effects: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The HUD may have been erased or overdrawn: repaint it.
        public static let hudDamaged = Effects(rawValue: 1)
        /// The program reset the terminal (RIS, DECSTR): set the scroll region again.
        public static let terminalReset = Effects(rawValue: 2)
        /// The program asked whether synchronized output is supported (DECRQM `CSI ? 2026 $ p`):
        /// held back from the terminal, to be answered by perfhud, which draws every frame in it.
        public static let synchronizedOutputQueried = Effects(rawValue: 4)
    }

    private enum State { case ground, escape, escapeIntermediate, controlSequence, string, stringEscape }

    public var offset: Int
    public var programRows: Int
    public private(set) var cursorVisible = true
    public private(set) var alternateScreen = false
    private var originMode = false
    private var state = State.ground
    private var pending: [UInt8] = []
    private var utf8Remaining = 0

    public init(offset: Int, programRows: Int) {
        self.offset = offset
        self.programRows = programRows
    }

    /// True between sequences and characters: only then may HUD bytes be written in between.
    public var isAtBoundary: Bool { state == .ground && utf8Remaining == 0 }

    /// Translates `input`, appending the result to `output`.
    public mutating func translate<Bytes: Sequence>(_ input: Bytes, into output: inout [UInt8]) -> Effects
    where Bytes.Element == UInt8 {
        var effects: Effects = []
        for byte in input {
            switch state {
            case .ground:
                if byte == 0x1B { state = .escape; pending = [byte]; continue }
                if byte >= 0xC0 { utf8Remaining = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : 1 }
                else if byte >= 0x80 && byte < 0xC0 { utf8Remaining = max(0, utf8Remaining - 1) }
                else { utf8Remaining = 0 }
                output.append(byte)
            case .escape:
                pending.append(byte)
                switch byte {
                case UInt8(ascii: "["): state = .controlSequence
                case UInt8(ascii: "]"), UInt8(ascii: "P"), UInt8(ascii: "X"), UInt8(ascii: "^"), UInt8(ascii: "_"):
                    output += pending; pending = []; state = .string
                case 0x20...0x2F: state = .escapeIntermediate
                case 0x1B: pending = [byte]   // ESC ESC: the first is dropped, as terminals do
                case 0x18, 0x1A: output += pending; pending = []; state = .ground
                default:
                    output += pending; pending = []; state = .ground
                    if byte == UInt8(ascii: "c") {          // RIS: full reset
                        effects.formUnion([.hudDamaged, .terminalReset]); cursorVisible = true
                        alternateScreen = false; originMode = false
                    }
                }
            case .escapeIntermediate:
                pending.append(byte)
                if byte >= 0x30 && byte <= 0x7E { output += pending; pending = []; state = .ground }
            case .controlSequence:
                if byte == 0x18 || byte == 0x1A { output += pending; output.append(byte); pending = []; state = .ground; continue }
                if byte < 0x20 { output.append(byte); continue }     // C0 inside CSI is executed
                pending.append(byte)
                if byte >= 0x40 && byte <= 0x7E {
                    effects.formUnion(finishControlSequence(into: &output))
                    pending = []
                    state = .ground
                }
            case .string:
                output.append(byte)
                if byte == 0x07 { state = .ground } else if byte == 0x1B { state = .stringEscape }
            case .stringEscape:
                output.append(byte)
                state = byte == UInt8(ascii: "\\") ? .ground : (byte == 0x1B ? .stringEscape : .string)
            }
        }
        return effects
    }

    /// Handles a complete `ESC [ params intermediates final` held in `pending`.
    private mutating func finishControlSequence(into output: inout [UInt8]) -> Effects {
        let final = pending[pending.count - 1]
        let body = pending[2..<(pending.count - 1)]
        let isPrivate = body.first.map { $0 >= 0x3C && $0 <= 0x3F } ?? false
        let hasIntermediate = body.contains { $0 >= 0x20 && $0 <= 0x2F }
        if hasIntermediate {
            if isPrivate, final == UInt8(ascii: "p"), Array(body) == Array("?2026$".utf8) { return .synchronizedOutputQueried }
            output += pending
            // DECSTR (CSI ! p) resets the scroll region.
            return final == UInt8(ascii: "p") && body.contains(UInt8(ascii: "!")) ? [.terminalReset, .hudDamaged] : []
        }
        if isPrivate {
            output += pending
            guard body.first == UInt8(ascii: "?"), final == UInt8(ascii: "h") || final == UInt8(ascii: "l") else { return [] }
            let on = final == UInt8(ascii: "h")
            var effects: Effects = []
            for mode in Self.parameters(body.dropFirst()) {
                switch mode {
                case 25: cursorVisible = on
                case 6: originMode = on
                case 47, 1047, 1049: alternateScreen = on; effects.insert(.hudDamaged)
                default: break
                }
            }
            return effects
        }
        let parameters = Self.parameters(body)
        func parameter(_ index: Int, default value: Int) -> Int {
            index < parameters.count && parameters[index] > 0 ? parameters[index] : value
        }
        func row(_ value: Int) -> Int { min(max(1, value), programRows) + offset }
        switch final {
        case UInt8(ascii: "H"), UInt8(ascii: "f"):
            if originMode { output += pending; return [] }
            output += Array("\u{1B}[\(row(parameter(0, default: 1)));\(parameter(1, default: 1))H".utf8)
        case UInt8(ascii: "d"):
            if originMode { output += pending; return [] }
            output += Array("\u{1B}[\(row(parameter(0, default: 1)))d".utf8)
        case UInt8(ascii: "r"):
            let top = row(parameter(0, default: 1))
            let bottom = row(parameter(1, default: programRows))
            guard top < bottom else { return [] }   // a terminal ignores an empty region too
            output += Array("\u{1B}[\(top);\(bottom)r".utf8)
            // DECSTBM homes the cursor to the screen's row 1: bring it to the program's row 1.
            if !originMode { output += Array("\u{1B}[\(offset + 1);1H".utf8) }
        case UInt8(ascii: "J"):
            output += pending
            return .hudDamaged
        default:
            output += pending
        }
        return []
    }

    /// Numeric parameters `1;2;;4` → [1, 2, 0, 4]; sub-parameters after `:` are ignored.
    package static func parameters<Bytes: Collection>(_ body: Bytes) -> [Int] where Bytes.Element == UInt8 {
        var result: [Int] = []
        var value = 0
        var skipping = false
        for byte in body {
            if byte == UInt8(ascii: ";") { result.append(value); value = 0; skipping = false }
            else if byte == UInt8(ascii: ":") { skipping = true }
            else if !skipping && byte >= 0x30 && byte <= 0x39 { value = min(value * 10 + Int(byte - 0x30), 99_999) }
        }
        result.append(value)
        return result
    }

    /// Shifts cursor position reports (`ESC [ row ; col R`) from the terminal back into the
    /// program's coordinates, so a program that asks where its cursor is gets its own answer.
    public func translateInput(_ input: [UInt8]) -> [UInt8] {
        guard offset > 0, input.contains(UInt8(ascii: "R")) else { return input }
        var output: [UInt8] = []
        var index = 0
        while index < input.count {
            if input[index] == 0x1B, index + 1 < input.count, input[index + 1] == UInt8(ascii: "[") {
                var cursor = index + 2
                var numbers = [0]
                while cursor < input.count, (input[cursor] >= 0x30 && input[cursor] <= 0x39) || input[cursor] == UInt8(ascii: ";") {
                    if input[cursor] == UInt8(ascii: ";") { numbers.append(0) } else { numbers[numbers.count - 1] = numbers[numbers.count - 1] * 10 + Int(input[cursor] - 0x30) }
                    cursor += 1
                }
                if cursor < input.count, input[cursor] == UInt8(ascii: "R"), numbers.count == 2 {
                    output += Array("\u{1B}[\(max(1, numbers[0] - offset));\(numbers[1])R".utf8)
                    index = cursor + 1
                    continue
                }
            }
            output.append(input[index])
            index += 1
        }
        return output
    }
}
