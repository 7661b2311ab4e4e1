import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline
#if canImport(Glibc)
import Glibc
#endif

/// One target of the daemon as the operator wrote it: `--unit web.service`, `--match
/// web='gunicorn: master'`, `--units '*.service'`; on the command line or a line of `--config`.
public struct TargetSpec: Equatable {
    /// The `NAME=` the operator gave (the `target` label), or nil: then the unit's name, else the
    /// command name of the target when the daemon starts.
    public var name: String?
    public var selector: DaemonConfiguration.Selector

    public init(name: String?, selector: DaemonConfiguration.Selector) {
        self.name = name
        self.selector = selector
    }

    /// The options that name a target, in the words of the command line.
    public static let options = ["--pid", "--pidfile", "--match", "--unit", "--units", "--container", "--containers", "--cgroup", "--pod", "--pods"]

    /// One option and its value: a leading word of letters, digits, `_`, `.`, `-` followed by `=`
    /// is the target's name (so a pattern that itself starts that way needs one: `--match x='a=b'`).
    /// - Throws: `PerfHUDError` `.usage`, one line saying what is accepted.
    public static func parse(option: String, value: String) throws -> TargetSpec {
        var name: String?
        var rest = Substring(value)
        if let equals = value.firstIndex(of: "="), equals > value.startIndex,
           value[..<equals].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }) {
            name = String(value[..<equals])
            rest = value[value.index(after: equals)...]
        }
        let argument = String(rest)
        switch option {
        case "--pid":
            guard let pid = Int32(argument), pid > 0 else { throw PerfHUDError(.usage, "--pid wants a positive number, got \(value)") }
            return TargetSpec(name: name, selector: .pid(pid))
        case "--pidfile":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--pidfile wants a file") }
            return TargetSpec(name: name, selector: .pidfile(argument))
        case "--match":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--match wants a pattern") }
            try TargetResolver.checkPattern(argument)
            return TargetSpec(name: name, selector: .match(argument))
        case "--unit":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--unit wants a unit name") }
            return TargetSpec(name: name, selector: .unit(named: argument))
        case "--units":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--units wants a pattern such as '*.service'") }
            guard name == nil else { throw PerfHUDError(.usage, "--units names each target after its unit: no NAME= (got \(value))") }
            return TargetSpec(name: nil, selector: .units(argument))
        case "--container":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--container wants a container's name or ID") }
            return TargetSpec(name: name, selector: .container(argument))
        case "--containers":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--containers wants a pattern of container names such as 'web-*' or '*'") }
            guard name == nil else { throw PerfHUDError(.usage, "--containers names each target after its container: no NAME= (got \(value))") }
            return TargetSpec(name: nil, selector: .containers(argument))
        case "--cgroup":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--cgroup wants a control group's path such as /system.slice/web.service") }
            return TargetSpec(name: name, selector: .controlGroup(given: argument))
        case "--pod":
            guard argument.split(separator: "/", omittingEmptySubsequences: false).count == 2, !argument.hasPrefix("/"), !argument.hasSuffix("/") else {
                throw PerfHUDError(.usage, "--pod wants a pod as NAMESPACE/POD, such as default/web-0")
            }
            return TargetSpec(name: name, selector: .pod(argument))
        case "--pods":
            guard !argument.isEmpty else { throw PerfHUDError(.usage, "--pods wants a pattern of NAMESPACE/POD such as 'shop/*'") }
            guard name == nil else { throw PerfHUDError(.usage, "--pods names each target after its pod: no NAME= (got \(value))") }
            return TargetSpec(name: nil, selector: .pods(argument))
        default:
            throw PerfHUDError(.usage, "unknown option \(option): a target is one of \(options.joined(separator: ", "))")
        }
    }

    /// A line of the command line's words (`--unit web.service`, `--pid=1234`): one target.
    public static func parse(words: [String]) throws -> TargetSpec {
        guard let first = words.first else { throw PerfHUDError(.usage, "no target") }
        var option = first, value: String?
        if let equals = first.firstIndex(of: "="), first.hasPrefix("--") {
            option = String(first[..<equals])
            value = String(first[first.index(after: equals)...])
        }
        guard options.contains(option) else {
            throw PerfHUDError(.usage, "\(first) is not a target: a line is one of \(options.joined(separator: ", ")) and its value")
        }
        if value == nil {
            guard words.count >= 2 else { throw PerfHUDError(.usage, "\(option) wants a value") }
            value = words[1]
            guard words.count == 2 else { throw PerfHUDError(.usage, "one target a line: \(words[2...].joined(separator: " ")) is one word too many") }
        } else if words.count > 1 {
            throw PerfHUDError(.usage, "one target a line: \(words[1...].joined(separator: " ")) is one word too many")
        }
        return try parse(option: option, value: value!)
    }

    /// What the line names, for the log.
    public var description: String {
        (name.map { "\($0)=" } ?? "") + selector.description
    }
}

/// A `--config` file: one target a line in the command line's words, `#` comments, blank lines;
/// and `--alert EXPR` lines, the daemon's alerts beside those of its command line (read when the
/// daemon starts: an alert's words need no quoting there, where systemd's `$PERFHUD_OPTIONS` splits
/// them at every space).
public enum TargetsFile {
    /// - Throws: `PerfHUDError` `.config` naming the file and the line.
    public static func read(_ path: String) throws -> [TargetSpec] {
        let data: [UInt8]
        switch KeptOpenFile.contents(of: path, limit: 1 << 20) {
        case .success(let bytes): data = bytes
        case .failure(let error): throw PerfHUDError(.config, "cannot read \(path): \(error)")
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    public static func parse(_ text: String, path: String) throws -> [TargetSpec] {
        try lines(text, path: path).specs
    }

    /// The `--alert` lines of the file at `path`.
    /// - Throws: `PerfHUDError` `.config` naming the file and the line.
    public static func alerts(_ path: String) throws -> [AlertRule] {
        let data: [UInt8]
        switch KeptOpenFile.contents(of: path, limit: 1 << 20) {
        case .success(let bytes): data = bytes
        case .failure(let error): throw PerfHUDError(.config, "cannot read \(path): \(error)")
        }
        return try lines(String(decoding: data, as: UTF8.self), path: path).alerts
    }

    private static func lines(_ text: String, path: String) throws -> (specs: [TargetSpec], alerts: [AlertRule]) {
        var specs: [TargetSpec] = [], alerts: [AlertRule] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            do {
                let words = try ShellWords.split(String(line))
                if words.isEmpty { continue }
                if words[0] == "--alert" {
                    alerts.append(try AlertRule(words.dropFirst().joined(separator: " ")))
                } else {
                    specs.append(try TargetSpec.parse(words: words))
                }
            } catch let error as PerfHUDError {
                throw PerfHUDError(.config, "\(path):\(index + 1): \(error.message)")
            }
        }
        return (specs, alerts)
    }
}

/// Splits a line into words as a POSIX shell would, without expansions: blanks separate words,
/// `'…'` keeps everything, `"…"` keeps everything but `\"` and `\\`, `\` escapes one character,
/// and `#` at the start of a word begins a comment.
public enum ShellWords {
    public static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t", "\r":
                if inWord { words.append(current); current = ""; inWord = false }
            case "#" where !inWord:
                return words
            case "'":
                inWord = true
                var closed = false
                while let next = characters.next() {
                    if next == "'" { closed = true; break }
                    current.append(next)
                }
                guard closed else { throw PerfHUDError(.usage, "a ' is not closed") }
            case "\"":
                inWord = true
                var closed = false
                while let next = characters.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { break }
                        if escaped != "\"" && escaped != "\\" && escaped != "$" && escaped != "`" { current.append("\\") }
                        current.append(escaped)
                        continue
                    }
                    current.append(next)
                }
                guard closed else { throw PerfHUDError(.usage, "a \" is not closed") }
            case "\\":
                inWord = true
                guard let escaped = characters.next() else { throw PerfHUDError(.usage, "a \\ ends the line") }
                current.append(escaped)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
