/* libperfhud-gl.so (LD_PRELOAD): what its parts share — gl.c (GLX/EGL swaps), sdl.c (SDL's
 * presents), lookup.c (the dlsym wrapper that hands their wrappers to programs that look the
 * functions up by name). Hidden, like everything in the hooks but the wrapped functions. */
#ifndef PERFHUD_FRAME_HOOKS_PRELOAD_H
#define PERFHUD_FRAME_HOOKS_PRELOAD_H

#define EXPORT __attribute__((visibility("default")))

typedef void (*any_function)(void);

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
