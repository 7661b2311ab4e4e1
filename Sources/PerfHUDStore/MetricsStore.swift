import PerfHUDSupport
import PerfHUDSampling

/// Takes samples in, keeps the live history, and derives each report from the sample and the one
/// before (the watcher calls it once a tick; replay builds its own history from the recording).
public struct MetricsStore {
    public private(set) var series: TimeSeries
    public private(set) var latest: TargetFigures?
    /// The target's PID the figures name: the daemon's follows its target's root as it restarts.
    public var pid: Int32
    public let startNanoseconds: UInt64
    private var previous: Sample?
    private let onlineCPUs: Double
    private let ticksPerSecond: Double
    /// Window of the user/system split: stat ticks have 10 ms resolution, so they need seconds.
    public static let splitWindowSeconds = 2.0
    public static let trendWindowSeconds = 10.0
    private var leak: LeakTrend
    /// The last once-a-second read of the "why" figures, and the rates derived from it (held
    /// until the next one).
    private var lastSlow: Activity.EverySecond?
    /// The run-queue delay at its last read, and the rate derived from it (held until the next).
    private var lastWait: (at: UInt64, nanoseconds: UInt64)?
    private var waitPercent: Double?
    private var slowRates = SlowRates()
    private struct SlowRates {
        var voluntary: Double?, involuntary: Double?, throttled: Double?
        var pressure = PressurePercents()
    }

    /// - Parameters:
    ///   - capacity: samples kept, `--history / --tick`.
    public init(pid: Int32, capacity: Int, startNanoseconds: UInt64,
                onlineCPUs: Int = ProcessDirectory.onlineCPUs,
                ticksPerSecond: UInt64 = ProcessDirectory.ticksPerSecond, leak: LeakTrend.Settings = LeakTrend.Settings()) {
        self.leak = LeakTrend(settings: leak)
        self.pid = pid
        series = TimeSeries(capacity: max(2, capacity))
        self.startNanoseconds = startNanoseconds
        self.onlineCPUs = Double(max(1, onlineCPUs))
        self.ticksPerSecond = Double(ticksPerSecond)
    }

    /// Takes `sample` into the history and returns the report derived from it.
    @discardableResult
    public mutating func record(_ sample: Sample, phase: Int? = nil) -> TargetFigures {
        let time = Double(sample.monotonicNanoseconds &- startNanoseconds) / 1e9
        // Elapsed time at the millisecond a recording keeps it at, so durations derived live (the
        // summary's) and from the recording (`report`'s) are the same numbers.
        var report = TargetFigures(wallSeconds: sample.wallSeconds, elapsedSeconds: time.atResolution(1000), pid: pid, alive: sample.alive,
                            residentBytes: sample.countsProcessesOnce ? sample.proportionalBytes : sample.residentBytes,
                            proportionalBytes: sample.proportionalBytes,
                            virtualBytes: sample.virtualBytes, threads: sample.threads,
                            processCount: sample.processCount,
                            cpuSecondsTotal: sample.cpuNanoseconds.map { (Double($0) / 1e9).atResolution(1e6) })
        report.stopped = sample.stopped
        report.residentSumBytes = sample.residentBytes
        if sample.proportionalBytes != nil, let readAt = sample.proportionalReadAt {
            report.proportionalAgeSeconds = (Double(sample.monotonicNanoseconds &- min(readAt, sample.monotonicNanoseconds)) / 1e9).atResolution(1000)
        }
        report.memoryUnreportedReason = sample.proportionalBytes == nil ? sample.memoryUnreportedReason : nil
        report.gpuBox = sample.gpu
        report.netBox = sample.net
        report.memoryLimitBytes = sample.alive ? sample.memoryLimitBytes : nil
        report.cpuLimitCores = sample.alive ? sample.cpuLimitCores : nil
        if sample.alive, let group = sample.groupMemory {
            (report.groupMemoryBytes, report.groupWorkingSetBytes) = (group.usedBytes, group.workingSetBytes)
            (report.groupAnonBytes, report.groupFileBytes, report.groupKernelBytes) = (group.anonBytes, group.fileBytes, group.kernelBytes)
        }
        report.oomKills = sample.oomKills
        if sample.endedByOOMKill {
            // Ended as its group's OOM killer killed: the limit it ran out of is the last one read.
            report.oomKilled = true
            report.memoryLimitBytes = sample.memoryLimitBytes ?? previous?.memoryLimitBytes
        }
        // The window: since the sample before; for the first, since the process started (all the
        // CPU it has spent was spent since then), so that `--count 1` has a figure.
        let windowStart = previous.map { ($0.monotonicNanoseconds, $0.cpuNanoseconds) }
            ?? sample.processStartNanoseconds.map { ($0, UInt64?.some(0)) }
        if sample.alive, let (startNanoseconds, cpuBefore) = windowStart, let cpuBefore, let cpuNow = sample.cpuNanoseconds,
           sample.monotonicNanoseconds > startNanoseconds {
            let wall = Double(sample.monotonicNanoseconds - startNanoseconds)
            let percent = Double(cpuNow >= cpuBefore ? cpuNow - cpuBefore : 0) / wall * 100
            // At the resolution they are recorded at (see `Resolution`).
            report.cpuPercent = percent.atResolution(100)
            report.cpuMachinePercent = DerivedFigure.machinePercent(report.cpuPercent, onlineCPUs: onlineCPUs)
        }
        if !sample.alive {
            // The total spent stays known after the end (a dead process's files read nothing).
            if report.cpuSecondsTotal == nil, let last = previous?.cpuNanoseconds { report.cpuSecondsTotal = (Double(last) / 1e9).atResolution(1e6) }
            report.residentBytes = nil; report.proportionalBytes = nil; report.virtualBytes = nil; report.threads = nil
            report.residentSumBytes = nil; report.proportionalAgeSeconds = nil; report.memoryUnreportedReason = nil
        }
        series.append(time: time, cpuPercent: report.cpuPercent,
                      residentBytes: report.residentBytes.map { Double($0) },
                      proportionalBytes: report.proportionalBytes.map { Double($0) },
                      userTicks: sample.alive ? sample.userTicks.map { Double($0) } : nil,
                      systemTicks: sample.alive ? sample.systemTicks.map { Double($0) } : nil,
                      phase: phase.map { Double($0) })
        if let cpu = report.cpuPercent {
            let (user, system) = split(cpu, at: time)
            (report.cpuUserPercent, report.cpuSystemPercent) = (user.atResolution(100), system.atResolution(100))
        }
        report.residentTrendBytesPerSecond = trend(at: time)?.rounded()
        if let resident = report.residentBytes, let fit = leak.add(time: time, bytes: Double(resident)) {
            report.residentTrendBytesPerHour = fit.bytesPerHour
            report.residentTrendR2 = fit.r2
            report.leakSuspected = fit.suspected
        } else if report.residentBytes != nil {
            report.leakSuspected = false
        }
        if sample.alive, let activity = sample.activity { derive(activity, sample, into: &report) }
        if sample.alive { previous = sample }
        latest = report
        return report
    }

    /// An RSS reading between two samples (the daemon's, every tick between full reads): the leak
    /// trend takes it as it takes each sample's; the rest waits for the next sample.
    public mutating func noteResident(_ bytes: UInt64, at now: UInt64) {
        _ = leak.add(time: Double(now &- startNanoseconds) / 1e9, bytes: Double(bytes))
    }

    /// The "why" rates: per tick from the sample before; the once-a-second ones between two reads.
    private mutating func derive(_ activity: Activity, _ sample: Sample, into report: inout TargetFigures) {
        report.residentAnonBytes = activity.memory?.anonBytes
        report.residentFileBytes = activity.memory?.fileBytes
        report.residentShmemBytes = activity.memory?.shmemBytes
        report.swapBytes = activity.memory?.swapBytes
        // The once-a-second figures as read: one value (a new one needs nothing here).
        report.everySecond = activity.everySecond.levels
        if let before = previous, let old = before.activity, sample.monotonicNanoseconds > before.monotonicNanoseconds {
            let seconds = Double(sample.monotonicNanoseconds - before.monotonicNanoseconds) / 1e9
            func rate(_ now: UInt64?, _ then: UInt64?) -> Double? {
                guard let now, let then else { return nil }
                return (Double(now >= then ? now - then : 0) / seconds).atResolution(100)
            }
            report.minorFaultsPerSecond = rate(activity.minorFaults, old.minorFaults)
            report.majorFaultsPerSecond = rate(activity.majorFaults, old.majorFaults)
            report.ioReadBytesPerSecond = rate(activity.io?.readBytes, old.io?.readBytes)?.rounded()
            report.ioWriteBytesPerSecond = rate(activity.io?.writeBytes, old.io?.writeBytes)?.rounded()
            report.ioReadCharsPerSecond = rate(activity.io?.readChars, old.io?.readChars)?.rounded()
            report.ioWriteCharsPerSecond = rate(activity.io?.writeChars, old.io?.writeChars)?.rounded()
        }
        // Read every tick, or less often for a target with many threads: over the time between two reads.
        if let wait = activity.waitNanoseconds, activity.waitReadAt != lastWait?.at {
            if let old = lastWait, activity.waitReadAt > old.at {
                waitPercent = (Double(wait >= old.nanoseconds ? wait - old.nanoseconds : 0) / Double(activity.waitReadAt - old.at) * 100).atResolution(100)
            }
            lastWait = (activity.waitReadAt, wait)
        } else if activity.waitNanoseconds == nil {
            waitPercent = nil; lastWait = nil
        }
        report.cpuWaitPercent = waitPercent
        if activity.everySecond.readAt != lastSlow?.readAt {
            let slow = activity.everySecond
            if let old = lastSlow, slow.readAt > old.readAt {
                let seconds = Double(slow.readAt - old.readAt) / 1e9
                func rate(_ now: UInt64?, _ then: UInt64?, scale: Double = 1) -> Double? {
                    guard let now, let then else { return nil }
                    return (Double(now >= then ? now - then : 0) / seconds * scale).atResolution(100)
                }
                slowRates.voluntary = rate(slow.voluntarySwitches, old.voluntarySwitches)
                slowRates.involuntary = rate(slow.involuntarySwitches, old.involuntarySwitches)
                slowRates.throttled = rate(slow.throttledNanoseconds, old.throttledNanoseconds, scale: 100 / 1e9)
                // Pressure totals are µs: percent of the wall time.
                let p = slow.pressure, q = old.pressure, percent = 100 / 1e6
                slowRates.pressure.cpuSome = rate(p.cpuSome, q.cpuSome, scale: percent)
                slowRates.pressure.cpuFull = rate(p.cpuFull, q.cpuFull, scale: percent)
                slowRates.pressure.memorySome = rate(p.memorySome, q.memorySome, scale: percent)
                slowRates.pressure.memoryFull = rate(p.memoryFull, q.memoryFull, scale: percent)
                slowRates.pressure.ioSome = rate(p.ioSome, q.ioSome, scale: percent)
                slowRates.pressure.ioFull = rate(p.ioFull, q.ioFull, scale: percent)
            }
            lastSlow = slow
        }
        report.voluntarySwitchesPerSecond = slowRates.voluntary
        report.involuntarySwitchesPerSecond = slowRates.involuntary
        report.cpuThrottledPercent = slowRates.throttled
        report.pressure = slowRates.pressure
    }

    /// Splits `cpu` by the user and system ticks spent over the last two seconds.
    private func split(_ cpu: Double, at time: Double) -> (Double?, Double?) {
        let newest = series.count - 1
        guard let oldest = series.index(atOrBefore: time - Self.splitWindowSeconds) ?? (series.count > 1 ? 0 : nil),
              oldest < newest else { return (nil, nil) }
        let user = series.value(.userTicks, at: newest) - series.value(.userTicks, at: oldest)
        let system = series.value(.systemTicks, at: newest) - series.value(.systemTicks, at: oldest)
        guard user.isFinite, system.isFinite else { return (nil, nil) }
        let ticks = user + system
        if ticks <= 0 { return cpu < 1 ? (cpu, 0) : (nil, nil) }
        return (cpu * user / ticks, cpu * system / ticks)
    }

    /// RSS change per second between now and the newest sample ten seconds ago (or the oldest).
    private func trend(at time: Double) -> Double? {
        let newest = series.count - 1
        let now = series.value(.residentBytes, at: newest)
        guard now.isFinite else { return nil }
        var index = series.index(atOrBefore: time - Self.trendWindowSeconds) ?? 0
        while index < newest && !series.value(.residentBytes, at: index).isFinite { index += 1 }
        let span = series.times[newest] - series.times[index]
        guard index < newest, span >= 1 else { return nil }
        return (now - series.value(.residentBytes, at: index)) / span
    }
}
