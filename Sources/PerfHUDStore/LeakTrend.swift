/// The leak trend: a least-squares line through RSS over the last `--leak-window`, updated
/// incrementally every tick. Its slope (bytes per hour), its r² (how much of RSS's movement the
/// line explains: 1 = a steady climb, near 0 = noise or a plateau), and the verdict: a leak is
/// suspected while the window is full, r² ≥ 0.8 and the slope ≥ `--leak-threshold`.
///
/// The sums are kept per slice of the window (a hundredth of it), so a tick costs a few additions
/// and memory stays the same whatever the tick: a slice that leaves the window is dropped and the
/// total summed again from the slices (no subtraction, no drift).
public struct LeakTrend {
    public struct Settings: Equatable {
        public var windowSeconds: Double = 300
        public var thresholdBytesPerHour: Double = 50 * 1024 * 1024
        public static let minimumR2 = 0.8
        public init(windowSeconds: Double = 300, thresholdBytesPerHour: Double = 50 * 1024 * 1024) {
            self.windowSeconds = windowSeconds
            self.thresholdBytesPerHour = thresholdBytesPerHour
        }
    }

    public struct Fit: Equatable {
        public var bytesPerHour: Double
        /// 0 when RSS did not move at all over the window (there is nothing to explain).
        public var r2: Double
        public var suspected: Bool
    }

    private struct Sums {
        var n = 0.0, t = 0.0, y = 0.0, tt = 0.0, ty = 0.0, yy = 0.0
        mutating func add(_ other: Sums) { n += other.n; t += other.t; y += other.y; tt += other.tt; ty += other.ty; yy += other.yy }
    }
    private static let slices = 100

    public let settings: Settings
    private let sliceSeconds: Double
    private var origin: (t: Double, y: Double)?
    private var buckets: [(index: Int, sums: Sums)] = []
    private var total = Sums()

    public init(settings: Settings = Settings()) {
        self.settings = settings
        sliceSeconds = max(settings.windowSeconds, 0.001) / Double(Self.slices)
        buckets.reserveCapacity(Self.slices + 2)
    }

    /// Takes RSS `bytes` at `time` (seconds) and returns the fit over the window; nil before there
    /// are two readings a second apart.
    public mutating func add(time: Double, bytes: Double) -> Fit? {
        if origin == nil { origin = (time, bytes) }
        let t = time - origin!.t, y = bytes - origin!.y
        let index = Int((t / sliceSeconds).rounded(.down))
        if buckets.last?.index != index {
            buckets.append((index, Sums()))
            let first = index - Self.slices
            if let drop = buckets.firstIndex(where: { $0.index > first }), drop > 0 {
                buckets.removeFirst(drop)
                total = Sums()
                for bucket in buckets { total.add(bucket.sums) }
            }
        }
        var point = Sums(n: 1, t: t, y: y, tt: t * t, ty: t * y, yy: y * y)
        buckets[buckets.count - 1].sums.add(point)
        total.add(point)
        point = total
        let spread = point.n * point.tt - point.t * point.t
        let span = t - (Double(buckets.first!.index) * sliceSeconds)
        guard point.n >= 2, spread > 0, span >= 1 else { return nil }
        let covariance = point.n * point.ty - point.t * point.y
        let slope = covariance / spread
        let variance = point.n * point.yy - point.y * point.y
        let r2 = (variance > 0 ? min(1, covariance * covariance / (spread * variance)) : 0).atResolution(1000)
        let perHour = (slope * 3600).rounded()
        let full = t >= settings.windowSeconds
        return Fit(bytesPerHour: perHour, r2: r2,
                   suspected: full && r2 >= Settings.minimumR2 && perHour >= settings.thresholdBytesPerHour)
    }
}
