import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline
import Prometheus

/// One target's series in the daemon's registry, each labelled `target="NAME"`: its figures, its
/// counters, its actions and phase, its frame histogram. Made by `DaemonMetrics.makeTarget`;
/// `remove()` takes every series it made out of the registry (a target forgotten after
/// `--forget-after`, or dropped from `--config`).
///
/// Counters that mirror a cumulative figure (CPU seconds, frames, events) are advanced by the
/// difference since the last tick, so they only go up, across the target's restarts too. The
/// kernel's counts behind the "why" figures (`KernelTotal`) are advanced the same way; a count that
/// went back (a member of the group left, taking its count out of the sum) is the new starting
/// point, so what the others count after it is not lost.
public final class TargetMetrics: TickSink {
    /// Its frame histogram takes every frame with its weight, its action counters every action.
    public static var readsEveryFrame: Bool { true }
    public func consume(_ tick: Tick) { update(tick) }

    public let label: String
    private let registry: PrometheusCollectorRegistry
    private let labels: [(String, String)]
    /// What `perfhud_target_info` says of the selector beside `comm` and `pid` (`DaemonTarget.infoLabels`).
    private let infoLabels: [(String, String)]
    /// What `perfhud_target_info` says of what the target was found to be, beside `infoLabels`:
    /// a container's `runtime`, `container_id` and `image` (`DaemonTarget.learnedLabels`); the
    /// series is made anew when it changes (a container run again under its name has a new ID).
    var learnedInfo: [(String, String)] = [] {
        didSet { if !oldValue.elementsEqual(learnedInfo, by: ==) { learnedInfoChanged = true } }
    }
    /// `learnedInfo` changed since the info series was made: it is made again at the next tick
    /// (the tick's key stays the command and the PID, built without the learned labels).
    private var learnedInfoChanged = false
    private let up: Gauge
    private let cpuUser: Counter
    private let cpuSystem: Counter
    private var cpuModes = CPUSecondsByMode()
    /// The figures exported as gauges (of the report or the events: the rows' rates) or kernel
    /// totals, each with its slot below (arrays, not dictionaries by name: every tick of every
    /// target walks them all).
    private static let exported: [(figure: Figure, metric: Figure.Metric)] = Figure.all.compactMap { figure in
        guard let metric = figure.metric else { return nil }
        switch metric.kind {
        case .gauge: return (figure, metric)
        case .kernelTotal: return figure.source == .target ? (figure, metric) : nil
        case .counter, .labelled: return nil
        }
    }
    /// What a tick reads of each of `exported`, as plain values: walking `exported` itself copies
    /// each figure's `Metric` (its name, help and labels, retained and released), ~50 a target a
    /// tick, which cost more than reading the figures (callgrind). The metric is read when its
    /// series is made.
    private static let exportedReads: [(figure: Figure, kind: Figure.Metric.Kind, scale: Double)] = exported.map {
        ($0.figure, $0.metric.kind, $0.metric.scale)
    }
    /// The figures exported as counters of their own (`Metric.Kind.counter`: the report's network
    /// totals, the events' frames and events), each with its slot in `counters` and `counted`.
    private static let counterFigures: [(figure: Figure, metric: Figure.Metric)] = Figure.all.compactMap { figure in
        guard let metric = figure.metric, metric.kind == .counter else { return nil }
        return (figure, metric)
    }
    /// Their figures alone, for the walk of every tick (as `exportedReads`).
    private static let counterReads: [Figure] = counterFigures.map(\.figure)
    /// Each exported figure's gauge (present while known).
    private var figureGauges = [Gauge?](repeating: nil, count: exported.count)
    /// Each kernel total's counter (`Metric.Kind.kernelTotal`): made when the total is first known
    /// (a file perfhud may not read has no series, never 0), kept after.
    private var kernelCounters = [Counter?](repeating: nil, count: exported.count)
    /// The kernel totals last seen; forgotten while the target is down (a restarted process
    /// counts from its start).
    private var kernelLast = [Double?](repeating: nil, count: exported.count)
    /// `perfhud_target_busiest_thread_cpu_ratio` and `…_busiest_thread_info{thread}`: the busiest thread of the last second.
    private var busiestRatio: Gauge?
    private var busiestThread: InfoGauge
    /// The counters of `counterFigures`, and the value each was last advanced to (a slot each:
    /// looking them up by name cost more than the rest of a target's tick, measured with callgrind).
    private var counters: [Counter] = []
    private var counted = [Double](repeating: 0, count: counterFigures.count)
    private var cpuCounted = (user: 0.0, system: 0.0)
    private var startTime: Gauge?
    private var info: (gauge: Gauge, key: String)?
    private var phase: InfoGauge
    /// Which source the frame metrics count (`events`, `gl`, `vulkan`, `tty`): an info gauge, not a
    /// label on the frame counters, which a change of source would split.
    private var frameSource: InfoGauge
    let frameDuration: WeightedHistogram
    /// `perfhud_events_rejected_total{reason}`, in `rejectionReasons`' order, and each one's last value.
    private var rejected: [(counter: Counter, last: Double)] = []
    private var actions: [String: Counter] = [:]
    private var highFrequency: [String: Gauge] = [:]

    /// Why the event socket refuses a datagram (`perfhud_events_rejected_total{reason}`).
    public static let rejectionReasons = ["peer", "no_credentials", "truncated", "other_target"]

    init(label: String, infoLabels: [(String, String)], registry: PrometheusCollectorRegistry) {
        self.label = label
        self.infoLabels = infoLabels
        self.registry = registry
        labels = [("target", label)]
        up = registry.gauge(TargetSeries.perfhud_target_up.name, labels: labels, help: "Whether the watched target is running and readable (1) or not (0).")
        cpuUser = registry.counter(Figure.metricName(.cpu_seconds_total), labels: labels + [("mode", "user")],
                                       help: "CPU time of the target (and its descendants with --include-children), by mode.")
        cpuSystem = registry.counter(Figure.metricName(.cpu_seconds_total), labels: labels + [("mode", "system")],
                                         help: "CPU time of the target (and its descendants with --include-children), by mode.")
        let labels = labels
        counters = Self.counterFigures.map { registry.counter($0.metric.name, labels: labels, help: $0.metric.help) }
        rejected = Self.rejectionReasons.map { reason in
            (registry.counter(Figure.metricName(.events_rejected), labels: labels + [("reason", reason)],
                                  help: "Datagrams rejected, by reason."), 0)
        }
        phase = InfoGauge(name: TargetSeries.perfhud_phase_info.name, labels: labels, label: "phase", help: "The last phase the program reported.")
        frameSource = InfoGauge(name: TargetSeries.perfhud_frame_source_info.name, labels: labels, label: "source",
                                help: "Where the frames counted come from: events, gl, vulkan or tty.")
        busiestThread = InfoGauge(name: TargetSeries.perfhud_target_busiest_thread_info.name, labels: labels, label: "thread",
                                  help: "The name of the target's busiest thread over the last second (its comm).")
        frameDuration = WeightedHistogram(name: TargetSeries.perfhud_frame_duration_seconds.name,
                                          help: "Durations of the frames the program reported (weighted by 1 / sample rate).",
                                          bounds: DaemonMetrics.frameBuckets, labels: labels)
    }

    /// The start time of the target in seconds since the epoch: the boot time read once (it does
    /// not move), plus the start's clock ticks after boot.
    private static let bootTime = ProcessDirectory.bootTime

    /// Mirrors one tick's figures into the registry. Called from the sampling thread only.
    /// `perfhud_target_alert{alert}` of each `--alert`: 1 while it holds, else 0 (made at the first tick).
    private var alertGauges: [Gauge] = []

    private func updateAlerts(_ alerts: AlertStates) {
        guard let rules = alerts.rules?.rules else { return }
        if alertGauges.isEmpty {
            alertGauges = rules.map {
                registry.gauge(TargetSeries.perfhud_target_alert.name, labels: labels + [("alert", $0.text)],
                               help: "1 while the --alert holds for the target (its figure over the line for its duration), else 0.")
            }
        }
        for (index, rule) in rules.enumerated() { alertGauges[index].set(to: alerts.holding.contains { $0.text == rule.text } ? 1 : 0) }
    }

    private func update(_ tick: Tick) {
        updateAlerts(tick.alerts)
        let present = tick.status != .absent
        let events = tick.events ?? .empty
        up.set(to: present ? 1 : 0)
        if present {
            // The row's `cpu_seconds_total` (the CPU clock) split by mode, as `export` splits a recording's.
            let report = tick.figures
            cpuModes.add(report)
            advance(cpuUser, &cpuCounted.user, to: cpuModes.user)
            advance(cpuSystem, &cpuCounted.system, to: cpuModes.system)
            let activity = tick.sample.activity
            for (index, (figure, kind, scale)) in Self.exportedReads.enumerated() {
                switch kind {
                case .gauge:
                    set(index, Figure.read(figure.field, report, events).map { $0 * scale })
                case .kernelTotal(let total):
                    guard let activity, let value = total.value(in: activity) else { continue }
                    count(index, to: value)
                case .counter, .labelled:
                    continue
                }
            }
            // A total of the target's own since the daemon watches it (the network's): mirrored
            // while it is up; the group keeps a member's share when it leaves (`TargetGroup`).
            for (index, figure) in Self.counterReads.enumerated() where figure.source == .target {
                guard let value = Figure.read(figure.field, report, events) else { continue }
                advance(counters[index], &counted[index], to: value)
            }
            followBusiestThread(report.busiestThreads)
            let started = tick.sample.startTicks.flatMap { ticks in Self.bootTime.map { $0 + Double(ticks) / Double(ProcessDirectory.ticksPerSecond) } }
            set(&startTime, TargetSeries.perfhud_target_start_time_seconds.name, "When the target started, seconds since the epoch.", started)
            let key = tick.commandName + "\u{0}" + String(report.pid)
            if info?.key != key || learnedInfoChanged {
                learnedInfoChanged = false
                if let old = info { registry.unregisterGauge(old.gauge) }
                let gauge = registry.gauge(TargetSeries.perfhud_target_info.name,
                                               labels: labels + [("comm", tick.commandName), ("pid", String(report.pid))]
                                                + infoLabels.filter { given in !learnedInfo.contains { $0.0 == given.0 } } + learnedInfo,
                                               help: "The watched target: its command name and (first) PID.")
                gauge.set(to: 1)
                info = (gauge, key)
            }
        } else {
            for gauge in (figureGauges + [startTime, busiestRatio]).compactMap({ $0 }) { registry.unregisterGauge(gauge) }
            figureGauges = figureGauges.map { _ in nil }; startTime = nil; busiestRatio = nil
            busiestThread.follow(nil, in: registry)
            kernelLast = kernelLast.map { _ in nil }
            // Down: a target that comes back counts its totals from its start again.
            for (index, figure) in Self.counterReads.enumerated() where figure.source == .target { counted[index] = 0 }
            if let old = info { registry.unregisterGauge(old.gauge); info = nil }
        }
        let report: TargetFigures? = present ? tick.figures : nil
        for (index, figure) in Self.counterReads.enumerated() where figure.source == .events {
            guard let value = figure.value(report, events) else { continue }
            advance(counters[index], &counted[index], to: value)
        }
        for (index, reason) in Self.rejectionReasons.enumerated() {
            advance(rejected[index].counter, &rejected[index].last, to: Double(events.rejected[reason] ?? 0))
        }
        // Every action and frame since the tick before, as the tick carries them (`readsEveryFrame`).
        for (label, count) in tick.everyFrame?.actions ?? [] {
            let counter = actions[label] ?? {
                let made = registry.counter(Figure.metricName(.actions_total), labels: labels + [("action", label)],
                                                help: "Actions the program dispatched, by label (at most --max-action-labels, then __other__).")
                actions[label] = made
                return made
            }()
            counter.increment(by: count)
        }
        for frame in tick.everyFrame?.frames ?? [] { frameDuration.record(frame.milliseconds / 1000, weight: frame.weight) }
        var listed = Set<String>()
        for action in events.highFrequencyActions {
            listed.insert(action.action)
            let gauge = highFrequency[action.action] ?? {
                let made = registry.gauge(TargetSeries.perfhud_high_frequency_action_rate.name, labels: labels + [("action", action.action)],
                                              help: "Per-second rate of actions flagged high-frequency (listed 10 s after).")
                highFrequency[action.action] = made
                return made
            }()
            gauge.set(to: action.rate)
        }
        for (label, gauge) in highFrequency where !listed.contains(label) {
            registry.unregisterGauge(gauge)
            highFrequency[label] = nil
        }
        phase.follow(events.phase, in: registry)
        frameSource.follow(events.frameSource?.rawValue, in: registry)
    }

    /// The RSS read between two full ticks, into the figure's gauge (the rest stays as last read).
    func updateResident(_ bytes: UInt64, field: Figure.Field) {
        guard let slot = field == .rss_bytes ? Self.residentSlot : Self.residentSumSlot else { return }
        set(slot, Double(bytes) * Self.exportedReads[slot].scale)
    }
    private static let residentSlot = exportedReads.firstIndex { $0.figure.field == .rss_bytes }
    private static let residentSumSlot = exportedReads.firstIndex { $0.figure.field == .rss_sum_bytes }

    /// Takes every series of the target out of the registry (the histogram: see `DaemonMetrics`).
    func remove() {
        for gauge in figureGauges.compactMap({ $0 }) + Array(highFrequency.values) + [up] + alertGauges + [startTime, info?.gauge, busiestRatio].compactMap({ $0 }) {
            registry.unregisterGauge(gauge)
        }
        for counter in counters + kernelCounters.compactMap({ $0 }) + rejected.map(\.counter) + Array(actions.values) + [cpuUser, cpuSystem] {
            registry.unregisterCounter(counter)
        }
        figureGauges = figureGauges.map { _ in nil }; highFrequency = [:]; startTime = nil; info = nil; busiestRatio = nil
        counters = []; kernelCounters = kernelCounters.map { _ in nil }; kernelLast = kernelLast.map { _ in nil }
        rejected = []; actions = [:]; alertGauges = []
        phase.follow(nil, in: registry)
        busiestThread.follow(nil, in: registry)
        frameSource.follow(nil, in: registry)
    }

    /// Advances `counter` to `value` from `last`, the value it was advanced to before: only up.
    private func advance(_ counter: Counter, _ last: inout Double, to value: Double) {
        if value > last { counter.increment(by: value - last); last = value }
    }

    /// A kernel total's counter advanced to `value` (made on its first value: the kernel's count
    /// then). A value lower than the last (a member left the group) is the new starting point.
    private func count(_ index: Int, to value: Double) {
        let counter = kernelCounters[index] ?? {
            let metric = Self.exported[index].metric
            let made = registry.counter(metric.name, labels: labels + metric.labels.map { ($0.name, $0.value) }, help: metric.help)
            kernelCounters[index] = made
            return made
        }()
        let last = kernelLast[index] ?? 0
        if value > last { counter.increment(by: value - last) }
        kernelLast[index] = value
    }

    /// The busiest thread's share of a CPU (1 = one core) and its name: one series each, the name's
    /// replaced when another thread is the busiest. None busy in the last second: 0, the last name kept.
    private func followBusiestThread(_ threads: [BusyThread]?) {
        guard let threads else {
            if let gauge = busiestRatio { registry.unregisterGauge(gauge); busiestRatio = nil }
            busiestThread.follow(nil, in: registry)
            return
        }
        if busiestRatio == nil {
            busiestRatio = registry.gauge(Figure.metricName(.busiest_threads), labels: labels,
                                              help: "CPU used by the target's busiest thread over the last second, in CPUs (1 = one core all the time).")
        }
        busiestRatio!.set(to: (threads.first?.cpuPercent ?? 0) / 100)
        if let first = threads.first { busiestThread.follow(first.name, in: registry) }
    }

    /// A gauge that exists only while its value is known (absent, never 0, when unknown).
    private func set(_ gauge: inout Gauge?, _ name: String, _ help: String, _ value: Double?) {
        guard let value else {
            if let existing = gauge { registry.unregisterGauge(existing); gauge = nil }
            return
        }
        if gauge == nil { gauge = registry.gauge(name, labels: labels, help: help) }
        gauge!.set(to: value)
    }

    /// The gauge of `exported[index]`'s metric (its labels after `target`), present while known.
    private func set(_ index: Int, _ value: Double?) {
        guard let value else {
            if let existing = figureGauges[index] { registry.unregisterGauge(existing); figureGauges[index] = nil }
            return
        }
        if let gauge = figureGauges[index] { return gauge.set(to: value) }
        let metric = Self.exported[index].metric
        let gauge = registry.gauge(metric.name, labels: labels + metric.labels.map { ($0.name, $0.value) }, help: metric.help)
        gauge.set(to: value)
        figureGauges[index] = gauge
    }
}

/// A gauge of value 1 whose one label says the current value of something (`perfhud_phase_info`):
/// a new value replaces the series, none removes it.
struct InfoGauge {
    let name: String
    let labels: [(String, String)]
    let label: String
    let help: String
    private var current: (gauge: Gauge, value: String)?

    init(name: String, labels: [(String, String)], label: String, help: String) {
        self.name = name
        self.labels = labels
        self.label = label
        self.help = help
    }

    mutating func follow(_ value: String?, in registry: PrometheusCollectorRegistry) {
        guard current?.value != value else { return }
        if let old = current { registry.unregisterGauge(old.gauge); current = nil }
        guard let value else { return }
        let gauge = registry.gauge(name, labels: labels + [(label, value)], help: help)
        gauge.set(to: 1)
        current = (gauge, value)
    }
}
