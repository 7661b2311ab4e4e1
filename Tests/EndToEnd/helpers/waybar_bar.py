"""A real waybar (Debian's 0.9.17) showing one `custom/perfhud` module, on a headless Wayland
compositor of its own, for the tests of `perfhud status TARGET --format waybar --follow`.

Why sway and not weston: waybar 0.9.17 needs the wlr-layer-shell protocol and quits at once with
"[error] Failed to acquire required resources." where the compositor has none; weston 10 (even
headless with --use-pixman) offers only xdg-shell. sway 1.7 (wlroots 0.15) has it, a headless
backend (WLR_BACKENDS=headless) and a CPU renderer (WLR_RENDERER=pixman), and the
wlr-screencopy protocol that `grim` needs for a PNG (grim against weston 10: "compositor doesn't
support wlr-screencopy-unstable-v1"; weston-screenshooter works there, but there is no bar to see).

sway refuses to start as root ("Unable to drop root"), so as root it runs as `nobody` (setpriv);
waybar, and so the module's command, stays the test's own user. Needs Debian's packages
`sway waybar grim` (`apt-get install -y --no-install-recommends sway waybar grim`).
"""
import contextlib
import json
import os
import pathlib
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time

PROGRAMS = ("sway", "swaymsg", "waybar", "grim")
WIDTH, HEIGHT = 800, 120   # small PNGs; the bar is 30 pixels high at the top

STYLE = """\
* { font-family: "DejaVu Sans", sans-serif; font-size: 14px; }
window#waybar { background: #202020; color: #ffffff; }
#custom-perfhud { padding: 0 6px; }
#custom-perfhud.alert { color: #ff0000; }
"""


def missing_programs():
    """The programs this harness needs that are not installed (a test skips on any)."""
    return [name for name in PROGRAMS if not shutil.which(name)]


def waybar_parse_errors(log):
    """waybar's log lines saying the custom module's output was refused or the module failed, each
    with the indented lines under it joined on. What 0.9.17 prints (it then goes on running):

        [error] custom/perfhud: * Line 1, Column 2            (a line that is no JSON: `{bad json`)
          Missing '}' or object member name
        [error] custom/perfhud: in Json::Value::resolveReference(key, end): requires objectValue
                                                           (JSON but no object: `[1]`, `"text"`)
        [error] perfhud stopped unexpectedly, is it endless?   (the command exited non-zero)
    """
    lines = log.splitlines()
    found = []
    for index, line in enumerate(lines):
        if re.search(r"\[(error|critical)\] (custom/perfhud: |perfhud stopped unexpectedly)", line):
            # jsoncpp's messages go on over indented lines: keep them with the line they explain.
            message = [line.strip()]
            for following in lines[index + 1:]:
                if not following.startswith((" ", "\t")) or not following.strip():
                    break
                message.append(following.strip())
            found.append(" ".join(message))
    return found


def waybar_command_exits(log):
    """The exit statuses waybar logged for the module's command ("[debug] Cmd exited with code N"):
    a `--follow` stream should have none while the bar runs (one that exits 0 logs nothing else)."""
    return [int(code) for code in re.findall(r"\[debug\] Cmd exited with code (-?\d+)", log)]


def _descendants(pid):
    """PIDs below `pid` (from /proc), so the module's command and its children die with the bar:
    waybar puts that command in a process group of its own and a killed waybar leaves it behind."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        todo += children
    return found


def _stop(process, grace=5.0):
    """SIGTERM, then SIGKILL, to `process` and everything below it."""
    if process is None:
        return
    below = _descendants(process.pid)
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _wait(predicate, timeout, what, log=lambda: ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} within {timeout} s\n{log()}")


class WaybarBar:
    """What the context manager yields: the running bar, its log, and the compositor's screen."""

    def __init__(self, waybar, log_path, env, compositor_log_path):
        self.process, self.log_path, self.env = waybar, log_path, env
        self.compositor_log_path = compositor_log_path

    def log(self):
        """waybar's stdout and stderr so far (one file: their order is kept)."""
        return self.log_path.read_text(errors="replace")

    def alive(self):
        return self.process.poll() is None

    def wait_for_log(self, pattern, timeout=10.0):
        """The first match of the regular expression `pattern` in the log, waited for."""
        _wait(lambda: re.search(pattern, self.log()), timeout, f"waybar logged no {pattern!r}", self.log)
        return re.search(pattern, self.log())

    def screenshot(self, path):
        """A PNG of the whole headless output (grim through wlr-screencopy); returns its path."""
        path = pathlib.Path(path)
        subprocess.run(["grim", "-t", "png", str(path)], env=self.env, check=True, timeout=30,
                       capture_output=True)
        return path

    def pixels(self):
        """The output as (width, height, rows of (r, g, b)): grim's PPM, which needs no PNG decoder,
        so a test can look for the `alert` class's red in the bar's 30 top rows itself."""
        data = subprocess.run(["grim", "-t", "ppm", "-"], env=self.env, check=True, timeout=30,
                              capture_output=True).stdout
        # One whitespace byte ends the header: the pixels may start with bytes that look like it.
        header = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
        assert header, data[:20]
        width, height, body = int(header[1]), int(header[2]), data[header.end():]
        return width, height, [[tuple(body[(y * width + x) * 3:(y * width + x) * 3 + 3]) for x in range(width)]
                               for y in range(height)]


@contextlib.contextmanager
def waybar_with_module(exec_command, tmp_path, interval_seconds=None):
    """waybar with one `custom/perfhud` module running `exec_command` (a shell command line).

    With `interval_seconds` None the module has no interval: waybar runs the command once and shows
    each line it prints (what a `--follow` stream needs); with a number it reruns it that often and
    shows its output."""
    missing = missing_programs()
    if missing:
        raise RuntimeError(f"not installed: {' '.join(missing)} (apt-get install sway waybar grim)")
    tmp_path = pathlib.Path(tmp_path)
    module = {"exec": exec_command, "return-type": "json", "format": "{}", "tooltip": True}
    if interval_seconds is not None:
        module["interval"] = interval_seconds
    config = {"layer": "top", "position": "top", "height": 30,
              "modules-left": ["custom/perfhud"], "custom/perfhud": module}
    (tmp_path / "config").write_text(json.dumps(config, indent=2))
    (tmp_path / "style.css").write_text(STYLE)

    # Wayland's runtime directory: private (0700) and owned by the compositor's user; root's
    # clients (waybar, grim) reach it anyway. A directory of our own also makes the socket ours:
    # sway 1.7 always names it wayland-N itself and takes no socket name.
    runtime = pathlib.Path(tempfile.mkdtemp(prefix="perfhud-wayland-"))
    as_user = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(runtime, nobody.pw_uid, nobody.pw_gid)
        as_user = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
    os.chmod(runtime, 0o700)
    # No bar of sway's own, no wallpaper client, no Xwayland: the only client is waybar.
    sway_config = runtime / "sway.conf"
    sway_config.write_text(f"output * mode {WIDTH}x{HEIGHT}\nxwayland disable\n")
    os.chmod(sway_config, 0o644)
    env = {name: value for name, value in os.environ.items()
           if name not in ("WAYLAND_DISPLAY", "DISPLAY", "SWAYSOCK", "I3SOCK")}
    env.update(XDG_RUNTIME_DIR=str(runtime), WLR_BACKENDS="headless", WLR_RENDERER="pixman",
               WLR_LIBINPUT_NO_DEVICES="1", GDK_BACKEND="wayland", NO_AT_BRIDGE="1")
    compositor_log = tmp_path / "sway.log"
    waybar_log = tmp_path / "waybar.log"
    compositor = waybar = None
    try:
        with open(compositor_log, "wb") as out:
            compositor = subprocess.Popen([*as_user, "sway", "-c", str(sway_config)], env=env,
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        sockets = lambda: [p for p in runtime.glob("wayland-*") if p.is_socket()]
        ipc = lambda: [p for p in runtime.glob("sway-ipc.*.sock") if p.is_socket()]
        _wait(lambda: (sockets() and ipc()) or compositor.poll() is not None, 15, "sway made no socket",
              compositor_log.read_text)
        if compositor.poll() is not None:
            raise RuntimeError(f"sway exited {compositor.returncode}\n{compositor_log.read_text()}")
        env.update(WAYLAND_DISPLAY=sockets()[0].name, SWAYSOCK=str(ipc()[0]))

        def output_up():   # the headless output exists only once the backend has started
            answer = subprocess.run(["swaymsg", "-r", "-t", "get_outputs"], env=env, capture_output=True, text=True)
            return answer.returncode == 0 and any(output.get("active") for output in json.loads(answer.stdout))
        _wait(output_up, 15, "sway's headless output did not come up", compositor_log.read_text)

        with open(waybar_log, "wb") as out:
            waybar = subprocess.Popen(["waybar", "-c", str(tmp_path / "config"), "-s", str(tmp_path / "style.css"),
                                       "-l", "debug"], env=env, cwd=tmp_path,
                                      stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        bar = WaybarBar(waybar, waybar_log, env, compositor_log)
        _wait(lambda: "Bar configured" in bar.log() or waybar.poll() is not None, 15,
              "waybar showed no bar", bar.log)
        if waybar.poll() is not None:
            raise RuntimeError(f"waybar exited {waybar.returncode}\n{bar.log()}")
        yield bar
    finally:
        _stop(waybar)
        _stop(compositor)
        shutil.rmtree(runtime, ignore_errors=True)
