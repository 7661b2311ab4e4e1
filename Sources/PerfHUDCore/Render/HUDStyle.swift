/// Where the HUD sits and how it looks.
public struct HUDStyle: Equatable {
    public enum Position: String, CaseIterable { case top, bottom }
    public var position: Position
    public var color: Bool
    public var graphRows: Int

    public init(position: Position = .top, color: Bool = true, graphRows: Int = 4) {
        self.position = position
        self.color = color
        self.graphRows = graphRows
    }
}
