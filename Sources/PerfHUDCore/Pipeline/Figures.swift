/// The figures of a tick row, each described once: its JSON key (a contract: never renamed), its
/// unit and the resolution it is kept and printed at, the column of a recording's `sample_log`
/// that keeps it, the Prometheus name the daemon exports it under, whether `export --format csv`
/// has it as a column, and the run figures `report` and `--fail-on` take from it (its mean, peak,
/// first or last value over the rows: `RunAggregates`). The JSON row, the recording (its schema,
/// its writer, its reader and its `samples` view), the daemon's metrics, the CSV export and
/// `report`'s keys are built from this table, so a new figure is its collector (what fills `Report`
/// or `EventSnapshot`; a once-a-second one: a field of `SecondLevels` and its read) plus, here, a
/// case of `Field` (its JSON key: the case's name), its entry (`entry`), how it is read from a tick
/// (`read`) and put back from a recording (`write`). The three are switches over `Field` without
/// a default, so a figure that lacks any of them does not compile.
///
/// The order is the JSON row's: `Field`'s. A few fields are not plain numbers (the high-frequency
/// list, the phase, the frame source, the command, how the target ended); they hold their place in
/// the table with a `.special` kind, read as nil, and each sink writes them its own way.
///
/// A class: the sinks walk the table every tick, and copying a struct that holds strings and arrays
/// costs retains and releases per field (a quarter of what recording a tick cost, when each entry
/// also held its write as a closure).
public final class Figure {
    /// How a figure is kept in `sample_log`.
    public enum Storage: Equatable {
        /// An integer, the value × scale rounded (0.01 % CPU: 100): exact at the figure's resolution.
        case fixed(Double)
        /// A whole count or size.
        case integer
        /// A REAL: totals that may be fractional (sample rates scale counts).
        case real
        /// Not recorded: derived on reading from what is (`Figure.derive`).
        case derived
    }

    /// What a field is, for the JSON row.
    public enum Kind: Equatable {
        /// A number printed with at most `decimals` decimals (its resolution), or null.
        case number(decimals: Int)
        /// true, false or null (kept as 1 or 0).
        case boolean
        /// A field written by each sink its own way.
        case special(Special)
    }

    public enum Special: Equatable {
        case highFrequencyActions, phase, rejectedByReason, frameSource, framesUnreportedReason, command, exitStatus, busiestThreads
    }

    /// Where the value lives: the sample's report, or the event figures (null without an event socket).
    public enum Source: Equatable { case report, events }

    /// How the daemon exports a figure (base units): a gauge (absent while unknown), a counter
    /// that mirrors a cumulative figure (advanced by its increase, never back), a counter of the
    /// kernel's own cumulative count behind a rate figure (`KernelTotal`), or under a name of its
    /// own with labels, exported by its own code (CPU by mode, rejections by reason, actions by
    /// label, the busiest thread).
    ///
    /// Several figures may share a name, told apart by `labels` (`perfhud_target_memory_bytes{kind="anon"}`):
    /// one family, one `# TYPE` line.
    public struct Metric: Equatable {
        public enum Kind: Equatable {
            case gauge, counter, labelled
            /// A counter whose value is the kernel's cumulative count (`KernelTotal`, base units),
            /// so a scrape's `rate()` is the kernel's rate; the figure is its rate per second × 1 / scale.
            case kernelTotal(KernelTotal)
        }
        public let name: String
        public let kind: Kind
        public let help: String
        /// The figure × scale is the metric (to base units: bytes per hour → per second; for a
        /// `kernelTotal`, the figure × scale is the counter's increase per second: percent → 0.01).
        public var scale = 1.0
        /// The labels of this figure's series within its family, after `target`.
        public let labels: [Label]
        /// The series's name and labels, `name{a="b",…}` without the target: the key the daemon
        /// keeps it under (made once: the sinks look it up every tick).
        public let series: String

        public struct Label: Equatable {
            public let name: String
            public let value: String
        }

        init(name: String, kind: Kind, help: String, scale: Double = 1, labels: [Label] = []) {
            self.name = name; self.kind = kind; self.help = help; self.scale = scale; self.labels = labels
            series = labels.isEmpty ? name : name + "{" + labels.map { "\($0.name)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        }

        static func gauge(_ name: String, _ help: String, scale: Double = 1, labels: [(String, String)] = []) -> Metric {
            Metric(name: name, kind: .gauge, help: help, scale: scale, labels: labels.map { Label(name: $0.0, value: $0.1) })
        }
        static func counter(_ name: String, _ help: String) -> Metric { Metric(name: name, kind: .counter, help: help) }
        static func labelled(_ name: String) -> Metric { Metric(name: name, kind: .labelled, help: "") }
        static func kernelTotal(_ name: String, _ total: KernelTotal, _ help: String, scale: Double = 1, labels: [(String, String)] = []) -> Metric {
            Metric(name: name, kind: .kernelTotal(total), help: help, scale: scale, labels: labels.map { Label(name: $0.0, value: $0.1) })
        }
    }

    /// Which figure it is: its JSON key (`name`) is the case's name. For `read`, a switch, not a
    /// closure — the sinks read every figure of every tick, and a closure given the tick's structs
    /// by value retains their fields each call.
    let field: Field
    /// The key as the JSON row writes it (`Key`).
    let key: Key
    public let unit: String
    public let kind: Kind
    public let source: Source
    /// The `sample_log` column; nil for fields that are derived or kept elsewhere.
    public let column: String?
    public let storage: Storage
    /// How the daemon exports the figure, where it does.
    public let metric: Metric?
    /// Without an event socket: printed as null (true), or left out of the row (false).
    public let nullWithoutEvents: Bool
    /// The run figures `report` takes from it, each under its own key (`RunAggregates`).
    public let summaries: [RunAggregates.Summary]
    /// Whether `export --format csv` has a column of it (named by its key).
    public let inCSV: Bool

    /// The recording format that first kept it: a recording of an older format replays rows without it, as they were live.
    public let since: Int64

    init(_ field: Field, _ unit: String, _ kind: Kind, _ source: Source, since: Int64 = 1, column: String? = nil, storage: Storage = .derived,
         metric: Metric? = nil, nullWithoutEvents: Bool = true, summaries: [RunAggregates.Summary] = [], inCSV: Bool? = nil) {
        self.field = field; key = Key(field.rawValue); self.unit = unit; self.kind = kind; self.source = source; self.since = since; self.column = column
        self.storage = storage; self.metric = metric; self.nullWithoutEvents = nullWithoutEvents
        self.summaries = summaries
        // Numbers are CSV columns unless said otherwise; of the special fields, the phase (as text).
        if case .number = kind { self.inCSV = inCSV ?? true } else { self.inCSV = inCSV ?? (kind == .special(.phase)) }
    }

    deinit { key.free() }

    /// The JSON key.
    public var name: String { field.rawValue }

    /// A key's UTF-8 bytes, copied once when the table is made: a plain pointer and count, which
    /// a row writer copies without counting a reference (a `String` of more than 15 bytes would be
    /// retained and released per field per row).
    struct Key {
        let start: UnsafePointer<UInt8>
        let count: Int

        init(_ text: String) {
            let bytes = Array(text.utf8)
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bytes.count))
            copy.initialize(from: bytes, count: bytes.count)
            start = UnsafePointer(copy); count = bytes.count
        }

        func free() { UnsafeMutablePointer(mutating: start).deallocate() }
    }

    /// What a row writer needs of a figure, as plain values: a walk over `[Figure]` retains and
    /// releases each figure (a class), ~60 of each a row; a walk over these retains nothing.
    struct Plain {
        let key: Key
        let kind: Kind
        let source: Source
        let nullWithoutEvents: Bool
        let field: Field
    }

    var plain: Plain { Plain(key: key, kind: kind, source: source, nullWithoutEvents: nullWithoutEvents, field: field) }

    /// The figure's value in a row: nil for an event figure of a session without an event socket
    /// (null in the live row, empty in CSV, no sample in OpenMetrics, skipped by a run summary).
    public func value(in report: Report, events: EventSnapshot?) -> Double? {
        if source == .events && events == nil { return nil }
        return read(report, events ?? Self.noEvents)
    }
    private static let noEvents = EventSnapshot()

    /// The figure's value in a tick's report and event figures; nil for a report figure without a report.
    public func value(in report: Report?, _ events: EventSnapshot) -> Double? {
        guard let report = report ?? (source == .events ? Self.noReport : nil) else { return nil }
        return read(report, events)
    }

    /// The figure's value in a tick's report and event figures.
    func read(_ r: Report, _ e: EventSnapshot) -> Double? { Self.read(field, r, e) }

    /// The value of the figure `field`: the JSON row (`Figure.Plain`) and the recorder walk their
    /// fields as plain values, not figures — no reference counted per figure per tick.
    static func read(_ field: Field, _ r: Report, _ e: EventSnapshot) -> Double? {
        switch field {
        case .cpu_percent: return r.cpuPercent
        case .cpu_machine_percent: return r.cpuMachinePercent
        case .cpu_user_percent: return r.cpuUserPercent
        case .cpu_system_percent: return r.cpuSystemPercent
        case .rss_bytes: return r.residentBytes.map { Double($0) }
        case .pss_bytes: return r.proportionalBytes.map { Double($0) }
        case .vsize_bytes: return r.virtualBytes.map { Double($0) }
        case .threads: return r.threads.map { Double($0) }
        // Null before the first frame (unknown, not 0), in the row and in the recording.
        case .fps: return e.hasFrames ? e.fps : nil
        case .frame_p50_ms: return e.frameP50
        case .frame_p95_ms: return e.frameP95
        case .frame_p99_ms: return e.frameP99
        case .fps_1pct_low: return e.fpsOnePercentLow
        case .janky_frames: return e.jankyFrames
        case .dropped_frames: return e.droppedFrames
        case .actions_per_second: return e.actionsPerSecond
        case .events_received: return Double(e.received)
        case .events_malformed: return Double(e.malformed)
        case .events_rejected: return Double(e.rejectedTotal)
        case .events_ignored: return Double(e.ignored)
        case .frames_total: return e.framesTotal
        case .actions_total: return e.actionsTotal
        case .input_latency_p50_ms: return e.inputLatencyP50
        case .input_latency_p99_ms: return e.inputLatencyP99
        case .elapsed_seconds: return r.elapsedSeconds
        case .rss_trend_bytes_per_second: return r.residentTrendBytesPerSecond
        case .processes: return Double(r.processCount)
        case .cpu_seconds_total: return r.cpuSecondsTotal
        case .frames_unreported_reason: return FramesUnreported.code(e.framesUnreportedReason)
        case .cpu_wait_percent: return r.cpuWaitPercent
        case .context_switches_voluntary_per_second: return r.voluntarySwitchesPerSecond
        case .context_switches_involuntary_per_second: return r.involuntarySwitchesPerSecond
        case .page_faults_minor_per_second: return r.minorFaultsPerSecond
        case .page_faults_major_per_second: return r.majorFaultsPerSecond
        case .io_read_bytes_per_second: return r.ioReadBytesPerSecond
        case .io_write_bytes_per_second: return r.ioWriteBytesPerSecond
        case .io_read_chars_per_second: return r.ioReadCharsPerSecond
        case .io_write_chars_per_second: return r.ioWriteCharsPerSecond
        case .fds_open: return r.fdsOpen.map { Double($0) }
        case .fds_limit: return r.fdsLimit.map { Double($0) }
        case .rss_anon_bytes: return r.residentAnonBytes.map { Double($0) }
        case .rss_file_bytes: return r.residentFileBytes.map { Double($0) }
        case .rss_shmem_bytes: return r.residentShmemBytes.map { Double($0) }
        case .swap_bytes: return r.swapBytes.map { Double($0) }
        case .cpu_throttled_percent: return r.cpuThrottledPercent
        case .pressure_cpu_some_percent: return r.pressure.cpuSome
        case .pressure_cpu_full_percent: return r.pressure.cpuFull
        case .pressure_memory_some_percent: return r.pressure.memorySome
        case .pressure_memory_full_percent: return r.pressure.memoryFull
        case .pressure_io_some_percent: return r.pressure.ioSome
        case .pressure_io_full_percent: return r.pressure.ioFull
        case .rss_trend_bytes_per_hour: return r.residentTrendBytesPerHour
        case .rss_trend_r2: return r.residentTrendR2
        case .leak_suspected: return r.leakSuspected.map { $0 ? 1 : 0 }
        case .oom_score: return r.everySecond.oomScore.map { Double($0) }
        // Not numbers: each sink writes them its own way.
        case .high_frequency_actions, .phase, .events_rejected_by_reason, .frame_source, .command, .busiest_threads, .exit: return nil
        }
    }

    /// Puts a recorded value back (reading a recording).
    func write(_ r: inout Report, _ e: inout EventSnapshot, _ v: Double?) { Self.write(field, v, &r, &e) }

    /// Puts the value `v` of the figure `field` back into a report and event figures (reading a recording).
    static func write(_ field: Field, _ v: Double?, _ r: inout Report, _ e: inout EventSnapshot) {
        switch field {
        case .cpu_percent: r.cpuPercent = v
        case .cpu_user_percent: r.cpuUserPercent = v
        case .cpu_system_percent: r.cpuSystemPercent = v
        case .rss_bytes: r.residentBytes = size(v)
        case .pss_bytes: r.proportionalBytes = size(v)
        case .vsize_bytes: r.virtualBytes = size(v)
        case .threads: r.threads = v.map { $0.clampedInt }
        case .fps: e.fps = v ?? 0
        case .frame_p50_ms: e.frameP50 = v
        case .frame_p95_ms: e.frameP95 = v
        case .frame_p99_ms: e.frameP99 = v
        case .janky_frames: e.jankyFrames = v ?? 0
        case .dropped_frames: e.droppedFrames = v ?? 0
        case .actions_per_second: e.actionsPerSecond = v ?? 0
        case .events_received: e.received = count(v)
        case .events_malformed: e.malformed = count(v)
        case .events_rejected: if count(v) > 0 { e.rejected = ["recorded": count(v)] }
        case .events_ignored: e.ignored = count(v)
        case .frames_total: e.framesTotal = v ?? 0
        case .actions_total: e.actionsTotal = v ?? 0
        case .frames_unreported_reason: e.framesUnreportedReason = FramesUnreported.reason(code: v)
        case .input_latency_p50_ms: e.inputLatencyP50 = v
        case .input_latency_p99_ms: e.inputLatencyP99 = v
        case .elapsed_seconds: r.elapsedSeconds = v ?? 0
        case .rss_trend_bytes_per_second: r.residentTrendBytesPerSecond = v
        case .processes: r.processCount = max(0, (v ?? 1).clampedInt)
        case .cpu_seconds_total: r.cpuSecondsTotal = v
        case .cpu_wait_percent: r.cpuWaitPercent = v
        case .context_switches_voluntary_per_second: r.voluntarySwitchesPerSecond = v
        case .context_switches_involuntary_per_second: r.involuntarySwitchesPerSecond = v
        case .page_faults_minor_per_second: r.minorFaultsPerSecond = v
        case .page_faults_major_per_second: r.majorFaultsPerSecond = v
        case .io_read_bytes_per_second: r.ioReadBytesPerSecond = v
        case .io_write_bytes_per_second: r.ioWriteBytesPerSecond = v
        case .io_read_chars_per_second: r.ioReadCharsPerSecond = v
        case .io_write_chars_per_second: r.ioWriteCharsPerSecond = v
        case .fds_open: r.fdsOpen = size(v)
        case .fds_limit: r.fdsLimit = size(v)
        case .rss_anon_bytes: r.residentAnonBytes = size(v)
        case .rss_file_bytes: r.residentFileBytes = size(v)
        case .rss_shmem_bytes: r.residentShmemBytes = size(v)
        case .swap_bytes: r.swapBytes = size(v)
        case .cpu_throttled_percent: r.cpuThrottledPercent = v
        case .pressure_cpu_some_percent: r.pressure.cpuSome = v
        case .pressure_cpu_full_percent: r.pressure.cpuFull = v
        case .pressure_memory_some_percent: r.pressure.memorySome = v
        case .pressure_memory_full_percent: r.pressure.memoryFull = v
        case .pressure_io_some_percent: r.pressure.ioSome = v
        case .pressure_io_full_percent: r.pressure.ioFull = v
        case .rss_trend_bytes_per_hour: r.residentTrendBytesPerHour = v
        case .rss_trend_r2: r.residentTrendR2 = v
        case .leak_suspected: r.leakSuspected = v.map { $0 != 0 }
        case .oom_score: r.everySecond.oomScore = size(v)
        // Not recorded: derived on reading (`DerivedFigure`), or kept by the recording its own way.
        case .cpu_machine_percent, .fps_1pct_low: break
        case .high_frequency_actions, .phase, .events_rejected_by_reason, .frame_source, .command, .busiest_threads, .exit: break
        }
    }

    /// Every field of a tick row, in the row's order, named by its JSON key (a contract: never
    /// renamed). A new case needs its entry, its read and its write (switches without a default).
    enum Field: String, CaseIterable {
        case cpu_percent, cpu_machine_percent, cpu_user_percent, cpu_system_percent, rss_bytes, pss_bytes, vsize_bytes
        case threads, fps, frame_p50_ms, frame_p95_ms, frame_p99_ms, fps_1pct_low, janky_frames, dropped_frames
        case actions_per_second, high_frequency_actions, phase, events_received, events_malformed, events_rejected
        case events_rejected_by_reason, events_ignored, frames_total, actions_total, frame_source, frames_unreported_reason
        case input_latency_p50_ms, input_latency_p99_ms, command, elapsed_seconds, rss_trend_bytes_per_second, processes
        case cpu_seconds_total, cpu_wait_percent, context_switches_voluntary_per_second
        case context_switches_involuntary_per_second, page_faults_minor_per_second, page_faults_major_per_second
        case io_read_bytes_per_second, io_write_bytes_per_second, io_read_chars_per_second, io_write_chars_per_second
        case fds_open, fds_limit, rss_anon_bytes, rss_file_bytes, rss_shmem_bytes, swap_bytes, busiest_threads
        case cpu_throttled_percent, pressure_cpu_some_percent, pressure_cpu_full_percent, pressure_memory_some_percent
        case pressure_memory_full_percent, pressure_io_some_percent, pressure_io_full_percent, rss_trend_bytes_per_hour
        case rss_trend_r2, leak_suspected, oom_score, exit
    }
    private static let noReport = Report(wallSeconds: 0, elapsedSeconds: 0, pid: 0, alive: false, processCount: 0)

    /// The value of a stored column (as `BatchedInsert.append(_:storage:)` wrote it).
    func value(stored integer: Int64?, real: Double?) -> Double? {
        switch storage {
        case .fixed(let scale): return integer.map { Double($0) / scale }
        case .integer: return integer.map { Double($0) }
        case .real: return real
        case .derived: return nil
        }
    }

    /// The SQL expression of the `samples` view that gives the figure in its unit.
    var viewExpression: String? {
        guard let column else { return nil }
        if field == .frames_unreported_reason {
            let cases = FramesUnreported.all.enumerated().map { "WHEN \($0.offset + 1) THEN '\($0.element)'" }.joined(separator: " ")
            return "CASE \(column) \(cases) END"
        }
        if case .fixed(let scale) = storage { return "\(column) / \(ReportFormatter.number(scale, decimals: 0)).0" }
        return column
    }
}

extension Figure {
    private static func size(_ value: Double?) -> UInt64? { value.flatMap { $0 >= 0 && $0 < 1.8e19 ? UInt64($0) : nil } }
    private static func count(_ value: Double?) -> UInt64 { size(value) ?? 0 }


    /// Every field of a tick row, in the JSON row's order (after `time`, `pid` and `alive`).
    public static let all: [Figure] = Field.allCases.map(entry)

    /// The table: what each field is (see `Figure`).
    private static func entry(_ field: Field) -> Figure {
        switch field {
        case .cpu_percent:
            // CSV: psrecord's `cpu` column is this figure.
            return Figure(field, "percent of one CPU", .number(decimals: 2), .report, column: "cpu_centi", storage: .fixed(100),
                          summaries: [.mean("cpu_percent_avg"), .max("cpu_percent_max")], inCSV: false)
        case .cpu_machine_percent:
            return Figure(field, "percent of all CPUs", .number(decimals: 2), .report)
        case .cpu_user_percent:
            return Figure(field, "percent of one CPU", .number(decimals: 2), .report, column: "cpu_user_centi", storage: .fixed(100))
        case .cpu_system_percent:
            return Figure(field, "percent of one CPU", .number(decimals: 2), .report, column: "cpu_system_centi", storage: .fixed(100))
        case .rss_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, column: "rss_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_resident_memory_bytes", "Resident set size (statm resident pages × page size)."),
                          summaries: [.atStart("rss_start_bytes"), .max("rss_peak_bytes"), .last("rss_end_bytes")])
        case .pss_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, column: "pss_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_proportional_memory_bytes", "Proportional set size (smaps_rollup Pss); absent where it may not be read."),
                          summaries: [.max("pss_peak_bytes")])
        case .vsize_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, column: "vsize_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_virtual_memory_bytes", "Virtual memory size."))
        case .threads:
            return Figure(field, "threads", .number(decimals: 0), .report, column: "threads", storage: .integer, metric: .gauge("perfhud_target_threads", "Threads of the target."))
        case .fps:
            return Figure(field, "frames per second", .number(decimals: 2), .events, column: "fps_centi", storage: .fixed(100))
        case .frame_p50_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p50_us", storage: .fixed(1000))
        case .frame_p95_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p95_us", storage: .fixed(1000))
        case .frame_p99_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "p99_us", storage: .fixed(1000))
        case .fps_1pct_low:
            return Figure(field, "frames per second", .number(decimals: 2), .events)
        case .janky_frames:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "janky", storage: .real, metric: .counter("perfhud_janky_frames_total", "Frames longer than --jank-factor × the frame budget."))
        case .dropped_frames:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "dropped", storage: .real, metric: .counter("perfhud_dropped_frames_total", "Σ max(0, round(duration / budget) − 1) over the frames."))
        case .actions_per_second:
            return Figure(field, "actions per second", .number(decimals: 2), .events, column: "aps_centi", storage: .fixed(100))
        case .high_frequency_actions:
            return Figure(field, "", .special(.highFrequencyActions), .events)
        case .phase:
            return Figure(field, "", .special(.phase), .events)
        case .events_received:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "received", storage: .integer,
                          metric: .counter("perfhud_events_received_total", "Event lines received."))
        case .events_malformed:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "malformed", storage: .integer,
                          metric: .counter("perfhud_events_malformed_total", "Event lines that could not be parsed."))
        case .events_rejected:
            // The total is recorded; the reasons beside it (rejected_reasons, when they change).
            return Figure(field, "datagrams", .number(decimals: 0), .events, column: "rejected", storage: .integer,
                          metric: .labelled("perfhud_events_rejected_total"))
        case .events_rejected_by_reason:
            return Figure(field, "", .special(.rejectedByReason), .events, nullWithoutEvents: false)
        case .events_ignored:
            return Figure(field, "lines", .number(decimals: 0), .events, column: "ignored", storage: .integer, nullWithoutEvents: false)
        case .frames_total:
            return Figure(field, "frames", .number(decimals: 2), .events, column: "frames_total", storage: .real,
                          metric: .counter("perfhud_frames_total", "Frames the program reported."), nullWithoutEvents: false)
        case .actions_total:
            return Figure(field, "actions", .number(decimals: 2), .events, column: "actions_total", storage: .real,
                          metric: .labelled("perfhud_actions_total"), nullWithoutEvents: false)
        case .frame_source:
            return Figure(field, "", .special(.frameSource), .events)
        case .frames_unreported_reason:
            // Why there is no frame figure (`FramesUnreported`); in the JSON row only while there is one. Recorded
            // as a code (`FramesUnreported.all`), which the `samples` view turns back into the text.
            return Figure(field, "", .special(.framesUnreportedReason), .events, column: "frames_unreported", storage: .integer,
                          nullWithoutEvents: false)
        case .input_latency_p50_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "latency_p50_us", storage: .fixed(1000))
        case .input_latency_p99_ms:
            return Figure(field, "milliseconds", .number(decimals: 3), .events, column: "latency_p99_us", storage: .fixed(1000))
        case .command:
            return Figure(field, "", .special(.command), .report)
        case .elapsed_seconds:
            // CSV: psrecord's `elapsed_time` column is this figure.
            return Figure(field, "seconds", .number(decimals: 3), .report, column: "t_ms", storage: .fixed(1000), inCSV: false)
        case .rss_trend_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .report, column: "rss_trend", storage: .real)
        case .processes:
            return Figure(field, "processes", .number(decimals: 0), .report, column: "processes", storage: .integer,
                          metric: .gauge("perfhud_target_processes", "Processes summed into the target's figures."))
        case .cpu_seconds_total:
            return Figure(field, "seconds", .number(decimals: 6), .report, column: "cpu_total_us", storage: .fixed(1e6),
                          metric: .labelled("perfhud_target_cpu_seconds_total"))
        case .cpu_wait_percent:
            // Why it is slow (see README, Definitions): `Activity`, derived by `MetricsStore`. The daemon
            // exports the rates as counters of the kernel's own totals (`.kernelTotal`), several figures
            // sharing a family told apart by a label (`kind`, `direction`, `resource`).
            return Figure(field, "percent of one CPU", .number(decimals: 2), .report, since: 4, column: "cpu_wait_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_cpu_wait_seconds_total", .cpuWaitSeconds, Help.wait, scale: 0.01),
                          summaries: [.mean("cpu_wait_percent_avg"), .max("cpu_wait_percent_max")])
        case .context_switches_voluntary_per_second:
            return Figure(field, "switches per second", .number(decimals: 2), .report, since: 4, column: "cs_voluntary_centi",
                          storage: .fixed(100), metric: .kernelTotal("perfhud_target_context_switches_total", .voluntarySwitches, Help.switches,
                                                                    labels: [("kind", "voluntary")]),
                          summaries: [.max("context_switches_voluntary_per_second_max")])
        case .context_switches_involuntary_per_second:
            return Figure(field, "switches per second", .number(decimals: 2), .report, since: 4, column: "cs_involuntary_centi",
                          storage: .fixed(100), metric: .kernelTotal("perfhud_target_context_switches_total", .involuntarySwitches, Help.switches,
                                                                    labels: [("kind", "involuntary")]),
                          summaries: [.max("context_switches_involuntary_per_second_max")])
        case .page_faults_minor_per_second:
            return Figure(field, "faults per second", .number(decimals: 2), .report, since: 4, column: "faults_minor_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_page_faults_total", .minorFaults, Help.faults, labels: [("kind", "minor")]),
                          summaries: [.max("page_faults_minor_per_second_max")])
        case .page_faults_major_per_second:
            return Figure(field, "faults per second", .number(decimals: 2), .report, since: 4, column: "faults_major_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_page_faults_total", .majorFaults, Help.faults, labels: [("kind", "major")]),
                          summaries: [.max("page_faults_major_per_second_max")])
        case .io_read_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .report, since: 4, column: "io_read_bytes", storage: .integer,
                          metric: .kernelTotal("perfhud_target_io_bytes_total", .ioReadBytes, Help.io, labels: [("direction", "read")]),
                          summaries: [.mean("io_read_bytes_per_second_avg"), .max("io_read_bytes_per_second_max")])
        case .io_write_bytes_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .report, since: 4, column: "io_write_bytes", storage: .integer,
                          metric: .kernelTotal("perfhud_target_io_bytes_total", .ioWriteBytes, Help.io, labels: [("direction", "write")]),
                          summaries: [.mean("io_write_bytes_per_second_avg"), .max("io_write_bytes_per_second_max")])
        case .io_read_chars_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .report, since: 4, column: "io_read_chars", storage: .integer)
        case .io_write_chars_per_second:
            return Figure(field, "bytes per second", .number(decimals: 0), .report, since: 4, column: "io_write_chars", storage: .integer)
        case .fds_open:
            return Figure(field, "descriptors", .number(decimals: 0), .report, since: 4, column: "fds_open", storage: .integer,
                          metric: .gauge("perfhud_target_open_fds", "Open file descriptors of the target (/proc/PID/fd), read once a second."),
                          summaries: [.max("fds_open_max")])
        case .fds_limit:
            return Figure(field, "descriptors", .number(decimals: 0), .report, since: 4, column: "fds_limit", storage: .integer,
                          metric: .gauge("perfhud_target_max_fds", "The target's soft limit of open file descriptors (/proc/PID/limits)."))
        case .rss_anon_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, since: 4, column: "rss_anon_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "anon")]),
                          summaries: [.max("rss_anon_peak_bytes")])
        case .rss_file_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, since: 4, column: "rss_file_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "file")]))
        case .rss_shmem_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, since: 4, column: "rss_shmem_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "shmem")]))
        case .swap_bytes:
            return Figure(field, "bytes", .number(decimals: 0), .report, since: 4, column: "swap_bytes", storage: .integer,
                          metric: .gauge("perfhud_target_memory_bytes", Help.memory, labels: [("kind", "swap")]),
                          summaries: [.max("swap_peak_bytes")])
        case .busiest_threads:
            // perfhud_target_busiest_thread_cpu_ratio and …_busiest_thread_info{thread}: the first of the list.
            return Figure(field, "", .special(.busiestThreads), .report, since: 4, metric: .labelled("perfhud_target_busiest_thread_cpu_ratio"))
        case .cpu_throttled_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "throttled_centi", storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_cpu_throttled_seconds_total", .throttledSeconds, Help.throttled, scale: 0.01),
                          summaries: [.mean("cpu_throttled_percent_avg"), .max("cpu_throttled_percent_max")])
        case .pressure_cpu_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_cpu_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureCPUSomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "cpu"), ("kind", "some")]),
                          summaries: [.max("pressure_cpu_some_percent_max")])
        case .pressure_cpu_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_cpu_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureCPUFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "cpu"), ("kind", "full")]))
        case .pressure_memory_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_memory_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureMemorySomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "memory"), ("kind", "some")]),
                          summaries: [.max("pressure_memory_some_percent_max")])
        case .pressure_memory_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_memory_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureMemoryFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "memory"), ("kind", "full")]))
        case .pressure_io_some_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_io_some_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureIOSomeSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "io"), ("kind", "some")]),
                          summaries: [.max("pressure_io_some_percent_max")])
        case .pressure_io_full_percent:
            return Figure(field, "percent of the wall time", .number(decimals: 2), .report, since: 4, column: "psi_io_full_centi",
                          storage: .fixed(100),
                          metric: .kernelTotal("perfhud_target_pressure_seconds_total", .pressureIOFullSeconds, Help.pressure, scale: 0.01,
                                               labels: [("resource", "io"), ("kind", "full")]))
        case .rss_trend_bytes_per_hour:
            return Figure(field, "bytes per hour", .number(decimals: 0), .report, since: 4, column: "rss_trend_per_hour", storage: .integer,
                          metric: .gauge("perfhud_target_rss_trend_bytes_per_second",
                                         "Slope of a least-squares line through RSS over --leak-window (bytes per second).", scale: 1.0 / 3600),
                          summaries: [.last("rss_trend_bytes_per_hour_end")])
        case .rss_trend_r2:
            return Figure(field, "r²", .number(decimals: 3), .report, since: 4, column: "rss_trend_r2_milli", storage: .fixed(1000))
        case .leak_suspected:
            return Figure(field, "", .boolean, .report, since: 4, column: "leak_suspected", storage: .integer,
                          metric: .gauge("perfhud_target_leak_suspected",
                                         "1 while RSS over a full --leak-window fits a line with r² ≥ 0.8 and a slope ≥ --leak-threshold."),
                          summaries: [.last("leak_suspected"), .max("leak_suspected_ever")], inCSV: true)
        case .oom_score:
            // Which process the kernel kills first when memory runs out (`/proc/PID/oom_score`, 0…2000), read
            // once a second: `Activity.EverySecond.levels`; of several processes, the highest.
            return Figure(field, "score", .number(decimals: 0), .report, since: 5, column: "oom_score", storage: .integer,
                          metric: .gauge("perfhud_target_oom_score",
                                         "The target's /proc/PID/oom_score (0 to 2000): the higher, the sooner the kernel kills it when memory runs out; of several processes, the highest."),
                          summaries: [.max("oom_score_max")])
        case .exit:
            return Figure(field, "", .special(.exitStatus), .report)
        }
    }

    /// The help of the metric families several figures share (one text a family).
    private enum Help {
        static let wait = "Time the target's threads were runnable but waiting for a CPU (run-queue delay of /proc/PID/task/*/schedstat, summed over threads, since perfhud watches them)."
        static let switches = "Context switches of the target's threads (task/*/status, since perfhud watches them), by kind: voluntary (it waited) or involuntary (preempted)."
        static let faults = "Page faults of the target since it started (/proc/PID/stat), by kind: minor (no storage read) or major (read from storage)."
        static let io = "Bytes the target fetched from or sent to storage (/proc/PID/io read_bytes, write_bytes), by direction; absent where it may not be read."
        static let memory = "Resident memory of the target by kind (RssAnon, RssFile, RssShmem of /proc/PID/status) and its swapped-out memory (VmSwap, kind swap)."
        static let throttled = "Time the target's control group was throttled by its CPU quota (cpu.stat); 0 without a quota."
        static let pressure = "Time some (or all: kind full) tasks of the target's cgroup v2 group stalled on a resource (*.pressure total); absent without one."
    }

    /// The fields of the rows a recording of `format` replays (those its live run printed).
    public static func inFormat(_ format: Int64) -> [Figure] { format >= Recording.formatVersion ? all : all.filter { $0.since <= format } }

    /// The recorded figures, in `sample_log`'s order after its leading columns.
    static let recorded: [Figure] = all.filter { $0.column != nil && $0.column != "t_ms" }

    /// The figures `export --format csv` has a column of, after psrecord's, in the row's order.
    public static let csvColumns: [Figure] = all.filter(\.inCSV)

    /// The JSON keys printed as null when a session has no event socket (docs/figures.md's list).
    public static let eventKeys: [String] = all.filter { $0.source == .events && $0.nullWithoutEvents }.map(\.name)
}
