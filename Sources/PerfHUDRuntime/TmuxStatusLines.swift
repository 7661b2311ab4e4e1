#if canImport(Glibc)
import Glibc
#endif
import PerfHUDSupport
import PerfHUDEvents
import PerfHUDRender

/// `--tmux`: the HUD's lines in the tmux session's own status lines (tmux 2.9+: `status 2..5`,
/// `status-format[N]`), in view in every pane and window of the session, instead of rows of the pane.
///
/// The session's status settings are saved before anything is changed, as tmux commands that put
/// them back exactly (its own `show-options` lines, which quote every byte), into a file that a
/// `client-detached` hook of the server sources when perfhud's control client goes away: on `q`
/// and SIGTERM perfhud restores them itself, on SIGKILL the hook does; `perfhud status --tmux
/// --restore` (or the next `--tmux`) sources the file where neither could (an older tmux). A server
/// that is killed takes its settings with it: nothing to restore.
///
/// Its lines are `status-format[1…]` = `#{@perfhud-line-N}`, set once; a frame changes only the
/// user options, through the control client, and only when a line changed (every change redraws
/// every client of the server).
public final class TmuxStatusLines {
    /// `$3`: the session perfhud's pane is in.
    let session: String
    let width: Int
    private let client: TmuxCommand.ControlClient
    private let restorePath: String
    private var shown: [String] = []
    private var restored = false

    /// The most lines perfhud takes: tmux draws at most 5, one is the user's own.
    static let maximumLines = 4
    static let savedOption = "@perfhud-restore"
    static let ownerOption = "@perfhud-owner"

    /// - Parameter lines: how many status lines perfhud takes (1…4), below the user's line 0.
    /// - Throws: `PerfHUDError` `.usage` outside tmux, `.unavailable` when tmux cannot be reached.
    init(lines: Int) throws {
        guard let pane = getenv("TMUX_PANE").map({ String(cString: $0) }), getenv("TMUX") != nil else {
            throw PerfHUDError(.usage, "--tmux shows the HUD in tmux's status lines: run it inside tmux (no $TMUX here)")
        }
        let found = TmuxCommand.run(["display-message", "-p", "-t", pane, "#{session_id} #{window_width} #{version}"])
        let words = found.output.split(separator: " ").map(String.init)
        guard found.status == 0, words.count >= 2, words[0].hasPrefix("$"), let width = Int(words[1].trimmingTrailingSpaces.split(separator: "\n")[0]) else {
            throw PerfHUDError(.unavailable, "--tmux: cannot ask tmux where pane \(pane) is (tmux 2.9 or later is needed)")
        }
        session = words[0]
        self.width = max(20, width)
        let directory = try EventReceiver.privateDirectory().path
        restorePath = directory + "/tmux-restore-\(session.dropFirst())-\(getpid()).conf"
        if let owner = Self.owner(of: session), owner != getpid(), kill(owner, 0) == 0 {
            throw PerfHUDError(.unavailable, "--tmux: another perfhud (PID \(owner)) shows its lines in this session's status lines")
        }
        // A perfhud before this one that could not restore (killed where no hook ran): its file first.
        Self.restoreLeftOver(session: session)
        let target = "'" + session + "'"
        let saved = TmuxCommand.run(["show-options", "-t", session])
        guard saved.status == 0 else { throw PerfHUDError(.unavailable, "--tmux: cannot read the status settings of session \(session)") }
        let own = saved.output.split(separator: "\n").filter { line in
            let name = line.split(separator: " ", maxSplits: 1)[0]
            return name == "status" || name == "status-format" || name.hasPrefix("status-format[")
        }
        guard let client = TmuxCommand.ControlClient(session: session) else {
            throw PerfHUDError(.unavailable, "--tmux: cannot start tmux's control client")
        }
        self.client = client
        let hooks = TmuxCommand.run(["show-hooks", "-g", "client-detached"]).output
        var index = 10
        while hooks.contains("client-detached[\(index)]") { index += 1 }
        var restore = ["set-option -u -t \(target) status", "set-option -u -t \(target) status-format"]
        for line in own {
            restore.append("set-option -t \(target) " + (line.contains(" ") ? String(line) : String(line) + " ''"))
        }
        for line in 1...Self.maximumLines { restore.append("set-option -qu -t \(target) @perfhud-line-\(line)") }
        restore += ["set-option -qu -t \(target) \(Self.savedOption)", "set-option -qu -t \(target) \(Self.ownerOption)",
                    "set-hook -gu client-detached[\(index)]"]
        let text = restore.joined(separator: "\n") + "\n"
        let descriptor = open(restorePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw PerfHUDError(.cannotCreate, "--tmux: cannot write \(restorePath): \(SystemError.current)") }
        _ = Array(text.utf8).withUnsafeBytes { SystemCall.write(descriptor, $0) }
        close(descriptor)
        // Line 0 stays the user's: a session's own array replaces the global one whole, so the
        // line in force is copied first when the session has none of its own.
        var setUp: [String] = []
        if !own.contains(where: { $0.hasPrefix("status-format") }) {
            let first = TmuxCommand.run(["show-options", "-gv", "status-format[0]"]).output
            setUp.append("set-option -t \(target) status-format[0] " + TmuxCommand.quoted(String(first.dropLast(first.hasSuffix("\n") ? 1 : 0))))
        }
        for line in 1...lines {
            setUp.append("set-option -t \(target) @perfhud-line-\(line) ''")
            setUp.append("set-option -t \(target) status-format[\(line)] " + TmuxCommand.quoted("#{@perfhud-line-\(line)}"))
        }
        setUp += ["set-option -t \(target) \(Self.savedOption) " + TmuxCommand.quoted(restorePath),
                  "set-option -t \(target) \(Self.ownerOption) \(getpid())",
                  // The server restores when the control client goes away without perfhud (SIGKILL).
                  "set-hook -g client-detached[\(index)] " + TmuxCommand.quoted("if-shell -F \"#{==:#{hook_client},client-\(client.pid)}\" "
                                                                                 + TmuxCommand.quoted("source-file " + TmuxCommand.quoted(restorePath))),
                  // The number of lines last: a line shown blank before its option was set is not drawn again.
                  "set-option -t \(target) status \(lines + 1)"]
        for command in setUp { client.send(command) }
    }

    /// The width of the session's window now (it changes with the client's size); nil if tmux cannot say.
    func currentWidth() -> Int? {
        TmuxCommand.run(["display-message", "-p", "-t", session, "#{window_width}"]).output.split(separator: "\n").first.flatMap { Int($0) }.map { max(20, $0) }
    }

    /// Shows `lines` (the HUD's, with SGR escapes), each only where it changed.
    func show(_ lines: [String]) {
        guard !restored else { return }
        let target = "'" + session + "'"
        for (index, line) in lines.prefix(Self.maximumLines).enumerated() {
            let text = TmuxStyle.line(fromSGR: line)
            if index < shown.count && shown[index] == text { continue }
            if index < shown.count { shown[index] = text } else { shown.append(text) }
            client.send("set-option -t \(target) @perfhud-line-\(index + 1) " + TmuxCommand.quoted(text))
        }
    }

    /// Puts the session's settings back, as they were.
    func restore() {
        guard !restored else { return }
        restored = true
        _ = TmuxCommand.run(["source-file", restorePath])
        unlink(restorePath)
        client.close()
    }

    deinit { restore() }

    /// Sources a restore file left in `session` by a perfhud that is gone; - Returns: whether there was one.
    @discardableResult
    static func restoreLeftOver(session: String) -> Bool {
        if let owner = owner(of: session), owner != getpid(), kill(owner, 0) == 0 { return false }   // alive: its own to restore
        let path = TmuxCommand.run(["show-options", "-qv", "-t", session, savedOption]).output.split(separator: "\n").first.map(String.init)
        guard let path, !path.isEmpty else { return false }
        _ = TmuxCommand.run(["source-file", path])
        unlink(path)
        return true
    }

    /// The PID of the perfhud whose lines `session` shows, if one did.
    static func owner(of session: String) -> Int32? {
        TmuxCommand.run(["show-options", "-qv", "-t", session, ownerOption]).output.split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// `perfhud status --tmux --restore`: the settings of the session of this pane put back where a
    /// perfhud that is gone left them changed.
    public static func restoreHere() throws -> Bool {
        guard let pane = getenv("TMUX_PANE").map({ String(cString: $0) }), getenv("TMUX") != nil else {
            throw PerfHUDError(.usage, "--restore puts back a tmux session's status lines: run it inside tmux (no $TMUX here)")
        }
        let found = TmuxCommand.run(["display-message", "-p", "-t", pane, "#{session_id}"])
        guard found.status == 0 else { throw PerfHUDError(.unavailable, "cannot ask tmux where pane \(pane) is") }
        return restoreLeftOver(session: String(found.output.split(separator: "\n").first ?? ""))
    }
}
