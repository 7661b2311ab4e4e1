/// Diffs each HUD frame against the last and emits only the lines that changed.
public struct FrameWriter {
    private var previous: [String] = []
    private var previousFirstRow = 0

    public init() {}

    /// Forgets what is on screen, so the next update repaints every line (after a resize, a
    /// clear screen by the program, or a return from suspension).
    public mutating func invalidate() { previous = [] }

    /// The bytes that bring the screen from the last frame to `lines` at `firstRow`; empty when
    /// nothing changed. Each changed line is erased whole first: erasing after a full-width line
    /// would hit the last column while the cursor waits to wrap.
    public mutating func update(lines: [String], firstRow: Int) -> String {
        if firstRow != previousFirstRow { previous = [] }
        var out = ""
        for (index, line) in lines.enumerated() where index >= previous.count || previous[index] != line {
            out += ControlSequence.moveTo(row: firstRow + index) + ControlSequence.resetAttributes
                + ControlSequence.eraseLine + line + ControlSequence.resetAttributes
        }
        previous = lines
        previousFirstRow = firstRow
        return out
    }
}
