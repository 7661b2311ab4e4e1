/// Figures made once a second off the tick (the GPU's, the network's) as a tick carries them
/// (`Sample`, `TargetFigures`): made once, shared by reference. The figures are copied several times a tick;
/// the GPU figures inline (strings, a device) made each copy ~270 bytes and three retains longer
/// (callgrind: +2,700 instructions an idle tick of memcpy alone).
public final class FiguresBox<Boxed: Equatable>: Equatable {
    public let value: Boxed
    public init(_ value: Boxed) { self.value = value }
    public static func == (a: FiguresBox, b: FiguresBox) -> Bool { a === b || a.value == b.value }
}

/// Immutable: shared by the thread that reads the figures and the tick's.
extension FiguresBox: Sendable where Boxed: Sendable {}

/// A target's GPU figures as a tick carries them (`Sample.gpu`, `TargetFigures.gpuBox`).
public typealias GPUFiguresBox = FiguresBox<GPUFigures>

/// The GPU figures of one target at one tick (`TargetFigures.gpu`): unknown is nil, never 0.
public struct GPUFigures: Equatable, Sendable {
    public var busyPercent: Double?
    public var memoryBytes: UInt64?
    public var memoryBusyPercent: Double?
    public var encoderPercent: Double?
    public var decoderPercent: Double?
    /// The device the target uses (the first one when none).
    public var device: GPUDevice?
    /// Why the per-target figures are unknown (or partly: MIG); nil when read.
    public var unreportedReason: String?

    public init() {}

    /// The device a recording's columns are put back into (made when a first one is).
    package var recordedDevice: GPUDevice {
        get { device ?? GPUDevice(name: "", id: "") }
        set { device = newValue }
    }
}

extension GPUFigures {
    /// Two processes' figures as one target's (the daemon's groups): sums, the first device.
    public static func sum(_ a: GPUFiguresBox?, _ b: GPUFiguresBox?) -> GPUFiguresBox? {
        guard let boxA = a, let boxB = b else { return a ?? b }
        let (a, b) = (boxA.value, boxB.value)
        func add(_ x: Double?, _ y: Double?) -> Double? { x.flatMap { x in y.map { x + $0 } } }
        var result = a
        result.busyPercent = add(a.busyPercent, b.busyPercent)
        result.memoryBusyPercent = add(a.memoryBusyPercent, b.memoryBusyPercent)
        result.encoderPercent = add(a.encoderPercent, b.encoderPercent)
        result.decoderPercent = add(a.decoderPercent, b.decoderPercent)
        result.memoryBytes = a.memoryBytes.flatMap { x in b.memoryBytes.map { x &+ $0 } }
        if (b.memoryBytes ?? 0) > (a.memoryBytes ?? 0) { result.device = b.device }
        result.unreportedReason = a.unreportedReason ?? b.unreportedReason
        return GPUFiguresBox(result)
    }
}
