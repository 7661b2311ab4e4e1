import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// Renders the HUD: `(snapshot, size, style) -> lines`. Pure: no I/O, no clock, no state.
public enum HUDRenderer {
    /// Rows the HUD takes on a terminal of `size`: a status line, the details line when shown, a
    /// graph header and the graph, shrunk on small terminals so that the program below keeps at
    /// least three rows.
    public static func height(for size: TerminalSize, style: HUDStyle) -> Int {
        if style.inTmux { return 0 }
        let details = detailsRows(for: size, style: style)
        let graphRows = max(0, min(style.graphRows, size.rows - 6 - details))
        return (graphRows > 0 ? 2 + graphRows : min(1, max(0, size.rows - 1))) + details
    }

    /// The details line takes a row where it is shown and the program keeps three rows beside it
    /// and the status line.
    static func detailsRows(for size: TerminalSize, style: HUDStyle) -> Int {
        style.showsDetails && size.rows >= 5 ? 1 : 0
    }

    /// The HUD's lines, top to bottom, each at most `size.columns` wide.
    /// - Parameter graph: the graph's lines from an earlier `graphLines` call, to reuse them.
    /// - Parameter details: the details line from an earlier `detailsLine` call, to reuse it.
    public static func render(_ snapshot: HUDSnapshot, size: TerminalSize, style: HUDStyle, graph: [String]? = nil,
                              details: String? = nil) -> [String] {
        let height = height(for: size, style: style)
        guard height > 0, size.columns > 0 else { return [] }
        let paint = Palette(enabled: style.color)
        var lines = [TerminalText.truncated(statusLine(snapshot, width: size.columns, paint: paint, unicode: style.unicode), toWidth: size.columns)]
        if detailsRows(for: size, style: style) > 0 {
            lines.append(details ?? detailsLine(snapshot, size: size, style: style))
        }
        let graphRows = height - lines.count
        if graphRows > 0 {
            if let graph, graph.count == graphRows { lines += graph } else { lines += graphLines(snapshot, size: size, style: style) }
        }
        return lines
    }

    /// The graph header and rows. The costly part of a frame (it walks every visible sample), so
    /// the caller may redraw it only every `graphRefreshInterval`.
    public static func graphLines(_ snapshot: HUDSnapshot, size: TerminalSize, style: HUDStyle) -> [String] {
        let rows = height(for: size, style: style) - 2 - detailsRows(for: size, style: style)
        guard rows > 0 else { return [] }
        return graph(snapshot, width: size.columns, rows: rows, paint: Palette(enabled: style.color), unicode: style.unicode)
            .map { TerminalText.truncated($0, toWidth: size.columns) }
    }

    /// The details line (`style.showsDetails`). Worth redrawing at most `detailsRefreshInterval`:
    /// nobody reads ten figures faster, and half of them change once a second.
    public static func detailsLine(_ snapshot: HUDSnapshot, size: TerminalSize, style: HUDStyle) -> String {
        DetailsLine.render(snapshot.figures, note: snapshot.detailsNote, width: size.columns, paint: Palette(enabled: style.color), unicode: style.unicode)
    }

    public static let detailsRefreshInterval: UInt64 = 250_000_000

    /// How often the graph is worth redrawing: once per dot column's worth of time (a column
    /// then gains a sample), at least once a second, at most once a tick.
    public static func graphRefreshInterval(_ snapshot: HUDSnapshot, size: TerminalSize) -> Double {
        let tick = Double(snapshot.tickNanoseconds) / 1e9
        let cells = max(1, size.columns - graphLabelWidth - 1)
        let span = graphSpan(snapshot, cells: cells)
        return min(1, max(tick, span / Double(cells * 2)))
    }

    static let graphLabelWidth = 11

    /// Until the history fills, the window spans what there is, but never less than one sample
    /// per dot column: the graph scrolls in from the right, then compresses, then scrolls.
    static func graphSpan(_ snapshot: HUDSnapshot, cells: Int) -> Double {
        let tick = Double(snapshot.tickNanoseconds) / 1e9
        let now = snapshot.series.times.last ?? snapshot.elapsedSeconds
        return max(min(now, snapshot.historySeconds), Double(cells * 2) * tick)
    }

    // MARK: status line

    /// - Parameter unicode: false for a locale that is not UTF-8: every segment in ASCII.
    static func statusLine(_ snapshot: HUDSnapshot, width: Int, paint: Palette, unicode: Bool = true) -> String {
        let report = snapshot.figures
        let name = TerminalText.escaped(snapshot.commandName, maxLength: 32)
        // Segments in order of appearance; lower priority numbers are dropped last: on 80
        // columns PID, CPU and RSS always stay, then frames and the worst high-frequency action.
        var segments: [(priority: Int, text: String)] = []
        segments.append((0, paint.bold("PID \(snapshot.pid)") + " " + name))
        if let playback = snapshot.playback { segments.append((0, paint.cyan(playback))) }
        if !snapshot.alerts.holding.isEmpty {
            // The line names what holds (the user's own words, escaped: they reach the terminal).
            let names = snapshot.alerts.holding.map { TerminalText.escaped($0.text, maxLength: 60) }.joined(separator: ", ")
            segments.append((0, paint.red(paint.bold((unicode ? "⚠ " : "! ") + names))))
        }
        if snapshot.status != .running {
            let oomKill = report?.oomKillText.map { ", " + $0 } ?? ""
            segments.append((0, paint.red(paint.bold(snapshot.status.description.uppercasedFirst + oomKill))))
        } else if report?.stopped == true {
            segments.append((0, paint.yellow(paint.bold("Stopped"))))
        } else if let cpu = report?.cpuPercent {
            // Under a quota: `CPU 50 % / 0.5 cores`, coloured by the share of the quota it uses.
            let share = report?.cpuLimitCores.map { cpu / max($0, 0.01) } ?? cpu
            let text = snapshot.alerts.watches(.cpu_percent) ? paint.alert(snapshot.alerts.holds(.cpu_percent), Units.percent(cpu))
                : paint.threshold(share, warn: 50, alarm: 90, Units.percent(cpu))
            segments.append((1, "CPU " + text + (report?.cpuLimitText ?? "")))
            if let user = report?.cpuUserPercent, let system = report?.cpuSystemPercent {
                segments.append((4, paint.dim("u " + Units.compactPercent(user) + " s " + Units.compactPercent(system))))
            }
        } else {
            segments.append((1, "CPU " + paint.dim("…")))
        }
        if let events = snapshot.events, snapshot.status == .running {
            if events.hasFrames {
                // A terminal program draws when it has something to show: no redraw in the last second is idling.
                let fps = events.fps == 0 && events.frameSource == .tty ? "idle" : RowFormatter.number(events.fps, decimals: 0)
                var text = "FPS " + (snapshot.alerts.watches(.fps) ? paint.alert(snapshot.alerts.holds(.fps), fps) : fps)
                if let source = events.frameSource, source != .events { text += paint.dim(" " + source.rawValue) }
                if let p99 = events.frameP99 {
                    // Coloured against what janky is judged by: the program's own pace (its median frame), or the refresh's budget.
                    let budget = events.paced ? (events.frameP50 ?? p99) : 1000 / max(1, events.refreshHz)
                    text += " p99 " + paint.threshold(p99 / max(budget, 1e-3) * 100, warn: 101, alarm: 150, RowFormatter.number(p99, decimals: 1) + "ms")
                }
                text += " jank " + (events.jankyFrames > 0 ? paint.yellow(RowFormatter.number(events.jankyFrames, decimals: 0)) : "0")
                segments.append((2, text))
            } else if let note = snapshot.framesNote {
                segments.append((4, paint.dim(note)))
            } else if let reason = events.framesUnreportedReason {
                segments.append((4, paint.dim(reason == FramesUnreported.terminalIdle ? "tty idle" : "frames not reported (" + reason + ")")))
            }
            if let p50 = events.inputLatencyP50, let p99 = events.inputLatencyP99 {
                segments.append((3, "key→screen " + RowFormatter.number(p50, decimals: 0) + "/" + RowFormatter.number(p99, decimals: 0) + "ms"))
            }
            if events.hasActions {
                segments.append((3, "act " + RowFormatter.number(events.actionsPerSecond, decimals: 0) + "/s"))
            }
            if let worst = events.highFrequencyActions.first {
                let rate = worst.rate > 0 ? RowFormatter.number(worst.rate, decimals: 0) + "/s" : "peak " + RowFormatter.number(worst.peak, decimals: 0) + "/s"
                segments.append((2, paint.yellow("⚠ " + TerminalText.escaped(worst.action, maxLength: 36) + " " + rate)))
            }
        }
        if let (name, resident) = report?.shownMemory {
            // Under a limit: `RSS 412 MiB / 512 MiB`, the share coloured as the limit nears (the
            // kernel reclaims, then kills, at the limit). A tree's: `Mem`, its PSS sum; a whole
            // control group's: `Mem`, its working set.
            let memoryField = report?.shownMemoryField ?? .rss_bytes
            let amount = Units.bytes(Double(resident))
            var text = name + " " + (snapshot.alerts.watches(memoryField) ? paint.alert(snapshot.alerts.holds(memoryField), amount) : amount)
            if let limit = report?.memoryLimitBytes, limit > 0 {
                text += " / " + paint.threshold(Double(resident) / Double(limit) * 100, warn: 80, alarm: 95, Units.bytes(Double(limit)))
            }
            segments.append((1, text))
            if let trend = report?.residentTrendBytesPerSecond {
                let rate = Units.byteRate(trend)
                let watched = snapshot.alerts.watches(.rss_trend_bytes_per_second)
                segments.append((3, watched ? paint.alert(snapshot.alerts.holds(.rss_trend_bytes_per_second), rate)
                                    : trend > 1024 * 1024 ? paint.yellow(rate) : paint.dim(rate)))
            }
        }
        if snapshot.status == .running, let gpu = report.flatMap({ GPUText.status($0.gpu, paint: paint) }) {
            segments.append((2, gpu))
        }
        if snapshot.status == .running {
            let age = report?.proportionalAgeText.map { " " + paint.dim($0) } ?? ""
            // Beside it: a tree's RSS sum (as htop would add it up), a group's PSS sum, one process's PSS.
            if let (name, bytes) = report?.besideMemory {
                segments.append((3, name + " " + (bytes.map { Units.bytes(Double($0)) } ?? paint.dim("n/a")) + age))
            }
            if let threads = report?.threads { segments.append((4, "thr \(threads)")) }
            if let count = report?.processCount, count > 1 { segments.append((4, "procs \(count)")) }
        }
        segments.append((6, "tick " + DurationText.format(nanoseconds: snapshot.tickNanoseconds)))
        if snapshot.playback == nil { segments.append((5, DurationText.clock(seconds: snapshot.elapsedSeconds))) }

        let separator = paint.dim(unicode ? " │ " : " | ")
        let fields = segments.map { DetailsLine.Field(priority: $0.priority, text: unicode ? $0.text : TerminalText.ascii($0.text)) }
        // The least important segment dropped first, among equals the one further right; priority 0 stays.
        return paint.inverse(DetailsLine.fit(fields, separator: separator, width: width, keeping: 0).padded(toWidth: width))
    }

    // MARK: memory graph

    package static func graph(_ snapshot: HUDSnapshot, width: Int, rows: Int, paint: Palette, unicode: Bool = true) -> [String] {
        let labelWidth = graphLabelWidth
        let cells = max(1, width - labelWidth - 1)
        let tick = Double(snapshot.tickNanoseconds) / 1e9
        let now = snapshot.series.times.last ?? snapshot.elapsedSeconds
        let span = graphSpan(snapshot, cells: cells)
        let start = now - span
        let columns = snapshot.series.minMax(.residentBytes, width: cells * 2, from: start, to: now, bridging: tick * 1.5)
        let values = columns.compactMap { $0 }
        let current = snapshot.figures?.residentBytes.map { Double($0) }
        let header: String
        // A tree's memory is its PSS sum, counted once (`TargetFigures.memoryIsProportionalSum`).
        let title = snapshot.figures?.memoryIsProportionalSum == true ? "memory (PSS Σ) " : "memory (RSS) "
        var low = values.map(\.lowerBound).min() ?? 0
        var high = values.map(\.upperBound).max() ?? 0
        if values.isEmpty {
            // Before the first sample, "no samples yet"; after it, why there is no figure (a kernel
            // thread has no memory of its own) rather than a wait that never ends.
            let why = snapshot.series.count == 0 ? "no samples yet" : snapshot.memoryNote ?? "n/a: not readable"
            header = title + paint.dim(why)
        } else {
            header = title + paint.bold(current.map(Units.bytes) ?? "n/a")
                + paint.dim("  min ") + Units.bytes(low) + paint.dim("  max ") + Units.bytes(high)
                + paint.dim("  over the last " + DurationText.format(nanoseconds: UInt64(min(now, span) * 1e9)))
        }
        // A flat line sits mid-graph rather than on the floor: pad the range by 1 MiB or 5 %.
        let pad = max(1024 * 1024, (high - low) * 0.05)
        if high - low < 1024 * 1024 { low -= pad / 2; high += pad / 2 }
        low = max(0, low)
        // Each cell takes the colour of the phase active at its newest sample, with a legend.
        var colors: [String?]? = nil
        var legend = ""
        if !snapshot.phases.names.isEmpty {
            let phaseColumns = snapshot.series.lastValues(.phase, width: cells * 2, from: start, to: now)
            if paint.enabled {
                colors = (0..<cells).map { cell in
                    (phaseColumns[min(cell * 2 + 1, phaseColumns.count - 1)] ?? phaseColumns[cell * 2]).map { Self.phaseColor(Int($0)) }
                }
            }
            let kept = Dictionary(snapshot.phases.lastFinishedByName.map { ($0.name, $0.keptBytes) }, uniquingKeysWith: { first, _ in first })
            for (id, name) in snapshot.phases.names.enumerated() {
                var entry = paint.color(Self.phaseColor(id), "■") + " " + TerminalText.escaped(name, maxLength: 24)
                if let bytes = kept[name] ?? nil {
                    let text = Units.signedBytes(Double(bytes))
                    entry += paint.dim(" kept ") + (bytes > 1 << 20 ? paint.yellow(text) : text)
                }
                if snapshot.phases.current?.name == name { entry = paint.bold("▶ ") + entry }
                legend += "  " + entry
            }
        }
        let plot = BrailleGraph.draw(columns, rows: rows, low: low, high: high, colors: colors, ascii: !unicode)
        var lines = [" " + (unicode ? header + legend : TerminalText.ascii(header + legend))]
        for (index, row) in plot.enumerated() {
            var label = ""
            if index == 0 { label = Units.bytes(high) }
            if index == rows - 1 { label = Units.bytes(low) }
            if rows == 1 { label = Units.bytes(high) }
            lines.append(" " + (colors == nil ? paint.cyan(row) : row) + " " + paint.dim(label.padded(toWidth: labelWidth - 1)))
        }
        return lines
    }
}

extension HUDRenderer {
    /// Phase colours: cyan, magenta, green, blue, yellow, red, then the bright ones.
    package static let phaseColors = ["36", "35", "32", "34", "33", "31", "96", "95", "92", "94"]
    static func phaseColor(_ id: Int) -> String { phaseColors[abs(id) % phaseColors.count] }
}

/// SGR colours, or nothing with `--no-color` / `NO_COLOR`.
extension String {
    package func padded(toWidth width: Int) -> String {
        let missing = width - TerminalText.displayWidth(self)
        return missing > 0 ? self + String(repeating: " ", count: missing) : self
    }
    var uppercasedFirst: String { prefix(1).uppercased() + dropFirst() }
}
