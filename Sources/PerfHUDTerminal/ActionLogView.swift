import PerfHUDSupport
import PerfHUDEvents
import PerfHUDPipeline
import PerfHUDRender

/// The action log as lines in the program's area (attach and demo). Repeats of a label less than
/// a second apart fold into one line that is rewritten in place (`Slider.changed ×37`) rather than
/// scrolling faster than anyone can read; high-frequency labels are highlighted; what does not fit
/// in the area is summed up in one line (`… 120 more actions`).
struct ActionLogView {
    private var pending: [ActionLogEntry] = []
    private var pendingDropped = 0.0
    /// The log line that may still be rewritten: its label, count, and when it last grew.
    private var fold: (label: String, count: Double, at: UInt64)?

    /// Something else was written after the last log line: that line is no longer ours to rewrite.
    mutating func interrupt() { fold = nil }

    /// Keeps entries until they can be shown.
    package mutating func add(_ entries: [ActionLogEntry], dropped: Double) {
        pending += entries
        pendingDropped += dropped
    }

    var hasPending: Bool { !pending.isEmpty }

    /// The bytes that show what is pending, at most `rows` lines of it.
    package mutating func render(rows: Int, highFrequency: Set<String>, paint: Palette, now: UInt64) -> String {
        guard !pending.isEmpty else { return "" }
        // The area holds `rows` lines, one of them the cursor's after the last: `rows - 1` entries,
        // or `rows - 2` and the line that counts the rest (else that line scrolls out unseen).
        let fits = max(1, rows - 1)
        let limit = pending.count > fits ? max(1, fits - 1) : fits
        var output = ""
        let hidden = pending.dropLast(limit).reduce(0) { $0 + $1.count } + pendingDropped
        if hidden > 0 {
            output += "… \(RowFormatter.number(hidden, decimals: 0)) more actions\r\n"
            fold = nil
        }
        for entry in pending.suffix(limit) {
            var count = entry.count
            var rewrite = false
            if let fold, fold.label == entry.label, now &- fold.at < 1_000_000_000 {
                count += fold.count
                rewrite = true
            }
            var text = TerminalText.escaped(entry.label)
            if count != 1 { text += " ×" + RowFormatter.number(count, decimals: 1) }
            if highFrequency.contains(entry.label) { text = paint.yellow(text + " (high-frequency)") }
            // Up one line and erase it: the cursor sits at the start of the line after it.
            if rewrite { output += ControlSequence.cursorUp + ControlSequence.eraseLine }
            output += text + "\r\n"
            fold = (entry.label, count, now)
        }
        pending.removeAll(keepingCapacity: true)
        pendingDropped = 0
        return output
    }
}
