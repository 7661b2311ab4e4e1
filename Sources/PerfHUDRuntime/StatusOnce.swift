#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDStore
import PerfHUDPipeline

/// `perfhud status PID` without `--follow`: one sample, a status bar's answer. Its rates are over
/// the time since the last call for the same process (a small state file in perfhud's private
/// runtime directory), not since the process started: a bar that asks every few seconds shows what
/// the process does now, as a `--follow` row would. The first call has no interval and says so.
/// The figures are the session's: the same sampler, `MetricsStore` and `AlertTracker`, fed the
/// sample of the call before and this one.
public enum StatusOnce {
    public struct Answer {
        public let tick: Tick
        /// Why a figure is missing (the first call: no interval yet).
        public let note: String?
    }

    /// What the first call says in place of its rates.
    public static let noInterval = "no interval yet: rates from the next call, over the time since this one"

    /// Why one answer has no GPU and network figures.
    public static let notRead = "not read by one status answer (--follow reads them)"

    /// - Throws: `PerfHUDError` `.noInput` (no such process) or `.noPermission`.
    public static func answer(pid: Int32, alerts rules: [AlertRule]) throws -> Answer {
        let sampler = try ProcessSampler(pid: pid)
        sampler.collectsActivity = false
        sampler.readsGroupLimits = false
        var sample = sampler.sample()
        guard sample.alive else { throw PerfHUDError(.noInput, "no process with PID \(pid)") }
        // A PID used again by another process is another state: its start time is in the name.
        let path = (try? EventReceiver.privateDirectory().path).map { $0 + "/status-\(pid)-\(sample.startTicks ?? 0)" }
        let previous = path.flatMap(State.init(path:))
        let start = previous?.startNanoseconds ?? sample.monotonicNanoseconds
        var store = MetricsStore(pid: pid, capacity: 2, startNanoseconds: start)
        // No window from the process's start: the CPU since then is not what it does now.
        sample.processStartNanoseconds = nil
        if let previous, previous.monotonicNanoseconds < sample.monotonicNanoseconds {
            store.record(Sample(monotonicNanoseconds: previous.monotonicNanoseconds, wallSeconds: 0, alive: true, cpuNanoseconds: previous.cpuNanoseconds))
        }
        var figures = store.record(sample)
        // What one answer does not read says so (they need a watch that lasts: `--follow`), never 0.
        var gpu = GPUFigures()
        gpu.unreportedReason = notRead
        figures.gpuBox = GPUFiguresBox(gpu)
        figures.netBox = NetworkFiguresBox(NetworkFigures(unreported: notRead))
        var tick = Tick(monotonicNanoseconds: sample.monotonicNanoseconds, sample: sample, figures: figures, events: nil,
                        commandName: sampler.commandName ?? "", status: .running, phases: PhaseHistory())
        var pending: [Double?] = []
        if !rules.isEmpty {
            var tracker = AlertTracker(AlertRules(rules))
            // Carried only for the same alerts in the same order: another bar's call with other alerts starts afresh.
            if previous?.alertTexts == rules.map(\.text) { tracker.pendingSince = previous?.alertSince ?? [] }
            tracker.apply(to: &tick)
            pending = tracker.pendingSince
        }
        if let path {
            State(startNanoseconds: start, monotonicNanoseconds: sample.monotonicNanoseconds, cpuNanoseconds: sample.cpuNanoseconds ?? 0,
                  alertTexts: rules.map(\.text), alertSince: pending).save(to: path)
        }
        return Answer(tick: tick, note: previous == nil ? noInterval : nil)
    }

    /// What one call leaves for the next: lines of text, written whole (a temporary file renamed
    /// over the last), read back refusing anything that does not parse (a damaged file is a first call).
    struct State {
        var startNanoseconds: UInt64
        var monotonicNanoseconds: UInt64
        var cpuNanoseconds: UInt64
        var alertTexts: [String]
        var alertSince: [Double?]

        init(startNanoseconds: UInt64, monotonicNanoseconds: UInt64, cpuNanoseconds: UInt64, alertTexts: [String], alertSince: [Double?]) {
            self.startNanoseconds = startNanoseconds
            self.monotonicNanoseconds = monotonicNanoseconds
            self.cpuNanoseconds = cpuNanoseconds
            self.alertTexts = alertTexts
            self.alertSince = alertSince
        }

        init?(path: String) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: 16384)
            guard case .success(let count) = SystemCall.read(descriptor, into: &bytes), count > 0, count < bytes.count else { return nil }
            let lines = String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let head = lines.first?.split(separator: " ") ?? []
            guard head.count == 4, head[0] == "perfhud-status-1", let start = UInt64(head[1]), let now = UInt64(head[2]), let cpu = UInt64(head[3]),
                  start <= now, now <= PerfHUDSupport.monotonicNanoseconds() else { return nil }
            (startNanoseconds, monotonicNanoseconds, cpuNanoseconds) = (start, now, cpu)
            alertTexts = []
            alertSince = []
            // An alert a line: its seconds since (or -), a space, its text.
            for line in lines.dropFirst() where !line.isEmpty {
                guard let space = line.firstIndex(of: " ") else { return nil }
                let since = line[..<space]
                guard since == "-" || Double(since) != nil else { return nil }
                alertSince.append(Double(since))
                alertTexts.append(String(line[line.index(after: space)...]))
            }
        }

        func save(to path: String) {
            var text = "perfhud-status-1 \(startNanoseconds) \(monotonicNanoseconds) \(cpuNanoseconds)\n"
            for (index, alert) in alertTexts.enumerated() where !alert.contains("\n") {
                text += (index < alertSince.count ? alertSince[index].map { String($0) } ?? "-" : "-") + " " + alert + "\n"
            }
            let temporary = path + ".\(getpid())"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return }
            let bytes = Array(text.utf8)
            let written = bytes.withUnsafeBytes { SystemCall.write(descriptor, $0) }
            close(descriptor)
            // A full disk loses only the interval: the next call is a first call again, never a wrong rate.
            if case .success(let count) = written, count == bytes.count { rename(temporary, path) } else { unlink(temporary) }
        }
    }
}
