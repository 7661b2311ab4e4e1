"""A real peer nobody here wrote: glmark2 on Wayland (weston's headless compositor, Mesa's software
GL). Its exit path sometimes leaves its main thread ended while others finish, the state that
made perfhud call it dead with a CPU total going back (issue 31). Each run must be alive in
every row but the exit row, end with its exit code, have totals that never go back, and count
the frames glmark2 counted itself."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import perfhud, wait_until, json_rows_of


@pytest.fixture(scope="module")
def wayland(tmp_path_factory):
    """A headless weston on a socket of its own: the environment its clients need."""
    if not shutil.which("weston") or not shutil.which("glmark2-es2-wayland"):
        pytest.skip("weston and glmark2-es2-wayland are installed by make test")
    runtime = tmp_path_factory.mktemp("xdg")
    os.chmod(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    compositor = subprocess.Popen(["weston", "--backend=headless-backend.so", "--socket=wayland-perfhud", "--idle-time=0"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_until(lambda: (runtime / "wayland-perfhud").exists() or compositor.poll() is not None, timeout=15) \
            or compositor.poll() is not None:
        pytest.fail("weston did not start")
    time.sleep(0.5)   # its shell client comes up
    yield dict(env, WAYLAND_DISPLAY="wayland-perfhud")
    compositor.terminate()
    compositor.wait(timeout=10)


def test_glmark2_is_alive_to_its_end_and_its_frames_are_its_own(wayland):
    scenes = ["build:duration=1", "shading:duration=1"]
    for _ in range(4):   # the state it ends in varies from run to run
        args = [arg for scene in scenes for arg in ("-b", scene)]
        result = perfhud("run", "--output", "json", "--tick", "100ms", "--", "glmark2-es2-wayland", *args, "-s", "320x240",
                         env=wayland, timeout=120)
        assert result.returncode == 0, result.stderr
        rows = json_rows_of(result.stdout)
        assert len(rows) >= 15, result.stdout
        assert all(row["alive"] for row in rows[:-1]), [row["alive"] for row in rows]
        end = rows[-1]
        assert end["alive"] is False and end["exit_code"] == 0, end
        totals = [row["cpu_seconds_total"] for row in rows]
        assert totals == sorted(totals), totals
        # glmark2's own count: FPS × seconds per scene (its FPS is whole frames per second).
        fps = [int(value) for value in re.findall(r"FPS: (\d+)", result.stderr)]
        assert len(fps) == len(scenes), result.stderr
        own = sum(fps)
        assert end["frame_source"] == "gl", end
        assert abs(end["frames_total"] - own) <= 0.02 * own + len(scenes) * 2, (end["frames_total"], fps)
