import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// NVIDIA GPUs through NVML (`nvml.c` loads the library at run time): each device's figures and
/// each process's device memory and busy shares. Used by the GPU thread only.
///
/// Per-process busy shares come from `nvmlDeviceGetProcessUtilization`: samples since the last
/// timestamp seen, about one a second per process while it uses the GPU. A process with no new
/// sample is absent: its last share holds for `holdNanoseconds`, then it reads a measured 0 while
/// it still holds device memory (an idle GPU produces no samples). Samples over 100 % or not newer
/// than the last are dropped.
final class NVMLReader {
    /// Why NVML cannot be read, or nil when it answers.
    package private(set) var unreported: String?
    private var lastSeen: [UInt64] = []
    private var held: [Key: (at: UInt64, sample: perfhud_nvml_sample)] = [:]
    private var processes = [perfhud_nvml_process](repeating: perfhud_nvml_process(), count: 1024)
    private var samples = [perfhud_nvml_sample](repeating: perfhud_nvml_sample(), count: 1024)
    static let holdNanoseconds: UInt64 = 3_000_000_000

    private struct Key: Hashable { let device: Int; let pid: UInt32 }

    /// Whether libnvidia-ml.so.1 can be loaded (it stays loaded: the GPU thread opens it next).
    static var libraryExists: Bool { dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL) != nil }

    /// Loads NVML; nil when there is no NVIDIA driver library at all.
    package init?() {
        let status = perfhud_nvml_open()
        if status == PERFHUD_NVML_NO_LIBRARY { return nil }
        if status != 0 { unreported = Self.reason(status) }
        lastSeen = Array(repeating: 0, count: Int(perfhud_nvml_device_count()))
    }

    /// NVML's return codes as a user reads them.
    package static func reason(_ status: Int32) -> String {
        switch status {
        case 4: return GPUUnreported.noPermission
        case 9: return GPUUnreported.driverNotLoaded
        case 12: return GPUUnreported.noDriver
        case 15: return GPUUnreported.lost
        case 18: return GPUUnreported.versionMismatch
        default: return GPUUnreported.otherError
        }
    }

    /// Reads every device and its processes into `reading` (appending to its devices and clients).
    package func read(into reading: inout GPUReading, now: UInt64) {
        guard unreported == nil else { return }
        var migDevices = 0
        for index in 0..<lastSeen.count {
            var raw = perfhud_nvml_device_reading()
            perfhud_nvml_read_device(UInt32(index), &raw)
            var device = GPUDevice(name: Self.text(raw.name) ?? "NVIDIA GPU \(index)", id: Self.text(raw.uuid) ?? "nvidia\(index)")
            if raw.utilization_status == 0 { device.busyPercent = Double(raw.gpu_percent) }
            if raw.memory_status == 0 { device.memoryUsedBytes = raw.memory_used; device.memoryTotalBytes = raw.memory_total }
            if raw.temperature_status == 0 { device.temperatureCelsius = Double(raw.temperature) }
            if raw.power_status == 0 { device.powerWatts = (Double(raw.power_milliwatts) / 1000).atResolution(1000) }
            if raw.clock_status == 0 { device.clockMHz = Double(raw.clock_mhz) }
            if raw.reasons_status == 0 { device.throttleReasons = raw.reasons }
            let mig = raw.mig_status == 0 && raw.mig != 0
            if mig { migDevices += 1 }
            let deviceIndex = reading.devices.count
            reading.devices.append(device)
            readProcesses(device: index, as: deviceIndex, mig: mig, into: &reading, now: now)
        }
        if migDevices > 0 { reading.perProcessUnreported = GPUUnreported.mig }
        // NVML lists host PIDs: perfhud's own are those only in the host's PID namespace (a target in
        // a container is seen there by its host PID too). Inside one, none would match: say so.
        if !Self.inInitialPIDNamespace { reading.perProcessUnreported = GPUUnreported.pidNamespace }
    }

    private func readProcesses(device index: Int, as deviceIndex: Int, mig: Bool, into reading: inout GPUReading, now: UInt64) {
        var written: UInt32 = 0
        var statuses: (Int32, Int32) = (0, 0)
        let listed = withUnsafeMutablePointer(to: &statuses) { pair in
            pair.withMemoryRebound(to: Int32.self, capacity: 2) { perfhud_nvml_processes(UInt32(index), &processes, UInt32(processes.count), &written, $0) }
        }
        if listed == 4 && reading.perProcessUnreported == nil { reading.perProcessUnreported = GPUUnreported.noPermissionForProcesses }
        // One list refused, the other answered: a process missing from the answer may be on the
        // refused one (a CUDA program's memory is on the compute list alone), not idle.
        if listed == 0 && reading.refusedList == nil {
            if statuses.0 == 4 { reading.refusedList = GPUUnreported.computeListRefused }
            else if statuses.1 == 4 { reading.refusedList = GPUUnreported.graphicsListRefused }
        }
        // New samples: the newest timestamp seen is where the next call starts.
        var count: UInt32 = 0
        let sampled = mig ? 3 : perfhud_nvml_samples(UInt32(index), lastSeen[index], &samples, UInt32(samples.count), &count)
        var fresh: [UInt32: (sum: perfhud_nvml_sample, count: UInt32)] = [:]
        // The first call (since 0) gets what NVML kept, maybe from long ago: only the last seconds count.
        let recent = UInt64(max(0, wallClockSeconds() * 1e6 - Double(Self.holdNanoseconds / 1000)))
        for sample in samples.prefix(Int(count)) where sample.timestamp > max(lastSeen[index], recent) {
            guard sample.sm <= 100, sample.memory <= 100, sample.encoder <= 100, sample.decoder <= 100 else { continue }
            var entry = fresh[sample.pid] ?? (perfhud_nvml_sample(), 0)
            entry.sum.sm += sample.sm; entry.sum.memory += sample.memory
            entry.sum.encoder += sample.encoder; entry.sum.decoder += sample.decoder
            entry.count += 1
            fresh[sample.pid] = entry
        }
        if let newest = samples.prefix(Int(count)).map(\.timestamp).max() { lastSeen[index] = max(lastSeen[index], newest) }
        for (pid, entry) in fresh {
            var mean = entry.sum
            mean.sm /= entry.count; mean.memory /= entry.count; mean.encoder /= entry.count; mean.decoder /= entry.count
            held[Key(device: index, pid: pid)] = (now, mean)
        }
        // Samples are known (a list, or NOT_FOUND: none new) or not (missing call, an error, MIG).
        let samplesKnown = sampled == 0 || sampled == 6
        var memoryOf: [UInt32: UInt64?] = [:]
        for process in processes.prefix(Int(written)) {
            // NVML_VALUE_NOT_AVAILABLE (all ones): unknown. A process in both lists: its larger figure.
            let memory: UInt64? = process.memory == UInt64.max ? nil : process.memory
            if let existing = memoryOf[process.pid] { memoryOf[process.pid] = max(existing ?? 0, memory ?? 0) } else { memoryOf[process.pid] = memory }
        }
        // A process with a sample but off the lists (graphics on a driver that lists none) still counts.
        for key in held.keys where key.device == index && memoryOf[key.pid] == nil && now - held[key]!.at < Self.holdNanoseconds {
            memoryOf[key.pid] = .some(nil)
        }
        for (pid, memory) in memoryOf {
            var client = GPUReading.GPUClient(pids: [Int32(bitPattern: pid)], device: deviceIndex, memoryBytes: memory)
            if samplesKnown {
                let key = Key(device: index, pid: pid)
                if let last = held[key], now - last.at < Self.holdNanoseconds {
                    client.busyPercent = Double(last.sample.sm); client.memoryBusyPercent = Double(last.sample.memory)
                    client.encoderPercent = Double(last.sample.encoder); client.decoderPercent = Double(last.sample.decoder)
                } else {
                    client.busyPercent = 0; client.memoryBusyPercent = 0; client.encoderPercent = 0; client.decoderPercent = 0
                }
            }
            reading.clients.append(client)
        }
        held = held.filter { now - $0.value.at < Self.holdNanoseconds }
    }

    /// The initial PID namespace's inode number is fixed (PROC_PID_INIT_INO).
    private static let inInitialPIDNamespace: Bool = {
        var status = stat()
        return stat("/proc/self/ns/pid", &status) != 0 || status.st_ino == 0xEFFF_FFFC
    }()

    private static func text<T>(_ tuple: T) -> String? {
        withUnsafeBytes(of: tuple) { bytes in
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            let text = String(decoding: bytes[..<end], as: UTF8.self)
            return text.isEmpty ? nil : TerminalText.escaped(text)
        }
    }
}
