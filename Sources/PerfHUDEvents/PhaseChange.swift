import PerfHUDSupport

/// A phase change, stamped when it arrived.
public struct PhaseChange: Equatable {
    public var name: String
    public var monotonicNanoseconds: UInt64
    /// The target's RSS read the moment the change arrived (see `EventAggregator.residentProbe`).
    public var residentBytes: UInt64?
}
