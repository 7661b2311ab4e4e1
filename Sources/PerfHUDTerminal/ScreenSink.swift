import PerfHUDSupport
import PerfHUDPipeline

/// The HUD as a sink of ticks: what could not be read and the phases that ended as notices in the
/// program's area, the action log (attach, demo), and the latest tick for the next frame, which
/// the screen draws when it is due (not at every tick).
package final class ScreenSink: TickSink {
    /// It reads the tick's figures, not each frame.
    package static let readsEveryFrame = false
    package let screen: Screen
    /// The screen's action log shows the actions (attach, demo; under `run` that area is the program's).
    private let showsActionLog: Bool
    /// The last tick handed over, which the HUD draws.
    package private(set) var latest: Tick?
    /// Ticks handed over before the last: what `--count` counts in the HUD.
    package private(set) var drawn = 0

    package init(screen: Screen, showsActionLog: Bool) {
        self.screen = screen
        self.showsActionLog = showsActionLog
    }

    package func consume(_ tick: Tick) {
        // A tick of no process (the target vanished) has no figures: the HUD keeps the last read.
        if tick.status != .absent { latest = tick }
        for note in tick.notes { screen.notice(TerminalText.escaped(note)) }
        for ended in tick.endedPhases { screen.noticePhaseEnded(ended.name, keptBytes: ended.keptBytes) }
        if showsActionLog {
            screen.showActionLog(tick.log, dropped: tick.logDropped, highFrequency: Set(tick.events?.highFrequencyActions.map(\.action) ?? []))
        }
        if !tick.alerts.started.isEmpty { screen.ringBellIfAsked() }
        screen.invalidate()
        if !tick.isFinal && tick.status != .absent { drawn += 1 }
    }

    /// Shows `tick` without what led to it (`replay`'s seek: no notices, no action log replayed).
    package func show(_ tick: Tick) {
        latest = tick
        screen.invalidate()
    }
}
