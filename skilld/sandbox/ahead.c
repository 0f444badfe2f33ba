/* What a run's sandbox needs made ahead of the run: its network namespace, made by a helper
 * process while the caller still loads the skill, before sandbox_run() is called (engine.h:
 * SandboxAhead, RunRequest.ahead).
 *
 * A new network namespace is most of what clone3() costs (copy_net_ns(): 0.4 of its 0.5 ms), and
 * holds nothing of the run: lo, up. Made ahead, it is off the run's path: the init is cloned
 * without CLONE_NEWNET and enters it (setns()) as its first step, through the fd it inherits with
 * the clone; where the helper has not answered by the clone, the engine does not wait for it
 * there: the namespace goes to the init with its release, as the one made beside the init does
 * (netns.c), and the init enters it before it forks the skill process. Not there by the release
 * either (after a short wait: the helper had no CPU), the init makes its own then, as the clone
 * would have, and the helper's work is thrown away.
 *
 * A process, not a thread: the engine's first measurement (bench/README.md, ninth round) had a
 * thread, joined before the clone since a thread alive at a clone or fork is unsafe (the child
 * inherits the locks it holds, glibc's and the sanitizers' at its start and exit among them). But
 * the caller loads the skill in 0.2 to 0.4 ms, and the thread needs 0.6 from its start on a quiet
 * machine, more where other work holds the second CPU: the engine waited 1.1 to 1.5 ms for it
 * (median), where the clone would have made the namespace in 0.4. A process may outlive the clone:
 * it shares no memory and no fd table with the engine (it closes every fd but its socket first),
 * so whatever it does at that instant is nothing of the init's. It costs a fork() on the caller's
 * path (0.05 to 0.1 ms: the caller is small; skillctl's shares the caller's memory instead, 0.04
 * ms, below) and its reaping at the run's end.
 *
 * The rules, as beside the init: the namespace is new for each run and entered by nothing but
 * that run's first init (the engine closes its fd once that init has it; a second init, for a
 * uid the user database names, gets one of its own with the clone). The helper, which made it, is
 * in it from its unshare() to its _exit() and does nothing there but bring lo up and pass the fd
 * on. An object is spent by one sandbox_run(), whether the run used it or not: the helper killed
 * if still there, reaped, every fd closed. Only root in its user namespace makes one: an
 * unprivileged run's init could not enter a namespace our user namespace owns, and keeps making
 * its own with the clone. */
#include <net/if.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#include "engine.h"
#include "sandbox-internal.h"

/* The helper's one message; the namespace comes with it as SCM_RIGHTS when it was made. */
typedef struct AheadAnswer {
        int error;
        char what[80];
        uint64_t begun_usec;
        uint64_t made_usec;
} AheadAnswer;

_noreturn_ static void ahead_helper(int sock) {
        AheadAnswer m = { .begun_usec = now_usec(CLOCK_MONOTONIC) };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        const char *what = NULL;
        sigset_t all;
        int fd = -EBADF, r;

        /* Nothing of the caller's: ^C is the caller's to decide on, and its pipes must see their
         * end when it ends. */
        (void) sigfillset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        if (close_all_fds_except(&sock, 1) < 0)
                _exit(EXIT_FAILURE);
        r = sandbox_netns_make(&fd, &what);
        m.made_usec = now_usec(CLOCK_MONOTONIC);
        if (r < 0) {
                m.error = r;
                (void) snprintf(m.what, sizeof(m.what), "%s", what);
        } else {
                mh.msg_control = control.buf;
                mh.msg_controllen = sizeof(control.buf);
                CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
                CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
                CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &fd, sizeof(int));
        }
        _exit(sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t) sizeof(m) ? EXIT_SUCCESS : EXIT_FAILURE);
}

/* The helper sharing our memory instead of a copy of it (clone(CLONE_VM)): its start costs the
 * caller 0.04 ms instead of fork()'s 0.1, the caller takes no copy-on-write faults afterwards,
 * and the namespace is made 0.3 ms sooner (bench/README.md, tenth round). Such a child also
 * shares our thread pointer, so nothing of the C library may run in it: every call that fails
 * writes the errno of our thread, a cancellation point marks our thread's descriptor, a fallback
 * may allocate. It makes its few system calls itself, on a stack of its own, touching nothing
 * of ours but its argument; where that is not written for the architecture, or under Valgrind
 * (which stops a program at such a clone), the helper is forked as before. */
#define AHEAD_STACK_SIZE (64U * 1024U)
#if defined(__x86_64__) || defined(__aarch64__)
#define AHEAD_SHARED 1

/* A system call without the C library: its result, or -errno. */
static inline long raw_syscall(long n, long a1, long a2, long a3, long a4) {
#if defined(__x86_64__)
        register long r10 __asm__("r10") = a4;
        long ret;

        __asm__ volatile ("syscall"
                          : "=a"(ret)
                          : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
                          : "rcx", "r11", "memory");
        return ret;
#else
        register long x8 __asm__("x8") = n;
        register long x0 __asm__("x0") = a1;
        register long x1 __asm__("x1") = a2;
        register long x2 __asm__("x2") = a3;
        register long x3 __asm__("x3") = a4;

        __asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory", "cc");
        return x0;
#endif
}

static uint64_t raw_now_usec(void) {
        struct timespec ts = {};

        (void) raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long) &ts, 0, 0);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000) + (uint64_t) ts.tv_nsec / 1000;
}

/* ahead_helper() and sandbox_netns_make() in system calls; its one argument, the socket, comes
 * by value. */
static int ahead_helper_shared(void *arg) {
        const int sock = (int) (intptr_t) arg;
        const uint64_t all = ~UINT64_C(0);
        AheadAnswer m;
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        struct ifreq ifr;
        const char *what = NULL;
        long fd = -1, s = -1, r;

        (void) raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long) &all, 0, sizeof(all));
        /* Byte by byte: a memset() or memcpy() call is the C library's. */
        for (size_t i = 0; i < sizeof(m); i++)
                ((volatile char *) &m)[i] = 0;
        for (size_t i = 0; i < sizeof(ifr); i++)
                ((volatile char *) &ifr)[i] = 0;
        for (size_t i = 0; i < sizeof(control); i++)
                ((volatile char *) &control)[i] = 0;
        m.begun_usec = raw_now_usec();
        /* Every fd but the socket (close_range(), Linux 5.9; without it, no namespace here). */
        if ((sock > 3 && raw_syscall(SYS_close_range, 3, sock - 1, 0, 0) < 0) ||
            raw_syscall(SYS_close_range, sock + 1, ~0U, 0, 0) < 0)
                (void) raw_syscall(SYS_exit, EXIT_FAILURE, 0, 0, 0);

        r = raw_syscall(SYS_unshare, CLONE_NEWNET, 0, 0, 0);
        if (r < 0)
                what = "Failed to create the run's network namespace";
        if (r >= 0) {
                s = r = raw_syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0);
                if (r < 0)
                        what = "Failed to create a socket for the run's lo";
        }
        if (r >= 0) {
                ifr.ifr_name[0] = 'l';
                ifr.ifr_name[1] = 'o';
                r = raw_syscall(SYS_ioctl, s, SIOCGIFFLAGS, (long) &ifr, 0);
                if (r >= 0) {
                        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
                        r = raw_syscall(SYS_ioctl, s, SIOCSIFFLAGS, (long) &ifr, 0);
                }
                if (r < 0)
                        what = "Failed to bring the run's lo up";
        }
        if (r >= 0) {
                fd = r = raw_syscall(SYS_openat, AT_FDCWD, (long) "/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC, 0);
                if (r < 0)
                        what = "Failed to open the run's network namespace";
        }
        m.made_usec = raw_now_usec();
        if (r < 0) {
                m.error = (int) r;
                for (size_t i = 0; what[i] && i + 1 < sizeof(m.what); i++)
                        m.what[i] = what[i];
        } else {
                mh.msg_control = control.buf;
                mh.msg_controllen = sizeof(control.buf);
                control.h.cmsg_level = SOL_SOCKET;
                control.h.cmsg_type = SCM_RIGHTS;
                control.h.cmsg_len = CMSG_LEN(sizeof(int));
                *(int *) (void *) CMSG_DATA(&control.h) = (int) fd;
        }
        r = raw_syscall(SYS_sendmsg, sock, (long) &mh, MSG_NOSIGNAL, 0);
        (void) raw_syscall(SYS_exit, r == (long) sizeof(m) ? EXIT_SUCCESS : EXIT_FAILURE, 0, 0, 0);
        return 0;
}

static bool ahead_can_share(void) {
        const char *preload;

#if HAVE_VALGRIND_VALGRIND_H
        if (RUNNING_ON_VALGRIND)
                return false;
#endif
        /* Valgrind's own preloads, for a build without its header. */
        preload = getenv("LD_PRELOAD");
        return !preload || !strstr(preload, "/vgpreload_");
}
#endif

int sandbox_ahead_start_full(bool shared, SandboxAhead **ret) {
        _cleanup_(sandbox_ahead_freep) SandboxAhead *a = NULL;
        cpu_set_t others;
        int pair[2], cpu, r;
        pid_t pid;

        if (geteuid() != 0) {
                *ret = NULL;
                return 0;
        }
        a = malloc(sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (SandboxAhead) { .sock = -EBADF, .netns_fd = -EBADF };
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        a->sock = pair[0];
        a->started_usec = now_usec(CLOCK_MONOTONIC);
#ifndef AHEAD_SHARED
        (void) shared;
#endif
#ifdef AHEAD_SHARED
        if (shared && ahead_can_share()) {
                sigset_t all, saved;

                a->stack = mmap(NULL, AHEAD_STACK_SIZE, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
                if (a->stack == MAP_FAILED) {
                        a->stack = NULL;
                        (void) safe_close(pair[1]);
                        return -errno;
                }
                /* No handler of ours may run on its stack before it blocks every signal. */
                (void) sigfillset(&all);
                (void) sigprocmask(SIG_SETMASK, &all, &saved);
                pid = clone(ahead_helper_shared, (char *) a->stack + AHEAD_STACK_SIZE, CLONE_VM | SIGCHLD,
                            (void *) (intptr_t) pair[1]);
                r = pid < 0 ? -errno : 0;
                (void) sigprocmask(SIG_SETMASK, &saved, NULL);
                if (r < 0) {
                        (void) safe_close(pair[1]);
                        return r;
                }
        } else
#endif
        {
                pid = fork();
                if (pid < 0) {
                        (void) safe_close(pair[1]);
                        return -errno;
                }
                if (pid == 0) {
                        /* Our copy of the caller's bookkeeping, owned by nobody here: a leak
                         * checker at the helper's _exit() (Valgrind, where this path is taken)
                         * would count it lost. */
                        free(TAKE_PTR(a));
                        ahead_helper(pair[1]);
                }
        }
        /* Off our CPU, before it first runs: a new process is queued where the scheduler put it,
         * often here, and there it would wait for us to block; moved while still queued, it needs
         * no stopper thread. */
        cpu = sched_getcpu();
        if (cpu >= 0 && sched_getaffinity(0, sizeof(a->cpus), &a->cpus) >= 0) {
                others = a->cpus;
                CPU_CLR(cpu, &others);
                a->moved = CPU_COUNT(&others) > 0 && sched_setaffinity(pid, sizeof(others), &others) >= 0;
        }
        a->forked_usec = now_usec(CLOCK_MONOTONIC);
        (void) safe_close(pair[1]);
        a->pid = pid;
        *ret = TAKE_PTR(a);
        return 0;
}

int sandbox_ahead_start(SandboxAhead **ret) {
        return sandbox_ahead_start_full(false, ret);
}

/* The helper's answer, once: the namespace or its error. A helper that ended without one
 * (killed) is an error too. */
static int ahead_receive(SandboxAhead *a, uint64_t wait_usec) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        AheadAnswer m = {};
        struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = control.buf,
                .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *c;
        ssize_t k;

        if (a->answered)
                return 0;
        if (wait_usec > 0) {
                struct timespec ts = {
                        .tv_sec = (time_t) (wait_usec / 1000000),
                        .tv_nsec = (long) (wait_usec % 1000000) * 1000,
                };

                /* EINTR or a timeout: the recvmsg() below says what there is. */
                (void) ppoll(&(struct pollfd) { .fd = a->sock, .events = POLLIN }, 1, &ts, NULL);
        }
        do
                k = recvmsg(a->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        while (k < 0 && errno == EINTR);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return -EAGAIN;
        a->answered = true;
        a->sock = safe_close(a->sock);
        c = k == (ssize_t) sizeof(m) ? CMSG_FIRSTHDR(&mh) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&a->netns_fd, CMSG_DATA(c), sizeof(int));
        if (k == (ssize_t) sizeof(m)) {
                a->begun_usec = m.begun_usec;
                a->made_usec = m.made_usec;
        }
        if (a->netns_fd >= 0 && m.error == 0)
                return 0;
        a->netns_fd = safe_close(a->netns_fd);
        a->error = k < 0 ? -errno : m.error < 0 ? m.error : -ECHILD;
        (void) snprintf(a->what, sizeof(a->what), "%s",
                        m.error < 0 && m.what[0] ? m.what : "The helper making the run's network namespace failed");
        return 0;
}

bool sandbox_ahead_pending(const SandboxAhead *a) {
        return a && (a->answered ? a->netns_fd >= 0 || a->error < 0 : a->sock >= 0);
}

int sandbox_ahead_take_netns(SandboxAhead *a, uint64_t wait_usec, int *ret_fd, const char **ret_what) {
        int r;

        if (!sandbox_ahead_pending(a))
                return -ENODATA;
        r = ahead_receive(a, wait_usec);
        if (r < 0)
                return r;
        a->taken_usec = now_usec(CLOCK_MONOTONIC);
        if (a->error < 0) {
                r = a->error;
                a->error = 0;   /* taken: told once */
                if (ret_what)
                        *ret_what = a->what;
                return r;
        }
        *ret_fd = TAKE_FD(a->netns_fd);
        return 0;
}

void sandbox_ahead_abandon(SandboxAhead *a) {
        if (!a || a->pid <= 0)
                return;
        /* A killed process still needs a CPU to die: any of ours, not only the one it was put
         * on, which other work may hold (we are about to wait for it, or to go on without it). */
        if (a->moved) {
                (void) sched_setaffinity(a->pid, sizeof(a->cpus), &a->cpus);
                a->moved = false;
        }
        (void) kill(a->pid, SIGKILL);
}

void sandbox_ahead_settle(SandboxAhead *a) {
        if (!a)
                return;
        a->sock = safe_close(a->sock);
        a->netns_fd = safe_close(a->netns_fd);
        a->answered = true;
        a->error = 0;
        if (a->pid > 0) {
                /* Done by now, or of no use any more: a namespace half made goes with it. */
                sandbox_ahead_abandon(a);
                while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                a->pid = 0;
        }
        /* Its stack, once it is gone. */
        if (a->stack) {
                (void) munmap(a->stack, AHEAD_STACK_SIZE);
                a->stack = NULL;
        }
}

SandboxAhead *sandbox_ahead_free(SandboxAhead *a) {
        sandbox_ahead_settle(a);
        free(a);
        return NULL;
}
