/// Tells the keys a user typed from the terminal's replies in what arrives on perfhud's standard
/// input during `run`, so that key-to-screen latency is timed from keys only. Everything is still
/// forwarded to the program as it arrives (vim needs its replies): this only counts.
///
/// Replies (never keys), as terminals send them to programs that asked:
/// - CSI with a private marker `?`, `>` or `=`: device attributes (DA1 `CSI ? … c`, DA2
///   `CSI > … c`), DEC mode reports (DECRPM `CSI ? Pn ; Ps $ y`), the extended cursor position
///   (`CSI ? row ; col R`), kitty keyboard flags (`CSI ? flags u`), XTQMODKEYS (`CSI > … m`),
///   XTSMGRAPHICS (`CSI ? … S`).
/// - CSI ending in `c` (device attributes), `n` (status `CSI 0 n`), `t` (window reports such as
///   `CSI 8 ; rows ; cols t`), `x` (DECREPTPARM) or `$ y` (ANSI mode report `CSI Pn ; Ps $ y`).
/// - A cursor position report `CSI row ; col R` while the program has asked for one (`CSI 6 n`)
///   and not had it: otherwise the same bytes are F3 with a modifier (`CSI 1 ; 2 R`), a key.
/// - Focus in and out (`CSI I`, `CSI O`) while the program has focus reporting on
///   (`CSI ? 1004 h`): switching windows is not typing.
/// - OSC (`ESC ]` … BEL or ST: colours `OSC 10/11 ; rgb:… ST`, palette `OSC 4`, clipboard
///   `OSC 52`), DCS (`ESC P` … ST: XTVERSION `DCS > | … ST`, XTGETTCAP `DCS 1 + r … ST`,
///   DECRQSS `DCS 1 $ r … ST`), APC (`ESC _` … ST: kitty graphics), PM and SOS. No key is sent
///   as any of them.
///
/// Keys, one key press each: a character (all of its UTF-8 bytes), a control character (Enter,
/// Ctrl-C), Escape, Alt and a key (`ESC x`), CSI and SS3 keys (arrows `CSI A` / `SS3 A`, function
/// keys `CSI 15 ~` / `SS3 P`, modified keys `CSI 1 ; 5 C`, kitty's `CSI 97 ; 5 u`, where a
/// key release `CSI 97 ; 1 : 3 u` is not a press), mouse reports (SGR `CSI < b ; x ; y M/m`,
/// X10 `CSI M b x y`, urxvt `CSI b ; x ; y M`) and a bracketed paste (`CSI 200 ~` … `CSI 201 ~`)
/// as one, whatever it holds. Any other CSI sequence counts as a key: it is user input until
/// known to be a reply.
///
/// Across reads: a sequence may be split between two reads; it is finished by the next read if
/// that comes within `continuationNanoseconds` (a terminal writes a reply, and a key, at once),
/// and abandoned otherwise. A read that ends in `ESC`, or `ESC` and an introducer (`[`, `O`, `]`,
/// `P`, …), may hold a whole key (Escape, Alt-[): it counts as a key at once, so that its latency
/// starts then, and is withdrawn if the rest of a reply follows. Nothing is buffered but the
/// first `maximumParameterBytes` of a CSI sequence; a CSI or SS3 sequence that reaches
/// `maximumSequenceBytes` unfinished, or a string `maximumStringBytes`, is given up, as is one a
/// control character interrupts (that character is a key again).
public struct TypedKeys {
    /// What one read held: how many keys (each sent at the time of the read), and the time of a
    /// key counted by an earlier read that turned out to be the start of a reply.
    public struct Reading: Equatable {
        public var keys = 0
        public var withdrawn: UInt64?
        public init(keys: Int = 0, withdrawn: UInt64? = nil) {
            self.keys = keys
            self.withdrawn = withdrawn
        }
    }

    /// As vim's 'ttimeoutlen': the most time between the pieces of one sequence.
    public static let continuationNanoseconds: UInt64 = 100_000_000
    package static let maximumSequenceBytes = 64
    package static let maximumStringBytes = 65_536
    static let maximumParameterBytes = 16

    private enum State: Equatable {
        case ground
        case escape
        case controlSequence
        case singleShift
        /// OSC, DCS, APC, PM or SOS content, up to BEL or ST (`ESC \`).
        case string
        case stringEscape
        /// The three bytes (button, column, row) after an X10 mouse report's `CSI M`.
        case mouseCoordinates(remaining: Int)
        /// Inside a bracketed paste, `matched` bytes of its end marker seen.
        case paste(matched: Int)
    }

    private var state = State.ground
    /// Bytes of the open sequence so far, its introducer and `ESC` included.
    private var length = 0
    private var marker: UInt8?
    private var parameters: [UInt8] = []
    private var parametersTruncated = false
    private var intermediate: UInt8?
    /// When a read that ended in a possible whole key (see above) counted it.
    private var provisional: UInt64?
    private var lastRead: UInt64 = 0
    private var requests = ProgramRequests()
    private static let pasteEnd: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]    // ESC [ 2 0 1 ~

    public init() {}

    /// What the program wrote to its terminal: the queries whose replies look like keys (cursor
    /// position) and whether focus reporting is on.
    public mutating func programWrote<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        requests.scan(bytes)
    }

    /// Bytes that arrived on standard input at `time`.
    public mutating func read<Bytes: Sequence>(_ bytes: Bytes, at time: UInt64) -> Reading where Bytes.Element == UInt8 {
        var reading = Reading()
        if state != .ground, time &- lastRead > Self.continuationNanoseconds { giveUp() }
        for byte in bytes { step(byte, into: &reading) }
        lastRead = time
        if provisional == nil, length <= 2, [.escape, .controlSequence, .singleShift, .string].contains(state) {
            provisional = time
            reading.keys += 1
        }
        return reading
    }

    private mutating func step(_ byte: UInt8, into reading: inout Reading) {
        switch state {
        case .ground:
            if byte == 0x1B { begin() }
            else if byte & 0xC0 != 0x80 { reading.keys += 1 }   // not a UTF-8 continuation byte
        case .escape:
            length += 1
            switch byte {
            case UInt8(ascii: "["): state = .controlSequence
            case UInt8(ascii: "O"): state = .singleShift
            case UInt8(ascii: "]"), UInt8(ascii: "P"), UInt8(ascii: "_"), UInt8(ascii: "^"), UInt8(ascii: "X"): state = .string
            case 0x1B: finish(isKey: true, &reading); begin()     // Escape, then another sequence
            default:
                if provisional != nil {                            // Escape in a read of its own, then another key
                    giveUp()
                    step(byte, into: &reading)
                } else {
                    finish(isKey: true, &reading)                  // Alt and a key, written at once
                }
            }
        case .controlSequence:
            length += 1
            switch byte {
            case 0x30...0x3F:
                if length == 3, byte >= 0x3C { marker = byte }
                else if parameters.count < Self.maximumParameterBytes { parameters.append(byte) }
                else { parametersTruncated = true }
            case 0x20...0x2F: intermediate = byte
            case 0x40...0x7E: finishControlSequence(final: byte, &reading)
            default: interrupted(by: byte, &reading)
            }
            if state == .controlSequence, length >= Self.maximumSequenceBytes { giveUp() }
        case .singleShift:
            length += 1
            switch byte {
            case 0x30...0x3F: if length >= Self.maximumSequenceBytes { giveUp() }   // a modifier (`SS3 5 P`)
            case 0x40...0x7E: finish(isKey: true, &reading)
            default: interrupted(by: byte, &reading)
            }
        case .string:
            length += 1
            switch byte {
            case 0x07: finish(isKey: false, &reading)
            case 0x1B: state = .stringEscape
            case 0x00..<0x20: interrupted(by: byte, &reading)    // no reply holds a control character
            default: if length >= Self.maximumStringBytes { giveUp() }
            }
        case .stringEscape:
            finish(isKey: false, &reading)
            if byte != UInt8(ascii: "\\") {                        // as xterm: the ESC ends the string and starts a sequence
                begin()
                step(byte, into: &reading)
            }
        case .mouseCoordinates(let remaining):
            state = remaining > 1 ? .mouseCoordinates(remaining: remaining - 1) : .ground
        case .paste(let matched):
            if byte == Self.pasteEnd[matched] {
                state = matched + 1 == Self.pasteEnd.count ? .ground : .paste(matched: matched + 1)
            } else {
                state = .paste(matched: byte == 0x1B ? 1 : 0)
            }
        }
    }

    private mutating func finishControlSequence(final: UInt8, _ reading: inout Reading) {
        let isKey: Bool
        switch final {
        case _ where marker == UInt8(ascii: "<"): isKey = !isKeyRelease               // SGR mouse
        case _ where marker != nil: isKey = false
        case UInt8(ascii: "y") where intermediate == UInt8(ascii: "$"): isKey = false
        case UInt8(ascii: "c"), UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "x"): isKey = false
        case UInt8(ascii: "R") where isPositionReport: isKey = !requests.takeCursorPositionReport()
        case UInt8(ascii: "I") where parameters.isEmpty, UInt8(ascii: "O") where parameters.isEmpty:
            isKey = !requests.focusReporting
        case UInt8(ascii: "~") where parameters == Array("200".utf8):
            finish(isKey: true, &reading)
            state = .paste(matched: 0)
            return
        case UInt8(ascii: "~") where parameters == Array("201".utf8): isKey = false    // its paste was counted
        case UInt8(ascii: "M") where parameters.isEmpty && intermediate == nil:
            finish(isKey: true, &reading)
            state = .mouseCoordinates(remaining: 3)
            return
        default: isKey = !isKeyRelease
        }
        finish(isKey: isKey, &reading)
    }

    /// `row ; column`: two numbers.
    private var isPositionReport: Bool {
        guard !parametersTruncated else { return false }
        let fields = parameters.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        return fields.count == 2 && fields.allSatisfy { !$0.isEmpty && $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    /// Kitty's keyboard protocol reports a release as event type 3: `CSI code ; modifiers : 3 u`.
    private var isKeyRelease: Bool {
        let fields = parameters.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard fields.count >= 2 else { return false }
        let subfields = fields[1].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        return subfields.count >= 2 && Array(subfields[1]) == [UInt8(ascii: "3")]
    }

    private mutating func begin() {
        state = .escape
        length = 1
        marker = nil
        parameters.removeAll(keepingCapacity: true)
        parametersTruncated = false
        intermediate = nil
    }

    /// The open sequence ended: a key, or not (a reply, or the end of a paste).
    private mutating func finish(isKey: Bool, _ reading: inout Reading) {
        if let counted = provisional {
            if !isKey { reading.withdrawn = counted }
            provisional = nil
        } else if isKey {
            reading.keys += 1
        }
        state = .ground
        length = 0
    }

    /// Neither key nor reply: dropped. A key it was counted as in the meantime stands.
    private mutating func giveUp() {
        provisional = nil
        state = .ground
        length = 0
    }

    private mutating func interrupted(by byte: UInt8, _ reading: inout Reading) {
        giveUp()
        step(byte, into: &reading)
    }
}

/// The little of what a program writes that tells how to read what comes back: cursor position
/// requests (`CSI 6 n`, `CSI ? 6 n`) not yet answered, and focus reporting (`CSI ? 1004 h/l`).
struct ProgramRequests {
    private(set) var focusReporting = false
    private var cursorPositionRequests = 0
    private enum State { case ground, escape, controlSequence }
    private var state = State.ground
    private var marker: UInt8?
    private var parameters: [UInt8] = []
    private static let maximumParameterBytes = 64
    private static let maximumOutstandingRequests = 16

    /// A cursor position report arrived: true if one was asked for.
    mutating func takeCursorPositionReport() -> Bool {
        guard cursorPositionRequests > 0 else { return false }
        cursorPositionRequests -= 1
        return true
    }

    package mutating func scan<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes {
            switch state {
            case .ground:
                if byte == 0x1B { state = .escape }
            case .escape:
                if byte == UInt8(ascii: "[") {
                    state = .controlSequence
                    marker = nil
                    parameters.removeAll(keepingCapacity: true)
                } else if byte != 0x1B {
                    state = .ground
                }
            case .controlSequence:
                switch byte {
                case 0x30...0x3F:
                    if parameters.isEmpty, marker == nil, byte >= 0x3C { marker = byte }
                    else if parameters.count < Self.maximumParameterBytes { parameters.append(byte) }
                case 0x20...0x2F: break
                case 0x40...0x7E:
                    finished(final: byte)
                    state = .ground
                case 0x1B: state = .escape
                default: break                       // a control character inside is carried out, not the end
                }
            }
        }
    }

    private mutating func finished(final: UInt8) {
        switch final {
        case UInt8(ascii: "n") where parameters == [UInt8(ascii: "6")] && (marker == nil || marker == UInt8(ascii: "?")):
            cursorPositionRequests = min(cursorPositionRequests + 1, Self.maximumOutstandingRequests)
        case UInt8(ascii: "h"), UInt8(ascii: "l"):
            if marker == UInt8(ascii: "?"), parameters.split(separator: UInt8(ascii: ";")).contains(where: { Array($0) == Array("1004".utf8) }) {
                focusReporting = final == UInt8(ascii: "h")
            }
        default: break
        }
    }
}
