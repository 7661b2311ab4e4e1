import PerfHUDSupport
import PerfHUDSampling
import PerfHUDStore
import Prometheus
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's Prometheus metrics, held in a swift-prometheus registry: the daemon's own
/// (`process_*`, its cost per sample, dropped writes, refused targets) here, each target's in a
/// `TargetMetrics` labelled `target="NAME"`.
///
/// The sampling thread updates them once a tick; frames go into each target's histogram as they
/// arrive (on the event thread); scrapes read the registry (`exposition`). The registry is
/// thread-safe; the list of histograms has its own lock.
public final class DaemonMetrics: @unchecked Sendable {
    public let registry = PrometheusCollectorRegistry()
    /// Frame budgets of 240, 144, 120, 60 and 30 Hz displays, then 100 ms and 700 ms stalls.
    public static let frameBuckets: [Double] = [1.0 / 240, 1.0 / 144, 1.0 / 120, 1.0 / 60, 1.0 / 30, 0.1, 0.7]

    /// The targets' frame histograms (written by hand, outside the registry: `WeightedHistogram`).
    private var histograms: [ObjectIdentifier: WeightedHistogram] = [:]
    /// Asks the sampling loop to read every figure of every target, and calls back (on the sampling
    /// thread) once it has: a scrape sees the figures of its moment. Set once, before serving.
    public var readEveryFigure: ((@escaping @Sendable () -> Void) -> Void)?
    private let histogramsLock = Mutex()
    private let refused: Counter
    private let sampleDuration: Gauge
    private let descriptorRefusals: Counter
    private let droppedLog: Counter
    private let droppedNotify: Counter
    private let processCPU: Counter
    private let processResident: Gauge
    private let processVirtual: Gauge
    private let processStart: Gauge
    private let processOpenFiles: Gauge
    private let processMaxFiles: Gauge
    /// Each GPU's gauges by UUID, read at the scrape from the GPU thread's last reading.
    private var gpus: [String: [Gauge?]] = [:]
    private let gpusLock = Mutex()
    /// The cumulative values last mirrored into counters, by metric (sampling thread only).
    private var mirrored: [String: Double] = [:]
    /// The process CPU mirror is advanced by scrapes, which may run concurrently.
    private let processLock = Mutex()
    private var processCPUMirrored = 0.0

    public init() {
        refused = registry.counter("perfhud_targets_refused_total",
                                       help: "Targets not watched because --max-targets were watched already.")
        droppedLog = registry.counter("perfhud_output_dropped_total", labels: [("destination", "log")],
                                          help: "Writes perfhud dropped rather than wait for a reader that is not keeping up, by destination.")
        droppedNotify = registry.counter("perfhud_output_dropped_total", labels: [("destination", "systemd_notify")],
                                             help: "Writes perfhud dropped rather than wait for a reader that is not keeping up, by destination.")
        sampleDuration = registry.gauge("perfhud_sample_duration_seconds", help: "perfhud's own cost of its last sample (wall time).")
        descriptorRefusals = registry.counter("perfhud_descriptor_refusals_total",
                                              help: "Files perfhud could not keep open for lack of file descriptors (its limit, or the system's): read on demand, or left out of a figure, with the reason said.")
        processCPU = registry.counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.")
        processResident = registry.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.")
        processVirtual = registry.gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.")
        processStart = registry.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.")
        processOpenFiles = registry.gauge("process_open_fds", help: "Number of open file descriptors.")
        processMaxFiles = registry.gauge("process_max_fds", help: "Maximum number of open file descriptors.")
        // From /proc/self/stat's start time (clock ticks after boot) and the boot time.
        if let stat = ProcParser.stat(ofProcess: "self"), let boot = ProcessDirectory.bootTime {
            processStart.set(to: boot + Double(stat.startTicks) / Double(ProcessDirectory.ticksPerSecond))
        }
    }

    /// A target's series, labelled `target="label"`.
    public func makeTarget(label: String, infoLabels: [(String, String)] = []) -> TargetMetrics {
        let target = TargetMetrics(label: label, infoLabels: infoLabels, registry: registry)
        histogramsLock.withLock { histograms[ObjectIdentifier(target.frameDuration)] = target.frameDuration }
        return target
    }

    /// Takes a target's series away (forgotten, or dropped from the configuration).
    public func remove(_ target: TargetMetrics) {
        target.remove()
        histogramsLock.withLock { histograms[ObjectIdentifier(target.frameDuration)] = nil }
    }

    /// A target refused past `--max-targets`.
    public func targetRefused() { refused.increment() }

    /// What the target looks like now (nil: not running).
    public struct Target {
        public var sample: Sample
        /// The figures of the tick (`Figure.all` names the ones exported as gauges).
        public var figures: TargetFigures
        public var commandName: String
        public var pid: Int32
        public var startTimeSeconds: Double?
        public init(sample: Sample, figures: TargetFigures, commandName: String, pid: Int32, startTimeSeconds: Double?) {
            self.sample = sample
            self.figures = figures
            self.commandName = commandName
            self.pid = pid
            self.startTimeSeconds = startTimeSeconds
        }
    }

    /// The daemon's own figures, once a tick (sampling thread only).
    public func update(sampleSeconds: Double, droppedWrites: (log: Int, notify: Int) = (0, 0)) {
        sampleDuration.set(to: sampleSeconds)
        advance(droppedLog, "dropped:log", to: Double(droppedWrites.log))
        advance(droppedNotify, "dropped:notify", to: Double(droppedWrites.notify))
        advance(descriptorRefusals, "descriptors", to: Double(DescriptorBudget.refusals.value))
    }

    private func advance(_ counter: Counter, _ key: String, to value: Double) {
        let previous = mirrored[key] ?? 0
        if value > previous { counter.increment(by: value - previous) }
        mirrored[key] = max(previous, value)
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

    /// What each per-GPU series is (`updateGPUs`).
    private static let gpuMetrics: [(name: String, help: String, value: @Sendable (GPUDevice) -> Double?)] = [
            ("perfhud_gpu_busy_ratio", "Share of the GPU's time it was busy over the driver's last sample period (NVML utilization.gpu / 100).",
             { $0.busyPercent.map { $0 / 100 } }),
            ("perfhud_gpu_memory_used_bytes", "Device memory in use on the GPU, by every process.", { $0.memoryUsedBytes.map { Double($0) } }),
            ("perfhud_gpu_memory_total_bytes", "Device memory of the GPU.", { $0.memoryTotalBytes.map { Double($0) } }),
            ("perfhud_gpu_temperature_celsius", "The GPU's core temperature.", { $0.temperatureCelsius }),
            ("perfhud_gpu_power_watts", "The GPU's power draw.", { $0.powerWatts }),
    ]

    /// The per-GPU series (`gpu` = its UUID or PCI address, `name`): the device figures of the GPU
    /// thread's last reading; a figure the driver does not give has no series, a stale reading none.
    private func updateGPUs() {
        let devices = GPUMonitor.shared.devices()
        let metrics = Self.gpuMetrics
        gpusLock.withLock {
            var seen = Set<String>()
            for device in devices where !seen.contains(device.id) {
                seen.insert(device.id)
                var gauges = gpus[device.id] ?? Array(repeating: nil, count: metrics.count)
                for (index, metric) in metrics.enumerated() {
                    if let value = metric.value(device) {
                        let gauge = gauges[index] ?? registry.gauge(metric.name, labels: [("gpu", device.id), ("name", device.name)], help: metric.help)
                        gauge.set(to: value)
                        gauges[index] = gauge
                    } else if let gauge = gauges[index] {
                        registry.unregisterGauge(gauge)
                        gauges[index] = nil
                    }
                }
                gpus[device.id] = gauges
            }
            for (id, gauges) in gpus where !seen.contains(id) {
                for gauge in gauges.compactMap({ $0 }) { registry.unregisterGauge(gauge) }
                gpus[id] = nil
            }
        }
    }

    /// The text exposition of everything registered.
    public func exposition() -> [UInt8] {
        updateProcess()
        updateGPUs()
        var buffer = registry.emitToBuffer()
        let frames = histogramsLock.withLock { histograms.values.sorted { $0.labelText < $1.labelText } }
        if let first = frames.first {
            first.emitHeader(into: &buffer)
            for histogram in frames { histogram.emitSamples(into: &buffer) }
        }
        return buffer
    }
}
