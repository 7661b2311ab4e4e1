// The floor of any tick-driven sampler on this machine: sleep on a timerfd, wake, two pread(2)s,
// sleep again. Most of a tick's CPU cost on a VM is the wake-up itself, not the reading.
//   tick_floor PID INTERVAL_NS SAMPLES
//
// With a fourth argument `row`: the floor of what `perfhud attach --output json` does a tick, in
// plain C — the same wake-up and reads (stat, statm, io, the target's CPU clock) and the same
// JSON row (its 62 keys, numbers formatted from integers, the time in RFC 3339) written to
// standard output. perfhud's own tick is compared with both (Benchmarks/tick_cost.py --cpu).
#define _GNU_SOURCE
#include <sys/timerfd.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

static char *put_str(char *p, const char *s) { size_t n = strlen(s); memcpy(p, s, n); return p + n; }

static char *put_u64(char *p, uint64_t v) {
    char digits[24]; int n = 0;
    do { digits[n++] = '0' + v % 10; v /= 10; } while (v);
    while (n) *p++ = digits[--n];
    return p;
}

// A number with at most `decimals` decimals, trailing zeros dropped (as perfhud writes them).
static char *put_fixed(char *p, double value, int decimals) {
    uint64_t scale = 1; for (int i = 0; i < decimals; i++) scale *= 10;
    long long scaled = llround(value * (double)scale);
    if (scaled < 0) { *p++ = '-'; scaled = -scaled; }
    p = put_u64(p, (uint64_t)scaled / scale);
    uint64_t fraction = (uint64_t)scaled % scale;
    if (fraction) {
        int digits = decimals; while (fraction % 10 == 0) { fraction /= 10; digits--; }
        *p++ = '.';
        char buf[24]; int n = 0;
        while (n < digits) { buf[n++] = '0' + fraction % 10; fraction /= 10; }
        while (n) *p++ = buf[--n];
    }
    return p;
}

static uint64_t field_after(const char *text, const char *key) {
    const char *at = strstr(text, key);
    return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

static const char *null_keys[] = {
    "fps", "frame_p50_ms", "frame_p95_ms", "frame_p99_ms", "fps_1pct_low", 0 };
static const char *zero_event_keys[] = { "janky_frames", "dropped_frames", "actions_per_second", 0 };

int main(int argc, char **argv) {
    int pid = atoi(argv[1]); long ns = atol(argv[2]); long n = atol(argv[3]);
    int row = argc > 4 && strcmp(argv[4], "row") == 0;
    char path[64], buf[4096], out[4096];
    snprintf(path, 64, "/proc/%d/stat", pid); int a = open(path, O_RDONLY);
    snprintf(path, 64, "/proc/%d/statm", pid); int b = open(path, O_RDONLY);
    snprintf(path, 64, "/proc/%d/io", pid); int io = open(path, O_RDONLY);
    clockid_t clock; clock_getcpuclockid(pid, &clock);
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec s = {{ns / 1000000000, ns % 1000000000}, {ns / 1000000000, ns % 1000000000}};
    timerfd_settime(t, 0, &s, NULL);
    uint64_t x, last_cpu = 0, last_minflt = 0, last_majflt = 0, last_read = 0, last_write = 0;
    struct timespec start; clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < n; i++) {
        read(t, &x, 8);
        ssize_t got = pread(a, buf, sizeof buf - 1, 0);
        buf[got > 0 ? got : 0] = 0;
        char statm[256]; ssize_t got_m = pread(b, statm, sizeof statm - 1, 0); statm[got_m > 0 ? got_m : 0] = 0;
        if (!row) continue;
        // stat: fields after the last ')'
        char *fields = strrchr(buf, ')'); if (!fields) continue;
        uint64_t f[24] = {0}; char *c = fields + 2; int k = 3;
        while (*c && k < 24) { if (*c == ' ') { k++; c++; continue; } if (k > 3) f[k] = strtoull(c, &c, 10); else c++; }
        uint64_t size = strtoull(statm, &c, 10), resident = strtoull(c, &c, 10), shared = strtoull(c, &c, 10);
        char iotext[512]; ssize_t got_io = pread(io, iotext, sizeof iotext - 1, 0); iotext[got_io > 0 ? got_io : 0] = 0;
        uint64_t rchar = field_after(iotext, "rchar: "), wchar = field_after(iotext, "wchar: ");
        uint64_t rbytes = field_after(iotext, "read_bytes: "), wbytes = field_after(iotext, "write_bytes: ");
        struct timespec cpu, now, wall; clock_gettime(clock, &cpu); clock_gettime(CLOCK_MONOTONIC, &now);
        clock_gettime(CLOCK_REALTIME, &wall);
        uint64_t cpu_ns = cpu.tv_sec * 1000000000ull + cpu.tv_nsec;
        double interval = ns / 1e9, elapsed = (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
        double cpu_percent = i ? (cpu_ns - last_cpu) / 1e9 / interval * 100 : 0;
        struct tm parts; time_t whole = wall.tv_sec; gmtime_r(&whole, &parts);
        char *p = out;
        p += sprintf(p, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"pid\":", parts.tm_year + 1900, parts.tm_mon + 1,
                     parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, wall.tv_nsec / 1000000);
        p = put_u64(p, pid);
        p = put_str(p, ",\"alive\":true,\"cpu_percent\":"); p = put_fixed(p, cpu_percent, 2);
        p = put_str(p, ",\"cpu_machine_percent\":"); p = put_fixed(p, cpu_percent / 2, 2);
        p = put_str(p, ",\"cpu_user_percent\":"); p = put_fixed(p, (double)f[14], 2);
        p = put_str(p, ",\"cpu_system_percent\":"); p = put_fixed(p, (double)f[15], 2);
        p = put_str(p, ",\"rss_bytes\":"); p = put_u64(p, resident * 4096);
        p = put_str(p, ",\"pss_bytes\":"); p = put_u64(p, resident * 4096 / 3);
        p = put_str(p, ",\"vsize_bytes\":"); p = put_u64(p, size * 4096);
        p = put_str(p, ",\"threads\":"); p = put_u64(p, f[20]);
        for (const char **key = null_keys; *key; key++) { p = put_str(p, ",\""); p = put_str(p, *key); p = put_str(p, "\":null"); }
        for (const char **key = zero_event_keys; *key; key++) { p = put_str(p, ",\""); p = put_str(p, *key); p = put_str(p, "\":0"); }
        p = put_str(p, ",\"high_frequency_actions\":[],\"phase\":null,\"events_received\":0,\"events_malformed\":0,"
                       "\"events_rejected\":0,\"events_rejected_by_reason\":{},\"events_ignored\":0,\"frames_total\":0,"
                       "\"actions_total\":0,\"frame_source\":null,\"input_latency_p50_ms\":null,\"input_latency_p99_ms\":null,"
                       "\"command\":\"sleep\",\"elapsed_seconds\":");
        p = put_fixed(p, elapsed, 3);
        p = put_str(p, ",\"rss_trend_bytes_per_second\":null,\"processes\":1,\"cpu_seconds_total\":"); p = put_fixed(p, cpu_ns / 1e9, 6);
        p = put_str(p, ",\"cpu_wait_percent\":null,\"context_switches_voluntary_per_second\":null,"
                       "\"context_switches_involuntary_per_second\":null,\"page_faults_minor_per_second\":");
        p = put_fixed(p, i ? (f[10] - last_minflt) / interval : 0, 2);
        p = put_str(p, ",\"page_faults_major_per_second\":"); p = put_fixed(p, i ? (f[12] - last_majflt) / interval : 0, 2);
        p = put_str(p, ",\"io_read_bytes_per_second\":"); p = put_fixed(p, i ? (rbytes - last_read) / interval : 0, 0);
        p = put_str(p, ",\"io_write_bytes_per_second\":"); p = put_fixed(p, i ? (wbytes - last_write) / interval : 0, 0);
        p = put_str(p, ",\"io_read_chars_per_second\":"); p = put_fixed(p, (double)rchar * 0, 0);
        p = put_str(p, ",\"io_write_chars_per_second\":"); p = put_fixed(p, (double)wchar * 0, 0);
        p = put_str(p, ",\"fds_open\":5,\"fds_limit\":20000,\"rss_anon_bytes\":"); p = put_u64(p, (resident - shared) * 4096);
        p = put_str(p, ",\"rss_file_bytes\":"); p = put_u64(p, shared * 4096);
        p = put_str(p, ",\"rss_shmem_bytes\":0,\"swap_bytes\":0,\"busiest_threads\":[],\"cpu_throttled_percent\":null,"
                       "\"pressure_cpu_some_percent\":null,\"pressure_cpu_full_percent\":null,\"pressure_memory_some_percent\":null,"
                       "\"pressure_memory_full_percent\":null,\"pressure_io_some_percent\":null,\"pressure_io_full_percent\":null,"
                       "\"rss_trend_bytes_per_hour\":null,\"rss_trend_r2\":null,\"leak_suspected\":false}\n");
        write(1, out, p - out);
        last_cpu = cpu_ns; last_minflt = f[10]; last_majflt = f[12]; last_read = rbytes; last_write = wbytes;
    }
    struct rusage u; getrusage(RUSAGE_SELF, &u);
    fprintf(row ? stderr : stdout, "%.1f us/sample\n",
            (u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6) / n * 1e6);
}
