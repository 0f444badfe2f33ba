/* The run's network namespace, made beside its init (as root in the initial user namespace, where
 * the engine chooses so: engine.c, place_netns()). The work itself, sandbox_netns_make(), also
 * serves the namespace made ahead of the run, in a helper process (ahead.c).
 *
 * A new network namespace is most of what clone3() costs (copy_net_ns(): lo registered, the
 * per-namespace sysctl tables and protocol state; 0.4 of 0.6 ms). The engine then clones the init
 * without it, and a thread of the engine makes it while the init builds its root: unshare() in a
 * thread changes that thread's namespace only, so the engine's own sockets and the rest of the
 * process stay where they are. The thread brings lo up there, takes an fd of the namespace, and
 * ends; the namespace lives on in that fd alone, which the engine hands to the init with its
 * release and closes. The init enters it (setns()) before it forks the skill process: the
 * namespace is new for each run, and nothing else ever joins it.
 *
 * A thread alive at a fork or a clone is unsafe (the child would inherit the locks it holds,
 * never to be released): the engine joins it before any clone (a second init, for a uid the user
 * database names) and on every way out. Under a user namespace (an unprivileged run) the init is
 * cloned with its network namespace as before: it could not enter one that our user namespace
 * owns. */
#include <assert.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sandbox-internal.h"
#include "thread-util.h"

/* Only lo exists in a new network namespace, and it starts down: brought up through sock, a
 * socket of that namespace (the init's, made with the clone; the thread's, made beside it). */
int sandbox_loopback_up(int sock) {
        struct ifreq ifr = {};

        strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
        if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        return ioctl(sock, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

int sandbox_netns_make(int *ret_fd, const char **ret_what) {
        _cleanup_close_ int sock = -EBADF;
        int fd, r;

        if (unshare(CLONE_NEWNET) < 0) {
                *ret_what = "Failed to create the run's network namespace";
                return -errno;
        }
        sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (sock < 0) {
                *ret_what = "Failed to create a socket for the run's lo";
                return -errno;
        }
        r = sandbox_loopback_up(sock);
        if (r < 0) {
                *ret_what = "Failed to bring the run's lo up";
                return r;
        }
        /* Our own namespace now (this thread's, or the helper's: ahead.c). Not SIOCGSKNS on the
         * socket, which saved a path lookup off the run's path: Valgrind (3.19) knows no such
         * ioctl and warns on the caller's stderr, where the helper made ahead runs beside every
         * embedded run, also one that fails at once (skillctl's tests under memcheck). */
        fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                *ret_what = "Failed to open the run's network namespace";
                return -errno;
        }
        *ret_fd = fd;
        return 0;
}

static void *netns_thread(void *userdata) {
        SandboxNetns *n = userdata;
        const char *what = NULL;
        int r;

        r = sandbox_netns_make(&n->fd, &what);
        if (r < 0) {
                n->error = r;
                n->what = what;
                return NULL;
        }
        n->made_usec = now_usec(CLOCK_MONOTONIC);
        return NULL;
}

int sandbox_netns_start(SandboxNetns *n, const cpu_set_t *cpus) {
        int r;

        assert(!n->started && n->fd < 0);
        n->error = 0;
        n->what = NULL;
        /* unshare(), a socket and two ioctls; every signal blocked (thread-util.h). */
        r = thread_start_small(&n->thread, netns_thread, n, cpus);
        if (r < 0)
                return r;
        n->started = true;
        return 0;
}

int sandbox_netns_join(SandboxNetns *n, const char **ret_what) {
        if (n->started) {
                (void) pthread_join(n->thread, NULL);
                n->started = false;
        }
        if (n->error < 0) {
                if (ret_what)
                        *ret_what = n->what;
                return n->error;
        }
        return 0;
}

void sandbox_netns_done(SandboxNetns *n) {
        (void) sandbox_netns_join(n, NULL);
        n->fd = safe_close(n->fd);
}
