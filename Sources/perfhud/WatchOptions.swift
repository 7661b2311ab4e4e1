import ArgumentParser
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline
import PerfHUDRecordings

/// Options of every command that watches a target — `attach`, `run`, `demo` and `daemon` —
/// declared, validated and mapped to configuration here only, so a flag means the same everywhere.
struct WatchOptions: ParsableArguments {
    @Option(help: "Sampling interval, 1ms…10s (default: 100ms; daemon: 1s).")
    var tick: DurationArgument?

    @Option(help: "How much history the memory graph spans and the ring buffers keep.")
    var history = DurationArgument(nanoseconds: 600_000_000_000)

    @Flag(help: "Sum the target and all its descendants (discovered every second).")
    var includeChildren = false

    @Option(help: "The event socket's path (default: $XDG_RUNTIME_DIR/perfhud/PID.sock; daemon under systemd: $RUNTIME_DIRECTORY/events.sock).")
    var events: String?

    @Option(help: "Who may send events: any, same-user or target (default: the target, its descendants and your user; daemon: target).")
    var acceptFrom: AcceptPolicy?

    @Option(help: "Actions per second at which an action label is high-frequency.")
    var actionThreshold: Double = 20

    @Option(help: "The display's refresh rate in Hz: frames are judged against its budget, 1000 / refresh ms. Without it, against the program's own pace (the median of its last 30 frames).")
    var refresh: Double?

    @Option(help: "A frame longer than this many budgets (or this many times the program's pace) is janky.")
    var jankFactor: Double = 1.5

    @Option(help: "The window of the frame-time percentiles.")
    var frameWindow = DurationArgument(nanoseconds: 10_000_000_000)

    @Option(help: "Distinct action labels kept; the rest count as __other__.")
    var maxActionLabels = 200

    @Option(help: ArgumentHelp("Also listen for StatsD datagrams on UDP HOST:PORT (loopback unless you say otherwise).", valueName: "HOST:PORT"))
    var statsdUdp: HostAndPort?

    @Option(help: "The window of the RSS leak trend: a leak is suspected only over a full window.")
    var leakWindow = DurationArgument(nanoseconds: 300_000_000_000)

    @Option(help: ArgumentHelp("The RSS growth at which a steady climb is a suspected leak (per hour: 50MiB, 50MiB/h).", valueName: "SIZE[/h]"))
    var leakThreshold = "50MiB/h"

    /// `--leak-threshold` in bytes per hour.
    var leakThresholdBytesPerHour: Double? {
        let text = leakThreshold.hasSuffix("/h") ? String(leakThreshold.dropLast(2)) : leakThreshold
        return FailCondition.bytes(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }

    func validate() throws {
        guard leakWindow.nanoseconds >= 1_000_000_000 else { throw ValidationError(Accepted.complaint("--leak-window", got: leakWindow.text)) }
        guard leakThresholdBytesPerHour != nil else { throw ValidationError(Accepted.complaint("--leak-threshold", got: leakThreshold)) }
        if let tick, !(1_000_000...10_000_000_000).contains(tick.nanoseconds) {
            throw ValidationError(Accepted.complaint("--tick", got: tick.text))
        }
        let shortestTick = tick?.nanoseconds ?? Self.hudTick
        guard history.nanoseconds >= shortestTick else { throw ValidationError(Accepted.complaint("--history", got: history.text)) }
        if let problem = configuration(defaultTick: shortestTick).historyMemoryProblem { throw ValidationError(problem) }
        guard actionThreshold > 0, actionThreshold.isFinite else { throw ValidationError(Accepted.complaint("--action-threshold", got: "\(actionThreshold)")) }
        if let refresh, !(refresh >= 1 && refresh <= 1000) { throw ValidationError(Accepted.complaint("--refresh", got: "\(refresh)")) }
        guard jankFactor >= 1, jankFactor.isFinite else { throw ValidationError(Accepted.complaint("--jank-factor", got: "\(jankFactor)")) }
        guard frameWindow.nanoseconds > 0 else { throw ValidationError(Accepted.complaint("--frame-window", got: frameWindow.text)) }
        guard (1...10_000).contains(maxActionLabels) else { throw ValidationError(Accepted.complaint("--max-action-labels", got: String(maxActionLabels))) }
        if let events, events.isEmpty { throw ValidationError(Accepted.complaint("--events", got: events)) }
    }

    /// The HUD commands' tick; the daemon's is `daemonTick`.
    static let hudTick: UInt64 = 100_000_000
    static let daemonTick: UInt64 = 1_000_000_000

    /// - Parameter defaultTick: the tick when `--tick` is not given.
    func configuration(defaultTick: UInt64) -> WatchConfiguration {
        var configuration = WatchConfiguration()
        configuration.tickNanoseconds = tick?.nanoseconds ?? defaultTick
        configuration.historyNanoseconds = max(history.nanoseconds, configuration.tickNanoseconds)
        configuration.includeChildren = includeChildren
        configuration.eventsPath = events
        configuration.acceptFrom = acceptFrom
        configuration.events.actionThreshold = actionThreshold
        configuration.events.refreshHz = refresh ?? 60
        configuration.events.paced = refresh == nil
        configuration.events.jankFactor = jankFactor
        configuration.events.frameWindowSeconds = Double(frameWindow.nanoseconds) / 1e9
        configuration.events.maxActionLabels = maxActionLabels
        configuration.statsdUDP = statsdUdp.map { ($0.host, $0.port) }
        configuration.leak = LeakTrend.Settings(windowSeconds: Double(leakWindow.nanoseconds) / 1e9,
                                                thresholdBytesPerHour: leakThresholdBytesPerHour ?? 50 * 1024 * 1024)
        return configuration
    }
}
