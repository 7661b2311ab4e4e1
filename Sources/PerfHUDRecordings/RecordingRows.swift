import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// The ticks of a recorded session rebuilt from the recording, for `replay` and `export --format
/// ndjson`: the same reports in the same order as the live rows, the last one the exit row when the
/// target ended by itself. Recordings before the exit row had a sample of its own (the last sample
/// alive) give it as the last sample repeated, as those sessions wrote it.
///
/// Each tick also has what happened up to it: its frames (those that ended since the row before,
/// each with its weight and source; frames after the last row are the last row's), its actions
/// per label (also as its action log, which the replayed HUD shows), the phases entered by then and those that ended since the row before, with the
/// memory they kept. A sink fed these ticks counts what it counted live (`SessionSummary`: the same
/// frames, FPS avg, janky and dropped as the live run's summary).
public struct RecordingRows: Sequence {

    /// The recording the rows are rebuilt from.
    package let recording: Recording
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
        var phases = phases(before: index)
        return row(index, phases: &phases)
    }

    /// The phases as far as the row before `index`: that row's ended phases are those since.
    package func phases(before index: Int) -> Phases {
        var phases = Phases()
        let before = Swift.min(index, recording.samples.count) - 1
        if before >= 0 { _ = enterPhases(upTo: recording.samples[before].t, into: &phases) }
        return phases
    }

    /// Every row in order (`for tick in rows`): each tick's phases carried over from the row before,
    /// so the whole recording takes time linear in its length (`report`, `export`, `replay --output`).
    public struct Iterator: IteratorProtocol {
        package let rows: RecordingRows
        package var index = 0
        package var phases = Phases()
        public mutating func next() -> Tick? {
            guard index < rows.count else { return nil }
            defer { index += 1 }
            return rows.row(index, phases: &phases)
        }
    }

    public func makeIterator() -> Iterator { Iterator(rows: self) }

    /// The phase history as far as a row, and how many of the recording's visits it has entered.
    package struct Phases {
        package var history = PhaseHistory()
        package var entered = 0
    }

    /// Row `index`, its phases carried over from the row before (`phases`, left as far as this row).
    package func row(_ index: Int, phases: inout Phases) -> Tick {
        let samples = recording.samples
        let sample = samples[Swift.min(index, samples.count - 1)]
        let report = figures(sample)
        let isExitRow = index == exitRow
        let time = UInt64(Swift.max(0, (report.elapsedSeconds * 1e9).rounded()).clampedInt)
        var read = Sample(monotonicNanoseconds: time, wallSeconds: report.wallSeconds, alive: report.alive,
                          cpuNanoseconds: report.cpuSecondsTotal.map { UInt64(Swift.max(0, ($0 * 1e9).rounded()).clampedInt) }, residentBytes: report.residentBytes,
                          virtualBytes: report.virtualBytes, proportionalBytes: report.proportionalBytes, threads: report.threads,
                          processCount: report.processCount)
        read.memoryLimitBytes = report.memoryLimitBytes
        read.stopped = report.stopped
        let own = index < samples.count ? index : -1   // the repeated exit row of an older file brings nothing new
        let frames = own < 0 ? [] : framesOfRow[own].map { position -> RecordedFrame in
            let frame = recording.frames[position]
            return RecordedFrame(time: UInt64(Swift.max(0, (frame.t * 1e9).rounded()).clampedInt), milliseconds: frame.milliseconds,
                                 source: frame.source ?? .events, weight: frame.weight)
        }
        var actions: [(label: String, count: Double)] = []
        var log: [ActionLogEntry] = []
        for position in own < 0 ? [] : actionsOfRow[own] {
            let action = recording.actions[position]
            if let at = actions.firstIndex(where: { $0.label == action.label }) { actions[at].count += action.count } else { actions.append((action.label, action.count)) }
            // The action log as the recording has it: each label's count of the tick, in order.
            log.append(ActionLogEntry(label: action.label, count: action.count))
        }
        // The last row has every phase entered (one that arrived after the last sample too).
        let ended = enterPhases(upTo: own == samples.count - 1 ? .infinity : sample.t, into: &phases)
        var tick = Tick(monotonicNanoseconds: time, sample: read, figures: report, events: sample.events,
                        commandName: sample.commandName ?? recording.meta["target_command"] ?? "",
                        status: isExitRow ? recording.targetEnded ?? .exited(code: nil, signal: nil) : .running, phases: phases.history,
                        endedPhases: own < 0 ? [] : ended, everyFrame: EveryFrame(frames: frames, actions: actions), log: log)
        tick.sample.execsSeen = sample.execsSeen
        tick.isFinal = isExitRow
        return tick
    }

    /// Enters the visits that began by `t` into `phases`, each with its memory at entry and at exit
    /// as recorded (the live history's), and returns those that ended meanwhile, with what each kept.
    private func enterPhases(upTo t: Double, into phases: inout Phases) -> [Tick.EndedPhase] {
        let visits = recording.phases
        var ended: [Tick.EndedPhase] = []
        while phases.entered < visits.count, visits[phases.entered].t <= t + 1e-9 {
            let index = phases.entered
            phases.history.enter(visits[index].name, at: visits[index].t, residentBytes: visits[index].entryBytes)
            if index > 0 {
                // The visit before ended where this one began.
                let before = visits[index - 1]
                phases.history.setExit(ofRecord: 1, at: before.tExit, residentBytes: before.exitBytes)
                ended.append(Tick.EndedPhase(name: before.name, keptBytes: PhaseHistory.Record.kept(entry: before.entryBytes, exit: before.exitBytes)))
            }
            phases.entered += 1
        }
        // The newest visit's exit once it is past (a file whose last visit was closed without another).
        if phases.entered > 0, let exit = visits[phases.entered - 1].tExit, exit <= t + 1e-9 {
            let last = visits[phases.entered - 1]
            phases.history.setExit(ofRecord: 0, at: exit, residentBytes: last.exitBytes)
        }
        return ended
    }

    /// The target's figures of one recorded sample, as `MetricsStore` derived it live.
    public func figures(_ sample: Recording.SampleRow) -> TargetFigures {
        var report = sample.figures
        report.pid = pid
        return report
    }
}
