import PerfHUDSampling
import PerfHUDEvents

/// One target's tick, and where its figures go: the journal (notes and warnings), the recording,
/// the target's Prometheus series. Also where a target is seen going away: the tick is what finds
/// its processes gone.
///
/// Per target per tick, so what it reads once is kept (`bootTime`): this is the daemon's hot path.
final class TickFanOut {
    private let configuration: DaemonConfiguration
    private let sockets: EventSockets
    private let status: StatusReporter
    let recording = DaemonRecording()
    /// Read once: `ProcessDirectory.bootTime` reads and splits /proc/stat at each call, which per
    /// target per tick was the largest part of a tick of 200 targets (perf).
    private let bootTime = ProcessDirectory.bootTime ?? 0

    init(configuration: DaemonConfiguration, sockets: EventSockets, status: StatusReporter) {
        self.configuration = configuration
        self.sockets = sockets
        self.status = status
    }

    /// A tick that reads the target's RSS alone (between two full reads), into its RSS gauge and
    /// its leak trend. - Returns: false when it needs a full tick instead (down, or a process ended).
    func readResident(_ target: DaemonTarget, now: UInt64) -> Bool {
        guard target.isUp, let bytes = target.group.residentBytes() else { return false }
        target.watcher.noteResident(bytes, at: now)
        target.metrics?.updateResident(bytes)
        return true
    }

    /// One target's tick. - Returns: whether it went away.
    func tick(_ target: DaemonTarget, now: UInt64, final: Bool) -> Bool {
        target.latest = target.watcher.tick(final: final, endedByPerfhud: final)
        for note in target.latest?.notes ?? [] { status.log(.warning, target, note) }
        var wentAway = false
        if target.group.isEmpty && target.wasUp {
            target.wasUp = false
            target.downSince = now
            sockets.follow(target)
            status.follow(target)
            status.log(.warning, target, "target went away (\(target.spec.selector.description))")
            status.publish()
            wentAway = true
        }
        let snapshot = target.events.snapshot ?? EventSnapshot()
        recording.record(target)
        for line in target.warned.check(events: snapshot, report: target.latest?.figures, threshold: configuration.watch.events.actionThreshold,
                                        leakWindow: configuration.watch.leak.windowSeconds) {
            status.log(.warning, target, line)
        }
        let figures = target.latest.map { tick in
            DaemonMetrics.Target(sample: tick.sample, figures: tick.figures, commandName: tick.commandName, pid: target.group.rootPID ?? target.group.pids.first ?? 0,
                                 startTimeSeconds: target.group.startTicks.map { bootTime + Double($0) / Double(ProcessDirectory.ticksPerSecond) })
        }
        target.metrics?.update(target: figures, events: snapshot, actionTotals: target.events.aggregator.actionTotals())
        return wentAway
    }
}
