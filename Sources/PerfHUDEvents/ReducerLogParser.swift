import PerfHUDSupport

/// Reads reducer logs as text and finds the actions in them:
///
/// - The Composable Architecture's `_printChanges()` with the `.actionLabels` printer, one line:
///   `received action: DebugTests.Action.screenA(.row(index:, action: .textChanged(query:)))`
/// - `_printChanges()` with the default `.customDump` printer, where the action follows on the
///   next, indented line(s), then a state diff or `(No state changes)`:
///
///       received action:
///         Feature.Action.slider(
///           .changed(0.5)
///         )
///         (No state changes)
///
/// - JSON lines: `{"action": "Feature.Action.buttonTapped", …}`
///
/// Every action is reduced to its label, as `.actionLabels` prints it: cases kept at every depth,
/// other payloads dropped (`.changed(0.5)` → `.changed`, `.moved(x: 1, y: 2)` → `.moved(x:, y:)`);
/// see `label(fromDump:)`. Incremental: feed it bytes as they come.
public struct ReducerLogParser {
    private var partial: [UInt8] = []
    private var dump: [String]? = nil      // lines of a multi-line action being collected
    private var dumpIndent = 0
    private var dumpBytes = 0
    private var awaitingDump = false
    public static let maxLineBytes = 65536
    /// Actions that could not be read: a malformed case path, a dump too long or too deep.
    public private(set) var malformed = 0

    public init() {}

    /// The labels of the actions completed by `bytes`.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        var labels: [String] = []
        for byte in bytes {
            if byte == 0x0A {
                if let label = line(String(decoding: partial, as: UTF8.self)) { labels.append(label) }
                partial.removeAll(keepingCapacity: true)
            } else if partial.count < Self.maxLineBytes {
                partial.append(byte)
            }
        }
        return labels
    }

    private mutating func line(_ raw: String) -> String? {
        let text = Self.stripEscapes(raw)
        let indent = text.prefix(while: { $0 == " " }).count
        let content = text.dropFirst(indent).trimmingTrailingSpaces

        if var collected = dump {
            collected.append(String(content))
            dumpBytes += content.utf8.count
            if indent <= dumpIndent && content.hasPrefix(")") {
                dump = nil
                return counted(Self.label(fromDump: collected.joined()))
            }
            if collected.count < 512 && dumpBytes <= Self.maximumDumpBytes {
                dump = collected
            } else {
                dump = nil          // too long: dropped; the next "received action:" starts afresh
                malformed += 1
            }
            return nil
        }
        if awaitingDump {
            awaitingDump = false
            guard indent > 0, !content.isEmpty else { return nil }
            if content.hasSuffix("(") {
                dump = [String(content)]
                dumpBytes = content.utf8.count
                dumpIndent = indent
                return nil
            }
            return counted(Self.label(fromDump: String(content)))
        }
        if let end = content.endOfFirst("received action:") {
            let rest = content[end...].trimmingLeadingSpaces
            if rest.isEmpty { awaitingDump = true; return nil }
            return counted(Self.label(fromDump: String(rest)))
        }
        if content.hasPrefix("{") { return Self.jsonAction(String(content)) }
        return nil
    }

    /// `label`, counting it as malformed when there is none.
    private mutating func counted(_ label: String?) -> String? {
        if label == nil { malformed += 1 }
        return label
    }

    /// How deeply case paths may nest (`.a(.b(.c(…)))`); deeper is malformed. TCA's own tests nest
    /// four or five levels; 32 leaves room while keeping the work per dump bounded.
    public static let maximumDepth = 32
    /// The most a multi-line dump may hold, joined; a longer one is malformed and dropped, and
    /// the parser looks for the next `received action:` (a dump that never closes cannot grow
    /// memory without bound).
    public static let maximumDumpBytes = 65536

    /// The label of an action as TCA's `.actionLabels` printer (`debugCaseOutput`) writes it, from
    /// its `.customDump` text or from a label: nil when the text is not a well-formed case path
    /// (unbalanced, a stray `]`, nested deeper than `maximumDepth`).
    ///
    /// TCA's rules, which both forms of one action must agree on (Tests/Fixtures/tca):
    /// - every enum case is kept, at every depth: `.screenA(.row(index:, action: .tapped))`;
    /// - a payload that is not a case is reduced to its label, `label:`, or `_:` when unlabelled
    ///   among several: `.moved(x:, y:)`, `.action2(_:, _:, _:)`, `.pair(_: .a, _:)`;
    /// - a sole unlabelled payload that is not a case leaves no parentheses at all:
    ///   `.changed(0.5)` → `.changed`, `.saved(Item(…))` → `.saved` (TCA prints no `(_:)`, since
    ///   Swift reflects such a payload as the value itself, not as a one-element tuple);
    /// - TCA's `BindingAction` is a struct that dumps as `.set(\State.text, "x")`: a value, not a case.
    ///
    /// The rules that keep it bounded whatever the input: every step of every loop consumes at
    /// least one character or stops; nesting is counted; the label is appended to one buffer. The
    /// one edit not at its end, the `_: ` put before an unlabelled case once a second argument
    /// shows it was not alone, moves only that argument's label: the work stays linear in the
    /// text times `maximumDepth`.
    public static func label(fromDump text: String) -> String? {
        let scalars = Array(text.filter { $0 != "\n" })
        guard !scalars.isEmpty else { return nil }
        var index = 0
        var output = ""
        guard parseCase(scalars, &index, into: &output, depth: 0), !output.isEmpty else { return nil }
        return output
    }

    /// `name` or `name(arguments)`, from `index`, appended to `output`. False: malformed.
    private static func parseCase(_ text: [Character], _ index: inout Int, into output: inout String, depth: Int) -> Bool {
        guard depth < maximumDepth else { return false }
        let nameStart = index
        while index < text.count, text[index] != "(", text[index] != ",", text[index] != ")" { index += 1 }
        var nameEnd = index
        var first = nameStart
        while first < nameEnd, text[first] == " " || text[first] == "\t" { first += 1 }
        while nameEnd > first, text[nameEnd - 1] == " " || text[nameEnd - 1] == "\t" { nameEnd -= 1 }
        output.append(contentsOf: text[first..<nameEnd])
        guard index < text.count, text[index] == "(" else { return true }
        index += 1   // past "("
        output.append("(")
        var arguments = 0
        // The first argument when it has no label: written bare until a second argument shows
        // whether TCA would call it `_:` (one of several) or leave it alone (the only payload).
        var firstUnlabelled = false
        var firstIsCase = false
        var firstMark = 0
        while true {
            while index < text.count, text[index] == " " || text[index] == "\t" { index += 1 }
            guard index < text.count else { return false }        // "(" never closed
            if text[index] == ")" { index += 1; break }
            let before = index
            if arguments == 1 && firstUnlabelled {
                if firstIsCase {
                    output.insert(contentsOf: "_: ", at: output.utf8.index(output.startIndex, offsetBy: firstMark))
                } else {
                    output.append("_:")
                }
            }
            if arguments > 0 { output.append(", ") }
            let label = argumentLabel(text, &index)
            while index < text.count, text[index] == " " || text[index] == "\t" { index += 1 }
            let isCase = index < text.count && text[index] == "." && !isBindingAction(text, index)
            if let label {
                output.append(label)
                output.append(isCase ? ": " : ":")
            } else if arguments > 0 {
                output.append(isCase ? "_: " : "_:")
            } else {
                firstUnlabelled = true
                firstIsCase = isCase
                firstMark = output.utf8.count
            }
            if isCase {
                guard parseCase(text, &index, into: &output, depth: depth + 1) else { return false }   // a nested case path
            } else {
                skipValue(text, &index)
            }
            arguments += 1
            while index < text.count, text[index] == " " || text[index] == "\t" { index += 1 }
            if index < text.count, text[index] == "," { index += 1 }
            // Nothing consumed (a stray "]" where a value should be): malformed, not a loop.
            guard index > before else { return false }
        }
        if arguments == 1 && firstUnlabelled && !firstIsCase {
            output.removeLast()      // the "(": a sole payload that is not a case leaves nothing
            return true
        }
        output.append(")")
        return true
    }

    /// The label before a value (`x` of `x: 1`, `_` of `_:`), consumed with its colon; nil (and
    /// nothing consumed) when the value has none.
    private static func argumentLabel(_ text: [Character], _ index: inout Int) -> String? {
        var probe = index
        while probe < text.count, text[probe].isLetter || text[probe].isNumber || text[probe] == "_" { probe += 1 }
        guard probe > index, probe < text.count, text[probe] == ":", !text[index].isNumber else { return nil }
        let label = String(text[index..<probe])
        index = probe + 1
        return label
    }

    /// TCA's `BindingAction` dumps as `.set(\State.text, "x")` (or, where a key path has no
    /// description, `.set(WritableKeyPath<State, String>, "x")`, as TCA 0.50's DebugTests show):
    /// a struct, which `.actionLabels` prints as nothing (`Form.Action.binding`), though its dump
    /// looks like a case.
    private static func isBindingAction(_ text: [Character], _ index: Int) -> Bool {
        let prefix: [Character] = [".", "s", "e", "t", "("]
        guard index + prefix.count < text.count, Array(text[index..<(index + prefix.count)]) == prefix else { return false }
        var probe = index + prefix.count
        while probe < text.count, text[probe] == " " { probe += 1 }
        guard probe < text.count else { return false }
        if text[probe] == "\\" { return true }
        let word = text[probe...].prefix(40).prefix(while: { $0.isLetter })
        return String(word).hasSuffix("KeyPath") && probe + word.count < text.count && text[probe + word.count] == "<"
    }

    /// Skips one value: balanced brackets, quoted strings.
    private static func skipValue(_ text: [Character], _ index: inout Int) {
        var depth = 0
        var inString = false
        while index < text.count {
            let character = text[index]
            if inString {
                if character == "\\" { index += 1 } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "(" || character == "[" {
                depth += 1
            } else if character == ")" || character == "]" {
                if depth == 0 { break }
                depth -= 1
            } else if character == "," && depth == 0 {
                break
            }
            index += 1
        }
    }

    /// The `"action"` string member of a JSON object, unescaped; nil when there is none.
    static func jsonAction(_ line: String) -> String? {
        let scalars = Array(line.unicodeScalars)
        var index = 0
        var depth = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "{" || scalar == "[" { depth += 1; index += 1; continue }
            if scalar == "}" || scalar == "]" { depth -= 1; index += 1; continue }
            guard scalar == "\"" else { index += 1; continue }
            guard let (key, afterKey) = JSONText.string(scalars, index) else { return nil }
            index = afterKey
            var cursor = index
            while cursor < scalars.count, scalars[cursor] == " " { cursor += 1 }
            guard cursor < scalars.count, scalars[cursor] == ":" else { continue }   // a value, not a key
            cursor += 1
            while cursor < scalars.count, scalars[cursor] == " " { cursor += 1 }
            if depth == 1 && key == "action", cursor < scalars.count, scalars[cursor] == "\"" {
                return JSONText.string(scalars, cursor).map { $0.0 }.flatMap { $0.isEmpty ? nil : $0 }
            }
            index = cursor
        }
        return nil
    }

    /// Removes terminal escape sequences (CSI, OSC) and carriage returns: a program's own output
    /// (`--actions-from-output`) is coloured text.
    static func stripEscapes(_ text: String) -> String {
        guard text.utf8.contains(0x1B) || text.utf8.contains(0x0D) else { return text }
        var result = String.UnicodeScalarView()
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            if scalar == "\r" { continue }
            guard scalar == "\u{1B}" else { result.append(scalar); continue }
            guard let kind = iterator.next() else { break }
            if kind == "[" {
                while let next = iterator.next(), !(next.value >= 0x40 && next.value <= 0x7E) {}
            } else if kind == "]" {
                var previous: Unicode.Scalar = " "
                while let next = iterator.next(), next != "\u{7}", !(previous == "\u{1B}" && next == "\\") { previous = next }
            }
        }
        return String(result)
    }
}

extension Substring {
    /// The index just past the first occurrence of `marker`, or nil.
    func endOfFirst(_ marker: String) -> Index? {
        let needle = Array(marker.utf8)
        let haystack = Array(utf8)
        guard haystack.count >= needle.count, let first = needle.first else { return nil }
        var position = 0
        while position + needle.count <= haystack.count {
            if haystack[position] == first && Array(haystack[position..<(position + needle.count)]) == needle {
                return utf8.index(startIndex, offsetBy: position + needle.count)
            }
            position += 1
        }
        return nil
    }
}
