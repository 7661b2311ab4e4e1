/// The fields of `/proc/PID/stat` the sampler uses (proc(5) numbering in comments).
public struct ProcStat: Equatable {
    /// A hash of the command name (2, `comm`): it changes at exec, and comparing it costs nothing.
    public var commandNameHash: UInt64 // 2
    public var state: UInt8            // 3
    public var parentPID: Int32        // 4
    public var flags: UInt64           // 9 (PF_* flags)
    public var minorFaults: UInt64     // 10 minflt: summed over the threads, the dead ones too
    public var childrenMinorFaults: UInt64  // 11 cminflt: reaped children
    public var majorFaults: UInt64     // 12 majflt
    public var childrenMajorFaults: UInt64  // 13 cmajflt
    public var userTicks: UInt64       // 14 utime
    public var systemTicks: UInt64     // 15 stime
    public var childrenUserTicks: UInt64    // 16 cutime: reaped children
    public var childrenSystemTicks: UInt64  // 17 cstime
    public var childrenTicks: UInt64 { childrenUserTicks &+ childrenSystemTicks }
    public var threads: Int            // 20 num_threads
    public var startTicks: UInt64      // 22 starttime, clock ticks after boot
    public var virtualBytes: UInt64    // 23 vsize
    /// A hash of where the program's code and stack begin (26 startcode, 27 endcode, 28
    /// startstack): a new address space at every exec, even of a program with the same name (a
    /// wrapper named `python3` exec'ing python3). 0 where the kernel hides them (another user's
    /// process) or the process has no address space (a kernel thread, a process exiting).
    public var addressSpaceHash: UInt64 = 0

    /// PF_KTHREAD: a kernel thread, with CPU time but no memory of its own.
    public var isKernelThread: Bool { flags & 0x0020_0000 != 0 }

    /// Whether the process runs. A thread group lives while any of its threads does: a main
    /// thread that ended first (`pthread_exit` in `main`, as some launchers and runtimes do) leaves
    /// its leader a zombie whose `num_threads` still counts the others, and the process runs on at
    /// full speed. Only a zombie that is alone (or a dead task) has ended. The one definition of
    /// "alive" for the samplers and the daemon's target lookup.
    /// Stopped by a signal (`T`: SIGSTOP, SIGTSTP…) or by a tracer (`t`).
    public var isStopped: Bool {
        state == UInt8(ascii: "T") || state == UInt8(ascii: "t")
    }

    public var threadGroupLives: Bool {
        switch state {
        case UInt8(ascii: "X"): return false
        case UInt8(ascii: "Z"): return threads > 1
        default: return true
        }
    }

    /// The main thread has ended while others run on: the leader's `statm`, `status`, `fd` and
    /// `smaps_rollup` then read as empty (it has no memory or files of its own any more), while
    /// every other thread's show the process's. Its `stat` CPU times and its CPU clock stay the
    /// whole group's.
    public var leaderEnded: Bool { state == UInt8(ascii: "Z") && threads > 1 }
}

/// The first two fields of `/proc/PID/statm`, in pages.
public struct ProcStatm: Equatable {
    public var sizePages: UInt64
    public var residentPages: UInt64
    /// Resident pages backed by a file or shared memory (RssFile + RssShmem); the rest is RssAnon.
    public var sharedPages: UInt64 = 0
}

/// Parsers for /proc text that allocate nothing: they run on every tick.
public enum ProcParser {
    /// `/proc/PID/stat` (or `/proc/self/stat`) read once and parsed; nil when the process is gone
    /// or may not be read. For occasional looks: the per-tick path keeps its files open instead.
    public static func stat(ofProcess pid: String) -> ProcStat? {
        guard case .success(let data) = KeptOpenFile.contents(of: "/proc/\(pid)/stat", limit: 4096) else { return nil }
        return data.withUnsafeBytes { stat($0) }
    }

    /// Parses a `/proc/PID/stat` line. The command name (field 2) may contain spaces and
    /// parentheses, so fields are counted from the *last* `)`.
    public static func stat(_ bytes: UnsafeRawBufferPointer) -> ProcStat? {
        // Unchecked loads through the pointer (every index is below `bytes.count`): this runs
        // every tick for every tracked process, and the checked walk cost several times more (measured: docs/benchmarks.md, "What the code's shape saves").
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else { return nil }
        var open = 0
        while open < bytes.count && base[open] != UInt8(ascii: "(") { open += 1 }
        guard open < bytes.count else { return nil }
        // The kernel's comm is at most 15 bytes, so its `)` is among the 16 after the `(` — the last
        // one there, as a comm may hold `)`. Looked for there first: the line's other ~280 bytes
        // are fields, none of them a `)`. Anything else (not the kernel's) from the end.
        var close = -1
        var scan = open + 1
        while scan < min(bytes.count, open + 17) {
            if base[scan] == UInt8(ascii: ")") { close = scan }
            scan += 1
        }
        if close < 0 {
            close = bytes.count - 1
            while close > open && base[close] != UInt8(ascii: ")") { close -= 1 }
        }
        guard close > open else { return nil }
        // FNV-1a over comm (at most 15 bytes after "PID ("), on raw bytes: this runs every tick.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var index = open + 1
        while index < close {
            hash = (hash ^ UInt64(base[index])) &* 0x100_0000_01b3
            index += 1
        }
        var result = ProcStat(commandNameHash: hash, state: 0, parentPID: 0, flags: 0,
                              minorFaults: 0, childrenMinorFaults: 0, majorFaults: 0, childrenMajorFaults: 0, userTicks: 0, systemTicks: 0,
                              childrenUserTicks: 0, childrenSystemTicks: 0, threads: 0, startTicks: 0, virtualBytes: 0)
        var field = 2            // the field we are in; the space after `)` starts field 3
        var addresses: UInt64 = 0
        var value: UInt64 = 0
        var inNumber = false
        index = close + 1
        let end = bytes.count
        while index <= end {
            let byte: UInt8 = index < end ? base[index] : UInt8(ascii: " ")
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                if inNumber || field == 3 {
                    switch field {
                    case 4: result.parentPID = Int32(truncatingIfNeeded: value)
                    case 9: result.flags = value
                    case 10: result.minorFaults = value
                    case 11: result.childrenMinorFaults = value
                    case 12: result.majorFaults = value
                    case 13: result.childrenMajorFaults = value
                    case 14: result.userTicks = value
                    case 15: result.systemTicks = value
                    case 16: result.childrenUserTicks = value
                    case 17: result.childrenSystemTicks = value
                    case 20: result.threads = Int(truncatingIfNeeded: value)
                    case 22: result.startTicks = value
                    case 23: result.virtualBytes = value
                    case 26, 27: result.addressSpaceHash = (result.addressSpaceHash ^ value) &* 0x100_0000_01b3; addresses |= value
                    case 28:
                        result.addressSpaceHash = addresses | value == 0 ? 0 : (result.addressSpaceHash ^ value) &* 0x100_0000_01b3
                        return result
                    default: break
                    }
                }
                field += 1
                value = 0
                inNumber = false
            } else if field == 3 && !inNumber {
                result.state = byte
                inNumber = true
            } else if byte &- UInt8(ascii: "0") <= 9 {
                // A run of digits in one go (most of the line's bytes).
                var digit = byte &- UInt8(ascii: "0")
                repeat {
                    value = value &* 10 &+ UInt64(digit)
                    index += 1
                    guard index < end else { break }
                    digit = base[index] &- UInt8(ascii: "0")
                } while digit <= 9
                inNumber = true
                continue
            } else if byte == UInt8(ascii: "-") {
                inNumber = true   // negative fields (priority, nice) are not used
            }
            index += 1
        }
        // Fields past vsize are optional to this parser (a kernel may hide or lack them).
        return field > 23 ? result : nil
    }

    /// Parses `/proc/PID/statm`: "size resident shared text lib data dt".
    public static func statm(_ bytes: UnsafeRawBufferPointer) -> ProcStatm? {
        var numbers: (UInt64, UInt64) = (0, 0)
        var fieldIndex = 0
        var value: UInt64 = 0
        var digits = 0
        for byte in bytes {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                digits += 1
            } else {
                guard digits > 0 else { return fieldIndex == 2 ? ProcStatm(sizePages: numbers.0, residentPages: numbers.1) : nil }
                switch fieldIndex {
                case 0: numbers.0 = value
                case 1: numbers.1 = value
                default: return ProcStatm(sizePages: numbers.0, residentPages: numbers.1, sharedPages: value)
                }
                fieldIndex += 1
                value = 0
                digits = 0
            }
        }
        return fieldIndex == 2 ? ProcStatm(sizePages: numbers.0, residentPages: numbers.1, sharedPages: value) : nil
    }

    /// The `Pss:` line of `/proc/PID/smaps_rollup`, in bytes.
    public static func proportionalSetSize(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        let key: [UInt8] = Array("\nPss:".utf8)
        guard bytes.count > key.count else { return nil }
        var index = 0
        while index + key.count <= bytes.count {
            var matches = true
            for offset in 0..<key.count where bytes[index + offset] != key[offset] { matches = false; break }
            if matches {
                var cursor = index + key.count
                var value: UInt64 = 0
                var digits = 0
                while cursor < bytes.count {
                    let byte = bytes[cursor]
                    if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                        value = value * 10 + UInt64(byte - UInt8(ascii: "0")); digits += 1
                    } else if digits > 0 { break }
                    cursor += 1
                }
                return digits > 0 ? value * 1024 : nil
            }
            index += 1
        }
        return nil
    }
}
