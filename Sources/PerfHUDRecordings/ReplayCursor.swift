import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// The HUD's state at a point of a recording: the history the graph draws (the samples of the
/// last `--history`), the phases entered so far, and what was passed on the way there (actions
/// for the log, phases that ended) — as the live session built them tick by tick.
package struct ReplayCursor {
    package let recording: Recording
    private let capacity: Int
    private let historySeconds: Double
    /// The last sample applied; -1 before the first.
    package private(set) var index = -1
    package private(set) var series: TimeSeries
    package private(set) var phases = PhaseHistory()
    /// The next of `recording.phases` to enter, and of `recording.actions` to pass.
    private var nextPhase = 0, nextAction = 0

    /// What moving forward passed: actions as log entries, phases that ended.
    package struct Passed {
        package var actions: [ActionLogEntry] = []
        package var endedPhases: [PhaseHistory.Record] = []
    }

    package init(recording: Recording, capacity: Int, historySeconds: Double) {
        self.recording = recording
        self.capacity = max(2, capacity)
        self.historySeconds = historySeconds
        series = TimeSeries(capacity: self.capacity)
    }

    package var sample: Recording.SampleRow? { index >= 0 ? recording.samples[index] : nil }
    package var isAtLastSample: Bool { index == recording.samples.count - 1 }

    /// The last sample at or before `time` (by binary search); -1 when every one is later.
    func sampleIndex(atOrBefore time: Double) -> Int {
        var low = 0, high = recording.samples.count - 1, found = -1
        while low <= high {
            let middle = (low + high) / 2
            if recording.samples[middle].t <= time + 1e-9 { found = middle; low = middle + 1 } else { high = middle - 1 }
        }
        return found
    }

    /// Moves to the last sample at or before `time`. Forward by less than the history, sample by
    /// sample, returning what was passed; backward or further, rebuilt from the samples of the
    /// history before `time` (nothing is returned: a seek does not replay the log).
    package mutating func move(to time: Double) -> Passed {
        let target = sampleIndex(atOrBefore: time)
        guard target != index else { return Passed() }
        if target < index || target - index > capacity {
            rebuild(at: target)
            return Passed()
        }
        var passed = Passed()
        while index < target { apply(index + 1, passed: &passed) }
        return passed
    }

    private mutating func rebuild(at target: Int) {
        series = TimeSeries(capacity: capacity)
        phases = PhaseHistory()
        nextPhase = 0
        index = -1
        guard target >= 0 else { nextAction = 0; return }
        let from = max(0, sampleIndex(atOrBefore: recording.samples[target].t - historySeconds))
        index = from - 1
        nextAction = recording.actions.count   // set below: the log is not replayed
        var ignored = Passed()
        while index < target { apply(index + 1, passed: &ignored) }
        let now = recording.samples[target].t
        nextAction = recording.actions.firstIndex { $0.t > now + 1e-9 } ?? recording.actions.count
    }

    /// One sample: the phases entered up to it, its row in the history, the actions of its tick.
    private mutating func apply(_ row: Int, passed: inout Passed) {
        let sample = recording.samples[row]
        while nextPhase < recording.phases.count, recording.phases[nextPhase].t <= sample.t + 1e-9 {
            let phase = recording.phases[nextPhase]
            let ending = phases.current
            phases.enter(phase.name, at: phase.t, residentBytes: phase.entryBytes)
            if ending != nil, let ended = phases.records.dropLast().last { passed.endedPhases.append(ended) }
            nextPhase += 1
        }
        series.append(time: sample.t, cpuPercent: sample.cpuPercent, residentBytes: sample.residentBytes.map { Double($0) },
                      proportionalBytes: sample.proportionalBytes.map { Double($0) }, userTicks: nil, systemTicks: nil,
                      phase: sample.phase.flatMap { phases.names.firstIndex(of: $0) }.map { Double($0) })
        while nextAction < recording.actions.count, recording.actions[nextAction].t <= sample.t + 1e-9 {
            let action = recording.actions[nextAction]
            passed.actions.append(ActionLogEntry(label: action.label, count: action.count))
            nextAction += 1
        }
        index = row
    }
}
