import CSystemShims
#if canImport(Glibc)
import Glibc
#endif

/// Why a command could not be launched.
public struct LaunchError: Error, CustomStringConvertible {
    public var description: String
}

/// A command launched on a new pseudo-terminal, as its session leader with it as controlling
/// terminal: its colours and line buffering behave as on the user's terminal.
public final class ChildProcess {
    public let pid: pid_t
    /// The pseudo-terminal's master side: the program's output is read here, keys written here.
    public let master: Int32

    /// Launches `command` (searched in PATH) with `size` and the terminal settings `settings`.
    /// The corresponding C calls are `posix_openpt` and `posix_spawnp` (POSIX_SPAWN_SETSID).
    public init(command: [String], size: TerminalSize, settings: termios?, environment: [String: String] = [:]) throws {
        var nameBuffer = [CChar](repeating: 0, count: 256)
        master = perfhud_open_pseudo_terminal(&nameBuffer, nameBuffer.count)
        guard master >= 0 else {
            throw LaunchError(description: "cannot open a pseudo-terminal: \(SystemError.current)")
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
            throw LaunchError(description: "cannot run \(TerminalText.escaped(command[0])): \(SystemError(status))")
        }
        pid = launched
    }

    deinit { close(master) }

    /// The exit status if the child has ended or stopped, without blocking.
    public enum State: Equatable { case running, stopped, exited(Int32), killed(Int32) }

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

    /// Sends `signal` to the child's process group (it leads its own session), as a terminal would.
    public func signal(_ signal: Int32) {
        if kill(-pid, signal) != 0 { kill(pid, signal) }
    }

    /// Whether the program's terminal turns `byte` into a suspend signal (ISIG with VSUSP).
    public func suspendsOn(_ byte: UInt8) -> Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0, settings.c_lflag & tcflag_t(ISIG) != 0 else { return false }
        return withUnsafeBytes(of: settings.c_cc) { $0[Int(VSUSP)] == byte && byte != 0 }
    }

    public func resize(_ size: TerminalSize) {
        _ = perfhud_set_window_size(master, UInt16(clamping: size.rows), UInt16(clamping: size.columns))
    }
}

/// Calls `body` with a NULL-terminated C array of `strings`.
func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
