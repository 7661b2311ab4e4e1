/// Whether a frame is janky and how many refreshes it dropped: the one definition the live figures
/// (`EventAggregator`), the run's figures (`RunFrames`: the end summary and `report`) and the HTML
/// report's marks all use (docs/figures.md, Definitions).
public struct FrameBudget: Equatable {
    /// The display refresh the budget comes from (`--refresh`, default 60).
    public let refreshHz: Double
    /// A frame longer than this × the budget is janky (`--jank-factor`, default 1.5).
    public let jankFactor: Double

    public init(refreshHz: Double, jankFactor: Double) {
        self.refreshHz = refreshHz
        self.jankFactor = jankFactor
    }

    /// One refresh, in milliseconds.
    public var milliseconds: Double { 1000 / refreshHz }
    /// The longest frame that is not janky, in milliseconds.
    public var jankLimitMilliseconds: Double { jankFactor * milliseconds }

    @inline(__always)
    public func isJanky(_ frameMilliseconds: Double) -> Bool { frameMilliseconds > jankLimitMilliseconds }

    /// The refreshes a frame missed: max(0, round(duration / budget) − 1).
    @inline(__always)
    public func dropped(_ frameMilliseconds: Double) -> Double { max(0, (frameMilliseconds / milliseconds).rounded() - 1) }
}
