#if canImport(Glibc)
import Glibc
#endif

/// `perfhud daemon`: watches one target headless until stopped, serves Prometheus metrics, logs
/// to the journal, and speaks systemd's notify protocol.
///
/// One thread runs one poll loop — ticks, signals, HTTP connections — as the HUD does; the event
/// socket has its own receiving thread. A missing target is normal: `perfhud_target_up` is 0
/// and it is looked for again every `discoveryNanoseconds`.
public final class DaemonService {
    private let configuration: DaemonConfiguration
    private let resolver: TargetResolver
    private let log = DaemonLog()
    private let notifier = SystemdNotifier()
    private let directory = ProcessDirectory()
    private let aggregator: EventAggregator
    private var receiver: EventReceiver?
    private var server: MetricsHTTPServer!

    // The watched group: one sampler per root process.
    private var samplers: [Int32: ProcessSampler] = [:]
    private var commandName = ""
    private var retired = (cpu: UInt64(0), user: UInt64(0), system: UInt64(0))
    private var lastCumulative: [Int32: (cpu: UInt64, user: UInt64, system: UInt64)] = [:]
    private var latest: Sample?
    private var report: Report?
    private var store: MetricsStore
    private var events = EventSnapshot()
    private var sampleDuration: Double = 0
    private var lastDiscovery: UInt64 = 0
    private var lastReason = ""
    private var wasUp = false
    private var lastSummary: UInt64 = 0
    private var lastWatchdog: UInt64 = 0
    private var highFrequencyKnown = Set<String>()
    private var growthWarned = false
    private var stopping = false
    private let startedAt = monotonicNanoseconds()
    private let bootTime = ProcessDirectory.bootTime ?? 0
    private let ticksPerSecond = Double(ProcessDirectory.ticksPerSecond)

    public init(configuration: DaemonConfiguration, resolver: TargetResolver) {
        self.configuration = configuration
        self.resolver = resolver
        aggregator = EventAggregator(configuration: configuration.events)
        let capacity = Int(configuration.historyNanoseconds / max(1, configuration.tickNanoseconds))
        store = MetricsStore(pid: 0, capacity: max(2, capacity), startNanoseconds: monotonicNanoseconds())
    }

    /// Runs until SIGTERM or SIGINT; returns the exit code.
    public func run() -> Int32 {
        let signals = SignalChannel()
        do {
            server = try MetricsHTTPServer(host: configuration.listenHost, port: configuration.listenPort)
        } catch {
            log.error("\(error)")
            return 69   // EX_UNAVAILABLE
        }
        do {
            let path = try configuration.eventsPath ?? EventReceiver.defaultPath(pid: getpid()).path
            // The target may run as another user: the socket is open to all, the credential
            // check (default: the target and its descendants) decides who may send.
            let opened = try EventReceiver(path: path, aggregator: aggregator, policy: configuration.acceptFrom ?? .target,
                                           targetPID: 0, mode: 0o666)
            if let udp = configuration.statsdUDP { try opened.listenUDP(host: udp.host, port: udp.port) }
            opened.start()
            receiver = opened
        } catch {
            log.error("\(error)")
            return ExitStatus.cannotCreate
        }
        defer { receiver?.stop() }
        let timer = TickTimer(intervalNanoseconds: configuration.tickNanoseconds)
        discover(now: monotonicNanoseconds(), force: true)
        tick()
        log.notice("watching \(configuration.selector.description); metrics on http://\(server.address)/metrics; events on \(receiver?.path ?? "-")")
        notifier.notify("READY=1\nSTATUS=\(status())")

        while !stopping {
            var descriptors = [pollfd(fd: signals.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: timer.descriptor, events: Int16(POLLIN), revents: 0)]
            descriptors += server.descriptors()
            // Wake for the next watchdog ping on time, whatever the tick: a late ping is a restart.
            var timeout: Int32 = 1000
            if let interval = notifier.watchdogInterval {
                let due = lastWatchdog &+ interval
                let now = monotonicNanoseconds()
                timeout = due <= now ? 0 : Int32(min(1000, (due - now + 999_999) / 1_000_000))
            }
            if Glibc.poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 && errno != EINTR { break }
            let now = monotonicNanoseconds()
            if descriptors[0].revents != 0 {
                for signal in signals.drain() where signal == SIGTERM || signal == SIGINT || signal == SIGHUP || signal == SIGQUIT {
                    stopping = true
                }
            }
            if descriptors[1].revents != 0, timer.expirations() > 0 { tick() }
            for descriptor in descriptors.dropFirst(2) {
                server.handle(descriptor, now: now) { self.respond(path: $0) }
            }
            server.expire(now: now)
            if let interval = notifier.watchdogInterval, now &- lastWatchdog >= interval {
                notifier.notify("WATCHDOG=1")
                lastWatchdog = now
            }
        }
        notifier.notify("STOPPING=1")
        tick()
        log.notice("stopping: " + summary())
        return ExitStatus.success
    }

    // MARK: sampling

    private func tick() {
        let started = monotonicNanoseconds()
        if samplers.isEmpty || started &- lastDiscovery >= configuration.discoveryNanoseconds {
            discover(now: started, force: samplers.isEmpty)
        }
        var combined: Sample? = nil
        for (pid, sampler) in samplers {
            let sample = sampler.sample()
            guard sample.alive || (configuration.includeChildren && sample.processCount > 0) else {
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
            log.warning("target went away (\(configuration.selector.description))")
            notifier.notify("STATUS=\(status())")
        }
        let now = monotonicNanoseconds()
        sampleDuration = Double(now &- started) / 1e9
        events = aggregator.snapshot(at: now)
        _ = aggregator.drainLog()
        _ = aggregator.drainPhaseChanges()
        warnings()
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
                    samplers[pid] = try ProcessSampler(pid: pid, includeChildren: configuration.includeChildren, directory: directory)
                    changed = true
                } catch let error as AttachError {
                    noteReason(error.message)
                } catch {}
            }
            // --match and --unit: processes that no longer belong are let go.
            if case .pid = configuration.selector {} else {
                for pid in samplers.keys where !pids.contains(pid) { retire(pid); changed = true }
            }
            if changed && !samplers.isEmpty {
                let first = samplers.keys.min()!
                commandName = directory.describe(pid: first)?.commandName ?? "?"
                receiver?.setTargets(Array(samplers.keys))
                if !wasUp { log.notice("target is up: \(Self.listing(samplers.keys)) (\(TerminalText.escaped(commandName)))") }
                wasUp = true
                lastReason = ""
                notifier.notify("STATUS=\(status())")
            }
        case .failure(let reason):
            if samplers.isEmpty { noteReason(reason.description) }
        }
    }

    /// Logs why the target is not there, once per reason.
    private func noteReason(_ reason: String) {
        guard reason != lastReason else { return }
        lastReason = reason
        log.notice("waiting for \(configuration.selector.description): \(reason)")
        notifier.notify("STATUS=\(status())")
    }

    private func warnings() {
        let current = Set(events.highFrequencyActions.filter { $0.rate > 0 }.map(\.action))
        for action in current.subtracting(highFrequencyKnown) {
            let rate = events.highFrequencyActions.first { $0.action == action }?.rate ?? 0
            log.warning("high-frequency action \(action): \(Int(rate))/s (threshold \(Int(configuration.events.actionThreshold))/s)")
        }
        highFrequencyKnown = current
        guard let growth = MemoryGrowth.steadyGrowth(in: store.series) else { growthWarned = false; return }
        if !growthWarned {
            log.warning("memory keeps growing: RSS \(Units.bytes(growth.current)), \(Units.signedBytes(growth.increase)) in 5 minutes")
        }
        growthWarned = true
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
            return "waiting for \(configuration.selector.description)" + (lastReason.isEmpty ? "" : ": \(lastReason)")
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

    // MARK: HTTP

    private func respond(path: String) -> MetricsHTTPServer.Response {
        switch path {
        case "/metrics":
            return .init(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics())
        case "/", "":
            return .init(status: 200, contentType: "text/html; charset=utf-8",
                         body: "<html><body><h1>perfhud</h1><p><a href=\"/metrics\">/metrics</a></p></body></html>\n")
        default:
            return .init(status: 404, body: "not found\n")
        }
    }

    /// The exposition, computed from the latest tick.
    public func metrics() -> String {
        var out = PrometheusExposition()
        let up = latest != nil
        out.single("perfhud_target_up", .gauge, "Whether the watched target is running and readable (1) or not (0).", up ? 1 : 0)
        if up, let sample = latest {
            out.family("perfhud_target_info", .gauge, "The watched target: its command name and (first) PID.")
            out.sample("perfhud_target_info", [("comm", commandName), ("pid", String(samplers.keys.min() ?? 0))], 1)
            out.family("perfhud_target_cpu_seconds_total", .counter, "CPU time of the target (and descendants with --include-children), by mode.")
            out.sample("perfhud_target_cpu_seconds_total", [("mode", "user")], Double(sample.userTicks ?? 0) / ticksPerSecond)
            out.sample("perfhud_target_cpu_seconds_total", [("mode", "system")], Double(sample.systemTicks ?? 0) / ticksPerSecond)
            out.single("perfhud_target_resident_memory_bytes", .gauge, "Resident set size (statm resident pages × page size).", sample.residentBytes.map { Double($0) })
            out.single("perfhud_target_proportional_memory_bytes", .gauge, "Proportional set size (smaps_rollup Pss); absent where it may not be read.", sample.proportionalBytes.map { Double($0) })
            out.single("perfhud_target_virtual_memory_bytes", .gauge, "Virtual memory size.", sample.virtualBytes.map { Double($0) })
            out.single("perfhud_target_threads", .gauge, "Threads of the target.", sample.threads.map { Double($0) })
            let start = samplers.values.map(\.startTicks).min().map { bootTime + Double($0) / ticksPerSecond }
            out.single("perfhud_target_start_time_seconds", .gauge, "When the target started, seconds since the epoch.", start)
            out.single("perfhud_target_processes", .gauge, "Processes summed into the target's figures.", Double(sample.processCount))
        }
        out.single("perfhud_frames_total", .counter, "Frames the program reported.", events.framesTotal)
        out.histogram("perfhud_frame_duration_seconds", "Durations of the frames the program reported.",
                      bounds: EventAggregator.frameBucketBounds,
                      cumulative: events.frameBucketCumulative.isEmpty ? Array(repeating: 0, count: EventAggregator.frameBucketBounds.count) : events.frameBucketCumulative,
                      sum: events.frameSecondsSum, count: events.framesTotal)
        out.single("perfhud_janky_frames_total", .counter, "Frames longer than jank-factor × the frame budget.", events.jankyFrames)
        out.single("perfhud_dropped_frames_total", .counter, "Σ max(0, round(duration / budget) − 1) over the frames.", events.droppedFrames)
        out.family("perfhud_actions_total", .counter, "Actions the program dispatched, by label (at most --max-action-labels, then __other__).")
        for (label, total) in aggregator.actionTotals() { out.sample("perfhud_actions_total", [("action", label)], total) }
        out.family("perfhud_high_frequency_action_rate", .gauge, "Per-second rate of actions flagged high-frequency (listed 10 s after).")
        for action in events.highFrequencyActions { out.sample("perfhud_high_frequency_action_rate", [("action", action.action)], action.rate) }
        if let phase = events.phase {
            out.family("perfhud_phase_info", .gauge, "The last phase the program reported.")
            out.sample("perfhud_phase_info", [("phase", phase)], 1)
        }
        out.single("perfhud_events_received_total", .counter, "Event lines received.", Double(events.received))
        out.single("perfhud_events_malformed_total", .counter, "Event lines that could not be parsed.", Double(events.malformed))
        out.family("perfhud_events_rejected_total", .counter, "Datagrams rejected, by reason.")
        for reason in ["peer", "no_credentials", "truncated"] {
            out.sample("perfhud_events_rejected_total", [("reason", reason)], Double(events.rejected[reason] ?? 0))
        }
        out.single("perfhud_sample_duration_seconds", .gauge, "perfhud's own cost of the last sample (wall time).", sampleDuration)
        processMetrics(&out)
        return out.text
    }

    /// The standard process_* metrics, of perfhud itself.
    private func processMetrics(_ out: inout PrometheusExposition) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        out.single("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.", cpu)
        if case .success(let file) = KeptOpenFile.open("/proc/self/statm") {
            if let statm = file.readStatm() {
                out.single("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", Double(statm.residentPages * ProcessDirectory.pageSize))
                out.single("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.", Double(statm.sizePages * ProcessDirectory.pageSize))
            }
            file.close()
        }
        let uptime = Double(monotonicNanoseconds() &- startedAt) / 1e9
        out.single("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.", (wallClockSeconds() - uptime).rounded())
        var open = 0
        if let directory = opendir("/proc/self/fd") {
            while readdir(directory) != nil { open += 1 }
            closedir(directory)
        }
        out.single("process_open_fds", .gauge, "Number of open file descriptors.", Double(max(0, open - 3)))
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            out.single("process_max_fds", .gauge, "Maximum number of open file descriptors.", Double(limit.rlim_cur))
        }
    }
}
