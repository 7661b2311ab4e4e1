#!/usr/bin/env python3
"""What the preloaded frame hook (libperfhud-gl.so: its dlsym wrapper, the GL and SDL wrappers)
costs a program, as ratios (issue 18).

  1. Frame rate, uncapped (vblank_mode=0, Mesa's software renderer, a private Xvfb), with and
     without LD_PRELOAD=libperfhud-gl.so, PERFHUD_SOCKET at a live perfhud's event socket (so every
     frame is really sent), runs alternating, medians:
       - an SDL2 OpenGL program (Tests/EndToEnd/helpers/sdl_frames.c, `gl`: glClear +
         SDL_GL_SwapWindow, SDL's glXSwapBuffers found through the dlsym wrapper), 2,000 presents;
       - glxgears (links libGL: glXSwapBuffers preloaded), its first 5-second count.
  2. Instructions per present in libperfhud-gl.so (callgrind, every thread): the SDL2 program with
     600 presents less the same with 300, so start-up (the dlsym lookups, the constructor) cancels;
     for `gl` (SDL_GL_SwapWindow around the GL wrapper) and `surface` (SDL_UpdateWindowSurface).

Usage: Benchmarks/frame_hooks_cost.py [RUNS]      (default 5; PERFHUD_BIN selects the build)
Needs: xvfb mesa-utils libsdl2-dev valgrind (make deps-apt), a built perfhud and `make hooks`.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(os.environ.get("PERFHUD_BIN", ROOT / ".build/release"))
HOOK = BIN / "libperfhud-gl.so"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
PRESENTS = re.compile(r"(\d+) presents in ([\d.]+) s")


def wait_for_path(path, timeout=10):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f"{path} did not appear")
        time.sleep(0.05)


def sdl_fps(program, env, count=2000):
    result = subprocess.run([program, "gl", str(count), "0"], env=env, capture_output=True, text=True, timeout=300)
    found = PRESENTS.search(result.stderr)
    if not found:
        sys.exit(f"sdl_frames failed: {result.stderr}")
    return int(found[1]) / float(found[2])


def glxgears_fps(env):
    gears = subprocess.Popen(["glxgears"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    fps = None
    for line in gears.stdout:
        if " frames in " in line:
            fps = float(line.split()[-2])
            break
    gears.kill()
    gears.wait()
    return fps


def instructions_in_hook(program, mode, count, env, directory):
    """Instructions callgrind counts in libperfhud-gl.so over a run of `count` presents."""
    out = os.path.join(directory, f"callgrind.{mode}.{count}")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--separate-threads=no",
                    program, mode, str(count), "0"], env=env, capture_output=True, text=True, timeout=1200, check=True)
    annotated = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True, check=True).stdout
    total = 0
    for line in annotated.splitlines():
        if "libperfhud-gl.so" in line:
            number = line.split()[0].replace(",", "")
            if number.isdigit():
                total += int(number)
    return total


def main():
    missing = [name for name in ("Xvfb", "glxgears", "pkg-config", "valgrind", "callgrind_annotate") if not shutil.which(name)]
    if missing or not HOOK.exists() or not (BIN / "perfhud").exists():
        sys.exit(f"missing: {', '.join(missing) or ''} {'' if HOOK.exists() else HOOK} (make deps-apt build)")
    number = next(n for n in range(90, 200)
                  if not os.path.exists(f"/tmp/.X{n}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{n}"))
    xvfb = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = subprocess.Popen(["sleep", "100000"])
    with tempfile.TemporaryDirectory() as directory:
        program = os.path.join(directory, "sdl_frames")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "sdl2"], capture_output=True, text=True, check=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", program, str(ROOT / "Tests/EndToEnd/helpers/sdl_frames.c"), *flags], check=True)
        path = os.path.join(directory, "events.sock")
        report = open(os.path.join(directory, "report.json"), "w+")
        receiver = subprocess.Popen([str(BIN / "perfhud"), "attach", str(target.pid), "--events", path, "--output", "json",
                                     "--tick", "1s"], stdout=report, stderr=subprocess.DEVNULL)
        try:
            wait_for_path(path)
            wait_for_path(f"/tmp/.X11-unix/X{number}")
            base = dict(os.environ, DISPLAY=f":{number}", LIBGL_ALWAYS_SOFTWARE="1", vblank_mode="0")
            base.pop("LD_PRELOAD", None)
            hooked = dict(base, LD_PRELOAD=str(HOOK), PERFHUD_SOCKET=path)
            fps = {(program_name, variant): [] for program_name in ("SDL2 GL", "glxgears") for variant in ("without", "with")}
            for _ in range(RUNS):
                for variant, env in (("without", base), ("with", hooked)):
                    fps[("SDL2 GL", variant)].append(sdl_fps(program, env))
                    fps[("glxgears", variant)].append(glxgears_fps(env))
            time.sleep(1.5)
            instructions = {}
            for mode in ("gl", "surface"):
                counts = [instructions_in_hook(program, mode, count, hooked, directory) for count in (300, 600)]
                instructions[mode] = (counts[1] - counts[0]) / 300
        finally:
            receiver.send_signal(signal.SIGINT)
            receiver.wait(timeout=10)
            target.kill()
            xvfb.terminate()
            xvfb.wait(timeout=10)
        report.seek(0)
        lines = report.read().splitlines()
        # The last row (the summary line, {"summary": …}, comes after the rows).
        received = next((json.loads(line)["frames_total"] for line in reversed(lines) if not line.startswith('{"summary"')), 0)
    print(f"## libperfhud-gl.so: uncapped frame rates (LIBGL_ALWAYS_SOFTWARE=1 vblank_mode=0, Xvfb), {RUNS} runs each way, alternating")
    for program_name in ("SDL2 GL", "glxgears"):
        without, with_hook = (statistics.median(fps[(program_name, variant)]) for variant in ("without", "with"))
        runs = lambda variant: ", ".join(f"{value:.0f}" for value in fps[(program_name, variant)])
        print(f"  {program_name:9s} without {without:8.1f} FPS ({runs('without')})")
        print(f"  {program_name:9s} with    {with_hook:8.1f} FPS ({runs('with')})")
        print(f"  {program_name:9s} with / without = {with_hook / without:.3f}; frame time {(without / with_hook - 1) * 100:+.1f} %")
    # One source at a time: the SDL runs come first, so glxgears' gl frames are sent (and cost what
    # they cost) but not added to perfhud's count.
    print(f"  sdl frames perfhud counted from the hooked runs (callgrind's included): {received:.0f}")
    print("## instructions per present in libperfhud-gl.so (callgrind, 600 presents less 300)")
    for mode, value in instructions.items():
        print(f"  SDL2 {mode:8s} {value:8.0f} instructions per present")


if __name__ == "__main__":
    main()
