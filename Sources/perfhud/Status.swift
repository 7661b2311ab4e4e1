import ArgumentParser
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline
import PerfHUDRender
import PerfHUDOutput
import PerfHUDRuntime
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `perfhud status TARGET --format plain|json|waybar|i3bar|tmux [--follow]`: a status bar's line.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "A status bar's line of a process: one answer (rates since the last call), or one a tick with --follow.",
        usage: "perfhud status [<options>] <pid>\nperfhud status [<options>] --follow --match PATTERN|--unit UNIT|--container NAME|ID|--cgroup PATH|--pod NAMESPACE/POD\nperfhud status [<options>] --target NAME [--events DIR]\nperfhud status --tmux --restore")

    @Option(parsing: .unconditional, help: "plain, json, waybar, i3bar or tmux.")
    var format: Given<StatusFormat> = "plain"

    @Flag(help: "A line every tick until the target ends (waybar's and i3bar's continuous modes), instead of one answer.")
    var follow = false

    @Option(parsing: .unconditional, help: "With --follow: the interval of the lines, 100ms…10s.")
    var tick: Given<DurationValue> = "1s"

    @Option(parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Alert while this holds, as attach's --alert: \"cpu_percent > 80 for 20s\" (repeatable).", valueName: "EXPR"))
    var alert: [Given<String>] = []

    @Flag(help: "No colours (also when NO_COLOR is set).")
    var noColor = false

    @Flag(help: "With --restore: the status lines of this tmux session.")
    var tmux = false

    @Flag(help: "With --tmux: put back the status lines a perfhud --tmux that was killed left changed (the next perfhud --tmux does it too).")
    var restore = false

    /// With --follow: a group of processes (a one-shot answer is for a PID).
    @OptionGroup var group: GroupTargetOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("A running daemon's target, by its label: its rows read from the daemon (NAME.feed beside its event socket), not sampled again.",
                                                        valueName: "NAME"))
    var target: Given<String>?

    @Option(parsing: .unconditional, help: ArgumentHelp("With --target: the daemon's --events directory (default: /run/perfhud, then $XDG_RUNTIME_DIR/perfhud).", valueName: "DIR"))
    var events: Given<String>?

    /// The PID, and whatever else of the line is none of the options: refused in validate().
    @Argument(parsing: .allUnrecognized, help: "The process.")
    var pid: [String] = []

    func validate() throws {
        if tmux || restore {
            guard tmux && restore else { throw Refusal.because("status --tmux --restore puts back a tmux session's status lines: give both") }
            _ = try UsageMessage.arguments(pid, of: Self.self, named: [])
            return
        }
        _ = try request()
    }

    /// The command line read; a refusal (`Refusal`) for the first part that does not read.
    func request() throws -> StatusRequest {
        let group = try self.group.selector(in: "status")
        let tick = try self.tick.value("status --tick") { (100_000_000...10_000_000_000).contains($0.nanoseconds) }
        let format = try self.format.value("--format", in: "status")
        let alerts = try WatchOptions.alertRules(alert)
        if let given = self.target {
            let name = try given.value("--target", in: "status") { !$0.isEmpty }
            guard group == nil else { throw Refusal.because("status shows one target: --target or one of --match, --unit, --container, --cgroup and --pod") }
            guard alerts.isEmpty else { throw Refusal.because("--target shows the daemon's own alerts (its --alert): no --alert here") }
            _ = try UsageMessage.arguments(pid, of: Self.self, named: [])
            return StatusRequest(target: .pid(0), format: format, follow: follow, tickNanoseconds: tick.nanoseconds, alerts: [], color: !noColor,
                                 daemonTarget: (name, try events?.value("--events", in: "status") { !$0.isEmpty }))
        }
        if events != nil { throw Refusal.because("--events names a daemon's directory: it goes with --target") }
        let target: TargetSelector
        if let group {
            _ = try UsageMessage.arguments(pid, of: Self.self, named: [])
            guard follow else { throw Refusal.because("a group's status needs --follow (one answer is for a PID)") }
            target = group
        } else {
            guard let text = try UsageMessage.arguments(pid, of: Self.self, named: ["<pid>"])[0] else {
                throw Refusal.because(Accepted.complaint("<pid>", got: nil, in: "status"))
            }
            target = .pid(try Given<Int32>(argument: text).value("<pid>", in: "status") { $0 > 0 })
        }
        return StatusRequest(target: target, format: format, follow: follow, tickNanoseconds: tick.nanoseconds, alerts: alerts, color: !noColor)
    }

    func run() throws {
        if restore {
            let put = try TmuxStatusLines.restoreHere()
            print(put ? "perfhud: the status lines of this tmux session are as they were" : "perfhud: nothing to put back in this tmux session")
            try Perfhud.exit(with: .success)
        }
        try Perfhud.exit(with: request().run())
    }
}

/// What `perfhud status` was asked, however the line was read: by ArgumentParser (`StatusCommand`),
/// or by `fastPath` for the line a status bar runs every second.
struct StatusRequest {
    var target: TargetSelector
    var format: StatusFormat
    var follow: Bool
    var tickNanoseconds: UInt64
    var alerts: [AlertRule]
    var color: Bool
    /// `--target NAME [--events DIR]`: a daemon's target, its rows read from the daemon.
    var daemonTarget: (name: String, directory: String?)? = nil

    /// `status PID [--format F] [--alert EXPR]… [--no-color]`, read without ArgumentParser: its
    /// parse was most of the CPU a one-shot call took (it reflects over every option of the
    /// command), and a bar runs this line all day (Benchmarks/status_cost.py). Anything else —
    /// help, another option, a value that does not read — returns nil, and ArgumentParser reads the
    /// line as it reads any other, with the same messages.
    static func fastPath(_ words: ArraySlice<String>) -> StatusRequest? {
        var request = StatusRequest(target: .pid(0), format: .plain, follow: false, tickNanoseconds: 1_000_000_000, alerts: [], color: true)
        var pid: Int32?
        var index = words.startIndex
        func value(of word: String, named name: String) -> String?? {
            if word == name {
                index += 1
                return index < words.endIndex ? .some(words[index]) : .some(nil)
            }
            if word.hasPrefix(name + "=") { return .some(String(word.dropFirst(name.count + 1))) }
            return nil
        }
        while index < words.endIndex {
            let word = words[index]
            if let given = value(of: word, named: "--format") {
                guard let text = given, let format = StatusFormat(rawValue: text) else { return nil }
                request.format = format
            } else if let given = value(of: word, named: "--alert") {
                guard let text = given, !text.hasPrefix("-"), let rule = try? AlertRule(text) else { return nil }
                request.alerts.append(rule)
            } else if word == "--no-color" {
                request.color = false
            } else if pid == nil, let number = Int32(word), number > 0, word.first != "+" {
                pid = number
            } else {
                return nil
            }
            index += 1
        }
        guard let pid else { return nil }
        request.target = .pid(pid)
        return request
    }

    func run() throws -> ExitStatus {
        let color = color && !(getenv("NO_COLOR").map { $0.pointee != 0 } ?? false)
        if let daemonTarget { return try fromDaemon(daemonTarget, color: color) }
        guard follow else {
            guard case .pid(let pid) = target else { throw PerfHUDError(.usage, "a group's status needs --follow") }
            let answer = try StatusOnce.answer(pid: pid, alerts: alerts)
            let tick = answer.tick
            var line: String
            if format == .json {
                var row = ByteBuffer(capacity: 4096)
                RowFormatter.appendRow(tick, plan: RowFormatter.everyFigure, to: &row)
                line = row.withBytes { String(decoding: $0, as: UTF8.self) }
            } else {
                line = StatusText.line(tick.figures, commandName: tick.commandName, status: tick.status, events: nil, alerts: tick.alerts,
                                       note: answer.note, format: format, color: color)
            }
            line += "\n"
            _ = Array(line.utf8).withUnsafeBytes { SystemCall.write(STDOUT_FILENO, $0) }
            return .success
        }
        var configuration = SessionConfiguration()
        configuration.watch.tickNanoseconds = tickNanoseconds
        configuration.watch.historyNanoseconds = tickNanoseconds * 2
        configuration.watch.alerts = alerts
        configuration.output = .plain
        configuration.statusFormat = format
        configuration.style.color = color
        configuration.summary = false
        configuration.version = perfhudVersion
        return Session(target: .attach(target), configuration: configuration).run()
    }
}

extension StatusRequest {
    /// `--target NAME`: the daemon's last row of its target, or (`--follow`) each row it makes.
    func fromDaemon(_ target: (name: String, directory: String?), color: Bool) throws -> ExitStatus {
        let reader = try DaemonRowReader(target: target.name, directory: target.directory)
        var written = 0
        while let line = reader.nextLine(timeoutMilliseconds: follow ? -1 : 5000) {
            guard let row = ReadRow(json: line) else { continue }   // a notice of rows dropped
            var text = line
            if format != .json {
                text = StatusText.line(row.figures, commandName: row.commandName, status: row.status, events: row.events, alerts: row.alerts,
                                       note: nil, format: format, color: color)
                if follow { text = StatusText.lead(of: format, first: written == 0) + text }
            }
            text += "\n"
            guard case .success = Array(text.utf8).withUnsafeBytes({ SystemCall.write(STDOUT_FILENO, $0) }) else { return .success }
            written += 1
            if !follow { return .success }
        }
        if written == 0 { throw PerfHUDError(.unavailable, "the daemon's feed of \(FailCondition.quoted(target.name)) (\(reader.path)) sent no row") }
        return .success
    }
}

