import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore

/// The figures of a tick row, each described once: its JSON key (a contract: never renamed), its
/// unit and the resolution it is kept and printed at, the column of a recording's `sample_log`
/// that keeps it, the Prometheus name the daemon exports it under, whether `export --format csv`
/// has it as a column, and the run figures `report` and `--fail-on` take from it (its mean, peak,
/// first or last value over the rows: `RunAggregates`). The JSON row, the recording (its schema,
/// its writer, its reader and its `samples` view), the daemon's metrics, the CSV export and
/// `report`'s keys are built from this table, so a new figure is its collector (what fills `TargetFigures`
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
/// Sendable by hand: every property is a constant, and `Key`'s bytes are written once, in the
/// initializer, and freed only by `deinit`.
public final class Figure: @unchecked Sendable {
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
        case gpuName, gpuUnreportedReason, netSource, netUnreportedReason, memoryUnreportedReason, oomKilled
    }

    /// Where the value lives: the target's figures of the tick (`TargetFigures`), or the event figures (null without an event socket).
    public enum Source: Equatable { case target, events }

    /// How the daemon exports a figure (base units): a gauge (absent while unknown), a counter
    /// that mirrors a cumulative figure (advanced by its increase, never back), a counter of the
    /// kernel's own cumulative count behind a rate figure (`KernelTotal`), or under a name of its
    /// own with labels, exported by its own code (CPU by mode, rejections by reason, actions by
    /// label, the busiest thread).
    ///
    /// Several figures may share a name, told apart by `labels` (`perfhud_target_memory_bytes{kind="anon"}`):
    /// one family, one `# TYPE` line.
    public struct Metric: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
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

        public struct Label: Equatable, Sendable {
            public let name: String
            public let value: String
        }

        package init(name: String, kind: Kind, help: String, scale: Double = 1, labels: [Label] = []) {
            self.name = name; self.kind = kind; self.help = help; self.scale = scale; self.labels = labels
            series = labels.isEmpty ? name : name + "{" + labels.map { "\($0.name)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        }

        package static func gauge(_ name: String, _ help: String, scale: Double = 1, labels: [(String, String)] = []) -> Metric {
            Metric(name: name, kind: .gauge, help: help, scale: scale, labels: labels.map { Label(name: $0.0, value: $0.1) })
        }
        package static func counter(_ name: String, _ help: String) -> Metric { Metric(name: name, kind: .counter, help: help) }
        package static func labelled(_ name: String) -> Metric { Metric(name: name, kind: .labelled, help: "") }
        package static func kernelTotal(_ name: String, _ total: KernelTotal, _ help: String, scale: Double = 1, labels: [(String, String)] = []) -> Metric {
            Metric(name: name, kind: .kernelTotal(total), help: help, scale: scale, labels: labels.map { Label(name: $0.0, value: $0.1) })
        }
    }

    /// Which figure it is: its JSON key (`name`) is the case's name. For `read`, a switch, not a
    /// closure — the sinks read every figure of every tick, and a closure given the tick's structs
    /// by value retains their fields each call.
    public let field: Field
    /// The key as the JSON row writes it (`Key`).
    package let key: Key
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
    /// Which way of it is good (`FigureDirection.swift`).
    public let better: Better

    package init(_ field: Field, _ unit: String, _ kind: Kind, _ source: Source, since: Int64 = 1, column: String? = nil, storage: Storage = .derived,
         metric: Metric? = nil, nullWithoutEvents: Bool = true, summaries: [RunAggregates.Summary] = [], inCSV: Bool? = nil) {
        self.field = field; key = Key(field.rawValue); self.unit = unit; self.kind = kind; self.source = source; self.since = since; self.column = column
        self.storage = storage; self.metric = metric; self.nullWithoutEvents = nullWithoutEvents
        self.summaries = summaries
        better = Self.better(field)
        // Numbers are CSV columns unless said otherwise; of the special fields, the phase (as text).
        if case .number = kind { self.inCSV = inCSV ?? true } else { self.inCSV = inCSV ?? (kind == .special(.phase)) }
    }

    deinit { key.free() }

    /// The JSON key.
    public var name: String { field.rawValue }

    /// The table's entry of `field`: where code outside the table names a figure, it names it by
    /// its field (`Figure[.rss_bytes].metric`), never by a key or a metric name written again.
    public static subscript(field: Field) -> Figure { byField[field]! }
    private static let byField = Dictionary(uniqueKeysWithValues: all.map { ($0.field, $0) })

    /// What a row writer needs of a figure, as plain values: a walk over `[Figure]` retains and
    /// releases each figure (a class), ~60 of each a row; a walk over these retains nothing.
    package struct Plain {
        package let key: Key
        package let kind: Kind
        package let source: Source
        package let nullWithoutEvents: Bool
        package let field: Field
    }

    package var plain: Plain { Plain(key: key, kind: kind, source: source, nullWithoutEvents: nullWithoutEvents, field: field) }

    /// The figure's value in a tick's target figures and event figures: nil for an event figure of a
    /// session without an event socket (`events` nil: null in the live row, empty in CSV, no
    /// sample in OpenMetrics, skipped by a run summary), and for a report figure without a report
    /// (a daemon target that is down).
    public func value(_ report: TargetFigures?, _ events: EventSnapshot?) -> Double? {
        switch source {
        case .events:
            guard let events else { return nil }
            return Self.read(field, report ?? Self.noFigures, events)
        case .target:
            guard let report else { return nil }
            return Self.read(field, report, events ?? EventSnapshot.empty)
        }
    }

    /// The value of the figure `field` in a report and event figures that are both there: what
    /// the sinks that read every figure of every tick call (the JSON row through `Figure.Plain`,
    /// the recorder, the run's aggregates, the daemon's mirror), walking fields as plain values,
    /// not figures — no reference counted and nothing copied into an Optional per figure per tick.
    public static func read(_ field: Field, _ r: TargetFigures, _ e: EventSnapshot) -> Double? {
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
        case .frames_unreported_reason: return FramesUnreported.codes.code(e.framesUnreportedReason)
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
        case .gpu_percent: return r.gpuBox?.value.busyPercent
        case .gpu_memory_bytes: return r.gpuBox?.value.memoryBytes.map { Double($0) }
        case .gpu_memory_busy_percent: return r.gpuBox?.value.memoryBusyPercent
        case .gpu_encoder_percent: return r.gpuBox?.value.encoderPercent
        case .gpu_decoder_percent: return r.gpuBox?.value.decoderPercent
        case .gpu_device_percent: return r.gpuBox?.value.device?.busyPercent
        case .gpu_device_memory_used_bytes: return r.gpuBox?.value.device?.memoryUsedBytes.map { Double($0) }
        case .gpu_device_memory_total_bytes: return r.gpuBox?.value.device?.memoryTotalBytes.map { Double($0) }
        case .gpu_temperature_celsius: return r.gpuBox?.value.device?.temperatureCelsius
        case .gpu_power_watts: return r.gpuBox?.value.device?.powerWatts
        case .gpu_clock_mhz: return r.gpuBox?.value.device?.clockMHz
        case .gpu_throttle_reasons: return r.gpuBox?.value.device?.throttleReasons.map { Double($0) }
        case .gpu_unreported_reason: return GPUUnreported.codes.code(r.gpuBox?.value.unreportedReason)
        case .net_tx_bytes_per_second: return r.netBox?.value.txBytesPerSecond
        case .net_rx_bytes_per_second: return r.netBox?.value.rxBytesPerSecond
        case .net_tx_bytes_total: return r.netBox?.value.txBytesTotal.map { Double($0) }
        case .net_rx_bytes_total: return r.netBox?.value.rxBytesTotal.map { Double($0) }
        case .tcp_connections: return r.netBox?.value.tcpConnections
        case .tcp_retransmits_per_second: return r.netBox?.value.tcpRetransmitsPerSecond
        case .tcp_retransmits_total: return r.netBox?.value.tcpRetransmitsTotal.map { Double($0) }
        case .tcp_connections_opened_total: return r.netBox?.value.tcpConnectionsOpenedTotal.map { Double($0) }
        case .tcp_connections_opened_per_second: return r.netBox?.value.tcpConnectionsOpenedPerSecond
        case .tcp_retransmit_percent: return r.netBox?.value.tcpRetransmitPercent
        case .tcp_rtt_ms: return r.netBox?.value.tcpRTTms
        case .net_source: return NetworkSource.codes.code(r.netBox?.value.source)
        case .net_unreported_reason: return NetworkUnreported.codes.code(r.netBox?.value.unreportedReason)
        case .memory_limit_bytes: return r.memoryLimitBytes.map { Double($0) }
        case .rss_sum_bytes: return r.residentSumBytes.map { Double($0) }
        case .cpu_limit_cores: return r.cpuLimitCores
        case .group_memory_bytes: return r.groupMemoryBytes.map { Double($0) }
        case .group_working_set_bytes: return r.groupWorkingSetBytes.map { Double($0) }
        case .group_anon_bytes: return r.groupAnonBytes.map { Double($0) }
        case .group_file_bytes: return r.groupFileBytes.map { Double($0) }
        case .group_kernel_bytes: return r.groupKernelBytes.map { Double($0) }
        case .pss_age_seconds: return r.proportionalAgeSeconds
        case .memory_unreported_reason: return MemoryUnreported.codes.code(r.memoryUnreportedReason)
        case .oom_kills: return r.oomKills.map { Double($0) }
        case .oom_killed: return r.oomKilled ? 1 : nil
        // Not numbers: each sink writes them its own way.
        case .high_frequency_actions, .phase, .events_rejected_by_reason, .frame_source, .command, .busiest_threads, .gpu_name, .exit: return nil
        }
    }

    /// Puts a recorded value back (reading a recording).
    package func write(_ r: inout TargetFigures, _ e: inout EventSnapshot, _ v: Double?) { Self.write(field, v, &r, &e) }

    /// Puts the value `v` of the figure `field` back into a report and event figures (reading a recording).
    package static func write(_ field: Field, _ v: Double?, _ r: inout TargetFigures, _ e: inout EventSnapshot) {
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
        case .frames_unreported_reason: e.framesUnreportedReason = FramesUnreported.codes.reason(code: v)
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
        case .gpu_percent: r.gpu.busyPercent = v
        case .gpu_memory_bytes: r.gpu.memoryBytes = size(v)
        case .gpu_memory_busy_percent: r.gpu.memoryBusyPercent = v
        case .gpu_encoder_percent: r.gpu.encoderPercent = v
        case .gpu_decoder_percent: r.gpu.decoderPercent = v
        case .gpu_device_percent: if let v { r.gpu.recordedDevice.busyPercent = v }
        case .gpu_device_memory_used_bytes: if let v { r.gpu.recordedDevice.memoryUsedBytes = size(v) }
        case .gpu_device_memory_total_bytes: if let v { r.gpu.recordedDevice.memoryTotalBytes = size(v) }
        case .gpu_temperature_celsius: if let v { r.gpu.recordedDevice.temperatureCelsius = v }
        case .gpu_power_watts: if let v { r.gpu.recordedDevice.powerWatts = v }
        case .gpu_clock_mhz: if let v { r.gpu.recordedDevice.clockMHz = v }
        case .gpu_throttle_reasons: if let v { r.gpu.recordedDevice.throttleReasons = size(v) }
        case .gpu_unreported_reason: r.gpu.unreportedReason = GPUUnreported.codes.reason(code: v)
        case .net_tx_bytes_per_second: r.net.txBytesPerSecond = v
        case .net_rx_bytes_per_second: r.net.rxBytesPerSecond = v
        case .net_tx_bytes_total: r.net.txBytesTotal = size(v)
        case .net_rx_bytes_total: r.net.rxBytesTotal = size(v)
        case .tcp_connections: r.net.tcpConnections = v
        case .tcp_retransmits_per_second: r.net.tcpRetransmitsPerSecond = v
        case .tcp_retransmits_total: r.net.tcpRetransmitsTotal = size(v)
        case .tcp_connections_opened_total: r.net.tcpConnectionsOpenedTotal = size(v)
        case .tcp_connections_opened_per_second: r.net.tcpConnectionsOpenedPerSecond = v
        case .tcp_retransmit_percent: r.net.tcpRetransmitPercent = v
        case .tcp_rtt_ms: r.net.tcpRTTms = v
        case .net_source: r.net.source = NetworkSource.codes.reason(code: v)
        case .net_unreported_reason: r.net.unreportedReason = NetworkUnreported.codes.reason(code: v)
        case .memory_limit_bytes: r.memoryLimitBytes = size(v)
        case .rss_sum_bytes: r.residentSumBytes = size(v)
        case .cpu_limit_cores: r.cpuLimitCores = v
        case .group_memory_bytes: r.groupMemoryBytes = size(v)
        case .group_working_set_bytes: r.groupWorkingSetBytes = size(v)
        case .group_anon_bytes: r.groupAnonBytes = size(v)
        case .group_file_bytes: r.groupFileBytes = size(v)
        case .group_kernel_bytes: r.groupKernelBytes = size(v)
        case .pss_age_seconds: r.proportionalAgeSeconds = v
        case .memory_unreported_reason: r.memoryUnreportedReason = MemoryUnreported.codes.reason(code: v)
        case .oom_kills: r.oomKills = size(v)
        case .oom_killed: r.oomKilled = v == 1
        // Not recorded: derived on reading (`DerivedFigure`), or kept by the recording its own way.
        case .cpu_machine_percent, .fps_1pct_low: break
        // gpu_name: a leading column of its own, written when it changes (as the command name).
        case .high_frequency_actions, .phase, .events_rejected_by_reason, .frame_source, .command, .busiest_threads, .gpu_name, .exit: break
        }
    }

    /// Every field of a tick row, in the row's order, named by its JSON key (a contract: never
    /// renamed). A new case needs its entry, its read and its write (switches without a default).
    public enum Field: String, CaseIterable, Sendable {
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
        case rss_trend_r2, leak_suspected, oom_score
        case gpu_percent, gpu_memory_bytes, gpu_memory_busy_percent, gpu_encoder_percent, gpu_decoder_percent, gpu_name
        case gpu_device_percent, gpu_device_memory_used_bytes, gpu_device_memory_total_bytes, gpu_temperature_celsius
        case gpu_power_watts, gpu_clock_mhz, gpu_throttle_reasons, gpu_unreported_reason
        case net_tx_bytes_per_second, net_rx_bytes_per_second, net_tx_bytes_total, net_rx_bytes_total, tcp_connections
        case tcp_retransmits_per_second, tcp_retransmits_total, tcp_retransmit_percent, tcp_rtt_ms, net_source, net_unreported_reason
        case memory_limit_bytes, rss_sum_bytes, pss_age_seconds, memory_unreported_reason, oom_kills, oom_killed
        case tcp_connections_opened_total, tcp_connections_opened_per_second
        case cpu_limit_cores, group_memory_bytes, group_working_set_bytes, group_anon_bytes, group_file_bytes, group_kernel_bytes, exit
    }
    private static let noFigures = TargetFigures(wallSeconds: 0, elapsedSeconds: 0, pid: 0, alive: false, processCount: 0)

    /// The value of a stored column (as `BatchedInsert.Column` wrote it).
    package func value(stored integer: Int64?, real: Double?) -> Double? {
        switch storage {
        case .fixed(let scale): return integer.map { Double($0) / scale }
        case .integer: return integer.map { Double($0) }
        case .real: return real
        case .derived: return nil
        }
    }

    /// The SQL expression of the `samples` view that gives the figure in its unit.
    package var viewExpression: String? {
        guard let column else { return nil }
        // A reason recorded as a code: its text.
        switch field {
        case .frames_unreported_reason: return FramesUnreported.codes.sqlText(of: column)
        case .gpu_unreported_reason: return GPUUnreported.codes.sqlText(of: column)
        case .net_source: return NetworkSource.codes.sqlText(of: column)
        case .net_unreported_reason: return NetworkUnreported.codes.sqlText(of: column)
        case .memory_unreported_reason: return MemoryUnreported.codes.sqlText(of: column)
        default: break
        }
        if case .fixed(let scale) = storage { return "\(column) / \(RowFormatter.number(scale, decimals: 0)).0" }
        return column
    }
}

extension TargetFigures {
    /// The figure `shownMemory` is (`Mem`/`RSS` beside the CPU): a group's working set where
    /// the target is a whole control group, else `rss_bytes` (which is a tree's or a group's PSS
    /// sum): what an `--alert` on the shown memory names, for the HUD and the bars alike.
    public var shownMemoryField: Figure.Field { groupWorkingSetBytes != nil ? .group_working_set_bytes : .rss_bytes }
}
