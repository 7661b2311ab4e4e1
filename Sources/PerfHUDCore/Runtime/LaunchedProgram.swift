import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// A program perfhud launched (`run`, `demo`) on a new pseudo-terminal, as its session leader with
/// that terminal as its controlling terminal: its colours and line buffering behave as on the
/// user's terminal. Owns the program's whole life here: spawn, keys in, output out, stop, status.
public final class LaunchedProgram {
    public let pid: pid_t
    /// The pseudo-terminal's master side: the program's output is read here, keys written here.
    public let master: Int32
    /// False once every holder of the program's terminal has closed it (EIO) or it was drained
    /// after the program ended. The program may still run (it can close its terminal and go on).
    public private(set) var outputOpen = true

    /// Launches `command` (searched in PATH) with `size` and the terminal settings `settings`.
    /// The corresponding C calls are `posix_openpt` and `posix_spawnp` (POSIX_SPAWN_SETSID).
    /// - Throws: `PerfHUDError` `.notFound` (127) when there is no such command, `.cannotRun`
    ///   (126) when it cannot be executed or no pseudo-terminal can be had.
    public init(command: [String], size: TerminalSize, settings: termios?, environment: [String: String] = [:]) throws {
        var nameBuffer = [CChar](repeating: 0, count: 256)
        master = perfhud_open_pseudo_terminal(&nameBuffer, nameBuffer.count)
        guard master >= 0 else {
            throw PerfHUDError(.cannotRun, "cannot open a pseudo-terminal: \(SystemError.current)")
        }
        let slavePath = String(cString: nameBuffer)
        // Give the new terminal the user's settings and the program's share of the screen.
        let slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        if slave >= 0 {
            if var settings { _ = tcsetattr(slave, TCSANOW, &settings) }
            _ = perfhud_set_window_size(slave, UInt16(clamping: size.rows), UInt16(clamping: size.columns))
            close(slave)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, perfhud_posix_spawn_setsid() | Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in SignalChannel.handled + [SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // After setsid, opening the terminal without O_NOCTTY makes it the controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)

        var variables: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if environment[name] == nil { variables.append(text) }
            index += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }

        var launched = pid_t()
        let status = withCStrings(command) { argv in
            withCStrings(variables) { envp in
                posix_spawnp(&launched, command[0], &actions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            close(master)
            let error = SystemError(status)
            throw PerfHUDError(error == .noSuchFile ? .notFound : .cannotRun,
                               "cannot run \(TerminalText.escaped(command[0])): \(error)")
        }
        pid = launched
    }

    deinit { close(master) }

    // MARK: status

    /// How the program stands: running, stopped (Ctrl-Z, SIGSTOP), or ended and how.
    public enum State: Equatable {
        case running, stopped, exited(Int32), killed(Int32)

        public var hasEnded: Bool { self != .running && self != .stopped }

        /// perfhud's exit status for a program that ended this way: its own code, or 128 + signal.
        public var exitStatus: ExitStatus? {
            switch self {
            case .exited(let code): return .program(code)
            case .killed(let signal): return .signaled(signal)
            case .running, .stopped: return nil
            }
        }

        public var targetStatus: TargetStatus? {
            switch self {
            case .exited(let code): return .exited(code: code, signal: nil)
            case .killed(let signal): return .exited(code: nil, signal: signal)
            case .running, .stopped: return nil
            }
        }
    }

    /// The program's state now, without waiting (unless `blocking`). An ended program is reaped.
    public func poll(blocking: Bool = false) -> State {
        var status: Int32 = 0
        let result = waitpid(pid, &status, (blocking ? 0 : WNOHANG) | WUNTRACED)
        guard result == pid else { return .running }
        // WIFEXITED and friends are function-like macros Swift cannot import.
        let low = status & 0x7F
        if low == 0 { return .exited((status >> 8) & 0xFF) }
        if (status & 0xFF) == 0x7F { return .stopped }
        return .killed(low)
    }

    /// Sends `signal` to the program's process group (it leads its own session), as a terminal would.
    public func signal(_ signal: Int32) {
        if kill(-pid, signal) != 0 { kill(pid, signal) }
    }

    /// Ends the program as a polite supervisor does: SIGTERM, two seconds' grace (a stopped
    /// program is continued so that it can act on it), then SIGKILL.
    /// - Returns: how it ended.
    public func stop() -> State {
        signal(SIGTERM)
        signal(SIGCONT)
        var state = poll()
        for _ in 0..<200 where !state.hasEnded {
            usleep(10_000)
            state = poll()
        }
        if !state.hasEnded {
            signal(SIGKILL)
            state = poll(blocking: true)
        }
        return state
    }

    // MARK: terminal

    /// Whether the program's terminal turns `byte` into a suspend signal (ISIG with VSUSP).
    public func suspendsOn(_ byte: UInt8) -> Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0, settings.c_lflag & tcflag_t(ISIG) != 0 else { return false }
        return withUnsafeBytes(of: settings.c_cc) { $0[Int(VSUSP)] == byte && byte != 0 }
    }

    public func resize(_ size: TerminalSize) {
        _ = perfhud_set_window_size(master, UInt16(clamping: size.rows), UInt16(clamping: size.columns))
    }

    /// Writes keys to the program's terminal, all of them (its input queue is large; a program
    /// that reads nothing only costs us the wait of a full queue).
    public func forward(keys: [UInt8]) {
        keys.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(master, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { if errno == EINTR || errno == EAGAIN { continue }; break }
                offset += written
            }
        }
    }

    /// What one read of the program's output gave.
    public enum Output { case bytes(Int), nothing, closed }

    /// Reads the program's output into `buffer`. `.closed` (EIO) means every holder of the
    /// terminal has closed it; the program's end then arrives as SIGCHLD.
    public func readOutput(into buffer: inout [UInt8]) -> Output {
        guard outputOpen else { return .closed }
        let count = read(master, &buffer, buffer.count)
        if count > 0 { return .bytes(count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return .nothing }
        outputOpen = false
        return .closed
    }

    /// Reads what the program wrote before it ended, so that its last lines are not lost.
    public func drainOutput(into buffer: inout [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        guard outputOpen else { return }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        while case .bytes(let count) = readOutput(into: &buffer) { body(buffer[0..<count]) }
        outputOpen = false
    }
}
