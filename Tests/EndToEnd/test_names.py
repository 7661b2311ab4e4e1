"""Names said as a user would read them: a program's own name, not the kernel's 15 bytes of it;
perfhud's own frame-hook thread in a target named as perfhud's, not as the program's work."""
import json
import os
import shutil
import subprocess

from conftest import perfhud, json_rows_of
from test_frame_hooks import egl_env, gl_frames  # noqa: F401 (fixture)


def test_a_long_program_name_is_said_whole_everywhere(burn, tmp_path, terminal):
    name = "a-program-with-a-long-name"       # comm keeps "a-program-with-"
    program = tmp_path / name
    shutil.copy(burn, program)
    path = tmp_path / "run.db"
    result = perfhud("run", "--output", "json", "--tick", "100ms", "--record", str(path), "--", str(program), "busy", "0.3", timeout=60)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    assert {row["command"] for row in rows} == {name}, {row["command"] for row in rows}
    recorded = subprocess.run(["sqlite3", str(path), "select value from meta where key = 'target_command'"],
                              capture_output=True, text=True, check=True).stdout.strip()
    assert recorded == name
    report = json.loads(perfhud("report", str(path), "--format", "json").stdout)
    assert report["command"] == name
    hud = terminal(["run", "--", str(program), "busy", "1.5"], rows=24, columns=120)
    hud.wait_for(lambda screen: name in screen.text(), what="the whole name on the HUD")
    assert hud.finish(timeout=30) == 0


def test_a_name_the_program_gave_itself_is_kept(tmp_path):
    # Python renames its main thread (and so the process's comm) to a name of its own choosing.
    script = ("import ctypes, time; libc = ctypes.CDLL(None); libc.prctl(15, b'worker-pool-long', 0, 0, 0); "
              "time.sleep(1.2)")
    result = perfhud("run", "--output", "json", "--tick", "200ms", "--", "python3", "-c", script, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    assert rows[-2]["command"] == "worker-pool-lon", rows[-2]["command"]   # not a prefix of "python3"


def test_perfhuds_own_hook_thread_is_named_as_perfhuds(gl_frames):
    result = perfhud("run", "--output", "json", "--tick", "250ms", "--", gl_frames, "paced", "180", "60",
                     env=dict(egl_env(), LP_NUM_THREADS="0"), timeout=60)   # no llvmpipe threads: the program and the hook
    assert result.returncode == 0, result.stderr
    rows = json_rows_of(result.stdout)
    names = {thread["name"] for row in rows for thread in row["busiest_threads"] or []}
    assert "perfhud's hook" in names, names
    assert "perfhud-flush" not in names, names
