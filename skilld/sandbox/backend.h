/* Limit backends: where the held sandbox child goes so that memory, tasks and CPU limits apply
 * before the first instruction of the skill runs. The engine creates the child, blocks it on a
 * hold socket, calls place() with its pid, and only then releases it (or, with self_place(), hands
 * the init the cgroups it moves itself into before anything of the run's own). So a backend is
 * "here is the held child's pid, put it where limits apply" plus reading the outcome afterwards. A backend
 * whose init places itself may leave the making of its cgroups to create(), which the engine
 * calls after the clone, while the held init builds the fixed part of its root; the init enters
 * them before anything of the run's own exists, and long before it forks the skill process:
 *   cgroup2       a cgroup v2 subtree this process may write (delegated, or created as root)
 *   cgroup1       as root, the memory, pids and cpu v1 hierarchies of hosts that still have them
 *   rlimit        per-process rlimits set inside the child, plus the engine's wall timer
 *   systemd-scope the daemon's: StartTransientUnit with the pid, through the same hooks */
#pragma once

#include <sys/types.h>

#include "engine.h"

/* What a backend learned about the run after it ended. */
typedef struct SandboxOutcome {
        bool oom;                       /* the kernel killed something for memory */
        bool tasks;                     /* a fork or clone failed on the tasks limit */
        RunUsage usage;                 /* fields it knows; RUN_USAGE_UNKNOWN elsewhere */
} SandboxOutcome;

/* Nothing observed, every figure unknown: what collect() starts from. */
#define SANDBOX_OUTCOME_INIT                                    \
        (SandboxOutcome) {                                      \
                .usage = {                                      \
                        .wall_usec = RUN_USAGE_UNKNOWN,         \
                        .user_usec = RUN_USAGE_UNKNOWN,         \
                        .system_usec = RUN_USAGE_UNKNOWN,       \
                        .memory_peak = RUN_USAGE_UNKNOWN,       \
                        .tasks_peak = RUN_USAGE_UNKNOWN,        \
                },                                              \
        }

struct SandboxBackendOps {
        const char *name;

        /* SandboxLimit bits the backend enforces by itself (timeout and output caps are the
         * engine's and always enforced). */
        unsigned enforces;
        /* Whether the child must also set the memory/tasks rlimits (the rlimit backend). */
        bool child_rlimits;

        /* Before the child exists: create what holds the limits. -EOPNOTSUPP (with a message)
         * means "not available here", so automatic selection moves on to the next backend. */
        int (*prepare)(const SandboxLimits *limits, const char *run_id, void *userdata, void **ret_state,
                       char **error);
        /* Optional, with self_place(): what prepare() left for after the clone (prepare() then only
         * decides whether the backend can be used here). Called once the init exists and before
         * self_place(); a failure kills the init, and free() removes what was made. */
        int (*create)(void *state, char **error);
        /* The held child's pid: place it where the limits apply; returns once they do. NULL when
         * the init places itself (self_place). */
        int (*place)(void *state, pid_t pid, char **error);
        /* Instead of place(): cgroup directories (open fds, at most max) whose "tasks" file the
         * init writes "0" into itself, once it has them (cgroup v1, where moving oneself is cheap
         * and moving another process is not: backend-cgroup1.c). */
        size_t (*self_place)(void *state, int *fds, size_t max);
        /* Optional, tried first: the cgroup directory fd the init is cloned into
         * (CLONE_INTO_CGROUP, cgroup v2), or -EBADF. Where the kernel refuses, place() follows. */
        int (*clone_into)(void *state);
        /* Optional: the init was born in clone_into()'s cgroup, so place() is not called; what
         * place() does besides placing it (the scope backend's oom_score_adj) happens here. */
        void (*born)(void *state);
        /* Optional: tidying that nothing of the run needs (cgroup v1: sweeping the cgroups of
         * runs whose engine was killed), called once the skill is about to start, when the engine
         * would only wait; free() does it where this was not called. */
        void (*tidy)(void *state);
        /* Kills every process still in the run's cgroup; the engine also kills the PID namespace
         * init, so this is the second line. */
        void (*kill)(void *state);
        /* After every process is gone: why it ended, from the backend's point of view, and
         * usage. */
        int (*collect)(void *state, SandboxOutcome *ret);
        /* Removes what prepare() made; NULL-safe, returns NULL. */
        void *(*free)(void *state);
};

extern const SandboxBackendOps sandbox_backend_cgroup2;
extern const SandboxBackendOps sandbox_backend_cgroup1;
extern const SandboxBackendOps sandbox_backend_rlimit;

