// Launching a program as a shell launches a job. Written in C because it runs between fork and
// exec, where only async-signal-safe calls may be made: the Swift runtime, its allocator and
// its locks (held by perfhud's other threads at the fork) are off limits there.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include "CSystemShims.h"

static void write_all(int fd, const void *data, size_t length) {
    const char *bytes = data;
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        bytes += written;
        length -= (size_t)written;
    }
}

/// Whether /proc/PID/stat says the process is stopped ('T').
static int is_stopped(pid_t pid) {
    char path[64], buffer[512];
    // Built by hand: snprintf is not async-signal-safe.
    char digits[16];
    int count = 0;
    for (pid_t value = pid; value > 0 && count < 15; value /= 10) digits[count++] = (char)('0' + value % 10);
    strcpy(path, "/proc/");
    size_t at = strlen(path);
    while (count > 0) path[at++] = digits[--count];
    strcpy(path + at, "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t length = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (length <= 0) return 0;
    buffer[length] = 0;
    char *close_paren = strrchr(buffer, ')');
    return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'T';
}

/// Reads `fd` to its end: perfhud closes its side (or dies).
static void wait_for_close(int fd) {
    char byte;
    for (;;) {
        ssize_t count = read(fd, &byte, 1);
        if (count == 0 || (count < 0 && errno != EINTR)) return;
    }
}

/// The leader's life: it waits for the program and mirrors it — stops when it stops for job
/// control (perfhud sees that and follows), continues it when perfhud continues the leader, and
/// ends as it ended.
/// An ended program is reaped only once perfhud has read its last figures (`held` closed): until
/// then it stays a zombie whose CPU clock and `stat` hold its whole life's total, which is gone
/// once it is reaped. So the run's totals end at what the kernel counted, not at the last tick.
static void lead(pid_t program, int held) {
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)program, &info, WEXITED | WSTOPPED | WNOWAIT) < 0) {
            if (errno == EINTR) continue;
            _exit(127);
        }
        if (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) wait_for_close(held);
        int status = 0;
        pid_t result = waitpid(program, &status, WUNTRACED);
        if (result < 0) {
            if (errno == EINTR) continue;
            _exit(127);
        }
        if (WIFSTOPPED(status)) {
            // A job-control stop (Ctrl-Z's SIGTSTP, a read or a write from the background) is the
            // user's or the program's own: the leader stops too, and perfhud sees that and follows
            // (it gives the terminal back to its shell). A SIGSTOP from outside (a supervisor, a
            // debugger, `kill -STOP`) is not: whoever stopped the program continues it, perfhud
            // reads it stopped from /proc and goes on, and a leader stopped with it would wait
            // for a SIGCONT nobody sends (perfhud stopped too, the program a zombie at its end).
            int stop = WSTOPSIG(status);
            if (stop != SIGTSTP && stop != SIGTTIN && stop != SIGTTOU) continue;
            if (!is_stopped(program)) continue;     // continued already (perfhud was quicker)
            kill(getpid(), SIGSTOP);
            kill(-program, SIGCONT);
        } else if (WIFEXITED(status)) {
            _exit(WEXITSTATUS(status));
        } else if (WIFSIGNALED(status)) {
            int signal_number = WTERMSIG(status);
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, signal_number);
            signal(signal_number, SIG_DFL);
            sigprocmask(SIG_UNBLOCK, &one, NULL);
            kill(getpid(), signal_number);
            _exit(128 + signal_number);             // a signal that does not kill (cannot happen)
        }
    }
}

pid_t perfhud_spawn_job(const char *path, char *const argv[], char *const envp[], const char *tty_path,
                        int control_group_procs, pid_t *program_pid, int *exec_error, int *release) {
    int report[2], hold[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    if (pipe2(hold, O_CLOEXEC) != 0) {
        close(report[0]); close(report[1]);
        return -1;
    }
    pid_t leader = fork();
    if (leader < 0) {
        int saved = errno;
        close(report[0]); close(report[1]); close(hold[0]); close(hold[1]);
        errno = saved;
        return -1;
    }
    if (leader == 0) {
        close(hold[1]);
        // The session leader: a new session whose controlling terminal is the pseudo-terminal.
        setsid();
        // perfhud blocks its signals (it reads them from a signalfd); the leader must not: when
        // perfhud dies (kill -9) its end of the terminal closes, the kernel hangs the terminal up
        // and sends SIGHUP to the session leader, whose death then hangs up the program's group,
        // as when a terminal window closes on a shell and its job.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGHUP, SIG_DFL);
        int tty = open(tty_path, O_RDWR);
        if (tty >= 0) ioctl(tty, TIOCSCTTY, 0);
        signal(SIGTTOU, SIG_IGN);                   // tcsetpgrp below, whoever is in the foreground
        pid_t program = fork();
        if (program == 0) {
            setpgid(0, 0);
            tcsetpgrp(tty, getpid());
            dup2(tty, 0); dup2(tty, 1); dup2(tty, 2);
            if (tty > 2) close(tty);
            // As a fresh process: default dispositions for what perfhud ignores, nothing blocked.
            signal(SIGTTOU, SIG_DFL);
            signal(SIGPIPE, SIG_DFL);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            // Into the control group before exec ("0": the writer itself), so that everything the
            // program starts is born there. Not the leader: its time is not the program's. A
            // failed move is not fatal: perfhud sees it in /proc/PID/cgroup and counts from /proc.
            if (control_group_procs >= 0) write_all(control_group_procs, "0", 1);
            perfhud_restore_descriptor_limit();
            execve(path, argv, envp);
            int error = errno;
            write_all(report[1], &error, sizeof error);
            _exit(127);
        }
        if (program > 0) {
            setpgid(program, program);              // both sides, as shells do: no race with exec
            if (tty >= 0) tcsetpgrp(tty, program);
        }
        write_all(report[1], &program, sizeof program);
        close(report[1]);       // perfhud reads to end-of-file: the program's exec closes the other copy
        // Do not reap the program before perfhud has opened its /proc files (it writes a byte to
        // `release`, or closes it): a program that ends at once stays a zombie until then, as a
        // direct child would. Its end waits for the close (see `lead`).
        char byte;
        while (read(hold[0], &byte, 1) < 0 && errno == EINTR) {}
        // Keep nothing of perfhud's but the hold: not its terminal, not its sockets, not the
        // report pipe (EOF then tells perfhud the program has exec'd or failed).
        int held = hold[0];
        int kept = (held == 0 || syscall(SYS_close_range, 0, (unsigned)held - 1, 0) == 0)
                   && syscall(SYS_close_range, (unsigned)held + 1, ~0U, 0) == 0;
        if (!kept) for (int fd = 0; fd < 1024; fd++) if (fd != held) close(fd);
        if (program < 0) _exit(127);
        lead(program, held);
    }
    close(report[1]);
    close(hold[0]);
    *release = hold[1];
    *program_pid = -1;
    *exec_error = 0;
    ssize_t got = 0;
    while (got < (ssize_t)sizeof *program_pid) {
        ssize_t count = read(report[0], (char *)program_pid + got, sizeof *program_pid - (size_t)got);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) break;
        got += count;
    }
    for (;;) {
        ssize_t count = read(report[0], exec_error, sizeof *exec_error);
        if (count < 0 && errno == EINTR) continue;
        if (count != (ssize_t)sizeof *exec_error) *exec_error = 0;
        break;
    }
    close(report[0]);
    return leader;
}
