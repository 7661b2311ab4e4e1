#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline
import PerfHUDOutput

/// `--record FILE`: everything a session saw, in a SQLite database (see docs/recordings.md).
///
/// Written from the session's tick: one sample row a tick, every frame, the actions per tick per
/// label, the phases; sample, frame and action rows kept until the commit (`BatchedInsert`). Crash safety: WAL journal, `synchronous=NORMAL`, and one transaction
/// committed at most once a second, so kill -9 loses at most the last second and the file opens.
/// Storage is compact (fixed-point integers: a REAL costs 8 bytes, an integer 1–4), and the views
/// `samples`, `frames` and `actions` give the figures in their units (seconds, percent, ms).
public final class Recorder: TickSink {
    /// It counts every frame and action.
    public static let readsEveryFrame = true
    /// The format written (see `Recording.formatVersion`).
    public static let formatVersion = Recording.formatVersion
    /// The columns of `sample_log` that are not a figure of `Figure.all`: the time, how the target
    /// stood (`alive`: 0 ended, 1 running, 2 stopped) and whether the session had an event socket, and what is kept by reference or
    /// only when it changes. Then one column a recorded figure.
    static let leadingColumns = "t_ms INTEGER NOT NULL, alive INTEGER, events INTEGER, phase_id INTEGER, frame_source INTEGER, "
        + "command_id INTEGER, rejected_reasons TEXT, wall_skew_ms INTEGER, busiest_threads TEXT, gpu_name_id INTEGER"
    static let leadingColumnCount = 10

    /// Every list of reasons a recording keeps codes of (the `reasons` table).
    static let reasonLists = [FramesUnreported.codes, GPUUnreported.codes, NetworkSource.codes, NetworkUnreported.codes, MemoryUnreported.codes]

    static var schema: String {
        let figureColumns = Figure.recorded.map { "\($0.column!) \($0.storage == .real ? "REAL" : "INTEGER")" }
        let sources = FrameSource.allCases.enumerated().map { "WHEN \($0.offset) THEN '\($0.element.rawValue)'" }.joined(separator: " ")
        let figureViews = Figure.recorded.map { "\($0.viewExpression!) AS \($0.name)" }
        return """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE sample_log(\(leadingColumns), \(figureColumns.joined(separator: ", ")));
        CREATE TABLE frame_log(t_ms INTEGER NOT NULL, us INTEGER NOT NULL, source INTEGER, weight REAL);
        CREATE TABLE action_log(t_ms INTEGER NOT NULL, label_id INTEGER NOT NULL, count REAL NOT NULL);
        CREATE TABLE high_frequency_log(t_ms INTEGER NOT NULL, label_id INTEGER, rate REAL, peak REAL);
        CREATE TABLE phases(t REAL NOT NULL, name TEXT NOT NULL, rss_entry_bytes INTEGER, t_exit REAL, rss_exit_bytes INTEGER);
        CREATE TABLE reasons(kind TEXT NOT NULL, code INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY(kind, code));
        INSERT INTO reasons VALUES \(reasonLists.flatMap(\.sqlRows).joined(separator: ", "));
        CREATE VIEW samples AS SELECT t_ms / 1000.0 AS t, \(figureViews.joined(separator: ", ")),
            (SELECT name FROM names WHERE id = phase_id) AS phase, alive, CASE frame_source \(sources) END AS frame_source,
            events AS has_events, wall_skew_ms, (SELECT name FROM names WHERE id = command_id) AS command_from_here, rejected_reasons,
            (SELECT name FROM names WHERE id = gpu_name_id) AS gpu_name_from_here,
            (SELECT value FROM meta WHERE key = 'started_at_unix') + (t_ms + wall_skew_ms) / 1000.0 AS wall_time_unix FROM sample_log;
        CREATE VIEW frames AS SELECT t_ms / 1000.0 AS t, us / 1000.0 AS ms, CASE source \(sources) END AS source,
            COALESCE(weight, 1) AS weight FROM frame_log;
        CREATE VIEW high_frequency_actions AS SELECT t_ms / 1000.0 AS t, names.name AS action, rate, peak
            FROM high_frequency_log LEFT JOIN names ON names.id = label_id;
        CREATE VIEW actions AS SELECT t_ms / 1000.0 AS t, names.name AS label, count FROM action_log JOIN names ON names.id = label_id;
        """
    }

    private let database: SQLiteDatabase
    private let startNanoseconds: UInt64
    /// When the recording began (meta `started_at`, RFC 3339).
    public let startedAt: String?
    /// The sample, frame and action rows of the current second, written at the commit.
    private var samples, frames, actions: BatchedInsert
    private static var sampleColumns: Int { leadingColumnCount + Figure.recorded.count }
    /// A recorded figure as the row needs it: plain values (walking `Figure.recorded`'s objects
    /// retains and releases each, every tick).
    private struct Column {
        let field: Figure.Field
        let storage: BatchedInsert.Column
        let fromEvents: Bool
    }
    private static let columns = Figure.recorded.map { Column(field: $0.field, storage: BatchedInsert.Column($0.storage), fromEvents: $0.source == .events) }
    private let insertName, insertPhase, closePhase, insertHighFrequency: SQLiteStatement
    private var nameIDs: [String: Int64] = [:]
    private var lastCommit: UInt64
    private var phasesSeen = 0
    private var openPhaseRow: Int64?
    private var failed = false
    /// The high-frequency list last written: the table has a row group only when it changes.
    private var lastHighFrequency: [EventSnapshot.HighFrequencyAction] = []
    /// The command name and rejection reasons last written: rows carry them only when they change.
    private var lastCommandName: String?, lastRejected: [String: UInt64] = [:], lastExecs = 0
    /// The busiest threads last written (they change once a second at most): rows carry them only when they change.
    private var lastBusiest: [BusyThread]?? = .none
    private var lastGPUName: String?
    /// `started_at_unix` in milliseconds: a row's wall time is it + t_ms + wall_skew_ms.
    private let startedAtMilliseconds: Int64
    private let warn: (String) -> Void
    /// `--record-max-size` (daemon): past it, the oldest tenth of the rows goes, once a second at most.
    public var maxBytes: UInt64?
    private var setMeta: SQLiteStatement?

    /// Creates `path` (replacing an older recording there, never another kind of file) and writes
    /// the metadata. - Throws: `PerfHUDError` `.cannotCreate` (73).
    public init(path: String, meta: [(String, String)], startNanoseconds: UInt64, warn: @escaping (String) -> Void) throws {
        self.startNanoseconds = startNanoseconds
        self.warn = warn
        startedAt = meta.first { $0.0 == "started_at" }?.1
        startedAtMilliseconds = Recording.milliseconds(unix: meta.first { $0.0 == "started_at_unix" }.flatMap { Double($0.1) } ?? 0)
        lastCommit = startNanoseconds
        if case .success(let fd) = SystemCall.open(path, O_RDONLY) {
            var head = [UInt8](repeating: 0, count: 16)
            let count = (try? SystemCall.read(fd, into: &head).get()) ?? 0
            Glibc.close(fd)
            if count > 0 && head != Array("SQLite format 3\0".utf8) {
                throw PerfHUDError(.cannotCreate, "\(path) exists and is not a perfhud recording: not replacing it")
            }
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        }
        do {
            database = try SQLiteDatabase(path: path, create: true)
            // 16 KiB pages: the schema (format 9's `samples` view names ~100 figures: 7.7 KB of SQL,
            // more than an 8 KiB page held) fits in the first
            // page, so a file cut short keeps it and reads up to the cut.
            try database.execute("PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; BEGIN;")
            try database.execute(Self.schema + "PRAGMA user_version = \(Self.formatVersion);")
            let setMeta = try database.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")
            for (key, value) in meta { try setMeta.run([.text(key), .text(value)]) }
            // Who writes it, until `close` says it is whole (`closed`): a reader of a recording
            // still being written (or whose writer was killed) is told so (`Recording.warnings`).
            // `closed` is there from the start, its value changed in place at the end: a new row
            // then could split the meta table's page onto the file's last pages, where a file
            // cut short would lose it.
            try setMeta.run([.text("writer_pid"), .text(String(getpid()))])
            try setMeta.run([.text("closed"), .text("0")])
            self.setMeta = setMeta
            // SQLite binds at most 32,766 values a statement. Past ~16 rows a statement, more save little
            // (Benchmarks/recording_floor.c; docs/benchmarks.md, "What the code's shape saves"); a second's
            // frames at 60 FPS are 60, so 16 to a statement (at 256, none was ever a multi-row insert).
            samples = try BatchedInsert(database, table: "sample_log", width: Self.sampleColumns, rowsPerInsert: 32)
            frames = try BatchedInsert(database, table: "frame_log", width: 4, rowsPerInsert: 16, reserveRows: 1024)
            actions = try BatchedInsert(database, table: "action_log", width: 3, rowsPerInsert: 16, reserveRows: 1024)
            insertHighFrequency = try database.prepare("INSERT INTO high_frequency_log VALUES (?1, ?2, ?3, ?4)")
            insertName = try database.prepare("INSERT INTO names(name) VALUES (?1)")
            insertPhase = try database.prepare("INSERT INTO phases(t, name, rss_entry_bytes) VALUES (?1, ?2, ?3)")
            closePhase = try database.prepare("UPDATE phases SET t_exit = ?1, rss_exit_bytes = ?2 WHERE rowid = ?3")
            try database.execute("COMMIT; BEGIN;")
        } catch let failure as SQLiteDatabase.Failure {
            throw PerfHUDError(.cannotCreate, "cannot record to \(path): \(failure.message)")
        }
    }

    /// The metadata of a session: perfhud's version and options, the target, when it started.
    public static func meta(version: String, pid: Int32, command: String, commandLine: String?, tickNanoseconds: UInt64,
                            events: EventConfiguration, alerts: [AlertRule] = []) -> [(String, String)] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let wall = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        return [("format", "perfhud-recording"), ("perfhud_version", version),
                ("options", "[" + CommandLine.arguments.map(RowFormatter.quoted).joined(separator: ",") + "]"),
                ("target_pid", String(pid)), ("target_command", command), ("target_command_line", commandLine ?? command),
                ("started_at", RowFormatter.rfc3339(wall)), ("started_at_unix", String(wall)),
                ("tick_seconds", String(Double(tickNanoseconds) / 1e9)), ("online_cpus", String(ProcessDirectory.onlineCPUs)),
                ("refresh_hz", String(events.refreshHz)), ("jank_factor", String(events.jankFactor)),
                ("jank_reference", events.frameBudget.referenceName),
                ("action_threshold", String(events.actionThreshold))]
            // The `--alert`s, a line each: `report` evaluates them again over the recorded rows.
            + (alerts.isEmpty ? [] : [("alerts", alerts.map(\.text).joined(separator: "\n"))])
    }


    /// The current phase's id: the same phase tick after tick, looked up once (hashing its name each
    /// tick cost more (measured: docs/benchmarks.md, "What the code's shape saves")).
    private func currentPhaseID(_ name: String) throws -> Int64 {
        if let lastPhase, lastPhase.name == name { return lastPhase.id }
        let id = try nameID(name)
        lastPhase = (name, id)
        return id
    }
    private var lastPhase: (name: String, id: Int64)?

    private func nameID(_ name: String) throws -> Int64 {
        if let id = nameIDs[name] { return id }
        try insertName.run([.text(name)])
        nameIDs[name] = database.lastInsertRowID
        return database.lastInsertRowID
    }

    /// One tick: its sample row, the frames and actions since the tick before, phases entered or
    /// left. The last tick of a session perfhud ended has no row (none was written live: `--count N`
    /// is N rows), only its events; the last tick of a target that ended by itself is the exit row.
    public func consume(_ tick: Tick) {
        guard !failed else { return }
        let time = Recording.milliseconds(elapsed: tick.figures.elapsedSeconds)
        do {
            try recordPhases(tick.phases)
            if tick.isRow { try recordRow(tick, time: time, into: &samples) }
            if tick.isExitRow, case .exited(let code, let signal) = tick.status { recordEnd(exitCode: code, exitSignal: signal) }
            if let every = tick.everyFrame {
                if !every.frames.isEmpty { recordFrames(every.frames, into: &frames) }
                if !every.actions.isEmpty { try recordActions(every.actions, time: time, into: &actions) }
            }
            if tick.monotonicNanoseconds &- lastCommit >= 1_000_000_000 {
                try writePending()
                try dropOldestIfFull()
                try database.execute("COMMIT; BEGIN;")
                lastCommit = tick.monotonicNanoseconds
            }
        } catch {
            failed = true
            warn("recording to \(database.path) stopped: \(error)")
        }
    }

    // The rows are appended through one `inout` access each (`BatchedInsert`: not an exclusivity check per value).
    private func recordFrames(_ tick: [RecordedFrame], into frames: inout BatchedInsert) {
        for frame in tick {
            frames.appendInteger(Recording.milliseconds(at: frame.time, since: startNanoseconds))
            frames.appendInteger(Recording.microseconds(frame: frame.milliseconds))
            frames.appendInteger(FrameSource.allCases.firstIndex(of: frame.source).map { Int64($0) })
            // A sampled frame (`|@0.1`) stands for 1 / rate frames: kept, so `report` counts what the
            // live figures counted. NULL (no bytes) for the common weight of 1.
            if frame.weight == 1 { frames.appendNull() } else { frames.appendReal(frame.weight) }
        }
    }

    private func recordActions(_ tick: [(label: String, count: Double)], time: Int64, into actions: inout BatchedInsert) throws {
        for action in tick {
            actions.appendInteger(time); actions.appendInteger(try nameID(action.label)); actions.appendReal(action.count)
        }
    }

    /// The tick's row of `sample_log`, column by column in the table's order.
    private func recordRow(_ tick: Tick, time: Int64, into samples: inout BatchedInsert) throws {
        // The event figures are read in place (`tick.events?.…`), never bound whole: each binding of
        // the snapshot is a copy (a retain per array, dictionary and string in it).
        let commandName = tick.commandName
        let phaseID = try tick.phases.current.map { try currentPhaseID($0.name) }
        if let highFrequency = tick.events?.highFrequencyActions, highFrequency != lastHighFrequency {
            // A change: the new list, or one row without a label for "none from here".
            for action in highFrequency {
                try insertHighFrequency.run([.integer(time), .integer(try nameID(action.action)), .real(action.rate), .real(action.peak)])
            }
            if highFrequency.isEmpty { try insertHighFrequency.run([.integer(time), nil, nil, nil]) }
            lastHighFrequency = highFrequency
        }
        // Written again after an exec that kept the name: a reader counts the target's execs by it.
        let commandID = commandName == lastCommandName && tick.sample.execsSeen == lastExecs ? nil : try nameID(commandName)
        lastCommandName = commandName
        lastExecs = tick.sample.execsSeen
        var reasons: String?
        if let rejected = tick.events?.rejected, rejected != lastRejected {
            reasons = rejected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ";")
            lastRejected = rejected
        }
        // Column by column, in the order of `sample_log`; written at the commit (`writePending`).
        samples.appendInteger(time); samples.appendInteger(tick.figures.alive ? tick.figures.stopped ? 2 : 1 : 0)
        let hasEvents = tick.hasEvents
        samples.appendInteger(hasEvents ? 1 : nil); samples.appendInteger(phaseID)
        samples.appendInteger(tick.events?.frameSource.flatMap { FrameSource.allCases.firstIndex(of: $0) }.map { Int64($0) })
        samples.appendInteger(commandID)
        if let reasons { samples.appendText(reasons) } else { samples.appendNull() }
        samples.appendInteger(Recording.milliseconds(unix: tick.figures.wallSeconds) - startedAtMilliseconds - time)
        if lastBusiest != .some(tick.figures.busiestThreads) {
            samples.appendText(BusyThread.encoded(tick.figures.busiestThreads))
            lastBusiest = .some(tick.figures.busiestThreads)
        } else {
            samples.appendNull()
        }
        // The GPU's name, as the command's: written when it changes, "" when the row has no device.
        let gpuName = tick.figures.gpuBox?.value.device?.name
        if gpuName != lastGPUName { samples.appendInteger(try nameID(gpuName ?? "")) } else { samples.appendNull() }
        lastGPUName = gpuName
        Self.appendFigures(tick.figures, tick.events, into: &samples)
    }

    /// Straight from each figure to its column, kept as its storage says (`BatchedInsert.Column`).
    /// The report and the event figures are this function's borrowed arguments, not copies.
    private static func appendFigures(_ report: TargetFigures, _ events: EventSnapshot?, into samples: inout BatchedInsert) {
        let columns = Self.columns
        samples.appendValues(columns.count) { row in
            guard let events else {
                for index in columns.indices where !columns[index].fromEvents {
                    row[index] = .init(Figure.read(columns[index].field, report, .empty), column: columns[index].storage)
                }
                return
            }
            for index in columns.indices { row[index] = .init(Figure.read(columns[index].field, report, events), column: columns[index].storage) }
        }
    }

    /// Writes the rows kept since the last commit.
    private func writePending() throws {
        try samples.write(); try frames.write(); try actions.write()
    }

    /// Sets a metadata entry (the daemon's target, found after the recording began).
    public func setMeta(_ key: String, _ value: String) {
        guard !failed else { return }
        try? setMeta?.run([.text(key), .text(value)])
    }

    /// Past `maxBytes` in use (pages not on the free list), drops the oldest tenth of every
    /// growing table; the freed pages are reused, so the file stays near its limit.
    private func dropOldestIfFull() throws {
        guard let maxBytes, let pages = try database.integer("PRAGMA page_count"),
              let free = try database.integer("PRAGMA freelist_count"), let size = try database.integer("PRAGMA page_size"),
              UInt64(max(0, pages - free) * size) >= maxBytes else { return }
        guard let rows = try database.integer("SELECT count(*) FROM sample_log"), rows > 10,
              let cut = try database.integer("SELECT t_ms FROM sample_log ORDER BY rowid LIMIT 1 OFFSET \(rows / 10)") else { return }
        for table in ["sample_log", "frame_log", "action_log", "high_frequency_log"] {
            try database.execute("DELETE FROM \(table) WHERE t_ms < \(cut)")
        }
        try database.execute("DELETE FROM phases WHERE t_exit IS NOT NULL AND t_exit * 1000 < \(cut)")
    }

    /// How the target ended, when it ended by itself (not stopped by perfhud): the live rows then
    /// end with the exit row (the last sample row), and a replay gives it too.
    private func recordEnd(exitCode: Int32?, exitSignal: Int32?) {
        setMeta("target_ended", "1")
        setMeta("exit_code", exitCode.map { String($0) } ?? "")
        setMeta("exit_signal", exitSignal.map { String($0) } ?? "")
    }

    /// Phases entered since the last tick get a row; the one they ended gets its exit.
    private func recordPhases(_ phases: PhaseHistory) throws {
        let new = min(phases.entered - phasesSeen, phases.records.count)
        guard new > 0 else { return }
        let first = phases.records.count - new
        for index in first..<phases.records.count {
            if let row = openPhaseRow, index > 0 {
                let left = phases.records[index - 1]
                try closePhase.run([left.exitedAt.sqlite, left.exitBytes.sqlite, .integer(row)])
            }
            let record = phases.records[index]
            try insertPhase.run([.real(record.enteredAt), .text(record.name), record.entryBytes.sqlite])
            openPhaseRow = database.lastInsertRowID
        }
        phasesSeen = phases.entered
    }

    /// Commits what is left and folds the write-ahead log in: the file is complete on its own.
    public func close() {
        if !failed {
            do { try writePending() } catch { warn("recording to \(database.path): the last second was not written: \(error)") }
            setMeta("closed", "1")
            try? database.execute("COMMIT; PRAGMA journal_mode=DELETE;")
        }
        database.close()
    }
}

private extension Tick {
    /// Whether the session has an event socket, without copying the snapshot (`events != nil` does).
    var hasEvents: Bool { if case .none = events { return false } else { return true } }
}

extension Recorder {
    /// A recording of a HUD session: its metadata from the session's configuration.
    package convenience init(path: String, session: SessionConfiguration, pid: Int32, command: String, commandLine: String?,
                     startNanoseconds: UInt64, warn: @escaping (String) -> Void) throws {
        try self.init(path: path, meta: Self.meta(version: session.version, pid: pid, command: command, commandLine: commandLine,
                                                  tickNanoseconds: session.watch.tickNanoseconds, events: session.watch.events,
                                                  alerts: session.watch.alerts),
                      startNanoseconds: startNanoseconds, warn: warn)
    }
}
