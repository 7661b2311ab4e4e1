/// An action for the log, with repeats folded: `Slider.changed ×37`.
public struct ActionLogEntry: Equatable {
    public var label: String
    public var count: Double
    public init(label: String, count: Double) {
        self.label = label; self.count = count
    }
}
