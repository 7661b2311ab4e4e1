import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDRecordings
import PerfHUDRuntime
#if canImport(Glibc)
@preconcurrency import Glibc   // stdout, stderr: C globals, used by the main thread alone
#endif

struct Perfhud: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "perfhud",
        abstract: "A performance HUD for Linux processes: CPU, memory and more, pinned in the terminal.",
        version: perfhudVersion,
        subcommands: [Attach.self, Run.self, Demo.self, Daemon.self, TopCommand.self, StatusCommand.self, Emit.self, ReportCommand.self, ReplayCommand.self, ExportCommand.self, BenchmarkSampler.self, BenchmarkClient.self]
    )
}

extension Perfhud {
    struct Attach: ParsableCommand {
        // The usage is said here: ArgumentParser's would read `[<pid> ...]`, as the PID is read from
        // the words of the line that are none of the options (`UsageMessage.arguments`).
        static let configuration = CommandConfiguration(commandName: "attach", abstract: "HUD for a running process, or a group of them.",
                                                        usage: "perfhud attach [<options>] <pid>\nperfhud attach [<options>] --match PATTERN\nperfhud attach [<options>] --unit UNIT\nperfhud attach [<options>] --container NAME|ID\nperfhud attach [<options>] --cgroup PATH\nperfhud attach [<options>] --pod NAMESPACE/POD")

        @OptionGroup var options: HUDOptions

        @OptionGroup var group: GroupTargetOptions

        /// The PID, and whatever else of the line is none of the options: refused in validate().
        @Argument(parsing: .allUnrecognized, help: "The process to watch.")
        var pid: [String] = []

        func validate() throws {
            _ = try target()
        }

        func target() throws -> TargetSelector {
            // `attach -5`: a negative number reads as an option, and the PID is missing.
            if let first = pid.first, first.count > 1, first.hasPrefix("-"), first.dropFirst().allSatisfy(\.isNumber) {
                throw Refusal.because(Accepted.complaint("<pid>", got: first, in: "attach"))
            }
            let group = try self.group.selector(in: "attach")
            if let group {
                _ = try UsageMessage.arguments(pid, of: Self.self, named: [])
                return group
            }
            guard let text = try UsageMessage.arguments(pid, of: Self.self, named: ["<pid>"])[0] else {
                throw Refusal.because(Accepted.complaint("<pid>", got: nil, in: "attach"))
            }
            return .pid(try Given<Int32>(argument: text).value("<pid>", in: "attach") { $0 > 0 })
        }

        func run() throws {
            try Perfhud.exit(with: Session(target: .attach(target()), configuration: options.configuration()).run())
        }
    }

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Launch a command on a pseudo-terminal under the HUD; exit with its status.")

        @OptionGroup var options: HUDOptions
        @OptionGroup var grace: GraceOptions
        @OptionGroup var runOptions: RunOptions

        @Argument(parsing: .captureForPassthrough, help: "The command and its arguments (after --, or after the options).")
        var command: [String] = []

        /// The command without the `--` that may separate it from perfhud's options.
        var program: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

        func validate() throws {
            guard !program.isEmpty else { throw Refusal.because("no command given: perfhud run [options] [--] CMD [ARGS]") }
            // Parsing stops at the first word that is not one of ours: an option-like one there
            // (`--tik`) is a typo of ours, not a command to run.
            // The capture takes --help and -h as well (`run --help`): they are ours.
            if command.first != "--", let word = program.first, word.hasPrefix("-") {
                if word == "--help" || word == "-h" { throw CleanExit.helpRequest(Self.self) }
                if word == "--version" { throw CleanExit.message(perfhudVersion) }
                throw Refusal.because(UsageMessage.unknownOption(word, of: Self.self))
            }
        }

        func run() throws {
            var configuration = try options.configuration()
            try grace.apply(to: &configuration)
            try runOptions.apply(to: &configuration)
            try Perfhud.exit(with: Session(target: .launch(command: program, ownsKeys: false), configuration: configuration).run())
        }
    }

    struct Demo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "A bundled demo program under the HUD: CPU bursts, memory phases, output.")

        @OptionGroup var options: HUDOptions
        @OptionGroup var grace: GraceOptions

        /// What the command does not take, refused in validate().
        @Argument(parsing: .allUnrecognized, help: .hidden)
        var unrecognized: [String] = []

        func validate() throws {
            _ = try UsageMessage.arguments(unrecognized, of: Self.self)
        }

        func run() throws {
            let program = demoProgramPath()
            guard access(program, X_OK) == 0 else {
                throw PerfHUDError(.notFound, "the demo program is missing: \(program) (build it with `make build`)")
            }
            var configuration = try options.configuration()
            try grace.apply(to: &configuration)
            try Perfhud.exit(with: Session(target: .launch(command: [program], ownsKeys: true), configuration: configuration).run())
        }

        /// `perfhud-demo` beside this executable.
        private func demoProgramPath() -> String {
            guard let executable = SystemCall.readLink("/proc/self/exe") else { return "perfhud-demo" }
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
}

/// Entry point: every failure is one line on stderr and a sysexits status — a `PerfHUDError` its
/// own, a command line that cannot be read 64 — never a usage dump or a trace.
@main
enum Main {
    static func main() {
        // A dozen files kept open for each watched process: the daemon's groups and a tree's
        // members outgrow a service's soft limit of 1,024 long before its hard one.
        SystemCall.raiseDescriptorLimit()
        // `help atach` is refused as `atach` is (ArgumentParser gives the general help, status 0).
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "help", let suggestion = UsageMessage.suggestedSubcommand(arguments.dropFirst().first) {
            fail(suggestion, status: .usage)
        }
        // A status bar's line, every second all day: read without ArgumentParser where it can be.
        if arguments.first == "status", let request = StatusRequest.fastPath(arguments.dropFirst()) {
            do { Glibc.exit(try request.run().rawValue) } catch let error as PerfHUDError { fail(error.message, status: error.exitStatus) } catch { fail("\(error)", status: .software) }
        }
        do {
            var command = try parsedCommand()
            try command.run()
        } catch let error as PerfHUDError {
            fail(error.message, status: error.exitStatus)
        } catch {
            let code = Perfhud.exitCode(for: error)
            if code == .success || error is CleanExit { Perfhud.exit(withError: error) }
            if let exit = error as? ArgumentParser.ExitCode { Glibc.exit(exit.rawValue) }
            // perfhud's own refusal (a validate()), else ArgumentParser's, worked out from the line.
            if let refusal = Refusal.said { fail(refusal, status: .usage) }
            if code == .validationFailure { fail(UsageMessage.parserFault(arguments: Array(CommandLine.arguments.dropFirst())), status: .usage) }
            fail(Perfhud.message(for: error), status: ExitStatus(rawValue: code.rawValue))
        }
    }

    /// The command line parsed, through its subcommand alone where the first word names one and
    /// the rest parses to it: given the whole tree, ArgumentParser builds the argument set of every
    /// command in it by reflection (to learn whether each takes passthrough arguments), and each
    /// type it meets costs the runtime a first conformance look-up, a scan of the binary's 4,800
    /// conformance records. That was 7.4M of the 37M instructions `attach --count 1` starts with
    /// (callgrind). Anything else (help, `--version`, a typo) is parsed again from the root, so
    /// every message and status is the root's. Every command names itself in its configuration for
    /// the same reason: a name derived from the type's (`String(describing:)` of a metatype) cost
    /// 0.8–2.7M instructions a command.
    static func parsedCommand() throws -> ParsableCommand {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let subcommand = UsageMessage.subcommand(named: arguments.first),
           let command = try? subcommand.parseAsRoot(Array(arguments.dropFirst())),
           type(of: command) == subcommand {   // not the HelpCommand a --help parses to
            return command
        }
        Refusal.said = nil
        return try Perfhud.parseAsRoot()
    }

    static func fail(_ message: String, status: ExitStatus) -> Never {
        fputs("perfhud: \(message)\n", stderr)
        Glibc.exit(status.rawValue)
    }
}
