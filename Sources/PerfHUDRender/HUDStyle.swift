/// Where the HUD sits and how it looks.
public struct HUDStyle: Equatable {
    public enum Position: String, CaseIterable { case top, bottom }
    public var position: Position
    public var color: Bool
    public var graphRows: Int
    /// Braille, box drawing and arrows where the locale's character set is UTF-8; else ASCII
    /// stand-ins (`TerminalText.ascii`), as htop and btop fall back.
    public var unicode: Bool
    /// The details line under the status line (`--details`; `d` toggles it where the HUD owns the keys).
    public var showsDetails: Bool
    /// `--alert-bell`: the bell rings once as an alert begins to hold.
    public var bell: Bool
    /// `--tmux`: the HUD is drawn in tmux's status lines, and takes no row of the terminal.
    public var inTmux = false

    public init(position: Position = .top, color: Bool = true, graphRows: Int = 4, unicode: Bool = true, showsDetails: Bool = false, bell: Bool = false) {
        self.bell = bell
        self.position = position
        self.color = color
        self.graphRows = graphRows
        self.unicode = unicode
        self.showsDetails = showsDetails
    }
}
