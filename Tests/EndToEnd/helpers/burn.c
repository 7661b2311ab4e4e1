// A process with a known appetite, for the accuracy tests:
//   burn half            one thread busy 50 % of the time (50 ms on, 50 ms off)
//   burn two             two threads busy all the time
//   burn rest MIB        allocate and touch MIB mebibytes, then sleep
//   burn busy SECONDS    one thread busy until it has used SECONDS of CPU time, then exit
//   burn orphan SECONDS [AFTER]  main thread ends (pthread_exit) at once, or AFTER seconds; a worker
//                        thread burns SECONDS of CPU time, prints the process's CPU time, then
//                        the process exits
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void spin_until(double end) { while (now() < end) sink++; }

static void *spin_forever(void *unused) { (void)unused; for (;;) sink++; return NULL; }

static double process_seconds(void) {
    struct timespec used;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
    return used.tv_sec + used.tv_nsec / 1e9;
}

static void *burn_then_exit(void *budget) {
    while (process_seconds() < *(double *)budget)
        for (int i = 0; i < 100000; i++) sink++;
    printf("cpu %.6f\n", process_seconds());
    exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(argv[1], "half") == 0) {
        for (;;) { spin_until(now() + 0.05); usleep(50000); }
    } else if (strcmp(argv[1], "two") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, spin_forever, NULL);
        spin_forever(NULL);
    } else if (strcmp(argv[1], "rest") == 0) {
        size_t size = (size_t)atoi(argc > 2 ? argv[2] : "50") << 20;
        char *block = malloc(size);
        for (size_t offset = 0; offset < size; offset += 4096) block[offset] = 1;
        printf("ready\n");
        for (;;) pause();
    } else if (strcmp(argv[1], "busy") == 0) {
        // CPU time, not wall time: the same work however loaded the machine is.
        double budget = atof(argc > 2 ? argv[2] : "1");
        struct timespec used;
        do {
            for (int i = 0; i < 100000; i++) sink++;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
        } while (used.tv_sec + used.tv_nsec / 1e9 < budget);
        printf("cpu %.6f\n", process_seconds());
        return 0;
    } else if (strcmp(argv[1], "orphan") == 0) {
        static double budget;
        budget = atof(argc > 2 ? argv[2] : "1");
        pthread_t thread;
        pthread_create(&thread, NULL, burn_then_exit, &budget);
        if (argc > 3) usleep((useconds_t)(atof(argv[3]) * 1e6));
        printf("main thread ends\n");
        pthread_exit(NULL);
    }
    return 64;
}
