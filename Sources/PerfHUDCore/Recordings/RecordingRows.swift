/// The ticks of a recorded session rebuilt from the recording, for `replay` and `export --format
/// ndjson`: the same reports in the same order as the live rows, the last one the exit row when the
/// target ended by itself. Recordings before the exit row had a sample of its own (the last sample
/// alive) give it as the last sample repeated, as those sessions wrote it.
///
/// Each tick also has what happened up to it: its frames (those that ended since the row before,
/// each with its weight and source; frames after the last row are the last row's), its actions
/// per label, the phases entered by then and those that ended since the row before, with the
/// memory they kept. A sink fed these ticks counts what it counted live (`SessionSummary`: the same
/// frames, FPS avg, janky and dropped as the live run's summary).
public struct RecordingRows {

    private let recording: Recording
    private let pid: Int32
    /// The frames and actions of each sample row, as indices into the recording's lists.
    private let framesOfRow: [[Int]]
    private let actionsOfRow: [[Int]]

    public init(_ recording: Recording) {
        self.recording = recording
        pid = Int32(recording.meta["target_pid"] ?? "") ?? 0
        let times = recording.samples.map(\.t)
        /// The first row at or after `t` (the last row for what came after every row).
        func row(at t: Double) -> Int {
            var low = 0, high = times.count - 1
            guard high >= 0 else { return 0 }
            if t > times[high] { return high }
            while low < high {
                let middle = (low + high) / 2
                if times[middle] < t { low = middle + 1 } else { high = middle }
            }
            return low
        }
        var frames = [[Int]](repeating: [], count: times.count), actions = [[Int]](repeating: [], count: times.count)
        if !times.isEmpty {
            for (index, frame) in recording.frames.enumerated() { frames[row(at: frame.t)].append(index) }
            for (index, action) in recording.actions.enumerated() { actions[row(at: action.t)].append(index) }
        }
        framesOfRow = frames
        actionsOfRow = actions
    }

    /// Rows in all: one a sample, and the exit row where it repeats the last sample.
    public var count: Int { recording.samples.count + (repeatsLastSample ? 1 : 0) }
    private var repeatsLastSample: Bool { recording.targetEnded != nil && recording.samples.last?.alive == true }
    /// The index of the exit row; nil when the target did not end by itself while recorded.
    public var exitRow: Int? { recording.targetEnded != nil && !recording.samples.isEmpty ? count - 1 : nil }

    /// Row `index` (0 ..< count), as the tick the live session wrote it from.
    public func row(_ index: Int) -> Tick {
        let samples = recording.samples
        let sample = samples[min(index, samples.count - 1)]
        let report = report(sample)
        let isExitRow = index == exitRow
        let time = UInt64(max(0, (report.elapsedSeconds * 1e9).rounded()).clampedInt)
        let read = Sample(monotonicNanoseconds: time, wallSeconds: report.wallSeconds, alive: report.alive,
                          cpuNanoseconds: report.cpuSecondsTotal.map { UInt64(max(0, ($0 * 1e9).rounded()).clampedInt) }, residentBytes: report.residentBytes,
                          virtualBytes: report.virtualBytes, proportionalBytes: report.proportionalBytes, threads: report.threads,
                          processCount: report.processCount)
        let own = index < samples.count ? index : -1   // the repeated exit row of an older file brings nothing new
        let frames = own < 0 ? [] : framesOfRow[own].map { position -> RecordedFrame in
            let frame = recording.frames[position]
            return RecordedFrame(time: UInt64(max(0, (frame.t * 1e9).rounded()).clampedInt), milliseconds: frame.milliseconds,
                                 source: frame.source ?? .events, weight: frame.weight)
        }
        var actions: [(label: String, count: Double)] = []
        for position in own < 0 ? [] : actionsOfRow[own] {
            let action = recording.actions[position]
            if let at = actions.firstIndex(where: { $0.label == action.label }) { actions[at].count += action.count } else { actions.append((action.label, action.count)) }
        }
        let (phases, ended) = phases(upTo: sample.t, after: own > 0 ? samples[own - 1].t : nil)
        var tick = Tick(monotonicNanoseconds: time, sample: read, report: report, events: sample.events,
                        commandName: sample.commandName ?? recording.meta["target_command"] ?? "",
                        status: isExitRow ? recording.targetEnded ?? .exited(code: nil, signal: nil) : .running, phases: phases,
                        endedPhases: own < 0 ? [] : ended, frames: frames, actions: actions)
        tick.sample.execsSeen = sample.execsSeen
        tick.isFinal = isExitRow
        return tick
    }

    /// The phases entered by `t`, each with its memory at entry and exit, and those that ended after
    /// `previous` (the row before), with what each kept: as the live session's history had them.
    private func phases(upTo t: Double, after previous: Double?) -> (PhaseHistory, [Tick.EndedPhase]) {
        var history = PhaseHistory()
        var ended: [Tick.EndedPhase] = []
        for (index, visit) in recording.phases.enumerated() where visit.t <= t + 1e-9 {
            history.enter(visit.name, at: visit.t, residentBytes: visit.entryBytes)
            // The visit before ended where this one began: its memory at exit is this one's at entry.
            if index > 0, visit.t > (previous ?? -.infinity) + 1e-9 {
                let before = recording.phases[index - 1]
                ended.append(Tick.EndedPhase(name: before.name, keptBytes: PhaseHistory.Record.kept(entry: before.entryBytes, exit: before.exitBytes)))
            }
        }
        return (history, ended)
    }

    /// The report of one recorded sample, as `MetricsStore` derived it live.
    public func report(_ sample: Recording.SampleRow) -> Report {
        var report = sample.report
        report.pid = pid
        return report
    }
}
