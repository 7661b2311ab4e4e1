import PerfHUDSupport

/// One `--alert EXPR`: the `--fail-on` grammar over a row's figure (a key of the JSON row), with an
/// optional duration: `cpu_percent > 80 for 20s`, `fps < 50`, `rss_bytes > 1.5GiB`. It holds once
/// the comparison has been true at every row for the duration (at once without one), and until a
/// row where it is false; a figure that is null at a row (unknown) makes it false there: an alert
/// never holds on a figure perfhud does not have.
public struct AlertRule: Equatable {
    /// As the user wrote it, spaces trimmed: its name everywhere (the JSON row, the summary, the
    /// journal, `perfhud_target_alert{alert}`).
    public let text: String
    public let field: Figure.Field
    public let op: FailCondition.Operator
    public let limit: Double
    public let forNanoseconds: UInt64

    /// - Throws: `PerfHUDError` `.usage` saying what it could not read, naming `--alert`.
    public init(_ written: String) throws {
        let text = String(written.trimmingLeadingSpaces.trimmingTrailingSpaces)
        func bad(_ why: String) -> PerfHUDError { PerfHUDError(.usage, "cannot read --alert \(FailCondition.quoted(text)): \(why)") }
        var comparison = text
        var duration: UInt64 = 0
        // ` for DURATION` at the end: the last " for " (a figure's name has no spaces).
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        if words.count >= 2, words[words.count - 2] == "for" {
            let word = String(words[words.count - 1])
            guard let nanoseconds = DurationText.nanoseconds(word), nanoseconds > 0 else {
                throw bad("'\(FailCondition.quoted(word).dropFirst().dropLast())' after 'for' is not a duration (e.g. 20s, 500ms, 2m)")
            }
            duration = nanoseconds
            comparison = words.dropLast(2).joined(separator: " ")
        }
        let condition = try FailCondition(comparison, option: "--alert")
        guard let figure = Figure.all.first(where: { $0.name == condition.metric }) else {
            let names = Figure.all.filter(\.isComparable).map(\.name)
            let hint = NearestWord.to(condition.metric, in: names, within: max(2, condition.metric.count / 5)).map { ": did you mean \(FailCondition.quoted($0))?" }
                ?? " (the figures are the number keys of a row of --output json, e.g. cpu_percent, rss_bytes, fps)"
            throw bad("no figure \(FailCondition.quoted(condition.metric)) in a row" + hint)
        }
        guard figure.isComparable else { throw bad("\(figure.name) is not a number: an alert compares a number or a true/false figure") }
        guard case .number(let limit) = condition.value else { throw bad("an alert compares with a number, not the baseline (that is report --fail-on's)") }
        self.text = text
        field = figure.field
        op = condition.op
        self.limit = limit
        forNanoseconds = duration
    }
}

extension Figure {
    /// A figure an alert can compare: a number or a boolean (1 or 0) of the row.
    var isComparable: Bool {
        switch kind {
        case .number, .boolean: return true
        case .special: return false
        }
    }
}

/// The alerts of a session or a daemon target, fixed when it starts: shared by its ticks (a
/// reference, not copied per tick).
public final class AlertRules {
    public let rules: [AlertRule]
    /// The figures an alert watches: the HUD colours these by the alert alone, not by its own thresholds.
    public let fields: Set<Figure.Field>
    public init(_ rules: [AlertRule]) {
        self.rules = rules
        fields = Set(rules.map(\.field))
    }
}
