#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDEvents

/// `--actions-from FILE|-`: a reducer log read as it grows, its actions handed to the aggregator.
/// A pipe or `-` (standard input) is read when data arrives (its descriptor is polled); a file is
/// read every tick and followed like `tail -F` (see `follow`).
public final class ActionLogFollower {
    public let path: String
    private var descriptor: Int32
    /// A pipe, a socket or a terminal: read when poll says so, ended by end-of-file.
    public let isStream: Bool
    private var parser = ReducerLogParser()
    private var lastCheck: UInt64 = 0
    private var buffer = [UInt8](repeating: 0, count: 65536)

    /// Opens `path`, or standard input for `-`.
    /// - Throws: `PerfHUDError` `.noInput` (66) for a missing path or a directory, `.noPermission`
    ///   (77) for one perfhud may not read.
    public init(path: String) throws {
        self.path = path
        let opened: Int32
        switch path == "-" ? retryingInterrupts({ dup(STDIN_FILENO) }) : SystemCall.open(path, O_RDONLY) {
        case .success(let descriptor): opened = descriptor
        case .failure(let error): throw PerfHUDError.reading(path, error)
        }
        var status = stat()
        fstat(opened, &status)
        if status.st_mode & S_IFMT == S_IFDIR {
            close(opened)
            throw PerfHUDError(.noInput, "cannot read \(path): it is a directory; --actions-from wants a reducer log file or -")
        }
        _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) | O_NONBLOCK)
        descriptor = opened
        isStream = status.st_mode & S_IFMT != S_IFREG
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The descriptor to poll: a stream's while it is open; -1 for a file (read every tick) or
    /// once the stream's writer is gone.
    public var pollDescriptor: Int32 { isStream ? descriptor : -1 }

    /// Reads everything there is now and hands the actions found to `aggregator`.
    public func read(into aggregator: EventAggregator) {
        guard descriptor >= 0 else { return }
        while true {
            let read = SystemCall.read(descriptor, into: &buffer)
            if case .success(let count) = read, count > 0 {
                aggregator.addActions(parser.feed(buffer[0..<count]), at: monotonicNanoseconds())
                continue
            }
            if read == .success(0) && isStream { close(descriptor); descriptor = -1 }   // the writer is gone
            return
        }
    }

    /// Once a tick for a file: reads what was appended, and, twice a second, follows the path like
    /// `tail -F`: a file truncated under us is read again from its start; one renamed away
    /// (rotation) or deleted and created anew is read to its end, then the file now at the path is
    /// opened and read from its start. While nothing is at the path, the open file is still followed.
    public func tick(into aggregator: EventAggregator) {
        guard !isStream, descriptor >= 0 else { return }
        read(into: aggregator)
        let now = monotonicNanoseconds()
        guard now &- lastCheck >= 500_000_000 else { return }
        lastCheck = now
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else { return }
        if lseek(descriptor, 0, SEEK_CUR) > opened.st_size {     // truncated
            lseek(descriptor, 0, SEEK_SET)
            parser = ReducerLogParser()
            read(into: aggregator)
            return
        }
        var named = stat()
        guard stat(path, &named) == 0, named.st_mode & S_IFMT == S_IFREG,
              named.st_ino != opened.st_ino || named.st_dev != opened.st_dev else { return }
        guard case .success(let fresh) = SystemCall.open(path, O_RDONLY | O_NONBLOCK) else { return }
        read(into: aggregator)                                    // what the old file still had
        close(descriptor)
        descriptor = fresh
        parser = ReducerLogParser()
        read(into: aggregator)
    }
}
