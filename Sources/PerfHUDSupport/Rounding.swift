extension Double {
    /// `Int64(self.rounded().clampedInt)` (to nearest, halves away from zero) without libm's
    /// `round`, a call per figure of every row (JSON and recording): the fraction
    /// `self - trunc(self)` is exact for any double. NaN is 0; beyond Int64, its bounds.
    @inlinable @inline(__always) package var nearestInteger: Int64 {
        guard !isNaN else { return 0 }
        guard self > -9.2e18 else { return Int64(Int.min) }
        guard self < 9.2e18 else { return Int64(Int.max) }
        let whole = Int64(self)
        let fraction = self - Double(whole)
        return fraction >= 0.5 ? whole + 1 : fraction <= -0.5 ? whole - 1 : whole
    }
}
