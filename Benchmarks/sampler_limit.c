// The yardsticks for perfhud's sampler, same fields, same process:
//   sampler_limit pread PID N     two pread(2)s on kept-open /proc/PID/{stat,statm}: the limit
//   sampler_limit libproc2 PID N  procps_pids_select for utime, stime, rss, vsize, threads
// Prints nanoseconds per sample.
#include <fcntl.h>
#include <libproc2/pids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s pread|libproc2 PID N\n", argv[0]); return 64; }
    int pid = atoi(argv[2]);
    long n = atol(argv[3]);
    volatile unsigned long sink = 0;
    double start, elapsed;
    if (strcmp(argv[1], "pread") == 0) {
        char path[64], buffer[4096];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        int stat = open(path, O_RDONLY);
        snprintf(path, sizeof path, "/proc/%d/statm", pid);
        int statm = open(path, O_RDONLY);
        if (stat < 0 || statm < 0) { perror("open"); return 66; }
        start = now();
        for (long i = 0; i < n; i++) {
            sink += pread(stat, buffer, sizeof buffer, 0);
            sink += pread(statm, buffer, sizeof buffer, 0);
        }
        elapsed = now() - start;
    } else {
        enum pids_item items[] = { PIDS_TICS_USER, PIDS_TICS_SYSTEM, PIDS_MEM_RES_PGS, PIDS_VSIZE_BYTES, PIDS_NLWP };
        struct pids_info *info = NULL;
        if (procps_pids_new(&info, items, 5) < 0) return 70;
        unsigned wanted = (unsigned)pid;
        start = now();
        for (long i = 0; i < n; i++) {
            struct pids_fetch *fetch = procps_pids_select(info, &wanted, 1, PIDS_SELECT_PID);
            if (fetch && fetch->counts->total > 0) sink += PIDS_VAL(2, ul_int, fetch->stacks[0], info);
        }
        elapsed = now() - start;
        procps_pids_unref(&info);
    }
    printf("%.1f\n", elapsed / n);
    return sink == 42;
}
