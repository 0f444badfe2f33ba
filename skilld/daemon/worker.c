/* See worker.h. Three processes live here: the worker itself, the pin that holds the run's scope
 * open, and the follower that copies the live logs to the caller. */
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>

#include "error.h"
#include "fileio.h"
#include "parse-util.h"
#include "sandbox-internal.h"
#include "scope.h"
#include "worker.h"

/* The service this worker runs for; set in the service before fork(), so the worker inherits it. */
static pid_t service_pid = 0;

#define ENGINE_DIR ".#engine"
/* The engine's own limit of an input. */
#define INPUT_MAX (64U * 1024U * 1024U)
/* How long systemd may take to start a scope before the run fails. */
#define SCOPE_START_TIMEOUT_USEC (60ULL * 1000000)
/* How long the worker waits for the follower to hand the end of the output over. */
#define FOLLOWER_WAIT_MSEC 5000
/* And how long the follower then goes on alone for a slow reader, before giving up. */
#define FOLLOWER_LINGER_SEC 30U

/* ---- The systemd-scope backend ---- */

typedef struct ScopeState {
        const ScopeConfig *config;
        SandboxLimits limits;
        char *unit;
        pid_t pin;
        int pin_fd;                     /* write end of the pin's pipe: closing it ends the pin */
        int cgroup_fd;
        char oom_adj[16];               /* ours before we raised it, "" when not raised */
        bool job_done;
        int job_r;
        char *job_result;
        char *job_message;
        sd_bus *bus;                    /* to systemd, opened in prepare(), or NULL */
        bool spare;                     /* the scope was started ahead (scope-spare.h) */
} ScopeState;

static int write_oom_adj(const char *value) {
        _cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return loop_write(fd, value, strlen(value));
}

/* The pin: a process of the service in the run's scope, doing nothing but keeping the scope
 * populated until the engine has read the outcome. It ends when its pipe is closed (by us, or by
 * the worker's death) and dies with the worker anyway. */
int worker_pin_spawn(pid_t *ret_pid, int *ret_fd) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        pid_t parent = getpid(), pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char c;

                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                (void) close_all_fds_except(&p[0], 1);
                (void) prctl(PR_SET_NAME, (unsigned long) "skilld-pin", 0, 0, 0);
                while (read(p[0], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(EXIT_SUCCESS);
        }
        *ret_pid = pid;
        *ret_fd = TAKE_FD(p[1]);
        return 0;
}

static void pin_release(ScopeState *s) {
        s->pin_fd = safe_close(s->pin_fd);
        if (s->pin > 0) {
                while (waitpid(s->pin, NULL, 0) < 0 && errno == EINTR)
                        ;
                s->pin = 0;
        }
}

static int scope_prepare(const SandboxLimits *limits, const char *run_id, void *userdata, void **ret_state,
                         char **error) {
        _cleanup_free_ ScopeState *s = NULL;
        _cleanup_free_ char *adj = NULL;
        int r;

        s = calloc(1, sizeof(ScopeState));
        if (!s)
                return -ENOMEM;
        s->config = userdata;
        s->limits = *limits;
        s->pin_fd = s->cgroup_fd = -EBADF;
        s->unit = scope_unit_name(run_id);
        if (!s->unit)
                return -ENOMEM;

        /* systemd's side of the connection (accepting, authenticating us) goes on while we fork
         * the pin and the engine clones the sandbox: place() has only its call to make. The pin
         * and the sandbox close every fd they inherit, this one too, before anything else. A
         * failure here is tried again in place(). */
        (void) scope_connect_systemd(s->config->systemd_address, &s->bus);

        if (s->config->spare) {
                /* The scope is there already, the pin in it and the limits applied: the sandbox is
                 * cloned into its cgroup (clone_into()) or, where clone3() is refused (the
                 * service's RestrictNamespaces=), moved in by place(). */
                if (!streq(s->config->spare->unit, s->unit)) {
                        sd_bus_flush_close_unref(s->bus);
                        free(s->unit);
                        return error_setf(error, -EINVAL, "The scope started ahead is %s, not the run's",
                                          s->config->spare->unit);
                }
                s->spare = true;
                s->pin = s->config->spare->pin;
                s->pin_fd = s->config->spare->pin_fd;
                s->cgroup_fd = s->config->spare->cgroup_fd;
        } else {
                r = worker_pin_spawn(&s->pin, &s->pin_fd);
                if (r < 0) {
                        sd_bus_flush_close_unref(s->bus);
                        free(s->unit);
                        return error_setf(error, r, "Failed to start the scope's pin process: %s",
                                          strerror(-r));
                }
        }

        /* The sandbox child, cloned next, inherits our oom_score_adj: 1000 makes its processes the
         * OOM killer's first choice in the scope (never the pin, which keeps ours) and outside of
         * it, where an untrusted run is the right thing to lose first. place() (or born(), for a
         * child cloned into the spare scope) lowers ours again, which needs no privilege down to
         * where we started. */
        if (read_full_file_at(AT_FDCWD, "/proc/self/oom_score_adj", 64, true, &adj, NULL) >= 0) {
                adj[strcspn(adj, "\n")] = '\0';
                if (strlen(adj) < sizeof(s->oom_adj) && write_oom_adj("1000") >= 0)
                        memcpy(s->oom_adj, adj, strlen(adj) + 1);
        }

        *ret_state = TAKE_PTR(s);
        return 0;
}

static void oom_adj_restore(ScopeState *s) {
        if (s->oom_adj[0] == '\0')
                return;
        (void) write_oom_adj(s->oom_adj);
        s->oom_adj[0] = '\0';
}

static void on_scope_job(ScopeJob *job, int r, const char *result, const char *message, void *userdata) {
        ScopeState *s = userdata;

        s->job_done = true;
        s->job_r = r;
        s->job_result = result ? strdup(result) : NULL;
        s->job_message = message ? strdup(message) : NULL;
}

/* Starts the scope p and waits until systemd's job is done: only then are the processes in it
 * with its limits applied. s receives the job's outcome; *connected, when set, is the connection
 * to use (taken). */
static int scope_start_wait(const char *systemd_address, sd_bus **connected, const ScopeParams *p, ScopeState *s,
                            char **error) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = connected ? TAKE_PTR(*connected) : NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(scope_job_freep) ScopeJob *job = NULL;
        uint64_t deadline, now;
        int r;

        r = bus ? 0 : scope_connect_systemd(systemd_address, &bus);
        if (r < 0)
                return error_setf(error, r, "Failed to connect to systemd: %s", strerror(-r));
        r = sd_event_new(&event);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;

        r = scope_start(bus, p, on_scope_job, s, &job);
        if (r < 0)
                return error_setf(error, r, "Failed to ask systemd for the scope %s: %s", p->unit,
                                  strerror(-r));

        deadline = now_usec(CLOCK_MONOTONIC) + SCOPE_START_TIMEOUT_USEC;
        while (!s->job_done) {
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return error_setf(error, -ETIMEDOUT, "systemd did not start the scope %s in time",
                                          p->unit);
                r = sd_event_run(event, deadline - now);
                if (r < 0)
                        return error_setf(error, r, "Failed to wait for the scope %s: %s", p->unit,
                                          strerror(-r));
        }
        if (s->job_r < 0)
                return error_setf(error, s->job_r, "systemd refused the scope %s: %s", p->unit,
                                  s->job_message ?: strerror(-s->job_r));
        if (!streq_ptr(s->job_result, "done"))
                return error_setf(error, -EIO, "Starting the scope %s ended with \"%s\"", p->unit,
                                  strna(s->job_result));
        return 0;
}

static int scope_clone_into(void *state) {
        ScopeState *s = state;

        return s->spare ? s->cgroup_fd : -EBADF;
}

static void scope_born(void *state) {
        oom_adj_restore(state);
}

/* The sandbox into the scope started ahead, where it could not be cloned into it: systemd moves it
 * (the scope is delegated for that), synchronously, as it would have at the scope's start. Our
 * view of /sys/fs/cgroup is read-only (ProtectControlGroups=), and systemd's the right hand. */
static int spare_attach(ScopeState *s, pid_t pid, char **error) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = s->bus ? 0 : scope_connect_systemd(s->config->systemd_address, &s->bus);
        if (r < 0)
                return error_setf(error, r, "Failed to connect to systemd: %s", strerror(-r));
        r = sd_bus_call_method(s->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "AttachProcessesToUnit", &e, NULL,
                               "ssau", s->unit, "", 1, (uint32_t) pid);
        if (r < 0)
                return error_setf(error, r, "systemd did not move the sandbox into %s: %s", s->unit,
                                  e.message ?: strerror(-r));
        return 0;
}

static int scope_place(void *state, pid_t pid, char **error) {
        ScopeState *s = state;
        pid_t pids[2] = { pid, s->pin };
        ScopeParams p = {
                .unit = s->unit,
                .slice = SCOPE_SLICE,
                .description = s->config->description,
                .pids = pids,
                .n_pids = ELEMENTSOF(pids),
                .memory_max = s->limits.memory_max,
                /* The pin is one task of the scope. */
                .tasks_max = s->limits.tasks_max + 1,
                .cpu_quota_per_sec_usec = (uint64_t) s->limits.cpu_percent * 10000U,
                .runtime_max_usec = s->limits.timeout_usec + WORKER_SCOPE_GRACE_USEC,
        };
        int r;

        oom_adj_restore(s);

        if (s->spare) {
                _cleanup_close_ int fd = -EBADF;

                r = spare_attach(s, pid, error);
                if (r < 0)
                        return r;
                /* SECURITY: as for a scope started for the run, the limits are only where
                 * systemd said. */
                return scope_open_cgroup(pid, s->unit, &fd, error);
        }

        r = scope_start_wait(s->config->systemd_address, &s->bus, &p, s, error);
        if (r < 0)
                return r;
        return scope_open_cgroup(pid, s->unit, &s->cgroup_fd, error);
}

static void scope_kill(void *state) {
        ScopeState *s = state;

        if (s->cgroup_fd < 0)
                return;
        /* Every process of the scope but the pin, until none is left. The run's processes are in
         * a PID namespace whose init the engine killed, so new ones cannot appear for long. */
        for (unsigned attempt = 0; attempt < 100; attempt++) {
                _cleanup_free_ char *procs = NULL;
                bool any = false;

                if (cg_read(s->cgroup_fd, "cgroup.procs", &procs) < 0)
                        return;
                for (char *line = procs, *next; line && *line; line = next) {
                        unsigned pid;

                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        if (safe_atou(line, &pid) < 0 || (pid_t) pid == s->pin)
                                continue;
                        (void) kill((pid_t) pid, SIGKILL);
                        any = true;
                }
                if (!any)
                        return;
                (void) usleep(10000);
        }
}

static int scope_collect(void *state, SandboxOutcome *ret) {
        ScopeState *s = state;
        SandboxOutcome o = SANDBOX_OUTCOME_INIT;
        uint64_t v;

        if (s->cgroup_fd >= 0) {
                if (cg_read_key(s->cgroup_fd, "memory.events", "oom_kill", &v) >= 0 && v > 0)
                        o.oom = true;
                if (cg_read_key(s->cgroup_fd, "memory.events", "oom_group_kill", &v) >= 0 && v > 0)
                        o.oom = true;
                if (cg_read_key(s->cgroup_fd, "pids.events", "max", &v) >= 0 && v > 0)
                        o.tasks = true;
                if (cg_read_key(s->cgroup_fd, "cpu.stat", "user_usec", &v) >= 0)
                        o.usage.user_usec = v;
                if (cg_read_key(s->cgroup_fd, "cpu.stat", "system_usec", &v) >= 0)
                        o.usage.system_usec = v;
                if (cg_read_u64(s->cgroup_fd, "memory.peak", &v) >= 0)
                        o.usage.memory_peak = v;
                if (cg_read_u64(s->cgroup_fd, "pids.peak", &v) >= 0 && v > 0)
                        o.usage.tasks_peak = v - 1; /* not counting the pin */
        }
        /* Read: the scope may go now. */
        pin_release(s);
        *ret = o;
        return 0;
}

static void *scope_free(void *state) {
        ScopeState *s = state;

        if (!s)
                return NULL;
        oom_adj_restore(s);
        pin_release(s);
        (void) safe_close(s->cgroup_fd);
        sd_bus_flush_close_unref(s->bus);
        free(s->unit);
        free(s->job_result);
        free(s->job_message);
        free(s);
        return NULL;
}

const SandboxBackendOps worker_scope_backend = {
        .name = "systemd-scope",
        .enforces = SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_TASKS | SANDBOX_LIMIT_CPU,
        .child_rlimits = false,
        .prepare = scope_prepare,
        .place = scope_place,
        .clone_into = scope_clone_into,
        .born = scope_born,
        .kill = scope_kill,
        .collect = scope_collect,
        .free = scope_free,
};

/* ---- The follower ---- */

/* Writes all of buf to a caller's fd, which may be non-blocking. */
static int write_all(int fd, const char *buf, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, buf, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                (void) poll(&(struct pollfd) { .fd = fd, .events = POLLOUT }, 1, -1);
                                continue;
                        }
                        return -errno;
                }
                buf += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Copies what the log has beyond what was copied; a reader that went away ends that copy. */
static void follow_copy(int log_fd, int *client_fd) {
        char buf[64 * 1024];

        while (*client_fd >= 0) {
                ssize_t n = read(log_fd, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                if (write_all(*client_fd, buf, (size_t) n) < 0)
                        *client_fd = safe_close(*client_fd);
        }
}

/* Ends the follower once the caller has all the output: the caller's fds and the handed-over pipe
 * closed first, so that the worker goes on at once. Only then does _exit() tear down the rest; the
 * inotify instance's teardown alone waits for an SRCU grace period (several ms), which the worker
 * and with it the run's end used to wait for. */
_noreturn_ static void follower_exit(int client_out, int client_err, int handed_fd, int status) {
        (void) safe_close(client_out);
        (void) safe_close(client_err);
        (void) safe_close(handed_fd);
        _exit(status);
}

_noreturn_ static void follower_main(int out_log, int err_log, int client_out, int client_err, int done_fd,
                                     int handed_fd) {
        const int keep[] = { out_log, err_log, client_out, client_err, done_fd, handed_fd };
        _cleanup_close_ int ifd = -EBADF;
        bool done = false;

        /* Writing to a pipe whose reader left must fail with EPIPE, not kill us. */
        (void) signal(SIGPIPE, SIG_IGN);
        (void) close_all_fds_except(keep, ELEMENTSOF(keep));
        (void) prctl(PR_SET_NAME, (unsigned long) "skilld-follow", 0, 0, 0);

        /* Woken by writes to the logs; a timeout covers a missed event. */
        ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ifd >= 0) {
                const int logs[] = { out_log, err_log };

                for (size_t i = 0; i < ELEMENTSOF(logs); i++) {
                        char path[64];

                        if (logs[i] < 0)
                                continue;
                        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", logs[i]);
                        (void) inotify_add_watch(ifd, path, IN_MODIFY);
                }
        }

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = done_fd, .events = POLLIN },
                        { .fd = ifd, .events = POLLIN },
                };
                bool last = done;
                char buf[4096];

                if (out_log >= 0)
                        follow_copy(out_log, &client_out);
                if (err_log >= 0)
                        follow_copy(err_log, &client_err);
                if (last || (client_out < 0 && client_err < 0))
                        follower_exit(client_out, client_err, handed_fd, EXIT_SUCCESS);

                if (poll(p, 2, 1000) < 0 && errno != EINTR)
                        follower_exit(client_out, client_err, handed_fd, EXIT_FAILURE);
                if (p[0].revents) {
                        /* The run is over (or the worker died): one last copy, bounded in time. */
                        done = true;
                        (void) alarm(FOLLOWER_LINGER_SEC);
                }
                while (ifd >= 0 && read(ifd, buf, sizeof(buf)) > 0)
                        ;
        }
}

/* Two pipes: the worker closes its end of the first when the output is complete (done), the
 * follower its end of the second when it has passed all of it on (handed). */
static int follower_spawn(int run_fd, int client_out, int client_err, pid_t *ret_pid, int *ret_done_fd,
                          int *ret_handed_fd) {
        _cleanup_close_ int out_log = -EBADF, err_log = -EBADF;
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF }, h[2] = { -EBADF, -EBADF };
        pid_t pid;

        /* Descriptions of our own, with our own offsets, of the logs the engine appends to. */
        if (client_out >= 0) {
                out_log = openat(run_fd, "stdout.log", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                if (out_log < 0)
                        return -errno;
        }
        if (client_err >= 0) {
                err_log = openat(run_fd, "stderr.log", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                if (err_log < 0)
                        return -errno;
        }
        if (pipe2(p, O_CLOEXEC) < 0 || pipe2(h, O_CLOEXEC) < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                follower_main(out_log, err_log, client_out, client_err, p[0], h[1]);
        *ret_pid = pid;
        *ret_done_fd = TAKE_FD(p[1]);
        *ret_handed_fd = TAKE_FD(h[0]);
        return 0;
}

/* Tells the follower the output is complete, and gives it a moment to pass the end on, so that
 * a caller normally has all of it before RunFinished. */
static void follower_finish(pid_t pid, int *done_fd, int *handed_fd) {
        *done_fd = safe_close(*done_fd);
        /* POLLHUP once the follower closed its end: it passed everything on, or gave up, or died.
         * Not its exit, which comes a few ms later (see follower_exit()). */
        (void) poll(&(struct pollfd) { .fd = *handed_fd, .events = POLLIN }, 1, FOLLOWER_WAIT_MSEC);
        *handed_fd = safe_close(*handed_fd);
        /* Reaped if gone already; otherwise it ends alone (bounded by its alarm) and init reaps it. */
        (void) waitpid(pid, NULL, WNOHANG);
}

/* ---- The worker ---- */

/* A result for a run the engine refused outright (only a request we failed to validate, or
 * memory running out, gets here). */
static int error_result(const RunRequest *req, const char *message, RunResult **ret) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        int r;

        r = run_result_new_unrun(req->run_id, req->skill_name, req->skill_hash, req->script,
                                 &req->limits, RUN_STATUS_ERROR, message, &res);
        if (r < 0)
                return r;
        res->started_at = res->ended_at = now_usec(CLOCK_REALTIME);
        *ret = TAKE_PTR(res);
        return 0;
}

/* Moves what the engine wrote into the record's places. A failure leaves that file out; the
 * result says what is there. */
static void move_outputs(int run_fd, RunResult *res) {
        static const char *const logs[] = { "stdout.log", "stderr.log" };
        _cleanup_close_ int engine_fd = -EBADF;

        engine_fd = openat(run_fd, ENGINE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (engine_fd < 0)
                return;
        if (renameat(engine_fd, "files", run_fd, "artifacts") < 0 && errno != ENOENT && !res->store_error)
                res->store_error = strdup_printf("Failed to store the artifacts: %s", strerror(errno));
        /* The same bytes as the live copies, written whole and synced; root's alone, as
         * everything in the store. */
        for (size_t i = 0; i < ELEMENTSOF(logs); i++)
                if (renameat(engine_fd, logs[i], run_fd, logs[i]) >= 0 &&
                    fchmodat(run_fd, logs[i], 0600, 0) < 0)
                        continue; /* the record's directory is root's alone anyway */
}

/* result.json into the record, the commit point of the logs beside it, which the engine left
 * unsynced (RunRequest.caller_stores_result): one commit for the run's end instead of the
 * engine's two and then ours. */
static int store_result(int run_fd, const char *text) {
        _cleanup_(atomic_file_done) AtomicFile result = ATOMIC_FILE_NULL;
        _cleanup_close_ int out_fd = -EBADF, err_fd = -EBADF;
        int r;

        out_fd = openat(run_fd, "stdout.log", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        err_fd = openat(run_fd, "stderr.log", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (out_fd < 0 || err_fd < 0)
                return -errno;
        r = atomic_file_write_at(run_fd, "result.json", text, strlen(text), 0600, &result);
        if (r < 0)
                return r;
        return atomic_file_commit_after(&result, (const int[]) { out_fd, err_fd }, 2, NULL);
}

/* The engine reports a run canceled once the cancel pipe is readable: a byte there is the
 * service's Cancel, its end of file the service's end. A killed service's fds close before the
 * kernel reparents us and sends PR_SET_PDEATHSIG: seen in the VM's daemon-crash, a run stored
 * as canceled after the service's SIGKILL, its worker past the getppid() check. */
static bool canceled_by_service_end(const RunRequest *req, const RunResult *res) {
        char c;

        return res->status == RUN_STATUS_CANCELED && req->cancel_fd >= 0 &&
                read(req->cancel_fd, &c, 1) != 1;
}

static int worker_execute(const WorkerArgs *w) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_(cJSON_Deletep) cJSON *json = NULL;
        _cleanup_free_ char *error = NULL, *engine_dir = NULL, *text = NULL, *input = NULL;
        _cleanup_close_ int run_fd = -EBADF, out_log = -EBADF, err_log = -EBADF, done_fd = -EBADF,
                handed_fd = -EBADF;
        ScopeConfig config = {
                .systemd_address = w->systemd_address,
                .description = w->description,
                .spare = w->spare,
        };
        _cleanup_(sandbox_ahead_freep) SandboxAhead *ahead = NULL;
        RunRequest req = w->request;
        pid_t follower = 0;
        int r;

        /* The run's network namespace, made by a helper while this opens the run's files and
         * starts the follower (a run with network needs none): off the clone (ahead.c). Without
         * one (out of processes) the clone makes it. */
        if (!req.network) {
                (void) sandbox_ahead_start(&ahead);
                req.ahead = ahead;
        }

        run_fd = open(w->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run_fd < 0)
                return -errno;
        out_log = openat(run_fd, "stdout.log",
                         O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        err_log = openat(run_fd, "stderr.log",
                         O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (out_log < 0 || err_log < 0)
                return -errno;
        (void) rm_rf_at(run_fd, ENGINE_DIR);
        engine_dir = strjoin_path(w->run_dir, ENGINE_DIR);
        if (w->input_file) {
                r = read_full_file_at(run_fd, "input.json", INPUT_MAX, true, &input, NULL);
                if (r < 0)
                        return r;
                req.input_json = input;
        }
        if (!engine_dir)
                return -ENOMEM;

        if (w->client_stdout_fd >= 0 || w->client_stderr_fd >= 0) {
                r = follower_spawn(run_fd, w->client_stdout_fd, w->client_stderr_fd, &follower, &done_fd,
                                   &handed_fd);
                if (r < 0)
                        follower = 0; /* the output is stored all the same */
        }

        req.output_dir = engine_dir;
        req.caller_stores_result = true;
        req.stdout_fd = out_log;
        req.stderr_fd = err_log;
        if (w->use_scope) {
                req.backend = &worker_scope_backend;
                req.backend_userdata = &config;
        }

        r = sandbox_run(&req, &res, &error);
        /* The input was the caller's, for this run only. */
        if (w->input_file)
                (void) unlinkat(run_fd, "input.json", 0);
        if (r < 0) {
                r = error_result(&req, error ?: strerror(-r), &res);
                if (r < 0)
                        return r;
        }
        if (follower > 0)
                follower_finish(follower, &done_fd, &handed_fd);

        move_outputs(run_fd, res);
        free(res->output_dir);
        res->output_dir = strdup(w->run_dir);

        r = run_result_to_json(res, &json);
        if (r < 0)
                return r;
        text = cJSON_PrintUnformatted(json);
        if (!text)
                return -ENOMEM;

        /* A run whose service died under it did not finish: its processes were killed with the
         * service (or are about to be), and whatever status the engine saw says so, not what the
         * skill did. Leave no result; the next start of the service records it as interrupted.
         * (PR_SET_PDEATHSIG alone does not settle this: the kernel clears it when credentials
         * change, and it races with this write.) */
        if (getppid() != service_pid || canceled_by_service_end(&req, res))
                return -ESRCH;

        /* The commit point: from here on the run is finished, whatever happens to us or the
         * service. Then the copy for the service, which takes it from there. */
        r = store_result(run_fd, text);
        if (r < 0)
                return r;
        (void) rm_rf_at(run_fd, ENGINE_DIR);
        return loop_write(w->result_fd, text, strlen(text));
}

_noreturn_ static void worker_main(const WorkerArgs *w) {
        const RunRequest *req = &w->request;
        _cleanup_free_ int *keep = NULL;
        size_t n = 0;

        /* Only the fds of this run survive: the service's buses, other runs' pipes and callers'
         * fds must not reach the sandbox, nor be kept open by us. */
        keep = calloc(9 + req->n_files, sizeof(int));
        if (!keep)
                _exit(EXIT_FAILURE);
        keep[n++] = req->skill_dir_fd;
        keep[n++] = req->env_dir_fd;
        keep[n++] = req->cancel_fd;
        keep[n++] = w->client_stdout_fd;
        keep[n++] = w->client_stderr_fd;
        keep[n++] = w->result_fd;
        keep[n++] = req->workspace_fd;
        if (w->spare) {
                keep[n++] = w->spare->pin_fd;
                keep[n++] = w->spare->cgroup_fd;
        }
        for (size_t i = 0; i < req->n_files; i++)
                keep[n++] = req->files[i].fd;
        worker_reset_process(keep, n, "skilld-worker");

        _exit(worker_execute(w) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

int worker_enter_scope(const char *systemd_address, const char *unit, const char *description,
                       uint64_t runtime_max_usec, char **error) {
        ScopeState s = {};
        pid_t self = getpid();
        ScopeParams p = {
                .unit = unit,
                .slice = SCOPE_SLICE,
                .description = description,
                .pids = &self,
                .n_pids = 1,
                .memory_max = UINT64_MAX,
                .tasks_max = UINT64_MAX,
                .cpu_quota_per_sec_usec = UINT64_MAX,
                .runtime_max_usec = runtime_max_usec,
        };
        int r;

        r = scope_start_wait(systemd_address, NULL, &p, &s, error);
        free(s.job_result);
        free(s.job_message);
        return r;
}

void worker_reset_process(const int *keep, size_t n_keep, const char *name) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;

        if (close_all_fds_except(keep, n_keep) < 0)
                _exit(EXIT_FAILURE);

        /* The service blocks the signals sd-event handles; the runs get a clean slate (the sandbox
         * resets its own too, this covers the worker and the follower). */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &dfl, NULL);
        (void) prctl(PR_SET_NAME, (unsigned long) name, 0, 0, 0);
}

int worker_spawn(const WorkerArgs *w, pid_t *ret_pid) {
        pid_t parent = getpid(), pid;

        service_pid = parent;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* The run must not outlive the service: its worker dies with it, and with the
                 * worker its sandbox (the init has its own PR_SET_PDEATHSIG). */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                worker_main(w);
        }
        *ret_pid = pid;
        return 0;
}
