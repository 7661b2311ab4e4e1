import PerfHUDCore
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's sampling: watches its targets headless, mirrors their figures into the metrics,
/// logs to the journal, pings systemd's watchdog.
///
/// One poll loop on a thread of its own (ticks and the watchdog) samples every target in turn, as
/// the HUD does one; one thread receives on every target's event socket (`EventReceiverPool`; a
/// single target keeps the receiver's own thread, as before); HTTP is SwiftNIO's. A
/// missing target is normal: its `perfhud_target_up` is 0 and it is looked for again every
/// `discoveryNanoseconds`.
///
/// With exactly one target and no `--config` or `--units` (`isSingleTarget`), everything is as
/// before issue 21: the socket's path, the log lines, the status; only the `target` label is new.
public final class DaemonService: @unchecked Sendable {
    private let configuration: DaemonConfiguration
    private let log = DaemonLog()
    private let notifier = SystemdNotifier()
    private let directory = ProcessDirectory()
    public let metrics: DaemonMetrics
    private var targets: [DaemonTarget] = []
    /// `--units` patterns (command line and configuration file).
    private var unitPatterns: [String] = []
    /// The targets the configuration file named, as last read without error.
    private var fileSpecs: [TargetSpec] = []
    /// Targets and units refused past `--max-targets`, by label: each logged and counted once.
    private var refused = Set<String>()
    private let unitGroups = UnitControlGroup()
    /// Units starting, stopping and appearing, as they do (nil without inotify: polling only).
    private let groupEvents = ControlGroupEvents()
    /// Where systemd makes a directory for each unit it starts (watched by `groupEvents`).
    private var unitsDirectory: String { unitGroups.root + "/system.slice" }
    /// With the directory of units watched, `--units` looks at it again only this often besides.
    private static let unitsRescanNanoseconds: UInt64 = 30_000_000_000
    /// One receiving thread for the event sockets of several targets.
    private let receivers = EventReceiverPool()
    /// Written to by `stop()` and the signal handlers.
    private let wake: WakePipe
    /// `--record`: the recording, and the PID its metadata names.
    private var recorder: Recorder?, recordedPID: Int32 = 0
    /// When the units were last looked for, the journal last got a summary, systemd's watchdog last a ping.
    private var schedule = (units: UInt64(0), summary: UInt64(0), watchdog: UInt64(0))
    private var single: Bool { configuration.isSingleTarget }
    /// Read once: `ProcessDirectory.bootTime` reads and splits /proc/stat at each call, which per
    /// target per tick was the largest part of a tick of 200 targets (perf).
    private let bootTime = ProcessDirectory.bootTime ?? 0

    /// Plans the targets: reads `--config`, gives each its label.
    /// - Throws: `PerfHUDError` `.config` (78) for the file, `.usage` (64) for labels two
    ///   unnamed targets would share or a pattern that is not one.
    public init(configuration: DaemonConfiguration) throws {
        self.configuration = configuration
        metrics = DaemonMetrics()
        wake = WakePipe()
        if let path = configuration.configPath { fileSpecs = try TargetsFile.read(path) }
        let specs = configuration.targets + fileSpecs
        unitPatterns = TargetPlanner.patterns(specs)
        for (spec, label) in try TargetPlanner(directory: directory).plan(specs.filter { !$0.isPattern }, keeping: []) { admit(spec, label: label, discovered: false) }
        if single, let only = targets.first { log.setContext(only.journalFields) }
    }

    // MARK: targets

    /// Watches one more target, unless `--max-targets` are watched already.
    @discardableResult
    private func admit(_ spec: TargetSpec, label: String, discovered: Bool) -> DaemonTarget? {
        guard targets.count < configuration.maxTargets else {
            if refused.insert(label).inserted {
                metrics.targetRefused()
                log.warning("refusing target \(label) (\(spec.selector.description)): --max-targets \(configuration.maxTargets) are watched already")
            }
            return nil
        }
        do {
            let target = try DaemonTarget(spec: spec, label: label, discovered: discovered, configuration: configuration, metrics: metrics)
            targets.append(target)
            return target
        } catch {
            log.error("target \(label): \((error as? PerfHUDError)?.message ?? "\(error)")")
            return nil
        }
    }

    // MARK: event sockets

    /// Opens the event sockets (before READY=1). A target may run as another user: each socket is
    /// open to all, and the credential check (default: the target and its descendants; never
    /// another target's processes) decides who may send.
    /// - Throws: `PerfHUDError` `.cannotCreate` (73) when a socket cannot be had at the start.
    public func openEventSockets() throws {
        for target in targets { try openEvents(of: target, required: true) }
    }

    /// Where the sockets of several targets go: `--events DIR`, else systemd's RuntimeDirectory,
    /// else /run/perfhud for root, else the private default directory (`$XDG_RUNTIME_DIR/perfhud`).
    private var eventsDirectory: (path: String, isDefault: Bool)? {
        if let chosen = configuration.eventsDirectory { return (chosen, false) }
        if geteuid() == 0 {
            if mkdir("/run/perfhud", 0o755) != 0 && errno != EEXIST { return nil }
            return ("/run/perfhud", false)
        }
        guard let (path, _) = try? EventReceiver.defaultPath(pid: 0), let slash = path.lastIndex(of: "/") else { return nil }
        return (String(path[..<slash]), true)
    }

    private func openEvents(of target: DaemonTarget, required: Bool) throws {
        if single {
            try target.events.open(pathPID: getpid(), targetPID: 0, configuration: configuration.watch, defaultPolicy: .target, mode: 0o666,
                                   required: true) { [log] in log.warning($0) }
            if configuration.watch.eventsPath == nil, let path = target.events.receiver?.path, let slash = path.lastIndex(of: "/") {
                target.linkDirectory = String(path[..<slash])
            }
            return
        }
        guard let directory = eventsDirectory else {
            if required { throw PerfHUDError(.cannotCreate, "no directory for the event sockets (give one with --events DIR)") }
            return
        }
        var watch = configuration.watch
        watch.eventsPath = directory.path + "/" + Self.fileName(target.label) + ".sock"
        watch.statsdUDP = nil
        do {
            try target.events.open(pathPID: getpid(), targetPID: 0, configuration: watch, defaultPolicy: .target, mode: 0o666,
                                   required: true, pool: receivers) { [log] in log.warning($0) }
        } catch let error as PerfHUDError {
            if required { throw error }
            log(.warning, target, "no event socket (\(error.message)); CPU and memory only")
            return
        }
        if directory.isDefault { target.linkDirectory = directory.path }
        if let legacy = configuration.legacyEventsLink, target.spec == configuration.targets.first { target.fixedLinks.append(legacy) }
        // A unit's processes find the socket by their unit's name, whatever the target's label.
        if case .unit(let unit) = target.spec.selector, Self.fileName(unit) != Self.fileName(target.label) {
            target.fixedLinks.append(directory.path + "/" + Self.fileName(unit) + ".sock")
        }
        target.events.receiver?.setLinks(target.fixedLinks)
    }

    /// A label as a file name: letters, digits and `_.-@` kept, anything else `_`, 80 bytes at most.
    static func fileName(_ label: String) -> String {
        let kept = label.unicodeScalars.prefix(80).map { scalar -> Character in
            let character = Character(scalar)
            return scalar.isASCII && (character.isLetter || character.isNumber || "_.-@".contains(character)) ? character : "_"
        }
        let name = String(kept)
        return name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }

    public var eventSocketPath: String? { targets.first?.events.receiver?.path }

    /// `--record FILE` (one target): opened before READY=1, so a path that cannot be written stops the start.
    public func openRecording() throws {
        guard let path = configuration.recordPath, let target = targets.first else { return }
        let meta = Recorder.meta(version: configuration.version, pid: 0, command: "", commandLine: target.spec.selector.description,
                                 tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events)
        let opened = try Recorder(path: path, meta: meta, startNanoseconds: target.watcher.store.startNanoseconds) { [log] in log.warning($0) }
        opened.maxBytes = configuration.recordMaxBytes
        recorder = opened
    }

    /// Removes the event sockets again (when the daemon cannot start after all).
    public func closeEventSockets() {
        for target in targets { target.events.stop() }
        receivers.stop()
    }

    /// Says so in the log and to systemd once the HTTP port and the event sockets are bound.
    public func announceReady(metricsAddress: String) {
        if single, let only = targets.first {
            log.notice("watching \(only.spec.selector.description); metrics on http://\(metricsAddress)/metrics; events on \(only.events.receiver?.path ?? "-")")
        } else {
            let names = targets.isEmpty ? "" : " (" + targets.prefix(8).map(\.label).joined(separator: ", ") + (targets.count > 8 ? ", …" : "") + ")"
            let patterns = unitPatterns.isEmpty ? "" : "; units \(unitPatterns.joined(separator: ", "))"
            log.notice("watching \(Self.count(targets.count))\(names)\(patterns); metrics on http://\(metricsAddress)/metrics; "
                       + "events in \(eventsDirectory?.path ?? "-")")
        }
        notifier.notify("READY=1\nSTATUS=\(status())")
    }

    // MARK: the loop

    /// Samples until `stop()`: blocking, on the calling thread.
    public func runLoop() {
        let timer = TickTimer(intervalNanoseconds: configuration.watch.tickNanoseconds)
        let now = monotonicNanoseconds()
        scanUnits(now: now)
        for target in targets { discover(target, now: now) }
        shareTargets()
        tick()
        StartupPages.release()   // after the discovery and the first tick, which run once
        loop: while true {
            var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: timer.descriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: groupEvents?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
            // Wake for the next watchdog ping on time, whatever the tick: a late ping is a restart.
            var timeout: Int32 = 1000
            if let interval = notifier.watchdogInterval {
                let due = schedule.watchdog &+ interval
                let now = monotonicNanoseconds()
                timeout = due <= now ? 0 : Int32(min(1000, (due - now + 999_999) / 1_000_000))
            }
            guard case .success = SystemCall.poll(&descriptors, timeoutMilliseconds: timeout) else { break }
            if descriptors[0].revents != 0 {
                let requests = wake.receive()
                // SIGHUP re-reads --config; without one it stops the daemon, as it always did.
                if requests.stop || (requests.reload && configuration.configPath == nil) || requests.closed {
                    notifier.notify("STOPPING=1")
                    break loop
                }
                if requests.reload { reload() }
            }
            if descriptors[2].revents != 0 { unitsChanged(now: monotonicNanoseconds()) }
            if descriptors[1].revents != 0, timer.expirations() > 0 { tick() }
            let now = monotonicNanoseconds()
            if let interval = notifier.watchdogInterval, now &- schedule.watchdog >= interval {
                notifier.notify("WATCHDOG=1")
                schedule.watchdog = now
            }
        }
        // The last interval is not lost: one more tick, with what the event sockets still held, then the final line.
        tick(final: true)
        receivers.stop()
        recorder?.close()
        if single { log.notice("stopping: " + summary(of: targets.first)) } else { log.notice("stopping: " + status()) }
    }

    /// Graceful stop: the loop ends after one last sample.
    public func stop() {
        wake.send(1)
    }

    /// What a stop signal's handler writes a byte to (1: stop, 2: reload).
    public var wakeDescriptor: Int32 { wake.writeEnd }

    public func logError(_ message: String) { log.error(message) }

    // MARK: sampling

    private func tick(final: Bool = false) {
        let started = monotonicNanoseconds()
        let unitsEvery = groupEvents?.isWatching(unitsDirectory) == true ? Self.unitsRescanNanoseconds : configuration.discoveryNanoseconds
        if started &- schedule.units >= unitsEvery { scanUnits(now: started) }
        var changed = false
        for target in targets where started &- target.lastDiscovery >= configuration.discoveryNanoseconds && (target.group.isEmpty || target.rescans) {
            changed = discover(target, now: started) || changed
        }
        for target in targets { changed = tick(target, now: started, final: final) || changed }
        if changed { shareTargets() }
        forgetTargets(now: started)
        metrics.update(sampleSeconds: Double(monotonicNanoseconds() &- started) / 1e9, droppedWrites: (log: log.dropped, notify: notifier.dropped))
        if started &- schedule.summary >= configuration.logIntervalNanoseconds {
            schedule.summary = started
            if single { log.info(summary(of: targets.first)) }
            for target in targets where !single && target.isUp { log(.info, target, summary(of: target)) }
        }
    }

    /// One target's tick. - Returns: whether it went away.
    private func tick(_ target: DaemonTarget, now: UInt64, final: Bool) -> Bool {
        target.latest = target.watcher.tick(final: final, endedByPerfhud: final)
        for note in target.latest?.notes ?? [] { log(.warning, target, note) }
        var wentAway = false
        if target.group.isEmpty && target.wasUp {
            target.wasUp = false
            target.downSince = now
            targetChanged(target)
            log(.warning, target, "target went away (\(target.spec.selector.description))")
            notifier.notify("STATUS=\(status())")
            wentAway = true
        }
        let snapshot = target.events.snapshot ?? EventSnapshot()
        if let recorder, let latest = target.latest {
            if let pid = target.group.pids.first, pid != recordedPID {
                recordedPID = pid
                recorder.setMeta("target_pid", String(pid))
                recorder.setMeta("target_command", target.group.commandName)
            }
            recorder.record(latest)
        }
        for line in target.warned.check(events: snapshot, report: target.latest?.report, threshold: configuration.watch.events.actionThreshold,
                                        leakWindow: configuration.watch.leak.windowSeconds) {
            log(.warning, target, line)
        }
        let figures = target.latest.map { tick in
            DaemonMetrics.Target(sample: tick.sample, report: tick.report, commandName: tick.commandName, pid: target.group.pids.first ?? 0,
                                 startTimeSeconds: target.group.startTicks.map { bootTime + Double($0) / Double(ProcessDirectory.ticksPerSecond) },
                                 ticksPerSecond: Double(ProcessDirectory.ticksPerSecond))
        }
        target.metrics?.update(target: figures, events: snapshot, actionTotals: target.events.aggregator.actionTotals())
        return wentAway
    }

    /// Looks for a target's processes. - Returns: whether its members changed.
    @discardableResult
    private func discover(_ target: DaemonTarget, now: UInt64) -> Bool {
        target.lastDiscovery = now
        let found = target.resolver.resolve()
        watchGroup(of: target)
        switch found {
        case .success(let pids):
            var changed = false
            for pid in pids where !target.group.contains(pid) {
                do {
                    target.group.add(try ProcessSampler(pid: pid, includeChildren: configuration.watch.includeChildren, directory: directory))
                    changed = true
                } catch {
                    noteReason(target, (error as? PerfHUDError)?.message ?? "\(error)")
                }
            }
            // --match and --unit: processes that no longer belong are let go.
            if case .pid = target.spec.selector {} else {
                for pid in target.group.pids where !pids.contains(pid) { target.group.retire(pid); changed = true }
            }
            if changed && !target.group.isEmpty {
                target.group.commandName = directory.describe(pid: target.group.pids[0])?.commandName ?? "?"
                target.remember()
                targetChanged(target)
                if !target.wasUp {
                    log(.notice, target, "target is up: \(TargetGroup.listing(target.group.pids)) (\(TerminalText.escaped(target.group.commandName)))")
                }
                target.wasUp = true
                target.downSince = nil
                target.warned.targetFound()
                notifier.notify("STATUS=\(status())")
            }
            return changed
        case .failure(let reason):
            if target.group.isEmpty { noteReason(target, reason.message) }
            return false
        }
    }

    /// A unit target's `cgroup.events` is watched while its group exists, and the directory of
    /// units while any unit is a target: a unit that starts or stops is seen at once.
    private func watchGroup(of target: DaemonTarget) {
        guard let groupEvents, case .unit = target.spec.selector else { return }
        if !groupEvents.isWatching(unitsDirectory) { groupEvents.watch(unitsDirectory, directory: true) }
        if let file = target.resolver.unitEventsFile { groupEvents.watch(file, directory: false) }
    }

    /// inotify said a unit started or stopped, or units came or went: look at those now.
    private func unitsChanged(now: UInt64) {
        guard let groupEvents else { return }
        let (changed, overflowed) = groupEvents.drain()
        let unitsCameOrWent = overflowed || changed.contains(unitsDirectory)
        if unitsCameOrWent { scanUnits(now: now) }
        for target in targets {
            guard case .unit = target.spec.selector else { continue }
            let own = target.resolver.unitEventsFile.map { changed.contains($0) } ?? false
            // A unit that starts makes its group (a new directory): a target that is down looks again.
            if own || overflowed || (unitsCameOrWent && target.group.isEmpty) {
                discover(target, now: now)
            }
        }
        // Also when no member changed: a unit's group that has just appeared lets its first
        // sender in before its processes are seen (EventReceiver.setControlGroups).
        shareTargets()
    }

    /// `--units`: every matching unit under system.slice is a target (named after it); one that
    /// stops goes down, then is forgotten after `--forget-after`.
    private func scanUnits(now: UInt64) {
        schedule.units = now
        guard !unitPatterns.isEmpty else { return }
        if groupEvents?.isWatching(unitsDirectory) == false { groupEvents?.watch(unitsDirectory, directory: true) }
        var seen = Set<String>()
        for pattern in unitPatterns {
            for unit in unitGroups.units(matching: pattern) where seen.insert(unit).inserted {
                guard !targets.contains(where: { $0.label == unit || $0.spec.selector == .unit(unit) }) else { continue }
                if let target = admit(TargetSpec(name: nil, selector: .unit(unit)), label: unit, discovered: true) {
                    try? openEvents(of: target, required: false)
                    log(.notice, target, "found unit \(unit) (\(pattern))")
                    discover(target, now: now)
                }
            }
        }
    }

    /// A target's processes changed: its socket, the other sockets' refusals, the log.
    private func targetChanged(_ target: DaemonTarget) {
        let pids = target.group.pids
        target.events.receiver?.setTargets(pids)
        target.events.receiver?.setLinks((target.linkDirectory.map { directory in pids.map { "\(directory)/\($0).sock" } } ?? []) + target.fixedLinks)
        // A phase's memory is read the moment its event arrives, from the group's first process.
        if let first = pids.first { target.events.measurePhasesOf(pid: first) }
        if single { log.setContext(target.journalFields) }
    }

    /// Each socket refuses the other targets' processes (`other_target`).
    private func shareTargets() {
        let groups = targets.map { $0.resolver.unitGroupPath }
        for (index, target) in targets.enumerated() {
            let others = groups.enumerated().compactMap { other, group in other == index ? nil : group }
            target.events.receiver?.setControlGroups(target: groups[index], others: others)
        }
        guard targets.count > 1 else { return }
        let all = targets.map { $0.group.pids }
        for (index, target) in targets.enumerated() {
            var others: [Int32] = []
            for (other, pids) in all.enumerated() where other != index { others += pids }
            target.events.receiver?.setOtherTargets(others)
        }
    }

    /// Targets gone for `--forget-after` lose their series; a unit `--units` found is dropped.
    private func forgetTargets(now: UInt64) {
        var dropped = false
        for target in targets {
            guard !target.isUp, let since = target.downSince, now &- since >= configuration.forgetAfterNanoseconds else { continue }
            target.downSince = nil
            target.forget()
            log(.notice, target, "target forgotten: gone for \(configuration.forgetAfterNanoseconds / 1_000_000_000) s, its series removed")
            if target.discovered { target.close(); dropped = true }
        }
        if dropped {
            targets.removeAll { $0.discovered && $0.metrics == nil }
            notifier.notify("STATUS=\(status())")
        }
    }

    // MARK: SIGHUP

    /// Re-reads `--config`: targets added start, targets removed are dropped at once, targets
    /// kept keep their series and counters. A file with an error changes nothing (logged).
    private func reload() {
        guard let path = configuration.configPath else { return }
        let specs: [TargetSpec]
        let planned: [(TargetSpec, String)]
        let wanted: [TargetSpec]
        do {
            specs = try TargetsFile.read(path)
            wanted = (configuration.targets + specs).filter { !$0.isPattern }
            planned = try TargetPlanner(directory: directory).plan(wanted, keeping: targets.filter { !$0.discovered && wanted.contains($0.spec) })
        } catch let error as PerfHUDError {
            log.error("\(error.message); the configuration stays as it was")
            return
        } catch {
            log.error("\(error); the configuration stays as it was")
            return
        }
        fileSpecs = specs
        unitPatterns = TargetPlanner.patterns(configuration.targets + specs)
        var removed: [DaemonTarget] = []
        for target in targets {
            let stays = target.discovered ? unitPatterns.contains { fnmatch($0, target.label, 0) == 0 } : wanted.contains(target.spec)
            if !stays { removed.append(target) }
        }
        for target in removed {
            target.close()
            log(.notice, target, "target dropped: no longer in \(path)")
        }
        targets.removeAll { target in removed.contains { $0 === target } }
        refused.removeAll()
        let now = monotonicNanoseconds()
        for (spec, label) in planned {
            guard let target = admit(spec, label: label, discovered: false) else { continue }
            try? openEvents(of: target, required: false)
            log(.notice, target, "target added from \(path)")
            discover(target, now: now)
        }
        scanUnits(now: now)
        shareTargets()
        log.notice("reloaded \(path): \(Self.count(targets.count))")
        notifier.notify("STATUS=\(status())")
    }

    // MARK: log and status

    static func count(_ targets: Int) -> String { targets == 1 ? "1 target" : "\(targets) targets" }

    /// A line about one target: with several, it says which (`web: …`) and carries its fields.
    private func log(_ level: DaemonLog.Level, _ target: DaemonTarget, _ message: String) {
        if single { log.log(level, message) } else { log.log(level, "\(target.label): " + message, fields: target.journalFields) }
    }

    /// Logs why the target is not there, once per reason.
    private func noteReason(_ target: DaemonTarget, _ reason: String) {
        guard target.warned.isNewReason(reason) else { return }
        log(.notice, target, "waiting for \(target.spec.selector.description): \(reason)")
        notifier.notify("STATUS=\(status())")
    }

    private func status() -> String {
        if single, let target = targets.first { return status(of: target) }
        if targets.isEmpty {
            return unitPatterns.isEmpty ? "no targets: name them in \(configuration.configPath ?? "--config") and reload" : "no unit matches yet"
        }
        let up = targets.filter(\.isUp)
        var text = "\(up.count) of \(targets.count) targets up"
        let down = targets.filter { !$0.isUp }.map(\.label)
        if !down.isEmpty { text += "; down: " + down.prefix(5).joined(separator: ", ") + (down.count > 5 ? ", …" : "") }
        return text
    }

    private func status(of target: DaemonTarget) -> String {
        if target.group.isEmpty {
            return "waiting for \(target.spec.selector.description)" + (target.warned.reason.isEmpty ? "" : ": \(target.warned.reason)")
        }
        return "watching \(TargetGroup.listing(target.group.pids)) (\(TerminalText.escaped(target.group.commandName)))"
    }

    private func summary(of target: DaemonTarget?) -> String {
        guard let target else { return status() }
        guard let latest = target.latest else { return status(of: target) + "; target down" }
        let report = latest.report, events = latest.events ?? EventSnapshot()
        var parts = [status(of: target)]
        if let cpu = report.cpuPercent { parts.append("CPU " + Units.percent(cpu)) }
        if let rss = report.residentBytes { parts.append("RSS " + Units.bytes(Double(rss))) }
        parts.append("PSS " + (report.proportionalBytes.map { Units.bytes(Double($0)) } ?? "n/a"))
        if events.hasFrames { parts.append("FPS " + ReportFormatter.number(events.fps, decimals: 0)) }
        if events.hasActions { parts.append("actions " + ReportFormatter.number(events.actionsPerSecond, decimals: 0) + "/s") }
        parts.append("events \(events.received)")
        return parts.joined(separator: ", ")
    }
}
