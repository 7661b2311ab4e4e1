// The limit for an event receiver: recvmmsg in batches of 64 and a trivial parse (count the
// newlines), nothing else. Runs until SIGTERM, then prints the lines it counted.
//   recvmmsg_limit PATH
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
    if (argc < 2) return 64;
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror("bind"); return 73; }
    struct sigaction action = { .sa_handler = on_term };
    sigaction(SIGTERM, &action, NULL);
    enum { COUNT = 64, SIZE = 65536 };
    static char buffers[COUNT][SIZE];
    struct mmsghdr messages[COUNT];
    struct iovec vectors[COUNT];
    long lines = 0;
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        for (int i = 0; i < COUNT; i++) {
            vectors[i] = (struct iovec){ buffers[i], SIZE };
            messages[i].msg_hdr = (struct msghdr){ .msg_iov = &vectors[i], .msg_iovlen = 1 };
        }
        int received = recvmmsg(fd, messages, COUNT, 0, NULL);
        for (int i = 0; i < received; i++) {
            const char *data = buffers[i];
            for (unsigned j = 0; j < messages[i].msg_len; j++) lines += data[j] == '\n';
        }
    }
    printf("%ld\n", lines);
    unlink(argv[1]);
    return 0;
}
