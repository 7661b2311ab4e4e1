/* libperfhud-gl.so: frame timing for unmodified OpenGL programs, loaded with LD_PRELOAD.
 *
 * A frame is the time between two consecutive buffer swaps on the same thread (a GL context is
 * current on one thread, and a program's render loop swaps on it). Wrapped: glXSwapBuffers,
 * eglSwapBuffers, eglSwapBuffersWithDamageEXT/KHR (what GTK, Qt, SDL on Wayland use), and the
 * GetProcAddress functions (glXGetProcAddress, glXGetProcAddressARB, eglGetProcAddress) so that a
 * program fetching the swap functions by name gets these wrappers too.
 *
 * The prototypes are declared here instead of including <GL/glx.h>/<EGL/egl.h>: the wrappers only
 * pass the arguments through, so opaque pointers and the integer types of the ABI are enough, and
 * building needs no libgl-dev/libegl-dev/libx11-dev (only libc and libdl). The real functions are
 * looked up at the first call (the program may load libGL/libEGL after us, or through a library
 * that dlopens them), with dlsym(RTLD_NEXT), then the real GetProcAddress, then the loaded
 * libraries by name (RTLD_NOLOAD: we never load a GL library ourselves). Programs that dlopen libGL
 * and dlsym the swap function (SDL, GLFW, most engines) get these wrappers from lookup.c's dlsym.
 *
 * A swap made inside an SDL present (SDL_GL_SwapWindow) is not counted here: sdl.c counts it once,
 * as an "sdl" frame (perfhud_present_depth).
 *
 * exec: the batch lives in memory and would vanish with the old image, so exec* send it first; the
 * new image loads this library again (LD_PRELOAD stays in the environment) and reports on its own. */
#define _GNU_SOURCE
#include "common.h"
#include "preload.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

typedef unsigned int egl_boolean; /* EGLBoolean */
typedef int32_t egl_int;          /* EGLint (khrplatform: 32 bits) */
typedef unsigned long glx_drawable; /* GLXDrawable = XID */

typedef void (*glx_swap_buffers)(void *display, glx_drawable drawable);
typedef egl_boolean (*egl_swap_buffers)(void *display, void *surface);
typedef egl_boolean (*egl_swap_buffers_with_damage)(void *display, void *surface, const egl_int *rects, egl_int count);
typedef any_function (*get_proc_address)(const char *name);

/* Initial-exec: the slot is in the static TLS block, so reading it never allocates (the
 * general-dynamic model may malloc the first time a thread touches a library's TLS). */
static __thread struct perfhud_clock thread_clock __attribute__((tls_model("initial-exec")));
__thread int perfhud_present_depth __attribute__((tls_model("initial-exec")));

EXPORT void glXSwapBuffers(void *display, glx_drawable drawable);
EXPORT egl_boolean eglSwapBuffers(void *display, void *surface);
EXPORT egl_boolean eglSwapBuffersWithDamageEXT(void *display, void *surface, const egl_int *rects, egl_int count);
EXPORT egl_boolean eglSwapBuffersWithDamageKHR(void *display, void *surface, const egl_int *rects, egl_int count);
EXPORT any_function glXGetProcAddress(const unsigned char *name);
EXPORT any_function glXGetProcAddressARB(const unsigned char *name);
EXPORT any_function eglGetProcAddress(const char *name);

enum { GLX_SWAP, EGL_SWAP, EGL_DAMAGE_EXT, EGL_DAMAGE_KHR, GLX_GPA, GLX_GPA_ARB, EGL_GPA, HOOKS };
static struct perfhud_hook hooks[HOOKS] = {
    [GLX_SWAP] = {"glXSwapBuffers", (any_function)glXSwapBuffers},
    [EGL_SWAP] = {"eglSwapBuffers", (any_function)eglSwapBuffers},
    [EGL_DAMAGE_EXT] = {"eglSwapBuffersWithDamageEXT", (any_function)eglSwapBuffersWithDamageEXT},
    [EGL_DAMAGE_KHR] = {"eglSwapBuffersWithDamageKHR", (any_function)eglSwapBuffersWithDamageKHR},
    [GLX_GPA] = {"glXGetProcAddress", (any_function)glXGetProcAddress},
    [GLX_GPA_ARB] = {"glXGetProcAddressARB", (any_function)glXGetProcAddressARB},
    [EGL_GPA] = {"eglGetProcAddress", (any_function)eglGetProcAddress},
};

static int is_ours(any_function f) { return perfhud_hook_is_ours(hooks, HOOKS, f); }

static void remember(int index, any_function real) { perfhud_hook_remember(hooks, HOOKS, index, real); }

static any_function real_function(int index);

static any_function find_real(int index) {
    const char *name = hooks[index].name;
    any_function f = (any_function)perfhud_real_dlsym(RTLD_NEXT, name);
    if (f && !is_ours(f)) return f;
    if (index < GLX_GPA) { /* a swap function: ask the real GetProcAddress of its API */
        get_proc_address gpa = (get_proc_address)real_function(name[0] == 'e' ? EGL_GPA : GLX_GPA_ARB);
        f = gpa ? gpa(name) : NULL;
        if (f && !is_ours(f)) return f;
    }
    /* Loaded privately (RTLD_LOCAL, e.g. by a plugin): look in the libraries by name. */
    static const char *const libraries[] = {"libEGL.so.1", "libGLX.so.0", "libGL.so.1"};
    return perfhud_real_in_libraries(hooks, HOOKS, libraries, sizeof libraries / sizeof *libraries, name);
}

static any_function real_function(int index) { return perfhud_hook_real(hooks, HOOKS, index, find_real); }

/* The outermost present of this thread is a frame; one inside another wrapped present (an SDL
 * present's swap) is part of that one. */
static inline void enter_present(void) {
    if (perfhud_present_depth++ == 0) perfhud_present(&thread_clock);
}
static inline void leave_present(void) { perfhud_present_depth--; }

EXPORT void glXSwapBuffers(void *display, glx_drawable drawable) {
    glx_swap_buffers real = (glx_swap_buffers)real_function(GLX_SWAP);
    enter_present();
    if (real) real(display, drawable);
    leave_present();
}

EXPORT egl_boolean eglSwapBuffers(void *display, void *surface) {
    egl_swap_buffers real = (egl_swap_buffers)real_function(EGL_SWAP);
    enter_present();
    egl_boolean result = real ? real(display, surface) : 0;
    leave_present();
    return result;
}

EXPORT egl_boolean eglSwapBuffersWithDamageEXT(void *display, void *surface, const egl_int *rects, egl_int count) {
    egl_swap_buffers_with_damage real = (egl_swap_buffers_with_damage)real_function(EGL_DAMAGE_EXT);
    enter_present();
    egl_boolean result = real ? real(display, surface, rects, count) : 0;
    leave_present();
    return result;
}

EXPORT egl_boolean eglSwapBuffersWithDamageKHR(void *display, void *surface, const egl_int *rects, egl_int count) {
    egl_swap_buffers_with_damage real = (egl_swap_buffers_with_damage)real_function(EGL_DAMAGE_KHR);
    enter_present();
    egl_boolean result = real ? real(display, surface, rects, count) : 0;
    leave_present();
    return result;
}

/* The real GetProcAddress, then ours in place of a swap function. The real one may hand back our
 * own exported symbol (glvnd looks names up globally, where the preload comes first): remember()
 * ignores it, so the real swap function is never taken to be ours. */
static any_function wrap_lookup(int gpa_index, const char *name) {
    get_proc_address real = (get_proc_address)real_function(gpa_index);
    any_function f = real ? real(name) : NULL;
    if (real) perfhud_announce("gl");
    if (!f || !name) return f;
    for (int i = 0; i < HOOKS; i++) {
        if (strcmp(name, hooks[i].name) != 0) continue;
        remember(i, f);
        return hooks[i].wrapper;
    }
    return f;
}

EXPORT any_function glXGetProcAddress(const unsigned char *name) { return wrap_lookup(GLX_GPA, (const char *)name); }
EXPORT any_function glXGetProcAddressARB(const unsigned char *name) { return wrap_lookup(GLX_GPA_ARB, (const char *)name); }
EXPORT any_function eglGetProcAddress(const char *name) { return wrap_lookup(EGL_GPA, name); }

any_function perfhud_gl_wrapper(const char *name, any_function real) {
    for (int i = 0; i < HOOKS; i++) {
        if (strcmp(name, hooks[i].name) != 0) continue;
        perfhud_announce("gl");
        remember(i, real);
        return hooks[i].wrapper;
    }
    return NULL;
}

/* A program linked with libGL or libEGL (glxgears) has loaded GL before it makes a context: said
 * at once, so that one that never presents is known for one. (Programs that dlopen GL say so at
 * their first lookup: perfhud_gl_wrapper, wrap_lookup.) After common.c's constructor (101). */
__attribute__((constructor(102))) static void announce_linked_gl(void) {
    if (!perfhud_active()) return;
    static const char *const libraries[] = {"libGL.so.1", "libGLX.so.0", "libEGL.so.1", "libOpenGL.so.0", "libGLESv2.so.2"};
    for (unsigned i = 0; i < sizeof libraries / sizeof *libraries; i++) {
        void *handle = dlopen(libraries[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle) continue;
        dlclose(handle);
        perfhud_announce("gl");
        return;
    }
}

/* exec: send the batch first. Only execve/execv/execvp/execvpe/execl/execlp/execle (glibc's execl
 * family calls its internal execve directly, so each is wrapped); posix_spawn and fexecve are not
 * (their children are new images and report anyway; only the caller's last ≤250 ms of frames,
 * still batched, would be lost, and those reach perfhud if the caller goes on). */
typedef int (*execve_function)(const char *, char *const[], char *const[]);
typedef int (*execvpe_function)(const char *, char *const[], char *const[]);
extern char **environ;

/* Looked up at load, not at exec: a vfork child must not call into the dynamic linker. */
static execve_function real_execve;
static execvpe_function real_execvpe;
__attribute__((constructor)) static void find_exec(void) {
    real_execve = (execve_function)perfhud_real_dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_function)perfhud_real_dlsym(RTLD_NEXT, "execvpe");
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
    perfhud_flush();
    return real_execve(path, argv, envp);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    perfhud_flush();
    return real_execvpe(file, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }
EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* The execl family: the arguments onto the stack (as glibc does), then the v form. */
#define COLLECT_ARGUMENTS(first, last_named, extra)                                                  \
    va_list list;                                                                                \
    va_start(list, last_named);                                                                  \
    size_t count = 1;                                                                            \
    while (va_arg(list, char *)) count++;                                                        \
    va_end(list);                                                                                \
    char *argv[count + 1];                                                                       \
    argv[0] = (char *)(first);                                                                   \
    va_start(list, last_named);                                                                  \
    for (size_t i = 1; i <= count; i++) argv[i] = va_arg(list, char *);                          \
    extra;                                                                                       \
    va_end(list)

EXPORT int execl(const char *path, const char *arg, ...) {
    COLLECT_ARGUMENTS(arg, arg, (void)0);
    return execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...) {
    COLLECT_ARGUMENTS(arg, arg, (void)0);
    return execvpe(file, argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...) {
    char *const *envp;
    COLLECT_ARGUMENTS(arg, arg, envp = va_arg(list, char *const *));
    return execve(path, argv, envp);
}
