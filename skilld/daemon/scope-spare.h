/* A spare scope: the next run's transient scope, started ahead.
 *
 * Under systemd, what a run through the service waits for longest besides the skill itself is
 * PID 1 starting its scope (StartTransientUnit, the job, the cgroup made and the processes moved
 * in): a third of the engine's time in the VM, with the sandbox's init ready and held meanwhile.
 * So when a run has started and the service has nothing else to do, it starts the next run's
 * scope ahead: skilld-run-<id>.scope in skilld.slice for an id not handed out yet, with the limits
 * of the run that just started (MemoryMax=, TasksMax=, CPUQuotaPerSecUSec=, RuntimeMaxUSec=, as
 * worker.c sets them) and a pin in it: a child of the service that only waits for its pipe to
 * close. The next run with the same limits that can start at once gets that id and the scope: its
 * sandbox's init is cloned straight into the scope's cgroup (CLONE_INTO_CGROUP) where clone3() is
 * allowed, else (in the service, whose RestrictNamespaces= refuses clone3()) systemd moves it in
 * with one synchronous AttachProcessesToUnit, which is why the scope is delegated (Delegate=yes;
 * its cgroup stays root's, nothing the run can write). No unit to create, no job to wait for. The
 * rest is as for a scope started for the run (worker.h): the unit is named after the run's id,
 * the pin holds its cgroup until the outcome is read, and the scope goes when its processes are
 * gone.
 *
 * A spare not taken within SCOPE_SPARE_MAX_AGE_USEC goes (its pin ends, and the scope with it):
 * runs that come one after another find one; none lingers once they stop. Its RuntimeMaxUSec=
 * counts from its start, so it has that much more than a scope started for the run. */
#pragma once

#include <systemd/sd-event.h>

#include "engine.h"
#include "util.h"

#define SCOPE_SPARE_MAX_AGE_USEC (5ULL * 1000000)

typedef struct ScopeSpare ScopeSpare;

/* What the worker of the run that took the spare gets (inherited across its fork). */
typedef struct ScopeSpareHandout {
        const char *unit;
        pid_t pin;
        int pin_fd;                     /* the write end of the pin's pipe: closing it ends the pin */
        int cgroup_fd;                  /* the scope's cgroup directory */
} ScopeSpareHandout;

/* Called once when the spare can no longer serve (systemd refused it, or it grew too old), from
 * event's loop: the owner frees it. */
typedef void (*scope_spare_gone_t)(ScopeSpare *s, void *userdata);

/* Starts a spare with the scope limits of limits, asynchronously on event. systemd_address as
 * for scope_connect_systemd(). */
int scope_spare_start(sd_event *event, const char *systemd_address, const SandboxLimits *limits,
                      scope_spare_gone_t gone, void *userdata, ScopeSpare **ret);
ScopeSpare *scope_spare_free(ScopeSpare *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(ScopeSpare *, scope_spare_free);

/* Whether s is in place and may serve a run with these limits: the same memory, tasks, CPU and
 * timeout. */
bool scope_spare_fits(const ScopeSpare *s, const SandboxLimits *limits);

/* The run id the scope is named after. */
const char *scope_spare_id(const ScopeSpare *s);

/* How long ago it was asked for: its RuntimeMaxUSec= counts from about then. */
uint64_t scope_spare_age_usec(const ScopeSpare *s);

/* For the worker; then, once it is forked, scope_spare_handed(): our ends of the fds go, so that
 * the worker's end of the pin's pipe is the last one, and the spare no longer expires. */
void scope_spare_handout(const ScopeSpare *s, ScopeSpareHandout *ret);
void scope_spare_handed(ScopeSpare *s);
