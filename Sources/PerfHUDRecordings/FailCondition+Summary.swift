import PerfHUDSupport
import PerfHUDPipeline

/// `report --fail-on`: a condition evaluated against a recording's summary (and a baseline's).
extension FailCondition {
    /// What evaluating a condition against a run gave.
    public struct Evaluation {
        public var holds: Bool
        public var actual: Double?
        public var limit: Double?
        /// Why the condition could not be evaluated (a phase the run never entered, a figure it
        /// does not have), naming what the run has; nil when it was.
        public var unknown: String?
    }

    /// Whether the condition holds for `summary` (against `baseline` when it says so).
    /// A figure the run or the baseline does not have cannot hold: `unknown` then says why, so
    /// that a CI gate can fail on it rather than pass silently.
    /// - Throws: `PerfHUDError` `.usage` for a figure name that does not exist, or `baseline` without `--baseline`.
    public func holds(for summary: RecordingSummary, baseline: RecordingSummary?) throws -> Evaluation {
        guard let actual = summary.value(of: metric) else {
            // A near miss gets a suggestion; the whole list was one line of 4,000 characters.
            let phase = metric.hasPrefix("phase.") ? String(metric.split(separator: ".", maxSplits: 2).dropFirst().first ?? "") : nil
            let candidates = phase.map { name in RecordingSummary.phaseKeys.map { "phase.\(name).\($0)" } } ?? RecordingSummary.keys
            let hint = NearestWord.to(metric, in: candidates, within: max(2, metric.count / 5)).map { ": did you mean \(Self.quoted($0))?" }
                ?? " (the figures are the keys of `perfhud report FILE --format json`; a phase's: phase.NAME.KEY)"
            throw PerfHUDError(.usage, "cannot read --fail-on \(Self.quoted(text)): no figure \(Self.quoted(metric))" + hint)
        }
        let limit: Double?
        var unknown: String?
        switch value {
        case .number(let number): limit = number
        case .baseline(let factor):
            guard let baseline else { throw PerfHUDError(.usage, "--fail-on \(Self.quoted(text)) compares with the baseline: give --baseline FILE") }
            limit = baseline.value(of: metric).flatMap { $0 }.map { $0 * factor }
            if limit == nil { unknown = baseline.whyMissing(metric, run: "the baseline") }
        }
        if actual == nil { unknown = summary.whyMissing(metric, run: "the run") }
        guard let actual, let limit else { return Evaluation(holds: false, actual: actual, limit: limit, unknown: unknown) }
        let result = op.compare(actual, limit)
        return Evaluation(holds: result, actual: actual, limit: limit, unknown: nil)
    }
}
