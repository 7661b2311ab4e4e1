// Sends event lines as fast as the receiver takes them (blocking sends: nothing is lost).
//   ingest_sender unix PATH LINES_PER_DATAGRAM SECONDS
//   ingest_sender udp  PORT LINES_PER_DATAGRAM SECONDS [plain]
// UDP sends do not wait for the receiver: what it cannot take, the kernel drops.
// `plain` encodes the action label in the metric name instead of a tag (classic StatsD, for
// receivers that do not read DogStatsD tags, such as collectd). Prints the number of lines sent.
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
    // A realistic mix: actions over 8 labels, frames, now and then a phase.
    int plain = argc > 5 && strcmp(argv[5], "plain") == 0;
    static char datagram[65536];
    size_t length = 0;
    for (int i = 0; i < lines; i++) {
        if (plain) length += sprintf(datagram + length, "perfhud.action.Feature.Action.slider.changed.%d:1|c\n", i % 8);
        else if (i % 4 == 3) length += sprintf(datagram + length, "perfhud.frame:16.%d|ms\n", i % 10);
        else length += sprintf(datagram + length, "perfhud.action:1|c|#action:Feature.Action.slider(.changed(_:))%d\n", i % 8);
    }
    long sent = 0;
    double end = now() + seconds;
    while (now() < end) {
        for (int i = 0; i < 64; i++) {
            if (send(fd, datagram, length, 0) == (ssize_t)length) sent += lines;
        }
    }
    printf("%ld\n", sent);
    return 0;
}
