#if canImport(Glibc)
import Glibc
#endif
import PerfHUDPipeline

/// One chart of the HTML report: figures over time as inline SVG (no script, no network), with
/// phase visits as shaded bands, horizontal reference lines, marks, and an HTML legend under it.
/// Long recordings are drawn per pixel column, keeping the minimum and the maximum of each column
/// (as the terminal memory graph does), so a one-sample spike is never averaged away and an hour
/// at a 10 ms tick costs no more than a minute. A missing value (nil) is a gap in the line.
package struct SVGChart {
    /// How the y axis reads: its tick labels and the unit in its title.
    package enum Axis {
        case percent, bytes, milliseconds
        /// Bytes per second (storage I/O): ticks in KiB/s, MiB/s… as bytes.
        case bytesPerSecond
        /// A rate, e.g. "FPS" or "actions/s".
        case rate(String)
    }
    /// A shaded stretch of time: one visit of a phase.
    package struct Band {
        package var start: Double, end: Double, name: String, color: String
        /// Fill opacity: the phase `--phase` names stands out, the others fade.
        var opacity = 0.16
    }
    package struct Line {
        package var name: String
        package var points: [(t: Double, value: Double?)]
        package var color: String
        package var width = 1.6
        /// A baseline run is drawn dashed and fainter on the same axes.
        package var dashed = false
        var opacity = 1.0
    }
    /// A horizontal reference line with its label, e.g. `p99 33.4 ms`.
    package struct Rule { package var value: Double, label: String, color: String, dashed = true }

    package var title: String
    var axisTitle: String
    package var axis: Axis
    /// The x axis spans 0…duration seconds since the start of the run.
    package var duration: Double
    /// The top of the y axis before rounding up to a tick; nil: from the data.
    var yLimit: Double?
    package var bands: [Band] = []
    package var lines: [Line] = []
    /// Many values drawn as the min–max range of each pixel column: frame times.
    var scatter: (name: String, points: [(t: Double, value: Double)], color: String)?
    package var rules: [Rule] = []
    /// Points worth pointing at (janky frames), one circle per pixel column with their count.
    /// Points marked (janky frames), each standing for `weight` of what it marks (a sampled frame for 1 / its rate).
    var marks: (name: String, points: [(t: Double, value: Double, weight: Double)], color: String)?
    /// Extra legend text after the entries (e.g. "3 frames above 100 ms drawn at the top").
    package var notes: [String] = []

    package static let width = 1160.0, height = 300.0
    package static let left = 78.0, right = 16.0, top = 26.0, bottom = 46.0
    var plotWidth: Double { Self.width - Self.left - Self.right }
    var plotHeight: Double { Self.height - Self.top - Self.bottom }

    /// The chart as one HTML `<section>`: heading, SVG, legend.
    package func html() -> String {
        let yTicks = Self.ticks(upTo: yLimit ?? dataMaximum(), axis: axis)
        let yTop = yTicks.last ?? 1
        func x(_ t: Double) -> Double { Self.left + (duration > 0 ? min(max(t / duration, 0), 1) : 0) * plotWidth }
        func y(_ value: Double) -> Double { Self.top + plotHeight * (1 - min(max(value / yTop, 0), 1)) }
        func n(_ value: Double) -> String { RowFormatter.number(value, decimals: 1) }
        let columns = Int(plotWidth)
        func column(_ t: Double) -> Int { duration > 0 ? min(columns - 1, max(0, Int(t / duration * Double(columns)))) : 0 }

        var svg = "<svg viewBox=\"0 0 \(n(Self.width)) \(n(Self.height))\" role=\"img\" aria-label=\"\(HTMLText.escaped(title))\">"
        svg += "<text class=\"axis-title\" x=\"4\" y=\"14\">\(HTMLText.escaped(axisTitle))</text>"
        for band in bands {
            let x0 = x(band.start), x1 = max(x(band.end), x0 + 1)
            svg += "<rect class=\"band\" data-phase=\"\(HTMLText.escaped(band.name))\" x=\"\(n(x0))\" y=\"\(n(Self.top))\" width=\"\(n(x1 - x0))\" height=\"\(n(plotHeight))\" fill=\"\(band.color)\" fill-opacity=\"\(RowFormatter.number(band.opacity))\">"
                + "<title>\(HTMLText.escaped(band.name)) \(Self.seconds(band.start))–\(Self.seconds(band.end)) s</title></rect>"
        }
        for tick in yTicks {
            svg += "<line class=\"grid\" x1=\"\(n(Self.left))\" x2=\"\(n(Self.width - Self.right))\" y1=\"\(n(y(tick)))\" y2=\"\(n(y(tick)))\"/>"
                + "<text class=\"tick\" x=\"\(n(Self.left - 6))\" y=\"\(n(y(tick) + 4))\" text-anchor=\"end\">\(Self.label(tick, axis: axis, scaleFrom: yTop))</text>"
        }
        let (timeTicks, timeTitle) = Self.timeTicks(duration)
        for tick in timeTicks {
            svg += "<line class=\"axis\" x1=\"\(n(x(tick)))\" x2=\"\(n(x(tick)))\" y1=\"\(n(Self.height - Self.bottom))\" y2=\"\(n(Self.height - Self.bottom + 5))\"/>"
                + "<text class=\"tick\" x=\"\(n(x(tick)))\" y=\"\(n(Self.height - Self.bottom + 18))\" text-anchor=\"middle\">\(Self.timeLabel(tick, duration: duration))</text>"
        }
        svg += "<text class=\"axis-title\" x=\"\(n(Self.left + plotWidth / 2))\" y=\"\(n(Self.height - 6))\" text-anchor=\"middle\">\(timeTitle)</text>"
        svg += "<line class=\"axis\" x1=\"\(n(Self.left))\" x2=\"\(n(Self.left))\" y1=\"\(n(Self.top))\" y2=\"\(n(Self.height - Self.bottom))\"/>"
            + "<line class=\"axis\" x1=\"\(n(Self.left))\" x2=\"\(n(Self.width - Self.right))\" y1=\"\(n(Self.height - Self.bottom))\" y2=\"\(n(Self.height - Self.bottom))\"/>"
        // Band names at the top of their band, cut to fit it: the legend has them all anyway.
        for band in bands {
            let room = Int((max(x(band.end), x(band.start) + 1) - x(band.start) - 8) / 6.8)
            guard room >= 3 else { continue }
            let name = band.name.count <= room ? band.name : String(band.name.prefix(room - 1)) + "…"
            svg += "<text class=\"band-label\" x=\"\(n(x(band.start) + 4))\" y=\"\(n(Self.top + 13))\">\(HTMLText.escaped(name))</text>"
        }
        // Reference lines under the data (a frame time on p50 stays visible), their labels over it:
        // above the line at the right, a label too close to the one above pushed down.
        var ruleLabels = ""
        var lastLabelY = -Double.infinity
        for rule in rules.sorted(by: { $0.value > $1.value }) {
            let ruleY = y(rule.value)
            let labelY = max(ruleY - 4, lastLabelY + 14)
            lastLabelY = labelY
            svg += "<line class=\"rule\" data-label=\"\(HTMLText.escaped(rule.label))\" data-value=\"\(RowFormatter.number(rule.value, decimals: 3))\" x1=\"\(n(Self.left))\" x2=\"\(n(Self.width - Self.right))\" y1=\"\(n(ruleY))\" y2=\"\(n(ruleY))\" stroke=\"\(rule.color)\""
                + (rule.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>"
            ruleLabels += "<text class=\"rule-label\" x=\"\(n(Self.width - Self.right - 4))\" y=\"\(n(labelY))\" text-anchor=\"end\" style=\"fill:\(rule.color)\">\(HTMLText.escaped(rule.label))</text>"
        }
        if let scatter {
            var low = [Double?](repeating: nil, count: columns), high = [Double?](repeating: nil, count: columns)
            for point in scatter.points {
                let c = column(point.t)
                low[c] = min(low[c] ?? point.value, point.value); high[c] = max(high[c] ?? point.value, point.value)
            }
            var path = ""
            for c in 0..<columns {
                guard let lowest = low[c], let highest = high[c] else { continue }
                let px = Self.left + Double(c) + 0.5, y0 = y(lowest), y1 = y(highest)
                path += "M\(n(px)) \(n(y0))V\(n(y0 - y1 < 1.5 ? y0 - 1.5 : y1))"
            }
            svg += "<path class=\"scatter\" d=\"\(path)\" stroke=\"\(scatter.color)\"/>"
        }
        for line in lines {
            var path = "", pen = "M"
            for point in Self.downsampled(line.points, columns: columns, column: column) {
                guard let point else { pen = "M"; continue }
                path += "\(pen)\(n(x(point.t))) \(n(y(point.value)))"
                pen = "L"
            }
            svg += "<path class=\"line\" d=\"\(path)\" stroke=\"\(line.color)\" stroke-width=\"\(n(line.width))\""
                + (line.dashed ? " stroke-dasharray=\"6 4\"" : "") + (line.opacity < 1 ? " stroke-opacity=\"\(RowFormatter.number(line.opacity))\"" : "")
                + "><title>\(HTMLText.escaped(line.name))</title></path>"
        }
        svg += ruleLabels
        if let marks {
            var count = [Double](repeating: 0, count: columns), worst = [Double](repeating: 0, count: columns), at = [Double](repeating: 0, count: columns)
            for point in marks.points {
                let c = column(point.t)
                count[c] += point.weight
                if point.value > worst[c] { worst[c] = point.value; at[c] = point.t }
            }
            for c in 0..<columns where count[c] > 0 {
                svg += "<circle class=\"mark\" data-frames=\"\(RowFormatter.number(count[c]))\" cx=\"\(n(x(at[c])))\" cy=\"\(n(y(worst[c])))\" r=\"3.5\" fill=\"\(marks.color)\">"
                    + "<title>\(RowFormatter.number(count[c])) \(HTMLText.escaped(marks.name)), worst \(Self.label(worst[c], axis: axis, scaleFrom: yTop, unit: true)) at \(Self.seconds(at[c])) s</title></circle>"
            }
        }
        svg += "</svg>"
        return "<section class=\"chart\"><h3>\(HTMLText.escaped(title))</h3>" + svg + legend() + "</section>\n"
    }

    /// The legend: phases (one entry per name), lines, the scatter, marks, then the notes.
    private func legend() -> String {
        var entries: [String] = []
        var named: Set<String> = []
        for band in bands where named.insert(band.name).inserted {
            entries.append("<span class=\"key\"><i class=\"swatch\" style=\"background:\(band.color);opacity:\(RowFormatter.number(min(1, band.opacity * 3)))\"></i>\(HTMLText.escaped(band.name))</span>")
        }
        for line in lines {
            entries.append("<span class=\"key\"><i class=\"stroke\(line.dashed ? " dashed" : "")\" style=\"border-color:\(line.color)\"></i>\(HTMLText.escaped(line.name))</span>")
        }
        if let scatter { entries.append("<span class=\"key\"><i class=\"stroke\" style=\"border-color:\(scatter.color)\"></i>\(HTMLText.escaped(scatter.name))</span>") }
        if let marks, !marks.points.isEmpty {
            entries.append("<span class=\"key\"><i class=\"dot\" style=\"background:\(marks.color)\"></i>\(HTMLText.escaped(marks.name)) (\(RowFormatter.number(marks.points.reduce(0) { $0 + $1.weight })))</span>")
        }
        entries += notes.map { "<span class=\"note\">\(HTMLText.escaped($0))</span>" }
        return entries.isEmpty ? "" : "<div class=\"legend\">" + entries.joined() + "</div>"
    }

    private func dataMaximum() -> Double {
        var top = 0.0
        for line in lines { for point in line.points { if let value = point.value, value.isFinite { top = max(top, value) } } }
        if let scatter { for point in scatter.points { top = max(top, point.value) } }
        for rule in rules { top = max(top, rule.value) }
        return top * 1.05
    }

    /// The points a line keeps: per pixel column the minimum and the maximum, in time order; nil
    /// where the line has a gap.
    package static func downsampled(_ points: [(t: Double, value: Double?)], columns: Int, column: (Double) -> Int) -> [(t: Double, value: Double)?] {
        var out: [(t: Double, value: Double)?] = []
        out.reserveCapacity(min(points.count, columns * 2 + 16))
        var current = -1
        var low: (t: Double, value: Double)?, high: (t: Double, value: Double)?
        func flush() {
            guard let lowest = low, let highest = high else { return }
            if lowest.t == highest.t { out.append(lowest) }
            else if lowest.t < highest.t { out.append(lowest); out.append(highest) }
            else { out.append(highest); out.append(lowest) }
            low = nil; high = nil
        }
        for point in points {
            guard let value = point.value, value.isFinite else {
                flush()
                if let last = out.last, last != nil { out.append(nil) }
                continue
            }
            let c = column(point.t)
            if c != current { flush(); current = c }
            if low == nil || value < low!.value { low = (point.t, value) }
            if high == nil || value > high!.value { high = (point.t, value) }
        }
        flush()
        return out
    }

    /// Round y ticks from 0 to at least `maximum`: steps of 1, 2, 2.5 or 5 × 10ⁿ (bytes: of a power of 1024).
    package static func ticks(upTo maximum: Double, axis: Axis) -> [Double] {
        let scale = unitScale(maximum, axis: axis).scale
        let top = max(maximum, axis.isBytes ? 1024 : 1) / scale
        let raw = top / 5
        let magnitude = pow(10, floor(log10(raw)))
        let step = ([1, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude)
        let count = Int((top / step - 1e-9).rounded(.up))
        return (0...max(1, count)).map { Double($0) * step * scale }
    }

    static func unitScale(_ maximum: Double, axis: Axis) -> (scale: Double, name: String) {
        guard axis.isBytes else { return (1, "") }
        if maximum >= 1024 * 1024 * 1024 { return (1024 * 1024 * 1024, "GiB") }
        if maximum >= 1024 * 1024 { return (1024 * 1024, "MiB") }
        return (1024, "KiB")
    }

    /// A y tick (or mark) label: bytes in the unit of the top tick; others as plain numbers.
    package static func label(_ value: Double, axis: Axis, scaleFrom top: Double, unit: Bool = false) -> String {
        switch axis {
        case .bytes, .bytesPerSecond:
            let (scale, name) = unitScale(top, axis: axis)
            return RowFormatter.number(value / scale, decimals: 2) + " " + name + (axis.isRate ? "/s" : "")
        case .percent: return RowFormatter.number(value, decimals: 1) + (unit ? " %" : "")
        case .milliseconds: return RowFormatter.number(value, decimals: 1) + (unit ? " ms" : "")
        case .rate(let name): return RowFormatter.number(value, decimals: 1) + (unit ? " " + name : "")
        }
    }

    /// Time ticks every 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1 h…: at most 12 of them.
    static func timeTicks(_ duration: Double) -> ([Double], String) {
        let steps: [Double] = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
        let step = steps.first { duration / $0 <= 12 } ?? max(1, (duration / 12).rounded(.up))
        let count = duration > 0 ? Int((duration / step + 1e-9).rounded(.down)) : 0
        let title = duration <= 180 ? "time since start (s)" : duration < 3600 ? "time since start (m:ss)" : "time since start (h:mm:ss)"
        return ((0...count).map { Double($0) * step }, title)
    }

    static func timeLabel(_ t: Double, duration: Double) -> String {
        if duration <= 180 { return RowFormatter.number(t, decimals: 1) }
        let whole = Int(t.rounded())
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if duration < 3600 { return "\(whole / 60):\(two(whole % 60))" }
        return "\(whole / 3600):\(two(whole / 60 % 60)):\(two(whole % 60))"
    }

    package static func seconds(_ t: Double) -> String { RowFormatter.number(t, decimals: 1) }
}

extension SVGChart.Axis {
    var isBytes: Bool {
        switch self { case .bytes, .bytesPerSecond: return true; default: return false }
    }
    var isRate: Bool { if case .bytesPerSecond = self { return true } else { return false } }
}
