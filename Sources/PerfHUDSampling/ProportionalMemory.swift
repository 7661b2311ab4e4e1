#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// The PSS of a target's processes (`smaps_rollup` Pss), each process's own reading kept with the
/// moment it was read, summed at every sample over the processes there are then.
///
/// Reading `smaps_rollup` walks the process's page tables: 0.05 ms for a small C program, 0.3 ms
/// for python, 1–2 ms for a busy PostgreSQL backend, 20 ms for 2 GiB. So a pass reads within a
/// budget of 5 % of a core (a bucket of 50 ms that fills at 50 ms a second: PostgreSQL and 8
/// pgbench clients, 14 processes, fit): a process never read
/// first, then the oldest reading, a process whose RSS moved since its own first among its like. Where every process fits (a tree of a few dozen
/// ordinary processes), every pass reads them all and the figure is the row's own; where not, the
/// sample says how old the oldest reading in the sum is (`Sample.proportionalReadAt`), never a
/// figure of one moment passed off as another's.
///
/// A process that ended between two reads drops out of the sum (its pages are gone with it); the
/// sum is null only with a reason (`MemoryUnreported`): a process whose file may not be read.
final class ProportionalMemory {
    /// What a sample takes from it.
    struct Reading: Equatable {
        var bytes: UInt64?
        /// When the oldest reading in `bytes` was made (CLOCK_MONOTONIC).
        var readAt: UInt64?
        /// Why `bytes` is nil.
        var unreported: String?
    }

    /// The bucket's size and refill, nanoseconds of reading per second of wall time: 5 % of a core.
    /// (3 % left PostgreSQL's 14 processes under load 2 s old in half the rows on a busy 2-core
    /// machine: its backends' page tables cost 2–4 ms each to walk there.)
    static let budgetNanoseconds: Int64 = 50_000_000
    private var allowance = budgetNanoseconds
    private var refilledAt: UInt64 = 0
    private var lastPass: UInt64 = 0
    /// The processes in the order a pass reads them (reused: no allocation per pass).
    private var order: [ProcessSampler.TrackedProcess] = []

    /// Reads the processes due (at most once a second, by `cadence`), then sums every process's
    /// last reading. - Parameters: root, others: the target's processes now (no root once it is gone).
    func read(root: ProcessSampler.TrackedProcess?, others: [ProcessSampler.TrackedProcess], now: UInt64, cadence: SampleCadence,
              buffer: UnsafeMutableRawBufferPointer) -> Reading {
        if cadence.isDue(lastRead: lastPass, every: 1_000_000_000, now: now) {
            lastPass = now
            pass(root: root, others: others, now: now, buffer: buffer)
        } else {
            // Between passes, a process without a reading (new, or just exec'd) is read at once
            // (the sum would be short of it until the next pass), and one whose RSS moved by an
            // eighth since its reading while the budget lasts.
            if let root, needsReadingNow(root) { readCharged(root, now: now, buffer: buffer) }
            for process in others where needsReadingNow(process) { readCharged(process, now: now, buffer: buffer) }
        }
        var reading = Reading(bytes: 0, readAt: nil, unreported: nil)
        func add(_ process: ProcessSampler.TrackedProcess) {
            if let refusal = process.proportionalRefusal { reading.unreported = refusal }
            // Never read (it came after the last pass) or gone since: not in the sum, as a process
            // that ended is not; the next pass reads a new one first.
            guard let own = process.proportional else { return }
            reading.bytes = reading.bytes.map { $0 &+ own.bytes }
            reading.readAt = min(reading.readAt ?? own.readAt, own.readAt)
        }
        if let root { add(root) }
        for process in others { add(process) }
        if reading.unreported != nil { return Reading(bytes: nil, readAt: nil, unreported: reading.unreported) }
        if reading.readAt == nil { reading.readAt = now }
        return reading
    }

    private func pass(root: ProcessSampler.TrackedProcess?, others: [ProcessSampler.TrackedProcess], now: UInt64,
                      buffer: UnsafeMutableRawBufferPointer) {
        if refilledAt != 0 {
            let earned = Int64(clamping: (now &- refilledAt) / 20)
            allowance = min(Self.budgetNanoseconds, allowance &+ earned)
        }
        refilledAt = now
        order.removeAll(keepingCapacity: true)
        if let root { order.append(root) }
        order.append(contentsOf: others)
        // Never read first, then the oldest reading, one whose RSS moved since taken as two
        // seconds older than it is: first among its like, but a process that stays still is not
        // left out for good by many that move.
        order.sort { $0.proportionalPriority < $1.proportionalPriority }
        for process in order {
            // A process never read is read whatever the budget: else it would be missing from the sum.
            guard allowance > 0 || process.proportional == nil else { break }
            readCharged(process, now: now, buffer: buffer)
        }
    }

    private func needsReadingNow(_ process: ProcessSampler.TrackedProcess) -> Bool {
        guard process.proportionalRefusal == nil else { return false }
        guard process.proportional != nil else { return true }
        let (then, now) = (process.residentPagesAtProportionalRead, process.lastResidentPages)
        return allowance > 0 && (now > then ? now - then : then - now) > max(then / 8, 64)
    }

    /// Reads one process, its cost taken from the budget.
    private func readCharged(_ process: ProcessSampler.TrackedProcess, now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        // Charged the CPU time it took, not the wall time: on a busy machine a read waits for a
        // CPU, which costs nobody anything.
        let started = threadCPUNanoseconds()
        read(process, now: now, buffer: buffer)
        allowance &-= Int64(clamping: threadCPUNanoseconds() &- started)
    }

    private func read(_ process: ProcessSampler.TrackedProcess, now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        let path = process.memoryPath + "/smaps_rollup"
        if process.smapsRollup == nil {
            switch KeptOpenFile.open(path) {
            case .success(let file): process.smapsRollup = file
            case .failure(let error) where error.code == EMFILE || error.code == ENFILE:
                // Over the budget of descriptors kept open: read it once and let it go.
                switch KeptOpenFile.read(path, into: buffer) {
                case .success(let count): note(process, count: count, now: now, buffer: buffer)
                case .failure(let error): fail(process, error)
                }
                return
            case .failure(let error): fail(process, error); return
            }
        }
        guard let file = process.smapsRollup, case .success(let count) = file.read(into: buffer) else {
            process.smapsRollup?.close(); process.smapsRollup = nil
            // Gone (ESRCH) or in the middle of an exec: out of the sum until read again.
            process.proportional = nil
            return
        }
        note(process, count: count, now: now, buffer: buffer)
    }

    private func note(_ process: ProcessSampler.TrackedProcess, count: Int, now: UInt64, buffer: UnsafeMutableRawBufferPointer) {
        // Kernel threads and processes without memory (a zombie) report an empty rollup: 0 is right.
        let bytes = ProcParser.proportionalSetSize(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) ?? 0
        process.proportional = (bytes, now)
        process.proportionalRefusal = nil
        process.residentPagesAtProportionalRead = process.lastResidentPages
    }

    private func fail(_ process: ProcessSampler.TrackedProcess, _ error: SystemError) {
        process.proportional = nil
        switch error.code {
        case EACCES, EPERM: process.proportionalRefusal = MemoryUnreported.noPermission
        case EMFILE, ENFILE: process.proportionalRefusal = MemoryUnreported.noDescriptors
        default: process.proportionalRefusal = nil   // gone: ENOENT, ESRCH
        }
    }
}

/// Why a target's PSS (and a tree's memory counted once, which is its PSS) is unknown
/// (`memory_unreported_reason`): a fixed list (`codes`, append only), recorded as a code.
public enum MemoryUnreported {
    public static let noPermission = "PSS may not be read: smaps_rollup of a process of the target needs ptrace access (another user's process: run as its user or as root)"
    public static let noDescriptors = "PSS not read: no file descriptor left (the descriptor limit)"
    package static let codes = ReasonCodes("memory", [noPermission, noDescriptors])
}

extension ProcessSampler.TrackedProcess {
    /// A pass reads lower values first: never read (0), then by when it was read, a reading of a
    /// process whose RSS moved since counted two seconds older.
    fileprivate var proportionalPriority: UInt64 {
        guard let readAt = proportional?.readAt else { return 0 }
        return residentPagesAtProportionalRead == lastResidentPages ? readAt : readAt &- min(readAt &- 1, 2_000_000_000)
    }
}
