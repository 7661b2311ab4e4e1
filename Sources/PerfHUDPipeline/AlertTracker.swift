import PerfHUDSupport

/// A span over which an alert's comparison was true, once it has held (the duration reached).
public struct AlertSpan: Equatable {
    public let text: String
    public let field: Figure.Field
    /// When the comparison became true (CLOCK_MONOTONIC), and the session's elapsed seconds then.
    public let since: UInt64
    public let sinceElapsedSeconds: Double
    /// When it stopped holding: the first row where it was false, or the end of the run; nil while it holds.
    public var until: UInt64?
    public var untilElapsedSeconds: Double?
    /// The figure at the last row it held.
    public var value: Double?
    /// Ended with the run, still holding.
    public var endedWithRun = false

    /// How long it held, to `now` while it holds.
    public func seconds(at now: UInt64) -> Double { Double((until ?? now) &- min(since, until ?? now)) / 1e9 }
    /// How long it held, by the session's clock (as a recording keeps it): what the summary and `report` say.
    public var heldSeconds: Double { max(0, (untilElapsedSeconds ?? sinceElapsedSeconds) - sinceElapsedSeconds) }

    /// `alert cpu_percent > 80 for 20s held 25.0 s, from 5.1 s to 30.1 s into the run`: the end
    /// summary's and `report`'s words for it (the text escaped: it is the user's, and reaches a terminal).
    public var sentence: String {
        func at(_ seconds: Double) -> String { seconds < 60 ? String(format1: seconds) + " s" : DurationText.clock(seconds: seconds) }
        return "alert " + TerminalText.escaped(text, maxLength: 120) + " held " + String(format1: heldSeconds) + " s, from " + at(sinceElapsedSeconds)
            + (endedWithRun ? " to the end of the run" : " to " + at(untilElapsedSeconds ?? sinceElapsedSeconds) + " into the run")
    }
}

/// What a tick says of the alerts (`AlertTracker`): those holding, those that began to hold and
/// those that ended with it. Empty, allocating nothing, without `--alert`.
public struct AlertStates {
    public var rules: AlertRules?
    public var holding: [AlertSpan] = []
    public var started: [AlertSpan] = []
    public var ended: [AlertSpan] = []
    public init(rules: AlertRules? = nil) { self.rules = rules }

    /// Whether an alert on `field` holds.
    public func holds(_ field: Figure.Field) -> Bool { holding.contains { $0.field == field } }
    /// Whether an alert watches `field` (holding or not).
    public func watches(_ field: Figure.Field) -> Bool { rules?.fields.contains(field) ?? false }
}

/// Decides, row by row, which alerts hold: one piece of code for every sink (`TickSinks` hands the
/// session's ticks through it before any sink sees them, the daemon's `TickFanOut` each target's).
public struct AlertTracker {
    public let rules: AlertRules
    private var trueSince: [(UInt64, Double)?]
    private var spans: [AlertSpan?]
    /// The last row's time: where the run's end ends an alert that holds (live and in `report` alike).
    private var lastRow: (UInt64, Double)?

    public init(_ rules: AlertRules) {
        self.rules = rules
        trueSince = Array(repeating: nil, count: rules.rules.count)
        spans = Array(repeating: nil, count: rules.rules.count)
    }

    /// Sets `tick.alerts`. A row updates each alert; the last tick of the run ends those that hold.
    public mutating func apply(to tick: inout Tick) {
        var states = AlertStates(rules: rules)
        let now = tick.monotonicNanoseconds
        let elapsed = tick.figures.elapsedSeconds
        if tick.isRow { lastRow = (now, elapsed) }
        for (index, rule) in rules.rules.enumerated() {
            // The exit row has no figures of the process (it is gone): the run's end ends what holds.
            if tick.isRow && !tick.isExitRow {
                let value = Figure[rule.field].value(tick.figures, tick.events)
                if let value, rule.op.compare(value, rule.limit) {
                    let (start, startElapsed) = trueSince[index] ?? (now, elapsed)
                    trueSince[index] = (start, startElapsed)
                    // By the session's clock at the recording's millisecond: `report` decides it over the
                    // recorded rows alike (a tick's monotonic time is a few microseconds off its period).
                    if spans[index] == nil, ((elapsed - startElapsed) * 1000).rounded() >= (Double(rule.forNanoseconds) / 1e6).rounded() {
                        spans[index] = AlertSpan(text: rule.text, field: rule.field, since: start, sinceElapsedSeconds: startElapsed)
                        spans[index]?.value = value
                        states.started.append(spans[index]!)
                    }
                    spans[index]?.value = value
                } else {
                    trueSince[index] = nil
                    if var span = spans[index] {
                        span.until = now
                        span.untilElapsedSeconds = elapsed
                        states.ended.append(span)
                        spans[index] = nil
                    }
                }
            }
            if let span = spans[index] { states.holding.append(span) }
        }
        if tick.isFinal {
            states.ended += finish()
            states.holding = []
        }
        tick.alerts = states
    }

    /// When each alert's comparison became true (the session's seconds; nil: false at the last
    /// row): what a one-shot `perfhud status` carries from one call to the next, so that an alert
    /// `for 20s` holds at the call 20 s after the figure crossed its line.
    public var pendingSince: [Double?] {
        get { trueSince.map { $0?.1 } }
        set {
            for index in trueSince.indices {
                trueSince[index] = index < newValue.count ? newValue[index].map { (UInt64(max(0, $0) * 1e9), $0) } : nil
            }
        }
    }

    /// Ends every alert that holds, at the last row: the end of the run.
    public mutating func finish() -> [AlertSpan] {
        var ended: [AlertSpan] = []
        for index in spans.indices {
            if var span = spans[index] {
                (span.until, span.untilElapsedSeconds) = (lastRow?.0 ?? span.since, lastRow?.1 ?? span.sinceElapsedSeconds)
                span.endedWithRun = true
                ended.append(span)
            }
            spans[index] = nil
            trueSince[index] = nil
        }
        return ended
    }
}
