// Sends event lines as fast as the receiver takes them, 64 datagrams a sendmmsg(2) so that the
// sender outruns every receiver measured (it must: a receiver that waits for its sender is
// measured with its wake-ups, not with what a line costs it).
//   ingest_sender unix PATH LINES_PER_DATAGRAM SECONDS [plain] [count:N] [rate:R] [burst:B]
//   ingest_sender udp  PORT LINES_PER_DATAGRAM SECONDS [plain] [count:N] [rate:R] [burst:B]
// Unix sends block while the receiver's queue is full: nothing is lost. UDP sends do not wait for
// the receiver: what it cannot take, the kernel drops (the sender's CPU pays for the drops).
// `plain` encodes the action label in the metric name instead of a tag (classic StatsD, for
// receivers that do not read DogStatsD tags, such as collectd). `count:N` stops after N
// datagrams (SECONDS is then a limit); `rate:R` sends at most R datagrams a second, in bursts of
// 16 (for a UDP receiver slowed down by valgrind, which must lose nothing). `burst:B` queues B
// datagrams without waiting (what does not fit is not sent), then sleeps 10 ms, and again: run at
// a real-time priority on the receiver's CPU, it fills the receiver's queue while the receiver
// cannot run, and the receiver then drains it whole. Prints the number of lines sent.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) return 64;
    int lines = atoi(argv[3]);
    double seconds = atof(argv[4]);
    int plain = 0;
    long limit = -1;
    double rate = 0;
    int fill = 0;
    for (int i = 5; i < argc; i++) {
        if (strcmp(argv[i], "plain") == 0) plain = 1;
        else if (strncmp(argv[i], "count:", 6) == 0) limit = atol(argv[i] + 6);
        else if (strncmp(argv[i], "rate:", 5) == 0) rate = atof(argv[i] + 5);
        else if (strncmp(argv[i], "burst:", 6) == 0) fill = atoi(argv[i] + 6);
        else return 64;
    }
    int fd;
    if (strcmp(argv[1], "unix") == 0) {
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        strncpy(address.sun_path, argv[2], sizeof address.sun_path - 1);
        fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 69; }
    } else {
        struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
        fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("connect"); return 69; }
    }
    // A Unix datagram waits in the receiver's queue charged to the sender's buffer: room for a
    // full queue of small datagrams.
    int size = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    // A realistic mix: actions over 8 labels, frames, now and then a phase.
    static char datagram[65536];
    size_t length = 0;
    for (int i = 0; i < lines; i++) {
        if (plain) length += sprintf(datagram + length, "perfhud.action.Feature.Action.slider.changed.%d:1|c\n", i % 8);
        else if (i % 4 == 3) length += sprintf(datagram + length, "perfhud.frame:16.%d|ms\n", i % 10);
        else length += sprintf(datagram + length, "perfhud.action:1|c|#action:Feature.Action.slider(.changed(_:))%d\n", i % 8);
    }
    enum { BATCH = 64 };
    struct iovec vector = { datagram, length };
    struct mmsghdr messages[BATCH];
    memset(messages, 0, sizeof messages);
    for (int i = 0; i < BATCH; i++) messages[i].msg_hdr = (struct msghdr){ .msg_iov = &vector, .msg_iovlen = 1 };
    long datagrams = 0, sent = 0;
    double start = now(), end = start + seconds;
    while (fill > 0 && now() < end && (limit < 0 || datagrams < limit)) {
        for (int queued = 0; queued < fill; queued++) {
            if (send(fd, datagram, length, MSG_DONTWAIT) == (ssize_t)length) sent++;
        }
        datagrams += fill;
        struct timespec pause = { 0, 10 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    while (fill == 0 && now() < end && (limit < 0 || datagrams < limit)) {
        unsigned int burst = rate > 0 ? 16 : BATCH;
        if (limit >= 0 && limit - datagrams < burst) burst = (unsigned int)(limit - datagrams);
        if (rate > 0) {
            double due = start + datagrams / rate;
            double wait = due - now();
            if (wait > 0) {
                struct timespec pause = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
                nanosleep(&pause, NULL);
            }
        }
        int count = sendmmsg(fd, messages, burst, 0);
        if (count > 0) { datagrams += count; sent += count; }
    }
    printf("%ld\n", sent * lines);
    return 0;
}
