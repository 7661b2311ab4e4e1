/// The ticks of a recorded session rebuilt from the recording, for `replay` and `export --format
/// ndjson`: the same reports in the same order as the live rows, the last one the exit row when the
/// target ended by itself. Recordings before the exit row had a sample of its own (the last sample
/// alive) give it as the last sample repeated, as those sessions wrote it.
public struct RecordingRows {

    private let recording: Recording
    private let pid: Int32

    public init(_ recording: Recording) {
        self.recording = recording
        pid = Int32(recording.meta["target_pid"] ?? "") ?? 0
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
        var tick = Tick(monotonicNanoseconds: time, sample: read, report: report, events: sample.events,
                        commandName: sample.commandName ?? recording.meta["target_command"] ?? "",
                        status: isExitRow ? recording.targetEnded ?? .exited(code: nil, signal: nil) : .running, phases: PhaseHistory())
        tick.isFinal = isExitRow
        return tick
    }

    /// The report of one recorded sample, as `MetricsStore` derived it live.
    public func report(_ sample: Recording.SampleRow) -> Report {
        var report = sample.report
        report.pid = pid
        return report
    }
}
