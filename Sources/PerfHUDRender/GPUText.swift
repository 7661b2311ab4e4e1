import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline

/// The GPU as the HUD shows it: the status line's `GPU 12% 512 MiB` (the target's share and device
/// memory) and the details line's device, as MangoHud shows one (load, memory used/total,
/// temperature, power, clock, throttling). Pure.
enum GPUText {
    /// The status line's segment; nil on a machine without a GPU (nothing is shown there).
    package static func status(_ gpu: GPUFigures, paint: Palette) -> String? {
        if gpu.unreportedReason == GPUUnreported.stale { return "GPU " + paint.yellow("stale") }
        guard gpu.device != nil else { return nil }
        var text = "GPU"
        if let busy = gpu.busyPercent { text += " " + paint.threshold(busy, warn: 50, alarm: 90, Units.compactPercent(busy) + "%") }
        if let memory = gpu.memoryBytes { text += " " + Units.bytes(Double(memory)) }
        if gpu.busyPercent == nil && gpu.memoryBytes == nil { text += " " + paint.dim("n/a") }
        return text
    }

    /// The details line's field for the device the target uses; nil without one.
    package static func device(_ gpu: GPUFigures, paint: Palette) -> String? {
        guard let device = gpu.device else { return nil }
        var parts = ["gpu " + TerminalText.escaped(shortName(device.name), maxLength: 24)]
        if let busy = device.busyPercent { parts.append(Units.percent(busy)) }
        if let used = device.memoryUsedBytes, let total = device.memoryTotalBytes, total > 0 {
            let text = Units.bytes(Double(used)) + "/" + Units.bytes(Double(total))
            parts.append(Double(used) > Double(total) * 0.9 ? paint.red(text) : text)
        }
        if let temperature = device.temperatureCelsius { parts.append(RowFormatter.number(temperature, decimals: 0) + "°C") }
        if let power = device.powerWatts { parts.append(RowFormatter.number(power, decimals: 0) + "W") }
        if let clock = device.clockMHz { parts.append(RowFormatter.number(clock, decimals: 0) + "MHz") }
        if let reasons = device.throttleReasons {
            let names = throttleNames(reasons)
            if !names.isEmpty { parts.append(paint.yellow("throttled " + names.joined(separator: ","))) }
        }
        return parts.joined(separator: " ")
    }

    /// "NVIDIA H100 80GB HBM3" → "H100 80GB HBM3": the vendor is known from the figures.
    static func shortName(_ name: String) -> String {
        for vendor in ["NVIDIA ", "AMD ", "Intel(R) "] where name.hasPrefix(vendor) { return String(name.dropFirst(vendor.count)) }
        return name
    }

    /// NVML's clock event reasons that slow the GPU down (idle and the application's own clock
    /// setting are not throttling): nvml.h's nvmlClocksEventReason* bits.
    static let throttleBits: [(bit: UInt64, name: String)] = [
        (0x4, "power"), (0x8, "hw-slowdown"), (0x10, "sync-boost"), (0x20, "sw-thermal"), (0x40, "hw-thermal"),
        (0x80, "power-brake"), (0x100, "display"),
    ]

    static func throttleNames(_ reasons: UInt64) -> [String] {
        throttleBits.filter { reasons & $0.bit != 0 }.map(\.name)
    }
}
