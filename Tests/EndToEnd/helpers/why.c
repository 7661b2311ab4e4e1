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
 *   why sleeps-thread HZ         HZ short sleeps a second in a second thread (the main thread idle)
 *   why fsync PATH MIB           MIB MiB a second written to PATH through the page cache, fsync'd each MiB
 *   why map PATH MIB cold|warm DELAY   a file of MIB MiB mapped; after DELAY seconds every page of it read
 *                                once (cold: dropped from the page cache first and read-ahead off, so
 *                                each page is a major fault), then it says "touched" and does nothing
 *   why mix PATH N               all at once, for a report: N threads "spinner-1"… spinning, a thread
 *                                "writer" writing 8 MiB a second to PATH (fsync'd) from fresh pages, and the main thread
 *                                opening PATH once every 20 ms until it holds 200 descriptors
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

static void *sleeper(void *hz) {
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long step = 1000000000L / atol(hz);
    for (;;) pace(&next, step);
    return NULL;
}

/* Writes 8 MiB a second, fsync'd, each MiB from a buffer of fresh pages (256 minor faults). */
static void *writer(void *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    size_t size = 1 << 20;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int i = 0; fd >= 0; i++) {
        char *block = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        madvise(block, size, MADV_NOHUGEPAGE);
        memset(block, 'w', size);
        int failed = pwrite(fd, block, size, (off_t)(i % 16) << 20) != (ssize_t)size || fsync(fd);
        munmap(block, size);
        if (failed) break;
        pace(&next, 1000000000L / 8);
    }
    perror("writer");
    return NULL;
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
    } else if (!strcmp(mode, "sleeps-thread")) {
        pthread_create(&thread, NULL, sleeper, argv[2]);
        ready();
        for (;;) pause();
    } else if (!strcmp(mode, "fsync") && argc == 4) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) { perror("open"); return 1; }
        static char block[1 << 20];
        memset(block, 'x', sizeof block);
        long step = (long)(1e9 / atof(argv[3]));
        ready();
        for (int i = 0;; i++) {
            if (pwrite(fd, block, sizeof block, (off_t)(i % 64) << 20) != (ssize_t)sizeof block || fsync(fd)) { perror("pwrite"); return 1; }
            pace(&next, step);
        }
    } else if (!strcmp(mode, "map") && argc == 6) {
        size_t size = (size_t)atol(argv[3]) << 20;
        int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) { perror("open"); return 1; }
        static char block[1 << 20];
        memset(block, 'm', sizeof block);
        for (size_t done = 0; done < size; done += sizeof block) {
            if (write(fd, block, sizeof block) != (ssize_t)sizeof block) { perror("write"); return 1; }
        }
        int cold = !strcmp(argv[4], "cold");
        /* Written back, then dropped from the page cache: the first touch of each page reads it. */
        if (fsync(fd) || (cold && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))) { perror("fsync/fadvise"); return 1; }
        char *memory = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (memory == MAP_FAILED) { perror("mmap"); return 1; }
        /* No read-ahead: one page a fault, so major faults count the pages. */
        if (cold) madvise(memory, size, MADV_RANDOM);
        ready();
        struct timespec delay = { .tv_sec = atoi(argv[5]) };
        nanosleep(&delay, NULL);
        for (size_t offset = 0; offset < size; offset += 4096) sink += (unsigned char)memory[offset];
        printf("touched\n");
        fflush(stdout);
        for (;;) pause();
    } else if (!strcmp(mode, "mix") && argc == 4) {
        char name[32];
        for (int i = 1; i <= atoi(argv[3]); i++) {
            pthread_create(&thread, NULL, spin, NULL);
            snprintf(name, sizeof name, "spinner-%d", i);
            pthread_setname_np(thread, name);
        }
        pthread_create(&thread, NULL, writer, argv[2]);
        pthread_setname_np(thread, "writer");
        ready();
        for (int i = 0; i < 200; i++) {
            if (open(argv[2], O_RDONLY | O_CREAT, 0600) < 0) { perror("open"); return 1; }
            pace(&next, 20000000L);
        }
        for (;;) pause();
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
