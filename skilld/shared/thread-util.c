/* See thread-util.h. */
#include <errno.h>
#include <signal.h>

#include "thread-util.h"

int thread_start_small(pthread_t *ret, void *(*fn)(void *), void *arg, const cpu_set_t *cpus) {
        pthread_attr_t attr;
        pthread_t thread;
        sigset_t all;
        int r;

        r = -pthread_attr_init(&attr);
        if (r < 0)
                return r;
        (void) sigfillset(&all);
        r = -pthread_attr_setstacksize(&attr, 64 * 1024);
        if (r >= 0)
                r = -pthread_attr_setsigmask_np(&attr, &all);
        if (r >= 0 && cpus)
                r = -pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
        if (r >= 0)
                r = -pthread_create(&thread, &attr, fn, arg);
        (void) pthread_attr_destroy(&attr);
        if (r < 0)
                return r;
        *ret = thread;
        return 0;
}
