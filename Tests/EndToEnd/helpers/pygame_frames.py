"""A pygame program presenting a known number of frames, for test_frame_hooks_sdl.py (pygame from
PyPI, whose wheel bundles its own libSDL2):

  pygame_frames.py software|opengl|idle N HZ

software: display.flip() of a software surface (SDL_UpdateWindowSurface); opengl: a
pygame.OPENGL display, flip() is SDL_GL_SwapWindow; idle: a window that is never flipped, N / HZ
seconds. Frames wait for absolute deadlines, so lateness never accumulates. Prints
"pygame_frames MODE: N presents in S s" to stderr; pygame prints its banner at import.
"""
import sys
import time

import pygame


def main(mode, count, hz):
    pygame.display.init()
    flags = pygame.OPENGL | pygame.DOUBLEBUF if mode == "opengl" else 0
    screen = pygame.display.set_mode((320, 240), flags)
    period = 1 / hz if hz > 0 else 0
    started = next_at = time.monotonic()
    presents = 0
    for index in range(count):
        if mode != "idle":
            pygame.event.pump()
            if mode == "software":
                screen.fill((index % 256, 0, 0))
            pygame.display.flip()
            presents += 1
        next_at += period
        time.sleep(max(0, next_at - time.monotonic()))
    print(f"pygame_frames {mode}: {presents} presents in {time.monotonic() - started:.3f} s", file=sys.stderr, flush=True)
    pygame.quit()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
