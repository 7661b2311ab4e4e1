import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// Reads the GPUs once a second on a thread of its own, never on the tick: NVML calls take the
/// driver's lock (MangoHud measured 4.5 ms for one and saw games stutter), and a sick driver can
/// hold a call for seconds. A tick takes the last published reading (`latest`) and never waits;
/// a reading older than `staleNanoseconds` is shown as stale, not as current (`GPUWatch`).
///
/// One monitor a perfhud process (`shared`), for every target (the daemon's many): the targets say
/// which processes they are (`want`), whose DRM descriptors are read; NVML lists every process of
/// its devices at once. The thread is detached and never joined: a call stuck in a driver cannot
/// hold perfhud's exit. It ends by itself where there is no GPU driver at all.
public final class GPUMonitor: @unchecked Sendable {
    public static let staleNanoseconds: UInt64 = 3_000_000_000
    static let retryNanoseconds: UInt64 = 10_000_000_000

    /// Whether what was read at `readAt` (or asked since then, unanswered) is too old to show as current.
    static func isStale(since readAt: UInt64, at now: UInt64) -> Bool {
        now > readAt && now - readAt > staleNanoseconds
    }
    public static let shared = GPUMonitor()

    private let mutex = Mutex()
    private var reading: GPUReading?
    private var started = false
    private var wanted: [ObjectIdentifier: [Int32]] = [:]
    private var passes: UInt64 = 0
    private var lastReadAt: UInt64 = 0

    /// The last reading if its sequence is not `seen` (nil when unchanged or none yet), and when it was read.
    package func latest(after seen: UInt64) -> (reading: GPUReading?, readAt: UInt64?) {
        // The tick's path: two integers compared; the reading copied out only when new.
        mutex.withLock {
            guard passes != 0 else { return (nil, nil) }
            return (passes == seen ? nil : reading, lastReadAt)
        }
    }

    /// The devices of the last reading, none when it is stale (the daemon's per-GPU metrics).
    public func devices(at now: UInt64 = monotonicNanoseconds()) -> [GPUDevice] {
        mutex.withLock {
            guard let reading, !Self.isStale(since: reading.readAt, at: now) else { return [] }
            return reading.devices
        }
    }

    /// The processes `owner` is: their DRM descriptors are read at the next pass.
    func want(_ pids: [Int32], for owner: ObjectIdentifier) {
        mutex.withLock { wanted[owner] = pids }
    }

    package func forget(_ owner: ObjectIdentifier) { _ = mutex.withLock { wanted.removeValue(forKey: owner) } }

    /// Starts the thread, once.
    package func start() {
        let first = mutex.withLock { () -> Bool in
            defer { started = true }
            return !started
        }
        guard first else { return }
        // Where there is surely no GPU driver, it is said from the first row, without a thread:
        // no DRM device, no NVIDIA device node, and no NVML library to load (a failed dlopen costs
        // ~0.1 ms; one that loads is kept for the thread).
        if access("/dev/dri", F_OK) != 0 && access("/dev/nvidiactl", F_OK) != 0 && !NVMLReader.libraryExists {
            var none = GPUReading()
            none.unreported = GPUUnreported.noDriver
            publish(none, last: true)
            return
        }
        if !startDetachedThread({ self.run() }) {
            publish({ var none = GPUReading(); none.unreported = GPUUnreported.noThread; return none }(), last: true)
        }
    }

    private func run() {
        perfhud_name_thread("perfhud-gpu")
        var nvml = NVMLReader()
        var lastInit = monotonicNanoseconds()
        let drm = DRMReader()
        while true {
            let began = monotonicNanoseconds()
            // A driver that would not answer (not loaded yet: a daemon started before it at boot) is
            // asked again every `retryNanoseconds`.
            if nvml?.unreported != nil, began &- lastInit >= Self.retryNanoseconds {
                nvml = NVMLReader()
                lastInit = began
            }
            var next = GPUReading()
            let noReader = nvml == nil && drm == nil   // nothing to ask: this reading is the last
            if noReader {
                next.unreported = GPUUnreported.noDriver
            } else {
                nvml?.read(into: &next, now: began)
                let pids = mutex.withLock { Array(Set(wanted.values.joined())) }
                drm?.read(pids: pids, into: &next, now: began)
                if next.devices.isEmpty { next.unreported = nvml?.unreported ?? GPUUnreported.noDevice }
            }
            publish(next, last: noReader)
            if noReader { return }
            let spent = monotonicNanoseconds() &- began
            if spent < 1_000_000_000 { usleep(UInt32((1_000_000_000 - spent) / 1000)) }
        }
    }

    /// `last`: no reading will follow (no GPU driver at all, no thread): it stays true, never stale
    /// (a host without a GPU said `stale` after 3 s, while its rows had said `no GPU driver`).
    private func publish(_ next: GPUReading, last: Bool = false) {
        var next = next
        next.readAt = monotonicNanoseconds()
        mutex.withLock {
            passes += 1
            next.sequence = passes
            lastReadAt = last ? Self.neverStale : next.readAt
            reading = next
        }
    }

    /// The time of a reading no later one replaces: `isStale` is never true of it.
    static let neverStale = UInt64.max
}

/// One target's view of the GPU monitor (`ProcessSampler.gpu`): its figures, attributed again when a
/// new reading is published (once a second), and stale past `GPUMonitor.staleNanoseconds`.
public final class GPUWatch {
    private let monitor: GPUMonitor
    private var seen: UInt64 = 0
    private var figures: GPUFiguresBox
    /// Since when it waits: a driver that never answers its first call is stale from then too.
    private let startedAt = monotonicNanoseconds()

    public init(monitor: GPUMonitor = .shared) {
        self.monitor = monitor
        var notYet = GPUFigures()
        notYet.unreportedReason = GPUUnreported.notReadYet
        figures = GPUFiguresBox(notYet)
        monitor.start()
    }

    deinit { monitor.forget(ObjectIdentifier(self)) }

    private static let stale: GPUFiguresBox = {
        var stale = GPUFigures()
        stale.unreportedReason = GPUUnreported.stale
        return GPUFiguresBox(stale)
    }()

    /// The figures of the processes `pids()` lists (asked only when a new reading came).
    package func figures(at now: UInt64, pids: () -> [Int32]) -> GPUFiguresBox {
        let (reading, readAt) = monitor.latest(after: seen)
        if let reading {
            seen = reading.sequence
            let members = pids()
            monitor.want(members, for: ObjectIdentifier(self))
            figures = GPUFiguresBox(reading.figures(of: members))
        }
        return GPUMonitor.isStale(since: readAt ?? startedAt, at: now) ? Self.stale : figures
    }
}
