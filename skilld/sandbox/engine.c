/* The parent side of a run: prepare, clone, place, release, watch, collect.
 *
 *   1. Check the request; open the skill tree, the output directory and the inputs as the caller.
 *   2. Pick the limit backend and lock the throwaway uid; build argv and environment while
 *      errors can still be reported plainly.
 *   3. clone3() the init into new namespaces, held on a socket, and wait until it runs (so that
 *      what follows runs beside it, on another CPU when one is free). While the init builds the
 *      fixed part of its root: make the cgroups it enters itself (cgroup v1) and hand them over;
 *      make its network namespace in a thread (as root, where the init is born placed); write
 *      the uid/gid maps (unprivileged); get the seccomp filter's program; let the backend place
 *      the init where it does not place itself; release it, with the program and the namespace.
 *      Then, while the init finishes its root, ask the user database whether an account has the
 *      uid locked for the run: if none does, send the verdict the init waits for at its uid
 *      change (it starts the skill process after that, as the uid); if one does, that init goes
 *      before anything ran as the uid, and another uid gets a clone of its own.
 *   4. Poll the control socket (setup errors, the /out fd, the final status), stdout and stderr
 *      (kept and streamed live), the init's pidfd, the cancel fd and the deadline. Timeout and
 *      cancel SIGKILL the init, which takes the whole PID namespace with it.
 *   5. Once the init reports that the skill process ended and it killed and reaped everything
 *      else: ask the backend what it saw, decide the status, read the output JSON, copy the
 *      artifacts, write the logs and result.json, while the kernel tears the init's namespaces
 *      down; reap the init and remove the cgroups while the first syncs wait for the disk (or
 *      once result.json is durable, if its exit takes longer). Without its report: reap first,
 *      then the rest. */
#include <assert.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "error.h"
#include "fileio.h"
#include "loader.h"
#include "json-exact.h"
#include "json-format.h"
#include "log.h"
#include "parse-util.h"
#include "random-id.h"
#include "sandbox-internal.h"

/* The largest input JSON accepted; it lives in the root tmpfs and, when small, the environment. */
#define SANDBOX_INPUT_MAX (64U * 1024U * 1024U)
/* The most --file input, in total, copied into /work. */
#define SANDBOX_FILES_MAX (1024ULL * 1024 * 1024)
/* The uid lock file for root runs (see identity.c). */
#define SANDBOX_UID_LOCK "/run/skilld/sandbox-uids.lock"
/* After the init is gone every writer of the pipes is gone; this only bounds a kernel that is
 * slow to tear the namespace down. */
#define DRAIN_TIMEOUT_MSEC 5000

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The kernel ABI of clone3(); glibc does not wrap it. */
struct sandbox_clone_args {
        uint64_t flags;
        uint64_t pidfd;
        uint64_t child_tid;
        uint64_t parent_tid;
        uint64_t exit_signal;
        uint64_t stack;
        uint64_t stack_size;
        uint64_t tls;
        uint64_t set_tid;
        uint64_t set_tid_size;
        uint64_t cgroup;
};

typedef struct SandboxRun {
        const RunRequest *req;
        RunResult *result;

        const SandboxBackendOps *backend;
        void *backend_state;

        int skill_dir_fd;
        int env_dir_fd;
        int *ro_dir_fds;
        size_t n_ro_dir_fds;
        int dest_fd;                    /* the output directory */
        int files_dest_fd;              /* its files/ */
        int lock_fd;                    /* holds the uid */
        int hold[2];                    /* a stream socket pair: releasing never raises SIGPIPE */
        bool cgroups_made;              /* the backend's create() done (it runs once, whatever the clones) */
        bool born_placed;               /* cloned into the backend's cgroup (clone_into) */
        int ctl[2];
        int out_pipe[2];
        int err_pipe[2];
        int stdin_fd;
        int input_fd;
        int *file_fds;
        bool *file_fd_owned;
        bool *file_folders;
        FolderInput *folders;           /* unpacked folder inputs, by input index */
        char **file_names;
        size_t n_files;
        int pidfd;
        pid_t pid;
        int out_fd;                     /* /out of the run, received from the init */
        int work_fd;                    /* a kept /work: the run's, received from the init */
        int workspace_work_fd;          /* a kept /work: its work/ to copy in */

        bool userns;
        uint64_t clone_flags;           /* the namespaces created with the init */
        bool netns_beside;              /* the network namespace is made beside the init (netns.c) */
        SandboxNetns netns;
        bool netns_ahead;               /* the first init gets the one made ahead (ahead.c) */
        int ahead_fd;                   /* that namespace, taken at the clone: inherited by the init */
        bool ahead_late;                /* not made by the clone: it goes with the release (in netns) */
        uid_t uid;
        gid_t gid;
        bool uid_checked;               /* no account has it (or it is not ours to check) */
        bool verdict_owed;              /* the init waits for the uid's verdict (HOLD_UID) */
        bool stepped_aside;             /* on other CPUs than the init's until the release */
        int init_cpu;                   /* where the init said it runs, or -1 */
        cpu_set_t affinity;             /* the caller's CPUs, to return to */
        uint64_t work_size;
        bool seccomp;                   /* the run gets the filter */
        int seccomp_fd;                 /* its program (sandbox_seccomp_export()), sent with the release */
        SeccompSupervisor *supervisor;  /* the filter reports its refusals (NULL: it cannot) */
        char **argv;
        char *exec_path;                /* a command's program as found (command.c); NULL: argv[0] */
        char **envp;
        char **hidden_dirs;
        char **hidden_files;
        SandboxRlimit rlimits[8];
        size_t n_rlimits;

        uint64_t start_mono;
        bool timing;                    /* take the phase marks (debug logging is on) */
        uint64_t marks[_MARK_MAX];
        bool killed;
        bool timed_out;
        bool canceled;
        bool exited;                    /* CHILD_MSG_EXITED arrived */
        bool init_reaped;
        RunRecord record;               /* the logs and result.json (record.c) */
        ChildMessage exit_msg;
        LiveCopy out_live;
        LiveCopy err_live;
} SandboxRun;

static void run_mark(SandboxRun *run, RunMark m) {
        if (run->timing)
                run->marks[m] = now_usec(CLOCK_MONOTONIC);
}

static const char *const mark_names[_MARK_MAX] = {
        [MARK_ENTER] = "enter",
        [MARK_CHECKED] = "checked",
        [MARK_LIMITS] = "limits",
        [MARK_IDENTITY] = "identity",
        [MARK_PREPARED] = "prepared",
        [MARK_AHEAD] = "ahead",
        [MARK_AHEAD_FORKED] = "ahead-forked",
        [MARK_AHEAD_BEGUN] = "ahead-begun",
        [MARK_AHEAD_NETNS] = "ahead-netns",
        [MARK_AHEAD_TAKEN] = "ahead-taken",
        [MARK_CLONED] = "cloned",
        [MARK_CGROUPS] = "cgroups",
        [MARK_UID_CHECKED] = "uid-checked",
        [MARK_NETNS] = "netns",
        [MARK_INIT_BORN] = "init-born",
        [MARK_INIT_START] = "init-start",
        [MARK_RELEASED] = "released",
        [MARK_INIT_EARLY] = "init-early",
        [MARK_INIT_PLACED] = "init-placed",
        [MARK_INIT_GO] = "init-go",
        [MARK_INIT_LATE] = "init-late",
        [MARK_INIT_VERDICT] = "init-verdict",
        [MARK_INIT_DROPPED] = "init-dropped",
        [MARK_INIT_FORKED] = "init-forked",
        [MARK_SKILL_SETUP] = "skill-setup",
        [MARK_SKILL_EXEC] = "skill-exec",
        [MARK_SKILL_END] = "skill-end",
        [MARK_INIT_EMPTY] = "init-empty",
        [MARK_EXITED] = "exited",
        [MARK_INIT_GONE] = "init-gone",
        [MARK_DRAINED] = "drained",
        [MARK_REAPED] = "reaped",
        [MARK_WRITTEN] = "written",
        [MARK_LOGS_SYNCED] = "logs-synced",
        [MARK_INIT_REAPED] = "init-reaped",
        [MARK_REMOVED] = "removed",
        [MARK_STORED_LOGS] = "stored-logs",
        [MARK_STORED] = "stored",
        [MARK_DONE] = "done",
};

/* One line: each mark as ms since sandbox_run() was called, in the order of the enum (a mark
 * never taken, a phase the run skipped, is left out; what was made ahead of the run may come
 * before the call, a negative time). */
static void log_marks(const SandboxRun *run) {
        char line[_MARK_MAX * 32] = "", *p = line;

        if (!run->timing)
                return;
        for (size_t i = 0; i < _MARK_MAX; i++) {
                bool ahead = i == MARK_AHEAD || i == MARK_AHEAD_FORKED || i == MARK_AHEAD_BEGUN ||
                             i == MARK_AHEAD_NETNS;

                if (run->marks[i] == 0 || (run->marks[i] < run->marks[MARK_ENTER] && !ahead))
                        continue;
                p += snprintf(p, sizeof(line) - (size_t) (p - line), " %s=%.3f", mark_names[i],
                              ((double) run->marks[i] - (double) run->marks[MARK_ENTER]) / 1000.0);
        }
        log_debug("Run phases (ms):%s", line);
}

/* Removes what the backend made (the run's cgroups): once nothing of the run is left in them. */
static void free_backend(SandboxRun *run) {
        if (!run->backend || !run->backend_state)
                return;
        run->backend_state = run->backend->free(run->backend_state);
        run_mark(run, MARK_REMOVED);
}

static void sandbox_run_done(SandboxRun *run) {
        run_record_done(&run->record);
        strv_free(run->hidden_dirs);
        strv_free(run->hidden_files);
        (void) safe_close(run->skill_dir_fd);
        (void) safe_close(run->env_dir_fd);
        for (size_t i = 0; i < run->n_ro_dir_fds; i++)
                (void) safe_close(run->ro_dir_fds[i]);
        free(run->ro_dir_fds);
        (void) safe_close(run->dest_fd);
        (void) safe_close(run->files_dest_fd);
        (void) safe_close(run->lock_fd);
        for (size_t i = 0; i < 2; i++) {
                (void) safe_close(run->hold[i]);
                (void) safe_close(run->ctl[i]);
                (void) safe_close(run->out_pipe[i]);
                (void) safe_close(run->err_pipe[i]);
        }
        (void) safe_close(run->stdin_fd);
        if (run->input_fd != run->stdin_fd)
                (void) safe_close(run->input_fd);
        for (size_t i = 0; i < run->n_files; i++)
                if (run->file_fd_owned[i])
                        (void) safe_close(run->file_fds[i]);
        for (size_t i = 0; run->folders && i < run->n_files; i++)
                folder_input_done(&run->folders[i]);
        free(run->folders);
        free(run->file_folders);
        free(run->file_fds);
        free(run->file_fd_owned);
        strv_free(run->file_names);
        (void) safe_close(run->pidfd);
        (void) safe_close(run->out_fd);
        (void) safe_close(run->work_fd);
        (void) safe_close(run->workspace_work_fd);
        (void) safe_close(run->seccomp_fd);
        sandbox_netns_done(&run->netns);
        (void) safe_close(run->ahead_fd);
        sandbox_ahead_settle(run->req->ahead);
        seccomp_supervisor_free(run->supervisor);
        strv_free(run->argv);
        free(run->exec_path);
        strv_free(run->envp);
        free_backend(run);
        run_result_free(run->result);
        run_mark(run, MARK_DONE);
        log_marks(run);
}

/* Records why the run could not start; the first failure wins, as in error_setf(). */
_printf_(3, 4)
static int run_fail(SandboxRun *run, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = error_setv(&run->result->error, r, fmt, ap);
        va_end(ap);
        if (run->result->error_errno == 0)
                run->result->error_errno = -r;
        run->result->status = RUN_STATUS_ERROR;
        return r;
}

static bool run_id_valid(const char *id) {
        if (strlen(id) != 32)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

/* A script path stays inside the skill: relative, no "." or ".." components, no empty ones. */
static bool script_path_valid(const char *p) {
        const char *c = p;

        if (isempty(p) || p[0] == '/' || strlen(p) > PATH_MAX / 2)
                return false;
        for (;;) {
                size_t n = strcspn(c, "/");

                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (c[n] == '\0')
                        return true;
                c += n + 1;
        }
}

static int request_check(const RunRequest *req, char **error) {
        int r;

        if (isempty(req->skill_dir) && req->skill_dir_fd < 0)
                return error_setf(error, -EINVAL, "No skill directory given");
        if (req->command) {
                r = sandbox_command_check(req->command, req->cwd, error);
                if (r < 0)
                        return r;
                if (req->script || req->interpreter || req->args)
                        return error_setf(error, -EINVAL, "A command excludes a script, interpreter and args");
        } else if (!req->script || !script_path_valid(req->script))
                return error_setf(error, -EINVAL,
                                  "Script path '%s' must be relative and stay inside the skill",
                                  strna(req->script));
        else if (req->cwd && !streq(req->cwd, "/work") && !streq(req->cwd, "/skill"))
                return error_setf(error, -EINVAL, "The working directory must be /work or /skill");
        if (req->uid != (uid_t) -1 && (req->uid == 0 || req->uid == getuid() || geteuid() != 0))
                return error_setf(error, -EINVAL, "The sandbox uid must be neither root nor the caller, and "
                                  "can only be chosen by root");
        if (req->interpreter && req->interpreter[0] != '/')
                return error_setf(error, -EINVAL, "Interpreter '%s' is not an absolute path",
                                  req->interpreter);
        if (isempty(req->output_dir))
                return error_setf(error, -EINVAL, "No output directory given");
        if (req->run_id && !run_id_valid(req->run_id))
                return error_setf(error, -EINVAL, "Run id '%s' is not 32 lowercase hex digits", req->run_id);
        r = sandbox_limits_check(&req->limits, error);
        if (r < 0)
                return r;
        r = sandbox_env_check_all(req->env, error);
        if (r < 0)
                return r;
        if (req->n_files > 1024)
                return error_setf(error, -E2BIG, "More than 1024 input files");
        for (size_t i = 0; i < req->n_files; i++) {
                r = sandbox_file_name_check(req->files[i].name, error);
                if (r < 0)
                        return r;
                if (req->files[i].fd < 0 && isempty(req->files[i].path))
                        return error_setf(error, -EINVAL, "Input file %s has neither fd nor path",
                                          req->files[i].name);
                if (req->files[i].folder && req->files[i].fd < 0)
                        return error_setf(error, -EINVAL, "Input folder %s has no fd of its zip",
                                          req->files[i].name);
                for (size_t j = 0; j < i; j++)
                        if (streq(req->files[i].name, req->files[j].name))
                                return error_setf(error, -EINVAL, "Input file %s is given twice",
                                                  req->files[i].name);
        }
        if (req->input_json) {
                _cleanup_(cJSON_Deletep) cJSON *j = NULL;

                if (strlen(req->input_json) > SANDBOX_INPUT_MAX)
                        return error_setf(error, -E2BIG, "The input JSON is larger than 64M");
                j = cJSON_ParseWithOpts(req->input_json, NULL, true);
                if (!j)
                        return error_setf(error, -EINVAL, "The input is not valid JSON");
        }
        return 0;
}

static int result_new(const RunRequest *req, RunResult **ret) {
        _cleanup_(run_result_freep) RunResult *r = NULL;
        char id[RANDOM_ID_STRING_MAX];

        r = calloc(1, sizeof(RunResult));
        if (!r)
                return -ENOMEM;
        if (req->run_id)
                r->run_id = strdup(req->run_id);
        else {
                int q = random_id(id);
                if (q < 0)
                        return q;
                r->run_id = strdup(id);
        }
        r->script = req->script ? strdup(req->script) : NULL;
        r->output_dir = strdup(req->output_dir);
        r->cwd = strdup(req->cwd ?: "/work");
        r->command = req->command;
        if (!r->run_id || (req->script && !r->script) || !r->output_dir || !r->cwd)
                return -ENOMEM;
        if ((req->skill_name && !(r->skill_name = strdup(req->skill_name))) ||
            (req->skill_hash && !(r->skill_hash = strdup(req->skill_hash))) ||
            (req->interpreter && !(r->interpreter = strdup(req->interpreter))))
                return -ENOMEM;
        r->status = RUN_STATUS_ERROR;
        r->exit_code = -1;
        r->uid = (uid_t) -1;
        r->limits = req->limits;
        r->limits_from_skill = req->limits_from_skill;
        r->network = req->network;
        r->usage = (RunUsage) {
                .memory_peak = RUN_USAGE_UNKNOWN,
                .tasks_peak = RUN_USAGE_UNKNOWN,
        };
        r->started_at = now_usec(CLOCK_REALTIME);
        *ret = TAKE_PTR(r);
        return 0;
}

/* Whether the sandbox user, which is neither owner nor group of anything on the host, may use
 * a file: only the "other" bits count. Unprivileged runs map the sandbox user to the caller, so
 * there the owner bits apply and the kernel's own check at exec time is the right one. */
static bool other_may(const struct stat *st, mode_t bits) {
        return (st->st_mode & bits) == bits;
}

/* Looks at the entry point without following links, the way the sandbox will see it, so the
 * usual mistakes get a precise message instead of a bare exec failure. */
static int check_script(SandboxRun *run) {
        const RunRequest *req = run->req;
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int cur = -EBADF;
        struct stat st;
        char *p, *slash;

        if (fstat(run->skill_dir_fd, &st) < 0)
                return run_fail(run, -errno, "Failed to stat the skill directory %s: %m",
                                strna(req->skill_dir));
        if (!run->userns && !other_may(&st, S_IXOTH))
                return run_fail(run, -EACCES, "The skill directory %s is not accessible to the sandbox user "
                                "(mode %04o); skill trees must be world-readable", strna(req->skill_dir),
                                st.st_mode & 07777);

        copy = strdup(req->script);
        if (!copy)
                return -ENOMEM;
        cur = fcntl(run->skill_dir_fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return run_fail(run, -errno, "Failed to duplicate an fd: %m");

        for (p = copy; (slash = strchr(p, '/')); p = slash + 1) {
                int next;

                *slash = '\0';
                next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0) {
                        run->result->exec_failed = errno == ENOENT;
                        return run_fail(run, -errno, "Entry point %s: cannot enter %s: %m", req->script, p);
                }
                safe_close(cur);
                cur = next;
                if (fstat(cur, &st) < 0)
                        return run_fail(run, -errno, "Failed to stat %s: %m", p);
                if (!run->userns && !other_may(&st, S_IXOTH))
                        return run_fail(run, -EACCES,
                                        "Entry point %s: directory %s is not accessible to the "
                                        "sandbox user (mode %04o)", req->script, p, st.st_mode & 07777);
        }

        if (fstatat(cur, p, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                run->result->exec_failed = true;
                return run_fail(run, -errno, "Entry point %s does not exist in the skill: %m", req->script);
        }
        run->result->exec_failed = true; /* from here on, every failure is "not executable" */
        if (!S_ISREG(st.st_mode))
                return run_fail(run, -EACCES, "Entry point %s is not a regular file", req->script);
        if (!req->interpreter && !(st.st_mode & 0111))
                return run_fail(run, -EACCES,
                                "Entry point %s is not executable and no interpreter was given",
                                req->script);
        if (!run->userns && !other_may(&st, req->interpreter ? S_IROTH : S_IROTH | S_IXOTH))
                return run_fail(run, -EACCES,
                                "Entry point %s is not readable%s by the sandbox user (mode %04o)",
                                req->script, req->interpreter ? "" : " and executable", st.st_mode & 07777);

        if (req->interpreter) {
                /* The sandbox has /usr and the links into it, nothing else of the host. */
                if (!startswith(req->interpreter, "/usr/") && !startswith(req->interpreter, "/bin/") &&
                    !startswith(req->interpreter, "/sbin/"))
                        return run_fail(run, -EACCES,
                                        "Interpreter %s is outside /usr and not available in the "
                                        "sandbox", req->interpreter);
                if (stat(req->interpreter, &st) < 0) {
                        if (errno != ENOENT)
                                return run_fail(run, -errno, "Interpreter %s: %m", req->interpreter);
                        return run_fail(run, -ENOENT, "Interpreter %s is not installed", req->interpreter);
                }
                if (!S_ISREG(st.st_mode) || !other_may(&st, S_IXOTH))
                        return run_fail(run, -EACCES, "Interpreter %s is not executable", req->interpreter);
        }
        run->result->exec_failed = false;
        return 0;
}

static int open_output_dir(SandboxRun *run) {
        const char *dir = run->req->output_dir;
        int r;

        /* The directory the walk made or found, not a second lookup of its path. */
        r = mkdir_p_open_at(AT_FDCWD, dir, 0755, &run->dest_fd);
        if (r < 0)
                return run_fail(run, r, "Failed to create the output directory %s: %s", dir, strerror(-r));
        if (mkdirat(run->dest_fd, "files", 0755) < 0 && errno != EEXIST)
                return run_fail(run, -errno, "Failed to create %s/files: %m", dir);
        run->files_dest_fd = openat(run->dest_fd, "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (run->files_dest_fd < 0)
                return run_fail(run, -errno, "Failed to open %s/files: %m", dir);
        return 0;
}

static const SandboxBackendOps *const cgroup_backends[] = {
        &sandbox_backend_cgroup2,
        &sandbox_backend_cgroup1,
};

static int pick_backend(SandboxRun *run) {
        const RunRequest *req = run->req;
        _cleanup_free_ char *why = NULL;
        int r;

        if (req->backend) {
                r = req->backend->prepare(&req->limits, run->result->run_id, req->backend_userdata,
                                          &run->backend_state, &why);
                if (r < 0)
                        return run_fail(run, r, "Failed to prepare the %s limits: %s", req->backend->name,
                                        why ?: strerror(-r));
                run->backend = req->backend;
                return 0;
        }

        /* cgroup2 first, then v1 hierarchies (root on hybrid hosts); each says why it cannot be
         * used here, and only "not available" moves on. */
        for (size_t i = 0; i < ELEMENTSOF(cgroup_backends); i++) {
                _cleanup_free_ char *reason = NULL;

                r = cgroup_backends[i]->prepare(&req->limits, run->result->run_id, NULL, &run->backend_state,
                                                &reason);
                if (r >= 0) {
                        run->backend = cgroup_backends[i];
                        return 0;
                }
                if (r != -EOPNOTSUPP)
                        return run_fail(run, r, "Failed to set up the run's %s limits: %s",
                                        cgroup_backends[i]->name, reason ?: strerror(-r));
                if (reason) {
                        char *joined = why ? strdup_printf("%s; %s", why, reason) : TAKE_PTR(reason);

                        if (!joined)
                                return -ENOMEM;
                        free(why);
                        why = joined;
                }
        }
        if (!(req->allow_missing & SANDBOX_LAYER_CGROUP))
                return run_fail(run, -EOPNOTSUPP,
                                "No cgroup limits are available (%s), and running with rlimits "
                                "instead is not allowed", why ?: "unknown reason");

        r = sandbox_backend_rlimit.prepare(&req->limits, run->result->run_id, NULL, &run->backend_state,
                                           NULL);
        if (r < 0)
                return run_fail(run, r, "Failed to prepare the rlimit limits");
        run->backend = &sandbox_backend_rlimit;
        run->result->layers_missing |= SANDBOX_LAYER_CGROUP;
        return 0;
}

/* The skill process sets these without any capability (the init dropped them all before starting
 * it, child.c), so never above the hard limit the caller has and the init inherits: a caller's
 * lower hard limit holds the skill too. */
static void add_rlimit(SandboxRun *run, int resource, rlim_t value) {
        struct rlimit now;

        assert(run->n_rlimits < ELEMENTSOF(run->rlimits));
        if (getrlimit(resource, &now) >= 0)
                value = MIN(value, now.rlim_max);
        run->rlimits[run->n_rlimits++] = (SandboxRlimit) {
                .resource = resource,
                .limit = { .rlim_cur = value, .rlim_max = value },
        };
}

static void compute_rlimits(SandboxRun *run) {
        const SandboxLimits *l = &run->req->limits;
        struct rlimit nofile, data;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t cpu_sec;

        add_rlimit(run, RLIMIT_CORE, 0);
        /* A skill needs no more than this, and a huge inherited limit makes some programs (Python's
         * subprocess among them, on old versions) loop over every possible fd. */
        if (getrlimit(RLIMIT_NOFILE, &nofile) >= 0)
                add_rlimit(run, RLIMIT_NOFILE, MIN(nofile.rlim_max, (rlim_t) 4096));
        /* A backstop in case the wall timer never fires (the engine itself wedged): the most CPU
         * time the run could use until its deadline on every CPU. */
        cpu_sec = (l->timeout_usec + 999999) / 1000000 * (uint64_t) MAX(ncpu, 1L) + 1;
        add_rlimit(run, RLIMIT_CPU, cpu_sec);
        add_rlimit(run, RLIMIT_FSIZE, MAX(MAX(l->out_max, l->tmpfs_size), run->work_size));

        if (run->backend->child_rlimits) {
                /* RLIMIT_DATA counts what memory is (brk and private writable mappings) without
                 * counting reservations: RLIMIT_AS would break Node.js and other runtimes that
                 * reserve gigabytes of address space they never touch. The child sets it last,
                 * without capabilities: never more than the caller's own hard limit. */
                if (getrlimit(RLIMIT_DATA, &data) < 0)
                        data.rlim_max = RLIM_INFINITY;
                add_rlimit(run, RLIMIT_DATA, MIN(data.rlim_max, (rlim_t) l->memory_max));
                /* Per real uid: the run's uid is its own, so this counts the run's tasks. */
                add_rlimit(run, RLIMIT_NPROC, l->tasks_max);
        }
}

static int build_argv(SandboxRun *run) {
        const RunRequest *req = run->req;
        _cleanup_strv_free_ char **argv = NULL;
        char *script;
        int r;

        if (req->command) {
                argv = strv_copy(req->command);
                if (!argv)
                        return -ENOMEM;
                run->result->argv = strv_copy(argv);
                if (!run->result->argv)
                        return -ENOMEM;
                run->argv = TAKE_PTR(argv);
                return 0;
        }

        if (req->interpreter) {
                r = strv_extend(&argv, req->interpreter);
                if (r < 0)
                        return r;
                STRV_FOREACH(a, req->interpreter_args) {
                        r = strv_extend(&argv, *a);
                        if (r < 0)
                                return r;
                }
        }
        script = strdup_printf("/skill/%s", req->script);
        r = script ? strv_push(&argv, script) : -ENOMEM;
        if (r < 0)
                return r;
        STRV_FOREACH(a, req->args) {
                r = strv_extend(&argv, *a);
                if (r < 0)
                        return r;
        }
        run->result->argv = strv_copy(argv);
        if (!run->result->argv)
                return -ENOMEM;
        run->argv = TAKE_PTR(argv);
        return 0;
}

static int prepare_stdin(SandboxRun *run) {
        const char *input = run->req->input_json;
        int r;

        if (!input) {
                run->stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (run->stdin_fd < 0)
                        return run_fail(run, -errno, "Failed to open /dev/null: %m");
                return 0;
        }

        /* A sealed memfd: the skill reads stdin like a file (seekable, no pipe to feed while the
         * run goes) and cannot change what the other input channels were given. */
        run->input_fd = memfd_create("skill-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (run->input_fd < 0)
                return run_fail(run, -errno, "Failed to create the input memfd: %m");
        r = loop_write(run->input_fd, input, strlen(input));
        if (r < 0)
                return run_fail(run, r, "Failed to write the input: %s", strerror(-r));
        if (fcntl(run->input_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return run_fail(run, -errno, "Failed to seal the input: %m");
        if (lseek(run->input_fd, 0, SEEK_SET) < 0)
                return run_fail(run, -errno, "Failed to rewind the input: %m");
        run->stdin_fd = run->input_fd;
        return 0;
}

static int prepare_inputs(SandboxRun *run, uint64_t *ret_size);

static int prepare_files(SandboxRun *run) {
        const RunRequest *req = run->req;
        uint64_t kept = 0, inputs = 0;
        int r;

        if (req->workspace_fd >= 0) {
                _cleanup_free_ char *why = NULL;
                uint64_t entries;

                r = sandbox_workspace_open(req->workspace_fd, &run->workspace_work_fd, &kept, &entries, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return run_fail(run, r, "%s", why);
        }
        r = prepare_inputs(run, &inputs);
        if (r < 0)
                return r;
        if (req->workspace_fd < 0) {
                run->work_size = req->limits.tmpfs_size + inputs;
                return 0;
        }
        /* A kept /work: the quota is the whole of it, what is kept, the new inputs and what the
         * run writes, so that no more than the quota is ever kept. */
        if (kept + inputs > req->workspace_quota) {
                char a[FORMAT_BYTES_MAX];

                return run_fail(run, -EDQUOT, "The session's /work and the inputs exceed its quota of %s",
                                format_bytes(a, sizeof(a), req->workspace_quota));
        }
        run->work_size = MAX(req->workspace_quota, 64ULL * 1024);
        return 0;
}

/* The --file inputs, opened and measured: *ret_size is what they take in /work. */
static int prepare_inputs(SandboxRun *run, uint64_t *ret_size) {
        const RunRequest *req = run->req;
        uint64_t size = 0;

        if (req->n_files == 0) {
                *ret_size = 0;
                return 0;
        }
        run->file_fds = calloc(req->n_files, sizeof(int));
        run->file_fd_owned = calloc(req->n_files, sizeof(bool));
        run->file_folders = calloc(req->n_files, sizeof(bool));
        run->folders = calloc(req->n_files, sizeof(FolderInput));
        run->file_names = calloc(req->n_files + 1, sizeof(char *));
        if (!run->file_fds || !run->file_fd_owned || !run->file_folders || !run->folders || !run->file_names)
                return -ENOMEM;
        for (size_t i = 0; i < req->n_files; i++)
                run->folders[i].dir_fd = -EBADF;

        for (size_t i = 0; i < req->n_files; i++) {
                const RunFile *f = &req->files[i];
                struct stat st;
                int fd = f->fd;

                run->file_names[i] = strdup(f->name);
                if (!run->file_names[i])
                        return -ENOMEM;
                if (fd < 0) {
                        fd = open_regular_at(AT_FDCWD, f->path, O_RDONLY);
                        if (fd < 0)
                                return run_fail(run, fd, "Failed to open input file %s: %s", f->path,
                                                open_regular_strerror(fd));
                        run->file_fd_owned[i] = true;
                }
                run->file_fds[i] = fd;
                run->n_files = i + 1;
                if (f->folder) {
                        _cleanup_free_ char *why = NULL;
                        int r;

                        r = sandbox_folder_input_unpack(fd, SANDBOX_FILES_MAX - MIN(size, SANDBOX_FILES_MAX),
                                                        &run->folders[i], &why);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return run_fail(run, r, "Input folder %s: %s", f->name, why ?: strerror(-r));
                        /* The child copies the unpacked tree; the zip's fd stays with its owner. */
                        run->file_fds[i] = run->folders[i].dir_fd;
                        run->file_folders[i] = true;
                        /* Its bytes, and room for its inodes (the tmpfs has one per 2K of size). */
                        size += run->folders[i].bytes + run->folders[i].entries * 4096;
                        if (size > SANDBOX_FILES_MAX)
                                return run_fail(run, -EFBIG, "The input files are larger than 1G together");
                        continue;
                }
                if (fstat(fd, &st) < 0)
                        return run_fail(run, -errno, "Failed to stat input file %s: %m", f->name);
                if (!S_ISREG(st.st_mode))
                        return run_fail(run, -EINVAL, "Input file %s is not a regular file", f->name);
                size += (uint64_t) st.st_size;
                /* They live in memory (tmpfs) for the run's length. */
                if (size > SANDBOX_FILES_MAX)
                        return run_fail(run, -EFBIG, "The input files are larger than 1G together");
        }
        *ret_size = size;
        return 0;
}

int sandbox_uid_reserve(uid_t *ret_uid, int *ret_lock_fd, char **error) {
        return sandbox_identity_allocate(SANDBOX_UID_LOCK, ret_uid, ret_lock_fd, error);
}

/* The run's uid, its gid the same number, as the result reports it; checked: the user database
 * was asked already (or the caller keeps the uid's rules itself). */
static void run_take_uid(SandboxRun *run, uid_t uid, bool checked) {
        run->uid = uid;
        run->gid = (gid_t) uid;
        run->result->uid = uid;
        run->uid_checked = checked;
}

static int prepare_identity(SandboxRun *run) {
        _cleanup_free_ char *why = NULL;
        uid_t uid;
        int r;

        if (run->userns) {
                /* The caller's own uid, as the only one an unprivileged user may map. Inside, a
                 * number that differs from the caller's, so "neither root nor the caller" holds in
                 * the sandbox's view too. */
                run->uid = run->gid = SANDBOX_USERNS_ID + (getuid() == SANDBOX_USERNS_ID);
                run->result->uid = getuid();
                run->uid_checked = true;
                return 0;
        }

        /* The daemon allocates from its policy's range and keeps the uid reserved itself. */
        if (run->req->uid != (uid_t) -1) {
                run_take_uid(run, run->req->uid, true);
                return 0;
        }

        /* Locked now, checked against the user database after the release (check_identity()). */
        r = sandbox_identity_lock(SANDBOX_UID_LOCK, &uid, &run->lock_fd, &why);
        if (r < 0)
                return run_fail(run, r, "Failed to allocate a sandbox uid: %s", why ?: strerror(-r));
        run_take_uid(run, uid, false);
        return 0;
}

/* The rare uid that the user database names after all: the init that was built and released for
 * it goes (it waited for the verdict, with no skill process yet, and never ran anything as it),
 * and another uid is taken the slow way, the database asked before the lock is kept, for a clone
 * of its own. */
static int reallocate_identity(SandboxRun *run) {
        _cleanup_free_ char *why = NULL;
        uid_t uid;
        int r;

        run->lock_fd = safe_close(run->lock_fd);
        r = sandbox_identity_allocate(SANDBOX_UID_LOCK, &uid, &run->lock_fd, &why);
        if (r < 0)
                return run_fail(run, r, "Failed to allocate a sandbox uid: %s", why ?: strerror(-r));
        run_take_uid(run, uid, true);
        return 0;
}

/* Whether the run gets the filter and which variant; the filter itself is built while the init
 * sets up its root (compile_seccomp()). */
static int prepare_seccomp(SandboxRun *run) {
        int r;

        if (!sandbox_seccomp_available()) {
                if (!(run->req->allow_missing & SANDBOX_LAYER_SECCOMP))
                        return run_fail(run, -EOPNOTSUPP,
                                        "seccomp is not available on this kernel, and running "
                                        "without a syscall filter is not allowed");
                run->result->layers_missing |= SANDBOX_LAYER_SECCOMP;
                return 0;
        }
        /* Without user notifications (kernel < 5.0) the filter still refuses, it just cannot
         * say what: the result's refused_syscalls is null then. */
        if (sandbox_seccomp_notify_available()) {
                r = seccomp_supervisor_new(&run->supervisor);
                if (r < 0)
                        return run_fail(run, r, "Failed to set up the seccomp supervisor: %s", strerror(-r));
        }
        run->seccomp = true;
        return 0;
}

/* Obtains the filter's program (seccomp-cache.c: kept by the process, read from the cache, or
 * generated, about 1 ms, when neither has it): after the clone, so that it overlaps the init's
 * setup of its root instead of adding to it. The init cannot get past its release without it. */
static int compile_seccomp(SandboxRun *run) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (!run->seccomp)
                return 0;
        r = sandbox_seccomp_program_fd(run->supervisor, &run->seccomp_fd, &why);
        if (r < 0)
                return run_fail(run, r, "%s", why ?: "Failed to build the seccomp filter");
        return 0;
}

static int send_hold(SandboxRun *run, char byte, const int *fds, size_t n);

/* Lets the held init go on, handing it the filter's program and the network namespace made
 * beside it, in that order (each when the run has it). */
static int release_init(SandboxRun *run) {
        int fds[2];
        size_t n = 0;

        if (run->seccomp_fd >= 0)
                fds[n++] = run->seccomp_fd;
        /* Made ahead and late (finish_netns()): none, and the init makes its own. */
        if (run->netns_beside || (run->ahead_late && run->netns.fd >= 0))
                fds[n++] = run->netns.fd;
        return send_hold(run, HOLD_GO, fds, n);
}

/* Whether the kernel offers a namespace type: every process's /proc/PID/ns has an entry for
 * each type the kernel was built with. Asked of pid 1's, looked at without following the link:
 * a new process's /proc/self is looked up afresh (its proc inodes made on first use, and access()
 * following each link made an nsfs inode too), 40 to 60 us for the six types in a fresh process,
 * while pid 1's entries stay in the dentry cache: 10 us. Where pid 1's are hidden from us (hidepid,
 * an LSM), our own answer as they always did. */
static bool namespace_offered(int ns_fd, const char *name) {
        char path[64];
        struct stat st;

        if (ns_fd >= 0) {
                if (fstatat(ns_fd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        return true;
                if (errno == ENOENT)
                        return false;
        }
        (void) snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
        return access(path, F_OK) >= 0;
}

/* Which namespaces the kernel offers (namespace_offered()); a missing one that the request does
 * not allow to be missing refuses the run. The cgroup namespace is entered later, by the init
 * itself, once it sits in its cgroup. A run with network gets no network namespace: it shares
 * ours, which is not a missing layer but what was asked for. As root the network namespace may
 * be made beside the init instead of with it (place_netns()); in a user namespace the init could
 * not enter one made by us, and always gets it with the clone. */
static int prepare_namespaces(SandboxRun *run) {
        static const struct {
                unsigned layer;         /* 0: never optional */
                const char *name;
                uint64_t flag;
        } namespaces[] = {
                { 0,                       "mnt",    CLONE_NEWNS },
                { 0,                       "pid",    CLONE_NEWPID },
                { SANDBOX_LAYER_NETNS,     "net",    CLONE_NEWNET },
                { SANDBOX_LAYER_IPCNS,     "ipc",    CLONE_NEWIPC },
                { SANDBOX_LAYER_UTSNS,     "uts",    CLONE_NEWUTS },
                { SANDBOX_LAYER_CGROUPNS,  "cgroup", 0 },
        };
        _cleanup_close_ int ns_fd = open("/proc/1/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (run->userns && !namespace_offered(ns_fd, "user"))
                return run_fail(run, -EOPNOTSUPP,
                                "This kernel has no user namespaces, which an unprivileged "
                                "run needs; run as root or through the skilld service");
        run->clone_flags = run->userns ? CLONE_NEWUSER : 0;

        for (size_t i = 0; i < ELEMENTSOF(namespaces); i++) {
                if (namespaces[i].flag == CLONE_NEWNET && run->req->network)
                        continue;
                if (namespace_offered(ns_fd, namespaces[i].name)) {
                        if (namespaces[i].flag == CLONE_NEWNET && !run->userns)
                                run->netns_beside = true;
                        else
                                run->clone_flags |= namespaces[i].flag;
                        continue;
                }
                if (namespaces[i].layer == 0 || !(run->req->allow_missing & namespaces[i].layer))
                        return run_fail(run, -EOPNOTSUPP, "This kernel has no %s namespaces, and running "
                                        "without them is not allowed", namespaces[i].name);
                run->result->layers_missing |= namespaces[i].layer;
        }
        return 0;
}

/* What the content hash leaves out (__pycache__, *.pyc, .DS_Store) is hidden from the run, so
 * the hash names everything a run can execute: Python would otherwise load a planted .pyc (an
 * unchecked-hash one needs no matching source) instead of the source that was hashed. */
static int prepare_hidden(SandboxRun *run) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (run->req->hidden_listed) {
                run->hidden_dirs = strv_copy(run->req->hidden_dirs);
                run->hidden_files = strv_copy(run->req->hidden_files);
                r = run->hidden_dirs && run->hidden_files ? 0 : -ENOMEM;
        } else
                r = skill_list_excluded(run->skill_dir_fd, &run->hidden_dirs, &run->hidden_files, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return run_fail(run, r, "Failed to look for compiled Python in the skill: %s", strna(error));
        if (strv_length(run->hidden_dirs) + strv_length(run->hidden_files) > SANDBOX_HIDDEN_MAX)
                return run_fail(run, -E2BIG, "The skill holds more than %u __pycache__ folders, .pyc and "
                                ".DS_Store files, which runs never use; remove them", SANDBOX_HIDDEN_MAX);
        return 0;
}

static int prepare_pipes(SandboxRun *run) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, run->hold) < 0 ||
            pipe2(run->out_pipe, O_CLOEXEC) < 0 ||
            pipe2(run->err_pipe, O_CLOEXEC) < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, run->ctl) < 0)
                return run_fail(run, -errno, "Failed to create pipes: %m");
        if (fcntl(run->out_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(run->err_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(run->ctl[0], F_SETFL, O_NONBLOCK) < 0)
                return run_fail(run, -errno, "Failed to make pipes non-blocking: %m");
        return 0;
}

/* Where the run's network namespace is made. Ahead of the run (ahead.c) where the caller had it
 * made: that wins over the rest. Beside the init (netns.c) where the init is born
 * into its cgroup (cgroup v2, clone_into), whatever the uid: it then needs its release only after
 * the late part of its root, about 1 ms after the clone, and the engine has nothing else to do
 * until then (the user database is asked after the release, check_identity()): the thread's
 * 0.55 ms fit beside the init's work, and clone3() is 0.4 ms shorter. Elsewhere it comes with the
 * clone. Where the init enters its v1 cgroups itself, the engine makes them first (0.4 ms), and
 * with the namespace's thread its CPU holds 1.3 ms of work before the verdict against the init's
 * 1.15: 0.1 ms gained on a quiet machine, but with other work on the CPUs the thread waits for one
 * where clone3() would not, and the run lost up to 0.5 ms (bench/README.md, eighth round). Where
 * a backend places the init from outside (the rlimit one; cgroup v2 where the kernel refuses
 * CLONE_INTO_CGROUP), the init needs its release right after the fixed part of its root, before
 * the thread is done. */
static void place_netns(SandboxRun *run) {
        /* Made ahead of the run wins over both (ahead.c): neither the clone nor a thread of ours
         * makes it, and at most the release waits for the helper. */
        if (run->netns_beside && sandbox_ahead_pending(run->req->ahead)) {
                run->netns_beside = false;
                run->netns_ahead = true;
                return;
        }
        if (!run->netns_beside || run->backend->clone_into)
                return;
        run->netns_beside = false;
        run->clone_flags |= CLONE_NEWNET;
}

static int run_prepare(SandboxRun *run) {
        const RunRequest *req = run->req;
        int r;

        run->userns = geteuid() != 0;

        r = open_output_dir(run);
        if (r < 0)
                return r;
        if (req->skill_dir_fd >= 0) {
                struct stat st;

                run->skill_dir_fd = fcntl(req->skill_dir_fd, F_DUPFD_CLOEXEC, 3);
                if (run->skill_dir_fd < 0)
                        return run_fail(run, -errno, "Failed to duplicate the skill directory fd: %m");
                if (fstat(run->skill_dir_fd, &st) < 0 || !S_ISDIR(st.st_mode))
                        return run_fail(run, -ENOTDIR, "The skill directory fd is not a directory");
        } else
                run->skill_dir_fd = open(req->skill_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (run->skill_dir_fd < 0)
                return run_fail(run, -errno, "Failed to open the skill directory %s: %m",
                                strna(req->skill_dir));
        if (req->env_dir_fd >= 0) {
                struct stat st;

                run->env_dir_fd = fcntl(req->env_dir_fd, F_DUPFD_CLOEXEC, 3);
                if (run->env_dir_fd < 0)
                        return run_fail(run, -errno, "Failed to duplicate the environment fd: %m");
                if (fstat(run->env_dir_fd, &st) < 0 || !S_ISDIR(st.st_mode))
                        return run_fail(run, -ENOTDIR, "The environment fd is not a directory");
        }
        if (req->n_ro_dir_fds > SANDBOX_RO_DIRS_MAX)
                return run_fail(run, -E2BIG, "More than %u read-only directories", SANDBOX_RO_DIRS_MAX);
        if (req->n_ro_dir_fds > 0) {
                run->ro_dir_fds = calloc(req->n_ro_dir_fds, sizeof(int));
                if (!run->ro_dir_fds)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < req->n_ro_dir_fds; i++) {
                struct stat st;

                run->ro_dir_fds[run->n_ro_dir_fds] = fcntl(req->ro_dir_fds[i], F_DUPFD_CLOEXEC, 3);
                if (run->ro_dir_fds[run->n_ro_dir_fds] < 0)
                        return run_fail(run, -errno, "Failed to duplicate a read-only directory fd: %m");
                run->n_ro_dir_fds++;
                if (fstat(run->ro_dir_fds[i], &st) < 0 || !S_ISDIR(st.st_mode))
                        return run_fail(run, -ENOTDIR, "A read-only directory fd is not a directory");
        }
        if (req->command) {
                _cleanup_free_ char *why = NULL;

                r = sandbox_command_resolve(req->command[0], &run->exec_path, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        run->result->exec_failed = true;
                        return run_fail(run, r, "%s", why);
                }
        } else {
                r = check_script(run);
                if (r < 0)
                        return r;
        }
        r = prepare_hidden(run);
        if (r < 0)
                return r;
        r = prepare_namespaces(run);
        if (r < 0)
                return r;
        r = prepare_seccomp(run);
        if (r < 0)
                return r;
        run_mark(run, MARK_CHECKED);
        r = pick_backend(run);
        if (r < 0)
                return r;
        run->result->backend = run->backend->name;
        run->result->limits_enforced = run->backend->enforces | SANDBOX_LIMIT_TIMEOUT |
                                       SANDBOX_LIMIT_OUTPUT |
                                       SANDBOX_LIMIT_TMPFS;
        run_mark(run, MARK_LIMITS);
        r = prepare_identity(run);
        if (r < 0)
                return r;
        place_netns(run);
        run_mark(run, MARK_IDENTITY);
        r = prepare_files(run);
        if (r < 0)
                return r;
        compute_rlimits(run);
        r = build_argv(run);
        if (r < 0)
                return r;
        r = sandbox_env_build(req->env, req->env_search, req->input_json, &run->envp);
        if (r < 0)
                return r;
        r = prepare_stdin(run);
        if (r < 0)
                return r;
        return prepare_pipes(run);
}

static int write_id_map(pid_t pid, const char *file, const char *contents) {
        _cleanup_close_ int fd = -EBADF;
        char path[64];

        (void) snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, contents, strlen(contents)) != (ssize_t) strlen(contents))
                return errno > 0 ? -errno : -EIO;
        return 0;
}

static int map_ids(SandboxRun *run) {
        char map[64];
        int r;

        /* Unprivileged, the one id we may map is our own, and only after giving up setgroups(). */
        r = write_id_map(run->pid, "setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                return run_fail(run, r, "Failed to deny setgroups in the user namespace: %s", strerror(-r));
        (void) snprintf(map, sizeof(map), "%u %u 1\n", run->uid, getuid());
        r = write_id_map(run->pid, "uid_map", map);
        if (r < 0)
                return run_fail(run, r, "Failed to write the uid map: %s", strerror(-r));
        (void) snprintf(map, sizeof(map), "%u %u 1\n", run->gid, getgid());
        r = write_id_map(run->pid, "gid_map", map);
        if (r < 0)
                return run_fail(run, r, "Failed to write the gid map: %s", strerror(-r));
        return 0;
}

static int run_clone(SandboxRun *run) {
        SandboxChild child = {
                .uid = run->uid,
                .gid = run->gid,
                .userns = run->userns,
                .hold_fd = run->hold[0],
                .verdict_later = !run->uid_checked,
                .setup_before_hold = !run->userns,
                .placed = run->backend->self_place != NULL,
                .self_place = run->backend->self_place != NULL,
                .ctl_fd = run->ctl[1],
                .skill_dir_fd = run->skill_dir_fd,
                .env_dir_fd = run->env_dir_fd,
                .env_writable = run->req->env_writable,
                .ro_dir_fds = run->ro_dir_fds,
                .n_ro_dir_fds = run->n_ro_dir_fds,
                .stdin_fd = run->stdin_fd,
                .stdout_fd = run->out_pipe[1],
                .stderr_fd = run->err_pipe[1],
                .input_fd = run->input_fd,
                .hidden_dirs = run->hidden_dirs,
                .hidden_files = run->hidden_files,
                .input_size = run->req->input_json ? strlen(run->req->input_json) : 0,
                .file_fds = run->file_fds,
                .file_folders = run->file_folders,
                .workspace_fd = run->workspace_work_fd,
                .file_names = run->file_names,
                .n_files = run->n_files,
                /* The root holds /etc's few files, mount points and the input. */
                .root_size = 1024 * 1024 + (run->req->input_json ? strlen(run->req->input_json) : 0),
                .tmpfs_size = run->req->limits.tmpfs_size,
                .work_size = run->work_size,
                .out_size = run->req->limits.out_max,
                /* Entries under /out/files, plus /out, files/ and output.json. */
                .out_inodes = run->req->limits.artifacts_max + 16,
                .exec_path = run->exec_path ?: run->argv[0],
                .cwd = run->req->cwd ?: "/work",
                .argv = run->argv,
                .envp = run->envp,
                .rlimits = run->rlimits,
                .n_rlimits = run->n_rlimits,
                .seccomp = run->seccomp,
                .seccomp_notify = run->supervisor,
                .netns = run->clone_flags & CLONE_NEWNET,
                .join_netns = run->netns_beside || run->ahead_late,
                .netns_fd = run->ahead_fd,
                .network = run->req->network,
                .utsns = run->clone_flags & CLONE_NEWUTS,
                .cgroupns = !(run->result->layers_missing & SANDBOX_LAYER_CGROUPNS),
                .timing = run->timing,
        };
        uint64_t flags = run->clone_flags;
        int pidfd = -EBADF;
        int cgroup_fd = run->backend->clone_into ? run->backend->clone_into(run->backend_state) : -EBADF;
        struct sandbox_clone_args args = {
                .flags = flags | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
        };
        pid_t pid;

        /* Born in its cgroup (Linux 5.7): nothing to move afterwards, which costs an RCU grace
         * period, and not a single page charged anywhere else. */
        if (cgroup_fd >= 0) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t) cgroup_fd;
                child.placed = true;
        }

        /* A fork-like clone: the child runs on a copy of our stack and memory, never returns here,
         * and ends in execve() or _exit(). */
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid > 0 && cgroup_fd >= 0) {
                run->born_placed = true;
                if (run->backend->born)
                        run->backend->born(run->backend_state);
                log_debug("The sandbox init was cloned into its cgroup");
        } else if (pid < 0 && cgroup_fd >= 0 && errno != ENOSYS) {
                /* An older kernel (E2BIG, EINVAL), or a cgroup it will not start us in: then the
                 * backend places the init, and says why if it cannot either. */
                log_debug_errno(errno, "Cloning the sandbox init into its cgroup failed (%m); "
                                "placing it instead");
                args.flags &= ~(uint64_t) CLONE_INTO_CGROUP;
                args.cgroup = 0;
                child.placed = run->backend->self_place != NULL;
                pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        }
        if (pid < 0 && errno == ENOSYS) {
                child.placed = run->backend->self_place != NULL;
                pid = (pid_t) syscall(SYS_clone, (unsigned long) flags | SIGCHLD, NULL, NULL, NULL, 0);
                if (pid > 0) {
                        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
                        if (pidfd < 0) {
                                int saved = errno;

                                (void) kill(pid, SIGKILL);
                                (void) waitpid(pid, NULL, 0);
                                return run_fail(run, -saved, "Failed to open a pidfd for the sandbox: %s",
                                                strerror(saved));
                        }
                }
        }
        if (pid < 0) {
                if (run->userns && (errno == EPERM || errno == EINVAL || errno == ENOSPC ||
                                    errno == EUSERS || errno == EACCES))
                        return run_fail(run, -errno,
                                        "Failed to create the sandbox namespaces: user namespaces "
                                        "are not available to unprivileged users here (%m); run as root or "
                                        "through the skilld service");
                return run_fail(run, -errno, "Failed to create the sandbox namespaces: %m");
        }
        if (pid == 0)
                sandbox_child_main(&child);

        run->verdict_owed = child.verdict_later;
        run->pid = pid;
        run->pidfd = pidfd;
        (void) fcntl(run->pidfd, F_SETFD, FD_CLOEXEC);
        return 0;
}

static int read_control(SandboxRun *run);

static void run_kill(SandboxRun *run) {
        if (run->killed || run->pid <= 0)
                return;
        run->killed = true;
        /* The init is PID 1 of the run's namespace: its death takes every process of the run with
         * it. The backend's kill covers anything that would be outside (it cannot be, but the
         * cgroup is the authority on what is left). */
        (void) syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
        run->backend->kill(run->backend_state);
}

/* The record is prepared while the skill runs (record.c): the new logs and result.json's
 * temporary file are made, an output directory used before loses that run's result.json and logs
 * (freeing their blocks waits for the disk: 0.3 to 2 ms a file here), and the new names are
 * synced, in a thread. Started when the skill process hands over the filter's listener, just
 * before its execve() (or after the uid's verdict, without a listener): after the last clone (a
 * thread alive at a clone is unsafe; a uid the user database names clones again after the
 * release), and not at the release, where it slowed the init building its root more (entry to
 * the skill's execve() +0.3 ms, against +0.1 ms on the skill's own start here).
 * Where the skill never got that far, the store prepares it itself. */
static void record_begin(SandboxRun *run) {
        run_record_begin(&run->record, run->dest_fd, !run->req->caller_stores_result, true);
        /* The backend's tidying that no run waits for (v1: the cgroups killed engines left
         * behind), while the skill starts on the init's CPU and the engine has nothing to do. */
        if (run->backend->tidy && run->backend_state)
                run->backend->tidy(run->backend_state);
}

/* One byte for the held init (HOLD_*) with n fds. */
static int send_hold(SandboxRun *run, char byte, const int *fds, size_t n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * SANDBOX_CGROUP_FDS_MAX)];
        } control = {};
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t k;

        assert(n <= SANDBOX_CGROUP_FDS_MAX);
        if (n > 0) {
                struct cmsghdr *cmsg;

                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                cmsg = CMSG_FIRSTHDR(&mh);
                cmsg->cmsg_level = SOL_SOCKET;
                cmsg->cmsg_type = SCM_RIGHTS;
                cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n);
        }
        do
                k = sendmsg(run->hold[1], &mh, MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        return k == 1 ? 0 : -EIO;
}

/* Where the init places itself (cgroup v1): the run's cgroups, made now where the backend left
 * that for after the clone, handed to the init, which enters them once it has built the fixed
 * part of its root, before anything of the run's own. */
static int place_self(SandboxRun *run) {
        _cleanup_free_ char *why = NULL;
        int fds[SANDBOX_CGROUP_FDS_MAX];
        size_t n;
        int r;

        if (!run->backend->self_place)
                return 0;
        if (run->backend->create && !run->cgroups_made) {
                r = run->backend->create(run->backend_state, &why);
                if (r < 0)
                        return run_fail(run, r, "Failed to set up the run's %s limits: %s", run->backend->name,
                                        why ?: strerror(-r));
                run->cgroups_made = true;
        }
        n = run->backend->self_place(run->backend_state, fds, ELEMENTSOF(fds));
        r = send_hold(run, HOLD_CGROUPS, fds, n);
        if (r < 0) {
                /* The init is gone: what it said is the reason. */
                (void) read_control(run);
                return run_fail(run, r, "Failed to hand the sandbox its cgroups: %s", strerror(-r));
        }
        run_mark(run, MARK_CGROUPS);
        return 0;
}

/* Asks the user database about the uid locked before the clone: 0 when it names no account,
 * 1 when it does. Nothing runs as the uid before this said 0, and nothing else waits for it: the
 * engine asks after the release (the first lookup of a process loads the database's modules,
 * about 0.4 ms), while the init finishes its root; the init waits for the verdict
 * (send_verdict()) only right before its uid change, and starts the skill process after it. */
static int check_identity(SandboxRun *run) {
        if (run->uid_checked)
                return 0;
        if (sandbox_identity_known(run->uid)) {
                log_debug("The user database names uid %u: the run takes another one", run->uid);
                return 1;
        }
        run->uid_checked = true;
        return 0;
}

/* The verdict the held init waits for before its uid change, one byte (HOLD_UID); the skill
 * process it starts after that inherits the uid and needs none. The hold socket is done with
 * then. A failure means the init is gone: what it said is the reason. */
static int send_verdict(SandboxRun *run) {
        int r = 0;

        if (run->verdict_owed) {
                r = send_hold(run, HOLD_UID, NULL, 0);
                if (r < 0) {
                        (void) read_control(run);
                        return run_fail(run, r, "Failed to send the sandbox the verdict on uid %u: %s",
                                        run->uid, strerror(-r));
                }
                run->verdict_owed = false;
                run_mark(run, MARK_UID_CHECKED);
        }
        run->hold[1] = safe_close(run->hold[1]);
        return 0;
}

/* Leaves the init a CPU of its own while the engine does its part after the clone (its v1
 * cgroups or the network namespace's thread, then the user database: about 0.8 ms): waits until
 * the init runs and says where, and if that is where the engine is, moves the engine to the
 * caller's other CPUs until the uid's verdict is sent (step_back()). A new process is queued on
 * the CPU of its parent, which the kernel does not leave for an idle one at the clone; and a
 * process woken by a task on a busy CPU mostly lands on the waker's (measured: bench/README.md,
 * sixth round). Without this the init started when the engine's work was done, or the engine
 * preempted it as soon as it woke; nothing overlapped. An init that is gone (EOF) says why on
 * the control socket, read when the next step fails. */
static void step_aside(SandboxRun *run) {
        cpu_set_t others;
        int cpu;

        if (loop_read(run->hold[1], &cpu, sizeof(cpu)) != (ssize_t) sizeof(cpu) || cpu < 0 ||
            cpu >= CPU_SETSIZE)
                return;
        run->init_cpu = cpu;
        if (sched_getcpu() != cpu)
                return;
        if (sched_getaffinity(0, sizeof(run->affinity), &run->affinity) < 0)
                return;
        others = run->affinity;
        CPU_CLR(cpu, &others);
        if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof(others), &others) < 0)
                return;
        run->stepped_aside = true;
}

/* The caller's CPUs again: before another clone (the init inherits them) and after the verdict. */
static void step_back(SandboxRun *run) {
        if (!run->stepped_aside)
                return;
        (void) sched_setaffinity(0, sizeof(run->affinity), &run->affinity);
        run->stepped_aside = false;
}

/* How long the release waits for a namespace made ahead and not ready at the clone. */
#define AHEAD_WAIT_USEC 200U

static void ahead_marks(SandboxRun *run) {
        const SandboxAhead *a = run->req->ahead;

        if (!run->timing)
                return;
        run->marks[MARK_AHEAD] = a->started_usec;
        run->marks[MARK_AHEAD_FORKED] = a->forked_usec;
        run->marks[MARK_AHEAD_BEGUN] = a->begun_usec;
        run->marks[MARK_AHEAD_NETNS] = a->made_usec;
        run->marks[MARK_AHEAD_TAKEN] = a->taken_usec;
}

/* The network namespace made ahead (ahead.c), for the first init. Ready at the clone: the init
 * inherits its fd and enters it first thing. Not yet: the engine does not wait there (the clone
 * would make one in 0.4 ms, and the helper needs a CPU to finish); the init is cloned without it
 * anyway and gets it with its release, which the engine gives about 1 ms later, as it does the
 * one made beside the init (finish_netns()). A helper that failed (or an object spent already)
 * leaves the namespace to the clone, whose failure, if the kernel refuses it too, is the one
 * reported. */
static void take_ahead(SandboxRun *run) {
        const char *what = NULL;
        int r;

        if (!run->netns_ahead)
                return;
        run->netns_ahead = false;
        r = sandbox_ahead_take_netns(run->req->ahead, 0, &run->ahead_fd, &what);
        if (r == -EAGAIN) {
                run->ahead_late = true;
                return;
        }
        ahead_marks(run);
        if (r < 0) {
                log_debug_errno(r, "No network namespace made ahead (%s: %m): the clone makes it",
                                what ?: "none");
                run->clone_flags |= CLONE_NEWNET;
        }
}

/* Starts the thread that makes the run's network namespace (netns.c), on the caller's CPUs but
 * the init's: it stays off the init's CPU as the engine does (step_aside()), and a thread starts
 * with the affinity of its creator, already narrowed when the engine stepped aside. One for each
 * init: the release hands it over and the engine closes its fd, so an init abandoned after that
 * (a uid the user database names) takes its namespace along, and the next one gets a new one. */
static int start_netns(SandboxRun *run) {
        cpu_set_t cpus;
        bool narrow = false;
        int r;

        if (!run->netns_beside)
                return 0;
        if (!run->stepped_aside && run->init_cpu >= 0 && sched_getaffinity(0, sizeof(cpus), &cpus) >= 0) {
                CPU_CLR(run->init_cpu, &cpus);
                narrow = CPU_COUNT(&cpus) > 0;
        }
        r = sandbox_netns_start(&run->netns, narrow ? &cpus : NULL);
        if (r < 0)
                return run_fail(run, r, "Failed to start making the run's network namespace: %s", strerror(-r));
        return 0;
}

/* Waits for the network namespace: before the release, which carries it, and before any other
 * clone (a thread alive at a clone is unsafe). */
static int finish_netns(SandboxRun *run) {
        const char *what = NULL;
        int r;

        if (run->ahead_late) {
                /* A short wait: a helper that has a CPU is about done by now (on a quiet machine
                 * it had the namespace 0.9 ms after it was asked for, about when the release
                 * comes). One that has none may need milliseconds more: the init then makes its
                 * own, on its path as the clone's was (0.4 ms), and is sent no fd. */
                r = sandbox_ahead_take_netns(run->req->ahead, AHEAD_WAIT_USEC, &run->netns.fd, &what);
                ahead_marks(run);
                if (r == -EAGAIN) {
                        log_debug("The network namespace made ahead is late: the init makes its own");
                        sandbox_ahead_abandon(run->req->ahead);
                        return 0;
                }
                if (r < 0)
                        return run_fail(run, r, "%s: %s", what ?: "Failed to make the run's network namespace",
                                        strerror(-r));
                return 0;
        }
        if (!run->netns_beside)
                return 0;
        r = sandbox_netns_join(&run->netns, &what);
        if (run->timing && run->netns.made_usec > 0)
                run->marks[MARK_NETNS] = run->netns.made_usec;
        if (r < 0)
                return run_fail(run, r, "%s: %s", what ?: "Failed to make the run's network namespace",
                                strerror(-r));
        return 0;
}

/* An init whose uid the user database names: killed while it waits for the verdict (its skill
 * process not started yet), reaped (its PID namespace is empty by then, and its network namespace
 * gone with it), its channels closed. Nothing ran as the uid; its cgroups (empty again) serve the
 * next one. */
static void abandon_init(SandboxRun *run) {
        run->hold[1] = safe_close(run->hold[1]);
        (void) syscall(SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0);
        while (waitpid(run->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        run->pid = 0;
        run->pidfd = safe_close(run->pidfd);
        run->born_placed = false;
        for (size_t i = 0; i < 2; i++) {
                run->hold[i] = safe_close(run->hold[i]);
                run->ctl[i] = safe_close(run->ctl[i]);
                run->out_pipe[i] = safe_close(run->out_pipe[i]);
                run->err_pipe[i] = safe_close(run->err_pipe[i]);
        }
}

static int run_start(SandboxRun *run) {
        _cleanup_free_ char *why = NULL;
        int r;

        take_ahead(run);
        for (;;) {
                r = run_clone(run);
                /* The init has the namespace made ahead, or none has it: used once. A second init
                 * (a uid the user database names) gets one of its own with the clone. */
                if (run->ahead_fd >= 0) {
                        run->ahead_fd = safe_close(run->ahead_fd);
                        run->clone_flags |= CLONE_NEWNET;
                }
                if (r < 0)
                        return r;
                run_mark(run, MARK_CLONED);

                /* Our copies of the child's ends: the pipes must see EOF once the run's processes
                 * are gone. */
                run->hold[0] = safe_close(run->hold[0]);
                run->ctl[1] = safe_close(run->ctl[1]);
                run->out_pipe[1] = safe_close(run->out_pipe[1]);
                run->err_pipe[1] = safe_close(run->err_pipe[1]);
                step_aside(run);

                /* While the init builds the fixed part of its root: its v1 cgroups, which it
                 * needs first, and its network namespace (in a thread, where place_netns() chose
                 * so), which it needs with the release. */
                r = place_self(run);
                if (r < 0)
                        goto abort;
                r = start_netns(run);
                if (r < 0)
                        goto abort;
                if (run->userns) {
                        r = map_ids(run);
                        if (r < 0)
                                goto abort;
                }
                r = compile_seccomp(run);
                if (r < 0)
                        goto abort;
                /* The init builds the part of its root that holds nothing of the run meanwhile; a
                 * failure there (it exits, and then cannot be placed) is the one to report. */
                r = run->backend->self_place || run->born_placed ? 0 :
                        run->backend->place(run->backend_state, run->pid, &why);
                if (r < 0) {
                        (void) read_control(run);
                        r = run_fail(run, r, "Failed to place the sandbox under its %s limits: %s",
                                     run->backend->name,
                                     why ?: strerror(-r));
                        goto abort;
                }

                r = finish_netns(run);
                if (r < 0)
                        goto abort;

                /* From here on the skill's time runs. */
                run->start_mono = now_usec(CLOCK_MONOTONIC);
                r = release_init(run);
                if (r < 0) {
                        (void) read_control(run);
                        r = run_fail(run, r, "Failed to release the sandbox: %s", strerror(-r));
                        goto abort;
                }
                run->seccomp_fd = safe_close(run->seccomp_fd);
                /* The init holds the network namespace now, and nothing else does. One made
                 * ahead was this init's: another one gets its own with the clone. */
                sandbox_netns_done(&run->netns);
                if (run->ahead_late) {
                        run->ahead_late = false;
                        run->clone_flags |= CLONE_NEWNET;
                }
                run_mark(run, MARK_RELEASED);

                /* While the init finishes its root, to its uid change, where it waits for this. */
                if (check_identity(run) == 0)
                        break;
                /* Nothing ran as the uid: the init waits for the verdict, without a skill process.
                 * Killing the init ends its PID namespace, all of it, before it is reaped; its
                 * network namespace goes with it, its v1 cgroups are empty again. */
                step_back(run);
                abandon_init(run);
                r = reallocate_identity(run);
                if (r >= 0)
                        r = prepare_pipes(run);
                if (r < 0)
                        return r;
        }

        r = send_verdict(run);
        if (r < 0)
                goto abort;
        step_back(run);
        if (!run->supervisor)
                record_begin(run);
        return 0;

abort:
        sandbox_netns_done(&run->netns);
        step_back(run);
        /* EOF on the hold pipe tells the held child to exit; SIGKILL in case it does not. */
        run->hold[1] = safe_close(run->hold[1]);
        run_kill(run);
        return r;
}

static void handle_message(SandboxRun *run, const ChildMessage *m, int fd) {
        _cleanup_close_ int passed = fd;
        char text[sizeof(m->text)];

        memcpy(text, m->text, sizeof(text));
        text[sizeof(text) - 1] = '\0';

        switch (m->type) {
        case CHILD_MSG_ERROR:
                (void) run_fail(run, -(m->error ?: EIO), "Sandbox setup failed: %s", text);
                break;
        case CHILD_MSG_EXEC_FAILED:
                if (!run->result->error)
                        run->result->exec_failed = true;
                (void) run_fail(run, -(m->error ?: EIO), "%s", text);
                break;
        case CHILD_MSG_OUT_FD:
                if (passed >= 0 && run->out_fd < 0)
                        run->out_fd = TAKE_FD(passed);
                break;
        case CHILD_MSG_NOTIFY_FD:
                if (passed >= 0 && run->supervisor)
                        seccomp_supervisor_attach(run->supervisor, TAKE_FD(passed));
                record_begin(run);
                break;
        case CHILD_MSG_WORK_FD:
                if (passed >= 0 && run->work_fd < 0 && run->req->workspace_fd >= 0)
                        run->work_fd = TAKE_FD(passed);
                break;
        case CHILD_MSG_EXITED:
                run->exited = true;
                run->exit_msg = *m;
                run_mark(run, MARK_EXITED);
                break;
        case CHILD_MSG_MARKS:
                if (run->timing) {
                        uint64_t marks[_MARK_MAX];

                        memcpy(marks, m->text, sizeof(marks));
                        for (size_t i = 0; i < _MARK_MAX; i++)
                                if (marks[i] != 0)
                                        run->marks[i] = marks[i];
                }
                break;
        default:
                break;
        }
}

/* Reads every queued control message; EOF closes our end. */
static int read_control(SandboxRun *run) {
        while (run->ctl[0] >= 0) {
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(int))];
                } control;
                ChildMessage m = {};
                struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
                struct msghdr mh = {
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = &control,
                        .msg_controllen = sizeof(control.buf),
                };
                struct cmsghdr *cmsg;
                int fd = -EBADF;
                ssize_t n;

                n = recvmsg(run->ctl[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return -errno;
                }
                if (n == 0) {
                        run->ctl[0] = safe_close(run->ctl[0]);
                        return 0;
                }
                for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg))
                        if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
                            cmsg->cmsg_len == CMSG_LEN(sizeof(int)))
                                memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
                if (n != sizeof(m)) {
                        (void) safe_close(fd);
                        continue;
                }
                handle_message(run, &m, fd);
        }
        return 0;
}

/* Reads what is there (a bounded amount, so the deadline is checked in between). */
static int read_stream(int *fd, RunStream *s, const char *label, uint64_t max, LiveCopy *live) {
        for (unsigned i = 0; i < 64 && *fd >= 0; i++) {
                char buf[64 * 1024];
                ssize_t n;
                int r;

                n = read(*fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return -errno;
                }
                if (n == 0) {
                        *fd = safe_close(*fd);
                        live_copy_end(live);
                        return 0;
                }
                r = run_stream_append(s, label, max, buf, n, live);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_streams(SandboxRun *run) {
        RunResult *res = run->result;
        int r;

        r = read_stream(&run->out_pipe[0], &res->stdout_stream, "stdout", run->req->limits.stdout_max,
                        &run->out_live);
        if (r >= 0)
                r = read_stream(&run->err_pipe[0], &res->stderr_stream, "stderr",
                                run->req->limits.stderr_max, &run->err_live);
        /* Into the logs as they come, once they exist: the end then only syncs them. A failure
         * here is the store's to report, at the end. */
        if (r >= 0 && run_record_ready(&run->record, false))
                (void) run_record_write_logs(&run->record, &res->stdout_stream, &res->stderr_stream);
        return r;
}

/* Whatever the control socket and the two streams have ready. */
static int read_ready(SandboxRun *run) {
        int r;

        r = read_control(run);
        if (r < 0)
                return r;
        return read_streams(run);
}

/* Until the init exits: streams, messages, cancel, deadline. */
static int run_watch(SandboxRun *run) {
        uint64_t deadline = run->start_mono + run->req->limits.timeout_usec;
        int r;

        for (;;) {
                struct pollfd p[6];
                size_t n = 0, i_pid, i_cancel = SIZE_MAX, i_notify;
                int timeout_ms = -1;

                p[n++] = (struct pollfd) { .fd = run->ctl[0], .events = POLLIN };
                p[n++] = (struct pollfd) { .fd = run->out_pipe[0], .events = POLLIN };
                p[n++] = (struct pollfd) { .fd = run->err_pipe[0], .events = POLLIN };
                i_pid = n;
                p[n++] = (struct pollfd) { .fd = run->pidfd, .events = POLLIN };
                if (run->req->cancel_fd >= 0 && !run->killed) {
                        i_cancel = n;
                        p[n++] = (struct pollfd) { .fd = run->req->cancel_fd, .events = POLLIN };
                }
                /* A refused call waits in the kernel until it is answered here. */
                i_notify = n;
                p[n++] = (struct pollfd) { .fd = seccomp_supervisor_fd(run->supervisor), .events = POLLIN };

                if (!run->killed) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);

                        if (now >= deadline) {
                                run->timed_out = true;
                                run_kill(run);
                                continue;
                        }
                        timeout_ms = (int) MIN((deadline - now + 999) / 1000, (uint64_t) INT_MAX);
                }

                /* poll() ignores negative fds, so closed streams simply drop out. */
                if (poll(p, n, timeout_ms) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }

                if (p[i_notify].revents != 0) {
                        r = seccomp_supervisor_process(run->supervisor);
                        if (r < 0)
                                return r;
                }
                r = read_ready(run);
                if (r < 0)
                        return r;
                if (i_cancel != SIZE_MAX && (p[i_cancel].revents & (POLLIN | POLLHUP | POLLERR))) {
                        run->canceled = true;
                        run_kill(run);
                }
                if (p[i_pid].revents & POLLIN) {
                        run_mark(run, MARK_INIT_GONE);
                        return 0;
                }
                /* The init killed and reaped every other process of the run, and only exits
                 * now: its namespaces are torn down while the result is stored. */
                if (run->exited)
                        return 0;
        }
}

/* The init is gone, or reported that every other process of the run is: what is still in the
 * pipes (and, without that report, on the socket) is all there will be. */
static int run_drain(SandboxRun *run) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + DRAIN_TIMEOUT_MSEC * 1000ULL;
        int r;

        while ((run->ctl[0] >= 0 && !run->exited) || run->out_pipe[0] >= 0 || run->err_pipe[0] >= 0) {
                struct pollfd p[3] = {
                        { .fd = run->ctl[0], .events = POLLIN },
                        { .fd = run->out_pipe[0], .events = POLLIN },
                        { .fd = run->err_pipe[0], .events = POLLIN },
                };
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                if (now >= end)
                        break;
                if (poll(p, 3, (int) ((end - now) / 1000 + 1)) < 0 && errno != EINTR)
                        return -errno;
                r = read_ready(run);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Reaps the init: its wait status, and its usage, which holds all it reaped. */
static void run_wait_init(SandboxRun *run, int *ret_status, struct rusage *ret_ru) {
        while (wait4(run->pid, ret_status, 0, ret_ru) < 0 && errno == EINTR)
                ;
        run->init_reaped = true;
}

/* Gathers usage once every process of the run but the init is gone: the backend's figures where
 * it has them, else what the kernel accounted to the init for all the processes it reaped (its
 * own report, or, when it did not live to send one, its wait status and usage: ru). */
static void run_collect(SandboxRun *run, int status, const struct rusage *ru, SandboxOutcome *ret_outcome) {
        RunResult *res = run->result;
        SandboxOutcome outcome = {};
        uint64_t user_usec, system_usec;
        int r;

        res->ended_at = now_usec(CLOCK_REALTIME);
        res->usage.wall_usec = now_usec(CLOCK_MONOTONIC) - run->start_mono;

        /* Belt and braces: nothing may outlive the run, whatever the namespace did. The init that
         * reported is still there, exiting; its report means that nothing else of the run is
         * (it is PID 1 of the run's namespace, it killed and reaped every other process of it,
         * and none can leave it): the backend's kill waits for the init's reaping. */
        if (!run->exited)
                run->backend->kill(run->backend_state);
        r = run->backend->collect(run->backend_state, &outcome);
        if (r < 0)
                outcome = SANDBOX_OUTCOME_INIT;

        if (!run->exited && !run->killed && !res->error) {
                assert(ru);
                if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && outcome.oom)
                        /* An OOM kill of the cgroup (memory.oom.group) takes the init along: the
                         * run ended for lack of memory, and had no chance to say so itself. */
                        res->signal = SIGKILL;
                else if (WIFEXITED(status))
                        (void) run_fail(run, -EPROTO,
                                        "The sandbox init exited with status %d before the skill "
                                        "ended", WEXITSTATUS(status));
                else
                        (void) run_fail(run, -EPROTO, "The sandbox init was killed by signal %s",
                                        strna(sigabbrev_np(WTERMSIG(status))));
        }

        user_usec = ru ? timeval_usec(&ru->ru_utime) : run->exit_msg.user_usec;
        system_usec = ru ? timeval_usec(&ru->ru_stime) : run->exit_msg.system_usec;
        res->usage.user_usec = outcome.usage.user_usec != RUN_USAGE_UNKNOWN ? outcome.usage.user_usec
                                                                            : user_usec;
        res->usage.system_usec = outcome.usage.system_usec != RUN_USAGE_UNKNOWN ? outcome.usage.system_usec
                                                                                : system_usec;
        if (outcome.usage.memory_peak != RUN_USAGE_UNKNOWN)
                res->usage.memory_peak = outcome.usage.memory_peak;
        else if (run->exited && run->exit_msg.maxrss > 0)
                res->usage.memory_peak = run->exit_msg.maxrss;
        else if (ru)
                res->usage.memory_peak = (uint64_t) ru->ru_maxrss * 1024U;
        res->usage.tasks_peak = outcome.usage.tasks_peak;
        *ret_outcome = outcome;
        run_mark(run, MARK_REAPED);
}

/* The output is kept as the skill wrote it (json-exact.h): its numbers never pass through a double. */
static void read_output_json(SandboxRun *run) {
        RunResult *res = run->result;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL, *error = NULL;
        size_t size = 0;
        struct stat st;
        int r;

        if (run->out_fd >= 0) {
                /* O_NONBLOCK: a FIFO named output.json must not hang us; it is refused below. */
                fd = openat(run->out_fd, "output.json",
                            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0 && errno != ENOENT) {
                        res->output_error = strdup_printf(
                                        "/out/output.json cannot be opened: %s",
                                        errno == ELOOP ? "it is a symlink" : strerror(errno));
                        return;
                }
        }
        if (fd >= 0) {
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                        res->output_error = strdup("/out/output.json is not a regular file");
                        return;
                }
                r = read_full_fd(fd, SANDBOX_OUTPUT_JSON_MAX, &data, &size);
                if (r < 0) {
                        res->output_error = strdup_printf("/out/output.json cannot be read: %s",
                                                          r == -EFBIG ? "larger than 16M" : strerror(-r));
                        return;
                }
                r = json_parse_exact(data, size, &res->output, &error);
                if (r < 0) {
                        res->output_error = strdup_printf("/out/output.json is not valid JSON: %s", error);
                        return;
                }
                res->output_source = "output.json";
                return;
        }

        /* No output.json: stdout, when all of it was kept and it is JSON and nothing else. */
        if (res->stdout_stream.size > 0 && !res->stdout_stream.truncated &&
            json_parse_exact(res->stdout_stream.data, res->stdout_stream.size, &res->output, NULL) >= 0)
                res->output_source = "stdout";
}

static void check_out_full(SandboxRun *run) {
        struct statfs sf;

        /* ENOSPC inside leaves the tmpfs with no free block (a short write fills it exactly), and
         * the inode cap is the artifact cap. */
        if (run->out_fd >= 0 && fstatfs(run->out_fd, &sf) >= 0)
                run->result->out_full = sf.f_bfree == 0 || sf.f_ffree == 0;
}

static RunStatus decide_status(SandboxRun *run, const SandboxOutcome *outcome) {
        RunResult *res = run->result;
        bool success;

        if (res->error)
                return RUN_STATUS_ERROR;
        if (run->canceled)
                return RUN_STATUS_CANCELED;
        if (run->timed_out)
                return RUN_STATUS_TIMEOUT;

        switch (run->exit_msg.code) {
        case CLD_EXITED:
                res->exit_code = run->exit_msg.status;
                break;
        case CLD_KILLED:
        case CLD_DUMPED:
                res->signal = run->exit_msg.status;
                break;
        default:
                break;
        }
        success = res->exit_code == 0;

        /* A limit explains a failure; a skill that recovered from a failed fork and succeeded
         * anyway succeeded. */
        if (!success && outcome->oom)
                return RUN_STATUS_OOM;
        if (!success && outcome->tasks)
                return RUN_STATUS_TASKS;
        if (res->signal == SIGSYS)
                return RUN_STATUS_SECCOMP;
        if (res->signal > 0)
                return RUN_STATUS_SIGNAL;
        if (res->out_full || res->artifacts_truncated)
                return RUN_STATUS_OUTPUT_LIMIT;
        return success ? RUN_STATUS_SUCCEEDED : RUN_STATUS_FAILED;
}

_printf_(2, 3)
static void store_fail(SandboxRun *run, const char *fmt, ...) {
        va_list ap;

        if (run->result->store_error)
                return;
        va_start(ap, fmt);
        if (vasprintf(&run->result->store_error, fmt, ap) < 0)
                run->result->store_error = NULL;
        va_end(ap);
}

/* The init's end, in the record's thread while the engine writes and commits the result (see
 * run_record_meanwhile()): an init that reported the run's end (it killed and reaped every other
 * process of the run, and exits: its namespaces' teardown takes an RCU grace period or more) is
 * reaped once its exit is complete, and the run's cgroups, empty then, are removed. The engine
 * touches none of that until the thread is done (run_record_settle()). */
static void finish_init(void *userdata) {
        SandboxRun *run = userdata;

        if (run->pid > 0 && !run->init_reaped) {
                run_wait_init(run, NULL, NULL);
                run->backend->kill(run->backend_state);
                run_mark(run, MARK_INIT_REAPED);
        }
        free_backend(run);
}

/* result.json's text. */
static int format_result(SandboxRun *run, char **ret) {
        _cleanup_(cJSON_Deletep) cJSON *json = NULL;
        int r;

        r = run_result_to_json(run->result, &json);
        if (r < 0)
                return r;
        *ret = json_format(json);
        return *ret ? 0 : -ENOMEM;
}

/* result.json written, synced and renamed here: where a log's sync failed (EIO), it says so. */
static int store_result_again(SandboxRun *run) {
        _cleanup_(atomic_file_done) AtomicFile result = ATOMIC_FILE_NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = format_result(run, &text);
        if (r >= 0)
                r = atomic_file_write_at(run->dest_fd, "result.json", text, strlen(text), 0644, &result);
        if (r >= 0)
                r = atomic_file_sync(&result);
        if (r >= 0)
                r = atomic_file_commit(&result);
        if (r < 0)
                return r;
        /* As after the first rename (run_store()). */
        return fsync(run->dest_fd) < 0 ? -errno : 0;
}

/* Artifacts, logs and result.json into the output directory. Failures here do not change why
 * the run ended; they are reported as store_error. */
static void run_store(SandboxRun *run) {
        RunResult *res = run->result;
        RunRecord *rec = &run->record;
        _cleanup_free_ char *why = NULL, *text = NULL;
        int r;

        /* A kept /work gets what the run left, however it ended, once the skill ran. */
        if (run->req->workspace_fd >= 0 && run->work_fd >= 0 && res->status != RUN_STATUS_ERROR) {
                _cleanup_free_ char *werr = NULL;

                r = sandbox_workspace_save(run->req->workspace_fd, run->work_fd, &werr);
                if (r < 0)
                        store_fail(run, "%s", werr ?: strerror(-r));
        }
        if (run->out_fd >= 0 && res->status != RUN_STATUS_ERROR) {
                /* No more than /out can hold: what was in it, not what copying it would write. */
                r = sandbox_copy_artifacts(run->out_fd, run->files_dest_fd, run->req->limits.artifacts_max,
                                           run->req->limits.out_max, res, &why);
                if (r < 0)
                        store_fail(run, "%s", why ?: strerror(-r));
                if (res->artifacts_truncated && res->status == RUN_STATUS_SUCCEEDED)
                        res->status = RUN_STATUS_OUTPUT_LIMIT;
        }
        if (run->dest_fd < 0)
                return;

        /* result.json is the commit point: once it exists, so do the complete logs beside it,
         * also after a crash. The logs were made and named while the skill ran, those names
         * synced, and their bytes written as they came (record.c); the logs' bytes and
         * result.json's are synced before its rename (one journal commit carries them), which is
         * synced last. A crash before that leaves logs that may be incomplete, and no result.json
         * to vouch for them. Where the skill never started, all of it happens here. */
        run_record_begin(rec, run->dest_fd, !run->req->caller_stores_result, false);
        (void) run_record_ready(rec, true);
        r = run_record_write_logs(rec, &res->stdout_stream, &res->stderr_stream);
        if (r < 0)
                store_fail(run, "Failed to write the logs: %s", strerror(-r));
        if (run->req->caller_stores_result)
                return;

        r = format_result(run, &text);
        if (r >= 0)
                r = run_record_write_result(rec, text, strlen(text));
        run_mark(run, MARK_WRITTEN);
        if (r < 0) {
                store_fail(run, "Failed to write result.json: %s", strerror(-r));
                return;
        }
        run_record_commit(rec);
        if (run->timing) {
                run->marks[MARK_LOGS_SYNCED] = rec->logs_usec;
                run->marks[MARK_STORED_LOGS] = rec->synced_usec;
                run->marks[MARK_STORED] = rec->stored_usec;
        }
        if (rec->renamed) {
                /* result.json says it all already; the caller hears that it may not last. */
                if (rec->rename_sync_error < 0)
                        store_fail(run, "result.json is in place but may not survive a crash: %s",
                                   strerror(-rec->rename_sync_error));
                return;
        }
        /* Rare: the logs are not whole under their names (a log's sync failed: EIO; a name an
         * earlier run's files hold), and result.json must say so: written and synced again. */
        if (rec->remove_error < 0)
                store_fail(run, "Failed to remove the earlier result.json: %s", strerror(-rec->remove_error));
        else if (rec->logs_error < 0 || rec->out_sync < 0 || rec->err_sync < 0)
                store_fail(run, "Failed to write the logs: %s",
                           strerror(-(rec->logs_error < 0 ? rec->logs_error :
                                      rec->out_sync < 0 ? rec->out_sync : rec->err_sync)));
        else {
                store_fail(run, "Failed to write result.json: %s", strerror(-rec->result_error));
                return;
        }
        r = store_result_again(run);
        if (r < 0)
                store_fail(run, "Failed to write result.json: %s", strerror(-r));
}

int sandbox_run(const RunRequest *req, RunResult **ret, char **error) {
        _cleanup_(sandbox_run_done) SandboxRun run = {
                .req = req,
                .skill_dir_fd = -EBADF,
                .env_dir_fd = -EBADF,
                .dest_fd = -EBADF,
                .files_dest_fd = -EBADF,
                .lock_fd = -EBADF,
                .hold = { -EBADF, -EBADF },
                .ctl = { -EBADF, -EBADF },
                .out_pipe = { -EBADF, -EBADF },
                .err_pipe = { -EBADF, -EBADF },
                .stdin_fd = -EBADF,
                .input_fd = -EBADF,
                .pidfd = -EBADF,
                .out_fd = -EBADF,
                .work_fd = -EBADF,
                .workspace_work_fd = -EBADF,
                .seccomp_fd = -EBADF,
                .netns = SANDBOX_NETNS_NULL,
                .ahead_fd = -EBADF,
                .init_cpu = -1,
        };
        SandboxOutcome outcome = {};
        int r;

        run.timing = log_get_max_level() >= LOG_DEBUG;
        run_mark(&run, MARK_ENTER);
        live_copy_init(&run.out_live, req->stdout_fd);
        live_copy_init(&run.err_live, req->stderr_fd);

        r = request_check(req, error);
        if (r < 0)
                return r;
        r = result_new(req, &run.result);
        if (r < 0)
                return error_setf(error, r, "Failed to allocate the run result");

        r = run_prepare(&run);
        if (r >= 0) {
                run_mark(&run, MARK_PREPARED);
                r = run_start(&run);
        }
        if (r >= 0) {
                r = run_watch(&run);
                if (r < 0) {
                        (void) run_fail(&run, r, "Failed to watch the run: %s", strerror(-r));
                        run_kill(&run);
                }
        }
        if (r < 0 && !run.result->error)
                (void) run_fail(&run, r, "Failed to start the run: %s", strerror(-r));

        if (run.pid > 0) {
                /* Only the init's death ends a run: if watching failed, it was killed above. */
                r = run_drain(&run);
                if (r < 0)
                        (void) run_fail(&run, r, "Failed to read the run's output: %s", strerror(-r));
                run_mark(&run, MARK_DRAINED);
                /* The logs are whole: their syncs start while the usage is read and result.json
                 * written. */
                if (run_record_ready(&run.record, true)) {
                        (void) run_record_write_logs(&run.record, &run.result->stdout_stream,
                                                     &run.result->stderr_stream);
                        run_record_logs_final(&run.record);
                }
                if (run.exited)
                        /* The init is reaped later, once the result is stored. */
                        run_collect(&run, 0, NULL, &outcome);
                else {
                        int status = 0;
                        struct rusage ru = {};

                        run_wait_init(&run, &status, &ru);
                        run_collect(&run, status, &ru, &outcome);
                }
                if (run.supervisor && seccomp_supervisor_to_result(run.supervisor, run.result) < 0)
                        (void) run_fail(&run, -ENOMEM, "Failed to record the refused system calls");
                /* The init's end and the cgroups' removal in the record's thread, after the logs'
                 * syncs, while the result is written and committed here. */
                (void) run_record_meanwhile(&run.record, finish_init, &run);
        } else
                run.result->ended_at = now_usec(CLOCK_REALTIME);

        check_out_full(&run);
        run.result->status = decide_status(&run, &outcome);
        if (run.result->status != RUN_STATUS_ERROR)
                read_output_json(&run);
        run_store(&run);
        run_record_settle(&run.record);
        if (run.pid > 0 && !run.init_reaped) {
                int status = 0;
                struct rusage ru = {};

                run_wait_init(&run, &status, &ru);
                run.backend->kill(run.backend_state);
                run_mark(&run, MARK_INIT_REAPED);
        }
        free_backend(&run);

        *ret = TAKE_PTR(run.result);
        return 0;
}
