#if canImport(Glibc)
import Glibc
#endif

/// Parsers for the files the "why" figures come from: `/proc/PID/io`, `/proc/PID/status`,
/// `/proc/PID/task/TID/schedstat`, `/proc/PID/limits`, `/proc/PID/oom_score`, and a control group's `cpu.stat` and
/// `*.pressure`. They allocate nothing: some run on every tick.
extension ProcParser {
    /// The number after `key` where `key` starts a line (`key` includes its separator, `rchar: `
    /// or `VmSwap:`); blanks before the digits are skipped. Nil when there is no such line.
    package static func number(after key: StaticString, in bytes: UnsafeRawBufferPointer) -> UInt64? {
        number(after: key, in: bytes, from: 0)?.value
    }

    /// As `number(after:in:)`, searching from the line at `start`; also where the line after it
    /// starts (fields that come in a known order are found in one pass). Lines are skipped with
    /// `memchr`: `status` is ~1.4 KB and read every tick.
    package static func number(after key: StaticString, in bytes: UnsafeRawBufferPointer, from start: Int) -> (value: UInt64, next: Int, at: Int)? {
        guard let base = bytes.baseAddress else { return nil }
        let keyCount = key.utf8CodeUnitCount
        let keyStart = key.utf8Start
        let end = bytes.count
        var lineStart = start
        while lineStart + keyCount <= end {
            if bytes[lineStart] == keyStart[0] && memcmp(base + lineStart, keyStart, keyCount) == 0 {
                var cursor = lineStart + keyCount
                while cursor < end && (bytes[cursor] == UInt8(ascii: " ") || bytes[cursor] == UInt8(ascii: "\t")) { cursor += 1 }
                var value: UInt64 = 0
                var digits = 0
                while cursor < end, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9") {
                    value = value &* 10 &+ UInt64(bytes[cursor] &- UInt8(ascii: "0")); digits += 1; cursor += 1
                }
                return digits > 0 ? (value, cursor, lineStart) : nil
            }
            guard let newline = memchr(base + lineStart, Int32(UInt8(ascii: "\n")), end - lineStart) else { return nil }
            lineStart = base.distance(to: UnsafeRawPointer(newline)) + 1
        }
        return nil
    }

    /// `/proc/PID/io`: bytes asked of read/write calls (chars) and bytes fetched from or sent
    /// to storage (bytes). The whole process, its ended threads included.
    public static func io(_ bytes: UnsafeRawBufferPointer) -> ProcIO? {
        guard let rchar = number(after: "rchar:", in: bytes, from: 0), let wchar = number(after: "wchar:", in: bytes, from: rchar.next),
              let read = number(after: "read_bytes:", in: bytes, from: wchar.next),
              let write = number(after: "write_bytes:", in: bytes, from: read.next) else { return nil }
        // write_bytes as pidstat's kB_wr/s: dirtied pages later truncated away (cancelled_write_bytes) still count.
        return ProcIO(readChars: rchar.value, writeChars: wchar.value, readBytes: read.value, writeBytes: write.value)
    }

    /// The memory by kind of `/proc/PID/status` (bytes; the process's, whichever thread's file);
    /// nil for a kernel thread, which has none.
    public static func memoryKinds(_ bytes: UnsafeRawBufferPointer) -> ProcMemoryKinds? {
        memoryKinds(bytes, near: 0)?.kinds
    }

    /// As `memoryKinds(_:)`, searching first from the line before `hint` (where `RssAnon:` was
    /// last time: the lines above it change by a few digits), then from the start; also where
    /// `RssAnon:` was, for the next call. Read every tick: this skips ~20 of the ~55 lines.
    package static func memoryKinds(_ bytes: UnsafeRawBufferPointer, near hint: Int) -> (kinds: ProcMemoryKinds, at: Int)? {
        func kinds(from start: Int) -> (kinds: ProcMemoryKinds, at: Int)? {
            // In the kernel's order (fs/proc/task_mmu.c): one pass.
            guard let anon = number(after: "RssAnon:", in: bytes, from: start), let file = number(after: "RssFile:", in: bytes, from: anon.next),
                  let shmem = number(after: "RssShmem:", in: bytes, from: file.next) else { return nil }
            let kinds = ProcMemoryKinds(anonBytes: anon.value &* 1024, fileBytes: file.value &* 1024, shmemBytes: shmem.value &* 1024,
                                        swapBytes: number(after: "VmSwap:", in: bytes, from: shmem.next).map { $0.value &* 1024 })
            return (kinds, anon.at)
        }
        let start = lineStart(before: hint - 32, in: bytes)
        return kinds(from: start) ?? (start > 0 ? kinds(from: 0) : nil)
    }

    /// The context switches of `/proc/PID/task/TID/status`: that thread's only. They are the
    /// file's last lines but for a few (x86_Thread_features…): searched from near the end first,
    /// as this is read for every thread.
    public static func contextSwitches(_ bytes: UnsafeRawBufferPointer) -> (voluntary: UInt64, involuntary: UInt64)? {
        func switches(from start: Int) -> (voluntary: UInt64, involuntary: UInt64)? {
            // Keys are matched at the start of a line: "nonvoluntary_…" is not taken for "voluntary_…".
            guard let voluntary = number(after: "voluntary_ctxt_switches:", in: bytes, from: start),
                  let involuntary = number(after: "nonvoluntary_ctxt_switches:", in: bytes, from: voluntary.next) else { return nil }
            return (voluntary.value, involuntary.value)
        }
        let start = lineStart(before: bytes.count - 256, in: bytes)
        return switches(from: start) ?? (start > 0 ? switches(from: 0) : nil)
    }

    /// Where the line that holds `index` starts (0 for an index at or before the start).
    static func lineStart(before index: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        guard index > 0 else { return 0 }
        var position = min(index, bytes.count) - 1
        while position >= 0 && bytes[position] != UInt8(ascii: "\n") { position -= 1 }
        return position + 1
    }

    /// `/proc/PID/task/TID/schedstat`: nanoseconds on a CPU, nanoseconds runnable but waiting
    /// for one (the run-queue delay), timeslices.
    public static func schedstat(_ bytes: UnsafeRawBufferPointer) -> (runNanoseconds: UInt64, waitNanoseconds: UInt64)? {
        var values: (UInt64, UInt64) = (0, 0)
        var field = 0, value: UInt64 = 0, digits = 0
        for byte in bytes {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value &* 10 &+ UInt64(byte &- UInt8(ascii: "0")); digits += 1
            } else {
                guard digits > 0 else { return nil }
                if field == 0 { values.0 = value } else { values.1 = value; return values }
                field += 1; value = 0; digits = 0
            }
        }
        return nil
    }

    /// The soft limit of `Max open files` in `/proc/PID/limits`; nil when unlimited or absent.
    public static func openFilesLimit(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        number(after: "Max open files", in: bytes)
    }

    /// `/proc/PID/oom_score`: one decimal number, 0…2000 (a line feed after it). Nil for anything
    /// else (an empty read: the process ended).
    public static func oomScore(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        var value: UInt64 = 0, digits = 0
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { break }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"), digits < 6 else { return nil }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0")); digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// `throttled_usec` (cgroup v2 `cpu.stat`, µs) or `throttled_time` (v1 `cpu.stat`, ns), in ns.
    public static func throttledNanoseconds(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        if let microseconds = number(after: "throttled_usec ", in: bytes) { return microseconds &* 1000 }
        return number(after: "throttled_time ", in: bytes)
    }

    /// The `total=` of a pressure file's `some` and `full` lines, µs (`full` is absent for CPU
    /// before Linux 5.13 and for the whole system's CPU).
    public static func pressure(_ bytes: UnsafeRawBufferPointer) -> (some: UInt64, full: UInt64?)? {
        func total(of line: StaticString) -> UInt64? {
            let lineCount = line.utf8CodeUnitCount
            var start = 0
            while start + lineCount <= bytes.count {
                var matches = true
                for offset in 0..<lineCount where bytes[start + offset] != line.utf8Start[offset] { matches = false; break }
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if matches {
                    let rest = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                    // "total=" inside the line: search it from the line's start.
                    var index = 0
                    let key: StaticString = "total="
                    while index + key.utf8CodeUnitCount <= rest.count {
                        var found = true
                        for offset in 0..<key.utf8CodeUnitCount where rest[index + offset] != key.utf8Start[offset] { found = false; break }
                        if found {
                            var cursor = index + key.utf8CodeUnitCount, value: UInt64 = 0, digits = 0
                            while cursor < rest.count, rest[cursor] >= UInt8(ascii: "0"), rest[cursor] <= UInt8(ascii: "9") {
                                value = value &* 10 &+ UInt64(rest[cursor] &- UInt8(ascii: "0")); digits += 1; cursor += 1
                            }
                            return digits > 0 ? value : nil
                        }
                        index += 1
                    }
                    return nil
                }
                start = end + 1
            }
            return nil
        }
        guard let some = total(of: "some ") else { return nil }
        return (some, total(of: "full "))
    }
}
