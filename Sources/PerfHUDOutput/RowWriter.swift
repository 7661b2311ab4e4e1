#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDPipeline
import PerfHUDTerminal
import PerfHUDRender

/// `--output plain|json` (live or replayed): one report a line on standard output, every tick or every
/// `--report-every`. A reader that goes away (a closed pipe) is remembered: the session then ends.
package final class RowWriter: TickSink {
    /// It reads the tick's figures, not each frame.
    package static let readsEveryFrame = false
    private let format: SessionConfiguration.Output
    private let output: Terminal
    private let tickNanoseconds: UInt64
    private let everyNanoseconds: UInt64
    private var last: UInt64?
    /// The fields of a row: all; a replay of an older recording, those its live rows had.
    package var figures = Figure.all { didSet { plan = figures.map(\.plain) } }
    private var plan = RowFormatter.everyFigure
    /// Rows written: what `--count` counts.
    package private(set) var written = 0
    /// The JSON row's bytes, kept from row to row (emptied, not freed): no allocation per row.
    private var row = ByteBuffer(capacity: 4096)
    /// `perfhud status --follow`: a status bar's line a row instead (not `.json`, which is the row).
    private let statusFormat: StatusFormat?
    private let color: Bool

    package init(format: SessionConfiguration.Output, tickNanoseconds: UInt64, everyNanoseconds: UInt64?, output: Terminal,
                 statusFormat: StatusFormat? = nil, color: Bool = false) {
        self.format = statusFormat == .json ? .json : format
        self.statusFormat = statusFormat == .json ? nil : statusFormat
        self.color = color
        self.output = output
        self.tickNanoseconds = tickNanoseconds
        self.everyNanoseconds = everyNanoseconds ?? tickNanoseconds
    }

    package convenience init(configuration: SessionConfiguration, output: Terminal) {
        self.init(format: configuration.output, tickNanoseconds: configuration.watch.tickNanoseconds,
                  everyNanoseconds: configuration.reportEveryNanoseconds, output: output,
                  statusFormat: configuration.statusFormat, color: configuration.style.color)
    }

    package var readerGone: Bool { output.isClosed }

    /// A line after the rows (the summary line).
    package func write(_ line: String) { output.write(line) }

    /// Writes the row of `tick` if one is due: every tick, or with `--report-every` the first, then
    /// one every so often (give or take half a tick); the exit row always; none for the last tick of a session perfhud ended
    /// (`--count N` is N rows). What could not be read (`Tick.notes`) goes to standard error, once:
    /// standard output is the rows'.
    package func consume(_ tick: Tick) {
        for note in tick.notes {
            let line = Array("perfhud: warning: \(note)\n".utf8)
            _ = line.withUnsafeBytes { SystemCall.write(STDERR_FILENO, $0) }
        }
        guard tick.isRow else { return }
        let now = tick.monotonicNanoseconds
        // Only `--report-every` thins the rows: at every tick, each tick is a row, also two that a
        // late wake-up ran close together — the recording keeps both, and so must the rows.
        if !tick.isExitRow, everyNanoseconds > tickNanoseconds, let last, now &- last + tickNanoseconds / 2 < everyNanoseconds { return }
        last = now
        if let statusFormat {
            output.write(StatusText.lead(of: statusFormat, first: written == 0) + StatusText.line(tick.figures, commandName: tick.commandName, status: tick.status, events: tick.events,
                                                alerts: tick.alerts, note: nil, format: statusFormat, color: color) + "\n")
        } else if format == .json {
            row.removeAll()
            RowFormatter.appendRow(tick, plan: plan, to: &row)
            row.append("\n")
            row.withBytes { output.write($0) }
        } else {
            let alerts = tick.alerts.holding.map { "  ALERT " + TerminalText.escaped($0.text, maxLength: 120) }.joined()
            output.write(RowFormatter.plain(tick.figures, commandName: tick.commandName, status: tick.status, events: tick.events) + alerts + "\n")
        }
        written += 1
    }
}
