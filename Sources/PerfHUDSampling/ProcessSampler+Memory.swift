import PerfHUDSupport

/// A process's memory as the sampler reads it every tick: its `statm`, or a live thread's once
/// its main thread has ended.
extension ProcessSampler {
    /// `statm` of `process`, read into the buffer and parsed; nil where it cannot be read.
    func readStatm(of process: TrackedProcess) -> ProcStatm? {
        guard case .success(let count) = process.statm.read(into: buffer) else { return nil }
        return ProcParser.statm(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// The process's `statm`: its own, or, once its main thread has ended while others run on,
    /// a live thread's (`StandInThread`), found again when that one ends.
    @inline(__always)
    func memory(of process: TrackedProcess, stat: ProcStat) -> ProcStatm? {
        if stat.leaderEnded {
            if let statm = process.standIn?.readStatm(buffer: buffer) { return statm }
            process.standIn = StandInThread.find(in: process.pid, buffer: buffer)
            // Its memory by kind and its descriptors too, from now on (the leader's read as empty).
            process.activity?.readProcessFiles(through: process.standIn?.path)
            if let statm = process.standIn?.readStatm(buffer: buffer) { return statm }
        } else if process.standIn != nil {
            process.standIn = nil
            process.activity?.readProcessFiles(through: nil)
        }
        let statm = readStatm(of: process)
        // The main thread may have ended between the `stat` read and this one: its `statm` then
        // reads empty though the process runs on, and the row said RSS 0 (a fresh CI run caught
        // it). A live thread's is read instead; the next tick's `stat` says the leader ended.
        if let statm, statm.sizePages == 0, stat.threads > 1, !process.isKernelThread,
           let live = StandInThread.find(in: process.pid, buffer: buffer)?.readStatm(buffer: buffer) {
            return live
        }
        return statm
    }
}
