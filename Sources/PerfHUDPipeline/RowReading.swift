import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore

/// A JSON row read back into figures (`perfhud status --target NAME`, which shows the row a
/// daemon made instead of sampling again): each key of the table (`Figure.all`) written back by
/// the table's own `write`, as a recording's columns are; the command, the status and the alerts
/// holding beside them.
public struct ReadRow {
    public var figures: TargetFigures
    public var events: EventSnapshot?
    public var commandName: String
    public var status: TargetStatus
    /// The texts of the alerts holding (`"alerts"`); their rules read again from them.
    public var alerts: AlertStates

    /// nil for anything that is not a row (a `{"dropped_rows": N}` notice, a damaged line).
    public init?(json text: String) {
        guard case .object(let object)? = JSONValue.parse(text), case .number(let pidText)? = object["pid"], let pid = Int32(pidText),
              case .bool(let alive)? = object["alive"] else { return nil }
        var figures = TargetFigures(wallSeconds: 0, elapsedSeconds: 0, pid: pid, alive: alive, processCount: 1)
        var events = EventSnapshot()
        var hasEvents = false
        for figure in Figure.all {
            let value: Double?
            switch object[figure.name] {
            case .number(let number)?: value = Double(number)
            case .bool(let truth)?: value = truth ? 1 : 0
            default: continue
            }
            if figure.source == .events { hasEvents = true }
            figure.write(&figures, &events, value)
        }
        if case .string(let command)? = object["command"] { commandName = command } else { commandName = "" }
        if case .number(let code)? = object["exit_code"] {
            status = .exited(code: Int32(code), signal: nil)
        } else if case .number(let signal)? = object["exit_signal"] {
            status = .exited(code: nil, signal: Int32(signal))
        } else {
            status = alive ? .running : .exited(code: nil, signal: nil)
        }
        var alerts = AlertStates()
        if case .array(let holding)? = object["alerts"] {
            let rules = holding.compactMap { item -> AlertRule? in
                guard case .string(let text) = item else { return nil }
                return try? AlertRule(text)
            }
            alerts = AlertStates(rules: AlertRules(rules))
            alerts.holding = rules.map { AlertSpan(text: $0.text, field: $0.field, since: 0, sinceElapsedSeconds: 0) }
        }
        self.figures = figures
        self.events = hasEvents ? events : nil
        self.alerts = alerts
    }
}
