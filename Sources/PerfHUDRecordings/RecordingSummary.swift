import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// A run's summary (`perfhud report`), computed from a recording with the definitions of
/// docs/figures.md's Definitions: nearest-rank percentiles over every frame; 1 % low = 1000 / p99 ms, 0.1 % low =
/// 1000 / p99.9 ms (MangoHud's); average FPS = frames over time; janky and dropped as live. The
/// figures that summarise one tick figure (CPU avg and peak, RSS at start, peak and end…) are the
/// table's (`Figure.summaries`), computed by `RunAggregates` as the HUD's end summary computes them.
public struct RecordingSummary {
    public struct PhaseFigures {
        public var name: String
        public var visits = 0
        public var seconds = 0.0
        public var entryBytes: UInt64?
        public var exitBytes: UInt64?
        /// Σ over finished visits of RSS at exit − RSS at entry: what the phase kept.
        public var keptBytes: Int64?
        public var keptBytesMax: Int64?
        /// The table's run figures over the ticks spent in the phase.
        public var aggregates = RunAggregates()
        public var fpsAvg: Double?
        public var fps1PercentLow: Double?
        public var cpuPercentAvg: Double? { aggregates[.cpu_percent, .mean] }
        public var rssPeakBytes: UInt64? { aggregates[.rss_bytes, .max].map { UInt64($0) } }

        /// The figure `phase.NAME.key` names (`phaseKeys`); nil for a figure the phase does not have.
        public func value(of key: String) -> Double? {
            guard let figure = PhaseFigure(rawValue: key) else { return aggregates[key] }
            switch figure {
            case .visits: return Double(visits)
            case .time_s: return seconds
            case .kept_bytes: return keptBytes.map { Double($0) }
            case .kept_bytes_max: return keptBytesMax.map { Double($0) }
            case .rss_entry_bytes: return entryBytes.map { Double($0) }
            case .rss_exit_bytes: return exitBytes.map { Double($0) }
            case .fps_avg: return fpsAvg
            case .fps_1pct_low: return fps1PercentLow
            }
        }
    }
    public struct ActionFigures { public var action: String; public var total: Double; public var peak: Double }

    public var phase: String?
    public var durationSeconds = 0.0
    public var samples = 0
    /// The table's run figures over the rows counted (`RunAggregates.keys`).
    public var aggregates: RunAggregates
    public var cpuPercentAvg: Double? { aggregates[.cpu_percent, .mean] }
    public var cpuPercentMax: Double? { aggregates[.cpu_percent, .max] }
    public var rssStartBytes: UInt64? { aggregates[.rss_bytes, .atStart].map { UInt64($0) } }
    public var rssPeakBytes: UInt64? { aggregates[.rss_bytes, .max].map { UInt64($0) } }
    public var rssEndBytes: UInt64? { aggregates[.rss_bytes, .last].map { UInt64($0) } }
    /// Frames counted, each by its weight (a sampled line stands for 1 / its rate).
    public var frames = 0.0
    public var fpsAvg: Double?
    public var frameP50: Double?
    public var frameP97: Double?
    public var frameP99: Double?
    public var frameP999: Double?
    public var fps1PercentLow: Double?
    public var fps01PercentLow: Double?
    public var jankyFrames = 0.0
    public var droppedFrames = 0.0
    public var actionsTotal = 0.0
    /// Labels by total, most first.
    public var topActions: [ActionFigures] = []
    /// Labels whose rate over some one-second window reached the threshold, with that peak.
    public var highFrequencyActions: [ActionFigures] = []
    public var phases: [PhaseFigures] = []
    /// Every span over which an `--alert` of the session held (the recording's rules, decided again over its rows).
    public var alertSpans: [AlertSpan] = []
    /// Every phase the run entered, in order, whatever `--phase` counts: what a condition or
    /// `--phase` naming another one is told the run has.
    public var phaseNamesOfRun: [String] = []

    /// Nearest rank: the smallest value with at least `percent` % of the values at or below it.
    public static func percentile(_ sorted: [Double], _ percent: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        // The rank is ⌈p/100 × n⌉; the tolerance keeps 99.9 % of 1000 at 999 (binary 99.9 is a hair above).
        let rank = (percent / 100 * Double(sorted.count) - 1e-9).rounded(.up)
        return sorted[min(sorted.count - 1, max(0, Int(rank) - 1))]
    }

    /// The time windows a summary counts: the whole run, or the visits of phase `only` (a visit
    /// not left yet lasts to the last sample). The HTML report marks frames by the same windows.
    public static func windows(_ recording: Recording, phase only: String?) -> [(start: Double, end: Double)] {
        windows(visits: recording.phases, start: recording.samples.first?.t ?? 0, end: recording.samples.last?.t ?? 0, phase: only)
    }

    package static func windows(visits: [Recording.Phase], start: Double, end: Double, phase only: String?) -> [(start: Double, end: Double)] {
        guard let only else { return [(start, end)] }
        return visits.filter { $0.name == only }.map { ($0.t, $0.tExit ?? end) }
    }

    /// `frames` counted, as live and by the same code (`RunFrames`), inside `windows` (all of them
    /// when nil); every frame is judged, in order, so that the pace is the run's. `janky` is
    /// handed each janky frame counted: the HTML report marks the janky frames of the same count.
    public static func runFrames(_ frames: [Recording.Frame], budget: FrameBudget, inside windows: [(start: Double, end: Double)]?,
                                 janky: ((Recording.Frame) -> Void)? = nil) -> RunFrames {
        var counted = RunFrames(budget: budget)
        for frame in frames {
            let inside = windows?.contains(where: { frame.t >= $0.start && frame.t <= $0.end }) ?? true
            if counted.add(milliseconds: frame.milliseconds, weight: frame.weight, source: frame.source, counted: inside) { janky?(frame) }
        }
        return counted
    }

    /// The summary of `recording`, or of the time spent in phase `only`: the recording's ticks, as
    /// `replay` rebuilds them (`RecordingRows`), summed up by the code that sums up a live session
    /// (`RunSummary`). `budget`: the frames judged against another reference than the one the run
    /// used (a baseline judged as the run it is compared with; the recording keeps every frame).
    public init(_ recording: Recording, phase only: String? = nil, budget: FrameBudget? = nil) {
        let budget = budget ?? recording.frameBudget
        let run = RunSummary(budget: budget, tickSeconds: recording.tickSeconds, phase: only, countsPhasesAndActions: true)
        let rows = RecordingRows(recording)
        // The session's alerts, decided again over its rows by the code that decided them live.
        let rules = recording.alertRules
        var alerts = rules.isEmpty ? nil : AlertTracker(AlertRules(rules))
        // One tick a sample (an older file's exit row repeats the last sample: not a row of its own).
        var last: Tick?
        for (index, tick) in rows.enumerated() where index < recording.samples.count {
            var tick = tick
            alerts?.apply(to: &tick)
            run.consume(tick)
            if alerts != nil { last = tick }
        }
        // Those holding at the end end with the last row, as the live session's last tick ends them.
        if var tick = last, let ending = alerts?.finish(), !ending.isEmpty {
            tick.alerts = AlertStates(rules: alerts?.rules)
            tick.alerts.ended = ending
            tick.status = .absent   // no row: only the spans are counted
            run.consume(tick)
        }
        // The frames in the order they were counted live (the file's): the rows place a frame
        // that arrived late by when it ended, ahead of frames counted before it, and each frame is
        // judged against the pace of the frames counted before it (`FrameJudge`).
        self.init(run, budget: budget, actionThreshold: recording.actionThreshold, countedOrder: recording.frames)
    }

    /// The summary of the ticks `run` was fed (counting its phases and actions); `countedOrder`:
    /// every frame of the run in the order it was counted, where the ticks' order is not that (a
    /// recording's rows), and the frames a run of one phase (`RunSummary.phase`) counts inside it.
    public init(_ run: RunSummary, budget: FrameBudget, actionThreshold: Double, countedOrder: [Recording.Frame]? = nil) {
        let only = run.phase
        precondition(only == nil || countedOrder != nil, "a phase's frames are counted from the run's list")
        phase = only
        let start = run.runFirstT ?? 0, end = run.runLastT ?? 0
        // The time windows counted: all of it, or the visits of the phase.
        let windows = Self.windows(visits: run.visits, start: start, end: end, phase: only)
        durationSeconds = windows.reduce(0) { $0 + max(0, $1.end - $1.start) }
        samples = run.rows
        aggregates = run.aggregates
        alertSpans = run.alertSpans

        let counted = countedOrder.map { Self.runFrames($0, budget: budget, inside: only == nil ? nil : windows) } ?? run.frames
        frames = counted.total
        if durationSeconds > 0 && counted.total > 0 { fpsAvg = counted.total / durationSeconds }
        let percentiles = counted.percentiles([50, 97, 99, 99.9])
        (frameP50, frameP97, frameP99, frameP999) = (percentiles[0], percentiles[1], percentiles[2], percentiles[3])
        fps1PercentLow = frameP99.flatMap { $0 > 0 ? 1000 / $0 : nil }
        fps01PercentLow = frameP999.flatMap { $0 > 0 ? 1000 / $0 : nil }
        jankyFrames = counted.janky
        droppedFrames = counted.dropped

        // The run's actions (those inside the phase's visits, for one phase).
        actionsTotal = run.actions.total
        topActions = run.actions.labels.map { ActionFigures(action: $0.key, total: $0.value.total, peak: $0.value.peak) }
            .sorted { ($0.total, $1.action) > ($1.total, $0.action) }
        highFrequencyActions = topActions.filter { $0.peak >= actionThreshold }.sorted { $0.peak > $1.peak }

        for visit in run.visits where !phaseNamesOfRun.contains(visit.name) { phaseNamesOfRun.append(visit.name) }
        var order: [String] = []
        var figures: [String: PhaseFigures] = [:]
        for visit in run.visits where only == nil || visit.name == only {
            if figures[visit.name] == nil { order.append(visit.name); figures[visit.name] = PhaseFigures(name: visit.name) }
            var entry = figures[visit.name]!
            entry.visits += 1
            entry.seconds += max(0, (visit.tExit ?? end) - visit.t)
            if entry.entryBytes == nil { entry.entryBytes = visit.entryBytes }
            if let exit = visit.exitBytes { entry.exitBytes = exit }
            if let entered = visit.entryBytes, let exit = visit.exitBytes {
                let kept = Int64(bitPattern: exit &- entered)
                // Saturating: sizes from a forged file may sum past Int64, which must not trap.
                let (sum, overflow) = (entry.keptBytes ?? 0).addingReportingOverflow(kept)
                entry.keptBytes = overflow ? (kept > 0 ? .max : .min) : sum
                entry.keptBytesMax = max(entry.keptBytesMax ?? kept, kept)
            }
            figures[visit.name] = entry
        }
        let framesByPhase = run.framesByPhase
        for name in order {
            var entry = figures[name]!
            entry.aggregates = run.aggregatesByPhase[name] ?? RunAggregates()
            let phaseFrames = framesByPhase[name] ?? WeightedDurations()
            if entry.seconds > 0 && phaseFrames.total > 0 { entry.fpsAvg = phaseFrames.total / entry.seconds }
            entry.fps1PercentLow = phaseFrames.low(99)
            phases.append(entry)
        }
    }

    /// The figure a `--fail-on` condition names: `rss_peak_bytes`, `phase.NAME.kept_bytes`…
    /// - Returns: nil for a name it does not know; `.some(nil)` for a figure the run does not have.
    public func value(of metric: String) -> Double?? {
        if metric.hasPrefix("phase."), let dot = metric.lastIndex(of: "."), dot > metric.index(metric.startIndex, offsetBy: 5) {
            let name = String(metric[metric.index(metric.startIndex, offsetBy: 6)..<dot])
            let key = String(metric[metric.index(after: dot)...])
            guard Self.phaseKeys.contains(key) else { return nil }
            guard let entry = phases.first(where: { $0.name == name }) else { return .some(nil) }
            let figure = entry.value(of: key)
            return .some(figure)
        }
        guard let index = Self.keys.firstIndex(of: metric) else { return nil }
        return .some(numbers[index])
    }

    /// Why `metric` (a name `value(of:)` knows) has no value here, and what `run` ("the run",
    /// "the baseline") has instead: one line for a `--fail-on` that cannot be evaluated.
    public func whyMissing(_ metric: String, run: String) -> String {
        if metric.hasPrefix("phase."), let dot = metric.lastIndex(of: "."), dot > metric.index(metric.startIndex, offsetBy: 5) {
            let name = String(metric[metric.index(metric.startIndex, offsetBy: 6)..<dot])
            let key = String(metric[metric.index(after: dot)...])
            guard let entry = phases.first(where: { $0.name == name }) else {
                if let phase, phaseNamesOfRun.contains(name) {
                    return "\(run) has phase \(FailCondition.quoted(name)), but --phase \(FailCondition.quoted(phase)) leaves it out"
                }
                return "\(run) never entered phase \(FailCondition.quoted(name)) (\(Self.phaseList(phaseNamesOfRun)))"
            }
            let why: String
            switch PhaseFigure(rawValue: key) {
            case .kept_bytes, .kept_bytes_max, .rss_exit_bytes:
                why = entry.exitBytes == nil ? "it was never left, or its memory at exit was not read" : "its memory at entry was not read"
            case .rss_entry_bytes: why = "its memory was not read"
            case .fps_avg, .fps_1pct_low: why = "no frames were reported in it"
            case .visits, .time_s, nil:
                why = key == RunAggregates.key(.rss_bytes, .max) ? "its memory was not read" : "no tick in it had the figure"
            }
            return "\(run) has no \(key) for phase \(FailCondition.quoted(name)): \(why)"
        }
        let why: String
        switch RunAggregates.summary(named: metric)?.field {
        case .cpu_percent: why = "no CPU figure was taken (one sample has no interval)"
        case .rss_bytes: why = "its memory was not read (a kernel thread has none)"
        case .pss_bytes: why = "PSS was not readable"
        case .some: why = "no row of the run had the figure"
        case nil: why = "no frames were reported"
        }
        let present = zip(Self.keys, numbers).filter { $0.1 != nil }.map(\.0)
        return "\(run) has no \(metric): \(why) (figures it has: \(present.joined(separator: ", ")))"
    }

    /// "phases: Home, Gallery, Editor", or that there were none.
    public static func phaseList(_ names: [String]) -> String {
        names.isEmpty ? "it reported no phases" : "phases: " + names.map { TerminalText.escaped($0, maxLength: 60) }.joined(separator: ", ")
    }

    /// A phase's figures: its visits and memory kept, the table's run figures over its ticks, its frames.
    public static let phaseKeys = PhaseFigure.allCases.filter { $0 != .fps_avg && $0 != .fps_1pct_low }.map(\.key)
        + RunAggregates.keys + [PhaseFigure.fps_avg.key, PhaseFigure.fps_1pct_low.key]
    /// The numeric figures, in the order of the JSON report: the run's extent, the table's run
    /// figures, then those of every frame and action (not of the ticks).
    public static let keys = RunFigure.extent.map(\.key) + RunAggregates.keys + RunFigure.ofFramesAndActions.map(\.key)
    public var numbers: [Double?] {
        [durationSeconds, Double(samples)] + aggregates.values
            + [frames, fpsAvg, frameP50, frameP97, frameP99, frameP999, fps1PercentLow, fps01PercentLow, jankyFrames, droppedFrames, actionsTotal]
    }

    /// The run figure `key` (one of `keys`); nil where unknown or not a key.
    public func number(of key: String) -> Double? {
        Self.keys.firstIndex(of: key).flatMap { numbers[$0] }
    }
}
