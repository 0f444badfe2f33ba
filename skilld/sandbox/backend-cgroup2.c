/* The cgroup v2 backend: each run gets its own cgroup with memory.max (swap 0), pids.max and
 * cpu.max; the init is cloned into it (before Linux 5.7, written into it while held) before it
 * runs a single instruction of the skill, and memory.events, pids.events, memory.peak and
 * cpu.stat say afterwards how the run went.
 *
 * Where the run's cgroup goes:
 *   - our own cgroup, if it was delegated to us (systemd's Delegate=yes: the files are ours, or
 *     the trusted.delegate xattr is set). The no-internal-processes rule means we first move
 *     ourselves into a leaf "supervisor" child, then enable the controllers for the children.
 *   - as root otherwise, a "skilld" cgroup under the cgroup2 root, when the root offers the
 *     memory, pids and cpu controllers.
 * Anything else (cgroup v1 hosts, a hybrid layout whose cgroup2 has no controllers, an
 * unprivileged caller without delegation) is -EOPNOTSUPP: "not here", and the engine falls back
 * to rlimits where the policy allows. */
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include "error.h"
#include "fileio.h"
#include "parse-util.h"
#include "sandbox-internal.h"

#define CPU_PERIOD_USEC 100000U

typedef struct Cgroup2 {
        char *path;                     /* the run's cgroup */
        int fd;
} Cgroup2;

static bool has_controllers(const char *dir) {
        static const char *const needed[] = { "memory", "pids", "cpu" };
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;

        if (fd < 0 || cg_read(fd, "cgroup.controllers", &text) < 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(needed); i++) {
                bool found = false;
                size_t n = strlen(needed[i]);

                for (const char *p = text; (p = strstr(p, needed[i])); p += n)
                        if ((p == text || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
                                found = true;
                if (!found)
                        return false;
        }
        return true;
}

static int find_mount(const char **ret) {
        static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++) {
                struct statfs sf;

                if (statfs(candidates[i],
                           &sf) >= 0 && (uint64_t) sf.f_type == (uint64_t) CGROUP2_SUPER_MAGIC) {
                        *ret = candidates[i];
                        return 0;
                }
        }
        return -EOPNOTSUPP;
}

static bool is_delegated(const char *dir) {
        char v[8] = {};
        _cleanup_free_ char *procs = NULL, *subtree = NULL;

        procs = strjoin_path(dir, "cgroup.procs");
        subtree = strjoin_path(dir, "cgroup.subtree_control");
        if (!procs || !subtree || access(procs, W_OK) < 0 || access(subtree, W_OK) < 0)
                return false;
        /* Root can write everywhere; for it, only the marker systemd sets on delegated cgroups
         * counts, or we would take over a cgroup that some manager still owns. */
        if (geteuid() != 0)
                return true;
        return getxattr(dir, "trusted.delegate", v, sizeof(v) - 1) > 0 && v[0] == '1';
}

/* Makes dir able to hold the run cgroups: controllers enabled for its children. In a delegated
 * cgroup we live in, we first move into a leaf child of our own. */
static int make_parent(const char *dir, bool move_self, char **error) {
        int r;

        if (move_self) {
                _cleanup_free_ char *leaf = strjoin_path(dir, "supervisor");

                if (!leaf)
                        return -ENOMEM;
                if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
                        return error_setf(error, -errno, "Failed to create %s: %m", leaf);
                r = cg_write_path(leaf, "cgroup.procs", "0");
                if (r < 0)
                        return error_setf(error, r, "Failed to move into %s: %s", leaf, strerror(-r));
        }
        r = cg_write_path(dir, "cgroup.subtree_control", "+memory +pids +cpu");
        if (r == -EBUSY)
                return error_setf(error, -EOPNOTSUPP, "%s holds other processes, so its children cannot get "
                                  "controllers", dir);
        if (r < 0)
                return error_setf(error, r, "Failed to enable controllers in %s: %s", dir, strerror(-r));
        return 0;
}

static int cgroup2_prepare(const SandboxLimits *limits, const char *run_id, void *userdata, void **ret_state,
                           char **error) {
        _cleanup_free_ char *own = NULL, *own_dir = NULL, *parent = NULL, *name = NULL;
        _cleanup_free_ Cgroup2 *cg = NULL;
        char buf[64];
        const char *mnt;
        int r;

        if (find_mount(&mnt) < 0)
                return error_setf(error, -EOPNOTSUPP, "no cgroup2 file system is mounted");
        /* A cgroup's controllers are a subset of its parent's, so where the hierarchy's root
         * lacks memory, pids or cpu (the hybrid layout, whose cgroup2 mount has them in v1
         * hierarchies), no cgroup of it has them and neither branch below could be taken.
         * Answered first, so that such a host does not read /proc/self/cgroup here and again in
         * the v1 backend. */
        if (!has_controllers(mnt))
                return error_setf(error, -EOPNOTSUPP,
                                  "the cgroup2 hierarchy at %s has no memory, pids and cpu controllers", mnt);
        r = cg_own_path(NULL, &own);
        if (r < 0)
                return error_setf(error, -EOPNOTSUPP, "this process is in no cgroup2 cgroup");
        own_dir = strdup_printf("%s%s", mnt, streq(own, "/") ? "" : own);
        if (!own_dir)
                return -ENOMEM;

        if (!streq(own, "/") && is_delegated(own_dir) && has_controllers(own_dir)) {
                parent = TAKE_PTR(own_dir);
                r = make_parent(parent, true, error);
        } else if (geteuid() == 0) {
                r = cg_write_path(mnt, "cgroup.subtree_control", "+memory +pids +cpu");
                if (r < 0)
                        return error_setf(error, r, "Failed to enable controllers at %s: %s", mnt,
                                          strerror(-r));
                parent = strjoin_path(mnt, "skilld");
                if (!parent)
                        return -ENOMEM;
                if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                        return error_setf(error, -errno, "Failed to create %s: %m", parent);
                r = make_parent(parent, false, error);
        } else
                return error_setf(error, -EOPNOTSUPP, "the cgroup2 hierarchy at %s was not delegated "
                                  "to this user", mnt);
        if (r < 0)
                return r;

        cg = calloc(1, sizeof(Cgroup2));
        if (!cg)
                return -ENOMEM;
        cg->fd = -EBADF;
        name = strdup_printf("run-%s", run_id);
        cg->path = name ? strjoin_path(parent, name) : NULL;
        if (!cg->path)
                return -ENOMEM;
        cg_sweep_dead(parent, "run-");
        r = cg_create_locked(cg->path, &cg->fd);
        if (r < 0) {
                r = error_setf(error, r, "Failed to create %s: %s", cg->path, strerror(-r));
                free(cg->path);
                return r;
        }

        (void) snprintf(buf, sizeof(buf), "%" PRIu64, limits->memory_max);
        r = cg_write(cg->fd, "memory.max", buf);
        if (r < 0) {
                r = error_setf(error, r, "Failed to set memory.max: %s", strerror(-r));
                goto fail;
        }
        /* Without swap accounting the file is missing, and then no swap is charged either. */
        r = cg_write(cg->fd, "memory.swap.max", "0");
        if (r < 0 && r != -ENOENT) {
                r = error_setf(error, r, "Failed to set memory.swap.max: %s", strerror(-r));
                goto fail;
        }
        /* One OOM kill takes the whole run, as systemd's OOMPolicy=kill: a half-killed run
         * would only produce confusing results. */
        (void) cg_write(cg->fd, "memory.oom.group", "1");
        (void) snprintf(buf, sizeof(buf), "%" PRIu64, limits->tasks_max);
        r = cg_write(cg->fd, "pids.max", buf);
        if (r < 0) {
                r = error_setf(error, r, "Failed to set pids.max: %s", strerror(-r));
                goto fail;
        }
        (void) snprintf(buf, sizeof(buf), "%" PRIu64 " %u",
                        (uint64_t) limits->cpu_percent * CPU_PERIOD_USEC / 100, CPU_PERIOD_USEC);
        r = cg_write(cg->fd, "cpu.max", buf);
        if (r < 0) {
                r = error_setf(error, r, "Failed to set cpu.max: %s", strerror(-r));
                goto fail;
        }

        *ret_state = TAKE_PTR(cg);
        return 0;

fail:
        (void) rmdir(cg->path);
        (void) safe_close(cg->fd);
        free(cg->path);
        return r;
}

static int cgroup2_place(void *state, pid_t pid, char **error) {
        Cgroup2 *cg = state;
        char buf[32];
        int r;

        (void) snprintf(buf, sizeof(buf), "%d", (int) pid);
        r = cg_write(cg->fd, "cgroup.procs", buf);
        if (r < 0)
                return error_setf(error, r, "Failed to move the sandbox into %s: %s", cg->path,
                                  strerror(-r));
        return 0;
}

static int cgroup2_clone_into(void *state) {
        Cgroup2 *cg = state;

        return cg->fd;
}

static void cgroup2_kill(void *state) {
        Cgroup2 *cg = state;

        /* Before Linux 5.14 there is no cgroup.kill: then kill what is listed until nothing is. */
        if (cg_write(cg->fd, "cgroup.kill", "1") < 0)
                cg_kill_listed(cg->fd);
}

static int cgroup2_collect(void *state, SandboxOutcome *ret) {
        Cgroup2 *cg = state;
        SandboxOutcome o = SANDBOX_OUTCOME_INIT;
        uint64_t v;

        if (cg_read_key(cg->fd, "memory.events", "oom_kill", &v) >= 0 && v > 0)
                o.oom = true;
        if (cg_read_key(cg->fd, "memory.events", "oom_group_kill", &v) >= 0 && v > 0)
                o.oom = true;
        if (cg_read_key(cg->fd, "pids.events", "max", &v) >= 0 && v > 0)
                o.tasks = true;
        if (cg_read_key(cg->fd, "cpu.stat", "user_usec", &v) >= 0)
                o.usage.user_usec = v;
        if (cg_read_key(cg->fd, "cpu.stat", "system_usec", &v) >= 0)
                o.usage.system_usec = v;
        /* memory.peak since 5.19, pids.peak since 6.1 (newer kernels only). */
        if (cg_read_u64(cg->fd, "memory.peak", &v) >= 0)
                o.usage.memory_peak = v;
        if (cg_read_u64(cg->fd, "pids.peak", &v) >= 0)
                o.usage.tasks_peak = v;
        *ret = o;
        return 0;
}

static void *cgroup2_free(void *state) {
        Cgroup2 *cg = state;

        if (!cg)
                return NULL;
        cg_remove(cg->path);
        (void) safe_close(cg->fd);
        free(cg->path);
        free(cg);
        return NULL;
}

const SandboxBackendOps sandbox_backend_cgroup2 = {
        .name = "cgroup2",
        .enforces = SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_TASKS | SANDBOX_LIMIT_CPU,
        .child_rlimits = false,
        .prepare = cgroup2_prepare,
        .place = cgroup2_place,
        .clone_into = cgroup2_clone_into,
        .kill = cgroup2_kill,
        .collect = cgroup2_collect,
        .free = cgroup2_free,
};
