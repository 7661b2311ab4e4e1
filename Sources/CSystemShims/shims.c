// Wrappers for glibc calls declared only under _GNU_SOURCE; see CSystemShims.h. No logic beyond
// the calls themselves.
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <stdint.h>
#include <pthread.h>
#include <poll.h>
#include "CSystemShims.h"

int perfhud_ppoll(struct pollfd *fds, unsigned long count, const struct timespec *timeout) {
    return ppoll(fds, (nfds_t)count, timeout, NULL);
}

int perfhud_open_pseudo_terminal(char *slave_path, size_t length) {
    int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, slave_path, length) != 0) {
        close(master);
        return -1;
    }
    return master;
}

struct perfhud_datagram_batch {
    unsigned int count;
    size_t size;
    /* Bytes from one datagram's buffer to the next: a cache line more than `size`, so that the
     * starts of the 64 buffers (where small datagrams lie whole) do not all fall in the same cache
     * set, as 64 KiB apart they would: the kernel's copies of a batch then stay cached until
     * they are parsed, instead of evicting one another. */
    size_t stride;
    struct mmsghdr *messages;
    struct iovec *vectors;
    unsigned char *data;
    unsigned char *control;
    size_t control_size;
    /* Messages the last receive filled: only their headers were changed by the kernel. */
    unsigned int filled;
};

perfhud_datagram_batch *perfhud_batch_create(unsigned int count, size_t size) {
    perfhud_datagram_batch *batch = calloc(1, sizeof *batch);
    if (!batch) return NULL;
    batch->count = count;
    batch->size = size;
    batch->stride = size + 64;
    batch->control_size = CMSG_SPACE(sizeof(struct ucred));
    batch->messages = calloc(count, sizeof *batch->messages);
    batch->vectors = calloc(count, sizeof *batch->vectors);
    batch->data = malloc((size_t)count * batch->stride);
    batch->control = calloc(count, batch->control_size);
    if (!batch->messages || !batch->vectors || !batch->data || !batch->control) {
        perfhud_batch_destroy(batch);
        return NULL;
    }
    for (unsigned int i = 0; i < count; i++) {
        batch->vectors[i].iov_base = batch->data + (size_t)i * batch->stride;
        batch->vectors[i].iov_len = size;
        struct msghdr *header = &batch->messages[i].msg_hdr;
        header->msg_iov = &batch->vectors[i];
        header->msg_iovlen = 1;
        header->msg_control = batch->control + (size_t)i * batch->control_size;
        header->msg_controllen = batch->control_size;
    }
    return batch;
}

void perfhud_batch_destroy(perfhud_datagram_batch *batch) {
    if (!batch) return;
    free(batch->messages);
    free(batch->vectors);
    free(batch->data);
    free(batch->control);
    free(batch);
}

/* The headers are set up once (perfhud_batch_create); of what recvmmsg writes back, only a
 * header's msg_controllen is read by the next call, so only the headers the last call filled
 * are reset: with one datagram a wake-up, resetting all 64 cost more than the datagram's parse. */
int perfhud_batch_receive(int fd, perfhud_datagram_batch *batch) {
    for (unsigned int i = 0; i < batch->filled; i++) batch->messages[i].msg_hdr.msg_controllen = batch->control_size;
    int received = recvmmsg(fd, batch->messages, batch->count, MSG_DONTWAIT, NULL);
    batch->filled = received > 0 ? (unsigned int)received : 0;
    return received;
}

const unsigned char *perfhud_batch_data(const perfhud_datagram_batch *batch, unsigned int index, size_t *length) {
    size_t received = batch->messages[index].msg_len;
    *length = received < batch->size ? received : batch->size;
    return batch->data + (size_t)index * batch->stride;
}

int perfhud_batch_sender(const perfhud_datagram_batch *batch, unsigned int index, int *pid, unsigned int *uid) {
    const struct msghdr *header = &batch->messages[index].msg_hdr;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(header); c; c = CMSG_NXTHDR((struct msghdr *)header, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            *pid = credentials.pid;
            *uid = credentials.uid;
            return 1;
        }
    }
    return 0;
}

int perfhud_batch_truncated(const perfhud_datagram_batch *batch, unsigned int index) {
    return (batch->messages[index].msg_hdr.msg_flags & MSG_TRUNC) != 0;
}

int perfhud_enable_credentials(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

/* sched_setattr has no glibc wrapper in Debian 12's glibc; the struct is the kernel's (v1 layout). */
struct perfhud_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

int perfhud_prefer_prompt_wakeups(unsigned long long slice_nanoseconds, int nice, int realtime) {
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct perfhud_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (realtime) {
        /* SCHED_RR at the lowest real-time priority, not inherited by anything the thread starts
           (SCHED_FLAG_RESET_ON_FORK): it runs the moment a datagram wakes it, ahead of every
           ordinary thread, however busy the CPUs are. Root or CAP_SYS_NICE or RLIMIT_RTPRIO, and a
           control group with real-time time; elsewhere it fails and the rest below applies. */
        attr.sched_policy = 2; /* SCHED_RR */
        attr.sched_priority = 1;
        attr.sched_flags = 1; /* SCHED_FLAG_RESET_ON_FORK */
        if (syscall(SYS_sched_setattr, tid, &attr, 0) == 0) return 4;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
    }
    attr.sched_policy = 0; /* SCHED_OTHER */
    attr.sched_nice = getpriority(PRIO_PROCESS, (id_t)tid);
    attr.sched_runtime = slice_nanoseconds;
    int result = 0;
    if (syscall(SYS_sched_setattr, tid, &attr, 0) == 0) result = 1;
    if (setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0) result |= 2;
    return result;
}

void perfhud_name_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int perfhud_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET);
}

int perfhud_wake_descriptor(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
