@testable import PerfHUDRender
@testable import PerfHUDTerminal

/// A small VT100/xterm model for in-process screen tests: the bytes perfhud writes go in, the
/// screen a person would see comes out (cells, cursor, its visibility, the scroll region, the
/// alternate screen). It knows what perfhud and the programs in these tests use: printable text
/// (one cell a scalar), CR, LF, BS, DECSC/DECRC, CUP, VPA, CHA, CUU/CUD/CUF/CUB, ED, EL, DECSTBM,
/// SGR (ignored), DECTCEM, synchronized output (ignored), the alternate screen (1049), with
/// pending wrap at the right margin and scrolling inside the region, as xterm does.
/// The end-to-end tests check the same things against tmux and pyte.
final class VirtualTerminal: TerminalDevice {
    private(set) var rows: Int
    private(set) var columns: Int
    private var cells: [[Character]]
    private var savedMain: [[Character]]?
    private(set) var row = 0, column = 0
    private var pendingWrap = false
    private(set) var top = 0, bottom: Int
    private var saved = (row: 0, column: 0)
    private(set) var cursorVisible = true
    private(set) var alternateScreen = false
    private var parser: [UInt8] = []
    private(set) var inputMode: Terminal.InputMode?
    private(set) var crashRestore = ""
    var isClosed = false
    /// Every byte written, for assertions on the stream itself.
    private(set) var written: [UInt8] = []

    init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
        bottom = rows - 1
        cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
    }

    // MARK: TerminalDevice

    func size() -> TerminalSize? { TerminalSize(rows: rows, columns: columns) }
    func enter(_ mode: Terminal.InputMode) { inputMode = mode }
    func restoreInput() { inputMode = nil }
    func installCrashRestore(restoreSequence: String) { crashRestore = restoreSequence }
    func updateCrashRestore(restoreSequence: String) { crashRestore = restoreSequence }
    func write(_ bytes: [UInt8]) {
        written += bytes
        feed(bytes)
    }

    /// A window resize: the contents stay where they fit, as in xterm.
    func resize(rows: Int, columns: Int) {
        cells = (0..<rows).map { r in (0..<columns).map { c in r < self.rows && c < self.columns ? cells[r][c] : " " } }
        self.rows = rows
        self.columns = columns
        top = 0; bottom = rows - 1
        row = min(row, rows - 1); column = min(column, columns - 1)
    }

    // MARK: reading the screen

    /// Row `index` (0-based) with trailing spaces removed.
    func line(_ index: Int) -> String {
        var text = String(cells[index])
        while text.last == " " { text.removeLast() }
        return text
    }
    var lines: [String] { (0..<rows).map(line) }
    var text: String { lines.joined(separator: "\n") }

    // MARK: the parser

    func feed(_ bytes: [UInt8]) {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var pending: [UInt8] = []
        while let byte = iterator.next() {
            if !parser.isEmpty || byte == 0x1B {
                parser.append(byte)
                if let done = finishSequence() { perform(done); parser.removeAll() }
                continue
            }
            switch byte {
            case 0x0D: column = 0; pendingWrap = false
            case 0x0A: lineFeed()
            case 0x08: column = max(0, column - 1); pendingWrap = false
            case 0x07, 0x00: break
            default:
                pending.append(byte)
                var one = pending.makeIterator()
                switch decoder.decode(&one) {
                case .scalarValue(let scalar): put(Character(scalar)); pending.removeAll()
                case .emptyInput: break
                case .error: if pending.count >= 4 { put("\u{FFFD}"); pending.removeAll() }
                }
            }
        }
    }

    /// The complete escape sequence in `parser`, or nil while it goes on.
    private func finishSequence() -> [UInt8]? {
        guard parser.count >= 2 else { return nil }
        switch parser[1] {
        case UInt8(ascii: "["):
            guard parser.count >= 3, let last = parser.last, (0x40...0x7E).contains(last) else { return nil }
            return parser
        case UInt8(ascii: "]"):   // OSC: until BEL or ST
            if parser.last == 0x07 || (parser.count >= 2 && parser.suffix(2) == [0x1B, 0x5C]) { return [] }
            return nil
        default:
            return parser
        }
    }

    private func perform(_ sequence: [UInt8]) {
        guard sequence.count >= 2 else { return }
        if sequence[1] == UInt8(ascii: "7") { saved = (row, column); return }
        if sequence[1] == UInt8(ascii: "8") { row = saved.row; column = saved.column; pendingWrap = false; return }
        guard sequence[1] == UInt8(ascii: "[") else { return }
        let body = sequence[2..<(sequence.count - 1)]
        let final = sequence.last!
        let isPrivate = body.first == UInt8(ascii: "?")
        let numbers = String(decoding: isPrivate ? body.dropFirst() : body, as: UTF8.self)
            .split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        func parameter(_ index: Int, _ fallback: Int) -> Int {
            index < numbers.count ? (numbers[index].map { $0 == 0 ? fallback : $0 } ?? fallback) : fallback
        }
        pendingWrap = false
        if isPrivate {
            for mode in numbers.compactMap({ $0 }) {
                let on = final == UInt8(ascii: "h")
                if mode == 25 { cursorVisible = on }
                if mode == 1049 && on != alternateScreen {
                    alternateScreen = on
                    if on { savedMain = cells; cells = blank(); saved = (row, column) }
                    else if let main = savedMain { cells = main; savedMain = nil; row = saved.row; column = saved.column }
                }
            }
            return
        }
        switch final {
        case UInt8(ascii: "H"), UInt8(ascii: "f"):
            row = min(rows, parameter(0, 1)) - 1; column = min(columns, parameter(1, 1)) - 1
        case UInt8(ascii: "d"): row = min(rows, parameter(0, 1)) - 1
        case UInt8(ascii: "G"): column = min(columns, parameter(0, 1)) - 1
        case UInt8(ascii: "A"): row = max(row >= top ? top : 0, row - parameter(0, 1))
        case UInt8(ascii: "B"): row = min(row <= bottom ? bottom : rows - 1, row + parameter(0, 1))
        case UInt8(ascii: "C"): column = min(columns - 1, column + parameter(0, 1))
        case UInt8(ascii: "D"): column = max(0, column - parameter(0, 1))
        case UInt8(ascii: "J"):
            let mode = numbers.first.flatMap { $0 } ?? 0
            if mode == 2 || mode == 3 { cells = blank() }
            else if mode == 0 {
                for c in column..<columns { cells[row][c] = " " }
                for r in (row + 1)..<max(row + 1, rows) { cells[r] = Array(repeating: " ", count: columns) }
            }
        case UInt8(ascii: "K"):
            let mode = numbers.first.flatMap { $0 } ?? 0
            let range = mode == 2 ? 0..<columns : mode == 1 ? 0..<(column + 1) : column..<columns
            for c in range { cells[row][c] = " " }
        case UInt8(ascii: "M"):   // DL: inside the scroll region only; blank lines come in at its bottom
            guard row >= top && row <= bottom else { break }
            for _ in 0..<min(parameter(0, 1), bottom - row + 1) {
                cells.remove(at: row)
                cells.insert(Array(repeating: " ", count: columns), at: bottom)
            }
            column = 0
        case UInt8(ascii: "r"):
            top = parameter(0, 1) - 1; bottom = min(rows, parameter(1, rows)) - 1
            if top >= bottom { top = 0; bottom = rows - 1 }
            row = 0; column = 0
        default: break   // SGR and the rest: no effect on the cells
        }
    }

    private func blank() -> [[Character]] { Array(repeating: Array(repeating: " ", count: columns), count: rows) }

    private func put(_ character: Character) {
        if pendingWrap { column = 0; lineFeed() }
        cells[row][column] = character
        if column == columns - 1 { pendingWrap = true } else { column += 1 }
    }

    private func lineFeed() {
        pendingWrap = false
        if row == bottom {
            cells.remove(at: top)
            cells.insert(Array(repeating: " ", count: columns), at: bottom)
        } else if row < rows - 1 {
            row += 1
        }
    }
}
