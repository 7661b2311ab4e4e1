import ArgumentParser
import PerfHUDSupport

/// The one line a command line that cannot be read gets, in one style whatever found the fault
/// (ArgumentParser or a command's `validate`): lower case, what was wrong and what is accepted
/// (`Accepted`), a suggestion for a near miss. ArgumentParser's own sentences ("The value '100'
/// is invalid for '--tick <tick>'", "Missing value for …") name the fault but not what it wants:
/// they are read here and said again. Those sentences are not ArgumentParser's API and nothing
/// pins its version (Package.resolved is not committed: the package copies builds resolve from
/// here have commit ids of their own, so a resolved file made here would not resolve elsewhere):
/// Tests/EndToEnd/test_usage_messages.py fails when one of its sentences comes through as is.
enum UsageMessage {
    /// - Parameters:
    ///   - message: ArgumentParser's message for the error, its first line, without "Error: ".
    ///   - arguments: the command line, without the program's name.
    static func rewrite(_ message: String, arguments: [String]) -> String {
        if let suggestion = suggestedSubcommand(arguments.first) { return suggestion }
        let command = subcommand(named: arguments.first)
        if let command, let unknown = unknownOption(in: Array(arguments.dropFirst()), of: command) { return unknown }
        let commandName = command?._commandName
        let ownArguments = command == nil ? arguments : Array(arguments.dropFirst())

        // The value 'V' is invalid for '--opt <name>'[: reason | . Please provide one of …]
        if message.hasPrefix("The value '"), let end = message.ranges(of: "' is invalid for '").last {
            let value = String(message[message.index(message.startIndex, offsetBy: 11)..<end.lowerBound])
            return Accepted.complaint(name(in: message[end.upperBound...]), got: value, in: commandName)
        }
        // Missing value for '--opt <name>': at the end of the line, or before a value that
        // looks like an option (`--tick -1s`, `--pid -3`).
        if message.hasPrefix("Missing value for '") {
            let option = name(in: message.dropFirst(19))
            return Accepted.complaint(option, got: value(after: option, in: ownArguments) ?? "", in: commandName)
        }
        // Missing expected argument '<pid>' (or a required option, '--format <format>').
        if message.hasPrefix("Missing expected argument '") {
            let argument = name(in: message.dropFirst(27))
            if argument.hasPrefix("<") {
                // `attach -5`: a negative number reads as an option, and the argument is missing.
                let negative = ownArguments.first { $0.count > 1 && $0.hasPrefix("-") && $0.dropFirst().allSatisfy(\.isNumber) }
                return Accepted.complaint(argument, got: negative, in: commandName)
            }
            return "\(commandName ?? "perfhud") wants \(argument): " + (Accepted.form(of: argument, in: commandName) ?? "see its --help")
        }
        // Unknown option '-x' (short ones; long ones are found above, with a suggestion).
        if message.hasPrefix("Unknown option '") {
            let option = name(in: message.dropFirst(16))
            if command == nil { return unknownTopLevelOption(option, arguments: arguments) }
            return unknownOption(option, of: command!)
        }
        if message.hasPrefix("Unexpected argument '") || message.contains(" unexpected arguments: '") {
            let list = message.drop { $0 != "'" }
            let plural = message.hasPrefix("Unexpected argument") ? "" : "s"
            return "unexpected argument\(plural) \(list) (perfhud \(commandName.map { $0 + " " } ?? "")--help)"
        }
        // The option '--no-color' does not take any value, but '3' was specified.
        if message.hasPrefix("The option '"), let but = message.firstRange(of: "' does not take any value, but '") {
            let option = String(message[message.index(message.startIndex, offsetBy: 12)..<but.lowerBound])
            let value = message[but.upperBound...].dropLast("' was specified.".count)
            return "\(option) takes no value; got \(Accepted.quoted(String(value)))"
        }
        // Our own (validate), already in this style; anything else in it: lower case, no full stop.
        var line = message
        if line.hasSuffix(".") { line.removeLast() }
        if let first = line.first, first.isUppercase, line.dropFirst().first?.isLowercase == true {
            line = first.lowercased() + line.dropFirst()
        }
        return line
    }

    /// The option or argument named in "'--tick <tick>'…" or "'<pid>'…": `--tick`, `<pid>`.
    private static func name(in text: Substring) -> String {
        let quoted = text.prefix { $0 != "'" }
        if quoted.hasPrefix("<") { return String(quoted.prefix { $0 != ">" }) + ">" }
        return String(quoted.prefix { $0 != " " })
    }

    /// What follows the last `option` on the command line (`--tick -1s`, `--tick=`); nil when
    /// nothing does. The last: an option given twice takes its last value, and misses it there.
    private static func value(after option: String, in arguments: [String]) -> String? {
        var value: String?
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { break }
            if argument.hasPrefix(option + "=") { value = String(argument.dropFirst(option.count + 1)) }
            if argument == option { value = index + 1 < arguments.count ? arguments[index + 1] : nil }
        }
        return value
    }

    /// The subcommand named `name` (nil for none, or no name).
    static func subcommand(named name: String?) -> ParsableCommand.Type? {
        guard let name else { return nil }
        return Perfhud.configuration.subcommands.first { $0._commandName == name }
    }

    /// "unknown command 'atach': did you mean 'attach'?" when the first word is no subcommand but
    /// close to one (at most two edits), instead of ArgumentParser's "2 unexpected arguments".
    static func suggestedSubcommand(_ word: String?) -> String? {
        guard let word, !word.hasPrefix("-") else { return nil }
        let names = Perfhud.configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
        guard !names.contains(word), word != "help" else { return nil }
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        if let best = scored.first { return "unknown command '\(word)': did you mean '\(best.0)'?" }
        return "unknown command '\(word)': the commands are \(names.joined(separator: ", "))"
    }

    /// The first option in `arguments` (those after the subcommand, up to `--`) that `command`
    /// does not have, with a suggestion: ArgumentParser would otherwise blame the next word
    /// (`attach --tik 100ms 1`: "The value '100ms' is invalid for '<pid>'"). For `run`, only up
    /// to the program's name: `run --tick 100 ls --all` is about --tick, not ls's --all.
    static func unknownOption(in arguments: [String], of command: ParsableCommand.Type) -> String? {
        let known = longOptions(of: command), valued = longOptions(of: command, takingValues: true)
        var previous: String?
        for argument in arguments {
            if argument == "--" { break }
            defer { previous = argument }
            guard argument.hasPrefix("--") else {
                let isValue = previous.map { valued.contains($0) } ?? false
                if command == Perfhud.Run.self && !isValue && !argument.hasPrefix("-") { break }
                continue
            }
            let option = String(argument.split(separator: "=", maxSplits: 1)[0])
            if !known.contains(option) { return unknownOption(option, of: command) }
        }
        return nil
    }

    /// Why `command` does not take `option`: another command's (`attach --frame-gap`: run's),
    /// or a near miss of one of its own, or neither.
    static func unknownOption(_ option: String, of command: ParsableCommand.Type) -> String {
        let name = command._commandName
        if option.hasPrefix("--") {
            if name == "attach", let reason = notForAttach[option] { return reason }
            let owners = Perfhud.configuration.subcommands.filter { $0.configuration.shouldDisplay && longOptions(of: $0).contains(option) }
            if !owners.isEmpty {
                let list = owners.map { $0._commandName }
                let names = list.count == 1 ? list[0] : list.dropLast().joined(separator: ", ") + " and " + list.last!
                return "\(option) is for \(names), not \(name)"
            }
        }
        let scored = longOptions(of: command).map { ($0, distance(option, $0)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        if let best = scored.first { return "unknown option '\(option)': did you mean '\(best.0)'?" }
        return "unknown option '\(option)' (perfhud \(name) --help lists them)"
    }

    /// Why an option `run` has means nothing for `attach`.
    private static let notForAttach = [
        "--frames": "--frames is for run: perfhud cannot hook into a running program (see README: frames of an attached program)",
        "--actions-from-output": "--actions-from-output reads the output of a program perfhud runs: use it with run (an attached program's output is not perfhud's to read), or --actions-from FILE",
    ]

    /// `perfhud --tick 1s run …`: the options go after the command; a near miss of --help or
    /// --version gets a suggestion.
    static func unknownTopLevelOption(_ option: String, arguments: [String]) -> String {
        let scored = ["--help", "--version"].map { ($0, distance(option, $0)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        if let best = scored.first { return "unknown option '\(option)': did you mean '\(best.0)'?" }
        // The command named further on, else the first that has the option.
        let owners = Perfhud.configuration.subcommands.filter { $0.configuration.shouldDisplay && longOptions(of: $0).contains(option) }
        let named = arguments.compactMap { word in owners.first { $0._commandName == word } }.first
        if let owner = named ?? owners.first {
            return "unknown option '\(option)' before the command: options go after it, as in perfhud \(owner._commandName) \(option) …"
        }
        return "unknown option '\(option)': perfhud wants a command first (perfhud --help lists them)"
    }

    /// Every `--name` the command takes, read off its own help (ArgumentParser has no public
    /// list): the synopsis column of the lines that start with an option, not their descriptions
    /// (report's mentions --record, which it does not take).
    /// - Parameter takingValues: only those followed by a value (`--tick <tick>`).
    static func longOptions(of command: ParsableCommand.Type, takingValues: Bool = false) -> Set<String> {
        var names: Set<String> = takingValues ? [] : ["--help", "--version"]
        for line in command.helpMessage(includeHidden: true, columns: 10_000).split(separator: "\n") {
            let entry = line.drop { $0 == " " }
            guard entry.hasPrefix("-") else { continue }
            let synopsis = entry.split(separator: "  ", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let words = synopsis.split(whereSeparator: { $0 == " " || $0 == "," })
            for (index, word) in words.enumerated() where word.hasPrefix("--") {
                if !takingValues || (index + 1 < words.count && words[index + 1].hasPrefix("<")) { names.insert(String(word)) }
            }
        }
        return names
    }

    /// Levenshtein distance, for a handful of short words.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let current = row[j]
                row[j] = Swift.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
