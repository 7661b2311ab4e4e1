import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDRender
import PerfHUDTerminal

/// `perfhud top`: the daemon's targets as a table on the alternate screen, one row each, scraped
/// from its `/metrics` every second (rates from two consecutive scrapes), sorted by a key; Enter
/// runs the HUD on the selected target as its row counts it (`perfhud attach PID`, with
/// `--include-children` for a target that is one process tree, `attach --match` or `--unit` for
/// a group) and comes back to the table
/// when it ends. Standard output that is not a terminal gets the table once, after two scrapes.
public final class TopSession {
    public struct Configuration {
        public var endpoint: MetricsEndpoint
        public var sort: TopSort = .cpu
        public var style = HUDStyle()
        public var intervalNanoseconds: UInt64 = 1_000_000_000
        /// The command that shows the HUD of a target (`perfhud attach …`); nil: Enter does nothing.
        public var hudCommand: ((HUDTarget) -> [String])?

        public init(endpoint: MetricsEndpoint) { self.endpoint = endpoint }
    }

    /// What Enter opens the HUD of, as the row counts it.
    public enum HUDTarget: Equatable {
        /// One process, or with `tree` its descendants too (`attach PID [--include-children]`).
        case process(Int32, tree: Bool)
        /// The daemon's group (`attach --match PATTERN` or `--unit UNIT`), each member with its
        /// descendants where the daemon counts them.
        case group(TopRow.Group, includeChildren: Bool)

        /// `PID 7`, `--match nginx`, `--unit web.service`: what the messages name.
        var named: String {
            switch self {
            case .process(let pid, _): return "PID \(pid)"
            case .group(.match(let pattern), _): return "--match " + TerminalText.escaped(pattern, maxLength: 40)
            case .group(.unit(let unit), _): return "--unit " + TerminalText.escaped(unit, maxLength: 40)
            case .group(.container(let container), _): return "--container " + TerminalText.escaped(container, maxLength: 40)
            case .group(.controlGroup(let path), _): return "--cgroup " + TerminalText.escaped(path, maxLength: 40)
            case .group(.pod(let pod), _): return "--pod " + TerminalText.escaped(pod, maxLength: 40)
            }
        }
    }

    private let configuration: Configuration
    private let terminal = Terminal()
    private var frames = FrameWriter()
    private var sort: TopSort
    private var previous: TopScrape?
    private var rows: [TopRow] = []
    private var selectedTarget: String?
    private var firstRow = 0
    private var message: String?
    private var size = TerminalSize(rows: 24, columns: 80)

    public init(configuration: Configuration) {
        self.configuration = configuration
        sort = configuration.sort
    }

    /// What `perfhud top` says when no daemon answers: why, and how to start one.
    public static func noDaemonMessage(_ endpoint: MetricsEndpoint, _ failure: MetricsEndpoint.Failure) -> String {
        switch failure {
        case .noAnswer(let why):
            return "no perfhud daemon answers at \(TerminalText.escaped(endpoint.text)) (\(why)): start one with "
                + "`perfhud daemon --pid PID` (or `systemctl start perfhud`), or name another with --from URL"
        case .badAnswer(let why):
            return "\(TerminalText.escaped(endpoint.text)) answered, but not with metrics (\(why))"
        }
    }

    public func run() -> ExitStatus {
        // The first scrape says whether there is a daemon at all: if not, one line and out.
        let first: TopScrape
        switch scrape() {
        case .success(let scrape): first = scrape
        case .failure(let failure):
            Terminal(output: STDERR_FILENO).write("perfhud: " + Self.noDaemonMessage(configuration.endpoint, failure) + "\n")
            return .unavailable
        }
        rows = TopRows.sorted(TopRows.rows(previous: nil, current: first), by: sort)
        previous = first
        guard Terminal.isTerminal(STDOUT_FILENO) else { return printOnce() }
        return interactive()
    }

    private func scrape() -> Result<TopScrape, MetricsEndpoint.Failure> {
        let time = monotonicNanoseconds()
        return configuration.endpoint.fetch().map { TopScrape(samples: PrometheusText.parse($0).samples, time: time) }
    }

    private func refresh() {
        switch scrape() {
        case .success(let current):
            rows = TopRows.sorted(TopRows.rows(previous: previous, current: current), by: sort)
            previous = current
            message = nil
        case .failure(let failure):
            message = Self.noDaemonMessage(configuration.endpoint, failure) + " (trying again every second)"
        }
    }

    // MARK: once, for a pipe

    private func printOnce() -> ExitStatus {
        var slot = [pollfd(fd: -1, events: 0, revents: 0)]
        _ = SystemCall.poll(&slot, timeoutMilliseconds: Int32(configuration.intervalNanoseconds / 1_000_000))
        refresh()
        if let message {
            Terminal(output: STDERR_FILENO).write("perfhud: \(message)\n")
            return .unavailable
        }
        var style = configuration.style
        style.color = false
        let width = terminal.size()?.columns ?? Int(getenv("COLUMNS").flatMap { Int(String(cString: $0)) } ?? 132)
        var screen = TopRenderer.Screen(rows: rows, selected: nil, sort: sort, source: configuration.endpoint.text)
        screen.message = ""
        let lines = TopRenderer.lines(screen, size: TerminalSize(rows: max(1, rows.count) + TopRenderer.chromeLines, columns: width), style: style)
        // No reverse video on a pipe: the titles line without its escapes.
        let text = lines.dropLast().map { $0.replacingEscapes().trailingBlanksTrimmed() }.joined(separator: "\n") + "\n"
        terminal.write(text)
        return .success
    }

    // MARK: the table

    private func interactive() -> ExitStatus {
        let signals = SignalChannel()
        let timer = TickTimer(intervalNanoseconds: configuration.intervalNanoseconds)
        let readsKeys = Terminal.isTerminal(STDIN_FILENO)
        setUp()
        if !readsKeys { message = "standard input is not a terminal: no keys (Ctrl-C quits)" }
        draw()
        var slots = [pollfd](repeating: pollfd(fd: -1, events: Int16(POLLIN), revents: 0), count: 3)
        slots[0].fd = signals.descriptor
        slots[1].fd = timer.descriptor
        slots[2].fd = readsKeys ? STDIN_FILENO : -1
        var buffer = [UInt8](repeating: 0, count: 256)
        var status = ExitStatus.success
        var finished = false
        while !finished {
            for index in slots.indices { slots[index].revents = 0 }
            guard case .success = SystemCall.poll(&slots) else { break }
            if slots[0].revents != 0 {
                for signal in signals.drain() {
                    switch signal {
                    case SIGWINCH: frames.invalidate()
                    case SIGTSTP:
                        restore()
                        raise(SIGSTOP)
                        setUp()
                    case SIGCHLD, SIGCONT: break
                    default:
                        if signal != SIGINT { status = .signaled(signal) }
                        finished = true
                    }
                }
            }
            if slots[1].revents != 0, timer.expirations() > 0 { refresh() }
            if slots[2].revents != 0 {
                var count = 0
                switch SystemCall.read(STDIN_FILENO, into: &buffer) {
                case .success(let read) where read > 0: count = read
                case .failure(.wouldBlock): break
                default: slots[2].fd = -1
                }
                for key in TopKey.parse(Array(buffer[0..<count])) {
                    switch key {
                    case .quit: finished = true
                    case .sort(let key):
                        sort = key
                        rows = TopRows.sorted(rows, by: sort)
                    case .up: move(by: -1)
                    case .down: move(by: 1)
                    case .pageUp: move(by: -max(1, size.rows - TopRenderer.chromeLines))
                    case .pageDown: move(by: max(1, size.rows - TopRenderer.chromeLines))
                    case .first: move(by: -rows.count)
                    case .last: move(by: rows.count)
                    case .open:
                        if let ending = openHUD(signals: signals) { status = ending; finished = true }
                        _ = timer.expirations()
                    }
                    if finished { break }
                }
            }
            if terminal.isClosed { break }
            if !finished { draw() }
        }
        restore()
        return status
    }

    /// The selected row's index: the selected target's, wherever the sort put it; else the first.
    private var selectedIndex: Int? {
        guard !rows.isEmpty else { return nil }
        return selectedTarget.flatMap { target in rows.firstIndex { $0.target == target } } ?? 0
    }

    private func move(by offset: Int) {
        guard let index = selectedIndex else { return }
        selectedTarget = rows[min(rows.count - 1, max(0, index + offset))].target
    }

    private func setUp() {
        terminal.enter(.keys)
        let restoring = ControlSequence.resetAttributes + ControlSequence.leaveAlternateScreen + ControlSequence.showCursor
        terminal.installCrashRestore(restoreSequence: restoring)
        terminal.write(ControlSequence.enterAlternateScreen + ControlSequence.hideCursor + ControlSequence.clearScreen)
        frames.invalidate()
    }

    /// The terminal as the HUD expects it — keys as typed, the cursor shown, a blank screen — but
    /// still the alternate screen: what the HUD draws and leaves at its end stays there, and the
    /// table is drawn over it when the HUD ends. Leaving it instead put the HUD on the shell's
    /// screen, where its last frame was found after `q` (issue 31).
    private func handOverScreen() {
        terminal.write(ControlSequence.resetAttributes + ControlSequence.clearScreen + ControlSequence.moveTo(row: 1) + ControlSequence.showCursor)
        terminal.restoreInput()
    }

    private func restore() {
        terminal.write(ControlSequence.resetAttributes + ControlSequence.leaveAlternateScreen + ControlSequence.showCursor)
        terminal.restoreInput()
    }

    private func draw() {
        size = terminal.size() ?? size
        let selected = selectedIndex
        let visible = max(1, size.rows - TopRenderer.chromeLines)
        if let selected {
            if selected < firstRow { firstRow = selected }
            if selected >= firstRow + visible { firstRow = selected - visible + 1 }
        }
        firstRow = max(0, min(firstRow, rows.count - visible))
        var screen = TopRenderer.Screen(rows: rows, selected: selected, sort: sort, source: configuration.endpoint.text, message: message)
        screen.firstRow = firstRow
        let lines = TopRenderer.lines(screen, size: size, style: configuration.style)
        let changes = frames.update(lines: lines, firstRow: 1)
        guard !changes.isEmpty else { return }
        terminal.write(ControlSequence.beginSynchronizedUpdate + changes + ControlSequence.endSynchronizedUpdate)
    }

    // MARK: Enter: the HUD of the selected target

    /// Runs the HUD on the selected target's PID with the terminal as it was before the table,
    /// and takes the table back when the HUD ends. The HUD gets the signals' default handling
    /// (ours are blocked for the signal descriptor); a Ctrl-C that ended it is its own, not ours.
    /// - Returns: how `top` ends, when a signal that ends it (SIGTERM, SIGHUP) came meanwhile.
    private func openHUD(signals: SignalChannel) -> ExitStatus? {
        guard let index = selectedIndex else { return nil }
        let row = rows[index]
        guard row.up, let pid = row.pid else {
            message = "\(TerminalText.escaped(row.target, maxLength: 40)) is down: no process to show"
            return nil
        }
        // The HUD must count what the row counts: the daemon's group as the daemon names it (every
        // process of a --match or a --unit), or its one process; each with its descendants where
        // the daemon counts them (`perfhud_target_info{include_children}`).
        let opened = row.group.map { HUDTarget.group($0, includeChildren: row.includesChildren) }
            ?? .process(pid, tree: row.includesChildren)
        guard let command = configuration.hudCommand?(opened) else { return nil }
        handOverScreen()
        let status = spawnAndWait(command)
        // The terminal's keys (Ctrl-C, Ctrl-Z, …) went to the HUD and to us alike: they were the HUD's.
        let ours = signals.drain().filter { ![SIGINT, SIGQUIT, SIGTSTP, SIGCONT, SIGCHLD, SIGWINCH].contains($0) }
        if let ending = ours.first { return .signaled(ending) }
        setUp()
        switch status {
        case .success(0): message = nil
        case .success(let code): message = "the HUD of \(opened.named) ended with status \(code)"
        case .failure(let why): message = "cannot open the HUD of \(opened.named): \(why.reason)"
        }
        refresh()
        return nil
    }

    private func spawnAndWait(_ command: [String]) -> Result<Int32, SpawnFailure> {
        var child: pid_t = 0
        let result = SignalChannel.withChildAttributes { attributes in
            withCStrings(command) { arguments in
                var arguments = arguments
                return posix_spawn(&child, command[0], nil, &attributes, &arguments, environ)
            }
        }
        guard result == 0 else { return .failure(SpawnFailure(reason: String(cString: strerror(result)))) }
        var status: Int32 = 0
        while true {
            switch SystemCall.waitpid(child, options: WUNTRACED) {
            case .success(let changed): status = changed.status
            case .failure(let error): return .failure(SpawnFailure(reason: "\(error)"))
            }
            // Ctrl-Z stopped the HUD (its SIGTSTP reached us too, blocked): stop with it, so that the
            // shell sees the job stopped, and continue it with us on `fg`.
            guard status & 0xFF == 0x7F else { break }
            raise(SIGSTOP)
            kill(child, SIGCONT)
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        if status & 0x7F == 0 { return .success((status >> 8) & 0xFF) }
        return .success(128 + (status & 0x7F))
    }
}

private struct SpawnFailure: Error {
    let reason: String
}

private extension String {
    func trailingBlanksTrimmed() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }

    /// Without its SGR escapes (`ESC [ … m`).
    func replacingEscapes() -> String {
        var result = ""
        var inEscape = false
        for scalar in unicodeScalars {
            if inEscape {
                if scalar.value >= 0x40 && scalar.value <= 0x7E && scalar != "[" { inEscape = false }
                continue
            }
            if scalar.value == 0x1B { inEscape = true; continue }
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
