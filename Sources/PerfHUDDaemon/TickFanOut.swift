import PerfHUDSampling
import PerfHUDEvents

/// One target's tick, and where it goes: the one fan-out of the daemon. Each target's tick is
/// handed, the same `Tick` value, to its sinks — its Prometheus series (`TargetMetrics`), its journal
/// entries (`TargetJournal`) and the recording (`DaemonRecording`, `--record`) — as a session hands
/// its own to the HUD, the rows and the recording (`TickSinks`). A sink reads the tick alone: the
/// event figures, every frame with its weight and every action since the tick before are in it
/// (`Tick.everyFrame`); a target with no process has a tick too (`.absent`), with what its event
/// socket brought. Also where a target is seen going away: the tick is what finds its processes gone.
///
/// Per target per tick: this is the daemon's hot path.
final class TickFanOut {
    private let configuration: DaemonConfiguration
    private let sockets: EventSockets
    private let status: StatusReporter
    let recording = DaemonRecording()

    init(configuration: DaemonConfiguration, sockets: EventSockets, status: StatusReporter) {
        self.configuration = configuration
        self.sockets = sockets
        self.status = status
    }

    /// A tick that reads the target's RSS alone (between two full reads), into its RSS gauge and
    /// its leak trend; of a tree or a group, whose memory is its PSS sum (read by full reads, and
    /// so at every scrape), into its RSS sum's gauge alone.
    /// - Returns: false when it needs a full tick instead (down, or a process ended).
    func readResident(_ target: DaemonTarget, now: UInt64) -> Bool {
        guard target.isUp, let (bytes, countsOnce) = target.group.residentBytes() else { return false }
        if countsOnce {
            target.metrics?.updateResident(bytes, field: .rss_sum_bytes)
        } else {
            target.watcher.noteResident(bytes, at: now)
            target.metrics?.updateResident(bytes, field: .rss_bytes)
            target.metrics?.updateResident(bytes, field: .rss_sum_bytes)
        }
        return true
    }

    /// One target's tick, to every sink of the target. - Returns: whether it went away.
    func tick(_ target: DaemonTarget, now: UInt64, final: Bool) -> Bool {
        if !target.hasJournal {
            target.attach(journal: TargetJournal(target: target, status: status, configuration: configuration),
                          recording: recording.isRecording ? recording : nil)
        }
        // The figures name the group's root as it is now (a restart is another PID).
        target.watcher.pid = target.group.rootPID ?? target.group.pids.first ?? 0
        var tick = target.watcher.tick(final: final, endedByPerfhud: final)
        target.alerts?.apply(to: &tick)
        target.latest = tick.status == .absent ? nil : tick
        var wentAway = false
        if target.group.isEmpty && target.wasUp {
            target.wasUp = false
            target.downSince = now
            sockets.follow(target)
            status.follow(target)
            status.log(.warning, target, "target went away (\(target.spec.selector.description))" + (target.group.lastOOMKill.map { ": " + $0 } ?? ""))
            status.publish()
            wentAway = true
        }
        for sink in target.sinks { sink.consume(tick) }
        return wentAway
    }
}
