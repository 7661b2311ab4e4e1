import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDRender

// State the crash handlers read. A signal handler may touch nothing else: these are written
// once before the handlers are installed and only read afterwards.
nonisolated(unsafe) private var crashRestoreBytes: [UInt8] = []
nonisolated(unsafe) private var crashSavedTermios = termios()
nonisolated(unsafe) private var crashHasTermios = false
nonisolated(unsafe) private var crashTerminalDescriptor: Int32 = -1
/// The handlers that were there before (the Swift runtime's backtracer): called after restoring.
nonisolated(unsafe) private var crashPreviousActions: [sigaction] = Array(repeating: .init(), count: 65)

/// The controlling terminal: raw mode, size, writes, and its restoration on every exit path.
///
/// Modelled on btop's `Term::init` / `Term::restore`: what `enter` changes, `restore` undoes,
/// and a crash handler (SIGSEGV, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE) undoes it too before
/// the process dies.
public final class Terminal {
    public enum InputMode {
        /// Keys arrive one by one, unechoed; Ctrl-C and Ctrl-Z still raise signals (attach, demo).
        case keys
        /// Everything, Ctrl-C included, is passed to the child's pseudo-terminal (run).
        case raw
    }

    public let input: Int32
    public let output: Int32
    private var saved: termios?
    private var enteredMode: InputMode?
    private(set) public var isClosed = false

    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// The settings of the terminal at `descriptor`; nil when it is not one.
    public static func settings(of descriptor: Int32) -> termios? {
        var settings = termios()
        return isTerminal(descriptor) && tcgetattr(descriptor, &settings) == 0 ? settings : nil
    }

    public func size() -> TerminalSize? {
        var rows: UInt16 = 0, columns: UInt16 = 0
        guard perfhud_get_window_size(output, &rows, &columns) == 0, rows > 0, columns > 0 else { return nil }
        return TerminalSize(rows: Int(rows), columns: Int(columns))
    }

    /// Switches the input to `mode`, remembering the settings to restore.
    public func enter(_ mode: InputMode) {
        var settings = termios()
        guard isatty(input) == 1, tcgetattr(input, &settings) == 0 else { return }
        if saved == nil { saved = settings }
        enteredMode = mode
        var changed = saved!
        switch mode {
        case .keys:
            changed.c_lflag &= ~tcflag_t(ICANON | ECHO)
        case .raw:
            cfmakeraw(&changed)
        }
        withUnsafeMutableBytes(of: &changed.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        _ = tcsetattr(input, TCSANOW, &changed)
    }

    /// Enters the last mode again (after a suspension), if `enter` was called.
    public func reenter() {
        if let mode = enteredMode { enter(mode) }
    }

    /// Puts the input settings back as they were before `enter`.
    public func restoreInput() {
        guard var settings = saved else { return }
        _ = tcsetattr(input, TCSANOW, &settings)
    }

    /// Writes all of `bytes` in as few `write` calls as the kernel allows. A closed terminal
    /// (EIO, EPIPE) is remembered and later writes are dropped: the sampling goes on.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// `write(_:)` of bytes the caller owns (a buffer kept from tick to tick).
    public func write(_ buffer: UnsafeRawBufferPointer) {
        guard !isClosed, !buffer.isEmpty else { return }
        var offset = 0
        while offset < buffer.count {
            switch SystemCall.writeWhatFits(output, UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
            case .success(let written):
                offset += written
                guard offset < buffer.count else { break }
                // A terminal that is slow to read (a paused tmux pane): wait for room, a little at a time.
                var descriptor = [pollfd(fd: output, events: Int16(POLLOUT), revents: 0)]
                _ = SystemCall.poll(&descriptor, timeoutMilliseconds: 100)
            case .failure:
                isClosed = true
                return
            }
        }
    }

    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Installs handlers that write `restoreSequence` and put the input settings back when the
    /// process crashes, then let the crash proceed (the signal is re-raised with its default action).
    public func installCrashRestore(restoreSequence: String) {
        crashRestoreBytes = Array(restoreSequence.utf8)
        crashTerminalDescriptor = output
        if let saved { crashSavedTermios = saved; crashHasTermios = true }
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                // Not through SystemCall: in a signal handler only async-signal-safe calls, once, nothing retried.
                crashRestoreBytes.withUnsafeBytes { bytes in
                    _ = Glibc.write(crashTerminalDescriptor, bytes.baseAddress, bytes.count)
                }
                if crashHasTermios { _ = tcsetattr(STDIN_FILENO, TCSANOW, &crashSavedTermios) }
                // Hand the crash on to whoever handled it before (the backtracer), or the default.
                sigaction(signal, &crashPreviousActions[Int(signal)], nil)
                raise(signal)
            }
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, &crashPreviousActions[Int(signal)])
        }
    }

    /// Updates what the crash handler writes (the sequence depends on the current layout).
    public func updateCrashRestore(restoreSequence: String) {
        crashRestoreBytes = Array(restoreSequence.utf8)
    }
}
