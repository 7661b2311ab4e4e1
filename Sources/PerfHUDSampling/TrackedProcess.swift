#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

extension ProcessSampler {
    /// One process whose files are kept open.
    package final class TrackedProcess {
        package let pid: Int32
        package let startTicks: UInt64
        package let isKernelThread: Bool
        package var commandNameHash: UInt64
        package var addressSpaceHash: UInt64
        package let stat: KeptOpenFile
        package let statm: KeptOpenFile
        var smapsRollup: KeptOpenFile?
        /// Its PSS at its last read, and when (`ProportionalMemory`); nil: not read, or gone since.
        var proportional: (bytes: UInt64, readAt: UInt64)?
        /// Why its PSS may not be read (`MemoryUnreported`); nil where it may.
        var proportionalRefusal: String?
        /// Its resident pages at the last sample, and at its last PSS read: a pass reads the moved first.
        var lastResidentPages: UInt64 = 0
        var residentPagesAtProportionalRead: UInt64 = 0
        let cpuClock: clockid_t?
        /// The "why" files, opened once the figures are first wanted.
        package var activity: ProcessActivity?
        /// The discovery pass that last saw it (descendants only).
        package var seen: UInt32 = 0
        /// While its main thread has ended and others run on: the thread its memory and
        /// descriptors are read through. The files that read them are opened again through it.
        var standIn: StandInThread? {
            didSet {
                guard oldValue?.tid != standIn?.tid else { return }
                forgetAddressSpace()
                activity?.readProcessFiles(through: standIn?.path)
            }
        }
        /// After an exec: the memory files opened on the old address space read it no more.
        func forgetAddressSpace() {
            smapsRollup?.close(); smapsRollup = nil; proportional = nil
        }

        /// Where the process's memory files are read: its own directory, or its stand-in thread's.
        var memoryPath: String { standIn?.path ?? "/proc/\(pid)" }

        package init(pid: Int32, fields: ProcStat, stat: KeptOpenFile, statm: KeptOpenFile) {
            self.pid = pid
            startTicks = fields.startTicks
            isKernelThread = fields.isKernelThread
            commandNameHash = fields.commandNameHash
            addressSpaceHash = fields.addressSpaceHash
            self.stat = stat
            self.statm = statm
            var clock = clockid_t()
            cpuClock = clock_getcpuclockid(pid, &clock) == 0 ? clock : nil
        }

        deinit {
            stat.close()
            statm.close()
            smapsRollup?.close()
        }

        /// Opens `/proc/PID/{stat,statm}` and keeps them open; fails when the process is gone or unreadable.
        package static func open(pid: Int32, buffer: UnsafeMutableRawBufferPointer) -> Result<TrackedProcess, SystemError> {
            let base = "/proc/\(pid)/"
            let stat: KeptOpenFile
            switch KeptOpenFile.open(base + "stat") {
            case .success(let file): stat = file
            case .failure(let error): return .failure(error)
            }
            let statm: KeptOpenFile
            switch KeptOpenFile.open(base + "statm") {
            case .success(let file): statm = file
            case .failure(let error): stat.close(); return .failure(error)
            }
            let parsed = stat.read(into: buffer).flatMap { count -> Result<ProcStat, SystemError> in
                guard let fields = ProcParser.stat(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else {
                    return .failure(.noSuchProcess)
                }
                return .success(fields)
            }
            switch parsed {
            case .success(let fields):
                return .success(TrackedProcess(pid: pid, fields: fields, stat: stat, statm: statm))
            case .failure(let error):
                stat.close(); statm.close()
                return .failure(error)
            }
        }
    }
}
