/* perfhud frame hooks: the batch of `perfhud.frame` lines and the event socket, shared by the
 * OpenGL/EGL preload library (gl.c) and the Vulkan layer (vulkan.c).
 *
 * The hooks run on the program's render thread, inside its present call, so they must cost
 * next to nothing and never stall it:
 *  - one static batch (no malloc; the only allocation is the flusher thread's stack, once);
 *  - a spin lock taken with a bounded number of tries: if another thread holds it for longer
 *    (it never holds it for more than a ~1 KB memcpy), the frame is dropped and counted rather
 *    than waited for;
 *  - datagrams are sent outside the lock with MSG_DONTWAIT on a non-blocking socket: a full
 *    socket queue drops the datagram (its lines are counted as dropped), never blocks;
 *  - a batch leaves when it holds BATCH_LINES lines, when its oldest line is BATCH_AGE_NS old
 *    (checked at each present and by a small flusher thread, so an idle program's last frames
 *    still arrive), before exec (gl.c) and at exit.
 * Line format (perfhud's DogStatsD subset):
 *   perfhud.frame:<ms>|ms|#source:<gl, sdl or vulkan>|end_ns:<CLOCK_MONOTONIC ns of the present>
 * several lines per datagram separated by '\n'. The end time lets perfhud count a frame in the
 * second it ended in, although its line arrives up to a batch (~250 ms) later. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef PERFHUD_SOURCE
#error "compile with -DPERFHUD_SOURCE='\"gl\"' or '\"vulkan\"'"
#endif

#define BATCH_LINES 16
#define BATCH_AGE_NS 250000000ull
#define SOURCE_MAX_BYTES 8
#define LINE_MAX_BYTES 96 /* "perfhud.frame:" + up to 20 digits + ".nnn|ms|#source:" + 8 + "|end_ns:" + 20 digits < 96 */
#define BATCH_BYTES (BATCH_LINES * LINE_MAX_BYTES)
#define LOCK_TRIES 4096 /* a few microseconds of spinning at most */
#define FLUSHER_PERIOD_NS 100000000l

static const char line_prefix[] = "perfhud.frame:";
static const char source_prefix[] = "|ms|#source:";
static const char end_prefix[] = "|end_ns:";

static struct {
    atomic_int lock;
    unsigned lines;
    size_t length;
    uint64_t first_ns; /* when the oldest line of the batch was added */
    char bytes[BATCH_BYTES];
} batch;

static int active;
static int sock = -1;
static struct sockaddr_un address;
static socklen_t address_length;
static atomic_uint generation = 1;      /* bumped in a forked child: its clocks restart */
static atomic_int flusher_started;
static atomic_ulong frames_sent, frames_dropped;
static uint64_t last_connect_ns;
static int debug;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: no system call */
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int lock_try(int tries) {
    for (int i = 0; i < tries; i++) {
        int expected = 0;
        if (atomic_load_explicit(&batch.lock, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&batch.lock, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    return 0;
}

static void unlock(void) { atomic_store_explicit(&batch.lock, 0, memory_order_release); }

/* Connects the socket to PERFHUD_SOCKET; retried at most once a second from send_lines if perfhud
 * was not listening yet. A connected datagram socket: send() needs no address, and a vanished
 * receiver shows as ECONNREFUSED. */
static void connect_socket(void) {
    last_connect_ns = now_ns();
    if (sock < 0) sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (sock < 0) return;
    if (connect(sock, (struct sockaddr *)&address, address_length) != 0) {
        close(sock);
        sock = -1;
    }
}

/* Sends `lines` lines held in `bytes` (outside the lock). */
static void send_lines(const char *bytes, size_t length, unsigned lines) {
    if (lines == 0) return;
    if (sock < 0 && now_ns() - last_connect_ns >= 1000000000ull) connect_socket();
    if (sock >= 0 && send(sock, bytes, length, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)length) {
        atomic_fetch_add_explicit(&frames_sent, lines, memory_order_relaxed);
        return;
    }
    /* EAGAIN (queue full), ECONNREFUSED (perfhud gone), no socket: the lines are lost, counted. */
    atomic_fetch_add_explicit(&frames_dropped, lines, memory_order_relaxed);
}

/* Takes the batch out under the lock (already held) into `out`; releases the lock. */
static unsigned take_and_unlock(char *out, size_t *length) {
    unsigned lines = batch.lines;
    *length = batch.length;
    memcpy(out, batch.bytes, batch.length);
    batch.lines = 0;
    batch.length = 0;
    unlock();
    return lines;
}

void perfhud_flush(void) {
    if (!active) return;
    char out[BATCH_BYTES];
    size_t length;
    if (!lock_try(LOCK_TRIES * 16)) return;
    unsigned lines = take_and_unlock(out, &length);
    send_lines(out, length, lines);
}

/* Wakes every 100 ms and sends a batch whose oldest line is 250 ms old: without it, the last
 * frames of a program that stops presenting would wait for its next present. Started at the first
 * frame (not at load: LD_PRELOAD reaches every process the program starts, shells included, and
 * those must not get a thread). It blocks every signal, so the program's signals go to its own
 * threads as before. */
static void *flusher(void *unused) {
    (void)unused;
    for (;;) {
        struct timespec period = {0, FLUSHER_PERIOD_NS};
        nanosleep(&period, NULL);
        if (!lock_try(LOCK_TRIES)) continue;
        if (batch.lines == 0 || now_ns() - batch.first_ns < BATCH_AGE_NS) {
            unlock();
            continue;
        }
        char out[BATCH_BYTES];
        size_t length;
        unsigned lines = take_and_unlock(out, &length);
        send_lines(out, length, lines);
    }
    return NULL;
}

static void start_flusher(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&flusher_started, &expected, 1)) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, flusher, NULL) == 0)
        pthread_setname_np(thread, "perfhud-flush");
    pthread_attr_destroy(&attributes);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Writes the decimal digits of `value` at `out`; returns how many. */
static size_t format_digits(char *out, uint64_t value) {
    char digits[24];
    size_t d = 0, n = 0;
    do {
        digits[d++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    while (d) out[n++] = digits[--d];
    return n;
}

/* Writes "perfhud.frame:<ms with 3 decimals>|ms|#source:<source>|end_ns:<end_ns>" at `out`; returns
 * its length. By hand rather than snprintf: no locale, no chance of an allocation for a double. */
static size_t format_line(char *out, uint64_t duration_ns, uint64_t end_ns, const char *source) {
    size_t n = 0;
    memcpy(out, line_prefix, sizeof line_prefix - 1);
    n += sizeof line_prefix - 1;
    uint64_t micros = (duration_ns + 500) / 1000;
    unsigned fraction = (unsigned)(micros % 1000);
    n += format_digits(out + n, micros / 1000);
    out[n++] = '.';
    out[n++] = (char)('0' + fraction / 100);
    out[n++] = (char)('0' + fraction / 10 % 10);
    out[n++] = (char)('0' + fraction % 10);
    memcpy(out + n, source_prefix, sizeof source_prefix - 1);
    n += sizeof source_prefix - 1;
    size_t source_length = strnlen(source, SOURCE_MAX_BYTES);
    memcpy(out + n, source, source_length);
    n += source_length;
    memcpy(out + n, end_prefix, sizeof end_prefix - 1);
    n += sizeof end_prefix - 1;
    return n + format_digits(out + n, end_ns);
}

int perfhud_active(void) { return active; }

void perfhud_present(struct perfhud_clock *clock) { perfhud_present_from(clock, PERFHUD_SOURCE); }

void perfhud_present_from(struct perfhud_clock *clock, const char *source) {
    if (!active) return;
    uint64_t now = now_ns();
    unsigned current = atomic_load_explicit(&generation, memory_order_relaxed);
    uint64_t previous = clock->last_ns;
    int started = previous != 0 && clock->generation == current;
    clock->last_ns = now;
    clock->generation = current;
    if (!started) return; /* the first present (of this thread/swapchain, in this process) */

    char line[LINE_MAX_BYTES];
    size_t length = format_line(line, now - previous, now, source);
    if (!lock_try(LOCK_TRIES)) {
        atomic_fetch_add_explicit(&frames_dropped, 1, memory_order_relaxed);
        return;
    }
    if (batch.lines > 0) batch.bytes[batch.length++] = '\n';
    else batch.first_ns = now;
    memcpy(batch.bytes + batch.length, line, length);
    batch.length += length;
    batch.lines++;
    if (batch.lines >= BATCH_LINES || now - batch.first_ns >= BATCH_AGE_NS) {
        char out[BATCH_BYTES];
        size_t out_length;
        unsigned lines = take_and_unlock(out, &out_length);
        send_lines(out, out_length, lines);
    } else {
        unlock();
    }
    if (!atomic_load_explicit(&flusher_started, memory_order_relaxed)) start_flusher();
}

static atomic_uint announced; /* a bit per API already announced by this process */

void perfhud_announce(const char *api) {
    if (!active) return;
    unsigned bit = api[0] == 'v' ? 2u : 1u;
    if (atomic_fetch_or(&announced, bit) & bit) return;
    char line[64];
    static const char prefix[] = "perfhud.graphics:1|c|#api:";
    size_t length = strnlen(api, SOURCE_MAX_BYTES);
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, api, length);
    length += sizeof prefix - 1;
    if (sock < 0) connect_socket();
    /* Not counted among the frames sent or dropped: it is not one. */
    if (sock >= 0) (void)send(sock, line, length, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* fork: the parent holds the lock across fork, so the child copies a batch nobody is changing;
 * the child empties it (those lines are the parent's, which sends them itself), starts a new
 * clock generation (its first present starts its clock) and will start its own flusher thread
 * (threads do not survive fork). */
static int locked_for_fork;
static void before_fork(void) { locked_for_fork = lock_try(LOCK_TRIES * 16); /* if not: the child resets anyway */ }
static void after_fork_parent(void) {
    if (locked_for_fork) unlock();
}
static void after_fork_child(void) {
    batch.lines = 0;
    batch.length = 0;
    atomic_store(&batch.lock, 0);
    atomic_fetch_add(&generation, 1);
    atomic_store(&flusher_started, 0);
    atomic_store(&frames_sent, 0);
    atomic_store(&frames_dropped, 0);
    atomic_store(&announced, 0); /* the child tells for itself (it is a process of the target too) */
}

/* Priority 101: before the other constructors of the library, which may announce. */
__attribute__((constructor(101))) static void load(void) {
    const char *path = getenv("PERFHUD_SOCKET");
    debug = getenv("PERFHUD_HOOK_DEBUG") != NULL;
    if (!path || !*path || strlen(path) >= sizeof address.sun_path) return;
    address.sun_family = AF_UNIX;
    strcpy(address.sun_path, path);
    address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
    active = 1;
    connect_socket();
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* exit(), return from main, and dlclose (the libraries are linked -z nodelete, so in practice
 * only exit). _exit and fatal signals skip it: those frames are lost. */
__attribute__((destructor)) static void unload(void) {
    if (!active) return;
    perfhud_flush();
    if (debug)
        fprintf(stderr, "perfhud-%s: pid %d: %lu frames sent, %lu dropped\n", PERFHUD_SOURCE, (int)getpid(),
                atomic_load(&frames_sent), atomic_load(&frames_dropped));
}
