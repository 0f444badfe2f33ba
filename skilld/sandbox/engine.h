/* The sandbox engine: runs one script of a skill tree, isolated and limited, and hands back a
 * structured result. Both callers use it: `skillctl run` embedded, and the skilld daemon (which
 * plugs its own limit backend, the systemd scope, through SandboxBackendOps).
 *
 * The engine works on a plain host directory holding a validated skill tree (the loader made it),
 * a script path relative to it and an interpreter; it knows nothing of SKILL.md, archives or
 * D-Bus. One call, sandbox_run(), runs to the end: it blocks until the run finished, was
 * canceled through cancel_fd or hit its timeout, and leaves nothing of the run behind. */
#pragma once

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "util.h"

typedef struct SandboxBackendOps SandboxBackendOps;

/* What a run's sandbox needs that can be made before the run (ahead.c): as root, its network
 * namespace (lo up), made by a helper process forked here, while the caller goes on loading its
 * skill. Given to sandbox_run() through RunRequest.ahead, which spends it whether the run used it
 * or not (a run with network, or one that failed before its clone): the namespace entered by that
 * run's init alone, or closed, the helper reaped. Unprivileged, *ret is NULL (the run's init
 * makes its own namespaces in its user namespace). The helper is a child of the caller until
 * then: a caller that reaps any child (waitpid(-1)) must leave it alone. */
typedef struct SandboxAhead SandboxAhead;
int sandbox_ahead_start(SandboxAhead **ret);
/* shared: the helper shares the caller's memory instead of a copy (ahead.c: 0.06 ms less in the
 * caller, the namespace sooner), for a caller that never writes its oom_score_adj: the kernel
 * gives such a write to every process sharing the memory, and from then on walks all processes
 * of the host at each one (skilld's worker does write it, so it forks its helper; skillctl). */
int sandbox_ahead_start_full(bool shared, SandboxAhead **ret);
/* Spends it now: kills the helper if still there, reaps it, closes what it made (a run given it
 * afterwards makes its namespace with the clone). */
void sandbox_ahead_settle(SandboxAhead *a);
/* Spends it (below), frees it. */
SandboxAhead *sandbox_ahead_free(SandboxAhead *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(SandboxAhead *, sandbox_ahead_free);

/* Why a run ended. queued, running and interrupted are never produced by the engine: they belong
 * to the daemon's bookkeeping but share the names, so one enum serves the whole API. */
typedef enum RunStatus {
        RUN_STATUS_SUCCEEDED,
        RUN_STATUS_FAILED,              /* exited with a non-zero code */
        RUN_STATUS_TIMEOUT,
        RUN_STATUS_OOM,
        RUN_STATUS_TASKS,               /* hit the tasks limit */
        RUN_STATUS_SIGNAL,
        RUN_STATUS_SECCOMP,             /* killed by SIGSYS */
        RUN_STATUS_OUTPUT_LIMIT,        /* /out filled up, or too many artifacts */
        RUN_STATUS_ERROR,               /* the sandbox could not be set up; the skill never ran */
        RUN_STATUS_CANCELED,
        RUN_STATUS_INTERRUPTED,         /* daemon: it died while the run was in flight */
        RUN_STATUS_QUEUED,              /* daemon */
        RUN_STATUS_RUNNING,             /* daemon */
        RUN_STATUS_ENVIRONMENT,         /* the skill's environment is not built (or lacks a module
                                         * it imports); never produced by the engine itself */
        _RUN_STATUS_MAX,
        _RUN_STATUS_INVALID = -EINVAL,
} RunStatus;

const char *run_status_to_string(RunStatus s);
RunStatus run_status_from_string(const char *s);

/* Isolation layers a machine may lack. A run needing a missing layer is refused unless the
 * request lists it in allow_missing (the admin policy decides; skillctl allows only CGROUP, since
 * rlimits plus the wall timer are the documented fallback for limits). */
typedef enum SandboxLayer {
        SANDBOX_LAYER_CGROUP    = 1U << 0,      /* cgroup limits (else rlimits and the timer) */
        SANDBOX_LAYER_SECCOMP   = 1U << 1,      /* the syscall filter */
        SANDBOX_LAYER_NETNS     = 1U << 2,      /* without: the host's network */
        SANDBOX_LAYER_IPCNS     = 1U << 3,
        SANDBOX_LAYER_UTSNS     = 1U << 4,
        SANDBOX_LAYER_CGROUPNS  = 1U << 5,
        _SANDBOX_LAYER_ALL      = (1U << 6) - 1,
        /* Never optional: the mount namespace (it is the file system view) and the PID namespace
         * (its init's death is what ends every process of a run), and the user namespace of an
         * unprivileged run, without which no other namespace can be had. */
} SandboxLayer;

const char *sandbox_layer_to_string(SandboxLayer l);   /* one bit: "cgroup", "netns", ... */
int sandbox_layer_from_string(const char *s);          /* the bit, or -EINVAL */

/* The limits in force, each one checked by sandbox_limits_check(). */
typedef enum SandboxLimit {
        SANDBOX_LIMIT_MEMORY    = 1U << 0,
        SANDBOX_LIMIT_TASKS     = 1U << 1,
        SANDBOX_LIMIT_CPU       = 1U << 2,
        SANDBOX_LIMIT_TIMEOUT   = 1U << 3,
        SANDBOX_LIMIT_OUTPUT    = 1U << 4,      /* stdout/stderr caps, /out size, artifact count */
        SANDBOX_LIMIT_TMPFS     = 1U << 5,
} SandboxLimit;

typedef struct SandboxLimits {
        uint64_t memory_max;            /* bytes of memory (swap is never allowed) */
        uint64_t tasks_max;             /* processes and threads, the init included */
        unsigned cpu_percent;           /* of one CPU; 200 means two full CPUs */
        uint64_t timeout_usec;          /* wall clock, from release to the end of the last process */
        uint64_t stdout_max;            /* bytes kept of stdout; the rest is counted, not kept */
        uint64_t stderr_max;
        uint64_t out_max;               /* size of the /out tmpfs */
        uint64_t tmpfs_size;            /* each of /tmp, /home/skill, /work and /dev/shm */
        uint64_t artifacts_max;         /* files and directories copied out of /out/files */
} SandboxLimits;

#define SANDBOX_LIMITS_DEFAULT                                  \
        (SandboxLimits) {                                       \
                .memory_max = 512ULL * 1024 * 1024,             \
                .tasks_max = 256,                               \
                .cpu_percent = 100,                             \
                .timeout_usec = 60ULL * 1000 * 1000,            \
                .stdout_max = 16ULL * 1024 * 1024,              \
                .stderr_max = 16ULL * 1024 * 1024,              \
                .out_max = 256ULL * 1024 * 1024,                \
                .tmpfs_size = 64ULL * 1024 * 1024,              \
                .artifacts_max = 10000,                         \
        }

int sandbox_limits_check(const SandboxLimits *l, char **error);

/* An input file for /work: name is a plain file name; the engine reads fd (the caller opened it,
 * so it never opens a path on someone else's behalf), or path when fd < 0. A folder input is a
 * zip of the folder (loader_package_folder()), read with the loader's rules. */
typedef struct RunFile {
        const char *name;
        int fd;
        const char *path;
        bool folder;                    /* fd is a zip of a folder's contents (folder-input.c),
                                         * copied into /work/NAME as a tree; path is not used */
} RunFile;

typedef struct RunRequest {
        const char *run_id;             /* 32 lowercase hex digits; NULL: a random one */
        const char *skill_dir;          /* host directory of the validated skill tree (what
                                         * skill_path_is_excluded() names is hidden in it; a link
                                         * or special file anywhere in it fails the run) */
        int skill_dir_fd;               /* the same, already open (preferred: no second lookup), or -1 */
        bool hidden_listed;             /* hidden_dirs and hidden_files are what skill_path_is_excluded()
                                         * names in skill_dir_fd's tree, as skill_source_list_excluded()
                                         * listed it when the caller loaded that fd (no second walk);
                                         * false: the engine walks the tree itself */
        char * const *hidden_dirs;
        char * const *hidden_files;
        const char *skill_name;         /* recorded in the result */
        const char *skill_hash;         /* recorded in the result */
        const char *script;             /* relative to skill_dir, e.g. "scripts/main.py" */
        const char *interpreter;        /* absolute path, same inside and outside; NULL: exec script */
        char **interpreter_args;        /* options between the interpreter and the script ("-I",
                                         * "-c", CODE for skilld's own helpers); NULL: none */
        char **args;                    /* passed after the script */
        char **command;                 /* instead of script, interpreter and args: an argv run as
                                         * is (command.c); NULL: run the script */
        const char *cwd;                /* "/work" (NULL) or "/skill": where the run starts */
        int workspace_fd;               /* a directory whose work/ is the run's /work and gets back
                                         * what the run left there (sessions, workspace.c); the
                                         * /work tmpfs is then workspace_quota bytes. -1: fresh */
        uint64_t workspace_quota;
        const char *input_json;         /* NULL: no input (stdin is /dev/null) */
        const RunFile *files;
        size_t n_files;
        char **env;                     /* NAME=VALUE, checked with sandbox_env_check() */
        SandboxLimits limits;
        unsigned limits_from_skill;     /* SandboxLimit bits the skill's own declaration lowered
                                         * (skill-limits.h); recorded in the result */
        unsigned allow_missing;         /* SandboxLayer bits */
        bool network;                   /* share the caller's network namespace instead of one
                                         * with only lo; /etc then has the host's resolv.conf and
                                         * hosts. Everything else stays isolated. */
        int env_dir_fd;                 /* a skill environment (skilld/env), bound at /env, with
                                         * /node_modules a link to /env/node/node_modules; or -1 */
        bool env_writable;              /* bind it read-write: the environment is being built */
        const int *ro_dir_fds;          /* more host directories, the i-th bound read-only at
                                         * /mnt/i (an environment build's local pip wheelhouses);
                                         * at most SANDBOX_RO_DIRS_MAX. Runs of skills get none. */
        size_t n_ro_dir_fds;
        char **env_search;              /* NAME=VALUE entries the caller sets for the environment
                                         * (PYTHONPATH, LD_LIBRARY_PATH): trusted, not checked
                                         * with sandbox_env_check(), and they win over env */
        uid_t uid;                      /* root only: the run's uid and gid, reserved by the caller;
                                         * (uid_t) -1: the engine takes one of its range per run */
        const char *output_dir;         /* artifacts, logs and result.json; created if missing */
        bool caller_stores_result;      /* the caller writes result.json and makes it and the
                                         * logs durable (skilld's worker, whose record is the
                                         * commit point): the engine writes the artifacts and
                                         * the logs, unsynced, and no result.json */
        int stdout_fd;                  /* live copies of the skill's stdout/stderr, or -1 */
        int stderr_fd;
        int cancel_fd;                  /* readable: cancel the run (an eventfd, signalfd, pipe), or -1 */

        /* Where the held child goes so the limits apply. NULL: cgroup v2 where this process may
         * create cgroups with the memory, pids and cpu controllers, else (root) the cgroup v1
         * hierarchies, else rlimits if allow_missing has SANDBOX_LAYER_CGROUP. */
        const SandboxBackendOps *backend;
        void *backend_userdata;

        SandboxAhead *ahead;            /* made ahead of the run (sandbox_ahead_start()), or NULL;
                                         * spent by the run */
} RunRequest;

#define SANDBOX_RO_DIRS_MAX 16U

/* A RunRequest with no fds and default limits; fill in the rest. */
#define RUN_REQUEST_INIT                                        \
        (RunRequest) {                                          \
                .limits = SANDBOX_LIMITS_DEFAULT,               \
                .skill_dir_fd = -EBADF,                         \
                .workspace_fd = -EBADF,                         \
                .env_dir_fd = -EBADF,                           \
                .uid = (uid_t) -1,                              \
                .stdout_fd = -EBADF,                            \
                .stderr_fd = -EBADF,                            \
                .cancel_fd = -EBADF,                            \
        }

/* Checks one --env entry: the name matches [A-Za-z_][A-Za-z0-9_]* and is not one the sandbox owns
 * or one that changes how interpreters load code (LD_*, PYTHONPATH, PYTHONHOME, NODE_OPTIONS,
 * NODE_PATH, PATH, HOME, SKILL_*, SANDBOX_*). */
int sandbox_env_check(const char *assignment, char **error);
/* Checks the command form of a request: a non-empty argv within bounds, and cwd NULL, "/work" or
 * "/skill". */
int sandbox_command_check(char * const *command, const char *cwd, char **error);
/* Checks a --file name: a plain file name that cannot collide with what the engine puts there. */
int sandbox_file_name_check(const char *name, char **error);

typedef struct RunStream {
        char *data;                     /* what was kept, with the truncation marker if any */
        size_t size;
        uint64_t total;                 /* bytes the skill wrote */
        bool truncated;
} RunStream;

typedef struct RunArtifact {
        char *path;                     /* relative to /out/files */
        bool directory;
        uint64_t size;
        char sha256[65];                /* empty for directories */
} RunArtifact;

typedef struct RunSkipped {
        char *path;
        char *reason;                   /* "symlink", "fifo", "socket", "device", "unreadable", ... */
} RunSkipped;

/* A system call the seccomp filter refused (policy/seccomp.md), with the argument that decided it
 * where one did (the socket family, the namespace flags, the ioctl request). */
typedef struct RunRefused {
        char *syscall;
        char *arg;                      /* NULL: refused whatever its arguments */
        uint64_t count;
} RunRefused;

void run_refused_free_many(RunRefused *l, size_t n);

#define RUN_USAGE_UNKNOWN UINT64_MAX

typedef struct RunUsage {
        uint64_t wall_usec;
        uint64_t user_usec;
        uint64_t system_usec;
        uint64_t memory_peak;           /* bytes; RUN_USAGE_UNKNOWN when the backend cannot tell */
        uint64_t tasks_peak;
} RunUsage;

typedef struct RunResult {
        char *run_id;
        char *skill_name;
        char *skill_hash;
        char *script;                   /* NULL for a command */
        char *interpreter;
        char **argv;                    /* as executed inside the sandbox */
        bool command;                   /* the command form: argv as the caller gave it */
        char *cwd;                      /* the working directory the run started in */

        RunStatus status;
        int exit_code;                  /* -1 unless the skill exited */
        int signal;                     /* 0 unless it was killed by a signal */
        char *error;                    /* status error: what failed */
        int error_errno;                /* status error: positive errno of the failure */
        bool exec_failed;               /* status error: the sandbox was ready, execve() failed */

        cJSON *output;                  /* the output JSON as written (json-exact.h), or NULL */
        const char *output_source;      /* "output.json", "stdout" or NULL */
        char *output_error;             /* why /out/output.json was ignored */

        RunStream stdout_stream;
        RunStream stderr_stream;

        RunArtifact *artifacts;
        size_t n_artifacts;
        RunSkipped *skipped;
        size_t n_skipped;
        bool artifacts_truncated;       /* artifacts_max, or out_max bytes copied, was reached */
        bool out_full;                  /* the /out tmpfs ran out of space or inodes */

        RunRefused *refused;            /* in the order first refused */
        size_t n_refused;
        bool refused_known;             /* false: the run had no filter that reports (refused: null) */
        bool refused_truncated;         /* more distinct calls were refused than are listed */

        RunUsage usage;
        SandboxLimits limits;
        const char *backend;            /* the name of the backend that enforced the limits */
        unsigned limits_enforced;       /* SandboxLimit bits the backend really enforced */
        unsigned limits_from_skill;     /* SandboxLimit bits set by the skill's declaration */
        unsigned layers_missing;        /* SandboxLayer bits allowed missing and missing */
        uid_t uid;                      /* the sandbox uid as the host sees it */
        bool network;                   /* the run shared the caller's network */

        uint64_t started_at;            /* CLOCK_REALTIME usec */
        uint64_t ended_at;
        char *output_dir;
        char *store_error;              /* writing artifacts, logs or result.json failed */
} RunResult;

RunResult *run_result_free(RunResult *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(RunResult *, run_result_free);

/* The result of a run that never executed (refused by the engine, canceled while queued): no
 * exit code, no uid, usage unknown, no timestamps. The names may be NULL (stored as ""),
 * message too (no error text). */
int run_result_new_unrun(const char *run_id, const char *skill_name, const char *skill_hash,
                         const char *script, const SandboxLimits *limits, RunStatus status,
                         const char *message, RunResult **ret);

/* Reads refused_syscalls (and _truncated) of a result JSON into r. */
int run_result_refused_from_json(RunResult *r, const cJSON *result);
/* "socket(AF_PACKET), unshare(CLONE_NEWUSER) x3, mount": the refused system calls of a run,
 * escaped (they may come from a result JSON); "" when none. */
int run_result_refused_string(const RunResult *r, char **ret);

/* The result as JSON, the format of result.json and of the daemon's Result property. */
int run_result_to_json(const RunResult *r, cJSON **ret);
/* The exit status `skillctl run` returns for this result (see skillctl(1)): the skill's exit
 * code; 124 timeout; 128+N signal; 137 oom; 125 setup failure; 126/127 not executable/found;
 * 122 (RUN_EXIT_ENVIRONMENT) the environment is missing. */
#define RUN_EXIT_ENVIRONMENT 122
int run_result_exit_code(const RunResult *r);

/* Root only: reserves a throwaway uid of the engine's range, as a run without RunRequest.uid gets,
 * until *ret_lock_fd is closed; for a caller that must hand files to the run's uid beforehand
 * (an environment build). */
int sandbox_uid_reserve(uid_t *ret_uid, int *ret_lock_fd, char **error);

/* Where a service keeps them on disk: DIR/seccomp, DIR being its runtime directory (see
 * skilld/sandbox/seccomp-cache.c), instead of /run/skilld/seccomp or the user's. */
int sandbox_seccomp_cache_set_runtime_dir(const char *dir);

/* Runs the request to its end. Returns 0 with a result whenever a run was attempted (a setup
 * failure is a result with status error); negative errno, with a message, only when the
 * request itself is invalid or memory ran out.
 *
 * The caller must be single-threaded (the sandbox is created with a raw clone3(), which does not
 * run glibc's fork handlers; a daemon calls this from a forked worker or its only thread) and
 * should ignore SIGPIPE if stdout_fd/stderr_fd may be pipes whose reader goes away. */
int sandbox_run(const RunRequest *req, RunResult **ret, char **error);
