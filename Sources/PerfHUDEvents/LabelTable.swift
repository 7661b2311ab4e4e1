#if canImport(Glibc)
import Glibc
#endif

/// Interns labels by their bytes with open addressing: known labels cost a hash and a memcmp,
/// no allocation. Written by hand: Dictionary would need a String (an allocation) per line.
/// Keys live in one byte arena, so a lookup touches no reference-counted storage.
package struct LabelTable {
    /// Made at the first label (`size` of them): the daemon has a table per target, and most
    /// targets never send an action.
    private var slots: [Int32] = []
    private let size: Int
    private var hashes: [UInt64] = []
    private var offsets: [Int] = []
    private var lengths: [Int] = []
    private var arena: [UInt8] = []

    /// Room for `capacity` labels at most half full, so probes stay short.
    package init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        self.size = size
        // The arena grows with the labels (a new label is rare): reserved up front, its 12 KiB
        // were a resident page or more for each of a daemon's targets, most of which send none.
    }

    /// FNV-style mixing eight bytes at a time: labels are tens of bytes long.
    @inlinable @inline(__always)
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x100000001b3
            hash ^= hash >> 29
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0x100000001b3
            offset += 1
        }
        return hash ^ (hash >> 32)
    }

    package func find(_ bytes: UnsafeRawBufferPointer) -> Int? {
        if hashes.isEmpty { return nil }
        let hash = Self.hash(bytes)
        return slots.withUnsafeBufferPointer { slots in
            hashes.withUnsafeBufferPointer { hashes in
                arena.withUnsafeBytes { arena in
                    let mask = slots.count - 1
                    var slot = Int(truncatingIfNeeded: hash) & mask
                    while slots[slot] >= 0 {
                        let index = Int(slots[slot])
                        if hashes[index] == hash && lengths[index] == bytes.count
                            && (bytes.count == 0 || memcmp(arena.baseAddress! + offsets[index], bytes.baseAddress!, bytes.count) == 0) {
                            return index
                        }
                        slot = (slot + 1) & mask
                    }
                    return nil
                }
            }
        }
    }

    /// Adds `bytes` (not present); returns its index.
    package mutating func insert(_ bytes: UnsafeRawBufferPointer) -> Int {
        if slots.isEmpty { slots = [Int32](repeating: -1, count: size) }
        let hash = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = Int32(hashes.count)
        offsets.append(arena.count)
        lengths.append(bytes.count)
        arena.append(contentsOf: bytes)
        hashes.append(hash)
        return hashes.count - 1
    }
}
