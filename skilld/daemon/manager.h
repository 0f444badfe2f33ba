/* The Manager: the state of the running service, and the lifecycle of runs.
 *
 * It holds the event loop, the bus connections (the system bus, and peers of the private socket
 * /run/skilld/bus and of root's /run/skilld/private), the polkit registry, the admin policy, the
 * results store, the installed skills, and the active runs: queued ones waiting for a slot and
 * running ones, each with its worker process. Finished runs live in the store only; their D-Bus
 * objects are made on demand.
 *
 * A run goes through:
 *   Run()/RunInstalled() validate, inspect (pending.c: a forked child unpacks and checks the
 *   skill), authorize (polkit), then manager_submit_run() records it (queued) in the store;
 *   manager_dispatch_queue() starts it when the caps allow: a uid, a worker (worker.h), state
 *   running; the worker's exit ends it: the result goes into the store, RunFinished goes out, the
 *   journal gets its entry, the next queued run starts.
 *
 * The service exits when idle: no run active or queued, no call waiting for an inspection or for
 * polkit, for the policy's idle timeout. */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <systemd/sd-id128.h>

#include "engine.h"
#include "peer-names.h"
#include "scope-spare.h"
#include "inspect.h"
#include "policy.h"
#include "session.h"
#include "polkit.h"
#include "skills.h"
#include "store.h"
#include "uid-alloc.h"

#define SKILLD_BUS_NAME "io.skilld.Skilld1"
#define SKILLD_OBJECT_PATH "/io/skilld/Skilld1"
#define SKILLD_RUN_PATH_PREFIX "/io/skilld/Skilld1/run"
#define SKILLD_MANAGER_INTERFACE "io.skilld.Skilld1.Manager"
#define SKILLD_RUN_INTERFACE "io.skilld.Skilld1.Run"

/* Peers told about one run, its submitter included (bus-run.c says why there is a cap). */
#define RUN_PEERS_MAX 16U

#define SKILLD_RUNTIME_DIR "/run/skilld"
/* Used when the policy cannot be loaded (then nothing runs anyway). */
#define SKILLD_IDLE_TIMEOUT_DEFAULT_USEC (30ULL * 1000000)
/* How long the service waits, idle, before returning freed memory to the system. */
#define MANAGER_TRIM_DELAY_USEC (1ULL * 1000000)
/* Run uids taken ahead at once, after one scan of /proc (uid_allocator_take_many()). */
#define MANAGER_SPARE_UIDS 8U

typedef struct Manager Manager;
typedef struct Run Run;
typedef struct Pending Pending;
typedef struct Connection Connection;

/* The inspection of a skill InstallSkill put in place, kept for the next RunInstalled of the same
 * folder (pending.c): nobody but the service writes there, and it replaces a skill only by
 * renaming a whole new folder into place, so the folder's inode and ctime name its contents. */
#define INSPECTED_SKILLS_MAX 8U
typedef struct InspectedSkill {
        bool valid;
        dev_t dev;
        ino_t ino;
        struct timespec ctime;
        char *script;                   /* the caller's choice, NULL for the default */
        bool command;
        Inspection inspection;
} InspectedSkill;

typedef struct ManagerOptions {
        const char *bus_address;        /* NULL: the system bus */
        const char *state_dir;          /* NULL: $STATE_DIRECTORY, else LOCALSTATEDIR/lib/skilld */
        const char *runtime_dir;        /* NULL: /run/skilld */
        const char *policy_path;        /* NULL: the system's policy layers */
        bool no_idle_exit;
} ManagerOptions;

/* A peer of the private socket or of the root socket: a direct D-Bus connection, no bus daemon
 * in between. */
struct Connection {
        Manager *manager;
        sd_bus *bus;
        uid_t uid;                      /* SO_PEERCRED at accept() */
        bool root_socket;               /* holds the service from its idle exit (root-socket.h) */
        uint64_t serial;                /* never reused: what runs remember their direct peers by */
        Connection *prev, *next;
};

/* An active run: queued or running; before that, recording: accepted, its record on its way to
 * the disk (store_create_run_async()), in Manager.recording, not in Manager.runs. */
struct Run {
        Manager *manager;
        StoreRun *record;               /* the store's; id, owner, state, times. NULL while recording */
        bool recording;
        uid_t owner;
        sd_bus_message *call;           /* while recording: the Run() call, answered once the record
                                         * is durable */
        char *path;                     /* its D-Bus object */

        /* What runs. The skill tree is held by fd: a replaced installed skill keeps its old
         * tree until the run is over. */
        char *skill_name;
        char *skill_hash;
        char *script;
        char *interpreter;
        int skill_dir_fd;
        char *skill_dir;                /* for messages */
        char *work_dir;                 /* an unpacked archive of ours, deleted with the run */
        char **args;
        bool input;                     /* the input JSON waits in the record's input.json */
        char **env;
        char **file_names;
        int *file_fds;
        bool *file_folders;             /* folder inputs: zips unpacked by the engine */
        size_t n_files;
        int stdout_fd;                  /* the caller's live copies, or -1 */
        int stderr_fd;
        SandboxLimits limits;
        unsigned limits_from_skill;     /* SandboxLimit bits the skill's declaration lowered */
        bool command;                   /* args is the argv of a command; script is "" */
        char *cwd;                      /* NULL: /work */
        char *session_id;               /* a session's /work, locked by session_fd while queued
                                         * and running */
        int session_fd;
        uint64_t session_quota;
        bool network;                   /* authorized and allowed by the policy */

        /* While running. */
        bool running;
        pid_t worker;
        sd_event_source *worker_source;
        int cancel_fd;                  /* write end: a byte cancels */
        int result_fd;                  /* memfd the worker writes the result JSON to */
        int uid_lock_fd;
        int env_dir_fd;                 /* the skill's environment (skilld/env), or -1 */
        uid_t uid;
        char *unit;
        char *refused;                  /* the journal's SKILLD_REFUSED_SYSCALLS, from the stored result */
        ScopeSpare *scope_spare;        /* the scope started ahead whose id the run took, or NULL */
        bool cancel_requested;

        /* SECURITY: who on the system bus hears of it (bus-run.c). Its signals are unicast to
         * these, never broadcast: the connection that submitted it, and those that afterwards
         * passed the run objects' access check for it. The names are counted in the manager's
         * peers, where gone peers drop out by themselves. */
        char **peers;
        /* And the same for direct connections (the private and root sockets), by serial: the
         * submitter first, then those that asked about it, RUN_PEERS_MAX in all as on the bus. A
         * serial whose connection has gone matches nothing, as a gone name does on the bus. */
        uint64_t direct_peers[RUN_PEERS_MAX];
        size_t n_direct_peers;

        Run *prev, *next;
};

struct Manager {
        ManagerOptions options;
        char *state_dir;
        char *runtime_dir;

        sd_event *event;
        sd_bus *bus;                    /* the system bus (or the test bus); NULL without one */
        /* Every active run's peers, each name once however many runs it hears of (bounded: each
         * costs a match rule on the bus, of which the bus grants a connection a few hundred), and
         * apart from them the callers waiting for polkit (polkit.h), so that a burst of those
         * never takes the room of a run's listeners. */
        PeerNames *peers;
        PeerNames *polkit_callers;
        CallerUids *caller_uids;        /* on bus: new callers' uids asked ahead of their calls */
        sd_bus_slot *name_slot;
        bool name_acquired;
        bool releasing_name;

        /* The private socket, when socket-activated. */
        int listen_fd;
        sd_event_source *listen_source;
        /* The root socket (root-socket.h), while the bus name is ours. */
        char *root_socket_path;
        int root_fd;
        sd_event_source *root_source;
        size_t n_root_connections;
        Connection *connections;
        size_t n_connections;
        uint64_t connection_serial;     /* the last one given (Connection.serial) */
        sd_id128_t server_id;

        bool use_scopes;                /* runs go into systemd scopes (root, systemd running) */
        char *systemd_address;          /* for workers: NULL = the system bus */

        PolkitRegistry *polkit;
        Policy *policy;                 /* NULL when the policy does not load */
        char *policy_error;
        Store *store;
        SessionStore *sessions;         /* under state_dir; NULL when it cannot be opened */
        UidAllocator *uids;
        /* Run uids taken ahead of need, off the path of the next runs (manager.c): those from
         * spare_uid_next to n_spare_uids are held. */
        uid_t spare_uids[MANAGER_SPARE_UIDS];
        int spare_uid_lock_fds[MANAGER_SPARE_UIDS];
        size_t spare_uid_next, n_spare_uids;
        sd_event_source *spare_uid_source;
        /* The next run's scope started ahead (scope-spare.h), when runs go into scopes; the limits
         * it is started with: those of the last run that started. */
        ScopeSpare *scope_spare;
        SandboxLimits scope_spare_limits;
        sd_event_source *scope_spare_source;
        SkillDirs skill_dirs;
        char *work_dir;                 /* STATE/work: unpacked archives of active runs */

        Run *runs;                      /* active runs, oldest first */
        Run *recording;                 /* runs whose record is being synced, oldest first */
        sd_event_source *store_created_source;
        sd_event_source *dispatch_source;
        bool stopping;                  /* SIGTERM: nothing new starts */
        sd_bus_message *authorized_call;        /* bus-run.c: the call the filter let through */
        sd_bus *systemd_bus;            /* a connection of our own to systemd, if any */
        Pending *pending;               /* calls waiting for an inspection (pending.c) */
        size_t n_pending;
        InspectedSkill inspected[INSPECTED_SKILLS_MAX]; /* installed skills inspected (pending.c) */
        unsigned inspected_next;
        size_t n_builds;                /* BuildEnvironment() calls building (bus-env.c) */
        struct Build *builds;           /* ... those builds, newest first: the policy's caps */

        uint64_t idle_timeout_usec;
        bool trimmed;                   /* malloc_trim() done since the last event */
        uint64_t idle_since_usec;       /* CLOCK_MONOTONIC when it last became idle, 0: busy or trimmed */
};

int manager_new(const ManagerOptions *o, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Loads policy and store, settles what a dead predecessor left, connects, exports the objects,
 * asks for the bus name. */
int manager_startup(Manager *m);
/* Runs the event loop until a signal, or until idle for the idle timeout. */
int manager_loop(Manager *m);

bool manager_is_idle(Manager *m);

/* bus-manager.c / bus-run.c: the vtables, and everything a bus needs to serve them. */
int manager_add_objects(Manager *m, sd_bus *bus);
int bus_run_add_objects(Manager *m, sd_bus *bus);
int bus_run_object_path(const char *id, char **ret);
/* The run id of an object path below SKILLD_RUN_PATH_PREFIX, or NULL. */
const char *bus_run_path_id(const char *path);

/* The direct connection (private or root socket) that bus is, or NULL (the system bus). */
Connection *manager_connection_of(Manager *m, sd_bus *bus);

/* What Run()/RunInstalled() hand over once validated and authorized. Everything is copied (fds
 * duplicated) on success; from then on the run deletes work_dir when it is over. */
typedef struct RunSubmission {
        uid_t owner;
        const Inspection *skill;
        bool installed;
        int skill_dir_fd;
        const char *skill_dir;          /* for messages */
        const char *work_dir;           /* an unpacked archive, or NULL */
        char * const *args;
        const char *input_json;         /* NULL: none */
        char * const *env;
        char * const *file_names;
        const int *file_fds;
        const bool *file_folders;       /* NULL: none is a folder */
        size_t n_files;
        int stdout_fd;
        int stderr_fd;
        const PolicyLimits *limits;     /* resolved */
        unsigned limits_from_skill;     /* SandboxLimit bits the skill's declaration lowered */
        bool command;                   /* args is an argv run as is (the skill has no script here) */
        const Session *session;         /* checked (bus-session.c); its /work is kept */
        const char *cwd;                /* "/work" (NULL) or "/skill" */
        bool network;                   /* authorized (io.skilld.network) and allowed by the policy */
        sd_bus_message *call;           /* the Run() call: its sender hears about the run */
} RunSubmission;

/* Takes a run: its record is made, and synced off the event loop; once it is durable the run is
 * queued (or started) and s->call is answered with its id and object path, or with the error
 * that kept the record from the disk. Nothing is said about the run, and nothing of it starts,
 * before that. -EUSERS when the queue caps are reached, -ENOSPC when the store is too full, each
 * with a message (then the caller answers). */
int manager_submit_run(Manager *m, RunSubmission *s, char **error);
/* Cancels a queued or running run; -EALREADY for one that has ended. */
int manager_cancel_run(Manager *m, StoreRun *record);
/* Deletes a final run; -EBUSY for an active one. */
int manager_remove_run(Manager *m, StoreRun *record);
Run *manager_find_active(Manager *m, const char *id);

/* Limits a run had, by policy names, from its request. */
int manager_run_request(Manager *m, const StoreRun *record, char **ret_json);
/* The engine's limits for the policy's. */
SandboxLimits manager_sandbox_limits(const PolicyLimits *l);
/* Active runs of owner (UID_INVALID: everyone's), running or queued. */
size_t manager_count_runs(Manager *m, uid_t owner, bool running);

/* bus-run.c: what the run objects tell those entitled to hear it. Changed properties are named,
 * NULL-terminated; signals and PropertiesChanged go to the run's peers, one unicast message each
 * on the system bus, one message each on their connection to the private or root socket. */
void bus_run_emit_changed(Manager *m, const StoreRun *record, ...) __attribute__((sentinel));
void bus_run_emit_started(Manager *m, const StoreRun *record);
void bus_run_emit_finished(Manager *m, const StoreRun *record);
/* Entitles the sender of call to hear about run. A submitter always is; anyone else within caps
 * (on the system bus each name tracked costs the service a match rule): -EUSERS beyond them. */
int bus_run_add_peer(Manager *m, Run *run, sd_bus_message *call, bool submitter);

/* pending.c: calls whose skill is being inspected. */
typedef enum PendingKind {
        PENDING_RUN,                    /* Run(): an archive unpacked into the work directory */
        PENDING_RUN_INSTALLED,          /* RunInstalled(): an installed skill's folder */
        PENDING_INSTALL,                /* InstallSkill(): an archive unpacked into staging */
} PendingKind;

struct Pending {
        Manager *manager;
        PendingKind kind;
        sd_bus_message *call;           /* the key: the call being answered */
        uid_t uid;
        bool started;                   /* false: waiting for a free inspection slot */
        int archive_fd;                 /* the caller's archive, until inspected */
        char *dir_name;
        char *script;
        bool command;                   /* a command run: no entry point to resolve */
        pid_t pid;                      /* the inspecting child, until reaped */
        sd_event_source *child_source;
        sd_event_source *timeout_source;
        int result_fd;
        int dir_fd;                     /* the tree inspected */
        char *dir;                      /* its path (work directory or staging name) */
        bool done;
        bool keep;                      /* keep the inspection (pending_start()) */
        struct stat dir_stat;           /* ... of the folder as it was opened */
        Inspection inspection;
        Pending *prev, *next;
};

/* Finds the inspection of call. NULL: none started yet. */
Pending *pending_find(Manager *m, sd_bus_message *call);
/* Starts inspecting for call (or queues it, when too many inspections are going): the archive
 * (Run, InstallSkill) or the installed folder dir_fd (RunInstalled, the fd is taken). The call is
 * dispatched again once the inspection is done: returns 0. keep: the folder is one InstallSkill
 * put in place (SKILL_ORIGIN_INSTALLED), whose inspection may be kept and reused: 1 when it was,
 * the pending call done at once (pending_find() has it), nothing dispatched again. */
int pending_start(Manager *m, sd_bus_message *call, PendingKind kind, uid_t uid, int archive_fd, int dir_fd,
                  const char *dir_name, const char *script, bool command, bool keep, char **error);
/* Forgets the kept inspections. */
void pending_forget_inspected(Manager *m);
Pending *pending_free(Pending *p);
/* Forgets the pending call without deleting what it unpacked (taken over by a run). */
void pending_release(Pending *p);
