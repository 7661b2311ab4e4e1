import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's sampling: watches one target headless, mirrors its figures into the metrics,
/// logs to the journal, pings systemd's watchdog.
///
/// Runs one poll loop on a thread of its own (ticks and the watchdog), as the HUD does; the event
/// socket has its own receiving thread; HTTP is SwiftNIO's. A missing target is normal:
/// `perfhud_target_up` is 0 and it is looked for again every `discoveryNanoseconds`.
public final class DaemonService: @unchecked Sendable {
    private let configuration: DaemonConfiguration
    private let resolver: TargetResolver
    private let log = DaemonLog()
    private let notifier = SystemdNotifier()
    private let directory = ProcessDirectory()
    private let aggregator: EventAggregator
    private var receiver: EventReceiver?
    /// Where the socket is also linked as `TARGET-PID.sock` (the default directory only), so a
    /// watched program finds it by its own PID as it would under `perfhud attach`.
    private var linkDirectory: String?
    public let metrics: DaemonMetrics
    /// Written to by `stop()`: the sampling loop polls it.
    private let wake: (read: Int32, write: Int32)

    // The watched group: one sampler per root process.
    private var samplers: [Int32: ProcessSampler] = [:]
    private var commandName = ""
    private var retired = (cpu: UInt64(0), user: UInt64(0), system: UInt64(0))
    private var lastCumulative: [Int32: (cpu: UInt64, user: UInt64, system: UInt64)] = [:]
    private var latest: Sample?
    private var report: Report?
    private var store: MetricsStore
    private var events = EventSnapshot()
    /// `--record`: the recording, and the phases it needs (the daemon shows none itself).
    private var recorder: Recorder?
    private var phases = PhaseHistory()
    private var recordedPID: Int32 = 0
    private var sampleDuration: Double = 0
    private var lastDiscovery: UInt64 = 0
    private var warned = DaemonWarnings()
    private var wasUp = false
    private var lastSummary: UInt64 = 0
    private var lastWatchdog: UInt64 = 0
    private let startedAt = monotonicNanoseconds()
    private let bootTime = ProcessDirectory.bootTime ?? 0
    private let ticksPerSecond = Double(ProcessDirectory.ticksPerSecond)

    public init(configuration: DaemonConfiguration, resolver: TargetResolver) {
        self.configuration = configuration
        self.resolver = resolver
        metrics = DaemonMetrics()
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)   // a signal handler writes to it: never block there
        wake = (ends[0], ends[1])
        aggregator = EventAggregator(configuration: configuration.watch.events)
        aggregator.frameObserver = { [metrics] seconds, weight in metrics.recordFrame(seconds: seconds, weight: weight) }
        store = MetricsStore(pid: 0, capacity: configuration.watch.historyCapacity, startNanoseconds: monotonicNanoseconds())
        log.setContext(journalFields(pids: []))
    }

    /// Opens the event socket (before READY=1). The target may run as another user: the socket
    /// is open to all, and the credential check (default: the target and its descendants)
    /// decides who may send.
    public func openEventSocket() throws {
        let path: String
        if let chosen = configuration.watch.eventsPath {
            path = chosen
        } else {
            let (defaultPath, warnings) = try EventReceiver.defaultPath(pid: getpid())
            for warning in warnings { log.warning(warning) }
            path = defaultPath
            linkDirectory = String(defaultPath[..<defaultPath.lastIndex(of: "/")!])
        }
        let opened = try EventReceiver(path: path, aggregator: aggregator, policy: configuration.watch.acceptFrom ?? .target,
                                       targetPID: 0, mode: 0o666)
        if let udp = configuration.watch.statsdUDP { try opened.listenUDP(host: udp.host, port: udp.port) }
        opened.start()
        receiver = opened
    }

    public var eventSocketPath: String? { receiver?.path }

    /// `--record FILE`: opened before READY=1, so a path that cannot be written stops the start.
    public func openRecording() throws {
        guard let path = configuration.recordPath else { return }
        let meta = Recorder.meta(version: configuration.version, pid: 0, command: "", commandLine: configuration.selector.description,
                                 tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events)
        let opened = try Recorder(path: path, meta: meta, startNanoseconds: store.startNanoseconds) { [log] in log.warning($0) }
        opened.maxBytes = configuration.recordMaxBytes
        aggregator.startRecording()
        recorder = opened
    }

    /// Removes the event socket again (when the daemon cannot start after all).
    public func closeEventSocket() {
        receiver?.stop()
        receiver = nil
    }

    /// Says so in the log and to systemd once the HTTP port and the event socket are bound.
    public func announceReady(metricsAddress: String) {
        log.notice("watching \(configuration.selector.description); metrics on http://\(metricsAddress)/metrics; events on \(receiver?.path ?? "-")")
        notifier.notify("READY=1\nSTATUS=\(status())")
    }

    /// Samples until `stop()`: blocking, on the calling thread.
    public func runLoop() {
        let timer = TickTimer(intervalNanoseconds: configuration.watch.tickNanoseconds)
        discover(now: monotonicNanoseconds(), force: true)
        tick()
        while true {
            var descriptors = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: timer.descriptor, events: Int16(POLLIN), revents: 0)]
            // Wake for the next watchdog ping on time, whatever the tick: a late ping is a restart.
            var timeout: Int32 = 1000
            if let interval = notifier.watchdogInterval {
                let due = lastWatchdog &+ interval
                let now = monotonicNanoseconds()
                timeout = due <= now ? 0 : Int32(min(1000, (due - now + 999_999) / 1_000_000))
            }
            if Glibc.poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 && errno != EINTR { break }
            if descriptors[0].revents != 0 { notifier.notify("STOPPING=1"); break }
            if descriptors[1].revents != 0, timer.expirations() > 0 { tick() }
            let now = monotonicNanoseconds()
            if let interval = notifier.watchdogInterval, now &- lastWatchdog >= interval {
                notifier.notify("WATCHDOG=1")
                lastWatchdog = now
            }
        }
        // The last interval is not lost: one more sample, then the final line.
        tick()
        receiver?.stop()
        recorder?.close()
        log.notice("stopping: " + summary())
    }

    /// Graceful stop: the loop ends after one last sample.
    public func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// What a stop signal's handler writes a byte to.
    public var wakeDescriptor: Int32 { wake.write }

    public func logError(_ message: String) { log.error(message) }

    // MARK: sampling

    private func tick() {
        let started = monotonicNanoseconds()
        // A --pid or --pidfile target is looked for only while it is missing; a --match or
        // --unit group is rescanned every few seconds for members that come and go.
        let rescans: Bool
        switch configuration.selector {
        case .pid, .pidfile: rescans = false
        case .match, .unit: rescans = true
        }
        if started &- lastDiscovery >= configuration.discoveryNanoseconds && (samplers.isEmpty || rescans) {
            discover(now: started, force: samplers.isEmpty)
        }
        var combined: Sample? = nil
        for (pid, sampler) in samplers {
            let sample = sampler.sample()
            guard sample.alive || (configuration.watch.includeChildren && sample.processCount > 0) else {
                retire(pid)
                continue
            }
            lastCumulative[pid] = (sample.cpuNanoseconds ?? 0, sample.userTicks ?? 0, sample.systemTicks ?? 0)
            combined = combined.map { Self.sum($0, sample) } ?? sample
        }
        if var group = combined {
            // Cumulative totals include the processes that left the group: counters never go back.
            group.cpuNanoseconds = (group.cpuNanoseconds ?? 0) &+ retired.cpu
            group.userTicks = (group.userTicks ?? 0) &+ retired.user
            group.systemTicks = (group.systemTicks ?? 0) &+ retired.system
            latest = group
            report = store.record(group)
        } else {
            latest = nil
            report = nil
        }
        if samplers.isEmpty && wasUp {
            wasUp = false
            targetsChanged()
            log.warning("target went away (\(configuration.selector.description))")
            notifier.notify("STATUS=\(status())")
        }
        let now = monotonicNanoseconds()
        events = aggregator.snapshot(at: now)
        _ = aggregator.drainLog()
        for change in aggregator.drainPhaseChanges() where recorder != nil {
            let time = Double(change.monotonicNanoseconds &- store.startNanoseconds) / 1e9
            phases.enter(change.name, at: max(0, time), residentBytes: change.residentBytes ?? latest?.residentBytes)
        }
        if let recorder, let report {
            if let pid = samplers.keys.min(), pid != recordedPID {
                recordedPID = pid
                recorder.setMeta("target_pid", String(pid))
                recorder.setMeta("target_command", commandName)
            }
            recorder.record(report, at: now, commandName: commandName, events: events, phases: phases, aggregator: aggregator)
        }
        warnings()
        sampleDuration = Double(monotonicNanoseconds() &- started) / 1e9
        let target = latest.map { sample in
            DaemonMetrics.Target(sample: sample, commandName: commandName, pid: samplers.keys.min() ?? 0,
                                 startTimeSeconds: samplers.values.map(\.startTicks).min().map { bootTime + Double($0) / ticksPerSecond },
                                 ticksPerSecond: ticksPerSecond)
        }
        metrics.update(target: target, events: events, actionTotals: aggregator.actionTotals(), sampleSeconds: sampleDuration,
                       droppedWrites: (log: log.dropped, notify: notifier.dropped))
        if now &- lastSummary >= configuration.logIntervalNanoseconds {
            lastSummary = now
            log.info(summary())
        }
    }

    private func retire(_ pid: Int32) {
        if let last = lastCumulative[pid] {
            retired.cpu &+= last.cpu; retired.user &+= last.user; retired.system &+= last.system
        }
        lastCumulative[pid] = nil
        samplers[pid] = nil
    }

    private func discover(now: UInt64, force: Bool) {
        lastDiscovery = now
        switch resolver.resolve() {
        case .success(let pids):
            var changed = false
            for pid in pids where samplers[pid] == nil {
                do {
                    samplers[pid] = try ProcessSampler(pid: pid, includeChildren: configuration.watch.includeChildren, directory: directory)
                    changed = true
                } catch {
                    noteReason((error as? PerfHUDError)?.message ?? "\(error)")
                }
            }
            // --match and --unit: processes that no longer belong are let go.
            if case .pid = configuration.selector {} else {
                for pid in samplers.keys where !pids.contains(pid) { retire(pid); changed = true }
            }
            if changed && !samplers.isEmpty {
                let first = samplers.keys.min()!
                commandName = directory.describe(pid: first)?.commandName ?? "?"
                targetsChanged()
                if !wasUp { log.notice("target is up: \(Self.listing(samplers.keys)) (\(TerminalText.escaped(commandName)))") }
                wasUp = true
                warned.targetFound()
                notifier.notify("STATUS=\(status())")
            }
        case .failure(let reason):
            if samplers.isEmpty { noteReason(reason.message) }
        }
    }

    /// Tells the event socket and the log who the target is now.
    private func targetsChanged() {
        let pids = samplers.keys.sorted()
        receiver?.setTargets(pids)
        if let linkDirectory { receiver?.setLinks(pids.map { "\(linkDirectory)/\($0).sock" }) }
        log.setContext(journalFields(pids: pids))
    }

    /// The structured fields of every journal entry: what is watched, and who it is now.
    private func journalFields(pids: [Int32]) -> [(name: String, value: String)] {
        var fields = [(name: "PERFHUD_TARGET", value: configuration.selector.description)]
        if let first = pids.first { fields.append((name: "PERFHUD_TARGET_PID", value: String(first))) }
        if case .unit(let unit) = configuration.selector { fields.append((name: "PERFHUD_UNIT", value: unit)) }
        return fields
    }

    /// Logs why the target is not there, once per reason.
    private func noteReason(_ reason: String) {
        guard warned.isNewReason(reason) else { return }
        log.notice("waiting for \(configuration.selector.description): \(reason)")
        notifier.notify("STATUS=\(status())")
    }

    private func warnings() {
        for line in warned.check(events: events, series: store.series, threshold: configuration.watch.events.actionThreshold) {
            log.warning(line)
        }
    }

    static func sum(_ a: Sample, _ b: Sample) -> Sample {
        func add(_ x: UInt64?, _ y: UInt64?) -> UInt64? { x.map { $0 &+ (y ?? 0) } ?? y }
        var result = a
        result.alive = a.alive || b.alive
        result.cpuNanoseconds = add(a.cpuNanoseconds, b.cpuNanoseconds)
        result.userTicks = add(a.userTicks, b.userTicks)
        result.systemTicks = add(a.systemTicks, b.systemTicks)
        result.residentBytes = add(a.residentBytes, b.residentBytes)
        result.virtualBytes = add(a.virtualBytes, b.virtualBytes)
        // PSS is known for the group only when known for every member.
        result.proportionalBytes = a.proportionalBytes.flatMap { x in b.proportionalBytes.map { x &+ $0 } }
        result.threads = (a.threads ?? 0) + (b.threads ?? 0)
        result.processCount = a.processCount + b.processCount
        return result
    }

    static func listing<S: Sequence>(_ pids: S) -> String where S.Element == Int32 {
        let sorted = pids.sorted()
        let shown = sorted.prefix(8).map { String($0) }.joined(separator: ", ")
        return (sorted.count == 1 ? "PID " : "PIDs ") + shown + (sorted.count > 8 ? ", …" : "")
    }

    private func status() -> String {
        if samplers.isEmpty {
            return "waiting for \(configuration.selector.description)" + (warned.reason.isEmpty ? "" : ": \(warned.reason)")
        }
        return "watching \(Self.listing(samplers.keys)) (\(TerminalText.escaped(commandName)))"
    }

    private func summary() -> String {
        guard let report, let sample = latest else { return status() + "; target down" }
        var parts = [status()]
        if let cpu = report.cpuPercent { parts.append("CPU " + Units.percent(cpu)) }
        if let rss = report.residentBytes { parts.append("RSS " + Units.bytes(Double(rss))) }
        parts.append("PSS " + (sample.proportionalBytes.map { Units.bytes(Double($0)) } ?? "n/a"))
        if events.hasFrames { parts.append("FPS " + ReportFormatter.number(events.fps, decimals: 0)) }
        if events.hasActions { parts.append("actions " + ReportFormatter.number(events.actionsPerSecond, decimals: 0) + "/s") }
        parts.append("events \(events.received)")
        return parts.joined(separator: ", ")
    }
}
