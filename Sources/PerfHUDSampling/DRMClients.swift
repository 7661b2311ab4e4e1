/// GPU use of DRM clients from `/proc/PID/fdinfo/FD` (amdgpu, i915, xe, msm, panfrost, v3d, …;
/// the kernel's Documentation/gpu/drm-usage-stats.rst). Written by hand: no library parses these
/// keys, and they are a handful of `key:\tvalue unit` lines.
///
/// A client is one open of a device: the same (`drm-pdev`, `drm-client-id`) seen through several
/// descriptors or processes (a parent and the child it forked) is one client, counted once.
/// Busy share over a pass, per engine, the busiest engine being the client's:
/// - `drm-engine-<e>` nanoseconds ÷ (wall nanoseconds × `drm-engine-capacity-<e>`, default 1);
/// - else `drm-cycles-<e>` over `drm-total-cycles-<e>`, or over `drm-maxfreq-<e>` × the wall time.
/// Memory: the sum of `drm-resident-<region>`, else of the older `drm-memory-<region>`, else of
/// `drm-total-<region>`. A counter that goes back is held until it catches up (no negative share).
public struct DRMFdinfo: Equatable {
    public var driver: String?
    public var pdev: String?
    public var clientID: UInt64?
    public var engineNanoseconds: [String: UInt64] = [:]
    public var engineCapacity: [String: UInt64] = [:]
    public var cycles: [String: UInt64] = [:]
    public var totalCycles: [String: UInt64] = [:]
    public var maxFrequencyHz: [String: UInt64] = [:]
    public var resident: UInt64?
    public var memory: UInt64?
    public var total: UInt64?

    /// The client this fdinfo describes; nil when it is not a DRM client's (no `drm-client-id`).
    public var key: String? { clientID.map { "\(deviceID)/\($0)" } }
    /// Its device: the PCI address (as sysfs names a render node's device), else the driver.
    public var deviceID: String { pdev ?? driver ?? "drm" }
    /// The client's device memory, by the most precise key it has.
    public var memoryBytes: UInt64? { resident ?? memory ?? total }

    /// Parses one fdinfo file's text; unknown keys and malformed lines are skipped.
    public static func parse(_ text: Substring) -> DRMFdinfo? {
        var info = DRMFdinfo()
        var isDRM = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard line.hasPrefix("drm-"), let colon = line.firstIndex(of: ":") else { continue }
            isDRM = true
            let key = line[line.index(line.startIndex, offsetBy: 4)..<colon]
            let value = line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
            switch key {
            case "driver": info.driver = String(value.prefix(64))
            case "pdev": info.pdev = String(value.prefix(64))
            case "client-id": info.clientID = UInt64(value.prefix { $0.isNumber })
            default:
                if let engine = name(after: "engine-capacity-", in: key) { info.engineCapacity[String(engine)] = number(value) }
                else if let engine = name(after: "engine-", in: key) { info.engineNanoseconds[String(engine)] = number(value) }
                else if let engine = name(after: "total-cycles-", in: key) { info.totalCycles[String(engine)] = number(value) }
                else if let engine = name(after: "cycles-", in: key) { info.cycles[String(engine)] = number(value) }
                else if let engine = name(after: "maxfreq-", in: key) { info.maxFrequencyHz[String(engine)] = number(value, units: frequencyUnits) }
                else if name(after: "resident-", in: key) != nil { add(number(value, units: memoryUnits), to: &info.resident) }
                else if name(after: "memory-", in: key) != nil { add(number(value, units: memoryUnits), to: &info.memory) }
                else if name(after: "total-", in: key) != nil { add(number(value, units: memoryUnits), to: &info.total) }
            }
        }
        return isDRM && info.clientID != nil ? info : nil
    }

    private static let memoryUnits: [Substring: UInt64] = ["": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30]
    private static let frequencyUnits: [Substring: UInt64] = ["": 1, "Hz": 1, "KHz": 1_000, "kHz": 1_000, "MHz": 1_000_000, "GHz": 1_000_000_000]

    private static func name(after prefix: String, in key: Substring) -> Substring? {
        guard key.hasPrefix(prefix) else { return nil }
        let name = key.dropFirst(prefix.count)
        return name.isEmpty ? nil : Substring(name.prefix(32))
    }

    /// `123 ns`, `1024 KiB`: the number times its unit; nil for anything else (or an overflow).
    private static func number(_ value: Substring, units: [Substring: UInt64] = ["": 1, "ns": 1]) -> UInt64? {
        let digits = value.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = UInt64(digits) else { return nil }
        let unit = value.dropFirst(digits.count).trimmingLeadingSpaces.trimmingTrailingSpaces
        guard let scale = units[unit] else { return nil }
        let (scaled, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : scaled
    }

    private static func add(_ value: UInt64?, to sum: inout UInt64?) {
        guard let value else { return }
        sum = (sum ?? 0) &+ value
    }
}

/// The DRM clients of the watched processes from one pass to the next: their busy shares over the
/// pass and their memory (`DRMFdinfo`).
public struct DRMClients {
    private struct Counters {
        var at: UInt64
        var engines: [String: UInt64]
        var cycles: [String: UInt64]
        var totalCycles: [String: UInt64]
    }
    private var last: [String: Counters] = [:]

    public init() {}

    /// One pass: each client's fdinfo (any one of its descriptors) and the processes holding it,
    /// read at `now` (CLOCK_MONOTONIC ns). Busy is nil for a client first seen (no interval yet).
    public mutating func pass(_ seen: [(info: DRMFdinfo, pids: [Int32])], now: UInt64, device: (DRMFdinfo) -> Int) -> [GPUReading.GPUClient] {
        var next: [String: Counters] = [:]
        var clients: [GPUReading.GPUClient] = []
        for (info, pids) in seen {
            guard let key = info.key else { continue }
            var counters = Counters(at: now, engines: info.engineNanoseconds, cycles: info.cycles, totalCycles: info.totalCycles)
            var client = GPUReading.GPUClient(pids: pids, device: device(info), memoryBytes: info.memoryBytes)
            if let before = last[key], now > before.at {
                let wall = Double(now - before.at)
                var busiest: Double?
                func consider(_ share: Double?) { if let share { busiest = max(busiest ?? 0, min(share, 100)) } }
                for (engine, value) in info.engineNanoseconds {
                    guard let old = before.engines[engine] else { continue }
                    let (delta, held) = Self.advance(old, value)
                    counters.engines[engine] = held
                    let capacity = Double(max(1, info.engineCapacity[engine] ?? 1))
                    consider(Double(delta) / (wall * capacity) * 100)
                }
                for (engine, value) in info.cycles where info.engineNanoseconds[engine] == nil {
                    guard let old = before.cycles[engine] else { continue }
                    let (delta, held) = Self.advance(old, value)
                    counters.cycles[engine] = held
                    if let total = info.totalCycles[engine], let oldTotal = before.totalCycles[engine] {
                        let (totalDelta, heldTotal) = Self.advance(oldTotal, total)
                        counters.totalCycles[engine] = heldTotal
                        consider(totalDelta > 0 ? Double(delta) / Double(totalDelta) * 100 : 0)
                    } else if let hertz = info.maxFrequencyHz[engine], hertz > 0 {
                        consider(Double(delta) / (Double(hertz) * wall / 1e9) * 100)
                    }
                }
                client.busyPercent = busiest ?? (info.engineNanoseconds.isEmpty && info.cycles.isEmpty ? nil : 0)
            }
            next[key] = counters
            clients.append(client)
        }
        last = next
        return clients
    }

    /// A cumulative counter's increase; one that went back is held at its old value until it
    /// catches up (a client's counter never runs backwards, but a reused client id can).
    private static func advance(_ old: UInt64, _ new: UInt64) -> (delta: UInt64, held: UInt64) {
        new >= old ? (new - old, new) : (0, old)
    }
}
