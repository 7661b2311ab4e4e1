"""Frames of the programs people run, not only of those linking glXSwapBuffers (issue 18): SDL2
(OpenGL on GLX and EGL, its renderers, its window surface) and GLFW programs built here against
Debian's libsdl2-dev and libglfw3-dev, and pygame from PyPI (whose wheel bundles its own libSDL2),
each under `perfhud run` on Xvfb with Mesa's software renderer, paced at 60 FPS and printing how
many times it presented. SDL and GLFW dlopen libGL/libEGL and look the swap functions up with
dlsym: the preloaded hook's dlsym hands them its wrappers; SDL's own presents are "sdl" frames.
"""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from test_frame_hooks import GL_HOOK, display, hooks_built, need, receive_lines, run_json, software_gl  # noqa: F401 (fixtures)

HELPERS = ROOT / "Tests/EndToEnd/helpers"
PRESENTS = re.compile(r"^(\w+) (\w+): (\d+) presents in ([\d.]+) s$", re.M)


def compile_against(source, package, directory):
    """helpers/SOURCE built against pkg-config PACKAGE (skipped where the -dev package is absent)."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", package], capture_output=True, text=True)
    if flags.returncode != 0:
        pytest.skip(f"{package} not found by pkg-config (make deps-apt installs libsdl2-dev libglfw3-dev)")
    out = directory / source.replace(".c", "")
    subprocess.run(["cc", "-O1", "-o", str(out), str(HELPERS / source), *flags.stdout.split()], check=True)
    return str(out)


@pytest.fixture(scope="module")
def sdl_frames(tmp_path_factory):
    return compile_against("sdl_frames.c", "sdl2", tmp_path_factory.mktemp("sdl"))


@pytest.fixture(scope="module")
def glfw_frames(tmp_path_factory):
    return compile_against("glfw_frames.c", "glfw3", tmp_path_factory.mktemp("glfw"))


@pytest.fixture(scope="module")
def pygame_program():
    if subprocess.run([sys.executable, "-c", "import pygame"], capture_output=True).returncode != 0:
        pytest.skip("pygame not installed (make deps-python installs it from PyPI)")
    return [sys.executable, str(HELPERS / "pygame_frames.py")]


def presents_of(result):
    found = PRESENTS.findall(result.stderr)
    assert len(found) == 1, result.stderr
    return int(found[0][2])


def assert_counts_what_it_presented(rows, result, source):
    """frames_total within 2 % of the program's own count, every full second's FPS 57-63."""
    presents = presents_of(result)
    last = rows[-1]
    assert last["frame_source"] == source, (last, result.stderr)
    # N presents make N - 1 frames (the first starts the clock); GLFW and pygame present once more
    # themselves at start-up (a swap that clears the new window), which is a present all the same.
    assert abs(last["frames_total"] - presents) <= 0.02 * presents, (last["frames_total"], presents, result.stderr)
    # From 1.5 s after the first frames arrived (a full second of them and the window's lag) to the
    # end, at a 100 ms tick: 60 ± 3 (a frame late by a few ms on this shared machine may cross a
    # second's edge).
    first = next(row["elapsed_seconds"] for row in rows if row["frames_total"])
    steady = [(row["elapsed_seconds"], row["fps"]) for row in rows
              if first + 1.5 <= row["elapsed_seconds"] <= rows[-1]["elapsed_seconds"] - 0.3]
    assert len(steady) >= 15, rows
    assert all(57 <= fps <= 63 for _, fps in steady), steady
    assert all(row["frame_source"] in (None, source) for row in rows), "no other source counted first (a banner as tty)"
    assert "frames_unreported_reason" not in last


@pytest.mark.parametrize("egl", [False, True], ids=["glx", "egl"])
def test_sdl2_opengl_frames_are_its_swaps(display, sdl_frames, egl):
    # SDL_GL_SwapWindow calls glXSwapBuffers (or eglSwapBuffers) through a pointer it got from
    # dlsym: one present, counted once, as SDL's.
    env = dict(software_gl(display), **({"SDL_VIDEO_X11_FORCE_EGL": "1"} if egl else {}))
    rows, result = run_json(sdl_frames, "gl", "240", "60", env=env, tick="100ms", linger=False)
    assert_counts_what_it_presented(rows, result, "sdl")


def test_a_gl_swap_inside_an_sdl_present_is_sent_once_as_sdl(display, sdl_frames):
    # What the hook sends, read without perfhud (which would show one source anyway): 30
    # SDL_GL_SwapWindow, each calling the wrapped glXSwapBuffers (or eglSwapBuffers), make 29 sdl
    # lines and no gl line; the default renderer's SDL_RenderPresent likewise.
    for mode, env in (("gl", {}), ("gl", {"SDL_VIDEO_X11_FORCE_EGL": "1"}), ("render", {})):
        lines = [line for line in receive_lines([sdl_frames, mode, "30", "0"], dict(software_gl(display, preload=True), **env))
                 if line.startswith("perfhud.frame:")]
        sources = [line.split("#source:")[1].split("|")[0] for line in lines]
        assert sources == ["sdl"] * 29, (mode, env, sources)


@pytest.mark.parametrize("mode", ["render", "software", "surface"])
def test_sdl2_2d_frames_are_its_presents(display, sdl_frames, mode):
    # SDL_RenderPresent (the default renderer draws with OpenGL, the software one onto the window
    # surface) and SDL_UpdateWindowSurface: no GL swap at all for the last two.
    rows, result = run_json(sdl_frames, mode, "240", "60", env=software_gl(display), tick="100ms", linger=False)
    assert_counts_what_it_presented(rows, result, "sdl")


@pytest.mark.parametrize("api", ["glx", "egl"])
def test_glfw_frames_are_its_swaps(display, glfw_frames, api):
    rows, result = run_json(glfw_frames, api, "240", "60", env=software_gl(display), tick="100ms", linger=False)
    assert_counts_what_it_presented(rows, result, "gl")


@pytest.mark.parametrize("mode", ["software", "opengl"])
def test_pygame_frames_are_its_flips_and_its_banner_is_not_a_frame(display, pygame_program, mode):
    # pygame's display module links the libSDL2 bundled in its wheel (pygame.libs/), loaded
    # RTLD_LOCAL with the module; its banner ("pygame 2.6.1 (SDL 2.28.4, …)", "Hello from the pygame
    # community") is printed before the first flip and once counted as terminal frames.
    rows, result = run_json(*pygame_program, mode, "240", "60", env=software_gl(display), tick="100ms", linger=False)
    assert "Hello from the pygame community" in result.stderr
    assert_counts_what_it_presented(rows, result, "sdl")


def test_a_gui_program_that_never_presents_says_why_not_fps_0(display, sdl_frames, pygame_program):
    rows, result = run_json(sdl_frames, "idle", "60", "60", env=software_gl(display), tick="100ms", linger=False)
    assert presents_of(result) == 0
    assert all(row["fps"] is None and row["frames_total"] == 0 for row in rows), rows
    assert rows[-1]["frames_unreported_reason"] == "GL loaded, no present seen", rows[-1]
    rows, result = run_json(*pygame_program, "idle", "60", "60", env=software_gl(display), tick="100ms", linger=False)
    assert "Hello from the pygame community" in result.stderr
    assert all(row["fps"] is None and row["frame_source"] is None for row in rows), "the banner is not a frame"
    assert rows[-1]["frames_unreported_reason"] == "GL loaded, no present seen", rows[-1]   # SDL probed libGL
    rows, result = run_json("sh", "-c", "echo a line of log; sleep 0.5; echo another", env={}, tick="100ms", linger=False)
    assert rows[-1]["frames_total"] == 0 and rows[-1]["fps"] is None
    assert rows[-1]["frames_unreported_reason"] == "no GL/Vulkan/SDL/terminal drawing", rows[-1]


def test_the_status_line_says_why_a_gui_program_has_no_frames(display, sdl_frames, terminal):
    term = terminal(["run", "--", sdl_frames, "idle", "150", "60"], columns=140, env=software_gl(display))
    term.wait_for(lambda t: "frames not reported (GL loaded, no present seen)" in t.screen.display[0],
                  what="the reason in the status line")
    assert "FPS" not in term.screen.display[0], term.screen.display[0]
    assert term.finish() == 0


DLSYM_NEXT = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
    /* RTLD_NEXT from the program: the first execve after it, which is the preloaded hook's. Were
       the hook's dlsym to call glibc's rather than jump to it, glibc would take the hook for the
       caller and answer libc's execve. */
    void *next = dlsym(RTLD_NEXT, "execve"), *first = dlsym(RTLD_DEFAULT, "execve");
    void *swap = dlsym(dlopen("libGL.so.1", RTLD_NOW | RTLD_LOCAL), "glXSwapBuffers");
    Dl_info info;
    dladdr(swap, &info);
    printf("next-is-first %d swap-from %s\n", next == first, info.dli_fname);
    return 0;
}
'''


def test_the_dlsym_wrapper_keeps_rtld_next_and_hands_out_the_swap_wrapper(tmp_path):
    source = tmp_path / "next.c"
    source.write_text(DLSYM_NEXT)
    subprocess.run(["cc", "-o", str(tmp_path / "next"), str(source), "-ldl"], check=True)
    def run(**env):
        result = subprocess.run([str(tmp_path / "next")], env=dict(os.environ, LD_PRELOAD=str(GL_HOOK), **env),
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("next-is-first 1 swap-from "), result.stdout
        return result.stdout.strip()
    assert run(PERFHUD_SOCKET=str(tmp_path / "events.sock")).endswith("/libperfhud-gl.so")
    inert = run(PERFHUD_SOCKET="")
    assert "libperfhud-gl.so" not in inert and "libGL" in inert, "without a socket the hook hands out the real one"
