/* The cgroup v1 backend, for hosts that still keep memory, pids and cpu in v1 hierarchies (the
 * "hybrid" layout, where the cgroup2 mount has no controllers). Root only: v1 has no safe
 * delegation. The run gets a child of our own cgroup in each hierarchy (v1 has no rule against
 * processes in inner cgroups), with memory.limit_in_bytes (and memsw where swap is accounted,
 * swappiness 0 where it is not), pids.max and the CFS quota. prepare() only finds the
 * hierarchies; the cgroups are made by create(), after the clone, while the init builds the fixed
 * part of its root, and the init moves itself into all of them once it has built that, before
 * anything of the run's own (cgroup1_self_place()). That fixed part (mounts, a few small files
 * in /etc, about 0.4 ms of CPU) is the engine's work and is charged to the engine's cgroups.
 *
 * Unlike cgroup2 there is no cgroup.kill, no group OOM kill (the kernel kills the largest
 * process, usually the one allocating) and no memory peak across the run other than
 * memory.max_usage_in_bytes, which is exactly that. */
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "error.h"
#include "fileio.h"
#include "sandbox-internal.h"

#define CPU_PERIOD_USEC 100000U

typedef enum Hierarchy {
        HIERARCHY_MEMORY,
        HIERARCHY_PIDS,
        HIERARCHY_CPU,
        HIERARCHY_CPUACCT,      /* usage only; optional */
        _HIERARCHY_MAX,
} Hierarchy;

static const char *const hierarchy_name[_HIERARCHY_MAX] = {
        [HIERARCHY_MEMORY] = "memory",
        [HIERARCHY_PIDS] = "pids",
        [HIERARCHY_CPU] = "cpu",
        [HIERARCHY_CPUACCT] = "cpuacct",
};

typedef struct Cgroup1 {
        const SandboxLimits *limits;    /* the request's, which outlives the run */
        char *run_id;
        char *parent[_HIERARCHY_MAX];   /* where the run's cgroup goes; NULL: not used */
        char *path[_HIERARCHY_MAX];     /* NULL where not created */
        int fd[_HIERARCHY_MAX];
        bool created;                   /* create() was called: the run uses this backend */
        bool swept;
} Cgroup1;

/* The runs of engines that were killed (SIGKILL) left their cgroups behind; every run sweeps them
 * once, what nothing holds and nothing is in. Not on the way to the skill's start, where listing
 * the parents and trying the locks of the live runs' cgroups took about 0.05 ms before the init
 * could enter its own: while the skill starts (cgroup1_tidy()), or at the end where the run never
 * got that far. Not by a prepare() that failed (the engine moves on to another backend). */
static void sweep(Cgroup1 *cg) {
        if (cg->swept || !cg->created)
                return;
        cg->swept = true;
        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++)
                if (cg->parent[h])
                        cg_sweep_dead(cg->parent[h], "skilld-run-");
}

static void *cgroup1_free(void *state) {
        Cgroup1 *cg = state;

        if (!cg)
                return NULL;
        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++) {
                /* With cpu and cpuacct co-mounted the second rmdir() finds nothing: harmless. */
                if (cg->path[h])
                        cg_remove(cg->path[h]);
                (void) safe_close(cg->fd[h]);
                free(cg->path[h]);
        }
        sweep(cg);
        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++)
                free(cg->parent[h]);
        free(cg->run_id);
        free(cg);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Cgroup1 *, cgroup1_free);

/* Where the run's cgroup goes in one hierarchy: /sys/fs/cgroup/<name> must be a v1 mount. */
static int find_parent(Cgroup1 *cg, Hierarchy h, const char *own_cgroups, char **error) {
        _cleanup_free_ char *own = NULL;
        char mnt[64];
        struct statfs sf;
        int r;

        (void) snprintf(mnt, sizeof(mnt), "/sys/fs/cgroup/%s", hierarchy_name[h]);
        if (statfs(mnt, &sf) < 0 || (uint64_t) sf.f_type != (uint64_t) CGROUP_SUPER_MAGIC)
                return error_setf(error, -EOPNOTSUPP, "no cgroup v1 %s hierarchy is mounted",
                                  hierarchy_name[h]);
        r = cg_own_path_in(own_cgroups, hierarchy_name[h], &own);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_setf(error, -EOPNOTSUPP, "this process is in no v1 %s cgroup",
                                  hierarchy_name[h]);
        cg->parent[h] = strdup_printf("%s%s", mnt, streq(own, "/") ? "" : own);
        return cg->parent[h] ? 0 : -ENOMEM;
}

/* Creates the run's cgroup in one hierarchy, below the parent find_parent() found. */
static int create_in(Cgroup1 *cg, Hierarchy h, char **error) {
        _cleanup_free_ char *path = NULL;
        int r;

        path = strdup_printf("%s/skilld-run-%s", cg->parent[h], cg->run_id);
        if (!path)
                return -ENOMEM;
        /* cpu and cpuacct co-mounted: the same directory, created once (and locked by cpu's fd). */
        r = cg_create_locked(path, &cg->fd[h]);
        if (r == -EEXIST && h == HIERARCHY_CPUACCT) {
                cg->fd[h] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = cg->fd[h] < 0 ? -errno : 0;
        }
        if (r < 0)
                return error_setf(error, r, "Failed to create %s: %s", path, strerror(-r));
        cg->path[h] = TAKE_PTR(path);
        return 0;
}

/* Whether the hierarchies are there and we are in them; the cgroups themselves are made by
 * cgroup1_create(), after the clone, while the held init builds the fixed part of its root
 * (it enters them before anything of the run's own is made). */
static int cgroup1_prepare(const SandboxLimits *limits, const char *run_id, void *userdata, void **ret_state,
                           char **error) {
        _cleanup_(cgroup1_freep) Cgroup1 *cg = NULL;
        _cleanup_free_ char *own_cgroups = NULL;
        int r;

        if (geteuid() != 0)
                return error_setf(error, -EOPNOTSUPP, "cgroup v1 limits need root");
        r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, false, &own_cgroups, NULL);
        if (r < 0)
                return error_setf(error, r, "Failed to read /proc/self/cgroup: %s", strerror(-r));

        cg = calloc(1, sizeof(Cgroup1));
        if (!cg)
                return -ENOMEM;
        cg->limits = limits;
        cg->run_id = strdup(run_id);
        if (!cg->run_id)
                return -ENOMEM;
        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++)
                cg->fd[h] = -EBADF;

        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++) {
                /* Without cpuacct the usage figures come from the init's rusage. */
                r = find_parent(cg, h, own_cgroups, h == HIERARCHY_CPUACCT ? NULL : error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && h != HIERARCHY_CPUACCT)
                        return r;
        }
        *ret_state = TAKE_PTR(cg);
        return 0;
}

static int cgroup1_create(void *state, char **error) {
        Cgroup1 *cg = state;
        const SandboxLimits *limits = cg->limits;
        char buf[64];
        int r;

        cg->created = true;
        for (Hierarchy h = 0; h < _HIERARCHY_MAX; h++) {
                if (!cg->parent[h])
                        continue;
                r = create_in(cg, h, h == HIERARCHY_CPUACCT ? NULL : error);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && h != HIERARCHY_CPUACCT)
                        return r;
        }

        (void) snprintf(buf, sizeof(buf), "%" PRIu64, limits->memory_max);
        r = cg_write(cg->fd[HIERARCHY_MEMORY], "memory.limit_in_bytes", buf);
        if (r < 0)
                return error_setf(error, r, "Failed to set memory.limit_in_bytes: %s", strerror(-r));
        /* memory+swap equal to memory: no swap. Without swap accounting the file is missing, and
         * swappiness 0 keeps the cgroup's pages out of swap instead. */
        r = cg_write(cg->fd[HIERARCHY_MEMORY], "memory.memsw.limit_in_bytes", buf);
        if (r == -ENOENT)
                r = cg_write(cg->fd[HIERARCHY_MEMORY], "memory.swappiness", "0");
        if (r < 0)
                return error_setf(error, r, "Failed to keep the run out of swap: %s", strerror(-r));

        /* Socket buffers: v1 charges them to the group (to a counter of their own, the TCP one,
         * which every inet socket of the group uses) only once this limit is written. Without it a
         * skill pins any amount of host memory in loopback queues it never reads. The same size
         * as the memory limit: the two counters are separate, so a run may hold up to twice it,
         * which the README states. */
        (void) snprintf(buf, sizeof(buf), "%" PRIu64, limits->memory_max);
        r = cg_write(cg->fd[HIERARCHY_MEMORY], "memory.kmem.tcp.limit_in_bytes", buf);
        if (r < 0)
                return error_setf(error, r, "Failed to set memory.kmem.tcp.limit_in_bytes: %s",
                                  strerror(-r));

        (void) snprintf(buf, sizeof(buf), "%" PRIu64, limits->tasks_max);
        r = cg_write(cg->fd[HIERARCHY_PIDS], "pids.max", buf);
        if (r < 0)
                return error_setf(error, r, "Failed to set pids.max: %s", strerror(-r));

        (void) snprintf(buf, sizeof(buf), "%u", CPU_PERIOD_USEC);
        r = cg_write(cg->fd[HIERARCHY_CPU], "cpu.cfs_period_us", buf);
        if (r >= 0) {
                (void) snprintf(buf, sizeof(buf), "%" PRIu64,
                                (uint64_t) limits->cpu_percent * CPU_PERIOD_USEC / 100);
                r = cg_write(cg->fd[HIERARCHY_CPU], "cpu.cfs_quota_us", buf);
        }
        if (r < 0)
                return error_setf(error, r, "Failed to set the CPU quota: %s", strerror(-r));

        return 0;
}

/* Moving another process between v1 cgroups takes cgroup_threadgroup_rwsem for writing (with
 * cgroup_mutex held), and the first writer after a quiet spell waits for an RCU grace period
 * (rcu_sync_enter()): 5 to 15 ms on a loaded host, during which the held init sits idle and every
 * other cgroup operation of the host waits too. A thread moving itself through "tasks" needs
 * neither lock, and the init is a single thread: it writes "0" into each hierarchy's "tasks"
 * itself, once the engine sent it these fds (HOLD_CGROUPS). */
static size_t cgroup1_self_place(void *state, int *fds, size_t max) {
        Cgroup1 *cg = state;
        size_t n = 0;

        for (Hierarchy h = 0; h < _HIERARCHY_MAX && n < max; h++)
                if (cg->fd[h] >= 0)
                        fds[n++] = cg->fd[h];
        return n;
}

static void cgroup1_tidy(void *state) {
        sweep(state);
}

static void cgroup1_kill(void *state) {
        Cgroup1 *cg = state;

        /* Every process of the run is in the pids cgroup (pids can only be left by moving, which
         * needs privileges the run does not have). */
        cg_kill_listed(cg->fd[HIERARCHY_PIDS]);
}

static int cgroup1_collect(void *state, SandboxOutcome *ret) {
        Cgroup1 *cg = state;
        SandboxOutcome o = SANDBOX_OUTCOME_INIT;
        uint64_t v;

        /* "oom_kill" in memory.oom_control since Linux 4.13. */
        if (cg_read_key(cg->fd[HIERARCHY_MEMORY], "memory.oom_control", "oom_kill", &v) >= 0 && v > 0)
                o.oom = true;
        if (cg_read_key(cg->fd[HIERARCHY_PIDS], "pids.events", "max", &v) >= 0 && v > 0)
                o.tasks = true;
        if (cg_read_u64(cg->fd[HIERARCHY_MEMORY], "memory.max_usage_in_bytes", &v) >= 0) {
                uint64_t tcp;

                /* Socket buffers have their own counter here (v2 counts them in memory.peak):
                 * the peak the run reports holds both, an upper bound where they did not peak at
                 * the same moment, rather than a figure that leaves out what the host kept. */
                if (cg_read_u64(cg->fd[HIERARCHY_MEMORY], "memory.kmem.tcp.max_usage_in_bytes", &tcp) >= 0)
                        v += tcp;
                o.usage.memory_peak = v;
        }
        if (cg->fd[HIERARCHY_CPUACCT] >= 0) {
                /* Nanoseconds. */
                if (cg_read_u64(cg->fd[HIERARCHY_CPUACCT], "cpuacct.usage_user", &v) >= 0)
                        o.usage.user_usec = v / 1000;
                if (cg_read_u64(cg->fd[HIERARCHY_CPUACCT], "cpuacct.usage_sys", &v) >= 0)
                        o.usage.system_usec = v / 1000;
        }
        *ret = o;
        return 0;
}

const SandboxBackendOps sandbox_backend_cgroup1 = {
        .name = "cgroup1",
        .enforces = SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_TASKS | SANDBOX_LIMIT_CPU,
        .child_rlimits = false,
        .prepare = cgroup1_prepare,
        .create = cgroup1_create,
        .self_place = cgroup1_self_place,
        .tidy = cgroup1_tidy,
        .kill = cgroup1_kill,
        .collect = cgroup1_collect,
        .free = cgroup1_free,
};
