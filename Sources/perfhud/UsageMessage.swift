import ArgumentParser
import PerfHUDSupport

/// A command line perfhud refuses, said in perfhud's words. Each `validate()` throws one (a
/// `ValidationError`, whose message ArgumentParser passes on as is, with status 64) and it is kept
/// here as well: ArgumentParser's own refusals — of what no hook of it sees, a value missing at
/// the end of the line, a flag given one, a word before the command — arrive the same way, in its
/// words, and those are not read (its sentences are no API): `Main` says the kept refusal, or
/// works out from the command line itself what ArgumentParser refused (`UsageMessage.parserFault`).
enum Refusal {
    /// The last refusal thrown; set on the main thread alone, which parses the command line.
    nonisolated(unsafe) static var said: String?

    /// `message` kept, as the error a `validate()` throws.
    static func because(_ message: String) -> ValidationError {
        said = message
        return ValidationError(message)
    }
}

/// The one line a command line that cannot be read gets, in one style whatever found the fault:
/// lower case, what was wrong and what is accepted (`Accepted`), a suggestion for a near miss.
/// Tests/EndToEnd/test_usage_messages.py gives every option of every command a bad value, none
/// and a near miss.
enum UsageMessage {
    /// The arguments of `command` among `words`, the words of its line that are none of its
    /// options (ArgumentParser's `@Argument(parsing: .allUnrecognized)`), one for each of
    /// `names` (nil where missing); a refusal for a word that reads as an option (with a
    /// suggestion) or one too many. Arguments are read from these words rather than declared
    /// one by one: ArgumentParser fills a declared argument by skipping, and losing, the options
    /// it does not know before it (`attach --tik 100ms 1` would take 100ms as the PID).
    static func arguments(_ words: [String], of command: ParsableCommand.Type, named names: [String] = []) throws -> [String?] {
        if let option = words.first(where: { $0.count > 1 && $0.hasPrefix("-") }) {
            throw Refusal.because(unknownOption(option, of: command))
        }
        guard words.count <= names.count else {
            let extra = words.dropFirst(names.count)
            let list = extra.map(Accepted.quoted).joined(separator: ", ")
            throw Refusal.because("unexpected argument\(extra.count == 1 ? "" : "s") \(list) (perfhud \(command._commandName) --help)")
        }
        return names.indices.map { $0 < words.count ? words[$0] : nil }
    }

    /// What ArgumentParser refused before any `validate()` ran, worked out from the command line
    /// (`arguments`, without the program's name) by parsing it again changed, not by reading its
    /// message: a word before the command, a value missing at the end of the line (the line reads
    /// without its last word), a flag given a value (it reads with the flag alone).
    static func parserFault(arguments: [String]) -> String {
        if let suggestion = suggestedSubcommand(arguments.first) { return suggestion }
        guard let command = subcommand(named: arguments.first) else {
            if let first = arguments.first, first.hasPrefix("-") { return unknownTopLevelOption(first, arguments: arguments) }
            return "cannot read the command line (perfhud --help)"
        }
        let name = command._commandName
        var own = Array(arguments.dropFirst())
        if let separator = own.firstIndex(of: "--") { own = Array(own[..<separator]) }
        if let last = own.last, last.count > 1, last.hasPrefix("-"), !last.contains("="), parserReads(Array(own.dropLast()), as: command) {
            return Accepted.complaint(String(last.split(separator: "=", maxSplits: 1)[0]), got: "", in: name)
        }
        for (index, word) in own.enumerated() where word.hasPrefix("-") {
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            var alone = own
            alone[index] = String(parts[0])
            if parserReads(alone, as: command) { return "\(parts[0]) takes no value; got \(Accepted.quoted(String(parts[1])))" }
        }
        return "cannot read the command line (perfhud \(name) --help)"
    }

    /// Whether ArgumentParser reads `arguments` as `command`: they parse, or only a `validate()`
    /// refuses them.
    private static func parserReads(_ arguments: [String], as command: ParsableCommand.Type) -> Bool {
        Refusal.said = nil
        defer { Refusal.said = nil }
        do { _ = try command.parseAsRoot(arguments); return true } catch { return Refusal.said != nil }
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
        if let best = NearestWord.to(word, in: names) { return "unknown command '\(word)': did you mean '\(best)'?" }
        return "unknown command '\(word)': the commands are \(names.joined(separator: ", "))"
    }

    /// Why `command` does not take the option: another command's (`attach --frame-gap`: run's),
    /// or a near miss of one of its own, or neither.
    /// - Parameter word: the option as typed, `=value` and all.
    static func unknownOption(_ word: String, of command: ParsableCommand.Type) -> String {
        let option = String(word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let name = command._commandName
        if option.hasPrefix("--") {
            if name == "attach", let reason = notForAttach[option] { return reason }
            let owners = Perfhud.configuration.subcommands.filter { $0.configuration.shouldDisplay && CommandOptions.longNames(of: $0).contains(option) }
            if !owners.isEmpty {
                let list = owners.map { $0._commandName }
                let names = list.count == 1 ? list[0] : list.dropLast().joined(separator: ", ") + " and " + list.last!
                return "\(option) is for \(names), not \(name)"
            }
        }
        if let best = NearestWord.to(option, in: CommandOptions.longNames(of: command).sorted()) { return "unknown option '\(option)': did you mean '\(best)'?" }
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
        if let best = NearestWord.to(option, in: ["--help", "--version"]) { return "unknown option '\(option)': did you mean '\(best)'?" }
        // The command named further on, else the first that has the option.
        let owners = Perfhud.configuration.subcommands.filter { $0.configuration.shouldDisplay && CommandOptions.longNames(of: $0).contains(option) }
        let named = arguments.compactMap { word in owners.first { $0._commandName == word } }.first
        if let owner = named ?? owners.first {
            return "unknown option '\(option)' before the command: options go after it, as in perfhud \(owner._commandName) \(option) …"
        }
        return "unknown option '\(option)': perfhud wants a command first (perfhud --help lists them)"
    }
}
