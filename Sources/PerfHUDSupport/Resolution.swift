/// The resolution perfhud keeps its figures at — 0.01 % CPU, 0.01 FPS, 1 µs frame time, whole
/// bytes — from the moment they are derived. A recording stores them at exactly that resolution,
/// so what `replay` and `report` give back equals what was shown live, down to the last digit of
/// a rounded figure (a figure rounded twice, once to record and once to print, would not).
extension Double {
    /// Rounded to `1 / scale` (scale 100: hundredths), as `value * scale` rounded, then divided:
    /// the recording's views divide the stored integer the same way, giving the same `Double`.
    @inlinable @inline(__always)
    package func atResolution(_ scale: Double) -> Double { (self * scale).rounded() / scale }
}

extension Optional where Wrapped == Double {
    @inlinable @inline(__always)
    package func atResolution(_ scale: Double) -> Double? { map { $0.atResolution(scale) } }
}

/// The figures derived from others rather than recorded: one definition for the collector that
/// derives them live and the reader that derives them again from a recording.
public enum DerivedFigure {
    /// The machine-wide CPU: the kept CPU over the online CPUs, at 0.01 %.
    public static func machinePercent(_ cpu: Double?, onlineCPUs: Double) -> Double? { cpu.map { ($0 / onlineCPUs).atResolution(100) } }
    /// MangoHud's 1 % low: 1000 / p99 ms, at 0.01 FPS.
    public static func onePercentLow(p99 milliseconds: Double?) -> Double? {
        milliseconds.flatMap { $0 > 0 ? (1000 / $0).atResolution(100) : nil }
    }
}
