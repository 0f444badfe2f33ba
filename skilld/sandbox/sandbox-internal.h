/* What the engine's files share and no caller needs: the description of the child handed across
 * clone(), the messages the child sends back on the control socket, and the helpers each part
 * of the engine provides to the others. */
#pragma once

#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

#include "backend.h"
#include "engine.h"
#include "fileio.h"
#include "term-escape.h"

/* Exit code of the sandbox init when setup failed; the real reason travels on the socket. */
#define SANDBOX_EXIT_SETUP 125

/* Where the sandbox stores the input JSON; read-only, like the rest of the root. */
#define SANDBOX_INPUT_PATH "/run/skill/input.json"
/* The uid and gid the skill has inside a user namespace (unprivileged runs). */
#define SANDBOX_USERNS_ID 1000
/* SANDBOX_INPUT is set only below this size: one environment string may not exceed
 * MAX_ARG_STRLEN (32 pages), "SANDBOX_INPUT=" and the NUL included. */
#define SANDBOX_INPUT_ENV_MAX (128U * 1024U)
/* The largest /out/output.json read back. */
#define SANDBOX_OUTPUT_JSON_MAX (16U * 1024U * 1024U)

/* The hold socket (a stream). The init's first instruction sends the CPU it runs on (an int: it
 * runs, the engine waits for this after the clone); the engine then sends one byte each, with its
 * fds: HOLD_CGROUPS, when the init places itself, always first; HOLD_GO; and, where the user
 * database's verdict on the run's uid comes after the release (SandboxChild.verdict_later),
 * HOLD_UID, read by the init right before it changes to the uid and then starts the skill
 * process, which inherits the uid. A uid the database names gets no HOLD_UID: the engine kills
 * the init, and with it the PID namespace, while it still waits. */
#define HOLD_CGROUPS 'c'                /* the run's cgroups to enter (SCM_RIGHTS, at most
                                         * SANDBOX_CGROUP_FDS_MAX) */
#define HOLD_GO 'g'                     /* the release, with the seccomp program's memfd when the
                                         * run has the filter, then the network namespace when it
                                         * was made beside the init */
#define HOLD_UID 'u'                    /* no account has the run's uid: it may be taken */
#define SANDBOX_CGROUP_FDS_MAX 8U

/* Messages on the control socket (SOCK_SEQPACKET: one message per send, never split). */
typedef enum ChildMessageType {
        CHILD_MSG_ERROR = 1,            /* setup failed: error + text; the init exits */
        CHILD_MSG_OUT_FD,               /* carries the /out directory fd (SCM_RIGHTS) */
        CHILD_MSG_EXEC_FAILED,          /* the skill process could not execve(): error + text */
        CHILD_MSG_EXITED,               /* the skill process ended: wait status and usage */
        CHILD_MSG_NOTIFY_FD,            /* carries the seccomp listener fd (SCM_RIGHTS) */
        CHILD_MSG_WORK_FD,              /* carries the /work directory fd (a kept /work only) */
        CHILD_MSG_MARKS,                /* the phase marks of the init or the skill process, in text */
} ChildMessageType;

/* Where a run's fixed cost goes: CLOCK_MONOTONIC marks (µs) at the engine's phases, in the
 * engine, the init and the skill process (one clock for all of them: namespaces do not change
 * CLOCK_MONOTONIC without a time namespace, which the sandbox does not make). Taken and logged
 * only when debug logging is on (skillctl -v), one line a run; bench/phases.py reads it. */
typedef enum RunMark {
        MARK_ENTER,             /* sandbox_run() called */
        MARK_CHECKED,           /* request, output directory, entry point, namespaces, filter support */
        MARK_LIMITS,            /* the limit backend chosen (v1: its hierarchies found; v2: its cgroup made) */
        MARK_IDENTITY,          /* the run's uid taken (as root: its lock) */
        MARK_PREPARED,          /* inputs, rlimits, argv, env, stdin, pipes */
        MARK_AHEAD,             /* the caller asked for the sandbox made ahead (ahead.c; before
                                 * MARK_ENTER, logged as a negative time) */
        MARK_AHEAD_FORKED,      /* the caller is back from forking its helper */
        MARK_AHEAD_BEGUN,       /* the helper's first instruction */
        MARK_AHEAD_NETNS,       /* the helper has made the network namespace */
        MARK_AHEAD_TAKEN,       /* the engine took it: at the clone, or before the release */
        MARK_CLONED,            /* clone3() returned in the engine */
        MARK_CGROUPS,           /* v1: the init running (its CPU left to it), its cgroups made and sent */
        MARK_UID_CHECKED,       /* the user database says no account has the run's uid (after the
                                 * release, where the engine asks it; the verdict sent) */
        MARK_NETNS,             /* root: the engine's thread has made the network namespace */
        MARK_INIT_BORN,         /* the init's first instruction */
        MARK_INIT_START,        /* the init runs: its fds closed (v2: in its cgroup since its birth) */
        MARK_RELEASED,          /* the seccomp program built, the init placed and released */
        MARK_INIT_EARLY,        /* session, host name, loopback, the root's fixed part */
        MARK_INIT_PLACED,       /* v1: the init has its cgroups and entered them */
        MARK_INIT_GO,           /* the release received */
        MARK_INIT_LATE,         /* cgroup namespace, the run's writable places and inputs, pivot */
        MARK_INIT_VERDICT,      /* the init has the uid's verdict (or needed none): its uid change next */
        MARK_INIT_DROPPED,      /* the init dropped its privileges, joined a keyring: the vfork() next */
        MARK_INIT_FORKED,       /* the skill process's first instruction (after the vfork()) */
        MARK_SKILL_SETUP,       /* the skill process: stdio, rlimits, fds, privileges checked,
                                 * keyring; the filter next */
        MARK_SKILL_EXEC,        /* the skill process calls execve(): privileges dropped, filter on */
        MARK_SKILL_END,         /* the init reaped the skill process */
        MARK_INIT_EMPTY,        /* the init killed and reaped everything else: it reports */
        MARK_EXITED,            /* the engine has the report */
        MARK_INIT_GONE,         /* the engine sees the init's exit (pidfd) */
        MARK_DRAINED,           /* the pipes at EOF */
        MARK_REAPED,            /* the backend's figures read (after reaping the init, unless it reported) */
        MARK_WRITTEN,           /* artifacts, the logs and result.json's data written */
        MARK_LOGS_SYNCED,       /* the record's thread synced the logs (started once the streams were drained) */
        MARK_INIT_REAPED,       /* the init reaped after its report (while the syncs run, if it is gone by then) */
        MARK_REMOVED,           /* the backend's cgroups removed (then too) */
        MARK_STORED_LOGS,       /* the logs and result.json's data durable (both syncs returned) */
        MARK_STORED,            /* result.json durable */
        MARK_DONE,              /* everything closed */
        _MARK_MAX,
} RunMark;

typedef struct ChildMessage {
        uint32_t type;
        int32_t error;                  /* positive errno */
        int32_t code;                   /* CLD_EXITED, CLD_KILLED or CLD_DUMPED */
        int32_t status;                 /* exit code or signal number */
        uint64_t user_usec;
        uint64_t system_usec;
        uint64_t maxrss;                /* bytes, largest single process */
        char text[448];
} ChildMessage;

/* Paths hidden under /skill (one mount each), at most. */
#define SANDBOX_HIDDEN_MAX 1024U

typedef struct SandboxRlimit {
        int resource;
        struct rlimit limit;
} SandboxRlimit;

/* Everything the child needs, prepared by the parent before clone() so that the child does as
 * little as possible that could fail in ways only the parent can report well. */
typedef struct SandboxChild {
        uid_t uid;                      /* the sandbox identity, as seen inside */
        gid_t gid;
        bool userns;                    /* unprivileged: a user namespace maps uid to the caller */

        int hold_fd;                    /* HOLD_* bytes; EOF means abort */
        bool verdict_later;             /* the uid's verdict (HOLD_UID) follows the release: the
                                         * init waits for it before its uid change (and so before
                                         * the skill process), and keeps hold_fd until then */
        bool setup_before_hold;         /* build what holds nothing of the run while held */
        bool placed;                    /* in place before the run's own part: held only before the fork */
        bool self_place;                /* gets its cgroups (HOLD_CGROUPS) and enters them itself,
                                         * after the fixed part of its root (cgroup v1) */
        int ctl_fd;                     /* our end of the control socket */
        int skill_dir_fd;               /* O_PATH of the skill tree */
        int env_dir_fd;                 /* O_PATH of the environment for /env, or -1 */
        bool env_writable;
        const int *ro_dir_fds;          /* O_PATH of the trees for /mnt/0, /mnt/1, ... */
        size_t n_ro_dir_fds;
        int stdin_fd;
        int stdout_fd;
        int stderr_fd;
        int input_fd;                   /* sealed memfd with the input JSON, or -1 */
        char * const *hidden_dirs;      /* under the skill tree: what hashing leaves out (caches) */
        char * const *hidden_files;
        uint64_t input_size;
        const int *file_fds;            /* --file inputs */
        const bool *file_folders;       /* which of them are folders: a directory fd to copy */
        int workspace_fd;               /* a kept /work to copy in (workspace.c), or -1 */
        char * const *file_names;
        size_t n_files;

        uint64_t root_size;
        uint64_t tmpfs_size;
        uint64_t work_size;
        uint64_t out_size;
        uint64_t out_inodes;

        const char *exec_path;          /* argv[0] inside the sandbox */
        const char *cwd;                /* where the skill starts: "/work" or "/skill" */
        char * const *argv;
        char * const *envp;
        const SandboxRlimit *rlimits;
        size_t n_rlimits;
        bool seccomp;                   /* false when the layer is allowed missing and missing; else
                                         * the filter's program comes with the release (a sealed
                                         * memfd passed on the hold socket) */
        bool seccomp_notify;            /* the filter notifies: send its listener before execve() */
        bool netns;                     /* namespaces the init has to set up (when it has them) */
        bool join_netns;                /* the network namespace comes with the release (made
                                         * beside the init, lo up): entered before the fork */
        int netns_fd;                   /* the network namespace made ahead (ahead.c, lo up),
                                         * inherited with the clone: entered first thing; or -1 */
        bool network;                   /* the host's network: /etc gets name resolution */
        bool utsns;
        bool cgroupns;
        bool timing;                    /* send the phase marks (RunMark) */
} SandboxChild;

/* The child side, from the first instruction after clone() to execve(). Never returns. */
_noreturn_ void sandbox_child_main(const SandboxChild *c);

/* seccomp.c: the filter described in policy/seccomp.md. notify: the variant whose refusals go
 * to the engine as user notifications instead of returning their errno. */
int sandbox_seccomp_new(bool notify, scmp_filter_ctx *ret, char **error);
/* reference: the socket allowlist one comparison per refused value, as it is specified, instead
 * of the compact rules loaded (the same verdicts, which the tests check); never loaded. */
int sandbox_seccomp_new_full(bool notify, bool reference, scmp_filter_ctx *ret, char **error);
/* A variant of the filter as the BPF program the kernel runs, freshly generated by libseccomp
 * (what seccomp_load() would load). */
struct sock_filter;
int sandbox_seccomp_program(bool notify, struct sock_filter **ret, size_t *ret_n, char **error);
int sandbox_seccomp_program_full(bool notify, bool reference, struct sock_filter **ret, size_t *ret_n,
                                 char **error);
DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release);
bool sandbox_seccomp_available(void);
bool sandbox_seccomp_notify_available(void);
/* Writes the argument that decided a refusal of syscall nr (the socket family, the namespace
 * flags, the ioctl request, ...) into buf; false when the call is refused whatever its
 * arguments. */
bool sandbox_seccomp_describe_arg(int nr, const uint64_t args[static 6], char *buf, size_t size);

/* seccomp-notify.c: answers the refusals of the filter's notify variant as its errno variant
 * would, and keeps the record of them for the result. */
typedef struct SeccompSupervisor SeccompSupervisor;
int seccomp_supervisor_new(SeccompSupervisor **ret);
SeccompSupervisor *seccomp_supervisor_free(SeccompSupervisor *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SeccompSupervisor *, seccomp_supervisor_free);
/* Takes the listener fd the skill process sent. */
void seccomp_supervisor_attach(SeccompSupervisor *s, int fd);
/* The fd to poll for notifications, or -EBADF (none yet, or none can come any more). */
int seccomp_supervisor_fd(const SeccompSupervisor *s);
/* Answers the notifications that are pending, a bounded number of them. */
int seccomp_supervisor_process(SeccompSupervisor *s);
int seccomp_supervisor_to_result(const SeccompSupervisor *s, RunResult *r);
/* Running a program on one call (what the kernel would answer: a SECCOMP_RET_* action). For the
 * supervisor and for tests. */
struct seccomp_data;
int sandbox_seccomp_program_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d,
                                uint32_t *ret);

/* seccomp-cache.c: the programs generated once and kept, in the process and on disk (see there
 * for the key and the places). The program of a variant, from the process's copy, the cache file
 * or libseccomp; owned by the process, valid until it exits. */
int sandbox_seccomp_program_cached(bool notify, const struct sock_filter **ret, size_t *ret_n, char **error);
/* The same in a sealed memfd, for the release of the run's init. */
int sandbox_seccomp_program_fd(bool notify, int *ret_fd, char **error);
/* The parts, for tests: the key (-EOPNOTSUPP without a build-id), the directory (-ENXIO when
 * there is none), an entry read back (-ESTALE: another key; -EBADMSG: damaged; -EPERM: not
 * ours alone; -ELOOP: a symlink; -EBADFD: not a regular file) and written. */
int sandbox_seccomp_cache_key(bool notify, char **ret);
int sandbox_seccomp_cache_dir(int *ret_fd);
int sandbox_seccomp_cache_load_at(int dir_fd, const char *name, const char *key, struct sock_filter **ret,
                                  size_t *ret_n);
int sandbox_seccomp_cache_store_at(int dir_fd, const char *name, const char *key, const struct sock_filter *insns,
                                   size_t n);
/* The entry name under dir_fd if usable, else generated and written there (dir_fd negative or key
 * NULL: generated only). */
int sandbox_seccomp_cache_get_at(int dir_fd, const char *name, const char *key, bool notify,
                                 struct sock_filter **ret, size_t *ret_n, char **error);

/* identity.c: a throwaway uid/gid for the run. As root, one from SANDBOX_UID_BASE.. held by an
 * OFD lock on a byte of a lock file until *ret_lock_fd is closed; unprivileged, the user namespace
 * id. */
#define SANDBOX_UID_BASE 0x7FF00000U
#define SANDBOX_UID_COUNT 0x10000U
int sandbox_identity_allocate(const char *lock_path, uid_t *ret_uid, int *ret_lock_fd, char **error);
/* The same without asking the user database, which the first time in a process loads its modules
 * (0.3 to 0.5 ms): the engine asks it with sandbox_identity_known() while the held init builds its
 * root, and nothing runs as the uid before the answer is no. */
int sandbox_identity_lock(const char *lock_path, uid_t *ret_uid, int *ret_lock_fd, char **error);
/* Whether the user database names uid (lookup errors count as yes). */
bool sandbox_identity_known(uid_t uid);

/* netns.c: the run's network namespace, made by a thread of the engine beside the init (root
 * only), with lo up; the init enters it with its release. */
typedef struct SandboxNetns {
        pthread_t thread;
        bool started;                   /* the thread runs (or ran and is not joined yet) */
        int fd;                         /* the namespace, once made; -EBADF before */
        int error;                      /* negative errno of the step that failed */
        const char *what;               /* that step, as an error message's start */
        uint64_t made_usec;             /* CLOCK_MONOTONIC when it was made */
} SandboxNetns;
#define SANDBOX_NETNS_NULL { .fd = -EBADF }
int sandbox_loopback_up(int sock);
/* The work itself, in the calling thread (which it moves into the new namespace): *ret_fd the
 * namespace, lo up; or a negative errno and *ret_what the step that failed. */
int sandbox_netns_make(int *ret_fd, const char **ret_what);
/* Starts the thread, on cpus (NULL: wherever we may run). */
int sandbox_netns_start(SandboxNetns *n, const cpu_set_t *cpus);
/* Waits for the thread (if any): 0 with n->fd the namespace, or its error and what failed. */
int sandbox_netns_join(SandboxNetns *n, const char **ret_what);
/* Joins and closes the namespace: nothing of it is left in the engine. */
void sandbox_netns_done(SandboxNetns *n);

/* ahead.c: the run's network namespace made ahead of sandbox_run() (engine.h), by a helper
 * process forked for it. */
struct SandboxAhead {
        pid_t pid;                      /* the helper, until reaped */
        int sock;                       /* where its answer comes (the namespace, or its error) */
        bool answered;
        int netns_fd;                   /* the namespace, once received and until taken */
        int error;                      /* the helper's negative errno ... */
        char what[80];                  /* ... and the step that failed */
        uint64_t started_usec;          /* CLOCK_MONOTONIC: the helper asked for */
        uint64_t forked_usec;           /* fork() returned in the caller */
        uint64_t begun_usec;            /* its first instruction */
        uint64_t made_usec;             /* the namespace made */
        uint64_t taken_usec;            /* the engine took it */
        void *stack;                    /* the helper's stack, when it shares our memory */
        bool moved;                     /* the helper was put off the caller's CPU ... */
        cpu_set_t cpus;                 /* ... which is one of these, the caller's */
};
/* Takes the namespace (an fd the caller closes), waiting at most wait_usec for the helper's
 * answer: -EAGAIN while it has none. -ENODATA when there is none to take (never started, or
 * taken already), the helper's error (and *ret_what) when it failed. Taken once. */
int sandbox_ahead_take_netns(SandboxAhead *a, uint64_t wait_usec, int *ret_fd, const char **ret_what);
/* Whether there is a namespace to take, or still to come. */
bool sandbox_ahead_pending(const SandboxAhead *a);
/* Gives up on it: the helper, if still at work, is killed now (its CPU time is of no use any
 * more), reaped later by sandbox_ahead_settle(). */
void sandbox_ahead_abandon(SandboxAhead *a);

/* capture.c: keeping the start of a stream, counting the rest. */
/* The live copy of a stream to the caller's fd: escaped when that is a terminal, and given up
 * (not the run) when its reader goes away. */
typedef struct LiveCopy {
        int fd;
        bool ok;
        TermEscape esc;
} LiveCopy;

void live_copy_init(LiveCopy *l, int fd);
int run_stream_append(RunStream *s, const char *label, uint64_t max, const void *data, size_t n,
                      LiveCopy *live);
/* At the stream's end: what the escaping held back. */
void live_copy_end(LiveCopy *l);

/* artifacts.c: copies /out/files (out_fd is the /out directory) into dest_fd, at most max_entries
 * files and directories and max_bytes of file contents. */
int sandbox_copy_artifacts(int out_fd, int dest_fd, uint64_t max_entries, uint64_t max_bytes,
                           RunResult *result, char **error);

/* command.c: the command form. sandbox_command_check() is in engine.h. The path execve() gets for
 * a command's program: looked up in the sandbox's PATH when name holds no '/'; -ENOENT with a
 * message when it is not there. */
int sandbox_command_resolve(const char *name, char **ret, char **error);

/* folder-input.c: a folder input unpacked into a private directory of the parent. */
typedef struct FolderInput {
        char *dir;                      /* removed by folder_input_done() */
        int dir_fd;
        uint64_t bytes;
        uint64_t entries;               /* files and directories */
} FolderInput;
int sandbox_folder_input_unpack(int zip_fd, uint64_t max_bytes, FolderInput *ret, char **error);
void folder_input_done(FolderInput *f);
/* The child's side: copies the tree at src_dir_fd into dst_dir_fd (both directories), each file
 * and directory handed to uid/gid, counting file bytes against *budget (-EFBIG beyond). */
int sandbox_folder_input_copy(int src_dir_fd, int dst_dir_fd, uid_t uid, gid_t gid, uint64_t *budget,
                              unsigned depth);

/* workspace.c: a kept /work. Opens workspace_fd's work/ (made if missing) and measures it. */
int sandbox_workspace_open(int workspace_fd, int *ret_fd, uint64_t *ret_bytes, uint64_t *ret_entries,
                           char **error);
/* Replaces workspace_fd's work/ with a copy of run_work_fd, atomically. */
int sandbox_workspace_save(int workspace_fd, int run_work_fd, char **error);

/* request.c */
int sandbox_env_check_all(char * const *env, char **error);
int sandbox_env_build(char * const *extra, char * const *search, const char *input_json, char ***ret);

/* cgroup-util.c: attribute files of a cgroup directory fd (or path). */
int cg_write(int dir_fd, const char *attr, const char *value);
int cg_write_path(const char *dir, const char *attr, const char *value);
int cg_read(int dir_fd, const char *attr, char **ret);
/* "key value" lines (memory.events, cpu.stat, ...). */
int cg_read_key(int dir_fd, const char *attr, const char *key, uint64_t *ret);
int cg_read_u64(int dir_fd, const char *attr, uint64_t *ret);
/* SIGKILLs every process listed in cgroup.procs until none is left. */
void cg_kill_listed(int dir_fd);
/* rmdir(), waiting briefly for the last processes to leave. */
void cg_remove(const char *path);
/* This process's cgroup path in the v1 hierarchy of controller, or (NULL) in cgroup2. */
int cg_own_path(const char *controller, char **ret);
/* The same, from the text of /proc/self/cgroup read once for several controllers. */
int cg_own_path_in(const char *text, const char *controller, char **ret);
/* Creates the run's cgroup directory at path and returns it open, holding an exclusive flock for
 * as long as the fd lives: the mark of a run whose engine is alive. */
int cg_create_locked(const char *path, int *ret_fd);
/* Removes the empty cgroups in parent named prefix... whose lock nobody holds: runs whose engine
 * was killed (SIGKILL) before it could remove them (their processes died with it: the init's
 * parent-death signal ends the PID namespace). Best effort, never fails a run. */
void cg_sweep_dead(const char *parent, const char *prefix);

/* record.c: the run's logs and result.json in its output directory, prepared while the skill runs
 * and committed after it (see there for the order that makes result.json the commit point). */
typedef struct RunRecord {
        bool begun;
        bool sync;                      /* result.json here, durable (false: the caller stores it) */
        int dir_fd;                     /* the output directory (the run's) */
        AtomicFile out;                 /* stdout.log: made under a temporary name, then named */
        AtomicFile err;                 /* stderr.log */
        AtomicFile result;              /* result.json's temporary file (sync only) */
        size_t out_written;             /* the log's bytes so far (the stream's first ones) */
        size_t err_written;
        bool out_data;                  /* bytes written to the log since its name was synced */
        bool err_data;
        int remove_error;               /* the earlier result.json could not be removed */
        int logs_error;                 /* a log could not be made or named */
        int dir_error;                  /* the directory's sync after the creations */
        int out_sync;                   /* the logs' syncs (0 or negative errno) */
        int err_sync;
        int result_error;               /* result.json's temporary file made, synced, renamed */
        bool renamed;                   /* result.json is there */
        int rename_sync_error;          /* the directory's sync after the rename: not known durable */
        size_t out_final;               /* out_written when the logs were said whole (what the thread syncs) */
        size_t err_final;
        uint64_t logs_usec;             /* CLOCK_MONOTONIC: the thread's syncs of the logs returned */
        uint64_t synced_usec;           /* the files' data durable */
        uint64_t stored_usec;           /* result.json's rename durable */
        /* The helper thread (none on a tmpfs, for a caller that stores the result, at the store). */
        pthread_t thread;
        bool thread_started;
        atomic_bool made;               /* the thread made the files (set before ready_fd) */
        atomic_bool logs_synced;        /* it synced the logs (set before synced_fd) */
        atomic_bool finished;           /* and did what was asked (set before done_fd) */
        bool ready;                     /* the engine saw that */
        bool joined;
        atomic_int stage;               /* RECORD_STAGE_*: what the engine asks of the thread */
        void (*meanwhile)(void *userdata); /* the engine's work the thread does after the logs' syncs */
        void *userdata;
        int ready_fd;                   /* eventfds: the record prepared, */
        int go_fd;                      /* the next stage asked for, */
        int synced_fd;                  /* the logs synced, */
        int done_fd;                    /* all that was asked done */
} RunRecord;

/* What the thread is asked for, in this order (a later one implies the earlier ones). */
enum {
        RECORD_STAGE_WAIT,
        RECORD_STAGE_LOGS,              /* the logs are whole: their syncs */
        RECORD_STAGE_MEANWHILE,         /* then the engine's meanwhile work */
        RECORD_STAGE_END,               /* nothing more: just end */
};

/* Prepares the record in dir_fd (negative: none): in a thread started now when ahead and sync,
 * else here. Once; later calls do nothing. */
void run_record_begin(RunRecord *rec, int dir_fd, bool sync, bool ahead);
/* Whether the record is prepared (its files made; its errors in rec), waiting for it or not. */
bool run_record_ready(RunRecord *rec, bool wait);
/* Brings a log (err: stderr.log) to the first size bytes of data, the stream kept so far (its
 * start never changes), once the record is ready: as the skill writes, and at the end. */
int run_record_write_log(RunRecord *rec, bool err, const char *data, size_t size);
/* Both logs brought to their streams (stdout.log first); the first failure stops it, returned. */
int run_record_write_logs(RunRecord *rec, const RunStream *out, const RunStream *err);
/* The streams are drained and their bytes written: with a thread, it syncs the logs now. */
void run_record_logs_final(RunRecord *rec);
/* With a thread, meanwhile(userdata) runs in it after the logs' syncs (true; the caller leaves
 * what it touches alone until run_record_settle()); without one, false and nothing is done. */
bool run_record_meanwhile(RunRecord *rec, void (*meanwhile)(void *userdata), void *userdata);
/* result.json's text into its temporary file. */
int run_record_write_result(RunRecord *rec, const char *text, size_t size);
/* Syncs result.json's data and the logs' (the thread's, waited for), renames result.json, syncs
 * the directory. The outcome is in rec: out_sync, err_sync, result_error, renamed, rename_sync_error. */
void run_record_commit(RunRecord *rec);
/* Waits for the thread's meanwhile work, if it was asked for. */
void run_record_settle(RunRecord *rec);
/* Ends the thread, closes the files, removes a temporary file never renamed. */
void run_record_done(RunRecord *rec);

/* result.c */
void run_result_add_skipped(RunResult *r, const char *path, const char *reason);

/* time */
uint64_t now_usec(clockid_t clock);
uint64_t timeval_usec(const struct timeval *tv);

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);
