"""A tmux server seen from the outside, status lines included: for `perfhud attach PID --tmux`.

`capture-pane` of a session shows its panes but never its status lines. So `TmuxStatus` runs two
private servers (`tmux -L SOCKET`, no configuration file):

* the INNER server: the one under test (perfhud runs in one of its panes and changes its options).
  Two sessions, "main" (windows 0 "one" and 1 "two") and "other" (window 0 "three"): three windows,
  a shell (`bash --norc --noprofile`) in each pane. `$TMUX` in those panes names the inner server,
  so a plain `tmux ...` typed there talks to it.
* the OUTER server: one pane, exactly COLUMNS x ROWS (its own status line is off), that runs an inner
  client, `tmux -L INNER attach -t =main`. `capture-pane -p [-e]` of that pane is what a person sees
  in the inner client: the panes of "main" and its status lines, with their colours under `-e`.

Targets are always written `=NAME:` / `=NAME:INDEX` (an exact session name): a bare `-t b` also
matches a *window* whose name starts with "b" (e.g. "bash") in the current session.

Run this file to see a demonstration: `python3 Tests/EndToEnd/helpers/tmux_status.py`.
"""
import os
import shutil
import subprocess
import time
import uuid

SHELL = "bash --norc --noprofile"
WINDOWS = {"main": ["one", "two"], "other": ["three"]}


def _environment():
    """The environment the servers start with: no enclosing tmux, a UTF-8 locale."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "LC_ALL", "LC_CTYPE")}
    env["LANG"] = "C.UTF-8"
    env.setdefault("TERM", "xterm-256color")
    return env


def wait_for(predicate, timeout=10.0, interval=0.05):
    """Polls predicate() until it is truthy; returns its last value (falsy on a timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class TmuxStatus:
    """An inner tmux server with sessions "main" and "other", seen through an outer one."""

    def __init__(self, columns=100, rows=30, session="main"):
        tag = uuid.uuid4().hex[:8]
        self.inner = f"perfhud-in-{tag}"
        self.outer = f"perfhud-out-{tag}"
        self.columns, self.rows = columns, rows
        self.session = session            # the session the inner client shows; type() and key() go there
        self.env = _environment()
        self._sockets = []
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # -- the servers ---------------------------------------------------------------------------

    def _tmux(self, socket, args, check=False, input=None):
        result = subprocess.run(["tmux", "-u", "-L", socket, *args], capture_output=True, input=input,
                                timeout=10, env=self.env)
        if check and result.returncode != 0:
            raise RuntimeError(f"tmux -L {socket} {' '.join(args)}: {result.stderr.decode(errors='replace')}")
        return result

    def _start(self):
        first = True
        for name, windows in WINDOWS.items():
            args = ["new-session", "-d", "-s", name, "-n", windows[0], "-x", "80", "-y", "24", SHELL]
            self._tmux(self.inner, (["-f", "/dev/null"] if first else []) + args, check=True)
            if first:
                self._sockets.append(self.run_bytes("display-message", "-p", "#{socket_path}").strip())
                first = False
            for index, window in enumerate(windows[1:], start=1):
                self._tmux(self.inner, ["new-window", "-d", "-t", f"={name}:{index}", "-n", window, SHELL], check=True)
        self.run("select-window", "-t", f"={self.session}:0")

        # The outer terminal: status off, one pane of exactly columns x rows running the inner client.
        # $TMUX is unset there (tmux refuses to attach inside a tmux pane otherwise).
        client = f"exec env -u TMUX -u TMUX_PANE tmux -u -L {self.inner} attach-session -t ={self.session}"
        self._tmux(self.outer, ["-f", "/dev/null", "new-session", "-d", "-s", "outer",
                                "-x", str(self.columns), "-y", str(self.rows), client], check=True)
        self._sockets.append(self._tmux(self.outer, ["display-message", "-p", "#{socket_path}"]).stdout.decode().strip())
        for args in (["set-option", "-g", "status", "off"],
                     ["set-option", "-g", "default-terminal", "tmux-256color"],
                     ["resize-window", "-t", "=outer:", "-x", str(self.columns), "-y", str(self.rows)]):
            self._tmux(self.outer, args, check=True)
        attached = wait_for(lambda: self.run("list-clients", "-t", f"={self.session}").strip(), timeout=10)
        if not attached:
            raise RuntimeError("the inner client did not attach:\n" + "\n".join(self.screen()))
        wait_for(lambda: any(line.strip() for line in self.status_lines()), timeout=10)

    # -- the inner server ----------------------------------------------------------------------

    def run_bytes(self, *args, input=None):
        """A tmux command on the inner server; its stdout as bytes (exact, nothing stripped)."""
        return self._tmux(self.inner, list(args), input=input).stdout

    def run(self, *args):
        """A tmux command on the inner server; its stdout as text."""
        return self.run_bytes(*args).decode("utf-8", errors="surrogateescape")

    def run_checked(self, *args):
        """Like run(), but a failing command raises with tmux's message."""
        return self._tmux(self.inner, list(args), check=True).stdout.decode("utf-8", errors="surrogateescape")

    def target(self, session=None, window=None):
        """An exact target: `=SESSION:` (its current window) or `=SESSION:WINDOW`."""
        return f"={session or self.session}:" + ("" if window is None else str(window))

    def state(self, name, session=None):
        """One format variable of the session's current pane, e.g. state("session_id")."""
        return self.run("display-message", "-p", "-t", self.target(session), "#{" + name + "}").strip()

    def session_id(self, session=None):
        return self.state("session_id", session)

    def type(self, text, enter=True, session=None):
        """Types text into the active pane of the session (the inner client's by default)."""
        self.run("send-keys", "-t", self.target(session), "-l", text)
        if enter:
            self.run("send-keys", "-t", self.target(session), "Enter")

    def key(self, name, session=None):
        """Sends one key by tmux's name (C-c, Enter, Escape, ...) to the session's active pane."""
        self.run("send-keys", "-t", self.target(session), name)

    def switch_window(self, n, session=None):
        """Makes window n current in the session (the inner client then shows it)."""
        self.run_checked("select-window", "-t", self.target(session, n))

    def pane_screen(self, session=None):
        """The text of the session's active pane (inner capture: no status lines)."""
        return self.run("capture-pane", "-p", "-t", self.target(session)).split("\n")[:-1]

    # -- what the inner client shows -----------------------------------------------------------

    def screen(self, escapes=False):
        """Every row of the inner client's terminal (the outer pane); with escapes=True, with the
        SGR sequences of `capture-pane -e`."""
        args = ["capture-pane", "-p", "-t", "=outer:"] + (["-e"] if escapes else [])
        text = self._tmux(self.outer, args).stdout.decode("utf-8", errors="surrogateescape")
        rows = text.split("\n")
        if rows and rows[-1] == "":
            rows.pop()
        return rows

    def status_count(self, session=None):
        """How many status lines the session has: its `status` option, local or inherited."""
        value = self.run("show-options", "-A", "-v", "-t", self.target(session), "status").strip()
        return {"off": 0, "on": 1}.get(value, int(value) if value.isdigit() else 1)

    def status_position(self, session=None):
        return self.run("show-options", "-A", "-v", "-t", self.target(session), "status-position").strip() or "bottom"

    def row(self, n, escapes=False):
        """Row n of the inner client's terminal alone. With escapes=True it starts from the default
        colours, so its SGR sequences are complete (in screen(escapes=True) a row only carries the
        changes from the row above: `capture-pane -e` emits differences)."""
        args = ["capture-pane", "-p", "-t", "=outer:", "-S", str(n), "-E", str(n)] + (["-e"] if escapes else [])
        return self._tmux(self.outer, args).stdout.decode("utf-8", errors="surrogateescape").rstrip("\n")

    def status_rows(self):
        """The indexes of the terminal rows that show the status lines, line 0 first."""
        count = min(self.status_count(), self.rows)
        first = 0 if self.status_position() == "top" else self.rows - count
        return list(range(first, first + count))

    def status_lines(self, escapes=False):
        """The rows of the inner client's terminal that are its status lines, line 0 first (the last
        rows with status-position bottom, the first with top), trailing blanks trimmed (capture-pane
        does). With escapes=True each row keeps its SGR sequences, complete (see row())."""
        rows = self.status_rows()
        if escapes:
            return [self.row(n, escapes=True) for n in rows]
        screen = self.screen()
        return [screen[n] for n in rows]

    def wait_status(self, predicate, what="the status lines", timeout=10, escapes=False):
        """Waits until predicate(status_lines()) holds; returns those lines or raises."""
        found = wait_for(lambda: (lambda lines: lines if predicate(lines) else None)(self.status_lines(escapes)),
                         timeout=timeout)
        if found is None:
            raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(self.screen(escapes)))
        return found

    # -- options, byte for byte ----------------------------------------------------------------

    def options_snapshot(self, session=None):
        """Every option and hook a program in this server could have changed, as tmux prints them,
        byte for byte: `show-options -H -t =S:` (the session's own), `-gH` (global session), `-gwH`
        (global window), `-s` (server), then `-wH` of each window and `-pH` of each pane of the
        server; session=None: the own options of every session (-H: hooks too; a hook is an
        array option, and `set-hook -u NAME[i]` leaves an empty local array behind). Two snapshots
        compare equal when all those are exactly as before."""
        sessions = [self.target(session)] if session else [
            "=" + name + ":" for name in self.run("list-sessions", "-F", "#{session_name}").split("\n") if name]
        sections = [("show-options -H -t " + target, ["show-options", "-H", "-t", target]) for target in sessions]
        sections += [("show-options -gH", ["show-options", "-gH"]),
                     ("show-options -gwH", ["show-options", "-gwH"]),
                     ("show-options -s", ["show-options", "-s"])]
        windows = self.run("list-windows", "-a", "-F", "#{session_name}:#{window_index}").split()
        for window in windows:
            sections.append((f"show-options -wH -t ={window}", ["show-options", "-wH", "-t", "=" + window]))
        panes = self.run("list-panes", "-a", "-F", "#{pane_id}").split()
        for pane in panes:
            sections.append((f"show-options -pH -t {pane}", ["show-options", "-pH", "-t", pane]))
        out = bytearray()
        for title, args in sections:
            result = self._tmux(self.inner, args)
            out += b"== " + title.encode() + b" (rc %d)\n" % result.returncode + result.stdout
        return bytes(out)

    # -- the end -------------------------------------------------------------------------------

    def close(self):
        """Kills both servers and removes their sockets (tmux 3.3a leaves them behind)."""
        for socket in (self.outer, self.inner):
            try:
                self._tmux(socket, ["kill-server"])
            except (OSError, subprocess.SubprocessError):
                pass
        for path in self._sockets:
            try:
                if path:
                    os.unlink(path)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def snapshot_diff(before, after):
    """The lines that differ between two options_snapshot() results, for an assertion message."""
    import difflib
    return "\n".join(difflib.unified_diff(before.decode(errors="replace").splitlines(),
                                          after.decode(errors="replace").splitlines(), "before", "after", lineterm=""))


def _demo():
    assert shutil.which("tmux"), "tmux is not installed"
    with TmuxStatus() as t:
        before = t.options_snapshot()
        normal = t.status_lines()
        assert len(normal) == 1 and "[main]" in normal[0] and "0:one*" in normal[0], normal
        print("status line before:", normal)

        # 1. The gotcha: a session's own status-format is a whole array. Setting only [1] locally
        #    leaves the session's line 0 EMPTY (it no longer falls back to the global [0]).
        t.type("tmux set-option -t \"$(tmux display -p '#{session_id}')\" status 3 \\; "
               "set-option -t \"$(tmux display -p '#{session_id}')\" 'status-format[1]' 'only one'")
        lines = t.wait_status(lambda s: len(s) == 3 and s[1].strip() == "only one", "status 3 with line 1 only")
        assert lines[0].strip() == "", f"line 0 is empty without a local copy of status-format[0]: {lines}"
        print("only [1] set locally:", lines)
        # Undo it before going on: tmux 3.3a caches each status line's last expansion and does not
        # repaint a line that was blank for a missing index when that index comes back with the same
        # text as before (status.c); changing the number of lines forces a repaint.
        t.type("tmux set-option -u -t \"$(tmux display -p '#{session_id}')\" status \\; "
               "set-option -u -t \"$(tmux display -p '#{session_id}')\" status-format")
        t.wait_status(lambda s: len(s) == 1 and "0:one*" in s[0], "one status line again")

        # 2. As perfhud must do it: copy the global [0] too and set [1] (a '#' written '##'), then
        #    the number of lines, all in one command list so that no line is ever missing.
        t.type("S=$(tmux display -p '#{session_id}'); "
               "tmux set-option -t \"$S\" 'status-format[0]' \"$(tmux show-options -gv 'status-format[0]')\" \\; "
               "set-option -t \"$S\" 'status-format[1]' 'perfhud ##1 #[fg=red]red#[default] end' \\; "
               "set-option -t \"$S\" status 3")
        lines = t.wait_status(lambda s: len(s) == 3 and "[main]" in s[0] and s[1].startswith("perfhud #1 red end"),
                              "the copied line 0 and perfhud's line 1")
        coloured = t.status_lines(escapes=True)
        assert "\x1b[31mred" in coloured[1], coloured
        print("status 3, [0] copied, [1] set:", lines)
        t.switch_window(1)
        lines = t.wait_status(lambda s: "1:two*" in s[0], "window 1 current in line 0")
        print("after switch_window(1):", lines[0])
        t.switch_window(0)

        # 3. Restore: unset the session's status and the WHOLE status-format array (a per-index
        #    `set -u 'status-format[1]'` would leave an empty local array: every line blank).
        t.type("S=$(tmux display -p '#{session_id}'); tmux set-option -u -t \"$S\" status \\; "
               "set-option -u -t \"$S\" status-format")
        lines = t.wait_status(lambda s: len(s) == 1 and "0:one*" in s[0], "the single status line again")
        after = t.options_snapshot()
        assert after == before, snapshot_diff(before, after)
        print("restored:", lines, "- options snapshot identical,", len(before), "bytes")


if __name__ == "__main__":
    _demo()
