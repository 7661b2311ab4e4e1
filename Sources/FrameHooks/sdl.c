/* libperfhud-gl.so: SDL's presents — SDL_GL_SwapWindow, SDL_RenderPresent, SDL_UpdateWindowSurface
 * and SDL_UpdateWindowSurfaceRects — as "sdl" frames. They cover what the GL swaps do not: a 2D SDL
 * game (the software and GL renderers alike present through SDL_RenderPresent) and pygame's
 * software display.flip() (SDL_UpdateWindowSurface), which call no GL at all. A GL swap inside an
 * SDL present is part of it (perfhud_present_depth): one frame, "sdl".
 *
 * SDL2 and SDL3 use the same names with other return types (SDL2: void or int, SDL3: bool). The
 * wrappers return what the real function left in the return register, as an intptr_t: a caller of
 * either version reads the part its type covers (SDL2's callers of a void function read nothing).
 * On the x86-64 and AArch64 ABIs an int or bool result lives in the low bits of that register.
 *
 * Where the real functions are: a program linked with SDL finds ours first (the preload comes before
 * its libraries in the global scope) and ours find SDL's after us (RTLD_NEXT). A Python extension
 * (pygame) links a libSDL2 bundled in its wheel (pygame.libs/libSDL2-2-<hash>.0.so…), loaded
 * RTLD_LOCAL with the module: its calls still come to us (the global scope is searched before the
 * module's own), but RTLD_NEXT cannot see that libSDL2, so the loaded libraries whose names start
 * with libSDL2/libSDL3 are asked next. A program that dlopens SDL (ctypes, PySDL2) gets our
 * wrappers from lookup.c's dlsym. */
#define _GNU_SOURCE
#include "common.h"
#include "preload.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static __thread struct perfhud_clock sdl_clock __attribute__((tls_model("initial-exec")));

typedef intptr_t (*sdl_present)(void *target);
typedef intptr_t (*sdl_update_rects)(void *window, const void *rects, int count);

EXPORT intptr_t SDL_GL_SwapWindow(void *window);
EXPORT intptr_t SDL_RenderPresent(void *renderer);
EXPORT intptr_t SDL_UpdateWindowSurface(void *window);
EXPORT intptr_t SDL_UpdateWindowSurfaceRects(void *window, const void *rects, int count);

enum { GL_SWAP, RENDER_PRESENT, UPDATE_SURFACE, UPDATE_SURFACE_RECTS, HOOKS };
static struct perfhud_hook hooks[HOOKS] = {
    [GL_SWAP] = {"SDL_GL_SwapWindow", (any_function)SDL_GL_SwapWindow},
    [RENDER_PRESENT] = {"SDL_RenderPresent", (any_function)SDL_RenderPresent},
    [UPDATE_SURFACE] = {"SDL_UpdateWindowSurface", (any_function)SDL_UpdateWindowSurface},
    [UPDATE_SURFACE_RECTS] = {"SDL_UpdateWindowSurfaceRects", (any_function)SDL_UpdateWindowSurfaceRects},
};

static int is_ours(any_function f) { return perfhud_hook_is_ours(hooks, HOOKS, f); }

static void remember(int index, any_function real) { perfhud_hook_remember(hooks, HOOKS, index, real); }

/* The paths of the loaded libraries named libSDL2…/libSDL3… (collected first: dlopen is not called
 * while dl_iterate_phdr holds the loader's list). */
#define MAX_SDL_LIBRARIES 8
#define PATH_BYTES 512
struct sdl_libraries {
    unsigned count;
    char paths[MAX_SDL_LIBRARIES][PATH_BYTES];
};

static int collect_sdl(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct sdl_libraries *found = data;
    const char *path = info->dlpi_name;
    if (!path || !*path || found->count == MAX_SDL_LIBRARIES) return 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strncmp(base, "libSDL2", 7) != 0 && strncmp(base, "libSDL3", 7) != 0) return 0;
    if (strlen(path) >= PATH_BYTES) return 0;
    strcpy(found->paths[found->count++], path);
    return 0;
}

static any_function find_real(int index) {
    const char *name = hooks[index].name;
    any_function f = (any_function)perfhud_real_dlsym(RTLD_NEXT, name);
    if (f && !is_ours(f)) return f;
    struct sdl_libraries found;
    found.count = 0;
    dl_iterate_phdr(collect_sdl, &found);
    const char *paths[MAX_SDL_LIBRARIES];
    for (unsigned i = 0; i < found.count; i++) paths[i] = found.paths[i];
    return perfhud_real_in_libraries(hooks, HOOKS, paths, found.count, name);
}

static any_function real_function(int index) { return perfhud_hook_real(hooks, HOOKS, index, find_real); }

/* As gl.c's: the outermost present counts. */
static inline void enter_present(void) {
    if (perfhud_present_depth++ == 0) perfhud_present_from(&sdl_clock, "sdl");
}
static inline void leave_present(void) { perfhud_present_depth--; }

static intptr_t present(int index, void *target) {
    sdl_present real = (sdl_present)real_function(index);
    enter_present();
    intptr_t result = real ? real(target) : -1;
    leave_present();
    return result;
}

EXPORT intptr_t SDL_GL_SwapWindow(void *window) { return present(GL_SWAP, window); }
EXPORT intptr_t SDL_RenderPresent(void *renderer) { return present(RENDER_PRESENT, renderer); }
EXPORT intptr_t SDL_UpdateWindowSurface(void *window) { return present(UPDATE_SURFACE, window); }

EXPORT intptr_t SDL_UpdateWindowSurfaceRects(void *window, const void *rects, int count) {
    sdl_update_rects real = (sdl_update_rects)real_function(UPDATE_SURFACE_RECTS);
    enter_present();
    intptr_t result = real ? real(window, rects, count) : -1;
    leave_present();
    return result;
}

any_function perfhud_sdl_wrapper(const char *name, any_function real) {
    for (int i = 0; i < HOOKS; i++) {
        if (strcmp(name, hooks[i].name) != 0) continue;
        remember(i, real);
        return hooks[i].wrapper;
    }
    return NULL;
}
