import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// One run of perfhud: a target, its sampler and store, and the loop that ties every input —
/// tick, key, program output, signal, target exit — to one thread, one `poll`.
public final class Session {
    private let configuration: SessionConfiguration
    private let target: SessionTarget
    private let terminal = Terminal()
    private let errorStream = Terminal(input: STDIN_FILENO, output: STDERR_FILENO)
    private var sampler: ProcessSampler!
    private var store: MetricsStore!
    private var child: ChildProcess?
    private var commandName = ""
    private var status = TargetStatus.running
    private var drawsHUD: Bool { configuration.output == .hud }

    // Events from the program.
    private var receiver: EventReceiver?
    private var aggregator: EventAggregator
    private var events: EventSnapshot?
    private var phases = PhaseHistory()
    private var actionLog: (descriptor: Int32, isPipe: Bool)?
    private var actionLogParser = ReducerLogParser()
    private var lastActionLogCheck: UInt64 = 0
    private var outputLogParser = ReducerLogParser()
    private var pendingLog: [ActionLogEntry] = []
    private var pendingLogDropped = 0.0
    /// The log line that may still be rewritten: its label, count, and when it last grew.
    private var logFold: (label: String, count: Double, at: UInt64)?

    // Terminal state of the HUD.
    private var layout: ScreenLayout!
    private var frames = FrameWriter()
    private var translator = ProgramOutputTranslator(offset: 0, programRows: 24)
    private var hudDirty = true
    private var lastDraw: UInt64 = 0
    private var graph: (lines: [String], drawnAt: UInt64)?
    private var terminalReady = false
    private var needsRelayout = false

    // Loop state.
    private var reports = 0
    private var lastReport: UInt64 = 0
    private var startedAt: UInt64 = 0
    private var finished = false
    private var exitCode: Int32 = ExitStatus.success
    private var inputOpen = true
    private var programOutputOpen = false
    private var stoppedByUs = false
    /// One buffer for every read of the loop (program output, keys, the action log): allocated
    /// once, not per read or per tick.
    private var readBuffer = [UInt8](repeating: 0, count: 65536)

    public init(target: SessionTarget, configuration: SessionConfiguration) {
        self.target = target
        self.configuration = configuration
        aggregator = EventAggregator(configuration: configuration.events)
    }

    /// Runs until the target ends, the user quits, or `--duration` / `--count` is reached.
    /// - Returns: the exit code for the process.
    public func run() -> Int32 {
        let signals = SignalChannel()
        if let code = start() { receiver?.stop(); return code }
        let timer = TickTimer(intervalNanoseconds: configuration.tickNanoseconds)
        startedAt = monotonicNanoseconds()
        takeSample()

        // Fixed slots, allocated once; a descriptor of -1 is skipped by poll.
        let inputIndex = 2, programIndex = 3, exitIndex = 4, actionLogIndex = 5
        var descriptors = [pollfd](repeating: pollfd(fd: -1, events: Int16(POLLIN), revents: 0), count: 6)
        descriptors[0].fd = signals.descriptor
        descriptors[1].fd = timer.descriptor
        while !finished {
            descriptors[inputIndex].fd = inputOpen && watchesInput ? STDIN_FILENO : -1
            descriptors[programIndex].fd = programOutputOpen ? child!.master : -1
            descriptors[exitIndex].fd = child == nil && status == .running ? sampler.exitDescriptor : -1
            descriptors[actionLogIndex].fd = actionLog.map { $0.isPipe ? $0.descriptor : -1 } ?? -1
            for index in descriptors.indices { descriptors[index].revents = 0 }
            let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 { if errno == EINTR { continue }; break }

            if descriptors[0].revents != 0 { for signal in signals.drain() { handle(signal: signal) } }
            if descriptors[programIndex].revents != 0 { readProgramOutput() }
            if descriptors[inputIndex].revents != 0 { readInput() }
            if descriptors[exitIndex].revents != 0 { targetEnded(.exited(code: nil, signal: nil)) }
            if descriptors[actionLogIndex].revents != 0 { readActionLog() }
            if descriptors[1].revents != 0, timer.expirations() > 0 { takeSample() }
            if needsRelayout { relayout() }
            if drawsHUD && hudDirty && !finished { drawHUD(force: false) }
        }
        finish()
        return exitCode
    }

    /// Whether keys are read: by the HUD itself (attach, demo) only on a terminal; in `run`
    /// always, to pass them on. Decided once: `isatty` is a system call.
    private lazy var watchesInput: Bool = {
        let onTerminal = Terminal.isTerminal(STDIN_FILENO)
        switch target {
        case .attach: return drawsHUD && onTerminal
        case .launch(_, let ownsKeys): return ownsKeys ? drawsHUD && onTerminal : true
        }
    }()

    private var ownsKeys: Bool {
        if case .launch(_, let owns) = target { return owns }
        return true
    }

    // MARK: start

    /// Attaches or launches, prepares the terminal. Returns an exit code when it cannot start.
    private func start() -> Int32? {
        let directory = ProcessDirectory()
        let size = terminal.size() ?? TerminalSize(rows: 24, columns: 80)
        if drawsHUD { layout = ScreenLayout(size: size, style: configuration.style) }
        let pid: Int32
        switch target {
        case .attach(let attachPID):
            pid = attachPID
            if kill(pid, 0) != 0 && errno == ESRCH {
                errorStream.write("perfhud: no process with PID \(pid)\n")
                return ExitStatus.noInput
            }
            if let code = openEventSocket(pathPID: pid, targetPID: pid) { return code }
        case .launch(let command, _):
            if let code = openEventSocket(pathPID: getpid(), targetPID: getpid()) { return code }
            var settings = termios()
            let haveSettings = Terminal.isTerminal(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &settings) == 0
            let programSize = drawsHUD ? TerminalSize(rows: layout.programRows, columns: size.columns) : size
            do {
                let environment = receiver.map { ["PERFHUD_SOCKET": $0.path] } ?? [:]
                child = try ChildProcess(command: command, size: programSize, settings: haveSettings ? settings : nil,
                                         environment: environment)
            } catch {
                errorStream.write("perfhud: \(error)\n")
                return 127
            }
            pid = child!.pid
            programOutputOpen = true
            receiver?.setTarget(pid: pid)
            // The program can also find the socket by its own PID, as an attached one would.
            if configuration.eventsPath == nil, let path = receiver?.path {
                receiver?.addLink(path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/\(pid).sock")
            }
        }
        do {
            sampler = try ProcessSampler(pid: pid, includeChildren: configuration.includeChildren, directory: directory)
        } catch let error as AttachError {
            errorStream.write("perfhud: \(error.message)\n")
            if case .noSuchProcess = error { return ExitStatus.noInput }
            return ExitStatus.noPermission
        } catch {
            errorStream.write("perfhud: \(error)\n")
            return ExitStatus.software
        }
        if case .success(let statm) = KeptOpenFile.open("/proc/\(pid)/statm") {
            let pageSize = ProcessDirectory.pageSize
            aggregator.residentProbe = { statm.readStatm().map { $0.residentPages * pageSize } }
        }
        let description = directory.describe(pid: pid)
        commandName = description?.commandName ?? {
            if case .launch(let command, _) = target { return String(command[0].split(separator: "/").last ?? "") }
            return "?"
        }()
        if let code = openActionLog() { return code }
        store = MetricsStore(pid: pid, capacity: configuration.historyCapacity, startNanoseconds: monotonicNanoseconds())
        if drawsHUD {
            setUpTerminal()
            if case .attach = target, let description {
                notice("attached to PID \(pid) (\(TerminalText.escaped(description.commandName))), user \(TerminalText.escaped(description.user))")
                notice("command line: " + TerminalText.escaped(description.commandLine, maxLength: 400))
                notice("press q to quit")
            }
        }
        return nil
    }

    /// Opens the event socket. An explicit `--events` path that cannot be used is an error (exit
    /// 73); trouble with the default path only costs the events, with a warning.
    private func openEventSocket(pathPID: Int32, targetPID: Int32) -> Int32? {
        do {
            var path = configuration.eventsPath ?? ""
            if configuration.eventsPath == nil {
                let (defaultPath, warnings) = try EventReceiver.defaultPath(pid: pathPID)
                for warning in warnings { errorStream.write("perfhud: warning: \(warning); using \(defaultPath)\n") }
                path = defaultPath
            }
            let opened = try EventReceiver(path: path, aggregator: aggregator, policy: configuration.acceptFrom, targetPID: targetPID)
            if let udp = configuration.statsdUDP { try opened.listenUDP(host: udp.host, port: udp.port) }
            opened.start()
            receiver = opened
        } catch {
            if configuration.eventsPath != nil || configuration.statsdUDP != nil {
                errorStream.write("perfhud: \(error)\n")
                return ExitStatus.cannotCreate
            }
            errorStream.write("perfhud: warning: no event socket (\(error)); CPU and memory only\n")
        }
        return nil
    }

    /// Opens `--actions-from`: a file is followed as it grows (read every tick, like
    /// `tail -f`); a pipe or `-` (standard input) is read as data arrives.
    private func openActionLog() -> Int32? {
        guard let source = configuration.actionsFrom else { return nil }
        let descriptor = source == "-" ? dup(STDIN_FILENO) : open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = SystemError.current
            errorStream.write("perfhud: cannot read \(source): \(error)\n")
            return error == .permissionDenied ? ExitStatus.noPermission : ExitStatus.noInput
        }
        var status = stat()
        fstat(descriptor, &status)
        if status.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            errorStream.write("perfhud: cannot read \(source): it is a directory; --actions-from wants a reducer log file or -\n")
            return ExitStatus.noInput
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        actionLog = (descriptor, status.st_mode & S_IFMT != S_IFREG)
        if source == "-" { inputOpen = false }   // standard input carries the log, not keys
        return nil
    }

    private func readActionLog() {
        guard let log = actionLog else { return }
        while true {
            let count = read(log.descriptor, &readBuffer, readBuffer.count)
            if count > 0 {
                aggregator.addActions(actionLogParser.feed(readBuffer[0..<count]), at: monotonicNanoseconds())
                continue
            }
            if count == 0 && log.isPipe { close(log.descriptor); actionLog = nil }   // the writer is gone
            return
        }
    }

    /// Follows `--actions-from FILE` like `tail -F`, twice a second: a file truncated under us is
    /// read again from its start; one renamed away (rotation) or deleted and created anew is read
    /// to its end, then the file now at the path is opened and read from its start. While nothing
    /// is at the path, the open file is still followed.
    private func followActionLogPath() {
        let now = monotonicNanoseconds()
        guard now &- lastActionLogCheck >= 500_000_000, let log = actionLog, let path = configuration.actionsFrom else { return }
        lastActionLogCheck = now
        var opened = stat()
        guard fstat(log.descriptor, &opened) == 0 else { return }
        if lseek(log.descriptor, 0, SEEK_CUR) > opened.st_size {     // truncated
            lseek(log.descriptor, 0, SEEK_SET)
            actionLogParser = ReducerLogParser()
            readActionLog()
            return
        }
        var named = stat()
        guard stat(path, &named) == 0, named.st_mode & S_IFMT == S_IFREG,
              named.st_ino != opened.st_ino || named.st_dev != opened.st_dev else { return }
        let fresh = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fresh >= 0 else { return }
        readActionLog()                                               // what the old file still had
        close(log.descriptor)
        actionLog = (fresh, false)
        actionLogParser = ReducerLogParser()
        readActionLog()
    }

    // MARK: sampling and reports

    private func takeSample() {
        if let log = actionLog, !log.isPipe { readActionLog(); followActionLogPath() }
        let sample = sampler.sample()
        if receiver != nil { takeEvents(now: sample.monotonicNanoseconds, residentBytes: sample.residentBytes) }
        let report = store.record(sample, phase: phases.current?.id)
        if !sample.alive && status == .running && child == nil { targetEnded(.exited(code: nil, signal: nil)) }
        let now = sample.monotonicNanoseconds
        reports += 1
        if !drawsHUD {
            let every = configuration.reportEveryNanoseconds ?? configuration.tickNanoseconds
            if reports == 1 || now &- lastReport + configuration.tickNanoseconds / 2 >= every {
                lastReport = now
                emit(report)
            } else { reports -= 1 }
        } else {
            hudDirty = true
        }
        if let crash = configuration.crashAfterReports, reports >= crash { fatalError("crash requested by --crash-after") }
        if let count = configuration.count, reports >= count { stop() }
        if let duration = configuration.durationNanoseconds, now &- startedAt >= duration { stop() }
    }

    /// Phase changes and the action log since the last tick, and the event figures now.
    private func takeEvents(now: UInt64, residentBytes: UInt64?) {
        for change in aggregator.drainPhaseChanges() {
            let time = Double(change.monotonicNanoseconds &- store.startNanoseconds) / 1e9
            let leaving = phases.current
            phases.enter(change.name, at: max(0, time), residentBytes: change.residentBytes ?? residentBytes)
            if drawsHUD, let leaving, let kept = phases.records.dropLast().last?.keptBytes {
                notice("phase \(TerminalText.escaped(leaving.name)) ended, kept \(Units.bytes(Double(kept)))", style: "\u{1B}[36m")
            }
        }
        events = aggregator.snapshot(at: now)
        if drawsHUD, ownsKeys {
            let (entries, dropped) = aggregator.drainLog()
            showActionLog(entries, dropped: dropped)
        }
    }

    /// The action log in the scroll region. Repeats of a label less than a second apart fold into one
    /// line that is rewritten in place (`Slider.changed ×37`) rather than scrolling faster than
    /// anyone can read; high-frequency labels are highlighted. Held back while the program's
    /// output stops inside an escape sequence.
    private func showActionLog(_ entries: [ActionLogEntry], dropped: Double) {
        pendingLog += entries
        pendingLogDropped += dropped
        guard !pendingLog.isEmpty, translator.isAtBoundary, terminalReady else { return }
        let frequent = Set(events?.highFrequencyActions.map(\.action) ?? [])
        let now = monotonicNanoseconds()
        let limit = max(1, layout.programRows - 1)
        var output = ""
        let hidden = pendingLog.dropLast(limit).reduce(0) { $0 + $1.count } + pendingLogDropped
        if hidden > 0 {
            output += "… \(ReportFormatter.number(hidden, decimals: 0)) more actions\r\n"
            logFold = nil
        }
        for entry in pendingLog.suffix(limit) {
            var count = entry.count
            var rewrite = false
            if let fold = logFold, fold.label == entry.label, now &- fold.at < 1_000_000_000 {
                count += fold.count
                rewrite = true
            }
            var text = TerminalText.escaped(entry.label)
            if count != 1 { text += " ×" + ReportFormatter.number(count, decimals: 1) }
            if frequent.contains(entry.label) {
                text = configuration.style.color ? "\u{1B}[33m" + text + " (high-frequency)\u{1B}[0m" : text + " (high-frequency)"
            }
            // Up one line and erase it: the cursor sits at the start of the line after it.
            if rewrite { output += "\u{1B}[A\u{1B}[2K" }
            output += text + "\r\n"
            logFold = (entry.label, count, now)
        }
        pendingLog.removeAll(keepingCapacity: true)
        pendingLogDropped = 0
        terminal.write(output)
        hudDirty = true
    }

    private func emit(_ report: Report) {
        let line = configuration.output == .json
            ? ReportFormatter.json(report, commandName: commandName, status: status, events: receiver == nil ? nil : events)
            : ReportFormatter.plain(report, commandName: commandName, status: status, events: receiver == nil ? nil : events)
        terminal.write(line + "\n")
        if terminal.isClosed { finished = true }
    }

    /// Stops at the user's request or at `--duration` / `--count`; a launched program is ended.
    private func stop() {
        guard !finished else { return }
        if let child, status == .running {
            stoppedByUs = true
            child.signal(SIGTERM)
            var state = child.poll()
            for _ in 0..<200 where state == .running || state == .stopped {
                usleep(10_000); state = child.poll()
            }
            if state == .running || state == .stopped { child.signal(SIGKILL); state = child.poll(blocking: true) }
            drainProgramOutput()
            record(childState: state)
        }
        finished = true
    }

    private func targetEnded(_ newStatus: TargetStatus) {
        guard status == .running else { return }
        status = newStatus
        hudDirty = true
        if drawsHUD { notice("PID \(sampler.pid) (\(TerminalText.escaped(commandName))) \(newStatus.description)") }
        // The program's own end gets a last row saying how it ended; an end that `--count` or
        // `--duration` made (we sent the SIGTERM) does not: N rows mean N, and the last row stays
        // the last sample rather than a repeat of it with "exit_signal": 15.
        else if reports > 0, !stoppedByUs, let latest = store.latest { emit(latest) }
        finished = true
    }

    private func record(childState state: ChildProcess.State) {
        switch state {
        case .exited(let code):
            if !stoppedByUs { exitCode = code }
            targetEnded(.exited(code: code, signal: nil))
        case .killed(let signal):
            if !stoppedByUs { exitCode = 128 + signal }
            targetEnded(.exited(code: nil, signal: signal))
        default: break
        }
    }

    // MARK: signals and input

    private func handle(signal: Int32) {
        switch signal {
        case SIGWINCH:
            relayout()
        case SIGCHLD:
            guard let child else { return }
            let state = child.poll()
            if state == .stopped { return }
            if state != .running {
                drainProgramOutput()
                record(childState: state)
            }
        case SIGTSTP:
            suspend()
        case SIGCONT:
            break
        default: // SIGINT, SIGTERM, SIGHUP, SIGQUIT
            if let child, !ownsKeys {
                // `run`: the program decides; its exit status becomes ours.
                child.signal(signal)
                if signal == SIGHUP { terminalClosed() }
            } else {
                if signal != SIGINT { exitCode = 128 + signal }
                if signal == SIGHUP { terminalClosed() }
                stop()
            }
        }
    }

    private func terminalClosed() { inputOpen = false }

    private func readInput() {
        let count = read(STDIN_FILENO, &readBuffer, readBuffer.count)
        if count <= 0 {
            if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
            inputOpen = false
            return
        }
        let bytes = Array(readBuffer[0..<count])
        if ownsKeys {
            if bytes.contains(UInt8(ascii: "q")) || bytes.contains(UInt8(ascii: "Q")) { stop() }
            return
        }
        guard let child else { return }
        if drawsHUD, bytes.count == 1, child.suspendsOn(bytes[0]) { suspend(); return }
        let forwarded = drawsHUD ? translator.translateInput(bytes) : bytes
        forwarded.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(child.master, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { if errno == EINTR || errno == EAGAIN { continue }; break }
                offset += written
            }
        }
    }

    private func readProgramOutput() {
        guard let child else { return }
        let count = read(child.master, &readBuffer, readBuffer.count)
        if count <= 0 {
            if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
            // EIO: every holder of the terminal has closed it. The program may still run (it
            // can close its terminal and go on): its end then arrives as SIGCHLD.
            programOutputOpen = false
            record(childState: child.poll())
            return
        }
        showProgramOutput(readBuffer[0..<count])
    }

    /// Reads what the program wrote before it ended, so that its last lines are not lost.
    private func drainProgramOutput() {
        guard let child, programOutputOpen else { return }
        let flags = fcntl(child.master, F_GETFL)
        _ = fcntl(child.master, F_SETFL, flags | O_NONBLOCK)
        while true {
            let count = read(child.master, &readBuffer, readBuffer.count)
            if count <= 0 { break }
            showProgramOutput(readBuffer[0..<count])
        }
        programOutputOpen = false
    }

    private func showProgramOutput(_ bytes: ArraySlice<UInt8>) {
        if configuration.actionsFromOutput {
            aggregator.addActions(outputLogParser.feed(bytes), at: monotonicNanoseconds())
        }
        logFold = nil   // the program wrote after the last log line: that line is no longer ours
        guard drawsHUD else {
            // Plain and JSON own stdout: the program's output goes to stderr.
            errorStream.write(Array(bytes))
            return
        }
        var output: [UInt8] = Array(ControlSequence.beginSynchronizedUpdate.utf8)
        output.reserveCapacity(bytes.count + 512)
        let effects = translator.translate(bytes, into: &output)
        if effects.contains(.terminalReset) {
            output += Array(ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom).utf8)
            output += Array(ControlSequence.moveTo(row: layout.programTop).utf8)
        }
        if effects.contains(.hudDamaged) { frames.invalidate(); hudDirty = true }
        if hudDirty && translator.isAtBoundary { output += Array(hudBytes(force: false).utf8) }
        output += Array(ControlSequence.endSynchronizedUpdate.utf8)
        terminal.write(output)
    }

    // MARK: terminal

    private func setUpTerminal() {
        terminal.enter(ownsKeys ? .keys : .raw)
        var setup = ControlSequence.clearScreen
        if ownsKeys { setup += ControlSequence.hideCursor }
        setup += ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom)
        setup += ControlSequence.moveTo(row: layout.programTop)
        translator = ProgramOutputTranslator(offset: layout.programOffset, programRows: layout.programRows)
        frames.invalidate()
        terminal.write(setup)
        if !terminalReady { terminal.installCrashRestore(restoreSequence: restoreSequence()) }
        terminal.updateCrashRestore(restoreSequence: restoreSequence())
        terminalReady = true
        hudDirty = true
    }

    /// What puts the terminal back: no scroll region, cursor shown, attributes reset. With the
    /// HUD on top the cursor stays where the program left it, so the shell prompt follows its
    /// output and the HUD's last frame stays readable above; with the HUD at the bottom the
    /// cursor goes below it. (DECSTBM homes the cursor, hence the save and restore around it.)
    private func restoreSequence() -> String {
        var sequence = ControlSequence.endSynchronizedUpdate + ControlSequence.resetAttributes
        if translator.alternateScreen { sequence += ControlSequence.leaveAlternateScreen }
        if layout?.position == .bottom {
            sequence += ControlSequence.resetScrollRegion + ControlSequence.moveTo(row: layout.size.rows) + "\r\n"
        } else {
            sequence += ControlSequence.saveCursor + ControlSequence.resetScrollRegion + ControlSequence.restoreCursor
        }
        return sequence + ControlSequence.showCursor
    }

    private func restoreTerminal() {
        guard terminalReady else { return }
        terminalReady = false
        terminal.write(restoreSequence())
        terminal.restoreInput()
    }

    /// A resize: new layout, the program's terminal resized, region and HUD redrawn in one write.
    /// Deferred while the program's output stops inside an escape sequence or string, where our
    /// bytes would be taken as part of it.
    private func relayout() {
        guard drawsHUD, terminalReady else { return }
        guard translator.isAtBoundary else { needsRelayout = true; return }
        needsRelayout = false
        guard let size = terminal.size() else { return }
        layout = ScreenLayout(size: size, style: configuration.style)
        translator.offset = layout.programOffset
        translator.programRows = layout.programRows
        child?.resize(TerminalSize(rows: layout.programRows, columns: size.columns))
        var bytes = ControlSequence.beginSynchronizedUpdate + ControlSequence.saveCursor
        bytes += ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom)
        bytes += ControlSequence.restoreCursor
        bytes += hudBytes(force: true)
        bytes += ControlSequence.endSynchronizedUpdate
        terminal.write(bytes)
        terminal.updateCrashRestore(restoreSequence: restoreSequence())
    }

    /// Ctrl-Z: give the terminal back, stop (with the program), and take it again on `fg`.
    private func suspend() {
        child?.signal(SIGSTOP)
        restoreTerminal()
        raise(SIGSTOP)           // not blockable: the shell sees us stopped; SIGCONT resumes here
        if drawsHUD {
            if let size = terminal.size() { layout = ScreenLayout(size: size, style: configuration.style) }
            let alternate = translator.alternateScreen
            setUpTerminal()
            if alternate { terminal.write("\u{1B}[?1049h") }
            child?.resize(TerminalSize(rows: layout.programRows, columns: layout.size.columns))
            drawHUD(force: true)
        }
        child?.signal(SIGCONT)
    }

    private func notice(_ text: String, style: String = "\u{1B}[2m") {
        guard drawsHUD, terminalReady else { return }
        logFold = nil
        // Into the program's area, as one line.
        let styled = configuration.style.color || style == "\u{1B}[2m" ? style : ""
        terminal.write(styled + "perfhud: " + text + "\u{1B}[0m\r\n")
    }

    private func hudBytes(force: Bool) -> String {
        if force { frames.invalidate() }
        var snapshot = HUDSnapshot(pid: sampler.pid, commandName: commandName, report: store.latest, series: store.series,
                                   tickNanoseconds: configuration.tickNanoseconds,
                                   historySeconds: Double(configuration.historyNanoseconds) / 1e9, status: status,
                                   elapsedSeconds: Double(monotonicNanoseconds() &- startedAt) / 1e9)
        snapshot.events = receiver == nil ? nil : events
        snapshot.phases = phases
        let now = monotonicNanoseconds()
        let graphInterval = UInt64(HUDRenderer.graphRefreshInterval(snapshot, size: layout.size) * 1e9)
        if force || graph == nil || now &- graph!.drawnAt >= graphInterval || status != .running {
            graph = (HUDRenderer.graphLines(snapshot, size: layout.size, style: configuration.style), now)
        }
        let lines = HUDRenderer.render(snapshot, size: layout.size, style: configuration.style, graph: graph?.lines)
        let changes = frames.update(lines: lines, firstRow: layout.hudFirstRow)
        hudDirty = false
        lastDraw = monotonicNanoseconds()
        guard !changes.isEmpty else { return "" }
        var bytes = ControlSequence.saveCursor + ControlSequence.hideCursor + changes + ControlSequence.restoreCursor
        if translator.cursorVisible && !ownsKeys { bytes += ControlSequence.showCursor }
        return bytes
    }

    /// Draws the HUD, at most 20 times a second unless forced: nobody reads faster, and with
    /// `--tick 1ms` the drawing would cost more than the sampling.
    private func drawHUD(force: Bool) {
        guard terminalReady, translator.isAtBoundary else { return }
        if !force && monotonicNanoseconds() &- lastDraw < 50_000_000 && status == .running { return }
        let bytes = hudBytes(force: force)
        guard !bytes.isEmpty else { return }
        terminal.write(ControlSequence.beginSynchronizedUpdate + bytes + ControlSequence.endSynchronizedUpdate)
    }

    private func finish() {
        receiver?.stop()
        if drawsHUD && terminalReady {
            takeFinalSample()
            hudDirty = true
            lastDraw = 0
            drawHUD(force: false)
        }
        restoreTerminal()
    }

    private func takeFinalSample() {
        guard status == .running else { return }
        store.record(sampler.sample())
    }
}
