// Wrappers for variadic C functions (ioctl, syscall) that Swift cannot call directly, and the
// Linux headers the Glibc module does not export (timerfd, signalfd).
#ifndef PERFHUD_CSYSTEMSHIMS_H
#define PERFHUD_CSYSTEMSHIMS_H
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include <fcntl.h>
#include <termios.h>
#include <wchar.h>
#include <locale.h>

/// The corresponding C call is `ioctl(fd, TIOCGWINSZ, &ws)`.
static inline int perfhud_get_window_size(int fd, unsigned short *rows, unsigned short *cols) {
    struct winsize ws;
    int rc = ioctl(fd, TIOCGWINSZ, &ws);
    if (rc == 0) { *rows = ws.ws_row; *cols = ws.ws_col; }
    return rc;
}

/// The corresponding C call is `ioctl(fd, TIOCSWINSZ, &ws)`.
static inline int perfhud_set_window_size(int fd, unsigned short rows, unsigned short cols) {
    struct winsize ws = { .ws_row = rows, .ws_col = cols, .ws_xpixel = 0, .ws_ypixel = 0 };
    return ioctl(fd, TIOCSWINSZ, &ws);
}

/// The corresponding C call is `syscall(SYS_pidfd_open, pid, 0)` (Linux 5.3+); -1 where absent.
static inline int perfhud_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    return -1;
#endif
}

/// The corresponding C call is `syscall(SYS_getdents64, fd, buffer, size)`: a directory's entries
/// as `struct linux_dirent64` records into the caller's buffer. opendir's DIR holds a 32 KiB buffer
/// of its own, which a directory kept open per watched process (the daemon's) cannot afford.
static inline long perfhud_getdents(int fd, void *buffer, unsigned long size) {
    return syscall(SYS_getdents64, fd, buffer, size);
}

/// Whether signal `number` is ignored (SIG_IGN) now: `sigaction(number, NULL, &old)`, whose
/// handler Swift cannot compare with SIG_IGN.
static inline int perfhud_signal_is_ignored(int number) {
    struct sigaction old;
    return sigaction(number, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
}

/// `mallopt(M_MMAP_THRESHOLD, bytes)`: malloc.h, which the Glibc module does not export. 1 on success.
#include <malloc.h>
static inline int perfhud_malloc_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

/// The pseudo-terminal calls glibc declares only under _GNU_SOURCE / _XOPEN_SOURCE, which the
/// Swift Glibc module is not built with: `posix_openpt`, `grantpt`, `unlockpt`, `ptsname_r`.
/// Returns the master descriptor (close-on-exec) and writes the slave's path, or -1 with errno.
int perfhud_open_pseudo_terminal(char *slave_path, size_t length);

/// ppoll(2) without a signal mask (declared by <poll.h> only under _GNU_SOURCE): a session's wait,
/// its timeout the next tick, to the nanosecond.
struct pollfd;
struct timespec;
int perfhud_ppoll(struct pollfd *fds, unsigned long count, const struct timespec *timeout);

/// Raises the soft limit on open descriptors (RLIMIT_NOFILE) to the hard one, as systemd advises a
/// program that keeps many open (systemd.exec(5), LimitNOFILE=; a service's soft limit is 1,024):
/// perfhud keeps a dozen files open for each process it watches. Returns the limit now in force
/// (-1 where unlimited or unknown). Only once, at start: the limit it started with is kept for
/// `perfhud_restore_descriptor_limit`.
long perfhud_raise_descriptor_limit(void);
/// Gives a launched program the limit perfhud started with (between fork and exec): a program
/// that `select()`s breaks on a descriptor above 1,023.
void perfhud_restore_descriptor_limit(void);

/// Launches `path` as a shell launches a job, on the pseudo-terminal `tty_path`: a session leader
/// (a fork of perfhud that execs nothing) makes the terminal its controlling terminal and runs the
/// program in a process group of its own, in the foreground. The program's group then has a parent
/// in its session outside the group, so it is not orphaned, and SIGTSTP stops it as on a login
/// terminal: the kernel discards SIGTSTP, SIGTTIN and SIGTTOU for an orphaned group, which a
/// session leader's own group is — Ctrl-Z did nothing to vim or htop launched directly as one.
/// The leader mirrors the program: it stops when the program stops, continues it when continued,
/// and ends as it ends (exit status, or the same signal).
/// Returns the leader's PID (-1 with errno if it cannot fork); `program_pid` gets the program's,
/// `exec_error` the errno of a failed exec (0 when the program runs), `release` a pipe to the
/// leader: one byte written to it once perfhud watches the program (the leader reaps nothing
/// before: a program that ends at once stays a zombie whose /proc files can still be opened, as a
/// direct child's would), closed once perfhud has read an ended program's last figures (the
/// leader reaps it only then). Closing it at once allows both.
/// `control_group_procs`: a control group's `cgroup.procs` opened for writing, which the program
/// joins before it execs (see `ControlGroupCPU`), or -1.
pid_t perfhud_spawn_job(const char *path, char *const argv[], char *const envp[], const char *tty_path,
                        int control_group_procs, pid_t *program_pid, int *exec_error, int *release);
/// A batch of datagrams for recvmmsg(2) with each sender's credentials (SCM_CREDENTIALS).
/// `struct mmsghdr` and `struct ucred` exist only under _GNU_SOURCE, which the Swift Glibc module
/// lacks, so the buffers live on the C side and Swift reads them through these accessors.
typedef struct perfhud_datagram_batch perfhud_datagram_batch;
perfhud_datagram_batch *perfhud_batch_create(unsigned int count, size_t size);
void perfhud_batch_destroy(perfhud_datagram_batch *batch);
/// recvmmsg(fd, …, MSG_DONTWAIT): the number of datagrams received, or -1 with errno.
int perfhud_batch_receive(int fd, perfhud_datagram_batch *batch);
const unsigned char *perfhud_batch_data(const perfhud_datagram_batch *batch, unsigned int index, size_t *length);
/// 1 and the sender's pid and uid when the datagram carried credentials, else 0.
int perfhud_batch_sender(const perfhud_datagram_batch *batch, unsigned int index, int *pid, unsigned int *uid);
/// 1 when the datagram was longer than the buffer (MSG_TRUNC).
int perfhud_batch_truncated(const perfhud_datagram_batch *batch, unsigned int index);
/// setsockopt(fd, SOL_SOCKET, SO_PASSCRED, 1).
int perfhud_enable_credentials(int fd);
/// Asks the scheduler to run the calling thread soon after it wakes: a short time slice
/// (sched_setattr's sched_runtime, honoured by EEVDF kernels, 6.6 on, without privilege), else a
/// lower nice value where allowed (root, RLIMIT_NICE) as well. With `realtime`, first the lowest
/// real-time priority (SCHED_RR 1, reset on fork) where allowed: then only that is done. Returns a
/// bit set: 1 the slice, 2 the nice value, 4 real time.
int perfhud_prefer_prompt_wakeups(unsigned long long slice_nanoseconds, int nice, int realtime);
/// Hands back the executable's pages that are still pages of its file (code, constants, symbol and
/// relocation tables; data nobody wrote) and that start-up made resident: argument parsing, help,
/// the Swift runtime's first type and conformance look-ups, the loader touch megabytes the sampling
/// loop never runs again, and the kernel maps file pages 64 KiB at a time around each first touch.
/// madvise(MADV_DONTNEED) takes them out of the process (not out of the page cache); the loop's own
/// code comes back at its next fault. Pages the process wrote (relocated data, .bss, a breakpoint)
/// are its own and kept.
/// Returns the bytes that were resident; 0 with PERFHUD_KEEP_STARTUP_PAGES set (for comparisons).
long perfhud_release_startup_pages(void);
/// Names the calling thread (pthread_setname_np, _GNU_SOURCE only): `ps -L`, `top -H` show it.
void perfhud_name_thread(const char *name);
/// Moves the calling thread into the network namespace `fd` refers to (setns with CLONE_NEWNET,
/// _GNU_SOURCE only): 0, or -1 with errno. Only the calling thread's namespace changes.
int perfhud_enter_network_namespace(int fd);
/// A systemd unit's IP accounting (unit_ip.c): its IPIngressBytes and IPEgressBytes over D-Bus.
/// 0: read; 1: the unit does not account IP traffic (IPAccounting=no); a negative errno: not read
/// (no systemd, no such unit, no libsystemd). From one thread only.
int perfhud_unit_ip_bytes(const char *unit, uint64_t *ingress, uint64_t *egress);
/// A non-blocking, close-on-exec eventfd (a thread woken by a write of 8 bytes): the descriptor or -1.
int perfhud_wake_descriptor(void);

/// NVIDIA's management library (NVML), loaded with dlopen at run time (nvml.c): no build-time
/// dependency on the driver. Return values are NVML's (0 success, 3 not supported, 4 no permission,
/// 6 not found, 9 driver not loaded, 13 function not found: the library lacks the call, …).
#define PERFHUD_NVML_MAX_DEVICES 16
/// perfhud_nvml_open's answer when there is no libnvidia-ml.so.1 (or it lacks nvmlInit_v2).
#define PERFHUD_NVML_NO_LIBRARY (-1)
/// Loads the library and calls nvmlInit_v2 once; 0 when NVML answers.
int perfhud_nvml_open(void);
unsigned int perfhud_nvml_device_count(void);
/// One device's figures, each with the status of the call that gives it (0: read).
typedef struct {
    int status;  // of the name
    char name[96];
    char uuid[96];
    int memory_status; unsigned long long memory_total, memory_used;
    int utilization_status; unsigned int gpu_percent, memory_percent;
    int temperature_status; unsigned int temperature;
    int power_status; unsigned int power_milliwatts;
    int clock_status; unsigned int clock_mhz;
    int reasons_status; unsigned long long reasons;
    int mig_status; unsigned int mig;
} perfhud_nvml_device_reading;
void perfhud_nvml_read_device(unsigned int index, perfhud_nvml_device_reading *out);
/// A process on a device and its device memory (NVML's NVML_VALUE_NOT_AVAILABLE, all ones, where unknown).
typedef struct { unsigned int pid; unsigned long long memory; } perfhud_nvml_process;
/// The compute and graphics processes of a device (a process may be in both). Each list's own
/// status in `statuses` (compute, graphics): one may be refused while the other answers.
int perfhud_nvml_processes(unsigned int index, perfhud_nvml_process *out, unsigned int capacity, unsigned int *written, int statuses[2]);
/// A per-process utilization sample (percent of the sample's period; timestamp in CLOCK_REALTIME µs).
typedef struct { unsigned int pid; unsigned long long timestamp; unsigned int sm, memory, encoder, decoder; } perfhud_nvml_sample;
/// The samples newer than `since` (µs); NVML says 6 (not found) when there are none.
int perfhud_nvml_samples(unsigned int index, unsigned long long since, perfhud_nvml_sample *out, unsigned int capacity, unsigned int *written);
#endif
