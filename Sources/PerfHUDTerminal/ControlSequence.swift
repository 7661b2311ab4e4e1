/// Escape sequences, named: nothing else in perfhud writes an escape of its own (colours and
/// attributes inside the HUD's lines come from `Palette`).
public enum ControlSequence {
    public static let beginSynchronizedUpdate = "\u{1B}[?2026h"
    public static let endSynchronizedUpdate = "\u{1B}[?2026l"
    public static let hideCursor = "\u{1B}[?25l"
    public static let showCursor = "\u{1B}[?25h"
    /// DECSC / DECRC: cursor position and attributes.
    public static let saveCursor = "\u{1B}7"
    public static let restoreCursor = "\u{1B}8"
    public static let resetScrollRegion = "\u{1B}[r"
    public static let resetAttributes = "\u{1B}[0m"
    /// Faint text: perfhud's own notices in the program's area (an attribute, not a colour).
    public static let faint = "\u{1B}[2m"
    public static let clearScreen = "\u{1B}[2J"
    /// Erases the whole line the cursor is on.
    public static let eraseLine = "\u{1B}[2K"
    /// From the cursor to the end of its line: a line written over an older one leaves nothing of it.
    public static let eraseToEndOfLine = "\u{1B}[K"
    /// ED 0: from the cursor to the end of the screen.
    public static let eraseBelow = "\u{1B}[J"
    /// DL: deletes `count` lines from the cursor's down, within the scroll region only (lines
    /// below move up, blank ones come in at its bottom): clears the rest of the program's area
    /// without touching a HUD below it.
    public static func deleteLines(_ count: Int) -> String { "\u{1B}[\(count)M" }
    /// CUU: the cursor `count` rows up, stopping at the top margin.
    public static func cursorUp(_ count: Int) -> String { "\u{1B}[\(count)A" }
    /// One line up, same column.
    public static let cursorUp = "\u{1B}[A"
    /// DECRPM: synchronized output (mode 2026) is supported and off now — the answer to a program's
    /// `CSI ? 2026 $ p`.
    public static let synchronizedOutputSupported = "\u{1B}[?2026;2$y"
    public static let enterAlternateScreen = "\u{1B}[?1049h"
    public static let leaveAlternateScreen = "\u{1B}[?1049l"

    public static func moveTo(row: Int, column: Int = 1) -> String { "\u{1B}[\(row);\(column)H" }
    public static func scrollRegion(top: Int, bottom: Int) -> String { "\u{1B}[\(top);\(bottom)r" }
}
