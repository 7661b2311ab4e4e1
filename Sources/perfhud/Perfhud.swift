import ArgumentParser
import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

struct Perfhud: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "perfhud",
        abstract: "A performance HUD for Linux processes: CPU, memory and more, pinned in the terminal.",
        version: perfhudVersion,
        subcommands: [Attach.self, Run.self, Demo.self, Daemon.self, Emit.self, ReportCommand.self, ReplayCommand.self, ExportCommand.self, BenchmarkSampler.self, BenchmarkClient.self]
    )
}

extension Perfhud {
    struct Attach: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "HUD for a running process.")

        @Argument(help: "The process to watch.")
        var pid: Int32

        @OptionGroup var options: HUDOptions

        func validate() throws {
            guard pid > 0 else { throw ValidationError("PID must be a positive number, got \(pid)") }
            if options.actionsFromOutput {
                throw ValidationError("--actions-from-output reads the output of a program perfhud runs: use it with run (an attached program's output is not perfhud's to read), or --actions-from FILE")
            }
            if options.frames != .auto {
                throw ValidationError("--frames is for run: perfhud cannot hook into a running program (see docs/events.md: attached programs)")
            }
        }

        func run() throws {
            try Perfhud.exit(with: Session(target: .attach(pid: pid), configuration: options.configuration()).run())
        }
    }

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Launch a command on a pseudo-terminal under the HUD; exit with its status.")

        @OptionGroup var options: HUDOptions

        @Argument(parsing: .captureForPassthrough, help: "The command and its arguments (after --, or after the options).")
        var command: [String] = []

        /// The command without the `--` that may separate it from perfhud's options.
        var program: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

        func validate() throws {
            guard !program.isEmpty else { throw ValidationError("no command given: perfhud run [options] [--] CMD [ARGS]") }
            // Parsing stops at the first word that is not one of ours: an option-like one there
            // (`--tik`) is a typo of ours, not a command to run.
            if command.first != "--", let word = program.first, word.hasPrefix("-") {
                throw ValidationError(Perfhud.unknownOption(word, of: Self.self))
            }
        }

        func run() throws {
            try Perfhud.exit(with: Session(target: .launch(command: program, ownsKeys: false), configuration: options.configuration()).run())
        }
    }

    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A bundled demo program under the HUD: CPU bursts, memory phases, output.")

        @OptionGroup var options: HUDOptions

        func run() throws {
            let program = demoProgramPath()
            guard access(program, X_OK) == 0 else {
                throw PerfHUDError(.notFound, "the demo program is missing: \(program) (build it with `make build`)")
            }
            try Perfhud.exit(with: Session(target: .launch(command: [program], ownsKeys: true), configuration: options.configuration()).run())
        }

        /// `perfhud-demo` beside this executable.
        private func demoProgramPath() -> String {
            var buffer = [CChar](repeating: 0, count: 4096)
            let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard length > 0 else { return "perfhud-demo" }
            let executable = String(cString: buffer)
            let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            return directory + "/perfhud-demo"
        }
    }
}

extension Perfhud {
    /// Ends the command with `status` (through ArgumentParser, which exits with it).
    static func exit(with status: ExitStatus) throws -> Never {
        throw ArgumentParser.ExitCode(status.rawValue)
    }

    /// "unknown command 'atach': did you mean 'attach'?" when the first word is no subcommand but
    /// close to one (at most two edits), instead of ArgumentParser's "2 unexpected arguments".
    static func suggestedSubcommand(_ word: String?) -> String? {
        guard let word, !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.filter { $0.configuration.shouldDisplay }
            .compactMap { $0.configuration.commandName ?? String(describing: $0).lowercased() }
        guard !names.contains(word) else { return nil }
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        if let best = scored.first { return "unknown command '\(word)': did you mean '\(best.0)'?" }
        return "unknown command '\(word)': the commands are \(names.joined(separator: ", "))"
    }

    /// The first option in `arguments` (those after the subcommand, up to `--`) that `command`
    /// does not have, with a suggestion: ArgumentParser would otherwise blame the next word
    /// (`attach --tik 100ms 1`: "The value '100ms' is invalid for '<pid>'").
    static func unknownOption(in arguments: [String]) -> String? {
        guard let name = arguments.first,
              let command = configuration.subcommands.first(where: { $0._commandName == name }) else { return nil }
        let known = longOptions(of: command)
        for argument in arguments.dropFirst() {
            if argument == "--" { break }
            guard argument.hasPrefix("--") else { continue }
            let option = String(argument.split(separator: "=", maxSplits: 1)[0])
            if !known.contains(option) { return unknownOption(option, of: command) }
        }
        return nil
    }

    static func unknownOption(_ option: String, of command: ParsableCommand.Type) -> String {
        let known = longOptions(of: command)
        let scored = known.map { ($0, distance(option, $0)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        if let best = scored.first { return "unknown option '\(option)': did you mean '\(best.0)'?" }
        return "unknown option '\(option)' (perfhud \(command._commandName) --help lists them)"
    }

    /// Every `--name` the command takes, read off its own help: ArgumentParser has no public list.
    static func longOptions(of command: ParsableCommand.Type) -> Set<String> {
        var names: Set<String> = ["--help", "--version"]
        let help = Array(command.helpMessage(includeHidden: true, columns: 10_000).utf8)
        var index = 0
        while index + 2 < help.count {
            if help[index] == UInt8(ascii: "-"), help[index + 1] == UInt8(ascii: "-"), index == 0 || help[index - 1] != UInt8(ascii: "-") {
                var end = index + 2
                while end < help.count, help[end] == UInt8(ascii: "-") || (help[end] >= 0x61 && help[end] <= 0x7A) || (help[end] >= 0x30 && help[end] <= 0x39) { end += 1 }
                if end > index + 2 { names.insert(String(decoding: help[index..<end], as: UTF8.self)) }
                index = end
            } else {
                index += 1
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

/// Entry point: every failure is one line on stderr and a sysexits status — a `PerfHUDError` its
/// own, a command line ArgumentParser cannot read 64 — never a usage dump or a trace.
@main
enum Main {
    static func main() {
        do {
            var command = try Perfhud.parseAsRoot()
            try command.run()
        } catch let error as PerfHUDError {
            fail(error.message, status: error.exitStatus)
        } catch {
            let code = Perfhud.exitCode(for: error)
            if code == .success || error is CleanExit { Perfhud.exit(withError: error) }
            if let exit = error as? ArgumentParser.ExitCode { Glibc.exit(exit.rawValue) }
            var message = Perfhud.message(for: error)
                .split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let suggestion = Perfhud.suggestedSubcommand(arguments.first) { message = suggestion }
            else if let unknown = Perfhud.unknownOption(in: arguments) { message = unknown }
            fail(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message,
                 status: code.rawValue == 0 ? ExitStatus.usage : ExitStatus(rawValue: code.rawValue))
        }
    }

    static func fail(_ message: String, status: ExitStatus) -> Never {
        fputs("perfhud: \(message)\n", stderr)
        Glibc.exit(status.rawValue)
    }
}
