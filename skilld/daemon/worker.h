/* The worker: one forked process per run, which executes it with the sandbox engine.
 *
 * The engine blocks until the run is over and must be called from a single-threaded process; the
 * service must go on serving everyone. So the service forks a worker per run (no exec: the
 * service is single-threaded, and the worker drops every fd and signal setting it inherited but
 * its own), and learns of the end by reaping it:
 *
 *   1. The worker dies with the service (PR_SET_PDEATHSIG); the sandbox init dies with the
 *      worker; and the run's scope has RuntimeMaxUSec as the last backstop.
 *   2. It runs the engine with the systemd-scope backend: the held sandbox child, together with a
 *      "pin" process, goes into skilld-run-<id>.scope by StartTransientUnit, and is released only
 *      once systemd's job is done (see scope.h). The pin keeps the scope, and so its cgroup
 *      files, alive until the engine read the outcome from them: systemd removes a scope's cgroup
 *      the moment its last process is gone.
 *   3. Output goes live into the store's stdout.log and stderr.log (a regular file never blocks
 *      the engine); a "follower" process copies them on to the caller's stdout/stderr fds, so a
 *      caller that does not read stalls only its own copy, never the run.
 *   4. The engine writes artifacts and logs into a ".#engine" directory of the run's record; the
 *      worker moves them into place, then writes result.json last: the store's commit point. A
 *      worker that dies on the way leaves no result, and the run becomes interrupted.
 *   5. The result JSON also goes into a memfd for the service, which reaps the worker and updates
 *      its index, the run's D-Bus object and the journal. */
#pragma once

#include <sys/types.h>

#include "engine.h"
#include "scope-spare.h"

typedef struct WorkerArgs {
        /* The run, complete except for output_dir, stdout_fd, stderr_fd and the backend, which
         * the worker sets. Its fds (skill_dir_fd, files, cancel_fd) are inherited. */
        RunRequest request;
        const char *run_dir;            /* the run's record in the store */
        int client_stdout_fd;           /* live copies for the caller, or -1 */
        int client_stderr_fd;
        int result_fd;                  /* memfd receiving the result JSON */
        bool input_file;                /* the input JSON is the record's input.json */
        bool use_scope;                 /* false: the engine's own backends (no systemd) */
        const char *systemd_address;    /* where systemd answers; NULL: the system bus */
        const char *description;        /* of the scope */
        const ScopeSpareHandout *spare; /* the run's scope, started ahead, or NULL */
} WorkerArgs;

/* The engine's backend that puts each sandbox into a transient scope of skilld.slice, with its
 * limits (see 2. above); backend_userdata is a ScopeConfig. Also for the sandboxes of an
 * environment build (bus-env.c). */
typedef struct ScopeConfig {
        const char *systemd_address;    /* NULL: the system bus */
        const char *description;        /* of the scope */
        const ScopeSpareHandout *spare; /* the scope started ahead for the run, or NULL */
} ScopeConfig;

extern const SandboxBackendOps worker_scope_backend;

/* Forks a pin: a process that does nothing but keep a scope populated until *ret_fd is closed
 * (by its holder, or with its holder's death), and dies with its parent. */
int worker_pin_spawn(pid_t *ret_pid, int *ret_fd);

/* Forks the worker. The child never returns. */
int worker_spawn(const WorkerArgs *w, pid_t *ret_pid);

/* Moves the calling process into a new transient scope of skilld.slice, without limits but
 * runtime_max_usec, and waits until it is there: for a forked helper whose every descendant must
 * be outside the service's cgroup (an environment build, whose network the service unit's
 * IPAddressDeny= would block). */
int worker_enter_scope(const char *systemd_address, const char *unit, const char *description,
                       uint64_t runtime_max_usec, char **error);

/* In a forked child of the service: closes every fd but keep, restores every signal's default
 * and unblocks them all, and names the process. _exit()s on failure. */
void worker_reset_process(const int *keep, size_t n_keep, const char *name);

/* The extra grace after the run's timeout before systemd stops its scope: the engine's own timer,
 * draining and killing come first. */
#define WORKER_SCOPE_GRACE_USEC (60ULL * 1000000)
