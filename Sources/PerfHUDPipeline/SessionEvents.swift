#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore

/// What the program reports, for a HUD session and the daemon alike: the event socket and its
/// aggregator, the phases entered so far, frames and key latency read from a launched program's
/// terminal output, and actions read from its output (`--actions-from-output`).
public final class SessionEvents {
    public let aggregator: EventAggregator
    public private(set) var receiver: EventReceiver?
    /// The figures at the last tick; nil without an event socket (JSON then says null, not 0).
    public private(set) var snapshot: EventSnapshot?
    public private(set) var phases = PhaseHistory()
    /// The process whose RSS the phase probe reads, and its kept-open statm.
    private var probed: (pid: Int32, file: KeptOpenFile)?
    private var outputParser = ReducerLogParser()
    /// Frames and key latency from the program's terminal output (`run`, `--frames auto|tty`).
    private var terminalFrames: TerminalFrames?
    /// `run` gave the program the present hooks (GL/SDL preload, Vulkan layer): where no frame
    /// comes, the snapshot says why (`FramesUnreported`).
    package var presentHooksInjected = false
    private var latencies = LatencyWindow()
    /// The user's keys among what arrives on standard input (not the terminal's replies).
    private var typedKeys = TypedKeys()

    public init(configuration: EventConfiguration) {
        aggregator = EventAggregator(configuration: configuration)
    }

    /// Opens the event socket. An explicit `--events` path or `--statsd-udp` address that cannot
    /// be used is an error; trouble with the default path only costs the events, with a warning.
    /// - Parameters:
    ///   - pathPID: the PID the default path is named after.
    ///   - targetPID: whose descendants may send (with `--accept-from target`).
    ///   - warn: told each warning, one line each.
    ///   - defaultPolicy: who may send when `--accept-from` is not given (nil: the receiver's default).
    ///   - mode: the socket file's mode (the daemon's target may run as another user).
    ///   - required: the daemon cannot do without it: trouble with the default path is an error too.
    ///   - pool: whose thread receives (the daemon's targets share one); nil: a thread of its own.
    /// - Throws: `PerfHUDError` `.cannotCreate` (73).
    public func open(pathPID: Int32, targetPID: Int32, configuration: WatchConfiguration, defaultPolicy: AcceptPolicy? = nil,
                     mode: mode_t = 0o600, required: Bool = false, pool: EventReceiverPool? = nil, warn: (String) -> Void) throws {
        do {
            var path = configuration.eventsPath ?? ""
            if configuration.eventsPath == nil {
                let (defaultPath, warnings) = try EventReceiver.defaultPath(pid: pathPID)
                for warning in warnings { warn(required ? warning : "\(warning); using \(defaultPath)") }
                path = defaultPath
            }
            let opened = try EventReceiver(path: path, aggregator: aggregator, policy: configuration.acceptFrom ?? defaultPolicy,
                                           targetPID: targetPID, mode: mode)
            if let udp = configuration.statsdUDP { try opened.listenUDP(host: udp.host, port: udp.port) }
            if let pool { opened.start(in: pool) } else { opened.start() }
            receiver = opened
            snapshot = EventSnapshot()
        } catch let error as PerfHUDError {
            if required || configuration.eventsPath != nil || configuration.statsdUDP != nil { throw error }
            warn("no event socket (\(error.message)); CPU and memory only")
        }
    }

    /// A launched program is the target from now on. Unless `--events` named the path, the
    /// socket is also linked under the program's own PID, so it can find it as an attached
    /// program would.
    package func target(launchedPID pid: Int32, linkByPID: Bool) {
        receiver?.setTarget(pid: pid)
        if linkByPID, let path = receiver?.path {
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            receiver?.addLink(directory + "/\(pid).sock")
        }
    }

    /// Reads the target's RSS the moment a phase change arrives (on the receiving thread), so a
    /// phase's memory is measured at its edge, not at the next tick.
    /// The daemon calls it again when its target changes: the file of the process read before is
    /// closed once the probe no longer reads it (the setter takes the receiver's lock).
    public func measurePhasesOf(pid: Int32) {
        guard probed?.pid != pid else { return }
        let previous = probed
        if case .success(let statm) = KeptOpenFile.open("/proc/\(pid)/statm") {
            let pageSize = ProcessDirectory.pageSize
            aggregator.residentProbe = { statm.readStatm().map { $0.residentPages * pageSize } }
            probed = (pid, statm)
        } else {
            aggregator.residentProbe = nil
            probed = nil
        }
        previous?.file.close()
    }

    /// Takes the phase changes since the last tick and the figures now; after `stop()` too, so
    /// the last tick has what the socket held when the target ended.
    /// - Returns: the phases that ended and what each kept, for a notice.
    package func tick(now: UInt64, startNanoseconds: UInt64, residentBytes: UInt64?) -> [Tick.EndedPhase] {
        if let result = terminalFrames?.tick(at: now) { record(result, readAt: now) }
        guard snapshot != nil else { return [] }   // no event socket was opened
        var ended: [Tick.EndedPhase] = []
        for change in aggregator.drainPhaseChanges() {
            // A phase the program entered before the watch began (the demo's first, sent as it
            // starts) counts from the start: the wrapping difference was 18446744073 s.
            let time = change.monotonicNanoseconds > startNanoseconds ? Double(change.monotonicNanoseconds - startNanoseconds) / 1e9 : 0
            let leaving = phases.current
            phases.enter(change.name, at: time, residentBytes: change.residentBytes ?? residentBytes)
            if let leaving { ended.append(Tick.EndedPhase(name: leaving.name, keptBytes: phases.records.dropLast().last?.keptBytes)) }
        }
        refresh(at: now)
        return ended
    }

    /// Reads frames (and key-to-screen latency) from the program's terminal output from now on.
    package func readFrames(fromTerminalOutputWithGap gap: UInt64) { terminalFrames = TerminalFrames(quietNanoseconds: gap) }

    /// What the program wrote to its terminal: its frames, and its actions with `readActions`
    /// (`--actions-from-output`).
    package func programWrote(_ bytes: ArraySlice<UInt8>, readActions: Bool) {
        let now = monotonicNanoseconds()
        if readActions { aggregator.addActions(outputParser.feed(bytes), at: now) }
        if let result = terminalFrames?.output(bytes, at: now) {
            typedKeys.programWrote(bytes)
            record(result, readAt: now)
        }
    }

    /// Bytes from the terminal were sent to the program: the keys the user typed among them (not
    /// the terminal's replies) each wait for the next screen update — where the program answers
    /// them itself. With `echoed` (its terminal echoes input: cooked mode) the first thing shown
    /// after a key is the kernel's echo of it, shown for a program that reads no key at all (a
    /// game with a window of its own): no key-to-screen latency is counted for those keys.
    package func keysSent(_ bytes: [UInt8], echoed: Bool) {
        guard terminalFrames != nil else { return }
        let now = monotonicNanoseconds()
        let reading = typedKeys.read(bytes, at: now)
        if let withdrawn = reading.withdrawn { terminalFrames?.keyWithdrawn(sentAt: withdrawn) }
        guard !echoed else { return }
        for _ in 0..<min(reading.keys, TerminalFrames.maximumPendingKeys) { terminalFrames?.keySent(at: now) }
    }

    private func record(_ result: (frames: [TerminalFrames.Frame], latencies: [Double]), readAt now: UInt64) {
        aggregator.addFrames(result.frames.lazy.compactMap { frame in frame.milliseconds.map { (milliseconds: $0, end: frame.end) } },
                             source: .tty, arrival: now)
        for latency in result.latencies { latencies.add(latency) }
    }

    /// Stops the socket; what was queued is counted first (the next tick has it).
    public func stop() {
        guard let receiver else { return }
        receiver.stop()
        self.receiver = nil
    }

    private func refresh(at now: UInt64) {
        var current = aggregator.snapshot(at: now)
        current.inputLatencyP50 = latencies.percentile(50).atResolution(1000)
        current.inputLatencyP99 = latencies.percentile(99).atResolution(1000)
        current.framesUnreportedReason = FramesUnreported.reason(current, presentHooks: presentHooksInjected, readsTerminal: terminalFrames != nil,
                                                                 terminalDrawn: terminalFrames?.drawsScreen == true)
        snapshot = current
    }
}
