import PerfHUDPipeline
import PerfHUDRecordings

/// `--record FILE` for the daemon (one target): the recording, and which process its metadata names.
///
/// The daemon's target may restart under another PID; the recording goes on, and its metadata
/// follows the process being recorded now (the last one wins in the file).
final class DaemonRecording: TickSink {
    static var readsEveryFrame: Bool { Recorder.readsEveryFrame }
    private var recorder: Recorder?
    /// The PID the metadata names (0: none yet).
    private var recordedPID: Int32 = 0

    /// Whether a recording is being written: its rows are full rows, every tick.
    var isRecording: Bool { recorder != nil }

    /// Opens the recording when `--record` asks for one: before READY=1, so a path that cannot
    /// be written stops the start. `selector`: how the target was named (the recording's command
    /// line); `startNanoseconds`: when its watch began (the recording's times count from it).
    func open(configuration: DaemonConfiguration, selector: String, startNanoseconds: UInt64, log: DaemonLog) throws {
        guard let path = configuration.recordPath else { return }
        let meta = Recorder.meta(version: configuration.version, pid: 0, command: "", commandLine: selector,
                                 tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events)
        let opened = try Recorder(path: path, meta: meta, startNanoseconds: startNanoseconds) { [log] in log.warning($0) }
        opened.maxBytes = configuration.recordMaxBytes
        recorder = opened
    }

    /// Records a tick of the target, if recording: an absent target's adds the frames, actions and
    /// phases that came while it was away, and no row.
    func consume(_ tick: Tick) {
        guard let recorder else { return }
        if tick.status != .absent, tick.figures.pid != 0, tick.figures.pid != recordedPID {
            recordedPID = tick.figures.pid
            recorder.setMeta("target_pid", String(tick.figures.pid))
            recorder.setMeta("target_command", tick.commandName)
        }
        recorder.consume(tick)
    }

    func close() {
        recorder?.close()
    }
}
