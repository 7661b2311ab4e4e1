#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport

/// tmux's own client, run by perfhud: a command whose output is read (`run`), or a control-mode
/// client kept open whose standard input takes commands (`ControlClient`). Both reach the server
/// of the pane perfhud runs in (`$TMUX`), and never start one (`-N`): a server that went away is
/// not started again by a restore.
enum TmuxCommand {
    /// Runs `tmux -N ARGS`, `input` on its standard input; its exit status and standard output.
    static func run(_ arguments: [String], input: String? = nil) -> (status: Int32, output: String) {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else { return (-1, "") }
        guard pipe(&fromChild) == 0 else { close(toChild[0]); close(toChild[1]); return (-1, "") }
        // perfhud's ends are not the child's: its input must end when perfhud closes it.
        _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromChild[0], F_SETFD, FD_CLOEXEC)
        guard let child = spawn(["tmux", "-N"] + arguments, standardInput: toChild[0], standardOutput: fromChild[1]) else {
            for descriptor in toChild + fromChild { close(descriptor) }
            return (-1, "")
        }
        close(toChild[0])
        close(fromChild[1])
        if let input { _ = Array(input.utf8).withUnsafeBytes { SystemCall.write(toChild[1], $0) } }
        close(toChild[1])
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case .success(let count) = SystemCall.read(fromChild[0], into: &chunk), count > 0 { output += chunk[..<count] }
        close(fromChild[0])
        var status: Int32 = 0
        _ = SystemCall.waitpid(child).map { status = $0.status }
        return (status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), String(decoding: output, as: UTF8.self))
    }

    /// `tmux -N ARGS` with the given descriptors as its standard input and output (standard error
    /// to /dev/null), the signals perfhud handles at their defaults; nil when it cannot be run.
    static func spawn(_ arguments: [String], standardInput: Int32, standardOutput: Int32?) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        if let standardOutput { posix_spawn_file_actions_adddup2(&actions, standardOutput, 1) }
        else { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var child: pid_t = 0
        let result = SignalChannel.withChildAttributes { attributes in
            withCStrings(arguments) { pointers in
                var pointers = pointers
                return posix_spawnp(&child, "tmux", &actions, &attributes, &pointers, environ)
            }
        }
        return result == 0 ? child : nil
    }

    /// A double-quoted string of tmux's command language: every byte of `text` comes back as it
    /// was (`\\`, `\"`, `\$`, and control bytes in octal).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "$"): out += "\\$"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                // Octal, three digits: UTF-8 bytes too, so a line is never cut inside a character.
                out += "\\" + String(byte >> 6) + String((byte >> 3) & 7) + String(byte & 7)
            }
        }
        return out + "\""
    }

    /// A control-mode client of one session (`tmux -C attach -f ignore-size,no-output`): it takes
    /// a command a line on its standard input, changes no window's size, and its answers go to
    /// /dev/null. When perfhud ends however it ends (SIGKILL included), its standard input closes
    /// and the client detaches: what the session's `client-detached` hook then does is
    /// `TmuxStatusLines`'.
    final class ControlClient {
        let pid: pid_t
        private let input: Int32

        init?(session: String) {
            var toChild: [Int32] = [-1, -1]
            guard pipe(&toChild) == 0 else { return nil }
            _ = fcntl(toChild[1], F_SETFD, FD_CLOEXEC)
            guard let child = TmuxCommand.spawn(["tmux", "-N", "-C", "attach-session", "-t", session, "-f", "ignore-size,no-output"],
                                                standardInput: toChild[0], standardOutput: nil) else {
                Glibc.close(toChild[0]); Glibc.close(toChild[1])
                return nil
            }
            Glibc.close(toChild[0])
            pid = child
            input = toChild[1]
        }

        /// Sends one command line; false when the client is gone (the server ended).
        @discardableResult
        func send(_ line: String) -> Bool {
            let bytes = Array((line + "\n").utf8)
            guard case .success(let written) = bytes.withUnsafeBytes({ SystemCall.write(input, $0) }), written == bytes.count else { return false }
            return true
        }

        /// Closes its input (it detaches) and reaps it.
        func close() {
            Glibc.close(input)
            _ = SystemCall.waitpid(pid)
        }
    }
}
