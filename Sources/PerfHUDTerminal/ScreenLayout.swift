import PerfHUDRender

/// Where the HUD and the program's area sit on the screen. Rows are 1-based, as in CUP.
public struct ScreenLayout: Equatable {
    public var size: TerminalSize
    public var hudHeight: Int
    public var position: HUDStyle.Position

    public init(size: TerminalSize, style: HUDStyle) {
        self.size = size
        self.position = style.position
        hudHeight = HUDRenderer.height(for: size, style: style)
    }

    public var hudFirstRow: Int { position == .top ? 1 : size.rows - hudHeight + 1 }
    /// Rows the program below (or above) the HUD owns: its pseudo-terminal gets this height.
    public var programRows: Int { max(1, size.rows - hudHeight) }
    /// Screen rows above the program's area: added to every row it addresses.
    public var programOffset: Int { position == .top ? hudHeight : 0 }
    public var programTop: Int { programOffset + 1 }
    public var programBottom: Int { programOffset + programRows }
}
