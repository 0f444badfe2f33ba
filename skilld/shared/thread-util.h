/* Short-lived helper threads: the engine's and the store's small jobs (an fsync(), a network
 * namespace, a run's record) that run beside their caller for a millisecond or less. */
#pragma once

#include <pthread.h>
#include <sched.h>

/* Starts fn(arg) in a thread with a 64 KiB stack (such jobs need no 8 MiB) and every signal
 * blocked from its first instruction, so that none meant for the caller (a signalfd's, the
 * daemon's) is ever delivered to it; on cpus where given. On success *ret is the thread to
 * join; a negative errno otherwise (-EAGAIN: out of tasks), *ret untouched. */
int thread_start_small(pthread_t *ret, void *(*fn)(void *), void *arg, const cpu_set_t *cpus);
