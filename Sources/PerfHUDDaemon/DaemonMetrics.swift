import PerfHUDCore
import Prometheus
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's Prometheus metrics, held in a swift-prometheus registry.
///
/// The sampling thread updates them once a tick (`update`); frames go into the histogram as they
/// arrive (`recordFrame`, on the event thread); scrapes read the registry (`exposition`). The
/// registry is thread-safe. Counters that mirror a cumulative figure (CPU seconds, frames, events)
/// are advanced by the difference since the last tick, so they only go up.
public final class DaemonMetrics: @unchecked Sendable {
    public let registry = PrometheusCollectorRegistry()
    /// Frame budgets of 240, 144, 120, 60 and 30 Hz displays, then 100 ms and 700 ms stalls.
    public static let frameBuckets: [Double] = [1.0 / 240, 1.0 / 144, 1.0 / 120, 1.0 / 60, 1.0 / 30, 0.1, 0.7]

    private let up: Gauge
    private let cpuUser: Counter
    private let cpuSystem: Counter
    /// The gauges of `Figure.all`'s figures the daemon exports, by metric name (present while known).
    private var figureGauges: [String: Gauge] = [:]
    /// The counters of `Figure.all`'s cumulative figures, by metric name.
    private var figureCounters: [String: Counter] = [:]
    private var startTime: Gauge?
    private var info: (gauge: Gauge, key: String)?
    private var phase = InfoGauge(name: "perfhud_phase_info", label: "phase", help: "The last phase the program reported.")
    /// Which source the frame metrics count (`events`, `gl`, `vulkan`, `tty`): an info gauge, not a
    /// label on the frame counters, which a change of source would split.
    private var frameSource = InfoGauge(name: "perfhud_frame_source_info", label: "source",
                                        help: "Where the frames counted come from: events, gl, vulkan or tty.")
    private let frameDuration: WeightedHistogram
    private var rejected: [String: Counter] = [:]
    private var actions: [String: Counter] = [:]
    private var highFrequency: [String: Gauge] = [:]
    private let sampleDuration: Gauge
    private let droppedLog: Counter
    private let droppedNotify: Counter
    private let processCPU: Counter
    private let processResident: Gauge
    private let processVirtual: Gauge
    private let processStart: Gauge
    private let processOpenFiles: Gauge
    private let processMaxFiles: Gauge
    /// The cumulative values last mirrored into counters, by metric (sampling thread only).
    private var mirrored: [String: Double] = [:]
    /// The process CPU mirror is advanced by scrapes, which may run concurrently.
    private let processLock = Mutex()
    private var processCPUMirrored = 0.0

    public init() {
        up = registry.makeGauge(name: "perfhud_target_up", help: "Whether the watched target is running and readable (1) or not (0).")
        cpuUser = registry.makeCounter(name: "perfhud_target_cpu_seconds_total", labels: [("mode", "user")],
                                       help: "CPU time of the target (and its descendants with --include-children), by mode.")
        cpuSystem = registry.makeCounter(name: "perfhud_target_cpu_seconds_total", labels: [("mode", "system")],
                                         help: "CPU time of the target (and its descendants with --include-children), by mode.")
        for figure in Figure.all {
            guard let metric = figure.metric, metric.kind == .counter else { continue }
            figureCounters[metric.name] = registry.makeCounter(name: metric.name, help: metric.help)
        }
        frameDuration = WeightedHistogram(name: "perfhud_frame_duration_seconds",
                                          help: "Durations of the frames the program reported (weighted by 1 / sample rate).",
                                          bounds: Self.frameBuckets)
        for reason in ["peer", "no_credentials", "truncated"] {
            rejected[reason] = registry.makeCounter(name: "perfhud_events_rejected_total", labels: [("reason", reason)],
                                                    help: "Datagrams rejected, by reason.")
        }
        droppedLog = registry.makeCounter(name: "perfhud_output_dropped_total", labels: [("destination", "log")],
                                          help: "Writes perfhud dropped rather than wait for a reader that is not keeping up, by destination.")
        droppedNotify = registry.makeCounter(name: "perfhud_output_dropped_total", labels: [("destination", "systemd_notify")],
                                             help: "Writes perfhud dropped rather than wait for a reader that is not keeping up, by destination.")
        sampleDuration = registry.makeGauge(name: "perfhud_sample_duration_seconds", help: "perfhud's own cost of its last sample (wall time).")
        processCPU = registry.makeCounter(name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.")
        processResident = registry.makeGauge(name: "process_resident_memory_bytes", help: "Resident memory size in bytes.")
        processVirtual = registry.makeGauge(name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.")
        processStart = registry.makeGauge(name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")
        processOpenFiles = registry.makeGauge(name: "process_open_fds", help: "Number of open file descriptors.")
        processMaxFiles = registry.makeGauge(name: "process_max_fds", help: "Maximum number of open file descriptors.")
        // From /proc/self/stat's start time (clock ticks after boot) and the boot time.
        if let stat = ProcParser.stat(ofProcess: "self"), let boot = ProcessDirectory.bootTime {
            processStart.set(to: boot + Double(stat.startTicks) / Double(ProcessDirectory.ticksPerSecond))
        }
    }

    /// One frame of `seconds`, weighted by its sample rate (`weight` = 1 / rate).
    public func recordFrame(seconds: Double, weight: Double) {
        frameDuration.record(seconds, weight: weight)
    }

    /// What the target looks like now (nil: not running).
    public struct Target {
        public var sample: Sample
        /// The figures of the tick (`Figure.all` names the ones exported as gauges).
        public var report: Report
        public var commandName: String
        public var pid: Int32
        public var startTimeSeconds: Double?
        public var ticksPerSecond: Double
        public init(sample: Sample, report: Report, commandName: String, pid: Int32, startTimeSeconds: Double?, ticksPerSecond: Double) {
            self.sample = sample
            self.report = report
            self.commandName = commandName
            self.pid = pid
            self.startTimeSeconds = startTimeSeconds
            self.ticksPerSecond = ticksPerSecond
        }
    }

    /// Mirrors one tick's figures into the registry. Called from the sampling thread only.
    public func update(target: Target?, events: EventSnapshot, actionTotals: [(label: String, total: Double)], sampleSeconds: Double,
                       droppedWrites: (log: Int, notify: Int) = (0, 0)) {
        up.set(to: target == nil ? 0 : 1)
        if let target {
            advance(cpuUser, "cpu_user", to: Double(target.sample.userTicks ?? 0) / target.ticksPerSecond)
            advance(cpuSystem, "cpu_system", to: Double(target.sample.systemTicks ?? 0) / target.ticksPerSecond)
            for figure in Figure.all where figure.source == .report {
                guard let metric = figure.metric, metric.kind == .gauge else { continue }
                set(&figureGauges[metric.name], metric.name, metric.help, figure.value(in: target.report, events).map { $0 * metric.scale })
            }
            set(&startTime, "perfhud_target_start_time_seconds", "When the target started, seconds since the epoch.", target.startTimeSeconds)
            let key = target.commandName + "\u{0}" + String(target.pid)
            if info?.key != key {
                if let old = info { registry.unregisterGauge(old.gauge) }
                let gauge = registry.makeGauge(name: "perfhud_target_info", labels: [("comm", target.commandName), ("pid", String(target.pid))],
                                               help: "The watched target: its command name and (first) PID.")
                gauge.set(to: 1)
                info = (gauge, key)
            }
        } else {
            for gauge in Array(figureGauges.values) + [startTime].compactMap({ $0 }) { registry.unregisterGauge(gauge) }
            figureGauges = [:]; startTime = nil
            if let old = info { registry.unregisterGauge(old.gauge); info = nil }
        }
        for figure in Figure.all where figure.source == .events {
            guard let metric = figure.metric, metric.kind == .counter, let counter = figureCounters[metric.name],
                  let value = figure.value(in: target?.report, events) else { continue }
            advance(counter, metric.name, to: value)
        }
        for (reason, counter) in rejected { advance(counter, "rejected:" + reason, to: Double(events.rejected[reason] ?? 0)) }
        for (label, total) in actionTotals {
            let counter = actions[label] ?? {
                let made = registry.makeCounter(name: "perfhud_actions_total", labels: [("action", label)],
                                                help: "Actions the program dispatched, by label (at most --max-action-labels, then __other__).")
                actions[label] = made
                return made
            }()
            advance(counter, "action:" + label, to: total)
        }
        var listed = Set<String>()
        for action in events.highFrequencyActions {
            listed.insert(action.action)
            let gauge = highFrequency[action.action] ?? {
                let made = registry.makeGauge(name: "perfhud_high_frequency_action_rate", labels: [("action", action.action)],
                                              help: "Per-second rate of actions flagged high-frequency (listed 10 s after).")
                highFrequency[action.action] = made
                return made
            }()
            gauge.set(to: action.rate)
        }
        for (label, gauge) in highFrequency where !listed.contains(label) {
            registry.unregisterGauge(gauge)
            highFrequency[label] = nil
        }
        phase.follow(events.phase, in: registry)
        frameSource.follow(events.frameSource?.rawValue, in: registry)
        sampleDuration.set(to: sampleSeconds)
        advance(droppedLog, "dropped:log", to: Double(droppedWrites.log))
        advance(droppedNotify, "dropped:notify", to: Double(droppedWrites.notify))
    }

    private func advance(_ counter: Counter, _ key: String, to value: Double) {
        let previous = mirrored[key] ?? 0
        if value > previous { counter.increment(by: value - previous) }
        mirrored[key] = max(previous, value)
    }

    /// A gauge that exists only while its value is known (absent, never 0, when unknown).
    private func set(_ gauge: inout Gauge?, _ name: String, _ help: String, _ value: Double?) {
        guard let value else {
            if let existing = gauge { registry.unregisterGauge(existing); gauge = nil }
            return
        }
        if gauge == nil { gauge = registry.makeGauge(name: name, help: help) }
        gauge!.set(to: value)
    }

    /// The standard process_* metrics, of perfhud itself: read when scraped, not every tick (a
    /// few system calls nobody needs between scrapes). Called on the HTTP thread.
    private func updateProcess() {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        processLock.withLock {
            if cpu > processCPUMirrored { processCPU.increment(by: cpu - processCPUMirrored); processCPUMirrored = cpu }
        }
        if case .success(let file) = KeptOpenFile.open("/proc/self/statm") {
            if let statm = file.readStatm() {
                processResident.set(to: Double(statm.residentPages * ProcessDirectory.pageSize))
                processVirtual.set(to: Double(statm.sizePages * ProcessDirectory.pageSize))
            }
            file.close()
        }
        var open = 0
        if let directory = opendir("/proc/self/fd") {
            while readdir(directory) != nil { open += 1 }
            closedir(directory)
        }
        processOpenFiles.set(to: Double(max(0, open - 3)))   // ".", ".." and the directory itself
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { processMaxFiles.set(to: Double(limit.rlim_cur)) }
    }

    /// The text exposition of everything registered.
    public func exposition() -> [UInt8] {
        updateProcess()
        var buffer = registry.emitToBuffer()
        frameDuration.emit(into: &buffer)
        return buffer
    }
}

/// A gauge of value 1 whose one label says the current value of something (`perfhud_phase_info`):
/// a new value replaces the series, none removes it.
struct InfoGauge {
    let name: String
    let label: String
    let help: String
    private var current: (gauge: Gauge, value: String)?

    init(name: String, label: String, help: String) {
        self.name = name
        self.label = label
        self.help = help
    }

    mutating func follow(_ value: String?, in registry: PrometheusCollectorRegistry) {
        guard current?.value != value else { return }
        if let old = current { registry.unregisterGauge(old.gauge); current = nil }
        guard let value else { return }
        let gauge = registry.makeGauge(name: name, labels: [(label, value)], help: help)
        gauge.set(to: 1)
        current = (gauge, value)
    }
}
