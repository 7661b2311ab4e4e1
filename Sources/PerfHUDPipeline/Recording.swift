#if canImport(Glibc)
import Glibc
#endif
import PerfHUDEvents
import PerfHUDStore

/// A recording read back (`report`, `export`): what `Recorder` wrote, in the units of the views.
/// A file damaged part-way is read up to the damage, with a warning; a file that is no recording
/// is a `.data` error (65), a missing one `.noInput` (66).
public struct Recording {
    /// One recorded tick: the target's figures and the event figures as the live row had them (read back
    /// through `Figure.all`), the phase and the command name at that tick.
    public struct SampleRow {
        public var figures: TargetFigures
        /// The event figures of the row; nil when the session had no event socket.
        public var events: EventSnapshot?
        public var phase: String?
        /// The target's name at this row (it follows an exec); format 1: the one at the start.
        public var commandName: String?
        /// Execs of the target seen by this row: rows after the first that name the command (a
        /// new name, or the same one exec'd again) count one each.
        public var execsSeen = 0

        public init(t: Double, cpuPercent: Double? = nil, residentBytes: UInt64? = nil, phase: String? = nil) {
            figures = TargetFigures(wallSeconds: 0, elapsedSeconds: t, pid: 0, alive: true, cpuPercent: cpuPercent, residentBytes: residentBytes,
                            processCount: 1)
            self.phase = phase
        }

        public var t: Double { get { figures.elapsedSeconds } set { figures.elapsedSeconds = newValue } }
        public var alive: Bool { get { figures.alive } set { figures.alive = newValue } }
        public var cpuPercent: Double? { get { figures.cpuPercent } set { figures.cpuPercent = newValue } }
        public var cpuMachinePercent: Double? { figures.cpuMachinePercent }
        public var cpuUserPercent: Double? { figures.cpuUserPercent }
        public var cpuSystemPercent: Double? { figures.cpuSystemPercent }
        public var residentBytes: UInt64? { get { figures.residentBytes } set { figures.residentBytes = newValue } }
        public var proportionalBytes: UInt64? { get { figures.proportionalBytes } set { figures.proportionalBytes = newValue } }
        public var virtualBytes: UInt64? { figures.virtualBytes }
        public var threads: Int? { figures.threads }
        public var processes: Int { figures.processCount }
        public var cpuSecondsTotal: Double? { figures.cpuSecondsTotal }
        public var residentTrend: Double? { figures.residentTrendBytesPerSecond }
        /// The row's wall-clock time: the start, its elapsed time and the skew recorded with it (format 2 on).
        public var wallSeconds: Double { figures.wallSeconds }
    }
    public struct Frame: Equatable {
        public var t: Double
        public var milliseconds: Double
        /// The frames it stands for: 1 / the sample rate its line was sent with (format 5 on; 1 before).
        public var weight: Double
        /// Where it came from (nil in a file that does not say).
        public var source: FrameSource?
        public init(t: Double, milliseconds: Double, weight: Double = 1, source: FrameSource? = nil) {
            self.t = t; self.milliseconds = milliseconds; self.weight = weight; self.source = source
        }
    }
    public struct Action: Equatable {
        public var t: Double
        public var label: String
        public var count: Double
        public init(t: Double, label: String, count: Double) { self.t = t; self.label = label; self.count = count }
    }
    public struct Phase: Equatable {
        public var name: String
        public var t: Double
        public var tExit: Double?
        public var entryBytes: UInt64?
        public var exitBytes: UInt64?
        public init(name: String, t: Double, tExit: Double?, entryBytes: UInt64?, exitBytes: UInt64?) {
            self.name = name; self.t = t; self.tExit = tExit; self.entryBytes = entryBytes; self.exitBytes = exitBytes
        }
    }

    public var meta: [String: String] = [:]
    /// The format the file was written in (`formatVersion` for one made here).
    public var format = Recording.formatVersion
    public var samples: [SampleRow] = []
    public var frames: [Frame] = []
    public var actions: [Action] = []
    public var phases: [Phase] = []
    /// What was damaged, one line each; the figures cover what came before.
    public var warnings: [String] = []

    public init() {}

    /// `PRAGMA user_version` of the files this version writes; readers accept up to it.
    /// 1: the first; 2 adds what the live rows need to be given back exactly (`replay`, `export
    /// ndjson`): the wall-clock skew, the command name when it changes, rejected events by reason,
    /// and how the target ended (meta `target_ended`). The machine-wide CPU and the 1 % low are
    /// derived from the recorded CPU and p99 as live (see `Resolution`), so they need no column.
    /// 3: `sample_log`'s columns are those of `Figure.all` (read by name); the exit row is a sample
    /// of its own (the target no longer alive) instead of the last sample repeated; `fps` is NULL
    /// before the first frame.
    /// 4: the "why" figures (waiting for a CPU, context switches, faults, I/O, descriptors, memory
    /// by kind, throttling, pressure, the leak trend) have columns; older files read them as null.
    /// 5: a frame's weight (`frame_log.weight`, 1 / its line's sample rate; NULL for 1), so a sampled
    /// frame counts in `report` as it did live; older files read every frame as 1. And `oom_score`
    /// has a column (`sample_log.oom_score`); older files read it as null.
    /// 6: the GPU figures have columns (`gpu_*`), the device's name a leading column written when it
    /// changes (`gpu_name_id`); older files read them as null.
    /// 7: the network figures have columns (`net_*`, `tcp_*`); older files read them as null.
    /// 8: the memory limit has a column (`sample_log.memory_limit_bytes`); older files read it as null.
    /// 9: a tree's memory counted once: the RSS sum has a column (`rss_sum_bytes`), PSS its age
    /// (`pss_age_ms`) and why it is unknown (`memory_unreported`); older files read them as null
    /// (their `rss_bytes` of a tree is the RSS sum).
    /// 10: a target's CPU quota (`cpu_limit_cores`) and a whole group's memory as the kernel counts
    /// it (`group_memory_bytes`, `group_working_set_bytes`, `group_anon_bytes`, `group_file_bytes`,
    /// `group_kernel_bytes`) have columns; older files read them as null.
    public static let formatVersion: Int64 = 10

    /// Whole milliseconds of a Unix time, rounded as `RowFormatter.rfc3339` rounds it.
    package static func milliseconds(unix seconds: Double) -> Int64 {
        let whole = seconds.rounded(.down)
        return Int64(whole) * 1000 + Int64(((seconds - whole) * 1000).rounded())
    }

    // The settings the session ran with; a value out of any sensible range (a damaged or forged
    // file) reads as the default, so no figure derived from it can overflow.
    public var refreshHz: Double { setting("refresh_hz", 1...10_000) ?? 60 }
    public var jankFactor: Double { setting("jank_factor", 1...1000) ?? 1.5 }
    public var actionThreshold: Double { setting("action_threshold", 0.001...1e9) ?? 20 }
    public var startedAtUnix: Double { setting("started_at_unix", 0...1e11) ?? 0 }
    /// Janky and dropped as the session counted them: against its own pace where it says so
    /// (`jank_reference` = `pace`, since `--refresh` became optional), else against the refresh.
    public var frameBudget: FrameBudget {
        FrameBudget(refreshHz: refreshHz, jankFactor: jankFactor, paced: meta["jank_reference"] == "pace")
    }
    public var tickSeconds: Double { setting("tick_seconds", 0.000_1...3600) ?? 0.1 }
    /// The session's `--alert`s (meta `alerts`, a line each); one that does not read (a damaged
    /// file, a later version's) is left out.
    public var alertRules: [AlertRule] {
        (meta["alerts"] ?? "").split(separator: "\n").compactMap { try? AlertRule(String($0)) }
    }
    public var onlineCPUs: Double { setting("online_cpus", 1...1_000_000) ?? 1 }

    private func setting(_ key: String, _ range: ClosedRange<Double>) -> Double? {
        meta[key].flatMap(Double.init).flatMap { range.contains($0) ? $0 : nil }
    }
    /// Whether the target ended by itself while recorded (not stopped by perfhud), and how.
    public var targetEnded: TargetStatus? {
        guard meta["target_ended"] == "1" else { return nil }
        return .exited(code: meta["exit_code"].flatMap { Int32($0) }, signal: meta["exit_signal"].flatMap { Int32($0) })
    }
}
