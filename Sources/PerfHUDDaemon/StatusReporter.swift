import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// What the daemon says about its targets: the journal lines about each, the periodic summaries,
/// and the one-line status systemd shows (`systemctl status`, STATUS=).
///
/// In one place because the wording is a contract (PRODUCT.md): a single target (`isSingleTarget`)
/// speaks as the daemon did before issue 21, several are named in each line (`web: …`) and carry
/// their journal fields, and every part of the daemon must follow the same rule.
final class StatusReporter {
    let log: DaemonLog
    let notifier: SystemdNotifier
    private let configuration: DaemonConfiguration
    private let roster: TargetRoster
    /// When the journal last got a summary of each target (CLOCK_MONOTONIC).
    private var lastSummary = UInt64(0)

    init(configuration: DaemonConfiguration, roster: TargetRoster, log: DaemonLog, notifier: SystemdNotifier) {
        self.configuration = configuration
        self.roster = roster
        self.log = log
        self.notifier = notifier
    }

    private var single: Bool { configuration.isSingleTarget }

    static func count(_ targets: Int) -> String { targets == 1 ? "1 target" : "\(targets) targets" }

    // MARK: journal

    /// A line about one target: with several, it says which (`web: …`) and carries its fields.
    func log(_ level: DaemonLog.Level, _ target: DaemonTarget, _ message: String) {
        if single { log.log(level, message) } else { log.log(level, "\(target.label): " + message, fields: target.journalFields) }
    }

    /// Logs why the target is not there, once per reason.
    func noteReason(_ target: DaemonTarget, _ reason: String, level: DaemonLog.Level = .notice) {
        guard target.warned.isNewReason(reason) else { return }
        log(level, target, "waiting for \(target.spec.selector.description): \(reason)")
        publish()
    }

    /// A single target's lines carry its fields (its PID changes as it comes and goes).
    func follow(_ target: DaemonTarget) {
        if single { log.setContext(target.journalFields) }
    }

    /// Each target's summary, every `--log-interval`.
    func logSummariesIfDue(now: UInt64) {
        guard now &- lastSummary >= configuration.logIntervalNanoseconds else { return }
        lastSummary = now
        if single { log.info(summary(of: roster.targets.first)) }
        for target in roster.targets where !single && target.isUp { log(.info, target, summary(of: target)) }
    }

    /// Says so in the log and to systemd once the HTTP port and the event sockets are bound.
    /// - Parameter eventsDirectory: asked only with several targets (for root it makes /run/perfhud).
    func announceReady(metricsAddress: String, eventsDirectory: () -> String?) {
        let targets = roster.targets
        if single, let only = targets.first {
            log.notice("watching \(only.spec.selector.description); metrics on http://\(metricsAddress)/metrics; events on \(only.events.receiver?.path ?? "-")")
        } else {
            let names = targets.isEmpty ? "" : " (" + targets.prefix(8).map(\.label).joined(separator: ", ") + (targets.count > 8 ? ", …" : "") + ")"
            let patterns = (roster.unitPatterns.isEmpty ? "" : "; units \(roster.unitPatterns.joined(separator: ", "))")
                + (roster.containerPatterns.isEmpty ? "" : "; containers \(roster.containerPatterns.joined(separator: ", "))")
                + (roster.podPatterns.isEmpty ? "" : "; pods \(roster.podPatterns.joined(separator: ", "))")
            log.notice("watching \(Self.count(targets.count))\(names)\(patterns); metrics on http://\(metricsAddress)/metrics; "
                       + "events in \(eventsDirectory() ?? "-")")
        }
        notifier.notify("READY=1\nSTATUS=\(text())")
    }

    /// The last line, after the last tick.
    func logStopping() {
        if single { log.notice("stopping: " + summary(of: roster.targets.first)) } else { log.notice("stopping: " + text()) }
    }

    // MARK: systemd's status

    /// Tells systemd the status now (a target came, went, or is waited for).
    func publish() {
        notifier.notify("STATUS=\(text())")
    }

    func text() -> String {
        let targets = roster.targets
        if single, let target = targets.first { return text(of: target) }
        if targets.isEmpty {
            if !roster.hasPatterns { return "no targets: name them in \(configuration.configPath ?? "--config") and reload" }
            return roster.containerPatterns.isEmpty && roster.podPatterns.isEmpty ? "no unit matches yet" : "nothing matches yet"
        }
        let up = targets.filter(\.isUp)
        var line = "\(up.count) of \(targets.count) targets up"
        let down = targets.filter { !$0.isUp }.map(\.label)
        if !down.isEmpty { line += "; down: " + down.prefix(5).joined(separator: ", ") + (down.count > 5 ? ", …" : "") }
        return line
    }

    private func text(of target: DaemonTarget) -> String {
        if target.group.isEmpty {
            return "waiting for \(target.spec.selector.description)" + (target.warned.reason.isEmpty ? "" : ": \(target.warned.reason)")
        }
        return "watching \(TargetGroup.listing(target.group.pids)) (\(TerminalText.escaped(target.group.commandName)))"
    }

    private func summary(of target: DaemonTarget?) -> String {
        guard let target else { return text() }
        guard let latest = target.latest else { return text(of: target) + "; target down" }
        let report = latest.figures, events = latest.events ?? EventSnapshot()
        var parts = [text(of: target)]
        if let cpu = report.cpuPercent { parts.append("CPU " + Units.percent(cpu) + report.cpuLimitText) }
        // As the status line says it: a group's working set or PSS sum, one process's RSS; the limit; the figure beside it.
        let limit = report.memoryLimitBytes.map { " / " + Units.bytes(Double($0)) } ?? ""
        if let (name, bytes) = report.shownMemory {
            parts.append(name + " " + Units.bytes(Double(bytes)) + limit)
        } else if report.memoryIsProportionalSum {
            parts.append("Mem n/a" + limit)
        }
        if let (name, bytes) = report.besideMemory { parts.append(name + " " + (bytes.map { Units.bytes(Double($0)) } ?? "n/a")) }
        if events.hasFrames { parts.append("FPS " + RowFormatter.number(events.fps, decimals: 0)) }
        if events.hasActions { parts.append("actions " + RowFormatter.number(events.actionsPerSecond, decimals: 0) + "/s") }
        parts.append("events \(events.received)")
        return parts.joined(separator: ", ")
    }
}
