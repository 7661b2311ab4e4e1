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
    private var socket: Int32 = -1
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var current: [UInt8] = []
    private var currentSince: UInt64 = 0
    private var currentLines = 0
    private var queue: [[UInt8]] = []
    private var queuedLines: [Int] = []
    private var dropped = 0
    private var sent = 0
    private var lastFrameTick: UInt64 = 0
    private var flusherStarted = false
    private var flushSoon = false

    /// - Parameter socketPath: the event socket; nil makes every call a no-op.
    public init(socketPath: String?) {
        isEnabled = socketPath.map { !$0.isEmpty } ?? false
        self.socketPath = socketPath ?? ""
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        current.reserveCapacity(Self.datagramBytes)
    }

    /// Lines dropped because perfhud was not there or not keeping up.
    public var droppedLines: Int {
        pthread_mutex_lock(&mutex); defer { pthread_mutex_unlock(&mutex) }
        return dropped
    }

    /// Lines handed to the socket.
    public var sentLines: Int {
        pthread_mutex_lock(&mutex); defer { pthread_mutex_unlock(&mutex) }
        return sent
    }

    /// An action was dispatched: `perfhud.action:1|c|#action:LABEL`.
    public func action(_ label: String) {
        guard isEnabled else { return }
        append(prefix: Self.actionPrefix, text: label, suffix: nil)
    }

    /// A frame took `milliseconds`: `perfhud.frame:16.7|ms`.
    public func frame(milliseconds: Double) {
        guard isEnabled, milliseconds.isFinite, milliseconds >= 0 else { return }
        var digits = [UInt8]()
        Self.appendNumber(milliseconds, to: &digits)
        append(prefix: Self.framePrefix, bytes: digits, suffix: Self.frameSuffix)
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
        pthread_mutex_lock(&mutex)
        let previous = lastFrameTick
        lastFrameTick = now
        pthread_mutex_unlock(&mutex)
        if previous != 0 { frame(milliseconds: Double(now &- previous) / 1e6) }
    }

    /// The program entered a phase or screen: `perfhud.phase:1|c|#phase:NAME`.
    public func phase(_ name: String) {
        guard isEnabled else { return }
        append(prefix: Self.phasePrefix, text: name, suffix: nil)
        // Phases are rare and perfhud reads the program's memory when one arrives: send it now,
        // before the program starts the new phase's work.
        pthread_mutex_lock(&mutex)
        flushSoon = true
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Sends what is buffered now, from the calling thread (for example before exit).
    public func flush() {
        guard isEnabled else { return }
        pthread_mutex_lock(&mutex)
        let batches = takeAll()
        pthread_mutex_unlock(&mutex)
        send(batches)
    }

    // MARK: internals

    private static let actionPrefix = Array("perfhud.action:1|c|#action:".utf8)
    private static let phasePrefix = Array("perfhud.phase:1|c|#phase:".utf8)
    private static let framePrefix = Array("perfhud.frame:".utf8)
    private static let frameSuffix = Array("|ms".utf8)

    private func append(prefix: [UInt8], text: String, suffix: [UInt8]?) {
        var text = text
        text.withUTF8 { bytes in
            append(prefix: prefix, bytes: UnsafeBufferPointer(start: bytes.baseAddress, count: min(bytes.count, 200)), suffix: suffix)
        }
    }

    private func append<Bytes: Collection>(prefix: [UInt8], bytes: Bytes, suffix: [UInt8]?) where Bytes.Element == UInt8 {
        let length = prefix.count + bytes.count + (suffix?.count ?? 0) + 1
        pthread_mutex_lock(&mutex)
        if current.count + length > Self.datagramBytes && !current.isEmpty {
            if queue.count < Self.queuedDatagrams {
                queue.append(current)
                queuedLines.append(currentLines)
            } else {
                dropped += currentLines
            }
            current = []
            current.reserveCapacity(Self.datagramBytes)
            currentLines = 0
            pthread_cond_signal(&condition)
        }
        if current.isEmpty { currentSince = Self.monotonicNanoseconds() }
        current.append(contentsOf: prefix)
        // Characters that would end a tag, a section or a line are replaced: the label stays one.
        for byte in bytes {
            switch byte {
            case UInt8(ascii: ","): current.append(UInt8(ascii: ";"))
            case UInt8(ascii: "|"): current.append(UInt8(ascii: "/"))
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): current.append(UInt8(ascii: " "))
            default: current.append(byte)
            }
        }
        if let suffix { current.append(contentsOf: suffix) }
        current.append(UInt8(ascii: "\n"))
        currentLines += 1
        if !flusherStarted { startFlusher() }
        pthread_mutex_unlock(&mutex)
    }

    /// Everything buffered, as datagrams with their line counts. Call with the lock held.
    private func takeAll() -> [([UInt8], Int)] {
        var batches = Array(zip(queue, queuedLines))
        queue.removeAll()
        queuedLines.removeAll()
        if !current.isEmpty {
            batches.append((current, currentLines))
            current = []
            current.reserveCapacity(Self.datagramBytes)
            currentLines = 0
        }
        return batches
    }

    private func startFlusher() {
        flusherStarted = true
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
            flusherStarted = false
        }
    }

    /// The background sender: wakes when a datagram is full, or when the oldest buffered line is
    /// `flushNanoseconds` old.
    private func flushLoop() {
        while true {
            pthread_mutex_lock(&mutex)
            while queue.isEmpty && !flushSoon && (current.isEmpty || Self.monotonicNanoseconds() &- currentSince < Self.flushNanoseconds) {
                let wait = current.isEmpty ? 100_000_000 : Self.flushNanoseconds
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                let total = UInt64(deadline.tv_nsec) + wait
                deadline.tv_sec += Int(total / 1_000_000_000)
                deadline.tv_nsec = Int(total % 1_000_000_000)
                pthread_cond_timedwait(&condition, &mutex, &deadline)
            }
            flushSoon = false
            let batches = takeAll()
            pthread_mutex_unlock(&mutex)
            send(batches)
        }
    }

    /// Sends datagrams without blocking the socket; a full socket queue is retried briefly from
    /// this (background) thread, then the datagram is dropped and counted.
    private func send(_ batches: [([UInt8], Int)]) {
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
            pthread_mutex_lock(&mutex)
            if delivered { sent += lines } else { dropped += lines }
            pthread_mutex_unlock(&mutex)
        }
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
