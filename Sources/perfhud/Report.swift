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

/// The recording a command reads, its `<file>` argument.
enum RecordingArgument {
    /// - Parameter words: the words of the line that are none of the command's options.
    static func file(_ words: [String], of command: ParsableCommand.Type) throws -> String {
        let name = command._commandName
        guard let file = try UsageMessage.arguments(words, of: command, named: ["<file>"])[0] else {
            throw Refusal.because(Accepted.complaint("<file>", got: nil, in: name))
        }
        return try Given<String>(argument: file).value("<file>", in: name) { !$0.isEmpty }
    }
}

/// `perfhud report FILE`: a recording's summary; with `--fail-on`, a CI gate.
struct ReportCommand: ParsableCommand {
    // The usage is said here: ArgumentParser's would read `[<file> ...]`, as the recording is read
    // from the words of the line that are none of the options (`UsageMessage.arguments`).
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarize a recording (markdown, JSON, or a self-contained HTML page with charts); compare with a baseline; gate a CI job with --fail-on.",
        usage: "perfhud report <file> [<options>]")

    enum Format: String, CaseIterable, ReadableValue { case markdown, json, html }

    /// The recording, and whatever else of the line is none of the options: refused in validate().
    @Argument(parsing: .allUnrecognized, help: "A recording made with --record.")
    var file: [String] = []

    @Option(name: [.short, .customLong("output")], parsing: .unconditional, help: "Write the report here instead of standard output.")
    var output: Given<String>?

    @Option(parsing: .unconditional, help: "markdown, json or html (one page, no network: inline SVG charts). Default: from -o's extension (.html, .json, .md), else markdown.")
    var format: Given<Format>?

    @Option(parsing: .unconditional, help: "Only the time spent in this phase.")
    var phase: Given<String>?

    @Option(parsing: .unconditional, help: "An older recording to compare with (and for `baseline` in --fail-on).")
    var baseline: Given<String>?

    @Option(parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Exit 1 when this holds, e.g. \"rss_peak_bytes > 200MiB\", \"fps_1pct_low < 50\", \"rss_peak_bytes > baseline * 1.10\" (repeatable).", valueName: "EXPR"))
    var failOn: [Given<String>] = []

    @Flag(help: "A --fail-on naming a figure or phase the run does not have, or a --phase it never entered, only warns (default: it fails, exit 1).")
    var allowMissing = false

    /// The arguments read.
    struct Read {
        let file: String, out: String?, format: Format, phase: String?, baseline: String?, failOn: [String]
    }

    func validate() throws {
        _ = try read()
    }

    /// The arguments read; a refusal (`Refusal`) for the first that is missing or does not read.
    func read() throws -> Read {
        let file = try RecordingArgument.file(file, of: Self.self)
        let out = try output?.value("--output", in: "report") { !$0.isEmpty }
        // --format, or what -o's name says, or markdown.
        let format: Format
        if let given = try self.format?.value("--format", in: "report") {
            format = given
        } else {
            switch out.flatMap({ $0.split(separator: ".").count > 1 ? $0.split(separator: ".").last?.lowercased() : nil }) {
            case "html", "htm": format = .html
            case "json": format = .json
            default: format = .markdown
            }
        }
        return Read(file: file, out: out, format: format, phase: try phase?.value("--phase") { !$0.isEmpty },
                    baseline: try baseline?.value("--baseline") { !$0.isEmpty }, failOn: try failOn.map { try $0.value("--fail-on") })
    }

    func run() throws {
        let arguments = try read()
        let (file, out, phase, baseline) = (arguments.file, arguments.out, arguments.phase, arguments.baseline)
        let conditions = try arguments.failOn.map { try FailCondition($0) }   // a condition it cannot read fails before any work
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
        // Janky and dropped frames are judged against a reference (the run's own pace, or a
        // refresh's budget): a baseline judged against another is judged again, from the frames
        // it keeps, against this run's — like with like — and the report says so.
        var judgedAgain: String?
        if let old, old.frameBudget != recording.frameBudget, !old.frames.isEmpty || !recording.frames.isEmpty {
            judgedAgain = "the baseline judged its frames against \(SummaryFormatter.reference(old.frameBudget)), this run against \(SummaryFormatter.reference(recording.frameBudget)):"
                + " the baseline's janky and dropped frames are counted again against this run's"
            fputs("perfhud: note: \(judgedAgain!)\n", stderr)
        }
        let oldSummary = old.map { RecordingSummary($0, phase: phase, budget: recording.frameBudget) }
        try writeOutput(out) { write in
            switch arguments.format {
            case .json: write(SummaryFormatter.json(summary, recording: recording, baseline: oldSummary, note: judgedAgain) + "\n")
            case .markdown: write(SummaryFormatter.markdown(summary, recording: recording, baseline: oldSummary, note: judgedAgain))
            case .html:
                let baselineRun = old.flatMap { oldRecording in oldSummary.map { HTMLReport.Run(recording: oldRecording, summary: $0, path: baseline ?? "") } }
                write(HTMLReport.page(HTMLReport.Run(recording: recording, summary: summary, path: file), baseline: baselineRun, note: judgedAgain))
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
    // The usage is said here: ArgumentParser's would read `[<file> ...]` (see report) and make
    // --format optional, which is refused in validate(), in perfhud's words, when missing.
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a recording's samples: CSV (psrecord's columns first), NDJSON (the live JSON rows) or OpenMetrics (for promtool).",
        usage: "perfhud export <file> --format <format> [--output <output>]")

    enum Format: String, CaseIterable, ReadableValue { case csv, ndjson, openmetrics }

    /// The recording, and whatever else of the line is none of the options: refused in validate().
    @Argument(parsing: .allUnrecognized, help: "A recording made with --record.")
    var file: [String] = []

    @Option(parsing: .unconditional, help: "csv, ndjson or openmetrics.")
    var format: Given<Format>?

    @Option(name: [.short, .customLong("output")], parsing: .unconditional, help: "Write here instead of standard output.")
    var output: Given<String>?

    func validate() throws {
        _ = try read()
    }

    /// The arguments read; a refusal (`Refusal`) for the first that is missing or does not read.
    func read() throws -> (file: String, format: Format, out: String?) {
        let file = try RecordingArgument.file(file, of: Self.self)
        guard let format else { throw Refusal.because("export wants --format: " + (Accepted.form(of: "--format", in: "export") ?? "")) }
        return (file, try format.value("--format", in: "export"), try output?.value("--output", in: "export") { !$0.isEmpty })
    }

    func run() throws {
        let (file, format, out) = try read()
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
