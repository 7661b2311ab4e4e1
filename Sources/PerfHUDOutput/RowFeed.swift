#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline

/// `--feed PATH`: a Unix stream socket where any number of readers get the JSON rows of the
/// session's ticks as they are made, the rows of `--output json` (with `alerts`), one a line. The
/// HUD never waits for a reader: a row goes out with one non-blocking send per reader, and a reader
/// whose socket is full loses the rows until it has room again, then reads
/// `{"dropped_rows":N}` before the next row it gets. A row is never cut: one half-sent is finished
/// before anything else is sent to that reader. A reader that goes away is forgotten. The daemon
/// makes one per target beside its event socket (`NAME.feed`).
package final class RowFeed: TickSink {
    /// It reads the tick's figures, not each frame.
    package static let readsEveryFrame = false
    package let path: String
    private let listener: Int32
    private var readers: [Reader] = []
    private var row = ByteBuffer(capacity: 4096)
    /// The last row made: a reader gets it as it connects, so it need not wait for the next tick
    /// (`perfhud status --target`, which reads one row of a daemon whose rows come every `--full-every`).
    private var lastRow: [UInt8] = []

    private final class Reader {
        let descriptor: Int32
        /// What is left of a row half-sent.
        var rest: [UInt8] = []
        /// Rows lost since the reader last had room.
        var dropped = 0
        init(descriptor: Int32) { self.descriptor = descriptor }
        deinit { close(descriptor) }
    }

    /// Listens on `path` (0600): a stale socket there is replaced, anything else refused.
    /// - Throws: `PerfHUDError` `.cannotCreate`.
    package init(path: String) throws {
        self.path = path
        try EventReceiver.clearPath(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw PerfHUDError(.cannotCreate, "cannot make the feed's socket: \(SystemError.current)") }
        let bound = EventReceiver.withAddress(path) { bind(listener, $0, $1) }
        guard bound == 0, chmod(path, 0o600) == 0, listen(listener, 64) == 0 else {
            let error = SystemError.current
            close(listener)
            throw PerfHUDError(.cannotCreate, "cannot listen on --feed \(path): \(error)")
        }
    }

    deinit {
        readers.removeAll()
        close(listener)
        unlink(path)
    }

    package func consume(_ tick: Tick) {
        acceptReaders()
        guard tick.isRow else { return }
        row.removeAll()
        RowFormatter.appendRow(tick, plan: RowFormatter.everyFigure, to: &row)
        row.append("\n")
        row.withBytes { bytes in
            lastRow.removeAll(keepingCapacity: true)
            lastRow.append(contentsOf: bytes)
            readers.removeAll { reader in !send(bytes, to: reader) }
        }
    }

    /// Readers that connected since the last tick (the listener never blocks).
    private func acceptReaders() {
        while true {
            // accept4 is not in Swift's Glibc module: accept, then the flags.
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            let reader = Reader(descriptor: descriptor)
            if !lastRow.isEmpty, lastRow.withUnsafeBytes({ send($0, to: reader) }) == false { continue }
            readers.append(reader)
        }
    }

    /// - Returns: false when the reader is gone.
    private func send(_ bytes: UnsafeRawBufferPointer, to reader: Reader) -> Bool {
        if !reader.rest.isEmpty {
            guard let sent = write(reader.rest.withUnsafeBytes { $0 }, to: reader) else { return false }
            reader.rest.removeFirst(sent)
            if !reader.rest.isEmpty { reader.dropped += 1; return true }
        }
        if reader.dropped > 0 {
            let notice = Array("{\"dropped_rows\":\(reader.dropped)}\n".utf8)
            guard let sent = notice.withUnsafeBytes({ write($0, to: reader) }) else { return false }
            if sent < notice.count {
                reader.rest = Array(notice[sent...])
                reader.dropped = 1   // this row: the notice takes its room
                return true
            }
            reader.dropped = 0
        }
        guard let sent = write(bytes, to: reader) else { return false }
        if sent == 0 { reader.dropped += 1 } else if sent < bytes.count { reader.rest = Array(bytes[sent...]) }
        return true
    }

    /// One non-blocking send: the bytes taken (0 when the socket is full), nil when the reader is gone.
    private func write(_ bytes: UnsafeRawBufferPointer, to reader: Reader) -> Int? {
        let result = Glibc.send(reader.descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        if result >= 0 { return result }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : nil
    }
}
