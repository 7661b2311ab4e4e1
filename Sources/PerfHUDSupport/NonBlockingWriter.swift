#if canImport(Glibc)
import Glibc
#endif

/// Writes whole lines to a descriptor (stderr, say) without ever waiting for whoever reads it.
///
/// A journal stream or a pipe whose reader stopped would otherwise stop the writer in `write`.
/// A socket gets `send(MSG_DONTWAIT)`; a pipe is reopened through `/proc/self/fd/N`, which gives
/// a file description of our own that can be non-blocking without touching the one we were
/// handed (a terminal or a pipe shared with the shell keeps its flags). A line that does not fit
/// is dropped and counted; a line cut short by a stream socket is finished before the next one,
/// so a reader never sees two lines run together. Terminals and files are written as they are.
public final class NonBlockingWriter: @unchecked Sendable {
    private let descriptor: Int32
    private let isSocket: Bool
    private let ownsDescriptor: Bool
    private var pending: [UInt8] = []
    private var droppedLines = 0
    private let mutex = Mutex()

    public init(descriptor: Int32) {
        var status = stat()
        let kind = fstat(descriptor, &status) == 0 ? status.st_mode & S_IFMT : 0
        isSocket = kind == S_IFSOCK
        if kind == S_IFIFO {
            let reopened = try? SystemCall.open("/proc/self/fd/\(descriptor)", O_WRONLY | O_NONBLOCK).get()
            self.descriptor = reopened ?? descriptor
            ownsDescriptor = reopened != nil
        } else {
            self.descriptor = descriptor
            ownsDescriptor = false
        }
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Lines dropped because the reader was not keeping up (or had gone).
    public var dropped: Int { mutex.withLock { droppedLines } }

    /// Writes `line` (which ends in a newline) now, or drops it. Returns whether it was written.
    @discardableResult
    public func write(_ line: [UInt8]) -> Bool {
        mutex.withLock {
            if !pending.isEmpty {
                let written = send(pending)
                pending.removeFirst(written)
                if !pending.isEmpty { droppedLines += 1; return false }
            }
            let written = send(line)
            if written == 0 { droppedLines += 1; return false }
            if written < line.count { pending = Array(line[written...]) }
            return true
        }
    }

    /// Bytes written from the front of `bytes`: 0 when nothing could be.
    private func send(_ bytes: [UInt8]) -> Int {
        let result = bytes.withUnsafeBytes { raw in
            isSocket ? SystemCall.send(descriptor, raw, flags: Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) : SystemCall.writeOnce(descriptor, raw)
        }
        if case .success(let count) = result { return count }
        return 0
    }
}
