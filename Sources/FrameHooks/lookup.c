/* libperfhud-gl.so: dlsym, wrapped. SDL, GLFW and most engines do not link libGL/libEGL: they
 * dlopen it and look glXSwapBuffers, glXGetProcAddressARB, eglSwapBuffers, eglGetProcAddress up
 * with dlsym on that handle, which a preloaded glXSwapBuffers never sees. Here dlsym hands out our
 * wrappers for those names (and for SDL's presents, for programs that dlopen SDL: ctypes,
 * PySDL2), remembering the real functions for the wrappers to call — as MangoHud's dlsym mode and
 * obs-vkcapture do.
 *
 * Why a dlsym wrapper rather than LD_AUDIT's la_symbind64: an audit library is loaded into a
 * namespace of its own, with its own copy of libc, so the wrappers it would hand out (and the
 * socket, the batch, the flusher thread behind them) would run on a second libc inside the
 * program — threads created there are not supported by glibc; LD_AUDIT also makes the dynamic
 * linker call the auditor at every symbol binding of every library (la_symbind64 for each PLT
 * slot, each dlsym), and it is a second variable to pass to every child where LD_PRELOAD is
 * already one. The wrapper costs one test of the name's first letters per dlsym call and nothing
 * per frame (Benchmarks/frame_hooks_cost.sh measures it).
 *
 * The real dlsym is glibc's, found with dlvsym (not wrapped). dlsym(RTLD_NEXT, …) looks after the
 * object that called it, which glibc finds from dlsym's return address: every name we do not wrap,
 * and every RTLD_NEXT lookup (another interposer, such as MangoHud, finding the function after
 * itself), is passed on with a tail call, so the return address is still the program's. The build
 * checks that the compiler made it one (`make hooks`: a jmp, not a call, to the real dlsym). */
#define _GNU_SOURCE
#include "common.h"
#include "preload.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

typedef void *(*dlsym_function)(void *handle, const char *name);

static _Atomic(dlsym_function) real_dlsym;

static dlsym_function find_real_dlsym(void) {
    dlsym_function f = atomic_load_explicit(&real_dlsym, memory_order_relaxed);
    if (f) return f;
    /* glibc ≥ 2.34 defines dlsym in libc (GLIBC_2.34), earlier in libdl (the architecture's first
     * version: 2.2.5 on x86-64, 2.17 on AArch64, 2.0 on i386). */
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
    for (unsigned i = 0; i < sizeof versions / sizeof *versions && !f; i++)
        f = (dlsym_function)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    atomic_store_explicit(&real_dlsym, f, memory_order_relaxed);
    return f;
}

void *perfhud_real_dlsym(void *handle, const char *name) {
    dlsym_function real = find_real_dlsym();
    return real ? real(handle, name) : NULL;
}

int perfhud_hook_is_ours(const struct perfhud_hook *hooks, int count, any_function f) {
    for (int i = 0; i < count; i++)
        if (hooks[i].wrapper == f) return 1;
    return 0;
}

void perfhud_hook_remember(struct perfhud_hook *hooks, int count, int index, any_function real) {
    any_function none = NULL;
    if (real && !perfhud_hook_is_ours(hooks, count, real)) atomic_compare_exchange_strong(&hooks[index].real, &none, real);
}

any_function perfhud_hook_real(struct perfhud_hook *hooks, int count, int index, any_function (*find)(int index)) {
    any_function f = atomic_load_explicit(&hooks[index].real, memory_order_acquire);
    if (f) return f;
    perfhud_hook_remember(hooks, count, index, find(index));
    return atomic_load_explicit(&hooks[index].real, memory_order_acquire);
}

any_function perfhud_real_in_libraries(const struct perfhud_hook *hooks, int count, const char *const *paths, unsigned n,
                                       const char *name) {
    for (unsigned i = 0; i < n; i++) {
        void *handle = dlopen(paths[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!handle) continue;
        any_function f = (any_function)perfhud_real_dlsym(handle, name);
        dlclose(handle); /* RTLD_NOLOAD took a reference; the library stays loaded */
        if (f && !perfhud_hook_is_ours(hooks, count, f)) return f;
    }
    return NULL;
}

/* Could `name` be one we wrap? Two or three bytes compared: the test every other dlsym call pays. */
static inline int maybe_wrapped(const char *name) {
    return (name[0] == 'g' && name[1] == 'l' && name[2] == 'X') || (name[0] == 'e' && name[1] == 'g' && name[2] == 'l') ||
           (name[0] == 'S' && name[1] == 'D' && name[2] == 'L');
}

/* Does the address lie in the system's GL libraries — glvnd's dispatchers (libGL.so.1, libGLX.so.0,
 * libEGL.so.1, libOpenGL.so.0, libGLES*, libGLdispatch) or a vendor's (libGLX_mesa, libEGL_mesa,
 * Mesa's drivers)? Those are not handed our wrappers: a dispatcher's table holding our wrapper,
 * called by our wrapper's real function (the dispatcher's own), would call it back forever. A GL
 * implementation on top of them (ANGLE's libGLESv2.so in Chromium) gets them: its swaps are real
 * presents. */
static int in_gl_implementation(const void *address) {
    Dl_info info;
    if (!dladdr(address, &info) || !info.dli_fname) return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    const char *base = slash ? slash + 1 : info.dli_fname;
    static const char *const sonames[] = {"libGL.so.1", "libGLX.so.0", "libEGL.so.1", "libOpenGL.so.0",
                                          "libGLESv2.so.2", "libGLESv1_CM.so.1"};
    for (unsigned i = 0; i < sizeof sonames / sizeof *sonames; i++)
        if (!strcmp(base, sonames[i])) return 1;
    return !strncmp(base, "libGLdispatch", 13) || !strncmp(base, "libGLX_", 7) || !strncmp(base, "libEGL_", 7) ||
           !strncmp(base, "libgallium", 10) || strstr(info.dli_fname, "/dri/") != NULL;
}

/* noinline: dlsym's own frame stays small for the lookups it only passes on. */
__attribute__((noinline)) static void *wrapped(const char *name, void *real, const void *caller) {
    if (!perfhud_active()) return real; /* no PERFHUD_SOCKET: the hooks only forward, so hand out nothing */
    if (!real || in_gl_implementation(caller)) {
        if (real && name[0] != 'S') perfhud_announce("gl");
        return real;
    }
    any_function ours = name[0] == 'S' ? perfhud_sdl_wrapper(name, (any_function)real) : perfhud_gl_wrapper(name, (any_function)real);
    if (!ours && name[0] != 'S') perfhud_announce("gl"); /* another GL function: GL is loaded */
    return ours ? (void *)ours : real;
}

EXPORT void *dlsym(void *handle, const char *name) {
    dlsym_function real = atomic_load_explicit(&real_dlsym, memory_order_relaxed);
    if (__builtin_expect(!real, 0) && !(real = find_real_dlsym())) return NULL; /* not glibc: nothing to ask */
    /* glibc declares `name` nonnull, so the compiler would drop the test: the empty asm hides that
     * from it, and a NULL name is glibc's to answer, as before. */
    const char *checked = name;
    __asm__("" : "+r"(checked));
    if (handle == RTLD_NEXT || !checked || !maybe_wrapped(checked)) return real(handle, name); /* a tail call: see above */
    return wrapped(name, real(handle, name), __builtin_return_address(0));
}
