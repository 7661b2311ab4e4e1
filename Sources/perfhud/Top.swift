import ArgumentParser
import PerfHUDSupport
import PerfHUDRender
import PerfHUDTop
#if canImport(Glibc)
import Glibc
#endif

/// `perfhud top`: the targets of a running `perfhud daemon`, one row each, from its /metrics.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "A table of a perfhud daemon's targets (c/m/n/f/a sort, ↑/↓ select, Enter opens the HUD, q quits).")

    @Option(parsing: .unconditional, help: ArgumentHelp("The daemon's metrics: http://HOST:PORT (its /metrics).", valueName: "URL"))
    var from: Given<String> = "http://127.0.0.1:9469"

    @Option(parsing: .unconditional, help: "Sort by cpu, memory, name, fps or actions (keys c, m, n, f, a).")
    var sort: Given<TopSort> = "cpu"

    @Flag(help: "Every running container and pod of this host, with no daemon to configure: top runs one of its own (--containers '*' --pods '*') for as long as the table.")
    var containers = false

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    /// What the command does not take, refused in validate().
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var unrecognized: [String] = []

    func validate() throws {
        _ = try UsageMessage.arguments(unrecognized, of: Self.self)
        _ = try configuration()
    }

    /// The session's configuration; a refusal (`Refusal`) for the first option that does not read.
    func configuration() throws -> TopSession.Configuration {
        if containers, self.from.text != "http://127.0.0.1:9469" { throw Refusal.because("--containers watches this host's containers itself: no --from") }
        let from = try self.from.value("--from")
        guard let endpoint = MetricsEndpoint(from) else { throw Refusal.because(Accepted.complaint("--from", got: from)) }
        var configuration = TopSession.Configuration(endpoint: endpoint)
        configuration.sort = try sort.value("--sort")
        return configuration
    }

    func run() throws {
        var configuration = try configuration()
        var companion: CompanionDaemon?
        if containers {
            companion = try CompanionDaemon.start(executable: SystemCall.readLink("/proc/self/exe") ?? CommandLine.arguments[0])
            configuration.endpoint = MetricsEndpoint("http://127.0.0.1:\(companion!.port)")!
        }
        defer { companion?.stop() }
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        configuration.style = HUDStyle(color: !(noColor || noColorEnvironment), unicode: LocaleCharset.isUTF8())
        let executable = SystemCall.readLink("/proc/self/exe") ?? CommandLine.arguments[0]
        // --no-summary: the HUD's end summary would be written on the shell's screen, under the
        // table's alternate screen, and be found there after `q`.
        configuration.hudCommand = { target in
            var command = [executable, "attach"]
            switch target {
            case .process(let pid, let tree): command += [String(pid)] + (tree ? ["--include-children"] : [])
            case .group(.match(let pattern), let children): command += ["--match", pattern] + (children ? ["--include-children"] : [])
            case .group(.unit(let unit), let children): command += ["--unit", unit] + (children ? ["--include-children"] : [])
            case .group(.container(let container), let children): command += ["--container", container] + (children ? ["--include-children"] : [])
            case .group(.controlGroup(let path), let children): command += ["--cgroup", path] + (children ? ["--include-children"] : [])
            case .group(.pod(let pod), let children): command += ["--pod", pod] + (children ? ["--include-children"] : [])
            }
            return command + ["--no-summary"] + (noColor ? ["--no-color"] : [])
        }
        let status = TopSession(configuration: configuration).run()
        companion?.stop()
        companion = nil
        try Perfhud.exit(with: status)
    }
}

