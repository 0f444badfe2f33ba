/* The rlimit backend: what limits a run where no cgroup can be had. The child sets RLIMIT_DATA
 * (memory), RLIMIT_NPROC (tasks; the run's uid is its own, so the count is the run's) and the
 * RLIMIT_CPU backstop; the engine's wall timer and the PID namespace do the rest. CPU share is
 * not enforced, an allocation over the limit fails instead of being OOM-killed, and a fork over
 * the limit fails with EAGAIN: the result says this backend was in force, so nobody mistakes
 * it for cgroup accounting. */
#include "sandbox-internal.h"

static int rlimit_prepare(const SandboxLimits *limits, const char *run_id, void *userdata, void **ret_state,
                          char **error) {
        *ret_state = NULL;
        return 0;
}

static int rlimit_place(void *state, pid_t pid, char **error) {
        return 0;
}

static void rlimit_kill(void *state) {
}

static int rlimit_collect(void *state, SandboxOutcome *ret) {
        *ret = SANDBOX_OUTCOME_INIT;
        return 0;
}

static void *rlimit_free(void *state) {
        return NULL;
}

const SandboxBackendOps sandbox_backend_rlimit = {
        .name = "rlimit",
        .enforces = SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_TASKS,
        .child_rlimits = true,
        .prepare = rlimit_prepare,
        .place = rlimit_place,
        .kill = rlimit_kill,
        .collect = rlimit_collect,
        .free = rlimit_free,
};
