import PerfHUDRecordings

/// `--record FILE` for the daemon (one target): the recording, and which process its metadata names.
///
/// The daemon's target may restart under another PID; the recording goes on, and its metadata
/// follows the process being recorded now (the last one wins in the file).
final class DaemonRecording {
    private var recorder: Recorder?
    /// The PID the metadata names (0: none yet).
    private var recordedPID: Int32 = 0

    /// Whether a recording is being written: its rows are full rows, every tick.
    var isRecording: Bool { recorder != nil }

    /// Opens the recording when `--record` asks for one: before READY=1, so a path that cannot
    /// be written stops the start.
    func open(configuration: DaemonConfiguration, target: DaemonTarget?, log: DaemonLog) throws {
        guard let path = configuration.recordPath, let target else { return }
        let meta = Recorder.meta(version: configuration.version, pid: 0, command: "", commandLine: target.spec.selector.description,
                                 tickNanoseconds: configuration.watch.tickNanoseconds, events: configuration.watch.events)
        let opened = try Recorder(path: path, meta: meta, startNanoseconds: target.watcher.store.startNanoseconds) { [log] in log.warning($0) }
        opened.maxBytes = configuration.recordMaxBytes
        recorder = opened
    }

    /// Records the target's latest tick, if recording.
    func record(_ target: DaemonTarget) {
        guard let recorder, let latest = target.latest else { return }
        if let pid = target.group.pids.first, pid != recordedPID {
            recordedPID = pid
            recorder.setMeta("target_pid", String(pid))
            recorder.setMeta("target_command", target.group.commandName)
        }
        recorder.consume(latest)
    }

    func close() {
        recorder?.close()
    }
}
