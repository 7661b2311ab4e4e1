/// The kernel's counts and levels that make up an `Activity`, one struct a file each reads.

/// `/proc/PID/io`, cumulative.
public struct ProcIO: Equatable {
    public var readChars: UInt64
    public var writeChars: UInt64
    public var readBytes: UInt64
    public var writeBytes: UInt64
}

/// Resident memory by kind and swap, bytes (`/proc/PID/status`).
public struct ProcMemoryKinds: Equatable {
    public var anonBytes: UInt64
    public var fileBytes: UInt64
    public var shmemBytes: UInt64
    public var swapBytes: UInt64?
}

/// `*.pressure` totals (µs), nil where the group has no such file or line.
public struct PressureTotals: Equatable {
    public var cpuSome: UInt64?, cpuFull: UInt64?
    public var memorySome: UInt64?, memoryFull: UInt64?
    public var ioSome: UInt64?, ioFull: UInt64?
    public init() {}
}
