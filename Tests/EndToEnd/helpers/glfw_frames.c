/* A GLFW 3 program presenting a known number of frames, for test_frame_hooks_sdl.py (built against
 * Debian's libglfw3-dev; GLFW dlopens libGL/libEGL and looks their functions up with dlsym):
 *
 *   glfw_frames glx|egl N HZ    N glfwSwapBuffers at a steady HZ, with a GLX or an EGL context
 *
 * It prints "glfw_frames API: N presents in S s" to stderr. */
#define _GNU_SOURCE
#include <GLFW/glfw3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: glfw_frames glx|egl N HZ\n");
        return 64;
    }
    long count = atol(argv[2]);
    double hz = atof(argv[3]);
    period_ns = hz > 0 ? (uint64_t)(1e9 / hz) : 0;
    if (!glfwInit()) return 2;
    glfwWindowHint(GLFW_CONTEXT_CREATION_API, !strcmp(argv[1], "egl") ? GLFW_EGL_CONTEXT_API : GLFW_NATIVE_CONTEXT_API);
    GLFWwindow *window = glfwCreateWindow(320, 240, "glfw_frames", NULL, NULL);
    if (!window) {
        const char *error = NULL;
        glfwGetError(&error);
        fprintf(stderr, "glfw_frames: no window: %s\n", error ? error : "?");
        return 2;
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(0);
    void (*clear)(unsigned) = (void (*)(unsigned))glfwGetProcAddress("glClear");
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long presents = 0;
    for (long i = 0; i < count; i++) {
        glfwPollEvents();
        clear(GL_COLOR_BUFFER_BIT);
        glfwSwapBuffers(window);
        presents++;
        wait_for_next_frame();
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    fprintf(stderr, "glfw_frames %s: %ld presents in %.3f s\n", argv[1], presents,
            (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
    glfwTerminate();
    return 0;
}
