import ArgumentParser
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDRecordings
#if canImport(Glibc)
@preconcurrency import Glibc   // stdout, stderr: C globals, used by the main thread alone
#endif

/// Writes `text` to `-o OUT` or standard output. - Throws: `.cannotCreate` (73).
func writeOutput(_ path: String?, _ body: ((String) -> Void) -> Void) throws {
    guard let path, path != "-" else { body { fputs($0, stdout) }; return }
    guard let file = fopen(path, "w") else { throw PerfHUDError(.cannotCreate, "cannot write \(path): \(SystemError.current)") }
    body { fputs($0, file) }
    if fclose(file) != 0 { throw PerfHUDError(.cannotCreate, "cannot write \(path): \(SystemError.current)") }
}

/// `-o OUT` naming a recording it reads (a slip of the keyboard) would destroy it: refused (73).
func refuseToOverwrite(_ out: String?, inputs: [String]) throws {
    guard let out, out != "-" else { return }
    var target = stat()
    guard stat(out, &target) == 0 else { return }
    for input in inputs {
        var source = stat()
        if stat(input, &source) == 0 && source.st_dev == target.st_dev && source.st_ino == target.st_ino {
            throw PerfHUDError(.cannotCreate, "-o \(out) is the recording \(input): not overwriting it")
        }
    }
}

/// `perfhud report FILE`: a recording's summary; with `--fail-on`, a CI gate.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarize a recording (markdown, JSON, or a self-contained HTML page with charts); compare with a baseline; gate a CI job with --fail-on.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case markdown, json, html }

    @Argument(help: "A recording made with --record.")
    var file: String

    @Option(name: [.short, .customLong("output")], help: "Write the report here instead of standard output.")
    var out: String?

    @Option(help: "markdown, json or html (one page, no network: inline SVG charts). Default: from -o's extension (.html, .json, .md), else markdown.")
    var format: Format?

    /// --format, or what -o's name says, or markdown.
    var chosenFormat: Format {
        if let format { return format }
        switch out.flatMap({ $0.split(separator: ".").count > 1 ? $0.split(separator: ".").last?.lowercased() : nil }) {
        case "html", "htm": return .html
        case "json": return .json
        default: return .markdown
        }
    }

    @Option(help: "Only the time spent in this phase.")
    var phase: String?

    @Option(help: "An older recording to compare with (and for `baseline` in --fail-on).")
    var baseline: String?

    @Option(help: ArgumentHelp("Exit 1 when this holds, e.g. \"rss_peak_bytes > 200MiB\", \"fps_1pct_low < 50\", \"rss_peak_bytes > baseline * 1.10\" (repeatable).", valueName: "EXPR"))
    var failOn: [String] = []

    @Flag(help: "A --fail-on naming a figure or phase the run does not have, or a --phase it never entered, only warns (default: it fails, exit 1).")
    var allowMissing = false

    func run() throws {
        let conditions = try failOn.map(FailCondition.init)   // a condition it cannot read fails before any work
        try refuseToOverwrite(out, inputs: [file] + (baseline.map { [$0] } ?? []))
        let recording = try Recording(path: file)
        for warning in recording.warnings { fputs("perfhud: warning: \(file): \(warning)\n", stderr) }
        let summary = RecordingSummary(recording, phase: phase)
        if let phase, summary.phases.isEmpty {
            // A gate over a phase the run never entered (a typo) must not pass on an empty report.
            let why = "\(file) never entered phase \(FailCondition.quoted(phase)) (\(RecordingSummary.phaseList(summary.phaseNamesOfRun)))"
            guard allowMissing else {
                fputs("perfhud: \(why); --allow-missing reports it anyway\n", stderr)
                try Perfhud.exit(with: .failure)
            }
            fputs("perfhud: warning: \(why)\n", stderr)
        }
        let old = try baseline.map { try Recording(path: $0) }
        let oldSummary = old.map { RecordingSummary($0, phase: phase) }
        try writeOutput(out) { write in
            switch chosenFormat {
            case .json: write(SummaryFormatter.json(summary, recording: recording, baseline: oldSummary) + "\n")
            case .markdown: write(SummaryFormatter.markdown(summary, recording: recording, baseline: oldSummary))
            case .html:
                let baselineRun = old.flatMap { oldRecording in oldSummary.map { HTMLReport.Run(recording: oldRecording, summary: $0, path: baseline ?? "") } }
                write(HTMLReport.page(HTMLReport.Run(recording: recording, summary: summary, path: file), baseline: baselineRun))
            }
        }
        var failed = false
        for condition in conditions {
            let result = try condition.holds(for: summary, baseline: oldSummary)
            if result.holds {
                failed = true
                fputs("perfhud: fail-on: \(FailCondition.quoted(condition.text)) holds (\(condition.metric) = \(RowFormatter.number(result.actual, decimals: 3)), limit \(RowFormatter.number(result.limit, decimals: 3)))\n", stderr)
            } else if let unknown = result.unknown {
                // A gate that cannot be evaluated fails: a typo in a phase name must not pass a CI job.
                if allowMissing {
                    fputs("perfhud: warning: fail-on: \(FailCondition.quoted(condition.text)) cannot be evaluated: \(unknown)\n", stderr)
                } else {
                    failed = true
                    fputs("perfhud: fail-on: \(FailCondition.quoted(condition.text)) cannot be evaluated: \(unknown) (--allow-missing lets it pass)\n", stderr)
                }
            }
        }
        if failed { try Perfhud.exit(with: .failure) }
    }
}

/// `perfhud export FILE --format csv|ndjson`: a recording's samples for other tools.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a recording's samples: CSV (psrecord's columns first), NDJSON (the live JSON rows) or OpenMetrics (for promtool).")

    enum Format: String, ExpressibleByArgument, CaseIterable { case csv, ndjson, openmetrics }

    @Argument(help: "A recording made with --record.")
    var file: String

    @Option(help: "csv, ndjson or openmetrics.")
    var format: Format

    @Option(name: [.short, .customLong("output")], help: "Write here instead of standard output.")
    var out: String?

    func run() throws {
        try refuseToOverwrite(out, inputs: [file])
        let recording = try Recording(path: file)
        for warning in recording.warnings { fputs("perfhud: warning: \(file): \(warning)\n", stderr) }
        try writeOutput(out) { write in
            switch format {
            case .csv: RecordingExport.csv(recording, write: write)
            case .ndjson: RecordingExport.ndjson(recording, write: write)
            case .openmetrics: RecordingExport.openMetrics(recording, write: write)
            }
        }
    }
}
