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
    /// The watched processes, as one sample source.
    private let group: TargetGroup
    /// Samples, events and the store: each tick one `Tick`.
    private let watcher: TargetWatcher
    public let metrics: DaemonMetrics
    /// Written to by `stop()`: the sampling loop polls it.
    private let wake: (read: Int32, write: Int32)
    /// Where the socket is also linked as `TARGET-PID.sock` (the default directory only), so a
    /// watched program finds it by its own PID as it would under `perfhud attach`.
    private var linkDirectory: String?
    /// `--record`: the recording, and the PID its metadata names.
    private var recorder: Recorder?, recordedPID: Int32 = 0
    /// The last tick with a target; nil while there is none.
    private var latest: Tick?
    private var warned = DaemonWarnings()
    /// When the target was last looked for, the journal last got a summary, systemd's watchdog last a ping.
    private var schedule = (discovery: UInt64(0), summary: UInt64(0), watchdog: UInt64(0), wasUp: false)

    public init(configuration: DaemonConfiguration, resolver: TargetResolver) {
        self.configuration = configuration
        self.resolver = resolver
        metrics = DaemonMetrics()
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)   // a signal handler writes to it: never block there
        wake = (ends[0], ends[1])
        group = TargetGroup(includeChildren: configuration.watch.includeChildren)
        let events = SessionEvents(configuration: configuration.watch.events)
        events.aggregator.frameObserver = { [metrics] seconds, weight in metrics.recordFrame(seconds: seconds, weight: weight) }
        watcher = TargetWatcher(source: group, events: events, pid: 0, capacity: configuration.watch.historyCapacity,
                                recording: configuration.recordPath != nil, fallbackName: "", leak: configuration.watch.leak)
        log.setContext(journalFields(pids: []))
    }

    private var events: SessionEvents { watcher.events }

    /// Opens the event socket (before READY=1). The target may run as another user: the socket
    /// is open to all, and the credential check (default: the target and its descendants)
    /// decides who may send.
    public func openEventSocket() throws {
        try events.open(pathPID: getpid(), targetPID: 0, configuration: configuration.watch, defaultPolicy: .target, mode: 0o666,
                        required: true) { [log] in log.warning($0) }
        if configuration.watch.eventsPath == nil, let path = events.receiver?.path, let slash = path.lastIndex(of: "/") {
            linkDirectory = String(path[..<slash])
        }
    }

    public var eventSocketPath: String? { events.receiver?.path }

    /// `--record FILE`: opened before READY=1, so a path that cannot be written stops the start.
    public func openRecording() throws {
        guard let path = configuration.recordPath else { return }
        let meta = Recorder.meta(version: configuration.version, pid: 0, command: "", commandLine: configuration.selector.description,
                                 tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events)
        let opened = try Recorder(path: path, meta: meta, startNanoseconds: watcher.store.startNanoseconds) { [log] in log.warning($0) }
        opened.maxBytes = configuration.recordMaxBytes
        recorder = opened
    }

    /// Removes the event socket again (when the daemon cannot start after all).
    public func closeEventSocket() { events.stop() }

    /// Says so in the log and to systemd once the HTTP port and the event socket are bound.
    public func announceReady(metricsAddress: String) {
        log.notice("watching \(configuration.selector.description); metrics on http://\(metricsAddress)/metrics; events on \(events.receiver?.path ?? "-")")
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
                let due = schedule.watchdog &+ interval
                let now = monotonicNanoseconds()
                timeout = due <= now ? 0 : Int32(min(1000, (due - now + 999_999) / 1_000_000))
            }
            guard case .success = SystemCall.poll(&descriptors, timeoutMilliseconds: timeout) else { break }
            if descriptors[0].revents != 0 { notifier.notify("STOPPING=1"); break }
            if descriptors[1].revents != 0, timer.expirations() > 0 { tick() }
            let now = monotonicNanoseconds()
            if let interval = notifier.watchdogInterval, now &- schedule.watchdog >= interval {
                notifier.notify("WATCHDOG=1")
                schedule.watchdog = now
            }
        }
        // The last interval is not lost: one more tick, with what the event socket still held, then the final line.
        tick(final: true)
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

    private func tick(final: Bool = false) {
        let started = monotonicNanoseconds()
        // A --pid or --pidfile target is looked for only while it is missing; a --match or
        // --unit group is rescanned every few seconds for members that come and go.
        let rescans: Bool
        switch configuration.selector {
        case .pid, .pidfile: rescans = false
        case .match, .unit: rescans = true
        }
        if started &- schedule.discovery >= configuration.discoveryNanoseconds && (group.isEmpty || rescans) {
            discover(now: started, force: group.isEmpty)
        }
        latest = watcher.tick(final: final, endedByPerfhud: final)
        for note in latest?.notes ?? [] { log.warning(note) }
        if group.isEmpty && schedule.wasUp {
            schedule.wasUp = false
            targetsChanged()
            log.warning("target went away (\(configuration.selector.description))")
            notifier.notify("STATUS=\(status())")
        }
        let snapshot = events.snapshot ?? EventSnapshot()
        if let recorder, let latest {
            if let pid = group.pids.first, pid != recordedPID {
                recordedPID = pid
                recorder.setMeta("target_pid", String(pid))
                recorder.setMeta("target_command", group.commandName)
            }
            recorder.record(latest)
        }
        for line in warned.check(events: snapshot, series: watcher.store.series, threshold: configuration.watch.events.actionThreshold) {
            log.warning(line)
        }
        let target = latest.map { tick in
            DaemonMetrics.Target(sample: tick.sample, report: tick.report, commandName: tick.commandName, pid: group.pids.first ?? 0,
                                 startTimeSeconds: group.startTicks.map { (ProcessDirectory.bootTime ?? 0) + Double($0) / Double(ProcessDirectory.ticksPerSecond) },
                                 ticksPerSecond: Double(ProcessDirectory.ticksPerSecond))
        }
        metrics.update(target: target, events: snapshot, actionTotals: events.aggregator.actionTotals(),
                       sampleSeconds: Double(monotonicNanoseconds() &- started) / 1e9,
                       droppedWrites: (log: log.dropped, notify: notifier.dropped))
        if started &- schedule.summary >= configuration.logIntervalNanoseconds {
            schedule.summary = started
            log.info(summary())
        }
    }

    private func discover(now: UInt64, force: Bool) {
        schedule.discovery = now
        switch resolver.resolve() {
        case .success(let pids):
            var changed = false
            for pid in pids where !group.contains(pid) {
                do {
                    group.add(try ProcessSampler(pid: pid, includeChildren: configuration.watch.includeChildren, directory: directory))
                    changed = true
                } catch {
                    noteReason((error as? PerfHUDError)?.message ?? "\(error)")
                }
            }
            // --match and --unit: processes that no longer belong are let go.
            if case .pid = configuration.selector {} else {
                for pid in group.pids where !pids.contains(pid) { group.retire(pid); changed = true }
            }
            if changed && !group.isEmpty {
                group.commandName = directory.describe(pid: group.pids[0])?.commandName ?? "?"
                targetsChanged()
                if !schedule.wasUp { log.notice("target is up: \(TargetGroup.listing(group.pids)) (\(TerminalText.escaped(group.commandName)))") }
                schedule.wasUp = true
                warned.targetFound()
                notifier.notify("STATUS=\(status())")
            }
        case .failure(let reason):
            if group.isEmpty { noteReason(reason.message) }
        }
    }

    /// Tells the event socket and the log who the target is now.
    private func targetsChanged() {
        let pids = group.pids
        events.receiver?.setTargets(pids)
        if let linkDirectory { events.receiver?.setLinks(pids.map { "\(linkDirectory)/\($0).sock" }) }
        // A phase's memory is read the moment its event arrives, from the group's first process.
        if let first = pids.first { events.measurePhasesOf(pid: first) }
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

    private func status() -> String {
        if group.isEmpty {
            return "waiting for \(configuration.selector.description)" + (warned.reason.isEmpty ? "" : ": \(warned.reason)")
        }
        return "watching \(TargetGroup.listing(group.pids)) (\(TerminalText.escaped(group.commandName)))"
    }

    private func summary() -> String {
        guard let latest else { return status() + "; target down" }
        let report = latest.report, events = latest.events ?? EventSnapshot()
        var parts = [status()]
        if let cpu = report.cpuPercent { parts.append("CPU " + Units.percent(cpu)) }
        if let rss = report.residentBytes { parts.append("RSS " + Units.bytes(Double(rss))) }
        parts.append("PSS " + (report.proportionalBytes.map { Units.bytes(Double($0)) } ?? "n/a"))
        if events.hasFrames { parts.append("FPS " + ReportFormatter.number(events.fps, decimals: 0)) }
        if events.hasActions { parts.append("actions " + ReportFormatter.number(events.actionsPerSecond, decimals: 0) + "/s") }
        parts.append("events \(events.received)")
        return parts.joined(separator: ", ")
    }
}
