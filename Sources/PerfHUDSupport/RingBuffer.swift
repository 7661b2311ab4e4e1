/// A fixed-capacity ring buffer: appending to a full buffer overwrites the oldest element.
///
/// Written by hand rather than taken from swift-collections' `Deque`: a deque grows, and the
/// time series must stay the size `--history / --tick` gave it, allocating nothing per tick.
public struct RingBuffer<Element> {
    @usableFromInline package var storage: [Element]
    /// Slot of the oldest element.
    @usableFromInline package var start = 0
    @usableFromInline var _count = 0
    public var count: Int { _count }
    public let capacity: Int

    /// The room grows as the buffer fills (doubling, up to `capacity`), then stays: once full,
    /// appends never allocate. Neither filled nor reserved up front: a reservation of a few KiB is
    /// resident all the same (malloc writes its header on the first of its pages, and the next
    /// allocation on the page after it), and a daemon of many targets has ten ring buffers a target,
    /// most of them far from full (its history: 7 × `--history / --tick` doubles, 33 KiB of 80 per
    /// target at 10m/1s, measured with Benchmarks/daemon_vs_process_exporter.py; the event
    /// aggregator's 65,536-frame window, 1 MiB, for a target that may never send a frame).
    /// - Parameter filler: kept for the callers' sake; unused slots are never read back.
    public init(capacity: Int, filler: Element) {
        precondition(capacity > 0, "a ring buffer needs room for one element")
        self.capacity = capacity
        storage = []
    }

    /// Appends `element`, dropping the oldest one when full. Always inlined: the store appends to
    /// seven rings a tick from another module, where a call each cost ~50 instructions.
    @inlinable @inline(__always)
    public mutating func append(_ element: Element) {
        if count < capacity {
            var slot = start + count
            if slot >= capacity { slot -= capacity }
            if slot == storage.count {
                if storage.count == storage.capacity { storage.reserveCapacity(Swift.min(capacity, Swift.max(16, storage.capacity * 2))) }
                storage.append(element)
            } else {
                storage[slot] = element
            }
            _count += 1
        } else {
            storage[start] = element
            start += 1
            if start == capacity { start = 0 }
        }
    }

    /// The element `index` places after the oldest (0 = oldest, count - 1 = newest).
    @inlinable
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "ring buffer index out of range")
        var slot = start + index
        if slot >= capacity { slot -= capacity }
        return storage[slot]
    }

    /// Replaces the element `index` places after the oldest.
    @inlinable
    public mutating func set(_ index: Int, _ element: Element) {
        precondition(index >= 0 && index < count, "ring buffer index out of range")
        var slot = start + index
        if slot >= capacity { slot -= capacity }
        storage[slot] = element
    }

    public var last: Element? { count == 0 ? nil : self[count - 1] }
    public var first: Element? { count == 0 ? nil : self[0] }
    public var isEmpty: Bool { count == 0 }

    public mutating func removeAll() { start = 0; _count = 0 }

    /// Test hook: a buffer whose oldest element will sit in slot `start`, as if `start` elements
    /// had been appended and dropped before.
    package init(capacity: Int, filler: Element, startingAt start: Int) {
        self.init(capacity: capacity, filler: filler)
        storage = Array(repeating: filler, count: capacity)
        self.start = start % capacity
    }

    /// The elements oldest first.
    public var elements: [Element] { (0..<count).map { self[$0] } }
}
