/* Programs that are slow for one reason each, for the "why" figures (test_why.py). Each prints
 * "ready" once set up, then runs until killed.
 *
 *   why hot-thread NAME IDLE     one thread named NAME spinning among IDLE sleeping threads
 *   why spin N                   N spinning threads (more than the CPUs: they wait for one)
 *   why sleeps HZ                HZ short sleeps a second in the main thread (voluntary switches)
 *   why touch MIB                MIB MiB a second of fresh anonymous pages touched (minor faults)
 *   why odirect PATH MIB         MIB MiB a second written to PATH with O_DIRECT (storage writes)
 *   why open N PATH              N descriptors of PATH held open
 *   why grow MIB SECONDS         RSS grows by MIB MiB a second, for SECONDS (0: for ever), then stays
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *unused) {
    (void)unused;
    for (;;) sink++;
    return NULL;
}

static void *idle(void *unused) {
    (void)unused;
    for (;;) pause();
    return NULL;
}

static void ready(void) {
    printf("ready\n");
    fflush(stdout);
}

/* Sleeps until `next` and moves it on by `step` nanoseconds: a steady rate whatever each step costs. */
static void pace(struct timespec *next, long step) {
    next->tv_nsec += step;
    while (next->tv_nsec >= 1000000000L) { next->tv_nsec -= 1000000000L; next->tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: see why.c\n"); return 64; }
    const char *mode = argv[1];
    pthread_t thread;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    if (!strcmp(mode, "hot-thread") && argc == 4) {
        for (int i = 0; i < atoi(argv[3]); i++) pthread_create(&thread, NULL, idle, NULL);
        pthread_create(&thread, NULL, spin, NULL);
        pthread_setname_np(thread, argv[2]);   /* named before "ready": the test looks it up */
        ready();
        for (;;) pause();
    } else if (!strcmp(mode, "spin")) {
        for (int i = 0; i < atoi(argv[2]); i++) pthread_create(&thread, NULL, spin, NULL);
        ready();
        for (;;) pause();
    } else if (!strcmp(mode, "sleeps")) {
        long step = 1000000000L / atol(argv[2]);
        ready();
        for (;;) pace(&next, step);
    } else if (!strcmp(mode, "touch")) {
        /* 4 MiB chunks, mapped, touched page by page (no huge pages: one fault a page), unmapped. */
        size_t chunk = 4 << 20;
        long step = (long)(1e9 * 4 / atof(argv[2]));
        ready();
        for (;;) {
            char *memory = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            madvise(memory, chunk, MADV_NOHUGEPAGE);
            for (size_t offset = 0; offset < chunk; offset += 4096) memory[offset] = 1;
            munmap(memory, chunk);
            pace(&next, step);
        }
    } else if (!strcmp(mode, "odirect") && argc == 4) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
        if (fd < 0) { perror("open O_DIRECT"); return 1; }
        void *block;
        if (posix_memalign(&block, 4096, 1 << 20)) return 1;
        memset(block, 'x', 1 << 20);
        long step = (long)(1e9 / atof(argv[3]));
        ready();
        for (int i = 0;; i++) {
            if (pwrite(fd, block, 1 << 20, (off_t)(i % 64) << 20) != 1 << 20) { perror("pwrite"); return 1; }
            pace(&next, step);
        }
    } else if (!strcmp(mode, "open") && argc == 4) {
        for (int i = 0; i < atoi(argv[2]); i++) {
            if (open(argv[3], O_RDONLY) < 0) { perror("open"); return 1; }
        }
        ready();
        for (;;) pause();
    } else if (!strcmp(mode, "grow") && argc == 4) {
        /* 1/10 of the rate every 100 ms, touched: resident at once. */
        size_t piece = (size_t)(atof(argv[2]) * (1 << 20) / 10);
        long ticks = (long)(atof(argv[3]) * 10);
        ready();
        for (long i = 0;; i++) {
            if (ticks == 0 || i < ticks) {
                char *memory = malloc(piece);
                for (size_t offset = 0; offset < piece; offset += 4096) memory[offset] = 1;
            }
            pace(&next, 100000000L);
        }
    }
    fprintf(stderr, "usage: see why.c\n");
    return 64;
}
