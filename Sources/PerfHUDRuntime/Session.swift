import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDStore
import PerfHUDPipeline
import PerfHUDRender
import PerfHUDTerminal
import PerfHUDOutput
import PerfHUDRecordings

/// One run of `attach`, `run` or `demo`: the loop that ties every input — tick, key, program
/// output, signal, target exit, action log — to one thread and one `poll`. Each tick is taken by
/// the `TargetWatcher` and handed, as one `Tick`, to every sink: the screen (HUD) or the rows
/// (plain, JSON), the end summary, the recording. What is written to the terminal belongs to
/// `Screen`, the launched program's life to `LaunchedProgram`, the events to `SessionEvents`.
public final class Session {
    /// `showsDetails` changes with `d`; the rest is as the command line said.
    private var configuration: SessionConfiguration
    private let target: SessionTarget
    private let standardOutput = Terminal()
    private let standardError = Terminal(input: STDIN_FILENO, output: STDERR_FILENO)
    /// The HUD or the rows, the recording, the summary: where each tick goes.
    private let sinks: TickSinks
    private var screen: Screen? { sinks.screen }
    private let events: SessionEvents
    /// The HUD reads keys itself (attach, demo) instead of passing them to a program (run).
    private let ownsKeys: Bool
    private var program: LaunchedProgram?, actionLog: ActionLogFollower?
    /// `--tmux`: the session's status lines, put back when the session ends.
    private var tmuxLines: TmuxStatusLines?
    private var watched: WatchedProcesses!, watcher: TargetWatcher!
    /// How the session stands.
    private var state = State()
    private struct State {
        var status = TargetStatus.running
        var startedAt: UInt64 = 0
        var finished = false, exitStatus = ExitStatus.success
        var keysOpen = true
        /// The program ended because perfhud stopped it (`q`, `--count`, `--duration`): its status is not ours.
        var stoppedByUs = false
        /// What made perfhud stop (`--duration 3s`, `--count 5`, `q`, `SIGTERM`), for the end notice and summary.
        var stopReason: String?
        /// How perfhud ended the program it launched, said under its output at the end.
        var ending: String?
        /// The sampler's count of execs the recording's target already names.
        var execsRecorded = 0
    }
    /// When the session began, as a recording's `started_at` says it (RFC 3339).
    private let startedAt = RowFormatter.rfc3339(wallClockSeconds())
    /// One buffer for every read of the loop (program output, keys): allocated once.
    private var readBuffer = [UInt8](repeating: 0, count: 65536)

    public init(target: SessionTarget, configuration: SessionConfiguration) {
        self.target = target
        self.configuration = configuration
        events = SessionEvents(configuration: configuration.watch.events)
        if case .launch(_, let owns) = target { ownsKeys = owns } else { ownsKeys = true }
        sinks = TickSinks(configuration: configuration, output: standardOutput, showsActionLog: ownsKeys)
    }

    /// Runs until the target ends, the user quits, or `--duration` / `--count` is reached.
    /// - Returns: perfhud's exit status: 0, the launched program's, or a `PerfHUDError`'s.
    public func run() -> ExitStatus {
        let signals = SignalChannel()
        do {
            try start()
        } catch {
            events.stop()
            let failure = error as? PerfHUDError ?? PerfHUDError(.software, "\(error)")
            standardError.write("perfhud: \(failure.message)\n")
            return failure.exitStatus
        }
        var ticks = TickSchedule(intervalNanoseconds: configuration.watch.tickNanoseconds)
        state.startedAt = monotonicNanoseconds()
        takeSample()
        StartupPages.release()   // after the first row, so it is not delayed
        // Fixed slots, allocated once; a descriptor of -1 is skipped by poll.
        // The ticks are the wait's deadline (`TickSchedule`), not a descriptor.
        let signalSlot = 0, keySlot = 1, outputSlot = 2, exitSlot = 3, actionLogSlot = 4
        var slots = [pollfd](repeating: pollfd(fd: -1, events: Int16(POLLIN), revents: 0), count: 5)
        slots[signalSlot].fd = signals.descriptor
        // Keys are read by the HUD itself only on a terminal; in `run` always, to pass them on.
        let readsKeys = ownsKeys ? screen != nil && Terminal.isTerminal(STDIN_FILENO) : true
        while !state.finished {
            // Input waiting for room in the program's terminal: no more is read until it is taken.
            let inputWaits = program?.hasPendingInput == true
            slots[keySlot].fd = state.keysOpen && readsKeys && !inputWaits ? STDIN_FILENO : -1
            slots[outputSlot].fd = program.map { $0.outputOpen ? $0.master : -1 } ?? -1
            slots[outputSlot].events = Int16(POLLIN) | (inputWaits ? Int16(POLLOUT) : 0)
            // attach: the target's end. run: the program's end, held until its last figures are read.
            slots[exitSlot].fd = state.status != .running ? -1 : program.map { $0.endHeld ? $0.endDescriptor : -1 } ?? watched.exitDescriptor
            slots[actionLogSlot].fd = actionLog?.pollDescriptor ?? -1
            for index in slots.indices { slots[index].revents = 0 }
            guard case .success = SystemCall.poll(&slots, until: ticks.deadline) else { break }

            if slots[signalSlot].revents != 0 { for signal in signals.drain() { handle(signal: signal) } }
            if slots[outputSlot].revents & Int16(POLLOUT) != 0 { program?.flushInput() }
            if slots[outputSlot].revents & ~Int16(POLLOUT) != 0 { readProgramOutput() }
            if slots[keySlot].revents != 0 { readKeys() }
            if slots[exitSlot].revents != 0 { endSeen() }
            if slots[actionLogSlot].revents != 0 { actionLog?.read(into: events.aggregator) }
            if ticks.expirations() > 0, !state.finished { takeSample() }
            if let screen {
                if screen.needsRelayout { relayout() }
                if !state.finished { screen.draw() }
            }
        }
        finish()
        return state.exitStatus
    }

    /// Attaches or launches, opens the event socket and the action log, takes the terminal.
    private func start() throws {
        let warn = { (text: String) in self.standardError.write("perfhud: warning: \(text)\n") }
        let pid: Int32
        let directory = ProcessDirectory()
        var group: AttachedGroup?
        switch target {
        case .attach(.pid(let attachPID)):
            pid = attachPID
            if kill(pid, 0) != 0 && errno == ESRCH { throw PerfHUDError(.noInput, "no process with PID \(pid)") }
            try events.open(pathPID: pid, targetPID: pid, configuration: configuration.watch, warn: warn)
        case .attach(let selector):
            group = try AttachedGroup(selector: selector, includeChildren: configuration.watch.includeChildren, directory: directory)
            pid = group!.pid
            try events.open(pathPID: pid, targetPID: pid, configuration: configuration.watch, warn: warn)
        case .launch(let command, _):
            try events.open(pathPID: getpid(), targetPID: getpid(), configuration: configuration.watch, warn: warn)
            let launched = try ProgramLauncher.launch(command, isRun: !ownsKeys, configuration: configuration, events: events,
                                                      size: screen?.programSize ?? standardOutput.size() ?? TerminalSize(rows: 24, columns: 80),
                                                      drawsHUD: screen != nil, keyboard: standardError, warn: warn)
            program = launched
            pid = launched.pid
        }
        if let group {
            watched = group
        } else {
            let sampler = try ProcessSampler(pid: pid, includeChildren: configuration.watch.includeChildren, directory: directory,
                                             controlGroup: program?.controlGroup)
            // The GPU is read on a thread of its own, once a second (`GPUMonitor`); a tick takes its last reading.
            sampler.gpu = GPUWatch()
            // So is the network (`NetworkMonitor`); the last row waits for one more pass, for the last bytes.
            sampler.net = NetworkWatch()
            program?.onEnd = { [unowned sampler] in sampler.noteEnd() }
            program?.watched()
            if let program { sampler.startedAtNanoseconds = program.launchedAtNanoseconds }   // exact, where /proc's is in 10 ms ticks
            watched = sampler
        }
        events.measurePhasesOf(pid: pid)
        let description = directory.describe(pid: pid)
        watcher = TargetWatcher(source: watched, events: events, pid: pid, capacity: configuration.watch.historyCapacity,
                                fallbackName: target.launchedName, leak: configuration.watch.leak)
        sinks.sessionStarts(at: watcher.store.startNanoseconds)
        // A HUD that shows none of the "why" figures and records nothing does not read their files.
        watched.collectsActivity = configuration.collectsActivity
        let commandName = watcher.commandName
        let kernelThread = watched.isKernelThread ? "PID \(pid) (\(TerminalText.escaped(commandName))) is a kernel thread: its CPU time is shown; it has no memory of its own (RSS n/a)" : nil
        if let kernelThread, screen == nil { warn(kernelThread) }
        if let path = configuration.actionsFrom {
            actionLog = try ActionLogFollower(path: path)
            if path == "-" {   // standard input carries the log, not keys: the program reads none
                state.keysOpen = false
                if !ownsKeys, !Terminal.isTerminal(STDIN_FILENO) { program?.endInput() }
            }
        }
        sinks.recorder = try configuration.recordPath.map { try Recorder(path: $0, session: configuration, pid: pid, command: commandName, commandLine: description?.commandLine,
                                                                  startNanoseconds: watcher.store.startNanoseconds, warn: warn) }
        sinks.feed = try configuration.feedPath.map { try RowFeed(path: $0) }
        // Every sink is known now (the recorder and the feed last): the ticks carry every frame where one reads them.
        watcher.keepsEveryFrame = sinks.readsEveryFrame
        guard let screen else { return }
        screen.snapshot = { [unowned self] in
            var snapshot = HUDSnapshot(latest: sinks.latest, pid: pid, commandName: watcher.commandName, series: watcher.store.series,
                                       tickNanoseconds: configuration.watch.tickNanoseconds, historyNanoseconds: configuration.watch.historyNanoseconds,
                                       status: state.status, elapsedSeconds: Double(monotonicNanoseconds() &- state.startedAt) / 1e9)
            if case .attach = target { snapshot.framesNote = "frames not reported" }   // nothing can be injected
            if watched.isKernelThread { snapshot.memoryNote = "none: a kernel thread has no memory of its own" }
            return snapshot
        }
        screen.targetRunning = { [unowned self] in state.status == .running }
        if configuration.style.inTmux {
            var style = configuration.style
            style.inTmux = false
            style.showsDetails = false
            style.graphRows = min(style.graphRows, TmuxStatusLines.maximumLines - 2)
            let height = HUDRenderer.height(for: TerminalSize(rows: 30, columns: 80), style: style)
            let lines = try TmuxStatusLines(lines: height)
            tmuxLines = lines
            screen.elsewhere = (lines.width, style, { lines.show($0) })
        }
        screen.setUp()
        if let group {
            screen.notice("attached to \(TerminalText.escaped(group.named)): \(group.listing) (\(TerminalText.escaped(commandName)))")
            screen.notice("press q to quit, d to show or hide the details line")
        } else if case .attach = target, let description { screen.noticeAttached(to: description) }
        if let kernelThread { screen.notice(kernelThread) }
    }

    // MARK: sampling and reports

    private func takeSample() {
        if program?.hasEndedUnreaped == true { return endSeen() }   // its exit row, not a dead row before it
        actionLog?.tick(into: events.aggregator)
        let tick = watcher.tick()
        // No process to read (attached to one that vanished before its end was seen): what the
        // event stream brought still reaches the sinks; no row is written for it.
        if tick.status == .absent { return deliver(tick) }
        // The target ended between two ticks (attach): the last tick says so, with what the socket still held.
        if !tick.figures.alive && state.status == .running && program == nil { return targetEnded(.exited(code: nil, signal: nil)) }
        deliver(tick)
        recordExec()
        if let crash = configuration.crashAfterReports, sinks.reports >= crash { fatalError("crash requested by --crash-after") }
        if let count = configuration.count, sinks.reports >= count { stop(because: "--count \(count)") }
        if let duration = configuration.durationNanoseconds, tick.monotonicNanoseconds &- state.startedAt >= duration {
            stop(because: "--duration " + DurationText.format(nanoseconds: duration))
        }
    }

    /// After an exec (a launcher script, a pyenv shim, exec'ing the real program), the recording
    /// names the program that now runs and its command line: that is what was measured.
    private func recordExec() {
        guard let recorder = sinks.recorder, watched.execsSeen != state.execsRecorded else { return }
        state.execsRecorded = watched.execsSeen
        recorder.setMeta("target_command", watcher.commandName)
        if let line = watched.commandLine { recorder.setMeta("target_command_line", line) }
    }

    private func deliver(_ tick: Tick) {
        sinks.deliver(tick)
        if sinks.readerGone { state.finished = true }
    }

    /// The session's last tick, once: the event socket drained first, so every sink has the same totals.
    private func deliverFinalTick() {
        guard !sinks.deliveredFinal,
              let tick = watcher?.tick(status: state.status, final: true, endedByPerfhud: state.stoppedByUs || state.status == .running)
        else { return }
        deliver(tick)
    }

    /// Stops at the user's request or at `--duration` / `--count`; a launched program is ended:
    /// SIGTERM, then SIGKILL after the grace (`--grace`), its output shown meanwhile.
    private func stop(because reason: String) {
        guard !state.finished else { return }
        state.stoppedByUs = true
        state.stopReason = reason
        if let program, state.status == .running {
            let grace = configuration.graceNanoseconds
            let stopped = program.stop(graceNanoseconds: grace) {
                program.readPendingOutput(into: &readBuffer) { showProgramOutput($0) }
            }
            state.ending = Self.ending(stopped, grace: grace)
            readProgramOutput(draining: true)
            programEnded(stopped.state)
        }
        state.finished = true
    }

    /// "SIGTERM, it exited (status 0)", "SIGTERM, then SIGKILL: still running after the 2s grace (--grace)".
    package static func ending(_ stopped: LaunchedProgram.Stopped, grace: UInt64) -> String {
        if stopped.killedAfterGrace {
            return "SIGTERM, then SIGKILL: still running after the \(DurationText.format(nanoseconds: grace)) grace (--grace)"
        }
        switch stopped.state {
        case .exited(let code): return "SIGTERM, on which it exited (status \(code))"
        case .killed(let signal) where signal == SIGTERM: return "SIGTERM, which ended it"
        case .killed(let signal): return "SIGTERM, then it was killed by signal \(signal)"
        case .running, .stopped: return "SIGTERM"
        }
    }

    /// The target ended (or perfhud ended it): the last tick, with how it ended, goes to every sink.
    private func targetEnded(_ newStatus: TargetStatus) {
        guard state.status == .running else { return }
        state.status = newStatus
        deliverFinalTick()
        var notice = "\(watched.named) (\(TerminalText.escaped(watcher.commandName))) \(newStatus.description)"
            + (sinks.latest?.figures.oomKillText.map { ": " + $0 } ?? "")
        if let ending = state.ending, let reason = state.stopReason { notice = "\(watched.named) (\(TerminalText.escaped(watcher.commandName))) ended by perfhud at \(reason): \(ending)" }
        screen?.notice(notice, kind: .end)
        state.finished = true
    }

    /// The target's end is readable: attach's target ended (its last tick now, while it may still
    /// be a zombie its parent has not reaped); run's program ended (its total read, then the
    /// leader, released, reaps it and ends as it did: waited for, a moment, so that no tick comes
    /// between the end and the exit row).
    private func endSeen() {
        guard let program else { return targetEnded(.exited(code: nil, signal: nil)) }
        let programState = program.poll(blocking: true)
        if programState.hasEnded {
            readProgramOutput(draining: true)
            programEnded(programState)
        }
    }

    private func programEnded(_ programState: LaunchedProgram.State) {
        guard let ended = programState.targetStatus else { return }
        if !state.stoppedByUs, let code = programState.exitStatus { state.exitStatus = code }
        targetEnded(ended)
    }

    private func finish() {
        deliverFinalTick()      // perfhud ended the session (attach: `q`, `--count`, `--duration`; a reader gone)
        events.stop()
        sinks.writeSummaryLine(startedAt: sinks.recorder?.startedAt ?? startedAt)
        sinks.closeRecording()
        standardError.restoreInput()
        if let screen {
            screen.drawFinalFrame()
            tmuxLines?.restore()
            // Who ended the program, and so why perfhud's status is not the program's.
            let ending = state.ending.map { how in
                "perfhud ended \(TerminalText.escaped(sinks.latestCommandName ?? watcher.commandName)) at \(state.stopReason ?? "its end"): \(how)"
                    + (state.exitStatus == .success ? "; exit status 0 (ended on purpose)" : "")
            }
            screen.restore(thenWrite: sinks.summaryText(commandName: watcher.commandName, recordPath: configuration.recordPath, ending: ending) ?? "")
        }
    }

    private func handle(signal: Int32) {
        switch signal {
        case SIGWINCH:
            // Under --tmux the lines are as wide as the session's window, which the pane's size follows.
            if let tmuxLines, let width = tmuxLines.currentWidth() { screen?.elsewhere?.width = width }
            relayout()
        case SIGCHLD:
            guard let program else { return }
            let programState = program.poll()
            if programState.hasEnded {
                readProgramOutput(draining: true)
                programEnded(programState)
            } else if programState == .stopped && program.isStopped {
                suspend(programStoppedItself: true)
            }
        case SIGTSTP:
            suspend(programStoppedItself: false)
        case SIGCONT: break
        default: // SIGINT, SIGTERM, SIGHUP, SIGQUIT
            if signal == SIGHUP { state.keysOpen = false }   // the terminal is gone
            if let program, !ownsKeys {
                program.signal(signal)     // `run`: the program decides; its exit status becomes ours
            } else {
                if signal != SIGINT { state.exitStatus = .signaled(signal) }
                stop(because: signal == SIGINT ? "Ctrl-C" : signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "signal \(signal)")
            }
        }
    }

    private func readKeys() {
        let count: Int
        switch SystemCall.read(STDIN_FILENO, into: &readBuffer) {
        case .success(let read) where read > 0: count = read
        case .failure(.wouldBlock): return
        default:   // end of input, or it failed: no more keys
            state.keysOpen = false
            // `run` with input from a pipe or a file: the program's input ends with it.
            if !ownsKeys, !Terminal.isTerminal(STDIN_FILENO) { program?.endInput() }
            return
        }
        let keys = Array(readBuffer[0..<count])
        if ownsKeys {
            if keys.contains(UInt8(ascii: "q")) || keys.contains(UInt8(ascii: "Q")) { stop(because: "q") }
            for key in keys where key == UInt8(ascii: "d") { toggleDetails() }
            return
        }
        // Ctrl-Z too: the program's terminal turns it into SIGTSTP (or the program reads it, as
        // vim does), the program stops itself, and perfhud follows (see `suspend`).
        events.keysSent(keys, echoed: program?.terminalEchoes ?? false)
        program?.forward(keys: screen?.translateInput(keys) ?? keys)
    }

    /// `d`: the details line shown or hidden, and the "why" figures read only while something
    /// shows or records them (hidden, they cost nothing).
    private func toggleDetails() {
        guard let screen else { return }
        configuration.showsDetails.toggle()
        watched.collectsActivity = configuration.collectsActivity
        screen.showsDetails = configuration.showsDetails
        relayout()
    }

    /// What the program wrote; `draining` after its end: all of it, so its last lines are not lost.
    private func readProgramOutput(draining: Bool = false) {
        guard let program else { return }
        if draining { return program.drainOutput(into: &readBuffer) { showProgramOutput($0) } }
        switch program.readOutput(into: &readBuffer) {
        case .bytes(let count): showProgramOutput(readBuffer[0..<count])
        case .nothing: break
        case .closed: programEnded(program.poll())
        }
    }

    private func showProgramOutput(_ bytes: ArraySlice<UInt8>) {
        events.programWrote(bytes, readActions: configuration.actionsFromOutput)
        // Plain and JSON own standard output: the program's output goes to standard error.
        guard let screen else { standardError.write(Array(bytes)); return }
        if screen.showProgramOutput(bytes) { program?.forward(keys: Array(ControlSequence.synchronizedOutputSupported.utf8)) }
    }

    private func relayout() {
        guard let size = screen?.relayout() else { return }
        program?.resize(size)
    }

    /// Ctrl-Z: the program stopped itself (SIGTSTP from its terminal, or vim's own) and perfhud
    /// follows, or perfhud was stopped (SIGTSTP) and stops the program too. On `fg` the program is
    /// continued and repaints: itself after SIGTSTP (ncurses), on SIGWINCH after SIGSTOP.
    private func suspend(programStoppedItself: Bool) {
        if programStoppedItself {
            program?.readPendingOutput(into: &readBuffer) { showProgramOutput($0) }   // it left its screen
        } else {
            program?.signal(SIGSTOP)
        }
        screen?.restore()
        standardError.restoreInput()
        raise(SIGSTOP)           // not blockable: the shell sees us stopped; SIGCONT resumes here
        standardError.reenter()
        if let screen {
            screen.resume()
            program?.resize(screen.programSize)
        }
        program?.signal(SIGCONT)
        if !programStoppedItself { program?.signal(SIGWINCH) }
    }
}
