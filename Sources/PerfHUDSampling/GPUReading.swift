/// What the GPU thread (`GPUMonitor`) read at its last pass: the devices, and each GPU client's
/// use over the second before. A value published whole; the ticks attribute it to their targets
/// (`figures(of:)`) and never wait for a read.
public struct GPUReading {
    /// When the pass ended (CLOCK_MONOTONIC nanoseconds).
    public var readAt: UInt64 = 0
    /// Counts the passes: a tick attributes a reading once (`GPUWatch`).
    public var sequence: UInt64 = 0
    public var devices: [GPUDevice] = []
    public var clients: [GPUClient] = []
    /// Why nothing at all is known ("no GPU driver", "no permission (NVML)", …); nil when read.
    public var unreported: String?
    /// Why the devices answer but not per process (MIG, a PID namespace); memory may still be known.
    public var perProcessUnreported: String?
    /// One NVML process list refused, the other answered (`GPUUnreported.computeListRefused`):
    /// a target on the answer is read from it and told so; one not on it is unknown, not idle.
    public var refusedList: String?

    public init() {}

    /// One GPU client: an NVML process on a device, or a DRM client (one open of a device, by
    /// `drm-pdev` and `drm-client-id`, whichever processes hold it). Percentages of the device's
    /// time over the last read; nil where the driver does not say.
    public struct GPUClient: Equatable {
        /// Which processes hold it (host PIDs, as perfhud's /proc shows them).
        public var pids: [Int32]
        /// Its device in `devices`.
        public var device: Int
        public var busyPercent: Double?
        public var memoryBusyPercent: Double?
        public var encoderPercent: Double?
        public var decoderPercent: Double?
        public var memoryBytes: UInt64?

        public init(pids: [Int32], device: Int, busyPercent: Double? = nil, memoryBusyPercent: Double? = nil,
                    encoderPercent: Double? = nil, decoderPercent: Double? = nil, memoryBytes: UInt64? = nil) {
            self.pids = pids; self.device = device; self.busyPercent = busyPercent; self.memoryBusyPercent = memoryBusyPercent
            self.encoderPercent = encoderPercent; self.decoderPercent = decoderPercent; self.memoryBytes = memoryBytes
        }
    }

    /// The target's GPU figures: the clients any of `pids` holds, each counted once, summed (100 % =
    /// one GPU fully busy); the device it uses most (by memory, then busy share), else the first.
    /// A GPU that is there with the target not on it is a measured 0.
    public func figures(of pids: [Int32]) -> GPUFigures {
        var figures = GPUFigures()
        if let unreported { figures.unreportedReason = unreported; return figures }
        guard !devices.isEmpty else { figures.unreportedReason = GPUUnreported.noDevice; return figures }
        var usedMost: (device: Int, weight: Double)?
        var busy = 0.0, memoryBusy = 0.0, encoder = 0.0, decoder = 0.0, memory: UInt64 = 0
        var busyKnown = true, memoryBusyKnown = true, encoderKnown = true, decoderKnown = true, memoryKnown = true
        for client in clients where client.pids.contains(where: pids.contains) {
            if let value = client.busyPercent { busy += value } else { busyKnown = false }
            if let value = client.memoryBusyPercent { memoryBusy += value } else { memoryBusyKnown = false }
            if let value = client.encoderPercent { encoder += value } else { encoderKnown = false }
            if let value = client.decoderPercent { decoder += value } else { decoderKnown = false }
            if let value = client.memoryBytes { memory &+= value } else { memoryKnown = false }
            let weight = Double(client.memoryBytes ?? 0) + (client.busyPercent ?? 0)
            if usedMost == nil || weight > usedMost!.weight { usedMost = (client.device, weight) }
        }
        // Not on the list that answered: maybe on the refused one (NVML_ERROR_NO_PERMISSION).
        let missed = perProcessUnreported == nil && refusedList != nil && usedMost == nil
        let perProcess = perProcessUnreported == nil && !missed
        figures.busyPercent = perProcess && busyKnown ? busy.atResolution(10) : nil
        figures.memoryBusyPercent = perProcess && memoryBusyKnown ? memoryBusy.atResolution(10) : nil
        figures.encoderPercent = perProcess && encoderKnown ? encoder.atResolution(10) : nil
        figures.decoderPercent = perProcess && decoderKnown ? decoder.atResolution(10) : nil
        // Both lists refused: no process's memory is known (MIG's is: its lists answer).
        let listsRefused = perProcessUnreported == GPUUnreported.noPermissionForProcesses
        figures.memoryBytes = memoryKnown && !missed && !listsRefused ? memory : nil
        figures.unreportedReason = perProcessUnreported ?? (missed ? GPUUnreported.noPermissionForProcesses : refusedList)
        let index = usedMost?.device ?? 0
        if devices.indices.contains(index) { figures.device = devices[index] }
        return figures
    }
}

/// One GPU as its driver describes it; nil where the driver does not say.
public struct GPUDevice: Equatable, Sendable {
    public var name: String
    /// NVML's UUID (`GPU-…`), or the DRM device's PCI address.
    public var id: String
    public var busyPercent: Double?
    public var memoryUsedBytes: UInt64?
    public var memoryTotalBytes: UInt64?
    public var temperatureCelsius: Double?
    public var powerWatts: Double?
    public var clockMHz: Double?
    /// NVML's clock event reasons (a bit set: `GPUText.throttleBits` names them), 0 when none.
    public var throttleReasons: UInt64?

    public init(name: String, id: String) { self.name = name; self.id = id }
}
