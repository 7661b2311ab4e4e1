#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDPipeline

/// Reading a recording back from its SQLite file (the data itself: `Recording`).
extension Recording {
    /// Why a recording is not whole (format 9 on: its writer's PID, and `closed` once it closed
    /// it): still being written, or its writer ended without closing it. Nil: whole, or too old to say.
    static func unfinished(_ meta: [String: String]) -> String? {
        guard meta["closed"] != "1", let text = meta["writer_pid"], let pid = Int32(text), pid > 0 else { return nil }
        let comm = (try? KeptOpenFile.contents(of: "/proc/\(pid)/comm", limit: 64).get()).map { String(decoding: $0, as: UTF8.self) }
        if comm?.hasPrefix("perfhud") == true {
            return "the recording is still being written (perfhud, PID \(pid)): this reads it as it was at its last commit, at most a second ago, and stops there"
        }
        return "the recording was not closed: its perfhud (PID \(pid)) ended without closing it (killed, or the machine stopped); read up to its last commit"
    }

    /// Reads `path`. - Throws: `PerfHUDError` `.noInput` (66), `.noPermission` (77), `.data` (65).
    public init(path: String) throws {
        self.init()
        var info = stat()
        if stat(path, &info) != 0 { throw PerfHUDError.reading(path, SystemError.current) }
        if info.st_mode & S_IFMT == S_IFDIR { throw PerfHUDError(.data, "\(path) is a directory, not a perfhud recording") }
        if access(path, R_OK) != 0 { throw PerfHUDError.reading(path, SystemError.current) }
        let notRecording = PerfHUDError(.data, "\(path) is not a perfhud recording")
        // A file cut short: read from a copy padded with empty pages to the length its header
        // says, so what comes before the cut opens and the rest reads as damage.
        var readPath = path
        if let padded = Self.paddedCopy(of: path) {
            readPath = padded.path
            warnings.append("the file is cut short (\(padded.had) of \(padded.wanted) bytes): read up to there")
        }
        defer { if readPath != path { unlink(readPath) } }
        // Read-write when allowed: a recording cut short by kill -9 keeps its last commits in the
        // write-ahead log, which only a writer can fold back.
        let database: SQLiteDatabase
        var format: Int64 = 0
        do {
            database = try (try? SQLiteDatabase(path: readPath, create: false)) ?? SQLiteDatabase(path: readPath, create: false, readOnly: true)
            guard let version = try database.integer("PRAGMA user_version"), version > 0 else { throw notRecording }
            format = version
            self.format = version
            if version > Recording.formatVersion {
                throw PerfHUDError(.data, "\(path) was written by a newer perfhud (format \(version); this one reads up to \(Recording.formatVersion))")
            }
            let meta = try database.prepare("SELECT key, value FROM meta")
            while try meta.step() { if let key = meta.text(0) { self.meta[key] = meta.text(1) ?? "" } }
        } catch let error as PerfHUDError {
            throw error
        } catch {
            throw notRecording
        }
        guard meta["format"] == "perfhud-recording" else { throw notRecording }
        if let unfinished = Self.unfinished(meta) { warnings.append(unfinished) }
        let refreshHz = self.refreshHz, paced = frameBudget.paced
        let startedAtMilliseconds = Recording.milliseconds(unix: startedAtUnix)
        let cpus = onlineCPUs
        let pid = Int32(meta["target_pid"] ?? "") ?? 0
        var commandName = meta["target_command"], rejectedReasons: [String: UInt64]?, execsSeen = 0
        var impossibleTimes = 0
        var samples: [SampleRow] = [], frames: [Frame] = [], actions: [Action] = [], phases: [Phase] = [], warnings = self.warnings
        func readRows(_ database: SQLiteDatabase, _ what: String, _ sql: String, _ body: (SQLiteStatement) -> Void) {
            if let warning = Self.readRows(database, what, sql, body) { warnings.append(warning) }
        }
        // Names by id (phases and command names in sample_log refer to them).
        var names: [Int64: String] = [:]
        readRows(database, "names", "SELECT id, name FROM names") { row in if let id = row.int64(0) { names[id] = row.text(1) ?? "" } }
        // sample_log by column name, each figure through its entry of `Figure.all`: a column a
        // format does not have reads as missing (format 1 has no wall-clock skew, command or reasons).
        var columns: [String: Int32] = [:]
        if let statement = try? database.prepare("SELECT * FROM sample_log LIMIT 0") {
            for index in 0..<statement.columnCount { if let name = statement.columnName(index) { columns[name] = index } }
        }
        let figureColumns = Figure.recorded.map { columns[$0.column!] }
        let (skewColumn, commandColumn, reasonsColumn) = (columns["wall_skew_ms"], columns["command_id"], columns["rejected_reasons"])
        let busiestColumn = columns[Figure.Field.busiest_threads.rawValue]
        let gpuNameColumn = columns["gpu_name_id"]
        var gpuName: String?
        var busiest: [BusyThread]?
        let (phaseColumn, sourceColumn, eventsColumn, aliveColumn) = (columns["phase_id"], columns[Figure.Field.frame_source.rawValue], columns["events"], columns["alive"])
        readRows(database, "samples", "SELECT * FROM sample_log") { row in
            guard let milliseconds = row.int64(0), let t = Self.time(Double(milliseconds) / 1000) else { impossibleTimes += 1; return }
            var sample = SampleRow(t: t)
            var events = EventSnapshot()
            for (figure, column) in zip(Figure.recorded, figureColumns) {
                guard let column else { continue }
                let value = figure.value(stored: row.int64(column), real: row.double(column))
                figure.write(&sample.figures, &events, value.flatMap { $0.isFinite ? $0 : nil })
            }
            sample.figures.elapsedSeconds = t
            sample.figures.pid = pid
            // 0 ended, 1 running, 2 stopped (a reader that knows no 2 reads a stopped row as alive).
            let state = aliveColumn.flatMap { row.int64($0) }
            sample.alive = state != 0
            sample.figures.stopped = state == 2
            sample.phase = phaseColumn.flatMap { row.int64($0) }.flatMap { names[$0] }
            let skew = skewColumn.flatMap { row.int64($0) }.map { Double(max(-Int64(Self.latestTime), min(Int64(Self.latestTime), $0))) }
            sample.figures.wallSeconds = (Double(startedAtMilliseconds + milliseconds) + (skew ?? 0)) / 1000
            // As `MetricsStore` derives it.
            sample.figures.cpuMachinePercent = DerivedFigure.machinePercent(sample.figures.cpuPercent, onlineCPUs: cpus)
            if let name = commandColumn.flatMap({ row.int64($0) }).flatMap({ names[$0] }) {
                if !samples.isEmpty { execsSeen += 1 }
                commandName = name
            }
            sample.commandName = commandName
            sample.execsSeen = execsSeen
            if let text = busiestColumn.flatMap({ row.text($0) }) { busiest = BusyThread.decoded(text) }
            sample.figures.busiestThreads = busiest
            if let name = gpuNameColumn.flatMap({ row.int64($0) }).flatMap({ names[$0] }) { gpuName = name.isEmpty ? nil : name }
            // ("" is written when the device went away: the name is not carried past it.)
            if let gpuName { sample.figures.gpu.recordedDevice.name = gpuName }
            if let reasons = reasonsColumn.flatMap({ row.text($0) }) { rejectedReasons = Self.reasons(reasons) }
            if eventsColumn.flatMap({ row.int64($0) }) == 1 {
                // As `EventAggregator` derives it (format 1 recorded p99 unrounded, so its 1 % low was too).
                events.fpsOnePercentLow = format >= 2 ? DerivedFigure.onePercentLow(p99: events.frameP99)
                    : events.frameP99.flatMap { $0 > 0 ? 1000 / $0 : nil }
                let sources = FrameSource.allCases
                events.frameSource = sourceColumn.flatMap { row.int64($0) }.flatMap { $0 >= 0 && $0 < sources.count ? sources[Int($0)] : nil }
                if events.rejectedTotal > 0 { events.rejected = rejectedReasons ?? events.rejected }
                events.phase = sample.phase
                events.refreshHz = refreshHz
                events.paced = paced
                sample.events = events
            }
            samples.append(sample)
        }
        // The high-frequency list, written when it changed: each sample takes the last list at or before it.
        var changes: [(t: Double, list: [EventSnapshot.HighFrequencyAction])] = []
        readRows(database, "high-frequency actions", "SELECT t, action, rate, peak FROM high_frequency_actions") { row in
            guard let t = Self.time(row.double(0)) else { impossibleTimes += 1; return }
            if changes.last?.t != t { changes.append((t, [])) }
            if let action = row.text(1) { changes[changes.count - 1].list.append(.init(action: action, rate: row.double(2) ?? 0, peak: row.double(3) ?? 0)) }
        }
        var next = 0
        var current: [EventSnapshot.HighFrequencyAction] = []
        for index in samples.indices where samples[index].events != nil {
            while next < changes.count && changes[next].t <= samples[index].t + 1e-9 { current = changes[next].list; next += 1 }
            samples[index].events!.highFrequencyActions = current
        }
        readRows(database, "frames", format >= 5 ? "SELECT t, ms, weight, source FROM frames" : "SELECT t, ms, 1, source FROM frames") { row in
            guard let t = Self.time(row.double(0)), let milliseconds = Self.time(row.double(1)) else { impossibleTimes += 1; return }
            // A weight is 1 / a sample rate in (0, 1]: from 1 up; a forged one outside that reads as 1.
            let weight = row.double(2).flatMap { $0 >= 1 && $0 <= 1e9 ? $0 : nil } ?? 1
            frames.append(Frame(t: t, milliseconds: milliseconds, weight: weight, source: row.text(3).flatMap(FrameSource.init(rawValue:))))
        }
        readRows(database, "actions", "SELECT t, label, count FROM actions") { row in
            guard let t = Self.time(row.double(0)), let count = Self.time(row.double(2)) else { impossibleTimes += 1; return }
            actions.append(Action(t: t, label: row.text(1) ?? "", count: count))
        }
        readRows(database, "phases", "SELECT name, t, t_exit, rss_entry_bytes, rss_exit_bytes FROM phases") { row in
            guard let t = Self.time(row.double(1)) else { impossibleTimes += 1; return }
            phases.append(Phase(name: row.text(0) ?? "", t: t, tExit: Self.time(row.double(2)), entryBytes: row.size(3), exitBytes: row.size(4)))
        }
        database.close()
        if impossibleTimes > 0 { warnings.append("the recording is damaged: \(impossibleTimes) rows with an impossible time or value were skipped") }
        (self.samples, self.frames, self.actions, self.phases, self.warnings) = (samples, frames, actions, phases, warnings)
    }

    /// Times (seconds since the start) and durations a recording can hold: finite, not negative,
    /// at most about three years. Anything else is damage, and would overflow the conversions after.
    static let latestTime = 1e8
    package static func time(_ value: Double?) -> Double? {
        guard let value, value.isFinite, value >= 0, value <= latestTime else { return nil }
        return value
    }

    /// `peer=2;size=1` (rejected events by reason, as the recorder writes them).
    package static func reasons(_ text: String) -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for pair in text.split(separator: ";") {
            guard let equals = pair.lastIndex(of: "="), let count = UInt64(pair[pair.index(after: equals)...]) else { continue }
            result[String(pair[..<equals])] = count
        }
        return result
    }

    /// A copy of a SQLite file shorter than its header says, padded with zeros; nil when it is whole.
    static func paddedCopy(of path: String) -> (path: String, had: Int, wanted: Int)? {
        guard case .success(let input) = SystemCall.open(path, O_RDONLY) else { return nil }
        defer { close(input) }
        var header = [UInt8](repeating: 0, count: 100)
        guard case .success(100) = SystemCall.read(input, into: &header), header[0..<16].elementsEqual("SQLite format 3\0".utf8) else { return nil }
        var pageSize = Int(header[16]) << 8 | Int(header[17])
        if pageSize == 1 { pageSize = 65536 }
        let pages = Int(header[28]) << 24 | Int(header[29]) << 16 | Int(header[30]) << 8 | Int(header[31])
        let size = Int(lseek(input, 0, SEEK_END))
        let wanted = pages * pageSize
        guard pageSize >= 512, pages > 0, size < wanted, wanted <= 1 << 34 else { return nil }
        var template = Array("/tmp/perfhud-damaged-XXXXXX".utf8CString)
        let output = mkstemp(&template)
        guard output >= 0 else { return nil }
        defer { close(output) }
        let copyPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        _ = lseek(input, 0, SEEK_SET)
        while case .success(let count) = SystemCall.read(input, into: &buffer), count > 0 {
            guard case .success = buffer.withUnsafeBytes({ SystemCall.write(output, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else {
                unlink(copyPath); return nil
            }
        }
        guard ftruncate(output, off_t(wanted)) == 0 else { unlink(copyPath); return nil }
        return (copyPath, size, wanted)
    }

    /// Every row of `sql` until the end or the damage (then a warning).
    private static func readRows(_ database: SQLiteDatabase, _ what: String, _ sql: String, _ body: (SQLiteStatement) -> Void) -> String? {
        var rows = 0
        do {
            let statement = try database.prepare(sql)
            while try statement.step() { body(statement); rows += 1 }
            return nil
        } catch {
            return "the recording is damaged: \(what) read up to row \(rows) (\(error))"
        }
    }
}
