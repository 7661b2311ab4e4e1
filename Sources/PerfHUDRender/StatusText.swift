import PerfHUDSupport
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// `perfhud status --format`: where the line goes.
public enum StatusFormat: String, CaseIterable {
    /// One line of text.
    case plain
    /// The JSON row of `--output json` (with `alerts`).
    case json
    /// waybar's custom module, `return-type: json`: `text`, `tooltip`, `class`, `percentage`.
    case waybar
    /// The i3bar protocol (i3bar, swaybar, i3status wrappers): a header, then an array of blocks a line.
    case i3bar
    /// A tmux status-line segment, in tmux's own style syntax (`#[fg=red]`): `#(perfhud status PID --format tmux)`.
    case tmux
}

/// The status bar's line of one tick, in each format: the same segments (who, CPU, memory,
/// threads, frames, the alerts holding), each figure in the alert colour while an `--alert` on it
/// holds. Pure: a tick's figures in, text out. The JSON row itself is `RowFormatter`'s.
public enum StatusText {
    /// A piece of the line; `alert` nil where no alert watches its figure.
    struct Segment {
        var label: String
        var value: String
        var alert: Bool?
    }

    /// The segments of a tick's figures; `note` said where a figure cannot be known yet (the first
    /// one-shot call has no interval for its rates).
    static func segments(_ figures: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot?,
                         alerts: AlertStates, note: String?) -> [Segment] {
        func watched(_ field: Figure.Field) -> Bool? { alerts.watches(field) ? alerts.holds(field) : nil }
        var segments = [Segment(label: "PID \(figures.pid)", value: TerminalText.escaped(commandName, maxLength: 32), alert: nil)]
        if status != .running { return segments + [Segment(label: "", value: status.description, alert: nil)] }
        if let cpu = figures.cpuPercent {
            segments.append(Segment(label: "CPU", value: Units.percent(cpu) + figures.cpuLimitText, alert: watched(.cpu_percent)))
        } else {
            segments.append(Segment(label: "CPU", value: note == nil ? "n/a" : "…", alert: nil))
        }
        if let (name, bytes) = figures.shownMemory {
            var value = Units.bytes(Double(bytes))
            if let limit = figures.memoryLimitBytes, limit > 0 { value += " / " + Units.bytes(Double(limit)) }
            segments.append(Segment(label: name, value: value, alert: watched(figures.shownMemoryField)))
        }
        if let threads = figures.threads { segments.append(Segment(label: "thr", value: String(threads), alert: watched(.threads))) }
        if let events, events.hasFrames {
            segments.append(Segment(label: "FPS", value: RowFormatter.number(events.fps, decimals: 0), alert: watched(.fps)))
        }
        // The line names each alert that holds, in the user's words.
        for span in alerts.holding {
            segments.append(Segment(label: "⚠", value: TerminalText.escaped(span.text, maxLength: 60), alert: true))
        }
        return segments
    }

    /// The line of `format` (not `.json`, which is the row's); `color` false: no colour at all.
    public static func line(_ figures: TargetFigures, commandName: String, status: TargetStatus, events: EventSnapshot?,
                            alerts: AlertStates, note: String?, format: StatusFormat, color: Bool) -> String {
        let segments = segments(figures, commandName: commandName, status: status, events: events, alerts: alerts, note: note)
        let plain = segments.map { $0.label.isEmpty ? $0.value : $0.label + " " + $0.value }.joined(separator: "  ")
        let holding = !alerts.holding.isEmpty
        switch format {
        case .plain, .json:
            return plain + (note.map { "  (" + $0 + ")" } ?? "")
        case .tmux:
            return segments.map { segment in
                let value = tmuxEscaped(segment.value)
                let shown = !color || segment.alert == nil ? value
                    : segment.alert == true ? "#[fg=red,bold]" + value + "#[fg=default,nobold]" : "#[fg=green]" + value + "#[fg=default]"
                return segment.label.isEmpty ? shown : tmuxEscaped(segment.label) + " " + shown
            }.joined(separator: " ")
        case .waybar:
            // The text is Pango markup to waybar: `&`, `<` and `>` escaped; the colour is the
            // style sheet's, by `class` (`alert` while one holds).
            var tooltipLines: [String] = [commandName.isEmpty ? plain : TerminalText.escaped(commandName, maxLength: 200)]
            for segment in segments.dropFirst() { tooltipLines.append(segment.label + " " + segment.value) }
            if let note { tooltipLines.append(note) }
            let tooltip = tooltipLines.joined(separator: "\n")
            let percentage = Int(min(100, max(0, figures.cpuPercent ?? 0)).rounded())
            return "{\"text\":" + RowFormatter.quoted(pangoEscaped(plain)) + ",\"tooltip\":" + RowFormatter.quoted(pangoEscaped(tooltip))
                + ",\"class\":" + (holding ? "\"alert\"" : "\"normal\"") + ",\"percentage\":" + String(percentage)
                + ",\"alt\":" + RowFormatter.quoted(holding ? "alert" : "normal") + "}"
        case .i3bar:
            var block = "{\"name\":\"perfhud\",\"instance\":" + RowFormatter.quoted(String(figures.pid)) + ",\"full_text\":" + RowFormatter.quoted(plain)
                + ",\"short_text\":" + RowFormatter.quoted(segments.prefix(2).map { $0.label + " " + $0.value }.joined(separator: " "))
            if holding { block += ",\"urgent\":true" + (color ? ",\"color\":\"#FF5555\"" : "") }
            return "[" + block + "}]"
        }
    }

    /// What goes before a line of a stream of `format` (`--follow`): for i3bar, the protocol's
    /// header and the opening of its endless array before the first, a comma before each one after
    /// it (each line an element of the array); nothing for the other formats.
    public static func lead(of format: StatusFormat, first: Bool) -> String {
        guard format == .i3bar else { return "" }
        return first ? "{\"version\":1}\n[\n" : ","
    }

    /// Text in a tmux format: `#` doubled, so `#(…)`, `#{…}` and `#[…]` in a name are shown, not run.
    static func tmuxEscaped(_ text: String) -> String {
        text.contains("#") ? text.split(separator: "#", omittingEmptySubsequences: false).joined(separator: "##") : text
    }

    static func pangoEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
