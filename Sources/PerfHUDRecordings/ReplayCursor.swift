import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// The replayed HUD's place in a recording: the row at the playhead, as the tick `RecordingRows`
/// rebuilds for it (its figures, events, phases, action log and ended phases), and the history the
/// graph draws (the rows of the last `--history`). Moving forward hands back the ticks passed, in
/// order, for the HUD's sink to consume as the live session's did (`ScreenSink`); a seek back, or
/// further than the history, rebuilds the history and hands back none: a seek does not replay
/// the log.
package struct ReplayCursor {
    package let recording: Recording
    private let rows: RecordingRows
    private let capacity: Int
    private let historySeconds: Double
    /// The last sample applied; -1 before the first.
    package private(set) var index = -1
    package private(set) var series: TimeSeries
    /// The tick of the row at `index`; nil before the first.
    package private(set) var tick: Tick?
    /// The phases as far as `index`, carried from row to row (each row's are those before and its own).
    private var phases = RecordingRows.Phases()

    /// - Parameter rows: the recording's rows, as `replay` made them once (their index of frames
    ///   and actions by row is a pass over the whole file).
    package init(rows: RecordingRows, capacity: Int, historySeconds: Double) {
        recording = rows.recording
        self.rows = rows
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

    /// Moves to the last sample at or before `time`. - Returns: the ticks passed moving forward by
    /// less than the history, in order; none after a seek back or further (the history rebuilt).
    package mutating func move(to time: Double) -> [Tick] {
        let target = sampleIndex(atOrBefore: time)
        guard target != index else { return [] }
        if target < index || target - index > capacity {
            rebuild(at: target)
            return []
        }
        var passed: [Tick] = []
        while index < target { passed.append(apply(index + 1)) }
        return passed
    }

    private mutating func rebuild(at target: Int) {
        series = TimeSeries(capacity: capacity)
        index = -1
        tick = nil
        guard target >= 0 else { phases = RecordingRows.Phases(); return }
        let from = max(0, sampleIndex(atOrBefore: recording.samples[target].t - historySeconds))
        phases = rows.phases(before: from)
        index = from - 1
        while index < target { _ = apply(index + 1) }
    }

    /// One row: its tick, and its sample in the history (coloured by the phase it was in).
    private mutating func apply(_ row: Int) -> Tick {
        let tick = rows.row(row, phases: &phases)
        let sample = recording.samples[row]
        series.append(time: sample.t, cpuPercent: sample.cpuPercent, residentBytes: sample.residentBytes.map { Double($0) },
                      proportionalBytes: sample.proportionalBytes.map { Double($0) }, userTicks: nil, systemTicks: nil,
                      phase: sample.phase.flatMap { tick.phases.names.firstIndex(of: $0) }.map { Double($0) })
        index = row
        self.tick = tick
        return tick
    }
}
