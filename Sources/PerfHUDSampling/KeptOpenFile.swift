#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// A /proc file opened once and re-read with `pread` at offset 0 on every tick.
///
/// Keeping the descriptor open costs nothing and saves the path walk of `open`; it also pins the
/// file to the process it was opened for: once that process is gone, reads fail with ESRCH even
/// if the PID has been reused, so a kept-open descriptor can never report a stranger.
public struct KeptOpenFile {
    public let descriptor: Int32

    /// Opens `path` read-only and close-on-exec. The corresponding C call is `open(2)`. EMFILE
    /// also where the descriptor would take one of the reserve (`DescriptorBudget`).
    public static func open(_ path: String) -> Result<KeptOpenFile, SystemError> {
        DescriptorBudget.keeping(openOnce(path)).map(KeptOpenFile.init(descriptor:))
    }

    /// Opens `path` to be read and closed at once: it may take one of the reserve.
    private static func openOnce(_ path: String) -> Result<Int32, SystemError> {
        retryingInterrupts { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Reads the whole file (up to the buffer's size) into `buffer`; returns the byte count.
    /// The corresponding C call is `pread(2)` at offset 0.
    @inlinable @inline(__always)
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        retryingInterrupts { pread(descriptor, buffer.baseAddress, buffer.count, 0) }
    }

    public func close() { _ = Glibc.close(descriptor) }

    /// Opens `path`, reads it into `buffer` as `read(into:)` does, and closes it: a file read where
    /// no more may be kept open (`DescriptorBudget`).
    public static func read(_ path: String, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        openOnce(path).flatMap { descriptor in
            defer { _ = Glibc.close(descriptor) }
            return KeptOpenFile(descriptor: descriptor).read(into: buffer)
        }
    }

    /// Reads it as `/proc/PID/statm`: sizes in pages, or nil.
    public func readStatm() -> ProcStatm? {
        var buffer = [UInt8](repeating: 0, count: 256)
        return buffer.withUnsafeMutableBytes { raw in
            guard case .success(let count) = read(into: raw) else { return nil }
            return ProcParser.statm(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
    }

    /// The whole content of a small file (a pidfile, a /proc or /sys file), or the error.
    public static func contents(of path: String, limit: Int = 1 << 20) -> Result<[UInt8], SystemError> {
        openOnce(path).map(KeptOpenFile.init(descriptor:)).flatMap { file in
            defer { file.close() }
            // Through a 4 KiB buffer that is not zeroed first (a 64 KiB chunk zeroed per call was
            // most of a resolve of a process's control groups, every ten seconds for every target
            // of the daemon).
            return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { chunk -> Result<[UInt8], SystemError> in
                var data: [UInt8] = []
                while data.count < limit {
                    switch retryingInterrupts({ Glibc.read(file.descriptor, chunk.baseAddress, min(chunk.count, limit - data.count)) }) {
                    case .success(0): return .success(data)
                    case .success(let n): data.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
                    case .failure(let error): return .failure(error)
                    }
                }
                return .success(data)
            }
        }
    }
}
