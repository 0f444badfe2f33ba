/* What a run's sandbox needs made ahead of the run: its network namespace, made by a thread while
 * the caller still starts up and loads the skill, before sandbox_run() is called (engine.h:
 * SandboxAhead, RunRequest.ahead).
 *
 * A new network namespace is most of what clone3() costs (copy_net_ns(): 0.4 of its 0.5 ms), and
 * it holds nothing of the run: lo, up. Made beside the init (netns.c, place_netns() in engine.c)
 * it waits for a CPU when other work holds the second one, after the clone, where the run waits
 * for it. Made ahead, it overlaps the caller's own start, when the second CPU is idle, and the
 * engine joins the thread right before the clone: the init is cloned without CLONE_NEWNET and
 * enters the namespace (setns()) as its first step, through the fd it inherits with the clone.
 *
 * The rules, the same as beside the init (netns.c's thread does the work here too): the
 * namespace is new for each run and entered by nothing but that run's first init (the engine
 * closes its fd right after that clone; a second init, for a uid the user database names, gets
 * one of its own with the clone); the thread is joined, never left running, before any clone or
 * fork of the engine (sandbox_run() takes it before its first clone, and settles it on every way
 * out: joined, the fd closed, whether the run used it or not). An object is spent by one
 * sandbox_run(). Only root in its user namespace makes one: an unprivileged run's init could not
 * enter a namespace our user namespace owns, and keeps making its own with the clone. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "sandbox-internal.h"

int sandbox_ahead_start(SandboxAhead **ret) {
        _cleanup_free_ SandboxAhead *a = NULL;
        cpu_set_t others;
        int cpu, r;

        if (geteuid() != 0) {
                *ret = NULL;
                return 0;
        }
        a = malloc(sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (SandboxAhead) { .netns = SANDBOX_NETNS_NULL };
        /* Off the caller's CPU: a new thread is queued on its creator's, and there it would wait
         * for the caller to block (1.8 to 3.5 ms here; on another CPU 0.07 to 0.19 ms). */
        cpu = sched_getcpu();
        if (cpu >= 0 && sched_getaffinity(0, sizeof(a->cpus), &a->cpus) >= 0) {
                others = a->cpus;
                CPU_CLR(cpu, &others);
                a->narrowed = CPU_COUNT(&others) > 0;
        }
        a->started_usec = now_usec(CLOCK_MONOTONIC);
        r = sandbox_netns_start(&a->netns, a->narrowed ? &others : NULL);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

int sandbox_ahead_take_netns(SandboxAhead *a, int *ret_fd) {
        int r;

        if (!a || (!a->netns.started && a->netns.fd < 0 && a->netns.error == 0))
                return -ENODATA;        /* never started, or spent */
        /* Not done yet: the caller's CPU, which it leaves to wait, is the thread's too now (where
         * other work holds the one it was kept on, it would wait for that one still). Only
         * before the thread's end: glibc names an exited thread by tid 0, which is the caller
         * itself; in the instant between the flag and the exit that sets the caller to the CPUs
         * it had at sandbox_ahead_start(), which are still its own (the engine changes its
         * affinity only after the clone). */
        if (a->narrowed && a->netns.started && !atomic_load(&a->netns.ended))
                (void) pthread_setaffinity_np(a->netns.thread, sizeof(a->cpus), &a->cpus);
        r = sandbox_netns_join(&a->netns, NULL);
        a->taken_usec = now_usec(CLOCK_MONOTONIC);
        if (r < 0) {
                a->netns.error = 0;     /* spent: its failure is told once */
                return r;
        }
        *ret_fd = TAKE_FD(a->netns.fd);
        return 0;
}

void sandbox_ahead_settle(SandboxAhead *a) {
        if (!a)
                return;
        sandbox_netns_done(&a->netns);
        a->netns.error = 0;
}

SandboxAhead *sandbox_ahead_free(SandboxAhead *a) {
        sandbox_ahead_settle(a);
        free(a);
        return NULL;
}
