import XCTest
@testable import PerfHUDSupport
@testable import PerfHUDSampling
@testable import PerfHUDEvents
@testable import PerfHUDStore
@testable import PerfHUDPipeline
@testable import PerfHUDRecordings

/// The table of figures drives the JSON row and the recording: a figure is one entry there.
final class FiguresTests: XCTestCase {
    private func keys(ofJSON line: String) -> [String] {
        // The top-level keys in order (values here hold no nested `"key":` at the top level but the list's).
        var keys: [String] = []
        var depth = 0, index = line.startIndex, inString = false, start = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if inString {
                if character == "\\" { index = line.index(after: index) } else if character == "\"" {
                    inString = false
                    let after = line.index(after: index)
                    if depth == 1, after < line.endIndex, line[after] == ":" { keys.append(String(line[line.index(after: start)..<index])) }
                }
            } else if character == "\"" { inString = true; start = index } else if character == "{" || character == "[" { depth += 1 } else if character == "}" || character == "]" { depth -= 1 }
            index = line.index(after: index)
        }
        return keys
    }

    func testTheJSONRowHasEveryFigureInTheTablesOrder() {
        var report = TargetFigures(wallSeconds: 1e9, elapsedSeconds: 1, pid: 1, alive: true, processCount: 1)
        report.gpu.unreportedReason = GPUUnreported.noDriver               // the key is there only with a reason
        report.net.unreportedReason = NetworkUnreported.notReadYet        // the key is there only with a reason
        report.memoryUnreportedReason = MemoryUnreported.noPermission     // the key is there only with a reason
        report.oomKilled = true                                            // the key is there only when true
        var events = EventSnapshot()
        events.framesUnreportedReason = FramesUnreported.nothingDrawn     // the key is there only with a reason
        let withEvents = keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .exited(code: 0, signal: nil), events: events))
        let expected = ["time", "pid", "alive"] + Figure.all.flatMap { figure -> [String] in
            figure.kind == .special(.exitStatus) ? ["exit_code", "exit_signal"] : [figure.name]
        }
        XCTAssertEqual(withEvents, expected)
        let withoutEvents = keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: nil))
        XCTAssertEqual(withoutEvents, ["time", "pid", "alive"] + Figure.all.filter {
            ($0.source == .target || $0.nullWithoutEvents) && $0.kind != .special(.exitStatus)
        }.map(\.name))
        let counted = keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: EventSnapshot()))
        XCTAssertFalse(counted.contains("frames_unreported_reason"), "no reason, no key")
        report.gpu.unreportedReason = nil
        XCTAssertFalse(keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: nil)).contains("gpu_unreported_reason"),
                       "no reason, no key")
        report.net.unreportedReason = nil
        XCTAssertFalse(keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: nil)).contains("net_unreported_reason"),
                       "no reason, no key")
        report.oomKilled = false
        XCTAssertFalse(keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: nil)).contains("oom_killed"),
                       "not killed, no key")
        report.memoryUnreportedReason = nil
        XCTAssertFalse(keys(ofJSON: RowFormatter.json(report, commandName: "x", status: .running, events: nil)).contains("memory_unreported_reason"),
                       "no reason, no key")
    }

    func testARecordingHasAColumnAndAViewFieldForEveryRecordedFigure() throws {
        let path = NSTemporaryDirectory() + "perfhud-figures-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 1, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        recorder.close()
        let database = try SQLiteDatabase(path: path, create: false)
        defer { database.close() }
        func columns(_ table: String) throws -> Set<String> {
            let statement = try database.prepare("SELECT * FROM \(table) LIMIT 0")
            return Set((0..<statement.columnCount).compactMap { statement.columnName($0) })
        }
        let table = try columns("sample_log"), view = try columns("samples")
        for figure in Figure.all {
            if let column = figure.column { XCTAssertTrue(table.contains(column), column) }
            if figure.column != nil && figure.column != "t_ms" { XCTAssertTrue(view.contains(figure.name), figure.name) }
        }
        XCTAssertEqual(Set(Figure.recorded.map { $0.column! }).count, Figure.recorded.count, "one column a figure")
    }

    /// Each figure is one case of `Field`: its key is the case's name, so no two figures share one and
    /// the table has every case once, in the case's order.
    func testTheTablesKeysAreUniqueAndAreTheFieldCases() {
        let names = Figure.all.map(\.name)
        XCTAssertEqual(Set(names).count, names.count, "one figure a key")
        XCTAssertEqual(names, Figure.Field.allCases.map(\.rawValue))
        XCTAssertEqual(Figure.all.map(\.field), Figure.Field.allCases)
        XCTAssertTrue(names.contains("oom_score"))
        let metrics = Figure.all.compactMap(\.metric).filter { $0.kind != .labelled }.map(\.series)
        XCTAssertEqual(Set(metrics).count, metrics.count, "one series a figure")
    }

    /// Every recorded figure is written, recorded, read back and put back through its own field: a
    /// distinct value for each (not nil against nil), each read back non-nil and equal at its
    /// resolution, so a figure read from or put back into another's field, or not at all, fails.
    func testEveryRecordedFigureComesBackAtItsResolution() throws {
        let path = NSTemporaryDirectory() + "perfhud-figures-back-\(getpid()).db"
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let recorder = try Recorder(path: path, meta: Recorder.meta(version: "test", pid: 9, command: "x", commandLine: nil,
                                                                 tickNanoseconds: 100_000_000, events: EventConfiguration()),
                                    startNanoseconds: 0, warn: { XCTFail($0) })
        var report = TargetFigures(wallSeconds: Double(time(nil)), elapsedSeconds: 0.5, pid: 9, alive: true, processCount: 1)
        var events = EventSnapshot()
        // A distinct value for every recorded figure, at the figure's resolution (a truth value: 1;
        // the reason without frames: a code it has).
        var expected: [Figure.Field: Double] = [:]
        for (index, figure) in Figure.recorded.enumerated() {
            let value: Double
            switch (figure.kind, figure.storage) {
            case (.boolean, _): value = 1
            case (.special(.framesUnreportedReason), _): value = 4
            case (.special(.gpuUnreportedReason), _): value = 6
            case (.special(.memoryUnreportedReason), _): value = 2
            case (.special(.oomKilled), _): value = 1
            case (.special(.netSource), _): value = 3
            case (.special(.netUnreportedReason), _): value = 5
            case (_, .fixed(let scale)): value = (Double(index + 1) * 1.23456).atResolution(scale)
            default: value = Double(index + 1) * 7
            }
            expected[figure.field] = value
            figure.write(&report, &events, value)
        }
        events.framesTotal = max(events.framesTotal, 1)   // fps is null before the first frame
        // A distinct value a figure; oom_killed is true (1) or absent, as a truth value is 1.
        XCTAssertEqual(Set(expected.filter { $0.key != .oom_killed }.values).count, expected.count - 1, "a distinct value a figure")
        // In memory, each figure reads what was put into it.
        for figure in Figure.recorded {
            XCTAssertEqual(Figure.read(figure.field, report, events), expected[figure.field], "\(figure.name) in memory")
        }
        let sample = Sample(monotonicNanoseconds: 500_000_000, wallSeconds: report.wallSeconds, alive: true)
        recorder.consume(Tick(monotonicNanoseconds: 500_000_000, sample: sample, figures: report, events: events, commandName: "x",
                             status: .running, phases: PhaseHistory()))
        recorder.close()
        let read = try Recording(path: path).samples[0]
        let readEvents = try XCTUnwrap(read.events)
        for figure in Figure.recorded {
            let value = Figure.read(figure.field, read.figures, readEvents)
            XCTAssertNotNil(value, figure.name)
            XCTAssertEqual(value, expected[figure.field], figure.name)
        }
        // The figures derived on reading come back from what was recorded.
        for figure in Figure.all where figure.column == nil {
            if case .number = figure.kind { XCTAssertNotNil(Figure.read(figure.field, read.figures, readEvents), figure.name) }
        }
        XCTAssertEqual(read.figures.everySecond.oomScore, report.everySecond.oomScore)
        XCTAssertNotNil(read.figures.everySecond.oomScore)
    }

    /// A figure's run summaries reach `report`'s keys, `--fail-on` and the phase figures, computed
    /// over the rows that have the figure (a row without it is skipped, not counted as 0).
    func testRunSummariesComeFromTheTableAndSkipRowsWithoutTheFigure() {
        let summarised = Figure.all.flatMap { $0.summaries.map(\.key) }
        XCTAssertFalse(summarised.isEmpty)
        XCTAssertEqual(Set(summarised).count, summarised.count, "one key a summary")
        for key in summarised {
            XCTAssertTrue(RecordingSummary.keys.contains(key), key)
            XCTAssertTrue(RecordingSummary.phaseKeys.contains(key), key)
        }
        var recording = Recording()
        recording.meta["target_pid"] = "1"
        for (t, cpu, rss) in [(0.0, nil, 300), (0.1, 10.0, 100), (0.2, 40.0, 700), (0.3, 25.0, 200)] as [(Double, Double?, UInt64)] {
            recording.samples.append(.init(t: t, cpuPercent: cpu, residentBytes: rss, phase: "Home"))
        }
        recording.phases = [.init(name: "Home", t: 0, tExit: nil, entryBytes: 300, exitBytes: nil)]
        let summary = RecordingSummary(recording)
        XCTAssertEqual(summary.value(of: "cpu_percent_avg"), .some(25), "the mean of the rows with a CPU figure")
        XCTAssertEqual(summary.value(of: "cpu_percent_max"), .some(40))
        // At start: the first row a tick (0.1 s, the default) after the start, not the loader instant.
        XCTAssertEqual(summary.value(of: "rss_start_bytes"), .some(100))
        XCTAssertEqual(summary.value(of: "rss_peak_bytes"), .some(700))
        XCTAssertEqual(summary.value(of: "rss_end_bytes"), .some(200))
        XCTAssertEqual(summary.value(of: "pss_peak_bytes"), .some(nil), "no row has it")
        XCTAssertEqual(summary.value(of: "phase.Home.cpu_percent_max"), .some(40))
    }

    /// `export --format csv` has psrecord's columns, then one column a figure the table marks, by its key.
    func testTheCSVExportHasAColumnForEveryFigureTheTableMarks() {
        var recording = Recording()
        recording.samples.append(.init(t: 0.5, cpuPercent: 12.5, residentBytes: 4 << 20, phase: "a,b"))
        var text = ""
        RecordingExport.csv(recording) { text += $0 }
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2)
        let header = lines[0].split(separator: ",").map(String.init)
        XCTAssertEqual(header, ["elapsed_time", "cpu", "mem_real", "mem_virtual"] + Figure.csvColumns.map(\.name))
        XCTAssertTrue(header.contains("rss_bytes") && header.contains("cpu_seconds_total") && header.contains("phase"))
        XCTAssertTrue(lines[1].hasPrefix("0.5,12.5,4,,"), lines[1])
        XCTAssertTrue(lines[1].contains(",\"a,b\","), "a phase with a comma is quoted: \(lines[1])")
        XCTAssertTrue(lines[1].contains(",4194304,"), lines[1])
    }
}
