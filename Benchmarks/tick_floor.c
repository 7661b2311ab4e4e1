// The floor of any tick-driven sampler on this machine: sleep on a timerfd, wake, two pread(2)s,
// sleep again. Most of a tick's CPU cost on a VM is the wake-up itself, not the reading.
//   tick_floor PID INTERVAL_NS SAMPLES
#include <sys/timerfd.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int pid = atoi(argv[1]); long ns = atol(argv[2]); long n = atol(argv[3]);
    char path[64], buf[4096];
    snprintf(path, 64, "/proc/%d/stat", pid); int a = open(path, O_RDONLY);
    snprintf(path, 64, "/proc/%d/statm", pid); int b = open(path, O_RDONLY);
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec s = {{ns / 1000000000, ns % 1000000000}, {ns / 1000000000, ns % 1000000000}};
    timerfd_settime(t, 0, &s, NULL);
    uint64_t x;
    for (long i = 0; i < n; i++) { read(t, &x, 8); pread(a, buf, 4096, 0); pread(b, buf, 4096, 0); }
    struct rusage u; getrusage(RUSAGE_SELF, &u);
    printf("%.1f us/sample\n", (u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6) / n * 1e6);
}
