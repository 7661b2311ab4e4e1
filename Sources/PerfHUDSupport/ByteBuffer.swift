/// Bytes appended through a pointer into memory the buffer owns, for text written every tick (the
/// JSON row: ~1.3 KB of ~60 keys and numbers). `Array.append` checks uniqueness and capacity, and
/// calls memcpy, at each of the row's ~250 appends: that was half of an idle tick's instructions.
/// Here a writer makes room once for a field (`reserve`) and then stores bytes: `put` does not
/// check, so every `put` must follow a `reserve` that covers it.
///
/// Not copyable: one owner, freed once (`deinit`), never copied by accident at each tick.
public struct ByteBuffer: ~Copyable {
    // @usableFromInline: the writers are @inlinable, so that the layers above (the JSON row, the
    // recording) inline them as they did when the core was one module.
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    /// The bytes written.
    public var count: Int { written }
    @usableFromInline var written = 0
    @usableFromInline var capacity: Int

    public init(capacity: Int = 2048) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Empties the buffer, keeping its memory.
    public mutating func removeAll() { written = 0 }
    /// Forgets the last byte written (a closing brace a field is added before).
    public mutating func removeLast() { if written > 0 { written -= 1 } }

    /// Makes room for `bytes` more bytes.
    @inlinable @inline(__always)
    public mutating func reserve(_ bytes: Int) {
        if count + bytes > capacity { grow(to: count + bytes) }
    }

    @inline(never)
    @usableFromInline mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// One byte, in room already reserved.
    @inlinable @inline(__always)
    public mutating func put(_ byte: UInt8) {
        base[count] = byte
        written += 1
    }

    /// `length` bytes from `source`, in room already reserved.
    @inlinable @inline(__always)
    public mutating func put(_ source: UnsafePointer<UInt8>, _ length: Int) {
        (base + count).update(from: source, count: length)
        written += length
    }

    /// The bytes `putWords` may read past its source's end and write past its length.
    public static let wordSlack = 8

    /// `length` bytes from `source`, copied a word (8 bytes) at a time, in room already reserved
    /// for `length + wordSlack`: up to 7 bytes past `length` are read from `source` (which must be
    /// readable that far) and written here, in room the next put overwrites. For the JSON row's
    /// ~60 keys of 10–40 bytes: a memcpy call each was 6.7k instructions of an idle tick's 51k.
    @inlinable @inline(__always)
    public mutating func putWords(_ source: UnsafePointer<UInt8>, _ length: Int) {
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(base + count)
        var offset = 0
        while offset < length {
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: offset, as: UInt64.self), toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        written += length
    }

    /// A static ASCII text, in room already reserved.
    @inlinable @inline(__always)
    public mutating func put(_ text: StaticString) {
        put(text.utf8Start, text.utf8CodeUnitCount)
    }

    /// The decimal digits of `value`, zero-padded to at least `width` digits (at most 20), in
    /// room already reserved (`width` or 20 bytes, whichever is more).
    @inlinable @inline(__always)
    public mutating func putDigits(_ value: UInt64, width: Int = 0) {
        var length = 1
        var limit: UInt64 = 10
        while length < 20 && value >= limit { length += 1; limit = limit &* 10 }
        length = max(length, min(width, 20))
        // Two digits a step from the table of 00…99: half the divisions of a digit a step.
        var rest = value
        var index = count + length
        let pairs = Self.digitPairs.utf8Start
        while index - 2 >= count {
            let pair = Int(truncatingIfNeeded: rest % 100)
            rest /= 100
            index -= 2
            base[index] = pairs[2 &* pair]
            base[index + 1] = pairs[2 &* pair + 1]
        }
        if index > count { base[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10) }
        written += length
    }

    @usableFromInline static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Reserves room for `text` and appends it.
    public mutating func append(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        put(text)
    }

    /// Reserves room for `bytes` and appends them.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        put(start.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// The bytes written so far, valid until the next change.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
