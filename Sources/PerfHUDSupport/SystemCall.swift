#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// The system calls perfhud makes on descriptors and children (poll, read, write, recv, send,
/// open, waitpid; pread on kept-open files: `KeptOpenFile`), through one entry
/// point: each retries EINTR (`retryingInterrupts`) and returns a typed error (`SystemError`)
/// rather than -1 and errno. The corresponding C functions carry the same names.
public enum SystemCall {
    /// poll(2). With an infinite timeout an interrupted call is made again; with a finite one it
    /// returns 0 (nothing ready), so a caller that computes its timeout (a watchdog due) computes it again.
    public static func poll(_ descriptors: inout [pollfd], timeoutMilliseconds: Int32 = -1) -> Result<Int32, SystemError> {
        descriptors.withUnsafeMutableBufferPointer { poll($0.baseAddress, $0.count, timeoutMilliseconds: timeoutMilliseconds) }
    }

    /// poll(2) of one descriptor (no array to allocate), as `poll(_:timeoutMilliseconds:)`.
    public static func poll(_ slot: inout pollfd, timeoutMilliseconds: Int32 = -1) -> Result<Int32, SystemError> {
        poll(&slot, 1, timeoutMilliseconds: timeoutMilliseconds)
    }

    private static func poll(_ slots: UnsafeMutablePointer<pollfd>?, _ count: Int, timeoutMilliseconds: Int32) -> Result<Int32, SystemError> {
        while true {
            let result = Glibc.poll(slots, nfds_t(count), timeoutMilliseconds)
            if result >= 0 { return .success(result) }
            let code = errno
            if code != EINTR { return .failure(SystemError(code)) }
            if timeoutMilliseconds >= 0 { return .success(0) }
        }
    }

    /// recv(2) into `buffer`: the number of bytes (0: a stream's peer closed it, or an empty datagram).
    public static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: Int32 = 0) -> Result<Int, SystemError> {
        retryingInterrupts { Glibc.recv(descriptor, buffer.baseAddress, buffer.count, flags) }
    }

    /// send(2) of `bytes` once: the number the socket took (all of a datagram; of a stream, maybe fewer).
    public static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, flags: Int32) -> Result<Int, SystemError> {
        retryingInterrupts { Glibc.send(descriptor, bytes.baseAddress, bytes.count, flags) }
    }

    /// sendto(2) of one datagram to `address` (`length` bytes of it).
    public static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, to address: UnsafePointer<sockaddr>,
                            length: socklen_t) -> Result<Int, SystemError> {
        retryingInterrupts { Glibc.sendto(descriptor, bytes.baseAddress, bytes.count, 0, address, length) }
    }

    /// read(2) into `buffer`: the number of bytes (0 at the end).
    public static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, SystemError> {
        retryingInterrupts { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// read(2) into `buffer[0..<count]` (all of it by default).
    public static func read(_ descriptor: Int32, into buffer: inout [UInt8], count: Int? = nil) -> Result<Int, SystemError> {
        let wanted = min(count ?? buffer.count, buffer.count)
        return buffer.withUnsafeMutableBytes { read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted])) }
    }

    /// write(2) of all of `bytes`, a short write continued: the number written (all of them), or
    /// the error that stopped it (EAGAIN on a non-blocking descriptor that is full).
    public static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemError> {
        var done = 0
        while done < bytes.count {
            switch retryingInterrupts({ Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done) }) {
            case .success(let count): done += count
            case .failure(let error): return .failure(error)
            }
        }
        return .success(done)
    }

    /// write(2) once: the number of bytes the descriptor took (a short write is not continued).
    public static func writeOnce(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemError> {
        retryingInterrupts { Glibc.write(descriptor, bytes.baseAddress, bytes.count) }
    }

    /// read(2) of one fixed-size record into `value` (a timerfd's count, a signalfd's siginfo): true
    /// when the whole record was read.
    public static func read<T>(_ descriptor: Int32, record value: inout T) -> Bool {
        let size = MemoryLayout<T>.size
        return withUnsafeMutableBytes(of: &value) { read(descriptor, into: $0) } == .success(size)
    }

    /// write(2) of as much of `bytes` as a non-blocking descriptor takes now: the number written
    /// (fewer than all when it is full: EAGAIN after some or none), or the error that stopped it.
    public static func writeWhatFits(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, SystemError> {
        var done = 0
        while done < bytes.count {
            switch retryingInterrupts({ Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done) }) {
            case .success(let count): done += count
            case .failure(.wouldBlock): return .success(done)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(done)
    }

    /// Writes one byte: a wake-up pipe's poke (non-blocking; a full pipe already wakes its reader).
    @discardableResult
    public static func poke(_ descriptor: Int32) -> Result<Int, SystemError> {
        var byte: UInt8 = 1
        return withUnsafeBytes(of: &byte) { write(descriptor, $0) }
    }

    /// open(2), close-on-exec: the new descriptor.
    public static func open(_ path: String, _ flags: Int32) -> Result<Int32, SystemError> {
        retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC) }
    }

    /// open(2) of a NUL-terminated path already in a buffer (no `String` made), close-on-exec.
    public static func open(cPath: UnsafePointer<CChar>, _ flags: Int32) -> Result<Int32, SystemError> {
        retryingInterrupts { Glibc.open(cPath, flags | O_CLOEXEC) }
    }

    /// connect(2): true when connected now, false when a non-blocking socket's connection goes on
    /// (EINPROGRESS; and EINTR, after which the kernel goes on connecting, and a second connect
    /// would fail with EALREADY: poll for writable, then read SO_ERROR).
    public static func connect(_ descriptor: Int32, to address: UnsafePointer<sockaddr>, length: socklen_t) -> Result<Bool, SystemError> {
        if Glibc.connect(descriptor, address, length) == 0 { return .success(true) }
        let code = errno
        return code == EINPROGRESS || code == EINTR ? .success(false) : .failure(SystemError(code))
    }

    /// readlink(2): where the symbolic link `path` points (`/proc/self/exe`: this executable); nil
    /// where it cannot be read.
    public static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let length = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard length > 0, length < buffer.count else { return nil }
        return String(decoding: buffer[0..<length], as: UTF8.self)
    }

    /// waitpid(2): the child that changed state (0 with WNOHANG when none did) and its raw status.
    public static func waitpid(_ pid: pid_t, options: Int32 = 0) -> Result<(pid: pid_t, status: Int32), SystemError> {
        var status: Int32 = 0
        return retryingInterrupts { Glibc.waitpid(pid, &status, options) }.map { ($0, status) }
    }

    /// Raises the soft limit on open descriptors to the hard one, once, at start; a launched program
    /// gets back the limit perfhud started with (`perfhud_raise_descriptor_limit`). Returns the
    /// limit now in force; nil where unlimited or unknown.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int? {
        let limit = perfhud_raise_descriptor_limit()
        return limit < 0 ? nil : limit
    }
}
