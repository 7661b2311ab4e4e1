import PerfHUDEvents
import PerfHUDPipeline

/// `--output json`'s last line: the run's summary, `{"summary":{…}}`, the object `perfhud report
/// --format json` gives for the recording of the same run — the same keys, summed by the same code
/// (`RunSummary` fed the session's ticks, `RecordingSummary`, `SummaryFormatter`), so the two say
/// the same. `replay --output json` ends with the line the recording gives (`line(for:)`).
package final class SummaryLine: TickSink {
    /// It counts every frame and action.
    package static let readsEveryFrame = true
    private var run: RunSummary?
    private let budget: FrameBudget
    private let actionThreshold: Double
    private let tickSeconds: Double
    private var commandName = ""

    package init(tickNanoseconds: UInt64, events: EventConfiguration) {
        budget = events.frameBudget
        actionThreshold = events.actionThreshold
        tickSeconds = Double(tickNanoseconds) / 1e9
    }

    /// The session's clock starts at `startNanoseconds` (its store's): each frame's time in a
    /// phase's window is counted from there, as the recording counts it. Before the first tick.
    package func start(at startNanoseconds: UInt64) {
        // Each phase's frames and the actions are counted as they come (`PhaseFrames`, `RunActions`).
        run = RunSummary(budget: budget, tickSeconds: tickSeconds, countsPhasesAndActions: true, startNanoseconds: startNanoseconds)
    }

    package func consume(_ tick: Tick) {
        run?.consume(tick)
        commandName = tick.commandName
    }

    /// The line, once the last tick is in (nil before `start`). `startedAt`: when the run began
    /// (RFC 3339), as its recording says it when there is one.
    package func line(startedAt: String?) -> String? {
        guard let run else { return nil }
        let summary = RecordingSummary(run, budget: budget, actionThreshold: actionThreshold)
        return Self.wrapped(SummaryFormatter.json(summary, facts: SummaryFormatter.Facts(run, command: commandName, startedAt: startedAt)))
    }

    /// The line a recording's replay ends with.
    package static func line(for recording: Recording) -> String {
        wrapped(SummaryFormatter.json(RecordingSummary(recording), recording: recording))
    }

    private static func wrapped(_ object: String) -> String { "{\"summary\":" + object + "}\n" }
}
