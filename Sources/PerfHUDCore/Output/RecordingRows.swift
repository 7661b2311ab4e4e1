/// The rows `--output json|plain` printed live, rebuilt from a recording, for `replay --output`
/// and `export --format ndjson`: the same reports in the same order, the last one repeated with
/// the exit status when the target ended by itself (as the live session writes it).
public struct RecordingRows {
    public struct Row {
        public var report: Report
        public var commandName: String
        public var status: TargetStatus
        public var events: EventSnapshot?
    }

    private let recording: Recording
    private let pid: Int32

    public init(_ recording: Recording) {
        self.recording = recording
        pid = Int32(recording.meta["target_pid"] ?? "") ?? 0
    }

    /// Rows in all: one a sample, and the exit row.
    public var count: Int { recording.samples.count + (hasExitRow ? 1 : 0) }
    private var hasExitRow: Bool { recording.targetEnded != nil && !recording.samples.isEmpty }

    /// Row `index` (0 ..< count).
    public func row(_ index: Int) -> Row {
        let samples = recording.samples
        let sample = samples[min(index, samples.count - 1)]
        let isExitRow = index >= samples.count
        return Row(report: report(sample), commandName: sample.commandName ?? recording.meta["target_command"] ?? "",
                   status: isExitRow ? recording.targetEnded ?? .exited(code: nil, signal: nil) : .running, events: sample.events)
    }

    /// The report of one recorded sample, as `MetricsStore` derived it live.
    public func report(_ sample: Recording.SampleRow) -> Report {
        Report(wallSeconds: sample.wallSeconds ?? recording.startedAtUnix + sample.t, elapsedSeconds: sample.t, pid: pid,
               alive: sample.alive, cpuPercent: sample.cpuPercent, cpuMachinePercent: sample.cpuMachinePercent,
               cpuUserPercent: sample.cpuUserPercent, cpuSystemPercent: sample.cpuSystemPercent, residentBytes: sample.residentBytes,
               residentTrendBytesPerSecond: sample.residentTrend, proportionalBytes: sample.proportionalBytes,
               virtualBytes: sample.virtualBytes, threads: sample.threads, processCount: sample.processes,
               cpuSecondsTotal: sample.cpuSecondsTotal)
    }
}
