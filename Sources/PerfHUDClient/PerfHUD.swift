#if canImport(Glibc)
import Glibc
#endif

/// Reports frames, actions and phases to perfhud over its event socket.
///
/// `PerfHUD.shared` reads `PERFHUD_SOCKET` (set by `perfhud run` and `perfhud demo`); without it,
/// every call is a no-op costing one branch. Calls are safe from any thread and never block:
/// lines go into a bounded buffer under a lock, and a background thread sends them in batched
/// datagrams within a few milliseconds. When perfhud cannot keep up, lines are dropped and
/// counted (`droppedLines`), never waited for.
///
/// ```swift
/// let hud = PerfHUD.shared
/// hud.phase("Gallery")
/// hud.action("Gallery.Action.imageTapped")
/// hud.frameTick()          // once per frame: the time since the previous call
/// ```
public final class PerfHUD: @unchecked Sendable {
    /// The process-wide instance, configured from `PERFHUD_SOCKET`.
    public static let shared = PerfHUD(socketPath: getenv("PERFHUD_SOCKET").map { String(cString: $0) })

    /// Lines per datagram are limited by bytes: 8 KiB keeps each well inside socket buffers.
    static let datagramBytes = 8192
    /// Full datagrams waiting to be sent; beyond that, lines are dropped.
    static let queuedDatagrams = 64
    static let flushNanoseconds: UInt64 = 2_000_000

    public let isEnabled: Bool
    private let socketPath: String
    /// Everything mutable, behind one lock. Kept behind a pointer so that a call is a lock, two
    /// memcpy and an unlock: a class's stored properties would cost a runtime exclusivity check
    /// on every access, which was most of the time of a call.
    private let shared: UnsafeMutablePointer<Shared>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Held while sending: the flusher thread and `flush()` may both send.
    private let sendMutex: UnsafeMutablePointer<pthread_mutex_t>
    private let socketDescriptor: UnsafeMutablePointer<Int32>

    struct Shared {
        var buffer: UnsafeMutablePointer<UInt8>
        var used = 0
        var lines = 0
        var since: UInt64 = 0
        var queue: [([UInt8], Int)] = []
        var dropped = 0
        var sent = 0
        var lastFrameTick: UInt64 = 0
        var flusherStarted = false
        var flushSoon = false
    }

    /// - Parameter socketPath: the event socket; nil makes every call a no-op.
    public init(socketPath: String?) {
        isEnabled = socketPath.map { !$0.isEmpty } ?? false
        self.socketPath = socketPath ?? ""
        shared = .allocate(capacity: 1)
        shared.initialize(to: Shared(buffer: .allocate(capacity: Self.datagramBytes)))
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        sendMutex = .allocate(capacity: 1)
        pthread_mutex_init(sendMutex, nil)
        socketDescriptor = .allocate(capacity: 1)
        socketDescriptor.initialize(to: -1)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
    }

    /// Lines dropped because perfhud was not there or not keeping up.
    public var droppedLines: Int {
        pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }
        return shared.pointee.dropped
    }

    /// Lines handed to the socket.
    public var sentLines: Int {
        pthread_mutex_lock(mutex); defer { pthread_mutex_unlock(mutex) }
        return shared.pointee.sent
    }

    /// An action was dispatched: `perfhud.action:1|c|#action:LABEL`.
    public func action(_ label: String) {
        guard isEnabled else { return }
        append(prefix: Self.actionPrefix, text: label, suffix: Self.noSuffix)
    }

    /// A frame took `milliseconds` and ended now: `perfhud.frame:16.7|ms|end_ns:…`.
    ///
    /// Lines wait here up to a few milliseconds (longer when perfhud is slow to read): the line
    /// carries when the frame ended (CLOCK_MONOTONIC, perfhud's clock), so perfhud counts it in the
    /// second it ended in rather than the one it arrived in.
    public func frame(milliseconds: Double) {
        guard isEnabled else { return }
        frame(milliseconds: milliseconds, endedAt: Self.monotonicNanoseconds())
    }

    private func frame(milliseconds: Double, endedAt end: UInt64) {
        guard isEnabled, milliseconds.isFinite, milliseconds >= 0, milliseconds < 1e12 else { return }
        var digits = [UInt8]()
        digits.reserveCapacity(48)
        Self.appendNumber(milliseconds, to: &digits)
        digits.append(contentsOf: Self.frameSuffix)
        Self.appendDigits(end, to: &digits)
        digits.withUnsafeBytes { append(prefix: Self.framePrefix, bytes: $0, suffix: Self.noSuffix, isLabel: false) }
    }

    /// A frame took `duration`.
    public func frame(duration: Duration) {
        let (seconds, attoseconds) = duration.components
        frame(milliseconds: Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }

    /// Call once per frame: reports the time since the previous call (monotonic clock). The
    /// first call only starts the clock.
    public func frameTick() {
        guard isEnabled else { return }
        let now = Self.monotonicNanoseconds()
        pthread_mutex_lock(mutex)
        let previous = shared.pointee.lastFrameTick
        shared.pointee.lastFrameTick = now
        pthread_mutex_unlock(mutex)
        if previous != 0 { frame(milliseconds: Double(now &- previous) / 1e6, endedAt: now) }
    }

    /// The program entered a phase or screen: `perfhud.phase:1|c|#phase:NAME,rss:BYTES`, with the
    /// program's resident memory now, so perfhud books what the phase takes on the phase however
    /// late it reads the line (a perfhud that does not know the tag ignores it).
    public func phase(_ name: String) {
        guard isEnabled else { return }
        var rss: [UInt8] = []
        if let bytes = Self.residentBytes() {
            rss = Array(",rss:".utf8)
            Self.appendDigits(bytes, to: &rss)
        }
        var text = name
        text.withUTF8 { bytes in
            append(prefix: Self.phasePrefix, bytes: UnsafeRawBufferPointer(start: bytes.baseAddress, count: min(bytes.count, 200)),
                   suffix: Self.noSuffix, trailer: rss)
        }
        // Phases are rare and perfhud reads the program's memory when one arrives: send it now,
        // before the program starts the new phase's work.
        pthread_mutex_lock(mutex)
        shared.pointee.flushSoon = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Sends what is buffered now, from the calling thread (for example before exit).
    public func flush() {
        guard isEnabled else { return }
        pthread_mutex_lock(mutex)
        let batches = takeAll()
        pthread_mutex_unlock(mutex)
        send(batches)
    }

    // MARK: internals

    /// This process's resident memory (`/proc/self/statm`'s resident pages × the page size, as
    /// perfhud reads a target's); nil where it cannot be read. Phases are rare: opened each time.
    static func residentBytes() -> UInt64? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "size resident shared …": the second field.
        let fields = buffer[0..<count].split(separator: UInt8(ascii: " "), maxSplits: 2)
        guard fields.count >= 2, let pages = UInt64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static let actionPrefix = StaticString("perfhud.action:1|c|#action:")
    private static let phasePrefix = StaticString("perfhud.phase:1|c|#phase:")
    private static let framePrefix = StaticString("perfhud.frame:")
    private static let frameSuffix = Array("|ms|end_ns:".utf8)
    private static let noSuffix = StaticString("")

    private func append(prefix: StaticString, text: String, suffix: StaticString) {
        var text = text
        text.withUTF8 { bytes in
            append(prefix: prefix, bytes: UnsafeRawBufferPointer(start: bytes.baseAddress, count: min(bytes.count, 200)), suffix: suffix)
        }
    }

    /// `isLabel`: `bytes` come from the program and are made one label; otherwise they are ours.
    /// `trailer`: bytes of ours after the suffix (a phase's `,rss:` tag).
    private func append(prefix: StaticString, bytes: UnsafeRawBufferPointer, suffix: StaticString, isLabel: Bool = true, trailer: [UInt8] = []) {
        let length = prefix.utf8CodeUnitCount + bytes.count + suffix.utf8CodeUnitCount + trailer.count + 1
        pthread_mutex_lock(mutex)
        let state = shared
        if state.pointee.used + length > Self.datagramBytes && state.pointee.used > 0 {
            if state.pointee.queue.count < Self.queuedDatagrams {
                state.pointee.queue.append((Array(UnsafeBufferPointer(start: state.pointee.buffer, count: state.pointee.used)), state.pointee.lines))
            } else {
                state.pointee.dropped += state.pointee.lines
            }
            state.pointee.used = 0
            state.pointee.lines = 0
            pthread_cond_signal(condition)
        }
        if state.pointee.used == 0 { state.pointee.since = Self.monotonicNanoseconds() }
        var cursor = state.pointee.buffer + state.pointee.used
        memcpy(cursor, prefix.utf8Start, prefix.utf8CodeUnitCount)
        cursor += prefix.utf8CodeUnitCount
        if let base = bytes.baseAddress, bytes.count > 0, !isLabel {
            memcpy(cursor, base, bytes.count)
            cursor += bytes.count
        } else if let base = bytes.baseAddress, bytes.count > 0 {
            memcpy(cursor, base, bytes.count)
            // Characters that would end a tag, a section or a line are replaced: the label stays one.
            // A comma inside parentheses does not end a tag (perfhud's parser keeps it), and TCA's
            // labels have them there (`.row(index:, action: .tapped)`): those stay.
            var depth = 0
            for index in 0..<bytes.count {
                switch cursor[index] {
                case UInt8(ascii: "("): depth += 1
                case UInt8(ascii: ")"): if depth > 0 { depth -= 1 }
                case UInt8(ascii: ","): if depth == 0 { cursor[index] = UInt8(ascii: ";") }
                case UInt8(ascii: "|"): cursor[index] = UInt8(ascii: "/")
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"): cursor[index] = UInt8(ascii: " ")
                default: break
                }
            }
            cursor += bytes.count
        }
        if suffix.utf8CodeUnitCount > 0 {
            memcpy(cursor, suffix.utf8Start, suffix.utf8CodeUnitCount)
            cursor += suffix.utf8CodeUnitCount
        }
        if !trailer.isEmpty {
            trailer.withUnsafeBytes { _ = memcpy(cursor, $0.baseAddress!, $0.count) }
            cursor += trailer.count
        }
        cursor.pointee = UInt8(ascii: "\n")
        state.pointee.used += length
        state.pointee.lines += 1
        if !state.pointee.flusherStarted { startFlusher() }
        pthread_mutex_unlock(mutex)
    }

    /// Everything buffered, as datagrams with their line counts. Call with the lock held.
    private func takeAll() -> [([UInt8], Int)] {
        var batches = shared.pointee.queue
        shared.pointee.queue.removeAll()
        if shared.pointee.used > 0 {
            batches.append((Array(UnsafeBufferPointer(start: shared.pointee.buffer, count: shared.pointee.used)), shared.pointee.lines))
            shared.pointee.used = 0
            shared.pointee.lines = 0
        }
        return batches
    }

    private func startFlusher() {
        shared.pointee.flusherStarted = true
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        if pthread_create(&thread, nil, { context in
            let client = Unmanaged<PerfHUD>.fromOpaque(context!).takeRetainedValue()
            client.flushLoop()
            return nil
        }, context) == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<PerfHUD>.fromOpaque(context).release()
            shared.pointee.flusherStarted = false
        }
    }

    /// The background sender: wakes when a datagram is full, or when the oldest buffered line is
    /// `flushNanoseconds` old.
    private func flushLoop() {
        while true {
            pthread_mutex_lock(mutex)
            while shared.pointee.queue.isEmpty && !shared.pointee.flushSoon
                    && (shared.pointee.used == 0 || Self.monotonicNanoseconds() &- shared.pointee.since < Self.flushNanoseconds) {
                let wait = shared.pointee.used == 0 ? 100_000_000 : Self.flushNanoseconds
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                let total = UInt64(deadline.tv_nsec) + wait
                deadline.tv_sec += Int(total / 1_000_000_000)
                deadline.tv_nsec = Int(total % 1_000_000_000)
                pthread_cond_timedwait(condition, mutex, &deadline)
            }
            shared.pointee.flushSoon = false
            let batches = takeAll()
            pthread_mutex_unlock(mutex)
            send(batches)
        }
    }

    /// Sends datagrams without blocking the socket; a full socket queue is retried briefly from
    /// this (background) thread, then the datagram is dropped and counted.
    private func send(_ batches: [([UInt8], Int)]) {
        guard !batches.isEmpty else { return }
        pthread_mutex_lock(sendMutex)
        defer { pthread_mutex_unlock(sendMutex) }
        for (bytes, lines) in batches {
            var delivered = false
            for attempt in 0..<50 {
                if socket < 0 && !connectSocket() { break }
                let result = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if result >= 0 { delivered = true; break }
                if errno == EAGAIN || errno == ENOBUFS {
                    usleep(useconds_t(min(1000, 50 * (attempt + 1))))
                    continue
                }
                // perfhud went away or restarted: reconnect on the next datagram.
                close(socket); socket = -1
                break
            }
            pthread_mutex_lock(mutex)
            if delivered { shared.pointee.sent += lines } else { shared.pointee.dropped += lines }
            pthread_mutex_unlock(mutex)
        }
    }

    /// The connected socket; touched only while sending (the flusher thread, or `flush()`).
    private var socket: Int32 {
        get { socketDescriptor.pointee }
        set { socketDescriptor.pointee = newValue }
    }

    private func connectSocket() -> Bool {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { close(descriptor); return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { close(descriptor); return false }
        socket = descriptor
        return true
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// The decimal digits of `value`.
    static func appendDigits(_ value: UInt64, to bytes: inout [UInt8]) {
        var remaining = value
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        bytes[start...].reverse()
    }

    /// Up to three decimals, no exponent: `16.667`, `0.5`, `33`.
    static func appendNumber(_ value: Double, to bytes: inout [UInt8]) {
        let thousandths = UInt64((value * 1000).rounded())
        bytes.append(contentsOf: String(thousandths / 1000).utf8)
        var fraction = thousandths % 1000
        guard fraction != 0 else { return }
        var digits = 3
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        bytes.append(UInt8(ascii: "."))
        let text = String(fraction)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits - text.count))
        bytes.append(contentsOf: text.utf8)
    }
}
