/* libperfhud-gl.so (LD_PRELOAD): what its parts share — gl.c (GLX/EGL swaps), sdl.c (SDL's
 * presents), lookup.c (the dlsym wrapper that hands their wrappers to programs that look the
 * functions up by name). Hidden, like everything in the hooks but the wrapped functions. */
#ifndef PERFHUD_FRAME_HOOKS_PRELOAD_H
#define PERFHUD_FRAME_HOOKS_PRELOAD_H

#include <stdatomic.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*any_function)(void);

/* A wrapped function: its name, our wrapper, the real one once found. gl.c and sdl.c each keep a
 * table of them; the functions below serve both. */
struct perfhud_hook {
    const char *name;
    any_function wrapper;
    _Atomic(any_function) real;
};

/* Is `f` one of the table's wrappers (never to be remembered as a real function)? */
int perfhud_hook_is_ours(const struct perfhud_hook *hooks, int count, any_function f);
/* Remembers `real` as hook `index`'s real function, unless it is one of ours or one is known. */
void perfhud_hook_remember(struct perfhud_hook *hooks, int count, int index, any_function real);
/* Hook `index`'s real function: the one remembered, else `find(index)`'s, remembered. */
any_function perfhud_hook_real(struct perfhud_hook *hooks, int count, int index, any_function (*find)(int index));
/* `name` in the loaded libraries `paths` (a library loaded privately, RTLD_LOCAL, e.g. by a plugin,
 * is not reached by RTLD_NEXT), not one of the table's wrappers; NULL where none has it. Never
 * loads a library: RTLD_NOLOAD. */
any_function perfhud_real_in_libraries(const struct perfhud_hook *hooks, int count, const char *const *paths, unsigned n,
                                       const char *name);

/* How many wrapped presents this thread is inside. Only the outermost one counts: SDL_GL_SwapWindow
 * calls glXSwapBuffers (through a pointer SDL looked up with dlsym, so our wrapper), SDL_RenderPresent
 * calls either, and each such present is one frame, of the source the program called ("sdl").
 * Initial-exec: in the static TLS block, so reading it never allocates. */
extern __thread int perfhud_present_depth __attribute__((tls_model("initial-exec")));

/* glibc's dlsym, not ours (lookup.c): the hooks look their real functions up with it. */
void *perfhud_real_dlsym(void *handle, const char *name);

/* `real` is what the program asked for by `name`: our wrapper in its place if we wrap that name
 * (the real one is remembered for the wrapper to call), else NULL. */
any_function perfhud_gl_wrapper(const char *name, any_function real);
any_function perfhud_sdl_wrapper(const char *name, any_function real);

#endif
