/* An SDL2 program presenting a known number of frames, for test_frame_hooks_sdl.py and
 * Benchmarks/frame_hooks_cost.py (built against Debian's libsdl2-dev):
 *
 *   sdl_frames MODE N HZ    N presents at a steady HZ (0: as fast as it can), then exit
 *
 * MODE: gl       an OpenGL window, glClear + SDL_GL_SwapWindow (SDL looks libGL's functions up with
 *                dlsym; SDL_VIDEO_X11_FORCE_EGL=1 makes it use EGL)
 *       render   SDL_CreateRenderer's default renderer (OpenGL under Mesa), SDL_RenderPresent
 *       software the software renderer (SDL_RENDERER_SOFTWARE), SDL_RenderPresent
 *       surface  the window's surface, SDL_FillRect + SDL_UpdateWindowSurface (no GL at all)
 *       idle     an OpenGL window and context that never presents: N / HZ seconds of nothing
 *
 * It prints "sdl_frames MODE: N presents in S s" to stderr. Paced frames wait for absolute
 * deadlines (clock_nanosleep, TIMER_ABSTIME), so lateness never accumulates. */
#define _GNU_SOURCE
#include <SDL.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GL_COLOR_BUFFER_BIT 0x00004000

static uint64_t period_ns;
static struct timespec deadline;

static void wait_for_next_frame(void) {
    if (!period_ns) return;
    if (deadline.tv_sec == 0 && deadline.tv_nsec == 0) clock_gettime(CLOCK_MONOTONIC, &deadline);
    uint64_t next = (uint64_t)deadline.tv_nsec + period_ns;
    deadline.tv_sec += (time_t)(next / 1000000000u);
    deadline.tv_nsec = (long)(next % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) != 0) {}
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "sdl_frames: %s: %s\n", what, SDL_GetError());
    exit(2);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sdl_frames gl|render|software|surface|idle N HZ\n");
        return 64;
    }
    const char *mode = argv[1];
    long count = atol(argv[2]);
    double hz = atof(argv[3]);
    period_ns = hz > 0 ? (uint64_t)(1e9 / hz) : 0;
    int gl = !strcmp(mode, "gl") || !strcmp(mode, "idle");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) fail("SDL_Init");
    SDL_Window *window = SDL_CreateWindow("sdl_frames", 0, 0, 320, 240, gl ? SDL_WINDOW_OPENGL : 0);
    if (!window) fail("SDL_CreateWindow");
    SDL_Renderer *renderer = NULL;
    SDL_Surface *surface = NULL;
    void (*clear)(unsigned) = NULL;
    if (gl) {
        if (!SDL_GL_CreateContext(window)) fail("SDL_GL_CreateContext");
        SDL_GL_SetSwapInterval(0);
        clear = (void (*)(unsigned))SDL_GL_GetProcAddress("glClear");
    } else if (!strcmp(mode, "render") || !strcmp(mode, "software")) {
        renderer = SDL_CreateRenderer(window, -1, !strcmp(mode, "software") ? SDL_RENDERER_SOFTWARE : 0);
        if (!renderer) fail("SDL_CreateRenderer");
    } else if (!strcmp(mode, "surface")) {
        surface = SDL_GetWindowSurface(window);
        if (!surface) fail("SDL_GetWindowSurface");
    } else {
        fprintf(stderr, "sdl_frames: unknown mode %s\n", mode);
        return 64;
    }
    double started = seconds();
    long presents = 0;
    if (!strcmp(mode, "idle")) {
        for (long i = 0; i < count; i++) wait_for_next_frame();
    } else {
        for (long i = 0; i < count; i++) {
            SDL_Event event;
            while (SDL_PollEvent(&event)) {}
            if (clear) {
                clear(GL_COLOR_BUFFER_BIT);
                SDL_GL_SwapWindow(window);
            } else if (renderer) {
                SDL_SetRenderDrawColor(renderer, (Uint8)i, 0, 0, 255);
                SDL_RenderClear(renderer);
                SDL_RenderPresent(renderer);
            } else {
                SDL_FillRect(surface, NULL, SDL_MapRGB(surface->format, (Uint8)i, 0, 0));
                SDL_UpdateWindowSurface(window);
            }
            presents++;
            wait_for_next_frame();
        }
    }
    fprintf(stderr, "sdl_frames %s: %ld presents in %.3f s\n", mode, presents, seconds() - started);
    SDL_Quit();
    return 0;
}
