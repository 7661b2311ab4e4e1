import CSystemShims
#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDSampling
import PerfHUDPipeline
import PerfHUDRender

/// A program perfhud launched (`run`, `demo`) on a new pseudo-terminal, as a shell launches a job:
/// in the foreground process group of a session whose controlling terminal is that pseudo-terminal
/// (see `perfhud_spawn_job`). Its colours and line buffering behave as on the user's terminal, and
/// Ctrl-Z stops it as it would there. Owns the program's whole life: spawn, keys in, output out,
/// stop, status.
public final class LaunchedProgram {
    /// The program: what is sampled and signalled (its process group).
    public let pid: pid_t
    /// The session leader perfhud waits for: it mirrors the program's stops and its end.
    private let leader: pid_t
    /// The pipe that holds the leader (see `perfhud_spawn_job`): until `watched()` it reaps
    /// nothing; after, it reaps the ended program only once this is closed (`releaseIfEnded`).
    private var hold: Int32 = -1
    /// Readable once the program has ended (a pidfd, Linux 5.3+; -1 where absent: then the leader
    /// is not held at the end, and the run's totals end at the last tick).
    public private(set) var endDescriptor: Int32 = -1
    /// Runs once when the program has ended, before the leader may reap it: the last moment its
    /// whole CPU time can be read (its CPU clock, its `stat`). The session samples it there.
    public var onEnd: (() -> Void)?
    /// The pseudo-terminal's master side: the program's output is read here, keys written here.
    public let master: Int32
    /// False once every holder of the program's terminal has closed it (EIO) or it was drained
    /// after the program ended. The program may still run (it can close its terminal and go on).
    public private(set) var outputOpen = true
    /// The control group the program (and so everything it starts) runs in, when it joined one.
    public let controlGroup: ControlGroupCPU?
    /// When it was launched (CLOCK_MONOTONIC, just before the fork): its life began after this.
    public let launchedAtNanoseconds: UInt64

    /// Launches `command` (searched in PATH) with `size` and the terminal settings `settings`.
    /// - Throws: `PerfHUDError` `.notFound` (127) when there is no such command, `.cannotRun`
    ///   (126) when it cannot be executed or no pseudo-terminal can be had.
    ///   `controlGroup`: a group for the program to join before it execs; kept only if it joined.
    public init(command: [String], size: TerminalSize, settings: termios?, environment: [String: String] = [:],
                controlGroup: ControlGroupCPU? = nil) throws {
        guard let path = Self.resolve(command[0]) else {
            throw PerfHUDError(.notFound, "cannot run \(TerminalText.escaped(command[0])): \(SystemError.noSuchFile)")
        }
        var nameBuffer = [CChar](repeating: 0, count: 256)
        master = perfhud_open_pseudo_terminal(&nameBuffer, nameBuffer.count)
        guard master >= 0 else {
            throw PerfHUDError(.cannotRun, "cannot open a pseudo-terminal: \(SystemError.current)")
        }
        let slavePath = nameBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // Give the new terminal the user's settings and the program's share of the screen.
        if case .success(let slave) = SystemCall.open(slavePath, O_RDWR | O_NOCTTY) {
            if var settings { _ = tcsetattr(slave, TCSANOW, &settings) }
            _ = perfhud_set_window_size(slave, UInt16(clamping: size.rows), UInt16(clamping: size.columns))
            close(slave)
        }

        var variables: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if environment[name] == nil { variables.append(text) }
            index += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }

        var program: pid_t = -1
        var execError: Int32 = 0
        var hold: Int32 = -1
        let joining = controlGroup?.joiningDescriptor() ?? -1
        launchedAtNanoseconds = monotonicNanoseconds()
        let launched = withCStrings(command) { argv in
            withCStrings(variables) { envp in
                perfhud_spawn_job(path, argv, envp, slavePath, joining, &program, &execError, &hold)
            }
        }
        if joining >= 0 { close(joining) }
        if launched > 0, hold >= 0, program <= 0 || execError != 0 { close(hold) }
        guard launched > 0, program > 0, execError == 0 else {
            let error = launched <= 0 ? SystemError.current : SystemError(execError == 0 ? ECHILD : execError)
            if launched > 0 { _ = SystemCall.waitpid(launched) }
            close(master)
            throw PerfHUDError(error == .noSuchFile ? .notFound : .cannotRun,
                               "cannot run \(TerminalText.escaped(command[0])): \(error)")
        }
        leader = launched
        pid = program
        self.hold = hold
        // Writes never wait on a program that does not read (see `forward`); reads follow poll.
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        // The program has exec'd (or is a zombie still held): it tried to join before that.
        if let controlGroup, controlGroup.contains(pid: program) {
            self.controlGroup = controlGroup
        } else {
            controlGroup?.remove()
            self.controlGroup = nil
        }
    }

    /// perfhud has opened the program's /proc files: from now on its end may be reaped, once
    /// `onEnd` has run.
    public func watched() {
        guard hold >= 0, endDescriptor < 0 else { return }
        endDescriptor = perfhud_pidfd_open(pid)
        let written = [UInt8(1)].withUnsafeBytes { SystemCall.writeWhatFits(hold, $0) }
        if endDescriptor < 0 || written != .success(1) { release() }
    }

    /// Whether the program's end is still held (the session waits on `endDescriptor`).
    public var endHeld: Bool { hold >= 0 && endDescriptor >= 0 }

    /// Whether the program has ended and its end is still held: the session ends it before it
    /// samples again, or a tick would write a dead row before the exit row.
    public var hasEndedUnreaped: Bool { endHeld && endReady(waiting: false) > 0 }

    /// `poll` of `endDescriptor` (waiting for the end when `waiting`): > 0 ended, 0 not yet, < 0 failed.
    private func endReady(waiting: Bool) -> Int32 {
        var slot = pollfd(fd: endDescriptor, events: Int16(POLLIN), revents: 0)
        switch SystemCall.poll(&slot, timeoutMilliseconds: waiting ? -1 : 0) {
        case .success(let ready): return ready
        case .failure: return -1
        }
    }

    /// The leader may reap the program now.
    private func release() {
        if hold >= 0 { close(hold); hold = -1 }
        if endDescriptor >= 0 { close(endDescriptor); endDescriptor = -1 }
    }

    /// When the program has ended (waiting for it when `waiting`): `onEnd`, then the leader may reap
    /// it. - Returns: whether it released the leader now.
    @discardableResult
    private func releaseIfEnded(waiting: Bool) -> Bool {
        // A poll that fails releases too: the leader must not wait for an end never seen.
        guard endHeld, endReady(waiting: waiting) != 0 else { return false }
        onEnd?()
        onEnd = nil
        release()
        kill(leader, SIGCONT)   // a leader stopped with its program (Ctrl-Z) reaps only once continued
        return true
    }

    /// `name` as the shell finds it: itself when it holds a slash, else the first executable file
    /// of that name in PATH (a directory or a file without the x bit is passed over, as execvp does).
    package static func resolve(_ name: String) -> String? {
        if name.isEmpty { return nil }
        if name.contains("/") { return name }
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var status = stat()
            if stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    deinit {
        release()
        close(master)
    }

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

    /// The program's state now, without waiting (unless `blocking`), as its session leader
    /// mirrors it. An ended program is reaped.
    public func poll(blocking: Bool = false) -> State {
        // Released now, the leader reaps the program and ends as it did in a moment: waited for.
        // Not waited for, the session took it for running, and sampled a program already reaped
        // (a dead row before the exit row, when its terminal's close was seen first).
        let released = releaseIfEnded(waiting: blocking)
        guard case .success(let (reaped, status)) = SystemCall.waitpid(leader, options: (blocking || released ? 0 : WNOHANG) | WUNTRACED),
              reaped == leader else { return .running }
        // WIFEXITED and friends are function-like macros Swift cannot import.
        let low = status & 0x7F
        if low == 0 { return .exited((status >> 8) & 0xFF) }
        if (status & 0xFF) == 0x7F { return .stopped }
        return .killed(low)
    }

    /// Sends `signal` to the program's process group, as a terminal would. SIGCONT goes to the
    /// session leader too, which stopped when the program stopped.
    public func signal(_ signal: Int32) {
        if kill(-pid, signal) != 0 { kill(pid, signal) }
        if signal == SIGCONT { kill(leader, SIGCONT) }
    }

    /// How `stop` ended the program.
    public struct Stopped: Equatable {
        /// Its state after it ended (`.killed(SIGTERM)`, `.exited(0)` if it exited on SIGTERM, `.killed(SIGKILL)`…).
        public var state: State
        /// It was still running when the grace ran out and got SIGKILL.
        public var killedAfterGrace: Bool
    }

    /// Ends the program as a polite supervisor does: SIGTERM, `graceNanoseconds` to act on it
    /// (a stopped program is continued so that it can), then SIGKILL. `meanwhile` runs every
    /// 10 ms of the wait: the caller reads the program's output there, so that a program writing
    /// as it ends is not blocked on a full terminal (and killed for it).
    public func stop(graceNanoseconds: UInt64, meanwhile: () -> Void = {}) -> Stopped {
        signal(SIGTERM)
        signal(SIGCONT)
        let deadline = monotonicNanoseconds() &+ graceNanoseconds
        var state = poll()
        while !state.hasEnded && monotonicNanoseconds() < deadline {
            meanwhile()
            usleep(10_000)
            state = poll()
        }
        guard !state.hasEnded else { return Stopped(state: state, killedAfterGrace: false) }
        signal(SIGKILL)
        return Stopped(state: poll(blocking: true), killedAfterGrace: true)
    }

    // MARK: terminal

    /// Whether the program (its session leader, which mirrors it) is stopped now. A stop that
    /// `poll` reported may have been undone since (perfhud continued it): the kernel is asked.
    /// Whether the program's terminal echoes what is typed (cooked mode, ECHO set): the kernel's
    /// line discipline then shows each key itself, whether or not the program reads it. A program
    /// that answers keys itself (an editor, a shell's line editor, a game drawing on the
    /// terminal) turns echo off. Asked of the master side, which reports the terminal's settings.
    public var terminalEchoes: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    public var isStopped: Bool {
        ProcParser.stat(ofProcess: String(leader))?.state == UInt8(ascii: "T")
    }

    public func resize(_ size: TerminalSize) {
        _ = perfhud_set_window_size(master, UInt16(clamping: size.rows), UInt16(clamping: size.columns))
    }

    /// Input the program's terminal has not taken yet: its queue is full until the program
    /// reads. perfhud's loop waits for room (`hasPendingInput`, POLLOUT) instead of blocking in
    /// write: blocked there, it read none of the program's output, and a program blocked writing
    /// its output never read again (`perfhud run -- cat < big-file` hung both).
    private var pendingInput: [UInt8] = []
    public var hasPendingInput: Bool { !pendingInput.isEmpty }

    /// Writes keys (or piped input) to the program's terminal, in order, as it takes them.
    public func forward(keys: [UInt8]) {
        guard !keys.isEmpty else { return }
        lastInputByte = keys.last
        pendingInput += keys
        flushInput()
    }

    /// Writes what the terminal takes now of the pending input; the rest waits for room.
    public func flushInput() {
        guard !pendingInput.isEmpty else { return }
        let taken = pendingInput.withUnsafeBytes { raw -> Int in
            switch SystemCall.writeWhatFits(master, raw) {
            case .success(let written): return written          // the rest waits for room
            case .failure: return raw.count   // no one holds the terminal any more (EIO): the input has nowhere to go
            }
        }
        pendingInput.removeFirst(taken)
    }

    /// The last byte written to the program's terminal: a line left without its newline needs a
    /// second end-of-file character (see `endInput`).
    private var lastInputByte: UInt8?

    /// perfhud's standard input ended (a pipe, a file, /dev/null): the program sees end-of-file,
    /// as under script(1). In canonical mode the terminal's EOF character (VEOF, ^D unless stty
    /// changed it) ends a read with what precedes it: once after a newline (or no input) the read
    /// returns 0; after a line without its newline, the first hands that line over, so it goes
    /// twice. A program that reads its terminal raw gets the character as a key (^D: what ends a
    /// shell or a REPL there). The kernel processes it on arrival, after the input before it.
    public func endInput() {
        var settings = termios()
        var endOfFile: UInt8 = 4
        var canonical = true
        if tcgetattr(master, &settings) == 0 {   // the master answers with its terminal's settings
            let character = withUnsafeBytes(of: settings.c_cc) { $0[Int(VEOF)] }
            if character != 0 { endOfFile = character }   // 0 is _POSIX_VDISABLE
            canonical = settings.c_lflag & tcflag_t(ICANON) != 0
        }
        let lineLeftOpen = canonical && lastInputByte != nil && lastInputByte != UInt8(ascii: "\n")
        forward(keys: lineLeftOpen ? [endOfFile, endOfFile] : [endOfFile])
    }

    /// What one read of the program's output gave.
    public enum Output { case bytes(Int), nothing, closed }

    /// Reads the program's output into `buffer`. `.closed` (EIO) means every holder of the
    /// terminal has closed it; the program's end then arrives as SIGCHLD.
    public func readOutput(into buffer: inout [UInt8]) -> Output {
        guard outputOpen else { return .closed }
        switch SystemCall.read(master, into: &buffer) {
        case .success(let count) where count > 0: return .bytes(count)
        case .failure(.wouldBlock): return .nothing
        default:
            outputOpen = false
            return .closed
        }
    }

    /// Reads what the program has written so far without waiting for more (what it wrote before
    /// it stopped: a full-screen program leaving its screen).
    public func readPendingOutput(into buffer: inout [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        while outputOpen, case .success(let ready) = SystemCall.poll(&descriptor, timeoutMilliseconds: 0), ready > 0,
              case .bytes(let count) = readOutput(into: &buffer) {
            body(buffer[0..<count])
        }
    }

    /// Reads what the program wrote before it ended, so that its last lines are not lost.
    public func drainOutput(into buffer: inout [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        guard outputOpen else { return }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        while case .bytes(let count) = readOutput(into: &buffer) { body(buffer[0..<count]) }
        outputOpen = false
    }
}
