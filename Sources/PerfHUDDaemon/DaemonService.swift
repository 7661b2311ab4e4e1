import PerfHUDSupport
import PerfHUDSampling
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's sampling loop: watches its targets headless, mirrors their figures into the
/// metrics, logs to the journal, pings systemd's watchdog.
///
/// One poll loop on a thread of its own (ticks, the watchdog, inotify's reports on units, the
/// wake-up pipe) samples every target in turn, as the HUD does one; one thread receives on every
/// target's event socket (`EventSockets`); HTTP is SwiftNIO's. A missing target is normal: its
/// `perfhud_target_up` is 0 and it is looked for again every `discoveryNanoseconds`.
///
/// This type is the loop and the order of things within a tick; the rest has a type of its own:
/// the targets (`TargetRoster`, labelled by `TargetPlanner`), their sockets (`EventSockets`),
/// finding them (`TargetDiscovery`, `UnitDiscovery` over `UnitWatch`), where a tick's figures go
/// (`TickFanOut`, `DaemonRecording`), `--forget-after` (`TargetForgetting`), SIGHUP
/// (`ConfigurationReload`), and what the daemon says (`StatusReporter`).
///
/// With exactly one target and no `--config` or `--units` (`isSingleTarget`), everything is as
/// before issue 21: the socket's path, the log lines, the status; only the `target` label is new.
public final class DaemonService: @unchecked Sendable {
    private let configuration: DaemonConfiguration
    public let metrics: DaemonMetrics
    private let roster: TargetRoster
    private let status: StatusReporter
    private let sockets: EventSockets
    private let discovery: TargetDiscovery
    private let units: UnitDiscovery
    private let containers: ContainerDiscovery
    private let fanOut: TickFanOut
    private let forgetting: TargetForgetting
    private let reloader: ConfigurationReload
    /// Written to by `stop()` and the signal handlers.
    private let wake: WakePipe
    /// When systemd's watchdog last got a ping (CLOCK_MONOTONIC).
    private var lastWatchdog = UInt64(0)
    /// Scrapes waiting for the next full read (`DaemonMetrics.readEveryFigure`), and whether the loop
    /// has ended (a scrape then is answered with what was last read).
    private let scrapes = Mutex()
    private var scrapesWaiting: [@Sendable () -> Void] = []
    private var loopEnded = false

    /// Plans the targets: reads `--config`, gives each its label.
    /// - Throws: `PerfHUDError` `.config` (78) for the file, `.usage` (64) for labels two
    ///   unnamed targets would share or a pattern that is not one.
    public init(configuration: DaemonConfiguration) throws {
        self.configuration = configuration
        metrics = DaemonMetrics()
        // Each part is handed only what it uses; the roster is the one state they share, and
        // nothing refers back up this list (no cycles: every part lives as long as the service).
        let log = DaemonLog(), notifier = SystemdNotifier()
        let planner = TargetPlanner(directory: ProcessDirectory())
        let unitWatch = UnitWatch()
        roster = TargetRoster(configuration: configuration, metrics: metrics, log: log, directory: planner.directory)
        status = StatusReporter(configuration: configuration, roster: roster, log: log, notifier: notifier)
        sockets = EventSockets(configuration: configuration, roster: roster, status: status)
        discovery = TargetDiscovery(configuration: configuration, directory: planner.directory, unitWatch: unitWatch, sockets: sockets, status: status)
        units = UnitDiscovery(configuration: configuration, roster: roster, unitWatch: unitWatch, discovery: discovery, sockets: sockets, status: status)
        containers = ContainerDiscovery(configuration: configuration, roster: roster, discovery: discovery, sockets: sockets, status: status)
        fanOut = TickFanOut(configuration: configuration, sockets: sockets, status: status)
        forgetting = TargetForgetting(configuration: configuration, roster: roster, status: status)
        reloader = ConfigurationReload(configuration: configuration, planner: planner, roster: roster, sockets: sockets,
                                       discovery: discovery, units: units, containers: containers, status: status)
        wake = WakePipe()
        let fileSpecs = try configuration.configPath.map { try TargetsFile.read($0) } ?? []
        let specs = configuration.targets + fileSpecs
        roster.unitPatterns = TargetPlanner.patterns(specs)
        roster.containerPatterns = TargetPlanner.containerPatterns(specs)
        roster.podPatterns = TargetPlanner.podPatterns(specs)
        for (spec, label) in try planner.plan(specs.filter { !$0.isPattern }, keeping: []) { roster.admit(spec, label: label, discovered: false) }
        if configuration.isSingleTarget, let only = roster.targets.first { log.setContext(only.journalFields) }
        metrics.readEveryFigure = { [weak self] done in self?.readBeforeScrape(done) ?? done() }
    }

    /// A scrape's request: answered after the loop's next full read of every target (woken for it).
    private func readBeforeScrape(_ done: @escaping @Sendable () -> Void) {
        let ended = scrapes.withLock { () -> Bool in
            if !loopEnded { scrapesWaiting.append(done) }
            return loopEnded
        }
        if ended { done() } else { wake.send(3) }
    }

    private func takeScrapes(ending: Bool = false) -> [@Sendable () -> Void] {
        scrapes.withLock {
            defer { scrapesWaiting = []; if ending { loopEnded = true } }
            return scrapesWaiting
        }
    }

    // MARK: before the loop

    /// Opens the event sockets (before READY=1).
    /// - Throws: `PerfHUDError` `.cannotCreate` (73) when a socket cannot be had at the start.
    public func openEventSockets() throws { try sockets.openAll() }

    /// `--record FILE` (one target): opened before READY=1, so a path that cannot be written stops the start.
    public func openRecording() throws {
        if let target = roster.targets.first {
            try fanOut.recording.open(configuration: configuration, selector: target.spec.selector.description,
                                      startNanoseconds: target.watcher.store.startNanoseconds, log: status.log)
        }
    }

    /// Removes the event sockets again (when the daemon cannot start after all).
    public func closeEventSockets() { sockets.closeAll() }

    /// Says so in the log and to systemd once the HTTP port and the event sockets are bound.
    public func announceReady(metricsAddress: String) {
        status.announceReady(metricsAddress: metricsAddress) { [sockets] in sockets.directory?.path }
    }

    // MARK: the loop

    /// Samples until `stop()`: blocking, on the calling thread.
    public func runLoop() {
        let timer = TickTimer(intervalNanoseconds: configuration.watch.tickNanoseconds)
        let notifier = status.notifier
        let now = monotonicNanoseconds()
        units.scan(now: now)
        containers.scan(now: now)
        for target in roster.targets { discovery.discover(target, now: now) }
        sockets.shareTargets()
        tick()
        StartupPages.release()   // after the discovery and the first tick, which run once
        loop: while true {
            var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: timer.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: units.descriptor, events: Int16(POLLIN), revents: 0)]
            // Wake for the next watchdog ping on time, whatever the tick: a late ping is a restart.
            var timeout: Int32 = 1000
            if let interval = notifier.watchdogInterval {
                let due = lastWatchdog &+ interval
                let now = monotonicNanoseconds()
                timeout = due <= now ? 0 : Int32(min(1000, (due - now + 999_999) / 1_000_000))
            }
            guard case .success = SystemCall.poll(&descriptors, timeoutMilliseconds: timeout) else { break }
            // A daemon started for another perfhud (`top --containers`) ends with it, even killed.
            if let parent = Self.parentToOutlive, getppid() != parent { break loop }
            if descriptors[0].revents != 0 {
                let requests = wake.receive()
                // SIGHUP re-reads --config; without one it stops the daemon, as it always did.
                if requests.stop || (requests.reload && configuration.configPath == nil) || requests.closed {
                    notifier.notify("STOPPING=1")
                    break loop
                }
                if requests.reload { reloader.reload() }
                if requests.scrape {
                    let waiting = takeScrapes()
                    tick(everyFigure: true)
                    for done in waiting { done() }
                }
            }
            if descriptors[2].revents != 0 { units.unitsChanged(now: monotonicNanoseconds()) }
            if descriptors[1].revents != 0, timer.expirations() > 0 { tick() }
            let now = monotonicNanoseconds()
            if let interval = notifier.watchdogInterval, now &- lastWatchdog >= interval {
                notifier.notify("WATCHDOG=1")
                lastWatchdog = now
            }
        }
        // The last interval is not lost: one more tick, with what the event sockets still held, then the final line.
        tick(final: true)
        for done in takeScrapes(ending: true) { done() }
        sockets.stopReceiving()
        fanOut.recording.close()
        status.logStopping()
    }

    /// `PERFHUD_EXIT_WITH_PARENT=PID`: the process this daemon ends with (checked at least once a
    /// second); set by `perfhud top --containers` for the daemon it starts.
    static let parentToOutlive: pid_t? = getenv("PERFHUD_EXIT_WITH_PARENT").flatMap { pid_t(String(cString: $0)) }

    /// Graceful stop: the loop ends after one last sample.
    public func stop() { wake.send(1) }

    /// What a stop signal's handler writes a byte to (1: stop, 2: reload).
    public var wakeDescriptor: Int32 { wake.writeEnd }

    public func logError(_ message: String) { status.log.error(message) }

    // MARK: a tick

    /// Every target's tick, in this order: units and processes looked for when due, each target
    /// sampled, the sockets told who is who, the long-gone forgotten, the daemon's own figures.
    ///
    /// A target's tick reads its RSS alone, unless its every figure is due: at a scrape
    /// (`everyFigure`), every `--full-every`, every tick while it sends events or is recorded, at
    /// the last tick, and when a process of it ended. Cumulative figures (CPU time, I/O, faults,
    /// waiting) lose nothing read less often, and rates are over the time since the last full
    /// read; every file a target has costs the host each second otherwise (issue 34:
    /// `Benchmarks/daemon_vs_process_exporter.py`).
    private func tick(final: Bool = false, everyFigure: Bool = false) {
        let started = monotonicNanoseconds()
        units.scanIfDue(now: started)
        containers.scanIfDue(now: started)
        var changed = discovery.discoverDue(roster.targets, now: started)
        for target in roster.targets {
            if !(final || everyFigure || fullReadDue(target, now: started)) && fanOut.readResident(target, now: started) { continue }
            target.lastFull = started
            target.linesAtFull = target.events.aggregator.linesReceived
            changed = fanOut.tick(target, now: started, final: final) || changed
        }
        if changed { sockets.shareTargets() }
        forgetting.forgetTargets(now: started)
        metrics.update(sampleSeconds: Double(monotonicNanoseconds() &- started) / 1e9,
                       droppedWrites: (log: status.log.dropped, notify: status.notifier.dropped))
        status.logSummariesIfDue(now: started)
    }

    /// Whether `target`'s every figure is read at this tick, scrape or not: never read yet, read
    /// `--full-every` ago (within half a tick: ticks are not exactly on time), sending events
    /// (its frames and actions are per tick), or recorded (a recording's rows are full rows).
    private func fullReadDue(_ target: DaemonTarget, now: UInt64) -> Bool {
        target.lastFull == 0 || now &- target.lastFull &+ configuration.watch.tickNanoseconds / 2 >= configuration.fullEveryNanoseconds
            || fanOut.recording.isRecording || target.events.aggregator.linesReceived != target.linesAtFull
    }
}
