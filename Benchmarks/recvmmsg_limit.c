// The limit for an event receiver: recvmmsg in batches of 64 and a trivial parse (count the
// newlines), nothing else. Runs until SIGTERM, then takes what is still queued and prints the lines it counted.
//   recvmmsg_limit PATH [passcred]        a Unix datagram socket bound at PATH
//   recvmmsg_limit udp PORT               UDP on 127.0.0.1:PORT
// MSG_WAITFORONE: like perfhud it takes what is queued and does not wait for a full batch (an
// event receiver may not hold a line back). The same 4 MiB receive buffer as perfhud's.
// `passcred` asks for the sender's credentials with every datagram (SO_PASSCRED), as perfhud does
// to filter its peers: what that costs the kernel, without any use of them.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    int fd;
    int udp = strcmp(argv[1], "udp") == 0 && argc > 2;
    if (udp) {
        struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
        fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("bind"); return 73; }
    } else {
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
        unlink(argv[1]);
        fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("bind"); return 73; }
        if (argc > 2 && strcmp(argv[2], "passcred") == 0) {
            int on = 1;
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
        }
    }
    int size = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    // A SIGTERM that comes between the check of `stop` and the call would leave the call waiting
    // for a datagram that never comes: it gives up every 100 ms to look again.
    struct timeval patience = { 0, 100 * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    struct sigaction action = { .sa_handler = on_term };
    sigaction(SIGTERM, &action, NULL);
    enum { COUNT = 64, SIZE = 65536 };
    static char buffers[COUNT][SIZE];
    static char control[COUNT][64];
    struct mmsghdr messages[COUNT];
    struct iovec vectors[COUNT];
    long lines = 0;
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        for (int i = 0; i < COUNT; i++) {
            vectors[i] = (struct iovec){ buffers[i], SIZE };
            messages[i].msg_hdr = (struct msghdr){ .msg_iov = &vectors[i], .msg_iovlen = 1,
                                                   .msg_control = control[i], .msg_controllen = sizeof control[i] };
        }
        int received = recvmmsg(fd, messages, COUNT, MSG_WAITFORONE, NULL);
        for (int i = 0; i < received; i++) {
            const char *data = buffers[i];
            for (unsigned j = 0; j < messages[i].msg_len; j++) lines += data[j] == '\n';
        }
    }
    // What is still queued when told to stop counts too (a sender may have finished just before).
    for (int received; (received = recvmmsg(fd, messages, COUNT, MSG_DONTWAIT, NULL)) > 0; ) {
        for (int i = 0; i < received; i++) {
            for (unsigned j = 0; j < messages[i].msg_len; j++) lines += buffers[i][j] == '\n';
        }
        for (int i = 0; i < COUNT; i++) messages[i].msg_hdr.msg_controllen = sizeof control[i];
    }
    printf("%ld\n", lines);
    if (!udp) unlink(argv[1]);
    return 0;
}
