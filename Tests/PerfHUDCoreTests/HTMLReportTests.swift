import XCTest
@testable import PerfHUDPipeline
@testable import PerfHUDRecordings

/// `perfhud report --format html`: the page says what the summary says, escapes what it did not
/// write itself, fetches nothing, and stays small for long recordings.
final class HTMLReportTests: XCTestCase {
    /// A run of `seconds` at `tick`: CPU and RSS every tick (RSS grows in Gallery and stays),
    /// PSS once a second, frames at 60 FPS with every 50th one janky (40 ms), a slider dragged 30
    /// times a second in Editor and a save every 5 s; phases Home, Gallery, Editor in turn, 10 s each.
    static func recording(seconds: Double, tick: Double, frames: Bool = true) -> Recording {
        var recording = Recording()
        recording.meta = ["target_command": "myapp", "target_command_line": "./myapp --benchmark", "perfhud_version": "0.1.0",
                          "started_at": "2026-11-23T08:00:00.000Z", "tick_seconds": String(tick), "refresh_hz": "60", "jank_factor": "1.5",
                          "action_threshold": "20", "options": "[\"perfhud\",\"run\",\"--record\",\"run.db\",\"--\",\"./myapp\"]"]
        let names = ["Home", "Gallery", "Editor"]
        var visit = 0
        while Double(visit) * 10 < seconds {
            let start = Double(visit) * 10, exit = min(seconds, start + 10)
            let entry = UInt64(100 << 20) + UInt64(visit / 3) * (20 << 20)
            recording.phases.append(.init(name: names[visit % 3], t: start, tExit: exit < seconds ? exit : nil,
                                          entryBytes: entry + (visit % 3 == 2 ? 20 << 20 : 0), exitBytes: exit < seconds ? entry + 20 << 20 : nil))
            visit += 1
        }
        let count = Int(seconds / tick)
        recording.samples.reserveCapacity(count + 1)
        for index in 0...count {
            let t = Double(index) * tick
            let phase = names[Int(t / 10) % 3]
            var row = Recording.SampleRow(t: t, cpuPercent: phase == "Editor" ? 95 + Double(index % 7) : 10 + Double(index % 5),
                                          residentBytes: UInt64(100 << 20) + UInt64(t / 30) * (20 << 20) + (phase == "Gallery" ? 20 << 20 : 0), phase: phase)
            if index % max(1, Int(1 / tick)) == 0 { row.proportionalBytes = row.residentBytes.map { $0 - (4 << 20) } }
            recording.samples.append(row)
        }
        if frames {
            recording.frames = (0..<Int(seconds * 60)).map { .init(t: Double($0) / 60, milliseconds: $0 % 50 == 49 ? 40 : 16.5) }
        }
        // 30 slider actions a second, whatever the tick: every tick, or every few ticks at a short one.
        let every = max(1, Int((1 / (30 * tick)).rounded()))
        for index in stride(from: 0, to: count, by: every) where names[Int(Double(index) * tick / 10) % 3] == "Editor" {
            recording.actions.append(.init(t: Double(index) * tick, label: "Editor.slider(.changed)", count: 30 * tick * Double(every)))
        }
        for index in 0..<Int(seconds / 5) { recording.actions.append(.init(t: Double(index) * 5 + 1, label: "Editor.saveTapped", count: 1)) }
        recording.actions.sort { $0.t < $1.t }
        return recording
    }

    static func page(_ recording: Recording, phase: String? = nil, baseline: Recording? = nil) -> String {
        HTMLReport.page(.init(recording: recording, summary: RecordingSummary(recording, phase: phase), path: "run.db"),
                        baseline: baseline.map { .init(recording: $0, summary: RecordingSummary($0, phase: phase), path: "old.db") })
    }

    /// The values of every `name="…"` attribute in `page`.
    static func attributes(_ name: String, in page: String) -> [String] {
        page.split(separator: " \(name)=\"", omittingEmptySubsequences: false).dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    func testTheEscapeHelper() {
        XCTAssertEqual(HTMLText.escaped("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;")
        XCTAssertEqual(HTMLText.escaped("\"&'"), "&quot;&amp;&#39;")
        XCTAssertEqual(HTMLText.escaped("Gallery é ✓"), "Gallery é ✓")
        XCTAssertEqual(HTMLText.escaped("a\u{1B}[31mb\u{85}c\td"), "a[31mbc\td")
    }

    func testUntrustedStringsAreEscapedEverywhere() {
        var recording = Self.recording(seconds: 30, tick: 0.1)
        let script = "<script>alert(1)</script>"
        recording.meta["target_command"] = script
        recording.meta["target_command_line"] = "./app \"&'"
        recording.meta["options"] = "[\"perfhud\",\"run\",\"--\",\"<img onerror=x>\"]"
        recording.warnings = ["table frames: <b>damaged</b>"]
        recording.phases[1].name = script
        for index in recording.actions.indices where recording.actions[index].label == "Editor.slider(.changed)" { recording.actions[index].label = "\"&'" }
        let page = Self.page(recording, baseline: recording)
        XCTAssertFalse(page.contains("<script"), "no label may open an element")
        XCTAssertFalse(page.contains("<img"))
        XCTAssertFalse(page.contains("<b>damaged"))
        XCTAssertFalse(page.contains("\"&'"))
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(page.contains("<text class=\"band-label\""), "the escaped phase name is a band label in the SVG")
        XCTAssertTrue(page.contains("data-phase=\"&lt;script&gt;alert(1)&lt;/script&gt;\""))
        XCTAssertTrue(page.contains("<title>&quot;&amp;&#39; (high-frequency"), "the action label inside an SVG <title>")
        XCTAssertTrue(page.contains("./app &quot;&amp;&#39;"))
    }

    func testPhaseBandsAreShadedNamedAndInTheLegend() {
        let page = Self.page(Self.recording(seconds: 30, tick: 0.1))
        let bands = page.split(separator: "<rect class=\"band\" data-phase=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        XCTAssertEqual(Set(bands), ["Home", "Gallery", "Editor"])
        XCTAssertEqual(bands.count, 3 * 5, "one band per visit in each of the five charts")
        XCTAssertTrue(page.contains("<text class=\"band-label\" x=\"") && page.contains(">Gallery</text>"))
        XCTAssertTrue(page.contains("<i class=\"swatch\" style=\"background:#f28e2b;opacity:0.48\"></i>Gallery</span>"))
        // --phase: that phase stands out, the others fade; the figures are the phase's.
        let editor = Self.page(Self.recording(seconds: 30, tick: 0.1), phase: "Editor")
        XCTAssertTrue(editor.contains("data-phase=\"Editor\" x=\"") && editor.contains("fill-opacity=\"0.34\""))
        XCTAssertTrue(editor.contains("Figures count only the time in phase <b>Editor</b> (1 visit, 10 s)"))
    }

    func testPercentileLinesAndJankMarksAreTheSummarys() throws {
        let recording = Self.recording(seconds: 30, tick: 0.1)
        let summary = RecordingSummary(recording)
        let page = Self.page(recording)
        let labels = Self.attributes("data-label", in: page), values = Self.attributes("data-value", in: page)
        let rules = Dictionary(zip(labels, values), uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(rules["p50 16.5 ms"], RowFormatter.number(summary.frameP50, decimals: 3))
        XCTAssertEqual(rules["p99 40 ms"], RowFormatter.number(summary.frameP99, decimals: 3))
        XCTAssertEqual(summary.frameP99, 40)
        XCTAssertEqual(rules["janky above 25 ms"], "25")
        let marked = Self.attributes("data-frames", in: page).compactMap { Int($0) }.reduce(0, +)
        XCTAssertEqual(Double(marked), summary.jankyFrames)
        XCTAssertEqual(summary.jankyFrames, 36)
        // Restricted to a phase, the marks count what the phase's summary counts.
        let editor = RecordingSummary(recording, phase: "Editor")
        let editorMarks = Self.attributes("data-frames", in: Self.page(recording, phase: "Editor")).compactMap { Int($0) }.reduce(0, +)
        XCTAssertEqual(Double(editorMarks), editor.jankyFrames)
        XCTAssertLessThan(editor.jankyFrames, summary.jankyFrames)
    }

    func testTheSummaryFiguresReadAsInTheMarkdownReport() {
        let recording = Self.recording(seconds: 30, tick: 0.1)
        let summary = RecordingSummary(recording)
        let page = Self.page(recording)
        for key in ["fps_avg", "fps_1pct_low", "fps_0_1pct_low", "frame_p97_ms", "frame_p99_ms", "cpu_percent_avg", "cpu_percent_max",
                    "rss_start_bytes", "rss_peak_bytes", "rss_end_bytes", "actions_total"] {
            let value = summary.numbers[RecordingSummary.keys.firstIndex(of: key)!]
            XCTAssertTrue(page.contains("<code>\(key)</code></td><td>\(SummaryFormatter.human(key, value))</td>"), key)
        }
        XCTAssertTrue(page.contains("Editor.slider(.changed) <b>high-frequency</b>"))
        let slider = summary.highFrequencyActions.first { $0.action == "Editor.slider(.changed)" }
        XCTAssertEqual(slider?.peak ?? 0, 30, accuracy: 3.1)
        XCTAssertTrue(page.contains("(high-frequency, peak \(SummaryFormatter.human("", slider?.peak))/s)"))
    }

    func testNoFramesNoActions() {
        var recording = Self.recording(seconds: 12, tick: 0.1, frames: false)
        recording.actions = []
        let page = Self.page(recording)
        XCTAssertTrue(page.contains("no frames recorded"))
        XCTAssertTrue(page.contains("no actions recorded"))
        XCTAssertFalse(page.contains("class=\"mark\""))
        XCTAssertTrue(page.contains("<h3>CPU</h3><svg"))
    }

    func testBetterOrWorseIsTheWayTheTableSaysForEachFigure() {
        XCTAssertEqual(HTMLReport.judgement(RunFigure.fps_avg.key, change: -6, percent: -10), "worse")
        XCTAssertEqual(HTMLReport.judgement(RunFigure.frame_p99_ms.key, change: -6, percent: -10), "better")
        XCTAssertEqual(HTMLReport.judgement(RunAggregates.key(.cpu_percent, .mean), change: -6, percent: -10), "better")
        XCTAssertEqual(HTMLReport.judgement(RunAggregates.key(.tcp_rtt_ms, .max), change: 6, percent: 10), "worse")
        XCTAssertEqual(HTMLReport.judgement(RunAggregates.key(.net_tx_bytes_total, .last), change: 6, percent: 10), "same", "bytes sent are neither")
        XCTAssertEqual(HTMLReport.judgement(RunFigure.duration_s.key, change: 6, percent: 10), "same")
        XCTAssertEqual(HTMLReport.judgement(PhaseFigure.kept_bytes.key, change: 6, percent: 10), "worse")
        XCTAssertEqual(HTMLReport.judgement(RunAggregates.key(.cpu_percent, .mean), change: 0.001, percent: 0.5), "same", "under 1 %")
    }

    func testTheBaselineIsSideBySideWithTheChange() {
        let old = Self.recording(seconds: 20, tick: 0.1)
        var new = Self.recording(seconds: 30, tick: 0.1)
        for index in new.samples.indices { new.samples[index].residentBytes! += 10 << 20 }
        let page = Self.page(new, baseline: old)
        XCTAssertTrue(page.contains("<th>baseline</th><th>this run</th><th>change</th><th>change %</th>"))
        XCTAssertTrue(page.contains("<code>rss_start_bytes</code></td><td>100.0 MiB</td><td>110.0 MiB</td><td class=\"worse\">+10.0 MiB</td><td>+10 %</td>"))
        XCTAssertTrue(page.contains("baseline RSS") && page.contains("stroke-dasharray=\"6 4\""))
        XCTAssertTrue(page.contains("<dd>old.db</dd>"))
        // The phases side by side, the same rows as the markdown report's.
        XCTAssertTrue(page.contains("<h3>Against the baseline</h3>"))
        for row in SummaryFormatter.phaseComparison(RecordingSummary(new), baseline: RecordingSummary(old)) {
            XCTAssertTrue(page.contains("<tr>" + row.map { "<td>\(HTMLText.escaped($0))</td>" }.joined() + "</tr>"), "\(row)")
        }
        XCTAssertFalse(Self.page(new, baseline: nil).contains("Against the baseline"))
    }

    func testThePageFetchesNothing() {
        let page = Self.page(Self.recording(seconds: 30, tick: 0.1), baseline: Self.recording(seconds: 20, tick: 0.1))
        for reference in ["http://", "https://", "src=", "href=", "url(", "@import", "<script", "<link", "<iframe"] {
            XCTAssertFalse(page.contains(reference), reference)
        }
        XCTAssertTrue(page.hasPrefix("<!DOCTYPE html>"))
    }

    /// An hour at a 10 ms tick: 360,000 samples, 216,000 frames, ~36,000 actions. Drawn per pixel
    /// column, the page stays about as big as a minute's.
    func testAnHourAtTenMillisecondsMakesASmallPage() {
        let hour = Self.recording(seconds: 3600, tick: 0.01)
        let minute = Self.recording(seconds: 60, tick: 0.01)
        let hourPage = Self.page(hour), minutePage = Self.page(minute)
        print("HTML report size: 1 h at 10 ms \(hourPage.utf8.count) bytes, 1 min at 10 ms \(minutePage.utf8.count) bytes"
              + " (\(hour.samples.count) samples, \(hour.frames.count) frames, \(hour.actions.count) actions, \(hour.phases.count) visits)")
        XCTAssertLessThan(hourPage.utf8.count, 2_000_000)
        XCTAssertEqual(Double(Self.attributes("data-frames", in: hourPage).compactMap { Int($0) }.reduce(0, +)), RecordingSummary(hour).jankyFrames)
    }

    func testActionRatesCountTheLastSecondUpToTheEndOfTheRun() {
        let actions: [Recording.Action] = [.init(t: 1, label: "a", count: 2), .init(t: 1.5, label: "a", count: 3), .init(t: 1.5, label: "b", count: 9)]
        let rates = HTMLReportCharts.rates(of: "a", in: actions, end: 2.2)
        XCTAssertEqual(rates.map(\.t), [0, 1, 1, 1.5, 1.5, 2, 2, 2.2])
        XCTAssertEqual(rates.map(\.value), [0, 0, 2, 2, 5, 5, 3, 3])
    }

    func testDownsamplingKeepsEachColumnsExtremesAndGaps() {
        let points: [(t: Double, value: Double?)] = [(0, 1), (0.1, 9), (0.2, 5), (1.0, 3), (1.1, nil), (1.2, 4), (2.5, 7)]
        let kept = SVGChart.downsampled(points, columns: 3) { Int($0) }
        XCTAssertEqual(kept.map { $0?.value }, [1, 9, 3, nil, 4, 7])
    }
}
