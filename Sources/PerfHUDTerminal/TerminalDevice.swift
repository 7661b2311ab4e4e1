import PerfHUDRender

/// What the screen needs of a terminal: its size, its input mode, writes, and what to write
/// should perfhud crash. `Terminal` is the real one; tests give the screen a byte buffer.
public protocol TerminalDevice: AnyObject {
    func size() -> TerminalSize?
    func enter(_ mode: Terminal.InputMode)
    func restoreInput()
    func write(_ bytes: [UInt8])
    /// True once a write failed for good (the terminal was closed): later writes are dropped.
    var isClosed: Bool { get }
    func installCrashRestore(restoreSequence: String)
    func updateCrashRestore(restoreSequence: String)
}

extension Terminal: TerminalDevice {}
