#if canImport(Glibc)
import Glibc
#endif

/// A /proc file opened once and re-read with `pread` at offset 0 on every tick.
///
/// Keeping the descriptor open costs nothing and saves the path walk of `open`; it also pins the
/// file to the process it was opened for: once that process is gone, reads fail with ESRCH even
/// if the PID has been reused, so a kept-open descriptor can never report a stranger.
public struct KeptOpenFile {
    public let descriptor: Int32

    /// Opens `path` read-only and close-on-exec. The corresponding C call is `open(2)`.
    public static func open(_ path: String) -> Result<KeptOpenFile, SystemError> {
        retryingInterrupts { Glibc.open(path, O_RDONLY | O_CLOEXEC) }.map(KeptOpenFile.init(descriptor:))
    }

    /// Reads the whole file (up to the buffer's size) into `buffer`; returns the byte count.
    /// The corresponding C call is `pread(2)` at offset 0.
    @inline(__always)
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        retryingInterrupts { pread(descriptor, buffer.baseAddress, buffer.count, 0) }
    }

    public func close() { _ = Glibc.close(descriptor) }
}
