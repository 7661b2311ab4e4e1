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

    @Option(help: ArgumentHelp("The daemon's metrics: http://HOST:PORT (its /metrics).", valueName: "URL"))
    var from = "http://127.0.0.1:9469"

    @Option(help: "Sort by cpu, memory, name, fps or actions (keys c, m, n, f, a).")
    var sort: TopSort = .cpu

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    func validate() throws {
        guard MetricsEndpoint(from) != nil else { throw ValidationError(Accepted.complaint("--from", got: from)) }
    }

    func run() throws {
        var configuration = TopSession.Configuration(endpoint: MetricsEndpoint(from)!)
        configuration.sort = sort
        let noColorEnvironment = getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
        configuration.style = HUDStyle(color: !(noColor || noColorEnvironment), unicode: LocaleCharset.isUTF8())
        let executable = SystemCall.readLink("/proc/self/exe") ?? CommandLine.arguments[0]
        // --no-summary: the HUD's end summary would be written on the shell's screen, under the
        // table's alternate screen, and be found there after `q`.
        configuration.hudCommand = { pid, tree in
            [executable, "attach", String(pid), "--no-summary"] + (tree ? ["--include-children"] : []) + (noColor ? ["--no-color"] : [])
        }
        try Perfhud.exit(with: TopSession(configuration: configuration).run())
    }
}

extension TopSort: ExpressibleByArgument {}
