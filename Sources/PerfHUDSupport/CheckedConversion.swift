extension Double {
    /// The nearest `Int`, clamped to Int's range; 0 for NaN. `Int(_:)` traps on a value outside
    /// the range or not finite, and figures derived from what other programs send must never
    /// be able to do that.
    @inlinable @inline(__always)
    public var clampedInt: Int {
        guard !isNaN else { return 0 }
        if self >= 9.2e18 { return Int.max }
        if self <= -9.2e18 { return Int.min }
        return Int(self)
    }
}
