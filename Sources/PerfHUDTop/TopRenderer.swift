import PerfHUDSupport
import PerfHUDRender

/// The screen of `perfhud top`, as lines: a header (where from, how many targets, the sort), the
/// column titles, one line per target (the selected one in reverse video) and a footer (the
/// keys, or what went wrong). Every line fits the terminal's width: columns that do not fit are
/// left out, the least telling first (phase, hot action, trend, FPS, actions/s), and names are
/// cut with `…`. Names and labels come from the daemon and are escaped here.
public enum TopRenderer {
    public struct Screen {
        public var rows: [TopRow]
        public var selected: Int?
        public var sort: TopSort
        /// Where the metrics come from (shown in the header).
        public var source: String
        /// Instead of the keys in the footer: what went wrong, or what happened.
        public var message: String?
        /// The first row shown (scrolled so that the selected one is on screen).
        public var firstRow = 0

        public init(rows: [TopRow], selected: Int?, sort: TopSort, source: String, message: String? = nil) {
            self.rows = rows
            self.selected = selected
            self.sort = sort
            self.source = source
            self.message = message
        }
    }

    /// Lines other than targets': header, titles, footer.
    public static let chromeLines = 3

    /// A column: its title, its width, right-aligned or not, and its text for a row.
    private struct Column {
        let title: String
        var width: Int
        let right: Bool
        let text: (TopRow) -> String
    }

    public static func lines(_ screen: Screen, size: TerminalSize, style: HUDStyle) -> [String] {
        let paint = Palette(enabled: style.color)
        let width = max(1, size.columns)
        let up = screen.rows.filter(\.up).count
        var header = "perfhud top  " + TerminalText.escaped(screen.source, maxLength: 80)
            + "  \(screen.rows.count) target\(screen.rows.count == 1 ? "" : "s"), \(up) up  sorted by " + sortName(screen.sort)
        if !style.unicode { header = TerminalText.ascii(header) }
        var lines = [paint.bold(fit(header, width))]

        let columns = layout(screen.rows, width: width)
        let marker = style.unicode ? "▼" : "*"
        let titles = columns.map { column in
            pad(fit(screen.sort.column == column.title ? column.title + marker : column.title, column.width), column.width, right: column.right)
        }.joined(separator: " ")
        lines.append(paint.inverse(pad(fit(titles, width), width, right: false)))

        let visible = max(0, size.rows - chromeLines)
        for index in screen.rows.indices.dropFirst(screen.firstRow).prefix(visible) {
            let row = screen.rows[index]
            var cells: [String] = []
            for column in columns {
                var cell = pad(fit(ascii(column.text(row), style), column.width), column.width, right: column.right)
                if column.title == "STATE", index != screen.selected { cell = row.up ? paint.green(cell) : paint.red(cell) }
                cells.append(cell)
            }
            let line = cells.joined(separator: " ")
            if index == screen.selected {
                lines.append(paint.inverse(pad(line, width, right: false)))
            } else {
                lines.append(row.up ? line : paint.dim(line))
            }
        }
        if screen.rows.isEmpty { lines.append(fit("no targets: the daemon watches none yet", width)) }
        while lines.count < size.rows - 1 { lines.append("") }
        let footer = screen.message.map { TerminalText.escaped($0, maxLength: 300) }
            ?? "c CPU  m memory  n name  f FPS  a actions  ↑/↓ select  Enter HUD  q quit"
        lines.append(fit(ascii(footer, style), width))
        return Array(lines.prefix(max(1, size.rows)))
    }

    /// The columns that fit `width`, the name column as wide as the longest name allows.
    private static func layout(_ rows: [TopRow], width: Int) -> [Column] {
        let longest = rows.map { TerminalText.displayWidth(TerminalText.escaped($0.target, maxLength: 64)) }.max() ?? 6
        var target = Column(title: "TARGET", width: min(24, max(7, longest)), right: false) { TerminalText.escaped($0.target, maxLength: 64) }
        // The GPU: the target's share and device memory, shown where a target has either (none on a
        // machine without a GPU).
        let gpu = Column(title: "GPU", width: 15, right: true) { row in
            let parts = [row.gpuPercent.map { String(format1: $0) + "%" }, row.gpuMemoryBytes.map(Units.bytes)].compactMap { $0 }
            return parts.isEmpty ? "-" : parts.joined(separator: " ")
        }
        let hasGPU = rows.contains { $0.gpuPercent != nil || $0.gpuMemoryBytes != nil }
        // The network: bytes each way a second, established TCP connections and retransmits a second.
        let network = [
            Column(title: "NET ↑", width: 10, right: true) { $0.netTxPerSecond.map { Units.bytes(max(0, $0)) + "/s" } ?? "-" },
            Column(title: "NET ↓", width: 10, right: true) { $0.netRxPerSecond.map { Units.bytes(max(0, $0)) + "/s" } ?? "-" },
            Column(title: "TCP", width: 5, right: true) { $0.tcpConnections.map { String($0.clampedInt) } ?? "-" },
            Column(title: "RETR/s", width: 6, right: true) { $0.tcpRetransmitsPerSecond.map(rate) ?? "-" },
        ]
        let hasNetwork = rows.contains { $0.tcpConnections != nil || $0.netTxPerSecond != nil }
        let fixed: [Column] = [
            Column(title: "STATE", width: 5, right: false) { $0.up ? "up" : "down" },
            Column(title: "CPU%", width: 6, right: true) { $0.cpuPercent.map { String(format1: $0) } ?? "-" },
            Column(title: "RSS", width: 9, right: true) { $0.residentBytes.map(Units.bytes) ?? "-" },
        ] + (hasGPU ? [gpu] : []) + (hasNetwork ? network : []) + [
            Column(title: "TREND", width: 11, right: true) { $0.residentTrend.map(Units.byteRate) ?? "-" },
            Column(title: "FPS", width: 5, right: true) { $0.framesPerSecond.map(rate) ?? "-" },
            Column(title: "ACT/s", width: 6, right: true) { $0.actionsPerSecond.map(rate) ?? "-" },
        ]
        let hot = Column(title: "HOT ACTION", width: 16, right: false) { row in
            row.hotAction.map { TerminalText.escaped($0.label, maxLength: 64) + " " + rate($0.rate) + "/s" } ?? "-"
        }
        let phase = Column(title: "PHASE", width: 12, right: false) { $0.phase.map { TerminalText.escaped($0, maxLength: 64) } ?? "-" }
        // Least telling last: dropped first when the width runs out.
        var chosen = fixed + [hot, phase]
        let dropOrder = ["PHASE", "HOT ACTION", "RETR/s", "TREND", "FPS", "ACT/s", "TCP", "NET ↓", "NET ↑", "GPU", "RSS", "CPU%"]
        func used() -> Int { target.width + chosen.reduce(0) { $0 + 1 + $1.width } }
        for title in dropOrder where used() > width { chosen.removeAll { $0.title == title } }
        // A narrow terminal: the name gives up columns first; then it is cut. (7: "TARGET▼")
        if used() > width { target.width = max(1, target.width - (used() - width)) }
        if used() > width { chosen = [] }
        // What is left over widens the hot action and the phase (a name is as wide as it needs).
        var spare = width - used()
        for title in ["HOT ACTION", "PHASE"] {
            guard spare > 0, let index = chosen.firstIndex(where: { $0.title == title }) else { continue }
            let grow = min(spare, title == "PHASE" ? 20 : 24)
            chosen[index].width += grow
            spare -= grow
        }
        return [target] + chosen
    }

    private static func sortName(_ sort: TopSort) -> String {
        switch sort {
        case .cpu: return "CPU"
        case .memory: return "memory"
        case .name: return "name"
        case .fps: return "FPS"
        case .actions: return "actions/s"
        }
    }

    /// `59.9` below 100, `120` above.
    private static func rate(_ value: Double) -> String {
        value < 99.95 ? String(format1: value) : String(value.rounded().clampedInt)
    }

    private static func ascii(_ text: String, _ style: HUDStyle) -> String { style.unicode ? text : TerminalText.ascii(text) }

    /// `text` cut to `width` columns, with `…` (or `.` in ASCII) where it was cut.
    package static func fit(_ text: String, _ width: Int) -> String {
        guard TerminalText.displayWidth(text) > width else { return text }
        guard width > 1 else { return TerminalText.truncated(text, toWidth: width) }
        let ellipsis = text.utf8.allSatisfy({ $0 < 0x80 }) ? "." : "…"
        return TerminalText.truncated(text, toWidth: width - 1) + ellipsis
    }

    private static func pad(_ text: String, _ width: Int, right: Bool) -> String {
        let missing = max(0, width - TerminalText.displayWidth(text))
        let blanks = String(repeating: " ", count: missing)
        return right ? blanks + text : text + blanks
    }
}
