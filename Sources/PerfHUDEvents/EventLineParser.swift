#if canImport(Glibc)
import Glibc
#endif

/// One parsed line of the event protocol (a DogStatsD-compatible subset):
///
///     perfhud.action:1|c|#action:Counter.incrementTapped
///     perfhud.frame:16.7|ms          (also |h and |d; packed: 16.7:16.9:33.4|d)
///     perfhud.frame:16.7|ms|#source:gl|end_ns:123456789012
///     perfhud.phase:1|c|#phase:DrawingScreen
///     perfhud.action.Counter.incrementTapped:1|c     plain StatsD: the label in the name
///     perfhud.phase.DrawingScreen:1|c
///     perfhud.graphics:1|c|#api:gl   the frame hooks: the program loaded a graphics API (gl, vulkan)
///
/// A client namespace prefix is allowed (`myapp.perfhud.action`, `myapp.perfhud.action.X`);
/// sample rates (`|@0.5`) scale counts. DogStatsD events (`_e{…}`) and service checks (`_sc|…`)
/// are well-formed lines that are not perfhud's: ignored, like other metrics. The parser
/// allocates nothing: labels are slices of the datagram, handed to a sink.
///
/// `|end_ns:N` (frame lines only, optional, anywhere after the type) is when the frame ended:
/// CLOCK_MONOTONIC in nanoseconds, as perfhud reads it. Batching senders (the frame hooks, the
/// Swift client) send it so that a frame counts in the second it ended in, not in the one its
/// datagram arrived in. On a packed line it is the end of the last value; each value before ends
/// where the next one started. The name is one DogStatsD does not use (its fields are `@`, `#`,
/// `c:`, `T`, `e:`, `card:`; the Datadog agent skips others), and older perfhud versions skip
/// sections they do not know, so they count the frame at its arrival. A value that is not 1 to 20
/// decimal digits fitting in 64 bits makes the line malformed, as a bad sample rate does: a
/// sender that means to give a time and gets it wrong should show in `events_malformed`. Whether
/// the time is believed (not after arrival, not long before it) is the aggregator's call.
public enum EventKind: Equatable { case action, frame, phase, graphics }

public protocol EventSink {
    /// `label` is valid only during the call.
    mutating func action(label: UnsafeRawBufferPointer, count: Double)
    /// `end`: when the frame ended (CLOCK_MONOTONIC ns), from the line's `end_ns` field; nil
    /// when the line has none.
    mutating func frame(milliseconds: Double, count: Double, source: FrameSource, end: UInt64?)
    /// `residentBytes`: the program's own RSS as it entered the phase, from the line's `rss:` tag
    /// (the client library and `perfhud emit` send it); nil when the line has none.
    mutating func phase(name: UnsafeRawBufferPointer, residentBytes: UInt64?)
    /// The frame hooks say a process of the program loaded a graphics API (`api`: `gl`, `vulkan`):
    /// where it never presents, perfhud says so instead of showing no frames without a reason.
    mutating func graphicsLoaded(api: UnsafeRawBufferPointer)
    /// A well-formed metric that is not perfhud's.
    mutating func ignored()
    mutating func malformed()
    /// The datagram's last line has been handed over: frames without an end time can be placed
    /// (the last of them ended when it arrived).
    mutating func endDatagram()
}

extension EventSink {
    public mutating func endDatagram() {}
    public mutating func graphicsLoaded(api: UnsafeRawBufferPointer) { ignored() }
}

public enum EventLineParser {
    /// The lowest sample rate accepted (`|@0.0001`): one line then stands for 10,000. Lower rates,
    /// and rates outside (0, 1], make the line malformed: a sender cannot make one datagram count
    /// as 10¹⁹ events (issue 8: `@1e-19`).
    public static let minimumSampleRate = 0.0001
    /// The largest count one line may carry before its sample rate (`perfhud.action:1000000|c`).
    public static let maximumCount = 1_000_000.0
    /// Frame durations are in [0, 1 hour).
    public static let maximumFrameMilliseconds = 3_600_000.0

    /// Parses every `\n`-separated line of `datagram`, then ends it (`EventSink.endDatagram`);
    /// returns the number of non-empty lines.
    @discardableResult
    public static func parse<Sink: EventSink>(_ datagram: UnsafeRawBufferPointer, into sink: inout Sink) -> Int {
        var lines = 0
        var start = 0
        let count = datagram.count
        guard let base = datagram.baseAddress else { return 0 }
        while start < count {
            // memchr: the C library scans for the newline many bytes at a time.
            let found = memchr(base + start, 0x0A, count - start)
            let end = found.map { base.distance(to: UnsafeRawPointer($0)) } ?? count
            var lineEnd = end
            if lineEnd > start && datagram[lineEnd - 1] == 0x0D { lineEnd -= 1 }   // tolerate \r\n
            if lineEnd > start {
                lines += 1
                parseLine(UnsafeRawBufferPointer(rebasing: datagram[start..<lineEnd]), into: &sink)
            }
            start = end + 1
        }
        sink.endDatagram()
        return lines
    }

    /// The index of `byte` in `bytes[from...]`; nil when absent. memchr: a line's longest spans
    /// (a label in the name or in the tags, tens of bytes) are scanned many bytes at a time, where a
    /// loop went byte by byte; for the short ones (a count, a type) the call costs about what the
    /// loop did (measured: docs/benchmarks.md, "What the code's shape saves").
    @inlinable @inline(__always)
    package static func find(_ byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard from < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + from, Int32(byte), bytes.count - from) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    @inline(__always)
    static func slice(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes.baseAddress.map { $0 + start }, count: end - start)
    }

    package static func parseLine<Sink: EventSink>(_ line: UnsafeRawBufferPointer, into sink: inout Sink) {
        if line.first == UInt8(ascii: "_") {
            if hasPrefix(line, "_e{") { if isDogStatsDEvent(line) { sink.ignored() } else { sink.malformed() }; return }
            if hasPrefix(line, "_sc|") { if isServiceCheck(line) { sink.ignored() } else { sink.malformed() }; return }
        }
        // name:values|type[|@rate][|#tags]
        guard let colon = find(UInt8(ascii: ":"), in: line, from: 0), colon > 0,
              let pipe = find(UInt8(ascii: "|"), in: line, from: colon + 1), pipe > colon + 1 else {
            sink.malformed(); return
        }
        let name = slice(line, 0, colon)
        var values = slice(line, colon + 1, pipe)
        // Sections after the type: |type|@rate|#tags|…
        var type = UnsafeRawBufferPointer(start: nil, count: 0)
        var rate = 1.0
        var tags = UnsafeRawBufferPointer(start: nil, count: 0)
        var endField: UnsafeRawBufferPointer? = nil
        var sectionStart = pipe + 1
        var section = 0
        while sectionStart <= line.count {
            let sectionEnd = find(UInt8(ascii: "|"), in: line, from: sectionStart) ?? line.count
            let text = slice(line, sectionStart, sectionEnd)
            if section == 0 {
                type = text
            } else if let first = text.first {
                if first == UInt8(ascii: "@") {
                    guard let parsed = number(slice(text, 1, text.count)), parsed >= minimumSampleRate, parsed <= 1 else {
                        sink.malformed(); return
                    }
                    rate = parsed
                } else if first == UInt8(ascii: "#") {
                    tags = slice(text, 1, text.count)
                } else if first == UInt8(ascii: "e") && hasPrefix(text, "end_ns:") {
                    endField = slice(text, 7, text.count)
                }
                // c: container ids, T: timestamps (DogStatsD 1.2/1.3), e: external data and
                // anything else are accepted and ignored.
            }
            section += 1
            sectionStart = sectionEnd + 1
        }
        guard !type.isEmpty else { sink.malformed(); return }
        let kind: EventKind
        // Plain StatsD (no tags): the label is the rest of the name.
        var labelInName: UnsafeRawBufferPointer? = nil
        if hasNameSuffix(name, "perfhud.action") { kind = .action }
        else if hasNameSuffix(name, "perfhud.frame") { kind = .frame }
        else if hasNameSuffix(name, "perfhud.phase") { kind = .phase }
        else if hasNameSuffix(name, "perfhud.graphics") { kind = .graphics }
        else if let (found, labelStart) = labelledName(line, before: colon) {
            // A label may hold ':' (TCA's `moved(x:, y:)`) but never '|': the count is after the
            // last ':' before the first '|'.
            var lastColon = pipe - 1
            while lastColon > labelStart, line[lastColon] != UInt8(ascii: ":") { lastColon -= 1 }
            guard lastColon > labelStart else { sink.malformed(); return }     // an empty label
            kind = found
            values = slice(line, lastColon + 1, pipe)
            labelInName = slice(line, labelStart, lastColon)
        } else {
            guard isKnownType(type), !values.isEmpty else { sink.malformed(); return }
            sink.ignored(); return
        }
        switch kind {
        case .graphics:
            guard equals(type, "c"), let api = tag("api:", in: tags), !api.isEmpty else { sink.malformed(); return }
            sink.graphicsLoaded(api: api)
        case .action, .phase:
            guard equals(type, "c"), let value = number(values), value >= 0, value <= maximumCount else { sink.malformed(); return }
            guard let label = labelInName ?? tag(kind == .action ? "action:" : "phase:", in: tags), !label.isEmpty else {
                sink.malformed(); return
            }
            if kind == .action {
                sink.action(label: label, count: value / rate)
            } else {
                // `#phase:NAME,rss:BYTES`: the sender's RSS at the moment it entered the phase. An
                // unreadable one is left out (the receiver reads the RSS), not the line.
                sink.phase(name: label, residentBytes: tag("rss:", in: tags).flatMap { nanoseconds($0) })
            }
        case .frame:
            guard equals(type, "ms") || equals(type, "h") || equals(type, "d") else { sink.malformed(); return }
            let weight = 1 / rate
            // perfhud's own hooks tag their frames (`#source:gl`); the program's carry no source.
            let source = tags.count == 0 ? FrameSource.events : FrameSource(tag: tag("source:", in: tags))
            var end: UInt64? = nil
            if let endField {
                guard let parsed = nanoseconds(endField) else { sink.malformed(); return }
                end = parsed
            }
            // The common case: one value.
            if find(UInt8(ascii: ":"), in: values, from: 0) == nil {
                guard let milliseconds = number(values), milliseconds >= 0, milliseconds < maximumFrameMilliseconds else {
                    sink.malformed(); return
                }
                sink.frame(milliseconds: milliseconds, count: weight, source: source, end: end)
                return
            }
            // Packed values (DogStatsD 1.1): 16.7:16.9:33.4. All must parse, or the line is dropped:
            // a first pass checks them and sums them (a value's end is the line's end less the
            // values after it), a second hands them on. Two passes rather than an array: no
            // allocation per line.
            var total = 0.0
            var valueStart = 0
            while valueStart <= values.count {
                let valueEnd = find(UInt8(ascii: ":"), in: values, from: valueStart) ?? values.count
                guard let milliseconds = number(slice(values, valueStart, valueEnd)),
                      milliseconds >= 0, milliseconds < maximumFrameMilliseconds else { sink.malformed(); return }
                total += milliseconds
                valueStart = valueEnd + 1
            }
            var through = 0.0
            valueStart = 0
            while valueStart <= values.count {
                let valueEnd = find(UInt8(ascii: ":"), in: values, from: valueStart) ?? values.count
                let milliseconds = number(slice(values, valueStart, valueEnd)) ?? 0
                through += milliseconds
                // An end that would fall before 0 (or more than 30 years back) becomes 0, which
                // the aggregator disbelieves.
                let valueEndTime = end.map { end -> UInt64 in
                    let after = (total - through) * 1e6
                    guard after < 1e18 else { return 0 }
                    let nanoseconds = UInt64(after.rounded())
                    return nanoseconds < end ? end - nanoseconds : 0
                }
                sink.frame(milliseconds: milliseconds, count: weight, source: source, end: valueEndTime)
                valueStart = valueEnd + 1
            }
        }
    }

    /// An `end_ns` value: 1 to 20 decimal digits, at most UInt64.max.
    package static func nanoseconds(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 20, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        // 19 digits cannot overflow (< 10^19 < 2^64): only the 20th is checked.
        let unchecked = min(bytes.count, 19)
        var value: UInt64 = 0
        for index in 0..<unchecked {
            let digit = base[index] &- 0x30
            guard digit <= 9 else { return nil }
            value = value &* 10 &+ UInt64(digit)
        }
        guard bytes.count == 20 else { return value }
        let digit = base[19] &- 0x30
        guard digit <= 9 else { return nil }
        let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
        return overflow1 || overflow2 ? nil : sum
    }

    /// Does `name` equal `suffix` or end with `.` + `suffix` (a client namespace)?
    @inline(__always)
    static func hasNameSuffix(_ name: UnsafeRawBufferPointer, _ suffix: StaticString) -> Bool {
        let length = suffix.utf8CodeUnitCount
        guard name.count >= length, let base = name.baseAddress else { return false }
        let offset = name.count - length
        if offset > 0 && name[offset - 1] != UInt8(ascii: ".") { return false }
        return memcmp(base + offset, suffix.utf8Start, length) == 0
    }

    /// The value of tag `key` (e.g. `action:`) among comma-separated tags. A comma inside
    /// parentheses does not end a tag: TCA's labels hold them (`moved(x:, y:)`), and the Swift
    /// client and `perfhud emit` send labels as tags. (DogStatsD itself has no commas in tag
    /// values; other tags hold no parentheses, so they split as before.)
    package static func tag(_ key: StaticString, in tags: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let base = tags.baseAddress else { return nil }
        let length = key.utf8CodeUnitCount
        // No comma at all (one tag, the common case): no parentheses to follow.
        if memchr(base, Int32(UInt8(ascii: ",")), tags.count) == nil {
            guard tags.count >= length, memcmp(base, key.utf8Start, length) == 0 else { return nil }
            return slice(tags, length, tags.count)
        }
        var start = 0
        while start < tags.count {
            var end = start
            var depth = 0
            while end < tags.count {
                let byte = tags[end]
                if byte == UInt8(ascii: "(") { depth += 1 }
                else if byte == UInt8(ascii: ")") { if depth > 0 { depth -= 1 } }
                else if byte == UInt8(ascii: ",") && depth == 0 { break }
                end += 1
            }
            if end - start >= length && memcmp(base + start, key.utf8Start, length) == 0 {
                return slice(tags, start + length, end)
            }
            start = end + 1
        }
        return nil
    }

    /// `perfhud.action.LABEL` or `perfhud.phase.NAME` in the name, at its start or after a
    /// namespace's dot: the kind and where the label starts. Looked for only in `line[..<before]`,
    /// the part before the first ':' (a namespace holds none), and only once the tagged names
    /// did not match, so tagged lines cost nothing more.
    static func labelledName(_ line: UnsafeRawBufferPointer, before end: Int) -> (EventKind, Int)? {
        guard let base = line.baseAddress else { return nil }
        let action: StaticString = "perfhud.action."
        let phase: StaticString = "perfhud.phase."
        var start = 0
        while start < end {
            if start == 0 || line[start - 1] == UInt8(ascii: ".") {
                if end - start >= action.utf8CodeUnitCount && memcmp(base + start, action.utf8Start, action.utf8CodeUnitCount) == 0 {
                    return (.action, start + action.utf8CodeUnitCount)
                }
                if end - start >= phase.utf8CodeUnitCount && memcmp(base + start, phase.utf8Start, phase.utf8CodeUnitCount) == 0 {
                    return (.phase, start + phase.utf8CodeUnitCount)
                }
            }
            start += 1
        }
        return nil
    }

    @inlinable @inline(__always)
    package static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }

    /// A DogStatsD event, `_e{TITLE_LENGTH,TEXT_LENGTH}:title|text[|…]`: the two lengths and the
    /// `}:` are checked, the rest is not read.
    static func isDogStatsDEvent(_ line: UnsafeRawBufferPointer) -> Bool {
        var index = 3   // past "_e{"
        func digits() -> Bool {
            let start = index
            while index < line.count, index - start < 10, line[index] >= 0x30 && line[index] <= 0x39 { index += 1 }
            return index > start
        }
        guard digits(), index < line.count, line[index] == UInt8(ascii: ",") else { return false }
        index += 1
        guard digits(), index + 1 < line.count, line[index] == UInt8(ascii: "}"), line[index + 1] == UInt8(ascii: ":") else { return false }
        return true
    }

    /// A DogStatsD service check, `_sc|name|status[|…]` with a status of 0 to 3.
    static func isServiceCheck(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let nameEnd = find(UInt8(ascii: "|"), in: line, from: 4), nameEnd > 4, nameEnd + 1 < line.count else { return false }
        let status = line[nameEnd + 1]
        guard status >= UInt8(ascii: "0") && status <= UInt8(ascii: "3") else { return false }
        return nameEnd + 2 == line.count || line[nameEnd + 2] == UInt8(ascii: "|")
    }

    static func isKnownType(_ type: UnsafeRawBufferPointer) -> Bool {
        let known: [StaticString] = ["c", "g", "ms", "h", "d", "s"]
        for name in known where equals(type, name) { return true }
        return false
    }

    @inlinable @inline(__always)
    package static func equals(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        let pointer = text.utf8Start
        for index in 0..<bytes.count where bytes[index] != pointer[index] { return false }
        return true
    }

    /// A decimal number: `16`, `16.7`, `-2`, `.5`, `1e3`. No hex, no inf, no nan.
    package static func number(_ bytes: UnsafeRawBufferPointer) -> Double? {
        guard !bytes.isEmpty, bytes.count <= 32 else { return nil }
        // The common count, `1` (and any one digit): what the loop below gives, without it.
        if bytes.count == 1 {
            let digit = bytes[0] &- 0x30
            return digit <= 9 ? Double(digit) : nil
        }
        var index = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") { negative = bytes[0] == UInt8(ascii: "-"); index = 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var scale = 0
        var seenDot = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 0x30 && byte <= 0x39 {
                if digits < 18 { mantissa = mantissa * 10 + UInt64(byte - 0x30); if seenDot { scale -= 1 } }
                else if !seenDot { scale += 1 }
                digits += 1
            } else if byte == UInt8(ascii: ".") && !seenDot {
                seenDot = true
            } else { break }
            index += 1
        }
        guard digits > 0 else { return nil }
        if index < bytes.count {
            guard bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") else { return nil }
            index += 1
            var exponentNegative = false
            if index < bytes.count && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
                exponentNegative = bytes[index] == UInt8(ascii: "-"); index += 1
            }
            var exponent = 0
            var exponentDigits = 0
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 {
                exponent = min(exponent * 10 + Int(bytes[index] - 0x30), 400); exponentDigits += 1; index += 1
            }
            guard exponentDigits > 0, index == bytes.count else { return nil }
            scale += exponentNegative ? -exponent : exponent
        }
        var value = Double(mantissa)
        if scale != 0 {
            let power = pow10(abs(scale))
            value = scale > 0 ? value * power : value / power
        }
        guard value.isFinite else { return nil }
        return negative ? -value : value
    }

    private static func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        var base = 10.0
        var remaining = min(exponent, 400)
        while remaining > 0 {
            if remaining & 1 == 1 { result *= base }
            base *= base
            remaining >>= 1
        }
        return result
    }
}
