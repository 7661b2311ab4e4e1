import PerfHUDSupport
import PerfHUDSampling
import PerfHUDEvents
import PerfHUDRender

/// Everything perfhud writes to the terminal in HUD mode: the layout (HUD pinned at the top or
/// bottom, the program's area a scroll region), the program's output translated into that area,
/// the HUD's frames (diffed, one write each, inside synchronized output), notices and the action
/// log; set-up, restoration, suspension and resizing. Escapes come only from `ControlSequence`
/// and `Palette`.
///
/// Writes go to a `TerminalDevice`: the real terminal, or a byte buffer in tests.
public final class Screen {
    private let device: TerminalDevice
    private var style: HUDStyle
    /// The HUD reads keys itself (attach, demo): input in `.keys` mode and the cursor hidden.
    /// Otherwise (run) keys go to the program and its cursor shows.
    private let ownsKeys: Bool
    /// What to draw: called for every frame; nothing is drawn before it is set.
    public var snapshot: (() -> HUDSnapshot)?
    /// `--tmux`: where the HUD's lines go instead of rows of the terminal (which are then all the
    /// program's), the width and the look they are drawn for; at most `elsewhereInterval` apart.
    public var elsewhere: (width: Int, style: HUDStyle, show: ([String]) -> Void)?
    /// Every status-line change redraws every client of the tmux server: four a second.
    public static let elsewhereInterval: UInt64 = 250_000_000
    /// Whether the target still runs: a frame saying it ended is not held back by the frame rate.
    public var targetRunning: () -> Bool = { true }

    public private(set) var layout: ScreenLayout
    private var frames = FrameWriter()
    private var translator: ProgramOutputTranslator
    private var graph: (lines: [String], drawnAt: UInt64)?
    private var details: (line: String, drawnAt: UInt64)?
    private var actionLog = ActionLogView()
    private var isSetUp = false
    private var hudDirty = true
    private var lastDraw: UInt64 = 0
    /// A resize waits while the program's output stops inside an escape sequence or string.
    public private(set) var needsRelayout = false

    /// The HUD at most this often (unless forced): nobody reads faster, and with `--tick 1ms`
    /// drawing would cost more than sampling.
    public static let minimumFrameInterval: UInt64 = 50_000_000

    public init(device: TerminalDevice, style: HUDStyle, ownsKeys: Bool) {
        self.device = device
        self.style = style
        self.ownsKeys = ownsKeys
        layout = ScreenLayout(size: device.size() ?? TerminalSize(rows: 24, columns: 80), style: style)
        translator = ProgramOutputTranslator(offset: layout.programOffset, programRows: layout.programRows)
    }

    /// The size the program's terminal gets: the rows the HUD leaves, every column.
    public var programSize: TerminalSize { TerminalSize(rows: layout.programRows, columns: layout.size.columns) }
    public var isClosed: Bool { device.isClosed }

    /// The details line (`d`): the HUD's height changes with it, so the caller then calls `relayout`.
    public var showsDetails: Bool {
        get { style.showsDetails }
        set { style.showsDetails = newValue; details = nil; hudDirty = true }
    }

    /// A new frame is wanted (a sample, an event); drawn by the next `draw`.
    public func invalidate() { hudDirty = true }
    /// The terminal's bell (`--alert-bell`): BEL moves no cursor and draws nothing.
    public func ringBellIfAsked() { if style.bell { device.write([0x07]) } }

    // MARK: set-up and restoration

    /// Takes the terminal: input mode, a clear screen, the program's scroll region, the cursor in
    /// it, and a crash handler that undoes all of it.
    public func setUp() {
        device.enter(ownsKeys ? .keys : .raw)
        var setup = ControlSequence.clearScreen
        if ownsKeys { setup += ControlSequence.hideCursor }
        setup += ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom)
        setup += ControlSequence.moveTo(row: layout.programTop)
        translator = ProgramOutputTranslator(offset: layout.programOffset, programRows: layout.programRows)
        frames.invalidate()
        device.write(Array(setup.utf8))
        if !isSetUp { device.installCrashRestore(restoreSequence: restoreSequence()) }
        device.updateCrashRestore(restoreSequence: restoreSequence())
        isSetUp = true
        hudDirty = true
    }

    /// What puts the terminal back: no scroll region, cursor shown, attributes reset. With the
    /// HUD on top the cursor stays where the program left it, so the shell prompt follows its
    /// output and the HUD's last frame stays readable above; with the HUD at the bottom the
    /// cursor goes below it. (DECSTBM homes the cursor, hence the save and restore around it.)
    package func restoreSequence() -> String {
        var sequence = ControlSequence.endSynchronizedUpdate + ControlSequence.resetAttributes
        if translator.alternateScreen { sequence += ControlSequence.leaveAlternateScreen }
        if layout.position == .bottom {
            sequence += ControlSequence.resetScrollRegion + ControlSequence.moveTo(row: layout.size.rows) + "\r\n"
        } else {
            sequence += ControlSequence.saveCursor + ControlSequence.resetScrollRegion + ControlSequence.restoreCursor
        }
        return sequence + ControlSequence.showCursor
    }

    /// Gives the terminal back as it was (every exit path, and before a suspension).
    public func restore() {
        guard isSetUp else { return }
        isSetUp = false
        device.write(Array(restoreSequence().utf8))
        device.restoreInput()
    }

    /// Gives the terminal back for good and writes `text` (the end summary) under the program's
    /// output. With the HUD on top, the program's area first scrolls — inside its scroll region —
    /// as far as the lines need, so that writing them does not scroll the whole screen and take
    /// the HUD's last frame (the status line saying how the program ended) off the top. Each line
    /// clears what is left of the line it covers.
    public func restore(thenWrite text: String) {
        let text = style.unicode ? text : TerminalText.ascii(text)   // "key→screen" in a C locale too
        guard isSetUp else { return device.write(Array(text.utf8)) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let needed = min(max(0, lines.count - 1), layout.programRows - 1)
        if layout.position == .top && needed > 0 && !translator.alternateScreen {
            // A line feed at the region's bottom scrolls the region only; elsewhere it only moves down.
            device.write(Array((String(repeating: "\n", count: needed) + ControlSequence.cursorUp(needed)).utf8))
        }
        restore()
        device.write(Array(lines.joined(separator: ControlSequence.eraseToEndOfLine + "\r\n").utf8))
    }

    /// Takes the terminal again after a suspension: its size may have changed meanwhile; a
    /// program that was on the alternate screen is put back there. The HUD is drawn whole.
    public func resume() {
        if let size = device.size() { layout = ScreenLayout(size: size, style: style) }
        let alternate = translator.alternateScreen
        setUp()
        if alternate {
            // Through the translator, which then knows to leave it again when perfhud exits.
            var bytes: [UInt8] = []
            _ = translator.translate(Array(ControlSequence.enterAlternateScreen.utf8)[...], into: &bytes)
            device.write(bytes)
        }
        draw(force: true)
    }

    /// A resize: the new layout, the program's region and the HUD redrawn in one write. Deferred
    /// (`needsRelayout`) while the program's output stops inside an escape sequence or string,
    /// where our bytes would be taken as part of it.
    /// - Returns: the program's new size, to pass on to its terminal; nil when nothing changed now.
    public func relayout() -> TerminalSize? {
        guard isSetUp else { return nil }
        guard translator.isAtBoundary else { needsRelayout = true; return nil }
        needsRelayout = false
        guard let size = device.size() else { return nil }
        let grew = size.rows > layout.size.rows
        let old = layout
        layout = ScreenLayout(size: size, style: style)
        translator.offset = layout.programOffset
        translator.programRows = layout.programRows
        var bytes = ControlSequence.beginSynchronizedUpdate + ControlSequence.saveCursor
        bytes += ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom)
        if grew {
            // A terminal that grows pulls back the rows a shrink pushed into its history (tmux
            // does), old HUD rows among them, into the program's area: cleared, for the program to
            // repaint on its SIGWINCH. (The HUD, drawn whole below, covers anything erased of it.)
            bytes += ControlSequence.moveTo(row: layout.programTop) + ControlSequence.eraseBelow
        } else if layout.hudHeight < old.hudHeight && size == old.size {
            // The HUD shrank in place (its details line hidden): the rows it gave up are cleared.
            let freed = layout.position == .top ? (layout.hudHeight + 1)...old.hudHeight : old.hudFirstRow...(layout.hudFirstRow - 1)
            for row in freed { bytes += ControlSequence.moveTo(row: row) + ControlSequence.eraseLine }
        }
        bytes += ControlSequence.restoreCursor
        bytes += hudBytes(force: true)
        bytes += ControlSequence.endSynchronizedUpdate
        device.write(Array(bytes.utf8))
        device.updateCrashRestore(restoreSequence: restoreSequence())
        return programSize
    }

    // MARK: the program's area

    /// The program's output, moved into its area, with a pending HUD frame when the output ends
    /// at a boundary; one write, in synchronized output.
    /// - Returns: whether the program asked if synchronized output is supported (the caller answers).
    @discardableResult
    public func showProgramOutput(_ bytes: ArraySlice<UInt8>) -> Bool {
        actionLog.interrupt()
        var output: [UInt8] = Array(ControlSequence.beginSynchronizedUpdate.utf8)
        output.reserveCapacity(bytes.count + 512)
        let effects = translator.translate(bytes, into: &output)
        if effects.contains(.terminalReset) {
            output += Array(ControlSequence.scrollRegion(top: layout.programTop, bottom: layout.programBottom).utf8)
            output += Array(ControlSequence.moveTo(row: layout.programTop).utf8)
        }
        if effects.contains(.hudDamaged) { frames.invalidate(); hudDirty = true }
        if hudDirty && translator.isAtBoundary { output += Array(hudBytes(force: false).utf8) }
        output += Array(ControlSequence.endSynchronizedUpdate.utf8)
        device.write(output)
        return effects.contains(.synchronizedOutputQueried)
    }

    /// Keys for the program, with mouse positions moved from screen rows to the program's rows.
    public func translateInput(_ bytes: [UInt8]) -> [UInt8] { translator.translateInput(bytes) }

    /// How perfhud's own lines in the program's area look.
    public enum NoticeKind { case info, phase, end }

    /// One line of perfhud's own in the program's area ("attached to PID …", "phase X ended").
    /// Each clears the rest of the line it covers (a full-screen program's text would otherwise
    /// show after it). The `.end` notice — how the program ended — also clears the program's area
    /// below it: what a full-screen program drew there is no longer its screen.
    public func notice(_ text: String, kind: NoticeKind = .info) {
        guard isSetUp else { return }
        actionLog.interrupt()
        let text = style.unicode ? text : TerminalText.ascii(text)   // a locale that is not UTF-8
        let styled = kind == .phase ? Palette(enabled: style.color).cyan("perfhud: " + text) : "perfhud: " + text
        var bytes = ControlSequence.faint + styled + ControlSequence.resetAttributes + ControlSequence.eraseToEndOfLine + "\r\n"
        if kind == .end { bytes += ControlSequence.deleteLines(layout.programRows) }
        device.write(Array(bytes.utf8))
    }

    /// "phase NAME ended, kept 12.0 MiB": said the same live and in `replay`.
    public func noticePhaseEnded(_ name: String, keptBytes: Int64?) {
        notice("phase \(TerminalText.escaped(name)) ended" + (keptBytes.map { ", kept " + Units.bytes(Double($0)) } ?? ""), kind: .phase)
    }

    /// What `attach` says first: whom it watches, and how to quit.
    public func noticeAttached(to process: ProcessDescription) {
        notice("attached to PID \(process.pid) (\(TerminalText.escaped(process.commandName))), user \(TerminalText.escaped(process.user))")
        notice("command line: " + TerminalText.escaped(process.commandLine, maxLength: 400))
        notice("press q to quit, d to show or hide the details line")
    }

    /// Actions as log lines (see `ActionLogView`); held back while the program's output stops
    /// inside an escape sequence.
    public func showActionLog(_ entries: [ActionLogEntry], dropped: Double, highFrequency: Set<String>) {
        actionLog.add(entries, dropped: dropped)
        guard actionLog.hasPending, translator.isAtBoundary, isSetUp else { return }
        let text = actionLog.render(rows: layout.programRows, highFrequency: highFrequency,
                                    paint: Palette(enabled: style.color), now: monotonicNanoseconds())
        device.write(Array((style.unicode ? text : TerminalText.ascii(text)).utf8))
        hudDirty = true
    }

    // MARK: the HUD

    /// Draws the HUD if it changed, at most every `minimumFrameInterval` unless forced or the
    /// target has ended.
    public func draw(force: Bool = false) {
        if let elsewhere {
            guard hudDirty || force, let current = snapshot?() else { return }
            let now = monotonicNanoseconds()
            if !force && now &- lastDraw < Self.elsewhereInterval && targetRunning() { return }
            elsewhere.show(HUDRenderer.render(current, size: TerminalSize(rows: 30, columns: elsewhere.width), style: elsewhere.style))
            hudDirty = false
            lastDraw = now
            return
        }
        guard isSetUp, hudDirty || force, translator.isAtBoundary else { return }
        if !force && monotonicNanoseconds() &- lastDraw < Self.minimumFrameInterval && targetRunning() { return }
        let bytes = hudBytes(force: force)
        guard !bytes.isEmpty else { return }
        device.write(Array((ControlSequence.beginSynchronizedUpdate + bytes + ControlSequence.endSynchronizedUpdate).utf8))
    }

    /// The last frame before perfhud lets go: drawn whatever the time since the last one.
    public func drawFinalFrame() {
        hudDirty = true
        lastDraw = 0
        draw()
    }

    private func hudBytes(force: Bool) -> String {
        guard let current = snapshot?() else { return "" }
        if force { frames.invalidate() }
        let now = monotonicNanoseconds()
        let graphInterval = UInt64(HUDRenderer.graphRefreshInterval(current, size: layout.size) * 1e9)
        if force || graph == nil || now &- graph!.drawnAt >= graphInterval || current.status != .running {
            graph = (HUDRenderer.graphLines(current, size: layout.size, style: style), now)
        }
        if style.showsDetails, force || details == nil || now &- details!.drawnAt >= HUDRenderer.detailsRefreshInterval || current.status != .running {
            details = (HUDRenderer.detailsLine(current, size: layout.size, style: style), now)
        }
        let lines = HUDRenderer.render(current, size: layout.size, style: style, graph: graph?.lines, details: style.showsDetails ? details?.line : nil)
        let changes = frames.update(lines: lines, firstRow: layout.hudFirstRow)
        hudDirty = false
        lastDraw = now
        guard !changes.isEmpty else { return "" }
        var bytes = ControlSequence.saveCursor + ControlSequence.hideCursor + changes + ControlSequence.restoreCursor
        if translator.cursorVisible && !ownsKeys { bytes += ControlSequence.showCursor }
        return bytes
    }
}
