/// A fixed-capacity ring buffer: appending to a full buffer overwrites the oldest element.
///
/// Written by hand rather than taken from swift-collections' `Deque`: a deque grows, and the
/// time series must stay the size `--history / --tick` gave it, allocating nothing per tick.
public struct RingBuffer<Element> {
    @usableFromInline var storage: [Element]
    /// Slot of the oldest element.
    @usableFromInline var start = 0
    @usableFromInline var _count = 0
    public var count: Int { _count }
    public let capacity: Int

    /// The room is reserved, not filled: memory the buffer has not reached yet is address space,
    /// not resident pages (an event aggregator's 65,536-frame window is 1 MiB, and a daemon of
    /// many targets has one per target, most of which never see a frame). Appends up to
    /// `capacity` never reallocate.
    /// - Parameter filler: kept for the callers' sake; unused slots are never read back.
    public init(capacity: Int, filler: Element) {
        precondition(capacity > 0, "a ring buffer needs room for one element")
        self.capacity = capacity
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Appends `element`, dropping the oldest one when full.
    @inlinable
    public mutating func append(_ element: Element) {
        if count < capacity {
            var slot = start + count
            if slot >= capacity { slot -= capacity }
            if slot == storage.count { storage.append(element) } else { storage[slot] = element }
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
    init(capacity: Int, filler: Element, startingAt start: Int) {
        self.init(capacity: capacity, filler: filler)
        storage = Array(repeating: filler, count: capacity)
        self.start = start % capacity
    }

    /// The elements oldest first.
    public var elements: [Element] { (0..<count).map { self[$0] } }
}
