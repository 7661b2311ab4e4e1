/// The resolution perfhud keeps its figures at — 0.01 % CPU, 0.01 FPS, 1 µs frame time, whole
/// bytes — from the moment they are derived. A recording stores them at exactly that resolution,
/// so what `replay` and `report` give back equals what was shown live, down to the last digit of
/// a rounded figure (a figure rounded twice, once to record and once to print, would not).
extension Double {
    /// Rounded to `1 / scale` (scale 100: hundredths), as `value * scale` rounded, then divided:
    /// the recording's views divide the stored integer the same way, giving the same `Double`.
    @inline(__always)
    func atResolution(_ scale: Double) -> Double { (self * scale).rounded() / scale }
}

extension Optional where Wrapped == Double {
    @inline(__always)
    func atResolution(_ scale: Double) -> Double? { map { $0.atResolution(scale) } }
}
