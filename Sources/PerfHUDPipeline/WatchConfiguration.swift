import PerfHUDSupport
import PerfHUDEvents
import PerfHUDStore

/// How any target is watched, by the HUD commands and the daemon alike: sampling, history and
/// the event stream. Filled from the one option group both share, so a flag means the same in both.
public struct WatchConfiguration {
    public var tickNanoseconds: UInt64 = 100_000_000
    public var historyNanoseconds: UInt64 = 600_000_000_000
    public var includeChildren = false
    /// The event socket's path (`--events`); nil for the default.
    public var eventsPath: String?
    /// Who may send events (`--accept-from`); nil: the target, its descendants and our user.
    public var acceptFrom: AcceptPolicy?
    public var events = EventConfiguration()
    /// `--statsd-udp HOST:PORT`.
    public var statsdUDP: (host: String, port: UInt16)?
    /// `--leak-window`, `--leak-threshold`.
    public var leak = LeakTrend.Settings()
    /// `--alert EXPR`, in the order given.
    public var alerts: [AlertRule] = []

    public init() {}

    /// Samples kept in history: `--history / --tick` rounded up, at least two.
    public var historyCapacity: Int {
        max(2, Int((historyNanoseconds + tickNanoseconds - 1) / tickNanoseconds))
    }

    /// The most memory a history may take: past it perfhud refuses to start rather than grow
    /// by hundreds of megabytes without a word (`--tick 1ms --history 165m` would take 529 MiB).
    public static let historyMemoryLimit: UInt64 = 256 << 20

    /// The memory the history's ring buffers take, allocated in full at start.
    public var historyBytes: UInt64 { UInt64(historyCapacity) * UInt64(TimeSeries.bytesPerSample) }

    /// Why this history is refused, with the figure and what would fit; nil when it fits.
    public var historyMemoryProblem: String? {
        guard historyBytes > Self.historyMemoryLimit else { return nil }
        let perSample = UInt64(TimeSeries.bytesPerSample)
        let longest = Self.historyMemoryLimit / perSample * tickNanoseconds
        var problem = "--history \(DurationText.format(nanoseconds: historyNanoseconds)) at --tick \(DurationText.format(nanoseconds: tickNanoseconds))"
            + " keeps \(historyCapacity) samples, \(Units.bytes(Double(historyBytes))) of memory (at most \(Units.bytes(Double(Self.historyMemoryLimit))))"
            + ": give a shorter --history (at most \(DurationText.format(nanoseconds: longest)) at this tick)"
        // The finest tick at which this history fits, rounded up to a 1-2-5 step.
        let finest = historyNanoseconds / (Self.historyMemoryLimit / perSample) + 1
        if let coarser = [1, 2, 5].flatMap({ base in (0..<10).map { base * pow10($0) } }).sorted().first(where: { $0 >= finest }),
           coarser <= 10_000_000_000 {
            problem += " or a coarser --tick (\(DurationText.format(nanoseconds: coarser)) or more)"
        }
        return problem
    }
}

private func pow10(_ exponent: Int) -> UInt64 { (0..<exponent).reduce(1) { value, _ in value * 10 } }
