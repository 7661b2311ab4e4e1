import PerfHUDSampling

/// The kernel's cumulative counts behind the "why" rate figures, in base units (seconds, switches,
/// faults, bytes): what the daemon exports as counters (`Figure.Metric.Kind.kernelTotal`), so a
/// scrape's `rate()` is the kernel's own rate and no tick's rounding or missed tick adds up.
///
/// Read from a sample's `Activity`: nil where perfhud may not read the file (no series, never 0).
/// The per-thread counts (waiting, context switches) begin when perfhud began watching the thread's
/// process; faults and I/O are the process's since its start; throttling and pressure its control
/// group's since the group's creation.
public enum KernelTotal: Equatable, Sendable {
    case cpuWaitSeconds
    case voluntarySwitches, involuntarySwitches
    case minorFaults, majorFaults
    case ioReadBytes, ioWriteBytes
    case throttledSeconds
    case pressureCPUSomeSeconds, pressureCPUFullSeconds
    case pressureMemorySomeSeconds, pressureMemoryFullSeconds
    case pressureIOSomeSeconds, pressureIOFullSeconds

    public func value(in activity: Activity) -> Double? {
        func seconds(nanoseconds: UInt64?) -> Double? { nanoseconds.map { Double($0) / 1e9 } }
        func seconds(microseconds: UInt64?) -> Double? { microseconds.map { Double($0) / 1e6 } }
        switch self {
        case .cpuWaitSeconds: return seconds(nanoseconds: activity.waitNanoseconds)
        case .voluntarySwitches: return activity.everySecond.voluntarySwitches.map { Double($0) }
        case .involuntarySwitches: return activity.everySecond.involuntarySwitches.map { Double($0) }
        case .minorFaults: return activity.minorFaults.map { Double($0) }
        case .majorFaults: return activity.majorFaults.map { Double($0) }
        case .ioReadBytes: return activity.io.map { Double($0.readBytes) }
        case .ioWriteBytes: return activity.io.map { Double($0.writeBytes) }
        case .throttledSeconds: return seconds(nanoseconds: activity.everySecond.throttledNanoseconds)
        case .pressureCPUSomeSeconds: return seconds(microseconds: activity.everySecond.pressure.cpuSome)
        case .pressureCPUFullSeconds: return seconds(microseconds: activity.everySecond.pressure.cpuFull)
        case .pressureMemorySomeSeconds: return seconds(microseconds: activity.everySecond.pressure.memorySome)
        case .pressureMemoryFullSeconds: return seconds(microseconds: activity.everySecond.pressure.memoryFull)
        case .pressureIOSomeSeconds: return seconds(microseconds: activity.everySecond.pressure.ioSome)
        case .pressureIOFullSeconds: return seconds(microseconds: activity.everySecond.pressure.ioFull)
        }
    }
}
