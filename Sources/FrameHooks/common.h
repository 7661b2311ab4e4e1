/* perfhud frame hooks: what gl.c and vulkan.c share (common.c).
 *
 * Each hook library (libperfhud-gl.so, libperfhud-vulkan.so) compiles its own copy of common.c,
 * with PERFHUD_SOURCE naming the source ("gl", "vulkan"): the two never share state, so a process
 * that loads both reports each source on its own. Everything here is hidden (-fvisibility=hidden):
 * only the wrapped API functions are exported. */
#ifndef PERFHUD_FRAME_HOOKS_COMMON_H
#define PERFHUD_FRAME_HOOKS_COMMON_H

#include <stdint.h>

/* The time of the previous present of one thread (GL) or one swapchain (Vulkan). `generation`
 * is the fork generation it was taken in: a forked child's first present only starts its clock
 * (see perfhud_present). Zero-initialised means "not started". */
struct perfhud_clock {
    uint64_t last_ns;
    unsigned generation;
};

/* Non-zero when PERFHUD_SOCKET was set at load: the hooks report. Otherwise they only forward. */
int perfhud_active(void);

/* One present on `clock`: the time since the previous one on it is a frame, batched for the
 * socket. Never blocks, never allocates (except one thread stack, once, at the first frame). */
void perfhud_present(struct perfhud_clock *clock);

/* The same, tagged `source` (at most 8 bytes: "gl", "sdl"): libperfhud-gl.so reports both GL and
 * SDL presents, each under its own name. */
void perfhud_present_from(struct perfhud_clock *clock, const char *source);

/* Tells perfhud once per process that the program loaded a graphics API (`api`: "gl", "vulkan"):
 * a program that loads one and never presents is then said to be one ("GL loaded, no present
 * seen") rather than a program that draws nothing. One line, sent at once:
 *   perfhud.graphics:1|c|#api:<api>
 * (older perfhud versions count it among the ignored lines). */
void perfhud_announce(const char *api);

/* Sends what is batched now (before exec, at exit). */
void perfhud_flush(void);

#endif
