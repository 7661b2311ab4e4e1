import ArgumentParser
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline
import PerfHUDRecordings

/// Options of every command that watches a target — `attach`, `run`, `demo` and `daemon` —
/// declared, validated and mapped to configuration here only, so a flag means the same everywhere.
struct WatchOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Sampling interval, 1ms…10s (default: 100ms; daemon: 1s).")
    var tick: Given<DurationValue>?

    @Option(parsing: .unconditional, help: "How much history the memory graph spans and the ring buffers keep (the daemon draws no graph and keeps none).")
    var history: Given<DurationValue> = "10m"

    @Flag(help: "Sum the target and all its descendants (found again every tick).")
    var includeChildren = false

    @Option(parsing: .unconditional, help: "The event socket's path (default: $XDG_RUNTIME_DIR/perfhud/PID.sock; daemon under systemd: $RUNTIME_DIRECTORY/events.sock).")
    var events: Given<String>?

    @Option(parsing: .unconditional, help: "Who may send events: any, same-user or target (default: the target, its descendants and your user; daemon: target).")
    var acceptFrom: Given<AcceptPolicy>?

    @Option(parsing: .unconditional, help: "Actions per second at which an action label is high-frequency.")
    var actionThreshold: Given<Double> = "20"

    @Option(parsing: .unconditional, help: "The display's refresh rate in Hz: frames are judged against its budget, 1000 / refresh ms. Without it, against the program's own pace (the median of its last 30 frames).")
    var refresh: Given<Double>?

    @Option(parsing: .unconditional, help: "A frame longer than this many budgets (or this many times the program's pace) is janky.")
    var jankFactor: Given<Double> = "1.5"

    @Option(parsing: .unconditional, help: "The window of the frame-time percentiles.")
    var frameWindow: Given<DurationValue> = "10s"

    @Option(parsing: .unconditional, help: "Distinct action labels kept; the rest count as __other__.")
    var maxActionLabels: Given<Int> = "200"

    @Option(parsing: .unconditional, help: ArgumentHelp("Also listen for StatsD datagrams on UDP HOST:PORT (loopback unless you say otherwise).", valueName: "HOST:PORT"))
    var statsdUdp: Given<HostAndPort>?

    @Option(parsing: .unconditional, help: "The window of the RSS leak trend: a leak is suspected only over a full window.")
    var leakWindow: Given<DurationValue> = "5m"

    @Option(parsing: .unconditional, help: ArgumentHelp("The RSS growth at which a steady climb is a suspected leak (per hour: 50MiB, 50MiB/h).", valueName: "SIZE[/h]"))
    var leakThreshold: Given<SizePerHour> = "50MiB/h"

    @Option(parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Alert while this holds, a row's figure against a number, for a while: \"cpu_percent > 80 for 20s\", \"fps < 50\", \"rss_bytes > 1.5GiB\" (repeatable; the figure then drawn in the alert colour).",
                               valueName: "EXPR"))
    var alert: [Given<String>] = []

    /// Every value read, as `configuration` reads them: a refusal for the first that does not.
    func validate() throws {
        _ = try configuration(defaultTick: Self.hudTick)
    }

    /// `--alert`s read; a refusal saying what one could not be read.
    static func alertRules(_ texts: [Given<String>]) throws -> [AlertRule] {
        try texts.map { given in
            let text = try given.value("--alert") { !$0.isEmpty }
            do { return try AlertRule(text) } catch let error as PerfHUDError { throw Refusal.because(error.message) }
        }
    }

    /// The HUD commands' tick; the daemon's is `daemonTick`.
    static let hudTick: UInt64 = 100_000_000
    static let daemonTick: UInt64 = 1_000_000_000

    /// The options read; a refusal (`Refusal`) for the first that does not read or is out of range.
    /// - Parameter defaultTick: the tick when `--tick` is not given.
    func configuration(defaultTick: UInt64) throws -> WatchConfiguration {
        let tick = try self.tick?.value("--tick") { (1_000_000...10_000_000_000).contains($0.nanoseconds) }
        // At least one tick, whichever command: the shortest default (the HUD's) where none is given.
        let history = try self.history.value("--history") { $0.nanoseconds >= tick?.nanoseconds ?? Self.hudTick }
        let leakWindow = try self.leakWindow.value("--leak-window") { $0.nanoseconds >= 1_000_000_000 }
        let leakThreshold = try self.leakThreshold.value("--leak-threshold")
        let actionThreshold = try self.actionThreshold.value("--action-threshold") { $0 > 0 }
        let refresh = try self.refresh?.value("--refresh") { $0 >= 1 && $0 <= 1000 }
        let jankFactor = try self.jankFactor.value("--jank-factor") { $0 >= 1 }
        let frameWindow = try self.frameWindow.value("--frame-window") { $0.nanoseconds > 0 }
        let maxActionLabels = try self.maxActionLabels.value("--max-action-labels") { (1...10_000).contains($0) }
        let events = try self.events?.value("--events") { !$0.isEmpty }
        let statsdUDP = try statsdUdp?.value("--statsd-udp")

        var configuration = WatchConfiguration()
        configuration.tickNanoseconds = tick?.nanoseconds ?? defaultTick
        configuration.historyNanoseconds = max(history.nanoseconds, configuration.tickNanoseconds)
        configuration.includeChildren = includeChildren
        configuration.eventsPath = events
        configuration.acceptFrom = try acceptFrom?.value("--accept-from")
        configuration.events.actionThreshold = actionThreshold
        configuration.events.refreshHz = refresh ?? 60
        configuration.events.paced = refresh == nil
        configuration.events.jankFactor = jankFactor
        configuration.events.frameWindowSeconds = frameWindow.seconds
        configuration.events.maxActionLabels = maxActionLabels
        configuration.statsdUDP = statsdUDP.map { ($0.host, $0.port) }
        configuration.leak = LeakTrend.Settings(windowSeconds: leakWindow.seconds, thresholdBytesPerHour: leakThreshold.bytes)
        configuration.alerts = try Self.alertRules(alert)
        if let problem = configuration.historyMemoryProblem { throw Refusal.because(problem) }
        return configuration
    }

}

/// A growth per hour, `50MiB/h` (or `50MiB`), above 0.
struct SizePerHour: ReadableValue {
    let bytes: Double
    init?(commandLine text: String) {
        let size = text.hasSuffix("/h") ? String(text.dropLast(2)) : text
        guard let bytes = FailCondition.bytes(size), bytes > 0, bytes.isFinite else { return nil }
        self.bytes = bytes
    }
}
