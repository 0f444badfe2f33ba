/* What the engine's files share and no caller needs: the description of the child handed across
 * clone(), the messages the child sends back on the control socket, and the helpers each part
 * of the engine provides to the others. */
#pragma once

#include <seccomp.h>
#include <sys/resource.h>
#include <time.h>

#include "backend.h"
#include "engine.h"

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

/* Messages on the control socket (SOCK_SEQPACKET: one message per send, never split). */
typedef enum ChildMessageType {
        CHILD_MSG_ERROR = 1,            /* setup failed: error + text; the init exits */
        CHILD_MSG_OUT_FD,               /* carries the /out directory fd (SCM_RIGHTS) */
        CHILD_MSG_EXEC_FAILED,          /* the skill process could not execve(): error + text */
        CHILD_MSG_EXITED,               /* the skill process ended: wait status and usage */
} ChildMessageType;

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

        int hold_fd;                    /* read end; a byte means go, EOF means abort */
        int ctl_fd;                     /* our end of the control socket */
        int skill_dir_fd;               /* O_PATH of the skill tree */
        int env_dir_fd;                 /* O_PATH of the environment for /env, or -1 */
        bool env_writable;
        int stdin_fd;
        int stdout_fd;
        int stderr_fd;
        int input_fd;                   /* sealed memfd with the input JSON, or -1 */
        char * const *hidden_dirs;      /* under the skill tree: what hashing leaves out (caches) */
        char * const *hidden_files;
        uint64_t input_size;
        const int *file_fds;            /* --file inputs */
        char * const *file_names;
        size_t n_files;

        uint64_t root_size;
        uint64_t tmpfs_size;
        uint64_t work_size;
        uint64_t out_size;
        uint64_t out_inodes;

        const char *exec_path;          /* argv[0] inside the sandbox */
        char * const *argv;
        char * const *envp;
        const SandboxRlimit *rlimits;
        size_t n_rlimits;
        scmp_filter_ctx seccomp;        /* NULL when the layer is allowed missing and missing */
        bool netns;                     /* namespaces the init has to set up (when it has them) */
        bool network;                   /* the host's network: /etc gets name resolution */
        bool utsns;
        bool cgroupns;
} SandboxChild;

/* The child side, from the first instruction after clone() to execve(). Never returns. */
_noreturn_ void sandbox_child_main(const SandboxChild *c);

/* seccomp.c: the filter described in policy/seccomp.md. */
int sandbox_seccomp_new(scmp_filter_ctx *ret, char **error);
DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release);
bool sandbox_seccomp_available(void);

/* identity.c: a throwaway uid/gid for the run. As root, one from SANDBOX_UID_BASE.. held by an
 * OFD lock on a byte of a lock file until *ret_lock_fd is closed; unprivileged, the user namespace
 * id. */
#define SANDBOX_UID_BASE 0x7FF00000U
#define SANDBOX_UID_COUNT 0x10000U
int sandbox_identity_allocate(const char *lock_path, uid_t *ret_uid, int *ret_lock_fd, char **error);

/* capture.c: keeping the start of a stream, counting the rest. */
int run_stream_append(RunStream *s, const char *label, uint64_t max, const void *data, size_t n,
                      int live_fd, bool *live_ok);

/* artifacts.c: copies /out/files (out_fd is the /out directory) into dest_fd, at most max_entries
 * files and directories and max_bytes of file contents. */
int sandbox_copy_artifacts(int out_fd, int dest_fd, uint64_t max_entries, uint64_t max_bytes,
                           RunResult *result, char **error);

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

/* result.c */
void run_result_add_skipped(RunResult *r, const char *path, const char *reason);

/* time */
uint64_t now_usec(clockid_t clock);
uint64_t timeval_usec(const struct timeval *tv);

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);
