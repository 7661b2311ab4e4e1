/* An OpenGL (EGL) program drawing a known number of frames, for test_frame_hooks.py:
 *
 *   gl_frames draw N             N frames (N eglSwapBuffers), then exit
 *   gl_frames fork N M           N frames, fork; the child draws M frames; the parent waits for it
 *   gl_frames exec N M           N frames, then exec `gl_frames draw M`
 *   gl_frames paced N HZ         N frames at a steady HZ: each swap waits for an absolute deadline
 *                                (clock_nanosleep, TIMER_ABSTIME), so lateness never accumulates
 *
 * EGL pbuffers on Mesa's surfaceless platform (EGL_PLATFORM=surfaceless, set by the test) with the
 * software renderer: no window, no X server, and a forked child can start its own EGL display
 * (a child sharing its parent's X connection could not). libEGL is dlopened (no libegl-dev to
 * build against); eglSwapBuffers is looked up globally (the parent) and through eglGetProcAddress
 * (the child, after exec), so both routes into libperfhud-gl.so are exercised. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void *EGLDisplay, *EGLConfig, *EGLSurface, *EGLContext;
typedef int32_t EGLint;
typedef unsigned int EGLBoolean;
#define EGL_NONE 0x3038
#define EGL_SURFACE_TYPE 0x3033
#define EGL_PBUFFER_BIT 0x0001
#define EGL_RENDERABLE_TYPE 0x3040
#define EGL_OPENGL_ES2_BIT 0x0004
#define EGL_WIDTH 0x3057
#define EGL_HEIGHT 0x3056
#define EGL_OPENGL_ES_API 0x30A0
#define EGL_CONTEXT_CLIENT_VERSION 0x3098
#define GL_COLOR_BUFFER_BIT 0x00004000

static void *egl;
static unsigned pause_us = 2000;
static uint64_t period_ns; /* paced: the frame period; 0: pause_us after each swap */
static struct timespec deadline;

/* Sleeps until the next period_ns deadline counted from the first call (paced), or pause_us. */
static void wait_for_next_frame(void) {
    if (!period_ns) {
        usleep(pause_us); /* 2 ms frames by default (GL_FRAMES_PAUSE_US): short runs stay in one batch */
        return;
    }
    if (deadline.tv_sec == 0 && deadline.tv_nsec == 0) clock_gettime(CLOCK_MONOTONIC, &deadline);
    uint64_t next = (uint64_t)deadline.tv_nsec + period_ns;
    deadline.tv_sec += (time_t)(next / 1000000000u);
    deadline.tv_nsec = (long)(next % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) != 0) {}
}
static void *must(const char *name) {
    void *f = dlsym(egl, name);
    if (!f) { fprintf(stderr, "gl_frames: no %s\n", name); exit(2); }
    return f;
}

/* Draws `frames` frames on a new display and context, then tears them down. */
static void draw(int frames, int by_get_proc_address) {
    EGLDisplay (*GetDisplay)(void *) = must("eglGetDisplay");
    EGLBoolean (*Initialize)(EGLDisplay, EGLint *, EGLint *) = must("eglInitialize");
    EGLBoolean (*ChooseConfig)(EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *) = must("eglChooseConfig");
    EGLSurface (*CreatePbufferSurface)(EGLDisplay, EGLConfig, const EGLint *) = must("eglCreatePbufferSurface");
    EGLBoolean (*BindAPI)(unsigned) = must("eglBindAPI");
    EGLContext (*CreateContext)(EGLDisplay, EGLConfig, EGLContext, const EGLint *) = must("eglCreateContext");
    EGLBoolean (*MakeCurrent)(EGLDisplay, EGLSurface, EGLSurface, EGLContext) = must("eglMakeCurrent");
    EGLBoolean (*Terminate)(EGLDisplay) = must("eglTerminate");
    void *(*GetProcAddress)(const char *) = dlsym(RTLD_DEFAULT, "eglGetProcAddress");
    EGLBoolean (*SwapBuffers)(EGLDisplay, EGLSurface) =
        by_get_proc_address ? GetProcAddress("eglSwapBuffers") : dlsym(RTLD_DEFAULT, "eglSwapBuffers");
    void (*ClearColor)(float, float, float, float) = GetProcAddress("glClearColor");
    void (*Clear)(unsigned) = GetProcAddress("glClear");
    void (*Finish)(void) = GetProcAddress("glFinish");

    EGLDisplay display = GetDisplay(NULL);
    EGLint major, minor, count;
    if (!display || !Initialize(display, &major, &minor)) { fprintf(stderr, "gl_frames: eglInitialize failed\n"); exit(3); }
    const EGLint config_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT, EGL_NONE};
    EGLConfig config;
    if (!ChooseConfig(display, config_attributes, &config, 1, &count) || count < 1) { fprintf(stderr, "gl_frames: no config\n"); exit(3); }
    const EGLint surface_attributes[] = {EGL_WIDTH, 64, EGL_HEIGHT, 64, EGL_NONE};
    EGLSurface surface = CreatePbufferSurface(display, config, surface_attributes);
    BindAPI(EGL_OPENGL_ES_API);
    const EGLint context_attributes[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
    EGLContext context = CreateContext(display, config, NULL, context_attributes);
    if (!surface || !context || !MakeCurrent(display, surface, surface, context)) { fprintf(stderr, "gl_frames: no context\n"); exit(3); }
    for (int i = 0; i < frames; i++) {
        ClearColor((float)(i % 2), 0.5f, 0.25f, 1.0f);
        Clear(GL_COLOR_BUFFER_BIT);
        Finish();
        SwapBuffers(display, surface);
        wait_for_next_frame();
    }
    MakeCurrent(display, NULL, NULL, NULL);
    Terminate(display);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: gl_frames draw N | fork N M | exec N M | paced N HZ\n"); return 2; }
    egl = dlopen("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!egl) { fprintf(stderr, "gl_frames: %s\n", dlerror()); return 2; }
    int n = atoi(argv[2]);
    if (getenv("GL_FRAMES_PAUSE_US")) pause_us = (unsigned)atoi(getenv("GL_FRAMES_PAUSE_US"));
    if (!strcmp(argv[1], "draw")) {
        draw(n, 1);
    } else if (!strcmp(argv[1], "paced") && argc > 3 && atof(argv[3]) > 0) {
        period_ns = (uint64_t)(1e9 / atof(argv[3]) + 0.5);
        draw(n, 1);
    } else if (!strcmp(argv[1], "fork") && argc > 3) {
        draw(n, 0);
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            draw(atoi(argv[3]), 1);
            exit(0);
        }
        int status;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status)) return 1;
    } else if (!strcmp(argv[1], "exec") && argc > 3) {
        draw(n, 0);
        execl("/proc/self/exe", argv[0], "draw", argv[3], (char *)NULL);
        perror("gl_frames: exec");
        return 1;
    } else {
        return 2;
    }
    printf("gl_frames %s: done\n", argv[1]);
    return 0;
}
