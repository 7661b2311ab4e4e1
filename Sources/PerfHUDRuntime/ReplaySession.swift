import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDRender
import PerfHUDTerminal
import PerfHUDOutput
import PerfHUDRecordings

/// `perfhud replay FILE`: a recording played back through the live session's screen — status
/// line, memory graph coloured by phase, action log — or as the rows `--output plain|json`
/// printed live. The HUD is driven by a frame timer that moves a `ReplayPlayhead`; keys pause,
/// seek and change the speed.
public final class ReplaySession {
    public struct Configuration {
        public var output: SessionConfiguration.Output = .hud
        /// Playback speed; nil: 1 for the HUD, as fast as can be written for rows.
        public var speed: Double?
        public var style = HUDStyle()
        public var historyNanoseconds: UInt64 = WatchConfiguration().historyNanoseconds
        public var reportEveryNanoseconds: UInt64?
        /// The file's name, for the notices.
        public var path = ""
        /// `--output json` ends with the run's summary line (`--no-summary`: not).
        public var summary = true
        public init() {}
    }

    private let recording: Recording
    private let rows: RecordingRows
    private let configuration: Configuration
    private let tickNanoseconds: UInt64
    private let standardOutput = Terminal()
    private var finished = false
    private var exitStatus = ExitStatus.success

    public init(recording: Recording, configuration: Configuration) {
        self.recording = recording
        self.configuration = configuration
        rows = RecordingRows(recording)
        tickNanoseconds = UInt64(recording.tickSeconds * 1e9)
    }

    public func run() -> ExitStatus {
        guard !recording.samples.isEmpty else {
            Terminal(input: STDIN_FILENO, output: STDERR_FILENO).write("perfhud: \(configuration.path) has no samples to replay\n")
            return .data
        }
        let signals = SignalChannel()
        if configuration.output == .hud { playHUD(signals: signals) } else { writeRows(signals: signals) }
        return exitStatus
    }

    // MARK: rows

    /// Every row, as the live run printed them; paced by `--speed` when it is given.
    private func writeRows(signals: SignalChannel) {
        let writer = RowWriter(format: configuration.output, tickNanoseconds: tickNanoseconds,
                                  everyNanoseconds: configuration.reportEveryNanoseconds, output: standardOutput)
        writer.figures = Figure.inFormat(recording.format)
        let startedAt = monotonicNanoseconds()
        let first = recording.samples[0].t
        for tick in rows {
            // The exit row is written at once, whatever the interval, as it was live.
            if let speed = configuration.speed, !tick.isExitRow {
                let due = startedAt &+ UInt64(min(1e18, max(0, (tick.figures.elapsedSeconds - first) / speed * 1e9)))
                if !sleep(until: due, signals: signals) { exitStatus = .signaled(SIGINT); return }
            }
            writer.consume(tick)
            if writer.readerGone { return }
        }
        // As the live run ended its rows: with the run's summary (the recording's, the same figures).
        if configuration.output == .json && configuration.summary { writer.write(SummaryLine.line(for: recording)) }
    }

    /// Waits until `deadline` (monotonic); false when a signal asks to stop first.
    private func sleep(until deadline: UInt64, signals: SignalChannel) -> Bool {
        while true {
            let now = monotonicNanoseconds()
            if now >= deadline { return true }
            var slot = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0)]
            let wait = Int32(min(1000, (deadline - now + 999_999) / 1_000_000))
            if case .success(let ready) = SystemCall.poll(&slot, timeoutMilliseconds: wait), ready > 0, signals.drain().contains(where: { $0 != SIGWINCH && $0 != SIGCHLD && $0 != SIGCONT }) { return false }
        }
    }

    // MARK: the HUD

    private func playHUD(signals: SignalChannel) {
        let screen = Screen(device: standardOutput, style: configuration.style, ownsKeys: true)
        let samples = recording.samples
        var playhead = ReplayPlayhead(start: samples[0].t, end: samples[samples.count - 1].t, speed: configuration.speed ?? 1)
        let capacity = Int((configuration.historyNanoseconds + tickNanoseconds - 1) / tickNanoseconds)
        var cursor = ReplayCursor(rows: rows, capacity: capacity, historySeconds: Double(configuration.historyNanoseconds) / 1e9)
        _ = cursor.move(to: playhead.position)
        let pid = Int32(recording.meta["target_pid"] ?? "") ?? 0
        // The "why" figures are kept from format 4 on: an older file has none to show.
        let whySince = Figure[.cpu_wait_percent].since
        let detailsNote = recording.format < whySince
            ? "details: the why figures are not in this file (recording format \(recording.format); kept from format \(whySince) on)" : nil
        // The live HUD's sink: the rows the playhead passes are its ticks (notices, action log).
        let sink = ScreenSink(screen: screen, showsActionLog: true)
        if let tick = cursor.tick { sink.show(tick) }
        screen.snapshot = { [unowned self] in
            let ended = cursor.isAtLastSample ? recording.targetEnded : nil
            var snapshot = HUDSnapshot(latest: sink.latest, pid: pid, commandName: recording.meta["target_command"] ?? "", series: cursor.series,
                                       tickNanoseconds: tickNanoseconds, historyNanoseconds: configuration.historyNanoseconds,
                                       status: ended ?? .running, elapsedSeconds: cursor.sample?.t ?? 0)
            snapshot.playback = playhead.description
            snapshot.detailsNote = detailsNote
            return snapshot
        }
        screen.setUp()
        let command = recording.meta["target_command_line"] ?? recording.meta["target_command"] ?? "?"
        screen.notice("replaying \(TerminalText.escaped(configuration.path, maxLength: 60)), recorded \(recording.meta["started_at"] ?? "?"), "
                      + DurationText.clock(seconds: playhead.end - playhead.start) + " long")
        screen.notice("command line: " + TerminalText.escaped(command, maxLength: 400))
        for warning in recording.warnings { screen.notice("warning: " + TerminalText.escaped(warning)) }
        let readsKeys = Terminal.isTerminal(STDIN_FILENO)
        if readsKeys { screen.notice("space pauses, ←/→ seek 5 s (Shift: 60 s), Home/End, +/− speed, d details, q quits") }

        let timer = TickTimer(intervalNanoseconds: Screen.minimumFrameInterval)
        var slots = [pollfd](repeating: pollfd(fd: -1, events: Int16(POLLIN), revents: 0), count: 3)
        slots[0].fd = signals.descriptor
        slots[1].fd = timer.descriptor
        slots[2].fd = readsKeys ? STDIN_FILENO : -1
        var lastWake = monotonicNanoseconds()
        var buffer = [UInt8](repeating: 0, count: 256)
        while !finished {
            for index in slots.indices { slots[index].revents = 0 }
            guard case .success = SystemCall.poll(&slots) else { break }
            var seeked = false
            if slots[0].revents != 0 {
                for signal in signals.drain() {
                    switch signal {
                    case SIGWINCH: _ = screen.relayout()
                    case SIGTSTP:
                        screen.restore()
                        raise(SIGSTOP)
                        screen.resume()
                    case SIGCHLD, SIGCONT: break
                    default:
                        if signal != SIGINT { exitStatus = .signaled(signal) }
                        finished = true
                    }
                }
            }
            if slots[2].revents != 0 {
                var count = 0
                switch SystemCall.read(STDIN_FILENO, into: &buffer) {
                case .success(let read) where read > 0: count = read
                case .failure(.wouldBlock): break
                default: slots[2].fd = -1     // end of input, or it failed: no more keys
                }
                for key in ReplayKey.parse(Array(buffer[0..<count])) {
                    switch key {
                    case .quit: finished = true
                    case .pause: playhead.togglePause()
                    case .faster: playhead.faster()
                    case .slower: playhead.slower()
                    case .seek(let seconds): playhead.seek(by: seconds); seeked = true
                    case .start: playhead.seek(to: playhead.start); seeked = true
                    case .end: playhead.seek(to: playhead.end); seeked = true
                    case .details: screen.showsDetails.toggle(); _ = screen.relayout()
                    }
                }
                screen.invalidate()
            }
            if slots[1].revents != 0, timer.expirations() > 0 {
                let now = monotonicNanoseconds()
                let wasAtEnd = playhead.atEnd
                playhead.advance(realSeconds: Double(now &- lastWake) / 1e9)
                lastWake = now
                if !wasAtEnd || seeked { screen.invalidate() }
                // Without keys nobody can quit: the replay ends with the recording.
                if playhead.atEnd && !readsKeys && cursor.isAtLastSample { finished = true }
            }
            // Playing forward, the ticks passed go to the sink as the live ones did; a seek (or a
            // jump past the history) shows where it landed, and replays nothing on the way.
            let before = cursor.index
            let passed = cursor.move(to: playhead.position)
            if seeked || passed.isEmpty {
                if cursor.index != before, let tick = cursor.tick { sink.show(tick) }
            } else {
                for tick in passed { sink.consume(tick) }
            }
            if seeked { screen.draw(force: true) }
            if standardOutput.isClosed { break }
            screen.draw()
        }
        screen.drawFinalFrame()
        // As the live HUD ended: on the run's summary, made by the live run's code from the same
        // rows (the totals of the whole run, wherever the playhead stopped).
        screen.restore(thenWrite: summaryText())
    }

    /// The summary the live HUD printed at its end (`SessionSummary`, fed the recording's rows as
    /// it was fed the live ticks that became them).
    private func summaryText() -> String {
        let summary = SessionSummary(tickNanoseconds: tickNanoseconds, budget: recording.frameBudget)
        for tick in rows { summary.consume(tick) }
        return summary.text(commandName: recording.meta["target_command"] ?? "?", recordPath: nil)
    }
}
