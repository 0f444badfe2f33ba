/* Transient scopes of runs, through systemd's D-Bus API (public sd-bus only).
 *
 * Every run executes in "skilld-run-<id>.scope" in skilld.slice. systemd creates the scope's
 * cgroup, writes its limits and moves the given processes in, all in one StartTransientUnit
 * call; the call returns a job, and only the job's end (JobRemoved with result "done") says
 * the processes are in place with the limits applied. So a ScopeJob installs the JobRemoved
 * match first, then calls, then waits for the signal of its job, all asynchronously on the
 * bus's event loop. There is no per-job match: every JobRemoved the bus delivers is looked at.
 *
 * The property names are those systemd 252 exports on org.freedesktop.systemd1.Scope and .Unit
 * (busctl introspect in the VM suite): Description, Slice, PIDs (252 has no PIDFDs), MemoryMax,
 * MemorySwapMax, TasksMax, CPUQuotaPerSecUSec, RuntimeMaxUSec, CollectMode, OOMPolicy,
 * KillSignal, and the *Accounting switches. AddRef is not set: it only pins the unit object to
 * the creating connection, and a run's scope should go as soon as its processes are gone.
 *
 * Crash recovery: scope_stop_matching() stops every scope a dead predecessor left behind. */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "util.h"

#define SCOPE_SLICE "skilld.slice"
#define SCOPE_UNIT_PREFIX "skilld-run-"
#define SCOPE_UNIT_PATTERN SCOPE_UNIT_PREFIX "*.scope"

typedef struct ScopeParams {
        const char *unit;               /* "skilld-run-<id>.scope" */
        const char *slice;              /* SCOPE_SLICE */
        const char *description;
        const pid_t *pids;
        size_t n_pids;
        uint64_t memory_max;            /* bytes; swap is always 0 */
        uint64_t tasks_max;
        uint64_t cpu_quota_per_sec_usec;        /* CPU time per second of wall time */
        uint64_t runtime_max_usec;      /* the backstop: systemd kills the scope after this */
        bool delegate;                  /* Delegate=yes: processes may be attached later */
} ScopeParams;

/* "skilld-run-<id>.scope" */
char *scope_unit_name(const char *run_id);

/* Appends the a(sv) properties of StartTransientUnit for p (the array container included). */
int scope_append_properties(sd_bus_message *m, const ScopeParams *p);

typedef struct ScopeJob ScopeJob;

/* Called once per job. r < 0: the call failed, message says why; else result is systemd's job
 * result ("done" when the scope runs, "failed", "canceled", ...). */
typedef void (*scope_job_handler_t)(ScopeJob *job, int r, const char *result, const char *message,
                                    void *userdata);

/* Starts the scope. bus must be attached to an event loop (or be driven by the caller). The
 * handler runs from that loop; *ret is the caller's to free, also after the handler ran. */
int scope_start(sd_bus *bus, const ScopeParams *p, scope_job_handler_t handler, void *userdata,
                ScopeJob **ret);
ScopeJob *scope_job_free(ScopeJob *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(ScopeJob *, scope_job_free);

/* A new connection to systemd: address, else (as root) PID 1's own socket, one connection straight
 * to it without the bus daemon relaying every message, else the system bus. */
int scope_connect_systemd(const char *address, sd_bus **ret);

/* The cgroup directory of the scope unit that pid is in, from its own /proc entry (cgroup v2),
 * opened; an error naming where it is when that is not unit's. */
int scope_open_cgroup(pid_t pid, const char *unit, int *ret_fd, char **error);

/* Stops, asynchronously, every loaded unit whose name matches pattern (fire and forget: the
 * outcome is logged). For the leftovers of a service that was killed. */
int scope_stop_matching(sd_bus *bus, const char *pattern);
