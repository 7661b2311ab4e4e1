import PerfHUDPipeline

/// A target's journal entries, from its ticks alone: the figures that could not be read (each said
/// once, `Tick.notes`), and the warnings of `DaemonWarnings` (an action that became high-frequency,
/// a leak suspected or no longer). The daemon's fan-out hands it each tick, as it hands the
/// target's metrics and the recording (`TickFanOut`).
final class TargetJournal: TickSink {
    static var readsEveryFrame: Bool { false }
    /// The target whose fields its entries carry and whose warnings it keeps (it owns this sink).
    private unowned let target: DaemonTarget
    private let status: StatusReporter
    private let actionThreshold: Double
    private let leakWindow: Double

    init(target: DaemonTarget, status: StatusReporter, configuration: DaemonConfiguration) {
        self.target = target
        self.status = status
        actionThreshold = configuration.watch.events.actionThreshold
        leakWindow = configuration.watch.leak.windowSeconds
    }

    func consume(_ tick: Tick) {
        for note in tick.notes { status.log(.warning, target, note) }
        // One entry as an alert begins to hold, one as it ends.
        for span in tick.alerts.started {
            status.log(.warning, target, "alert \(span.text) holds" + (span.value.map { " (\(Figure[span.field].name) = \(RowFormatter.number($0)))" } ?? ""))
        }
        for span in tick.alerts.ended {
            status.log(.notice, target, "alert \(span.text) no longer holds, after \(String(format1: span.heldSeconds)) s" + (span.endedWithRun ? " (the target ended)" : ""))
        }
        // An absent target's figures are unknown: they change nothing of the leak warning.
        for line in target.warned.check(events: tick.events ?? .empty, figures: tick.status == .absent ? nil : tick.figures,
                                        threshold: actionThreshold, leakWindow: leakWindow) {
            status.log(.warning, target, line)
        }
    }
}
