import PerfHUDStore

/// The bytes a run read from and wrote to storage, summed the one way the end summary and `report`
/// both use, over the same rows: each row's rate (`io_*_bytes_per_second`, the kernel's counter
/// difference over the time since the sample before) times the time since the row before. A row's
/// rate and time are kept at the resolution the recording keeps them at, so a live run and its
/// recording sum the same values. Nil while no row had the rate (perfhud may not read the file).
public struct RunStorageIO {
    public private(set) var readBytes: Double?
    public private(set) var writtenBytes: Double?
    private var previousT: Double?

    public init() {}

    /// One row, at `t` seconds since the start; `counted`: whether it is a row of what is summed
    /// (`--phase`: the phase's rows), which still starts the next row's interval when it is not.
    public mutating func add(t: Double, _ report: TargetFigures, counted: Bool = true) {
        defer { previousT = t }
        guard counted, let previousT, t > previousT else { return }
        let seconds = t - previousT
        if let rate = report.ioReadBytesPerSecond { readBytes = (readBytes ?? 0) + rate * seconds }
        if let rate = report.ioWriteBytesPerSecond { writtenBytes = (writtenBytes ?? 0) + rate * seconds }
    }
}
