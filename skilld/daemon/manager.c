/* See manager.h. This file holds the Manager's lifetime (start-up, the idle loop, shutdown), the
 * private socket's peers, and the lifecycle of runs; the D-Bus side lives in bus-manager.c and
 * bus-run.c, the inspection of calls' skills in pending.c. */
#include <cjson/cJSON.h>
#include <malloc.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-id128.h>

#include "error.h"
#include "fileio.h"
#include "journal.h"
#include "list.h"
#include "log.h"
#include "env-run.h"
#include "bus-errors.h"
#include "bus-session.h"
#include "manager.h"
#include "root-socket.h"
#include "scope.h"
#include "worker.h"

/* Peers of the private socket: each one costs an fd and some memory. */
#define CONNECTIONS_MAX 1024U
#define CONNECTIONS_PER_UID_MAX 64U
#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

static Connection *connection_free(Connection *c);

static void run_finalize(Run *run);

static uint64_t realtime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

/* ---- Runs ---- */

static void run_unlink(Run *run) {
        Manager *m = run->manager;

        if (!m)
                return;
        if (run->recording)
                LIST_REMOVE(m->recording, run);
        else
                LIST_REMOVE(m->runs, run);
        run->manager = NULL;
}

static void run_append(Manager *m, Run *run) {
        run->manager = m;
        if (run->recording)
                LIST_APPEND(m->recording, run);
        else
                LIST_APPEND(m->runs, run);
}

static Run *run_free(Run *run) {
        PeerNames *peers;

        if (!run)
                return NULL;
        peers = run->manager ? run->manager->peers : NULL;
        run_unlink(run);
        sd_bus_message_unref(run->call);
        if (run->worker > 0) {
                /* Only on shutdown paths: the worker dies with its sandbox. */
                (void) kill(run->worker, SIGKILL);
                (void) waitpid(run->worker, NULL, 0);
        }
        sd_event_source_disable_unref(run->worker_source);
        scope_spare_free(run->scope_spare);
        free(run->path);
        free(run->skill_name);
        free(run->skill_hash);
        free(run->script);
        free(run->cwd);
        free(run->session_id);
        safe_close(run->session_fd);
        free(run->interpreter);
        safe_close(run->skill_dir_fd);
        free(run->skill_dir);
        if (run->work_dir) {
                (void) rm_rf_at(AT_FDCWD, run->work_dir);
                free(run->work_dir);
        }
        strv_free(run->args);
        strv_free(run->env);
        strv_free(run->file_names);
        for (size_t i = 0; i < run->n_files; i++)
                safe_close(run->file_fds[i]);
        free(run->file_fds);
        free(run->file_folders);
        safe_close(run->stdout_fd);
        safe_close(run->stderr_fd);
        safe_close(run->cancel_fd);
        safe_close(run->result_fd);
        /* The uid is free again once the worker is gone: its sandbox went with it. */
        safe_close(run->uid_lock_fd);
        safe_close(run->env_dir_fd);
        free(run->unit);
        free(run->refused);
        STRV_FOREACH(n, run->peers)
                peer_names_remove(peers, *n);
        strv_free(run->peers);
        free(run);
        return NULL;
}

Run *manager_find_active(Manager *m, const char *id) {
        for (Run *r = m->runs; r; r = r->next)
                if (streq(r->record->id, id))
                        return r;
        return NULL;
}

size_t manager_count_runs(Manager *m, uid_t owner, bool running) {
        size_t n = 0;

        for (Run *r = m->runs; r; r = r->next)
                if ((owner == UID_INVALID || r->record->owner == owner) && r->running == running)
                        n++;
        /* Those being recorded are as good as queued: counted against the caps already. */
        for (Run *r = m->recording; r && !running; r = r->next)
                if (owner == UID_INVALID || r->owner == owner)
                        n++;
        return n;
}

SandboxLimits manager_sandbox_limits(const PolicyLimits *l) {
        SandboxLimits s = SANDBOX_LIMITS_DEFAULT;

        s.memory_max = l->value[POLICY_LIMIT_MEMORY];
        s.tasks_max = l->value[POLICY_LIMIT_TASKS];
        s.cpu_percent = (unsigned) MIN(l->value[POLICY_LIMIT_CPU], (uint64_t) UINT_MAX);
        s.timeout_usec = l->value[POLICY_LIMIT_TIMEOUT];
        s.stdout_max = l->value[POLICY_LIMIT_STDOUT];
        s.stderr_max = l->value[POLICY_LIMIT_STDERR];
        s.out_max = l->value[POLICY_LIMIT_OUTPUT];
        s.tmpfs_size = l->value[POLICY_LIMIT_TMPFS];
        return s;
}

static int json_add_strv(cJSON *o, const char *key, char * const *l) {
        cJSON *a = cJSON_AddArrayToObject(o, key);

        if (!a)
                return -ENOMEM;
        STRV_FOREACH(s, l) {
                cJSON *v = cJSON_CreateString(*s);

                if (!v || !cJSON_AddItemToArray(a, v)) {
                        cJSON_Delete(v);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* What the record keeps of the request: enough to show and audit it, not the input's contents or
 * the environment's values, which may be secrets and are the caller's. */
static int request_json(const RunSubmission *s, char **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        _cleanup_strv_free_ char **env_names = NULL;
        cJSON *limits;
        char *text;
        int r;

        if (!o)
                return -ENOMEM;
        STRV_FOREACH(e, s->env) {
                char *n = strndup(*e, strcspn(*e, "="));

                r = n ? strv_push(&env_names, n) : -ENOMEM;
                if (r < 0)
                        return r;
        }
        if (json_add_strv(o, "args", s->args) < 0 || json_add_strv(o, "env", env_names) < 0 ||
            json_add_strv(o, "files", s->file_names) < 0 ||
            !cJSON_AddBoolToObject(o, "input", !!s->input_json) ||
            !cJSON_AddBoolToObject(o, "installed", s->installed) ||
            !cJSON_AddBoolToObject(o, "network", s->network) ||
            !cJSON_AddBoolToObject(o, "command", s->command) ||
            !cJSON_AddStringToObject(o, "cwd", s->cwd ?: "/work") ||
            !cJSON_AddBoolToObject(o, "live_output", s->stdout_fd >= 0 || s->stderr_fd >= 0) ||
            !(limits = cJSON_AddObjectToObject(o, "limits")))
                return -ENOMEM;
        if (s->skill->interpreter && !cJSON_AddStringToObject(o, "interpreter", s->skill->interpreter))
                return -ENOMEM;
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                if (!cJSON_AddNumberToObject(limits, policy_limit_to_string(l),
                                             (double) s->limits->value[l]))
                        return -ENOMEM;
        text = cJSON_PrintUnformatted(o);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

int manager_run_request(Manager *m, const StoreRun *record, char **ret_json) {
        return store_run_read_request(m->store, record, ret_json);
}

static char *run_dir(Manager *m, const char *id) {
        /* The store's layout (store.h): the record of a run is runs/<id> below the state dir. */
        return strdup_printf("%s/runs/%s", m->state_dir, id);
}

static int dup_fd(int fd) {
        int c;

        if (fd < 0)
                return -EBADF;
        c = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return c < 0 ? -errno : c;
}

static void manager_dispatch_queue(Manager *m);

/* Taking a run uid scans /proc (every process's status) and asks the user database: milliseconds
 * on a busy host, on the event loop. So the next runs' uids are taken when the service has nothing
 * else to do, several after one scan, and a run starting takes the next of them. The rule of
 * uid-alloc.h holds all the same: the scan and the lock are at the time of taking, and from then
 * on, as for any uid taken, a process of that uid can only be a run of ours, which a spare has
 * none of until it is handed out, however long it waits. */
static int on_spare_uid(sd_event_source *s, void *userdata) {
        _cleanup_free_ char *why = NULL;
        Manager *m = userdata;
        int r;

        if (m->stopping || !m->uids || m->spare_uid_next < m->n_spare_uids || geteuid() != 0)
                return 0;
        m->spare_uid_next = m->n_spare_uids = 0;
        r = uid_allocator_take_many(m->uids, MANAGER_SPARE_UIDS, m->spare_uids, m->spare_uid_lock_fds,
                                    &m->n_spare_uids, &why);
        if (r < 0) {
                /* Every uid in use, say: the next run takes one as it starts, or waits. */
                m->n_spare_uids = 0;
                log_debug("No run uid taken ahead: %s", strna(why));
        }
        return 0;
}

static void manager_drop_spare_uids(Manager *m) {
        for (size_t i = m->spare_uid_next; i < m->n_spare_uids; i++)
                m->spare_uid_lock_fds[i] = safe_close(m->spare_uid_lock_fds[i]);
        m->spare_uid_next = m->n_spare_uids = 0;
}

/* Arms a one-shot defer source at idle priority (made the first time): for work the service does
 * ahead of need, once nothing else waits. */
static int schedule_at_idle(Manager *m, sd_event_source **source, sd_event_handler_t handler,
                            const char *description) {
        int r;

        if (!*source) {
                r = sd_event_add_defer(m->event, source, handler, m);
                if (r >= 0)
                        r = sd_event_source_set_priority(*source, SD_EVENT_PRIORITY_IDLE);
                if (r < 0) {
                        *source = sd_event_source_disable_unref(*source);
                        return r;
                }
                (void) sd_event_source_set_description(*source, description);
        }
        return sd_event_source_set_enabled(*source, SD_EVENT_ONESHOT);
}

static void manager_schedule_spare_uid(Manager *m) {
        /* Failing that, the next run takes its uid as it starts. */
        (void) schedule_at_idle(m, &m->spare_uid_source, on_spare_uid, "spare-uid");
}

static void on_scope_spare_gone(ScopeSpare *s, void *userdata) {
        Manager *m = userdata;

        if (m->scope_spare == s)
                m->scope_spare = scope_spare_free(s);
}

/* The next run's scope, started ahead (scope-spare.h) when the service has nothing else to do, as
 * the spare uid is taken. */
static int on_scope_spare(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        int r;

        if (m->stopping || !m->use_scopes || m->scope_spare)
                return 0;
        r = scope_spare_start(m->event, m->systemd_address, &m->scope_spare_limits, on_scope_spare_gone, m,
                              &m->scope_spare);
        if (r < 0)
                log_debug_errno(r, "No scope started ahead: %m");
        return 0;
}

static void manager_schedule_scope_spare(Manager *m, const SandboxLimits *limits) {
        if (!m->use_scopes)
                return;
        m->scope_spare_limits = *limits;
        /* Failing that, the next run's worker starts its scope. */
        (void) schedule_at_idle(m, &m->scope_spare_source, on_scope_spare, "spare-scope");
}

static int on_dispatch(sd_event_source *s, void *userdata) {
        manager_dispatch_queue(userdata);
        return 0;
}

/* Starts what can start, once the current dispatch is over: the caller of Run() gets the run's id
 * before anything is said about the run (RunStarted), so it can tell which run that is about. */
static void manager_schedule_dispatch(Manager *m) {
        int r;

        if (!m->dispatch_source) {
                r = sd_event_add_defer(m->event, &m->dispatch_source, on_dispatch, m);
                if (r >= 0)
                        (void) sd_event_source_set_description(m->dispatch_source, "dispatch-queue");
                if (r < 0) {
                        log_warning_errno(r, "Failed to schedule the queue, starting runs now: %m");
                        manager_dispatch_queue(m);
                        return;
                }
        }
        (void) sd_event_source_set_enabled(m->dispatch_source, SD_EVENT_ONESHOT);
}

static void on_record_created(Store *store, StoreRun *record, int error, const char *message, void *userdata);

int manager_submit_run(Manager *m, RunSubmission *s, char **error) {
        _cleanup_(scope_spare_freep) ScopeSpare *spare = NULL;
        _cleanup_free_ char *request = NULL, *path = NULL, *env_cache = NULL;
        _cleanup_close_ int env_fd = -EBADF;
        const Policy *p = m->policy;
        char id[SD_ID128_STRING_MAX];
        StoreRunInfo info = {};
        size_t user_running, user_queued;
        SandboxLimits limits = manager_sandbox_limits(s->limits);
        bool starts_now;
        sd_id128_t rid;
        Run *run;
        int r;

        /* 1. Room: a slot now, else a place in the queue. A user with runs waiting queues
         *    behind them, so runs start in the order they came. */
        user_running = manager_count_runs(m, s->owner, true);
        user_queued = manager_count_runs(m, s->owner, false);
        starts_now = manager_count_runs(m, UID_INVALID, true) < p->max_active &&
                user_running < p->max_active_per_user && user_queued == 0;
        if (!starts_now) {
                if (user_queued >= p->max_queued_per_user)
                        return error_setf(error, -EUSERS,
                                          "You have %zu runs active and %zu waiting, the most the "
                                          "policy allows; try again when one has finished.",
                                          user_running, user_queued);
                if (manager_count_runs(m, UID_INVALID, false) >= p->max_queued)
                        return error_setf(error, -EUSERS,
                                          "The service has %zu runs waiting, the most the policy "
                                          "allows; try again later.",
                                          manager_count_runs(m, UID_INVALID, false));
        }

        /* 2. Room on disk: a full store refuses new runs rather than losing results. */
        r = store_check_space(m->store, p->min_free_bytes, p->min_free_percent, error);
        if (r < 0)
                return r;

        /* The skill's environment, when it needs one: refused here, not after waiting in the queue. */
        r = env_cache_dir(true, &env_cache);
        if (r < 0)
                return r;
        r = manager_env_for_run(env_cache, s->skill_dir_fd, s->skill->hash, &env_fd, error);
        if (r < 0)
                return r;

        /* 3. The record, queued. A run that starts at once takes the scope started ahead, if it
         *    was started with the limits the run has: it is named after its id. */
        if (starts_now && !m->stopping && scope_spare_fits(m->scope_spare, &limits)) {
                spare = TAKE_PTR(m->scope_spare);
                memcpy(id, scope_spare_id(spare), sizeof(id));
        } else {
                r = sd_id128_randomize(&rid);
                if (r < 0)
                        return error_setf(error, r, "Failed to make a run id: %s", strerror(-r));
                sd_id128_to_string(rid, id);
        }
        r = request_json(s, &request);
        if (r < 0)
                return r;
        info = (StoreRunInfo) {
                .id = id,
                .owner = s->owner,
                .skill_name = s->skill->name,
                .skill_hash = s->skill->hash,
                .script = strempty(s->skill->script),
                .request_json = request,
                .input_json = s->input_json,
        };
        r = bus_run_object_path(id, &path);
        if (r < 0)
                return r;

        run = calloc(1, sizeof(Run));
        if (!run)
                return -ENOMEM;
        *run = (Run) {
                .skill_dir_fd = -EBADF,
                .stdout_fd = -EBADF,
                .stderr_fd = -EBADF,
                .cancel_fd = -EBADF,
                .result_fd = -EBADF,
                .uid_lock_fd = -EBADF,
                .env_dir_fd = -EBADF,
                .session_fd = -EBADF,
                .uid = UID_INVALID,
        };
        run->path = TAKE_PTR(path);
        run->scope_spare = TAKE_PTR(spare);
        run->skill_name = strdup(s->skill->name);
        run->skill_hash = strdup(s->skill->hash);
        run->script = strdup(strempty(s->skill->script));
        run->command = s->command;
        run->cwd = s->cwd ? strdup(s->cwd) : NULL;
        if (s->session) {
                /* One run at a time in a session: the lock is held from now until the run is over. */
                r = session_open_locked(m->sessions, s->session->id, &run->session_fd);
                if (r < 0) {
                        run_free(run);
                        return error_setf(error, r, r == -EBUSY ? "Session %s is in use by another run." :
                                          "Cannot open session %s: %s", s->session->id, strerror(-r));
                }
                run->session_id = strdup(s->session->id);
                run->session_quota = s->session->quota_bytes;
                if (!run->session_id) {
                        run_free(run);
                        return -ENOMEM;
                }
        }
        run->interpreter = s->skill->interpreter ? strdup(s->skill->interpreter) : NULL;
        run->args = strv_copy(s->args);
        run->env = strv_copy(s->env);
        run->file_names = strv_copy(s->file_names);
        run->network = s->network;
        run->file_fds = calloc(MAX(s->n_files, 1U), sizeof(int));
        run->file_folders = calloc(MAX(s->n_files, 1U), sizeof(bool));
        if (!run->skill_name || !run->skill_hash || !run->script || (s->cwd && !run->cwd) ||
            (s->skill->interpreter && !run->interpreter) || !run->args || !run->env || !run->file_names ||
            !run->file_fds || !run->file_folders) {
                run_free(run);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_files; i++) {
                run->file_fds[i] = dup_fd(s->file_fds[i]);
                run->file_folders[i] = s->file_folders && s->file_folders[i];
                run->n_files = i + 1;
                if (run->file_fds[i] < 0) {
                        r = run->file_fds[i];
                        run_free(run);
                        return error_setf(error, r, "Failed to take input file %s: %s", s->file_names[i],
                                          strerror(-r));
                }
        }
        run->stdout_fd = s->stdout_fd >= 0 ? dup_fd(s->stdout_fd) : -EBADF;
        run->stderr_fd = s->stderr_fd >= 0 ? dup_fd(s->stderr_fd) : -EBADF;
        if ((s->stdout_fd >= 0 && run->stdout_fd < 0) || (s->stderr_fd >= 0 && run->stderr_fd < 0)) {
                run_free(run);
                return error_setf(error, -errno, "Failed to take the output fds: %m");
        }
        run->limits = limits;
        run->limits_from_skill = s->limits_from_skill;
        run->skill_dir_fd = dup_fd(s->skill_dir_fd);
        run->env_dir_fd = TAKE_FD(env_fd);
        run->skill_dir = strdup(strempty(s->skill_dir));
        run->work_dir = s->work_dir ? strdup(s->work_dir) : NULL;
        if (run->skill_dir_fd < 0 || !run->skill_dir || (s->work_dir && !run->work_dir)) {
                /* Not ours yet: the caller deletes it. */
                free(run->work_dir);
                run->work_dir = NULL;
                run_free(run);
                return -ENOMEM;
        }

        /* Before the reply: the submitter must hear RunStarted and RunFinished, even of a run that
         * ends at once. Failing that, it would wait forever: no run rather. */
        r = s->call ? bus_run_add_peer(m, run, s->call, true) : 0;
        if (r < 0)
                (void) error_setf(error, r, "Failed to watch the caller's connection: %s", strerror(-r));
        else
                /* The input waits on disk, in the record (root's alone), not in our memory: a
                 * queue of runs with large inputs would otherwise be a queue of large
                 * allocations. The worker reads and deletes it. */
                r = store_create_run_async(m->store, &info, 0, on_record_created, run, error);
        if (r < 0) {
                free(run->work_dir);
                run->work_dir = NULL;
                run_free(run);
                return r;
        }
        /* From here on the run is ours (its unpacked tree too), and the call is answered when
         * its record is durable (on_record_created()). */
        run->input = !!s->input_json;
        run->owner = s->owner;
        run->call = sd_bus_message_ref(s->call);
        run->recording = true;
        run_append(m, run);
        return 0;
}

/* A run's record is durable (or could not be made so): only now does the run count, and its
 * caller hear of it. */
static void on_record_created(Store *store, StoreRun *record, int error, const char *message, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_free_ char *path = NULL;
        Run *run = userdata;
        Manager *m = run->manager;
        int r;

        call = TAKE_PTR(run->call);
        run_unlink(run);
        run->recording = false;
        if (!record) {
                run_free(run);
                if (call) {
                        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                        (void) bus_error_set_errnof(&e, error, "%s", message ?: strerror(-error));
                        (void) sd_bus_reply_method_error(call, &e);
                }
                return;
        }
        run->record = record;
        run_append(m, run);
        log_debug("Run %s of %s for uid %u queued.", record->id, run->skill_name, (unsigned) record->owner);
        /* The caller first, then the rest: RunStarted comes from the dispatch, after the reply. */
        if (call) {
                r = bus_run_object_path(record->id, &path);
                if (r >= 0)
                        r = sd_bus_reply_method_return(call, "so", record->id, path);
                if (r < 0)
                        log_debug_errno(r, "Failed to answer the Run() call of run %s: %m", record->id);
        }
        manager_schedule_dispatch(m);
}

static int on_store_created(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        store_dispatch_created(m->store);
        return 0;
}

/* A result for a run that never executed (canceled while queued). */
static int stub_result(const Run *run, RunStatus status, const char *message, char **ret) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        char *text;
        int r;

        r = run_result_new_unrun(run->record->id, run->skill_name, run->skill_hash, run->script,
                                 &run->limits, status, message, &res);
        if (r < 0)
                return r;
        r = run_result_to_json(res, &j);
        if (r < 0)
                return r;
        text = cJSON_PrintUnformatted(j);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

/* Ends a run without a result: the store says interrupted, and why. */
static void run_interrupt(Run *run, const char *reason) {
        Manager *m = run->manager;
        int r;

        r = store_run_interrupt(m->store, run->record, reason, 0);
        if (r < 0)
                log_warning_errno(r, "Failed to record run %s as interrupted: %m", run->record->id);
        run_finalize(run);
}

static int on_worker_exit(sd_event_source *s, const siginfo_t *si, void *userdata);

static int run_start(Run *run) {
        Manager *m = run->manager;
        _cleanup_free_ char *why = NULL, *dir = NULL, *description = NULL;
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_close_pair_ int cancel[2] = { -EBADF, -EBADF };
        _cleanup_strv_free_ char **env_search = NULL;
        RunRequest req = RUN_REQUEST_INIT;
        ScopeSpareHandout spare = {};
        WorkerArgs w = {};
        int r;

        /* Its scope started ahead, taken when it was submitted to start at once: still young
         * enough that systemd's backstop (RuntimeMaxUSec=, counted from the scope's start) is
         * later than the run's own timeout. */
        if (run->scope_spare) {
                if (scope_spare_age_usec(run->scope_spare) >= WORKER_SCOPE_GRACE_USEC) {
                        log_warning("Run %s cannot start: the scope started ahead for it is too old.",
                                    run->record->id);
                        return -ETIME;
                }
                scope_spare_handout(run->scope_spare, &spare);
        }

        /* 1. An identity of its own (uid-alloc.h): the one taken ahead, else one taken now. */
        if (geteuid() == 0) {
                if (m->spare_uid_next < m->n_spare_uids) {
                        run->uid = m->spare_uids[m->spare_uid_next];
                        run->uid_lock_fd = TAKE_FD(m->spare_uid_lock_fds[m->spare_uid_next]);
                        m->spare_uid_next++;
                } else {
                        r = uid_allocator_take(m->uids, &run->uid, &run->uid_lock_fd, &why);
                        if (r < 0)
                                return log_warning_errno(r, "Run %s cannot start: %s", run->record->id,
                                                         strna(why));
                }
                manager_schedule_spare_uid(m);
        }

        /* 2. What the worker needs, all of it set up here, where failures can still be told. */
        if (pipe2(cancel, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        run->result_fd = memfd_create("skilld-result", MFD_CLOEXEC);
        if (run->result_fd < 0)
                return -errno;
        dir = run_dir(m, run->record->id);
        description = strdup_printf("skilld run %s of skill %s (uid %u)", run->record->id, run->skill_name,
                                    (unsigned) run->record->owner);
        files = calloc(MAX(run->n_files, 1U), sizeof(RunFile));
        if (!dir || !description || !files)
                return -ENOMEM;
        for (size_t i = 0; i < run->n_files; i++)
                files[i] = (RunFile) {
                        .name = run->file_names[i],
                        .fd = run->file_fds[i],
                        .folder = run->file_folders[i],
                };

        req.run_id = run->record->id;
        req.skill_dir = run->skill_dir;
        req.skill_dir_fd = run->skill_dir_fd;
        req.skill_name = run->skill_name;
        req.skill_hash = run->skill_hash;
        req.cwd = run->cwd;
        req.workspace_fd = run->session_fd;
        req.workspace_quota = run->session_quota;
        if (run->command)
                req.command = run->args;
        else {
                req.script = run->script;
                req.interpreter = run->interpreter;
                req.args = run->args;
        }
        req.files = files;
        req.n_files = run->n_files;
        req.env = run->env;
        req.limits = run->limits;
        req.limits_from_skill = run->limits_from_skill;
        req.network = run->network;
        req.uid = run->uid;
        req.cancel_fd = cancel[0];
        req.allow_missing = m->policy->isolation_may_be_missing;
        if (run->env_dir_fd >= 0) {
                r = env_search_paths(&env_search);
                if (r < 0)
                        return r;
                req.env_dir_fd = run->env_dir_fd;
                req.env_search = env_search;
        }

        w = (WorkerArgs) {
                .request = req,
                .run_dir = dir,
                .client_stdout_fd = run->stdout_fd,
                .client_stderr_fd = run->stderr_fd,
                .result_fd = run->result_fd,
                .input_file = run->input,
                .use_scope = m->use_scopes,
                .systemd_address = m->systemd_address,
                .description = description,
                .spare = run->scope_spare ? &spare : NULL,
        };

        /* 3. Running, on disk first: a service killed from here on leaves it interrupted. */
        r = store_run_set_running(m->store, run->record, 0);
        if (r < 0)
                return log_warning_errno(r, "Failed to record run %s as running: %m", run->record->id);

        r = worker_spawn(&w, &run->worker);
        if (r < 0)
                return log_warning_errno(r, "Failed to start the worker of run %s: %m", run->record->id);
        run->running = true;
        if (run->scope_spare)
                scope_spare_handed(run->scope_spare);
        manager_schedule_scope_spare(m, &run->limits);
        run->cancel_fd = TAKE_FD(cancel[1]);
        /* The worker has them now; ours would only keep pipes open. */
        run->stdout_fd = safe_close(run->stdout_fd);
        run->stderr_fd = safe_close(run->stderr_fd);
        for (size_t i = 0; i < run->n_files; i++)
                run->file_fds[i] = safe_close(run->file_fds[i]);

        r = sd_event_add_child(m->event, &run->worker_source, run->worker, WEXITED, on_worker_exit, run);
        if (r < 0) {
                /* Without a way to learn of its end, the run cannot be followed: stop it. */
                log_warning_errno(r, "Failed to watch the worker of run %s: %m", run->record->id);
                return r;
        }
        if (m->use_scopes) {
                run->unit = scope_unit_name(run->record->id);
                if (!run->unit)
                        log_oom();
        }

        /* The journal entry is the record for admins; this is for debugging. */
        log_debug("Run %s of %s for uid %u started (uid %u).", run->record->id, run->skill_name,
                  (unsigned) run->record->owner, (unsigned) run->uid);
        journal_run_started(&(JournalRun) {
                .id = run->record->id,
                .skill_name = run->skill_name,
                .skill_hash = run->skill_hash,
                .owner = run->record->owner,
        });
        bus_run_emit_changed(m, run->record, "State", "StartedTimestamp", "Unit", (char *) NULL);
        bus_run_emit_started(m, run->record);
        return 0;
}

static void manager_dispatch_queue(Manager *m) {
        const Policy *p = m->policy;
        Run *next;

        if (m->stopping)
                return;
        /* In order of submission: the oldest queued run whose owner has a free slot. */
        for (Run *run = m->runs; run && manager_count_runs(m, UID_INVALID, true) < p->max_active;
             run = next) {
                next = run->next;
                if (run->running)
                        continue;
                if (manager_count_runs(m, run->record->owner, true) >= p->max_active_per_user)
                        continue;
                if (run_start(run) < 0) {
                        if (run->worker > 0) {
                                /* Started, but cannot be watched: take it down again. */
                                (void) kill(run->worker, SIGKILL);
                                (void) waitpid(run->worker, NULL, 0);
                                run->worker = 0;
                                run->worker_source = sd_event_source_disable_unref(run->worker_source);
                        }
                        run->running = false;
                        run_interrupt(run, "the service could not start the run");
                        /* The list changed under us. */
                        next = m->runs;
                }
        }
}

/* The worker's result: the copy it left in the memfd, else (it died before writing it) what
 * result.json holds. *ret_from_file tells which. */
static int read_result(Run *run, char **ret, bool *ret_from_file) {
        Manager *m = run->manager;
        _cleanup_free_ char *text = NULL, *path = NULL;
        int r = -ENODATA;

        if (lseek(run->result_fd, 0, SEEK_SET) >= 0)
                r = read_full_fd(run->result_fd, STORE_RESULT_MAX, &text, NULL);
        if (r < 0 || isempty(text)) {
                /* The worker may have stored its result and died before telling us: result.json is
                 * the commit point, and the truth. */
                free(text);
                text = NULL;
                path = strdup_printf("%s/runs/%s/result.json", m->state_dir, run->record->id);
                if (!path)
                        return -ENOMEM;
                r = read_full_file_at(AT_FDCWD, path, STORE_RESULT_MAX, true, &text, NULL);
                if (r < 0)
                        return r;
                *ret_from_file = true;
        } else
                *ret_from_file = false;
        *ret = TAKE_PTR(text);
        return 0;
}

/* The refused system calls of a result for the journal entry, escaped, or NULL: none, or the
 * result does not say. */
static char *result_refused(const cJSON *j) {
        _cleanup_(run_result_freep) RunResult *res = calloc(1, sizeof(RunResult));
        char *refused = NULL;

        if (j && res && run_result_refused_from_json(res, j) >= 0 && (res->n_refused > 0 || res->refused_truncated))
                (void) run_result_refused_string(res, &refused);
        return refused;
}

static void run_worker_exited(Run *run, int code, int status) {
        Manager *m = run->manager;
        _cleanup_free_ char *result = NULL, *error = NULL, *reason = NULL;
        bool from_file;
        int r;

        run->worker = 0;
        run->running = false;
        run->worker_source = sd_event_source_disable_unref(run->worker_source);

        r = read_result(run, &result, &from_file);
        if (r >= 0) {
                _cleanup_(cJSON_Deletep) cJSON *parsed = NULL;

                /* A worker exits successfully only after committing result.json with the bytes it
                 * then wrote to the memfd (worker_execute()): nothing to read back. */
                if (from_file || (code == CLD_EXITED && status == EXIT_SUCCESS))
                        r = store_run_finish_committed(m->store, run->record, result, 0, &parsed, &error);
                else
                        r = store_run_finish(m->store, run->record, result, 0, &error);
                if (r < 0)
                        log_warning("Run %s: %s", run->record->id, strna(error));
                run->refused = result_refused(parsed);
                run_finalize(run);
                return;
        }

        if (code == CLD_EXITED)
                reason = strdup_printf("the run's worker failed (exit status %d)", status);
        else
                reason = strdup_printf("the run's worker was killed by signal %s",
                                       strna(sigabbrev_np(status)));
        log_warning("Run %s ended without a result: %s.", run->record->id, strna(reason));
        run_interrupt(run, reason ?: "the run's worker failed");
}

static int on_worker_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        run_worker_exited(userdata, si->si_code, si->si_status);
        return 0;
}

/* The end of a run, whatever it was: tell everyone, free the slot, start the next. */
static void run_finalize(Run *run) {
        Manager *m = run->manager;
        StoreRun *record = run->record;
        _cleanup_strv_free_ char **removed = NULL;
        int r;

        /* Those waiting hear first; the journal and the session's clock come after. */
        free(run->unit);
        run->unit = NULL;
        bus_run_emit_changed(m, record, "State", "Status", "ExitCode", "Signal", "Unit", "FinishedTimestamp",
                             "Result", "Usage", (char *) NULL);
        bus_run_emit_finished(m, record);

        log_debug("Run %s of %s for uid %u ended: %s.", record->id, run->skill_name,
                  (unsigned) record->owner,
                  record->state == RUN_FINISHED ? strna(record->status) : "interrupted");
        /* What the journal takes from the result was kept as it was stored: not read again. */
        journal_run_finished(&(JournalRun) {
                .id = record->id,
                .skill_name = record->skill_name,
                .skill_hash = record->skill_hash,
                .owner = record->owner,
                .status = record->state == RUN_FINISHED ? record->status : "interrupted",
                .exit_code = record->exit_code,
                .signal = record->state == RUN_FINISHED ? record->signal : 0,
                .reason = record->state == RUN_INTERRUPTED ? record->reason : NULL,
                .refused = record->state == RUN_FINISHED ? run->refused : NULL,
        });

        /* A session's idle TTL counts from the end of its last run. */
        if (run->session_id && m->sessions) {
                _cleanup_(session_freep) Session *s = NULL;

                if (session_load(m->sessions, run->session_id, &s) >= 0)
                        (void) session_touch(m->sessions, s, realtime_usec());
        }

        run_free(run);

        if (!m->runs && !m->recording)
                skills_purge(&m->skill_dirs, false);
        manager_dispatch_queue(m);

        /* Retention: records beyond the policy's caps go, oldest first. */
        if (!m->policy)
                return;
        manager_session_gc(m);
        r = store_gc(m->store, &m->policy->retention, 0, &removed);
        if (r < 0)
                log_warning_errno(r, "Failed to apply the retention policy: %m");
        else if (removed)
                log_info("Removed %zu old runs by the retention policy.", strv_length(removed));
}

int manager_cancel_run(Manager *m, StoreRun *record) {
        _cleanup_free_ char *result = NULL, *error = NULL;
        Run *run;
        int r;

        run = manager_find_active(m, record->id);
        if (!run)
                return -EALREADY;

        if (run->worker > 0) {
                /* The engine kills the run and reports it canceled; the worker's end does the rest. */
                if (!run->cancel_requested && write(run->cancel_fd, "c", 1) < 0 && errno != EAGAIN)
                        return -errno;
                run->cancel_requested = true;
                return 0;
        }

        /* Still queued: it never ran, and its result says so. */
        r = stub_result(run, RUN_STATUS_CANCELED, NULL, &result);
        if (r < 0)
                return r;
        r = store_run_finish(m->store, record, result, 0, &error);
        if (r < 0)
                log_warning("Run %s: %s", record->id, strna(error));
        run_finalize(run);
        return 0;
}

int manager_remove_run(Manager *m, StoreRun *record) {
        if (manager_find_active(m, record->id))
                return -EBUSY;
        return store_run_remove(m->store, record);
}

/* ---- The private socket ---- */

static Connection *connection_free(Connection *c) {
        if (!c)
                return NULL;
        if (c->manager) {
                LIST_REMOVE(c->manager->connections, c);
                c->manager->n_connections--;
                if (c->root_socket)
                        c->manager->n_root_connections--;
        }
        sd_bus_flush_close_unref(c->bus);
        free(c);
        return NULL;
}

static int on_peer_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        connection_free(userdata);
        return 0;
}

static int connection_new(Manager *m, int fd, uid_t uid, bool root_socket) {
        _cleanup_close_ int cfd = fd;
        Connection *c;
        size_t same = 0;
        int r;

        for (Connection *i = m->connections; i; i = i->next)
                if (i->uid == uid)
                        same++;
        if (m->n_connections >= CONNECTIONS_MAX || same >= CONNECTIONS_PER_UID_MAX) {
                log_warning("Refusing a connection of uid %u on the private socket: too many.",
                            (unsigned) uid);
                return -EUSERS;
        }

        c = calloc(1, sizeof(Connection));
        if (!c)
                return -ENOMEM;
        c->uid = uid;
        r = sd_bus_new(&c->bus);
        if (r < 0)
                goto fail;
        /* A server end of a direct connection: EXTERNAL authentication, which hands us the
         * peer's credentials from the kernel (SO_PEERCRED). No anonymous peers. */
        r = sd_bus_set_fd(c->bus, cfd, cfd);
        if (r < 0)
                goto fail;
        TAKE_FD(cfd);
        r = sd_bus_set_server(c->bus, 1, m->server_id);
        if (r < 0)
                goto fail;
        r = sd_bus_set_anonymous(c->bus, 0);
        if (r < 0)
                goto fail;
        r = sd_bus_negotiate_fds(c->bus, 1);
        if (r < 0)
                goto fail;
        r = sd_bus_set_description(c->bus, "peer");
        if (r < 0)
                goto fail;
        r = manager_add_objects(m, c->bus);
        if (r < 0)
                goto fail;
        r = sd_bus_match_signal(c->bus, NULL, NULL, "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_peer_disconnected, c);
        if (r < 0)
                goto fail;
        r = sd_bus_start(c->bus);
        if (r < 0)
                goto fail;
        r = sd_bus_attach_event(c->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                goto fail;

        c->manager = m;
        c->root_socket = root_socket;
        c->serial = ++m->connection_serial;
        LIST_PREPEND(m->connections, c);
        m->n_connections++;
        if (root_socket)
                m->n_root_connections++;
        return 0;

fail:
        log_warning_errno(r, "Failed to set up a connection on the private socket: %m");
        connection_free(c);
        return r;
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        uid_t uid;
        int cfd, r;

        r = socket_accept_peer(fd, &cfd, &uid);
        if (r < 0)
                log_warning_errno(r, "Failed to accept a connection on the private socket: %m");
        if (r <= 0)
                return 0;
        (void) connection_new(m, cfd, uid, false);
        return 0;
}

/* Takes what waits on the root socket; only root's (the mode already keeps others out). */
static void root_socket_take(Manager *m) {
        for (;;) {
                uid_t uid;
                int cfd, r;

                r = socket_accept_peer(m->root_fd, &cfd, &uid);
                if (r < 0)
                        log_warning_errno(r, "Failed to accept a connection on %s: %m", m->root_socket_path);
                if (r <= 0)
                        return;
                if (uid != 0) {
                        log_warning("Refusing a connection of uid %u on %s: it is root's.", (unsigned) uid,
                                    m->root_socket_path);
                        safe_close(cfd);
                        continue;
                }
                (void) connection_new(m, cfd, uid, true);
        }
}

static int on_root_socket(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        root_socket_take(userdata);
        return 0;
}

static void root_socket_open(Manager *m) {
        int r;

        if (m->root_fd >= 0 || m->stopping)
                return;
        r = root_socket_listen(m->root_socket_path, &m->root_fd);
        if (r < 0) {
                /* Root's clients go through the bus then, as everyone's do. */
                log_warning_errno(r, "Failed to listen on %s: %m", m->root_socket_path);
                return;
        }
        r = sd_event_add_io(m->event, &m->root_source, m->root_fd, EPOLLIN, on_root_socket, m);
        if (r < 0) {
                log_warning_errno(r, "Failed to watch %s: %m", m->root_socket_path);
                (void) unlink(m->root_socket_path);
                m->root_fd = safe_close(m->root_fd);
        }
}

/* Gone from the file system first, so nobody new comes; then, with take_waiting, what connected
 * before is taken, each of those holding the service until it leaves (the idle exit), or else
 * refused with the socket (the service is stopping). */
static void root_socket_close(Manager *m, bool take_waiting) {
        if (m->root_fd < 0)
                return;
        (void) unlink(m->root_socket_path);
        if (take_waiting)
                root_socket_take(m);
        m->root_source = sd_event_source_disable_unref(m->root_source);
        m->root_fd = safe_close(m->root_fd);
}

Connection *manager_connection_of(Manager *m, sd_bus *bus) {
        for (Connection *c = m->connections; c; c = c->next)
                if (c->bus == bus)
                        return c;
        return NULL;
}

/* ---- Lifetime ---- */

int manager_new(const ManagerOptions *o, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->options = *o;
        m->listen_fd = -EBADF;
        m->root_fd = -EBADF;
        m->idle_timeout_usec = SKILLD_IDLE_TIMEOUT_DEFAULT_USEC;
        /* systemd tells us where StateDirectory= is; that wins over the build's default, so
         * the store is where the unit made it writable whatever the installation prefix. */
        m->state_dir = strdup(o->state_dir ?: secure_getenv("STATE_DIRECTORY") ?: STORE_DEFAULT_ROOT);
        m->runtime_dir = strdup(o->runtime_dir ?: SKILLD_RUNTIME_DIR);
        if (!m->state_dir || !m->runtime_dir)
                return -ENOMEM;
        m->root_socket_path = strjoin_path(m->runtime_dir, ROOT_SOCKET_NAME);
        if (!m->root_socket_path)
                return -ENOMEM;
        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        r = sd_id128_randomize(&m->server_id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        m->stopping = true;
        while (m->runs)
                run_free(m->runs);
        /* Their records are done with before the runs go: their callbacks are never called. */
        store_free(TAKE_PTR(m->store));
        while (m->recording)
                run_free(m->recording);
        sd_event_source_disable_unref(m->store_created_source);
        while (m->pending)
                pending_free(m->pending);
        pending_forget_inspected(m);
        /* Unlinked before the connections go: nobody may connect to a service on its way out. */
        root_socket_close(m, false);
        while (m->connections)
                connection_free(m->connections);
        sd_event_source_disable_unref(m->listen_source);
        sd_event_source_disable_unref(m->dispatch_source);
        sd_event_source_disable_unref(m->spare_uid_source);
        manager_drop_spare_uids(m);
        scope_spare_free(m->scope_spare);
        sd_event_source_disable_unref(m->scope_spare_source);
        safe_close(m->listen_fd);
        polkit_registry_free(m->polkit);
        sd_bus_slot_unref(m->name_slot);
        peer_names_free(m->peers);
        peer_names_free(m->polkit_callers);
        caller_uids_free(m->caller_uids);
        bus_caller_cache_flush(m->bus);
        sd_bus_flush_close_unref(m->bus);
        sd_bus_flush_close_unref(m->systemd_bus);
        sd_event_unref(m->event);
        policy_free(m->policy);
        free(m->policy_error);
        store_free(m->store);
        session_store_free(m->sessions);
        uid_allocator_free(m->uids);
        skill_dirs_done(&m->skill_dirs);
        free(m->work_dir);
        free(m->systemd_address);
        free(m->state_dir);
        free(m->runtime_dir);
        free(m->root_socket_path);
        free(m);
        return NULL;
}

static int on_name_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        m->name_slot = sd_bus_slot_unref(m->name_slot);
        if (e) {
                /* Someone else has it (another instance): nothing for us to do. */
                log_error("Failed to acquire the bus name %s: %s", SKILLD_BUS_NAME, e->message ?: e->name);
                return sd_event_exit(m->event, -sd_bus_error_get_errno(e) ?: -EEXIST);
        }
        m->name_acquired = true;
        log_debug("Acquired the bus name %s.", SKILLD_BUS_NAME);
        root_socket_open(m);
        return 0;
}

static int request_name(Manager *m) {
        m->name_slot = sd_bus_slot_unref(m->name_slot);
        return sd_bus_request_name_async(m->bus, &m->name_slot, SKILLD_BUS_NAME, 0, on_name_acquired, m);
}

static int on_name_released(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;

        m->name_slot = sd_bus_slot_unref(m->name_slot);
        m->releasing_name = false;
        if (manager_is_idle(m)) {
                log_info("Idle, exiting.");
                return sd_event_exit(m->event, 0);
        }
        /* A call came in while we let go of the name: it started something, so serve on. */
        m->name_acquired = false;
        log_debug("Not idle any more, asking for the bus name again.");
        if (request_name(m) < 0)
                return sd_event_exit(m->event, -EIO);
        return 0;
}

/* Stops every run: the service is going down. A worker that managed to store its result leaves a
 * finished run, the others an interrupted one. */
static void manager_stop_runs(Manager *m) {
        m->stopping = true;
        /* Records on their way first: each is answered, queued, and interrupted below. */
        if (m->store)
                store_wait_created(m->store);
        while (m->runs) {
                Run *run = m->runs;

                if (run->worker > 0) {
                        int status = 0;
                        pid_t pid = run->worker;

                        (void) kill(pid, SIGKILL);
                        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                                ;
                        if (WIFSIGNALED(status))
                                run_worker_exited(run, CLD_KILLED, WTERMSIG(status));
                        else
                                run_worker_exited(run, CLD_EXITED, WEXITSTATUS(status));
                } else
                        run_interrupt(run, "the service was stopped before the run started");
        }
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("Received %s, stopping.", strna(sigabbrev_np((int) si->ssi_signo)));
        manager_stop_runs(m);
        return sd_event_exit(m->event, 0);
}

bool manager_is_idle(Manager *m) {
        return !m->runs && !m->recording && m->n_pending == 0 && m->n_builds == 0 &&
                m->n_root_connections == 0 &&
                polkit_registry_pending(m->polkit) == 0 && caller_uids_pending(m->caller_uids) == 0;
}

static int connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (m->options.bus_address) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                r = sd_bus_set_address(bus, m->options.bus_address);
                if (r < 0)
                        return r;
                r = sd_bus_set_bus_client(bus, 1);
                if (r < 0)
                        return r;
                r = sd_bus_negotiate_creds(bus, 1, SD_BUS_CREDS_UID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID);
                if (r < 0)
                        return r;
                r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system_with_description(&bus, "system");
        if (r < 0)
                return r;
        m->bus = TAKE_PTR(bus);
        return 0;
}

/* systemd, for the leftover scopes of a killed predecessor: on the system bus, or its private
 * socket where there is no bus. */
static void stop_leftover_scopes(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (m->bus) {
                r = scope_stop_matching(m->bus, SCOPE_UNIT_PATTERN);
                if (r < 0)
                        log_warning_errno(r, "Failed to look for leftover run scopes: %m");
                return;
        }
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, SYSTEMD_PRIVATE_ADDRESS);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0)
                r = sd_bus_attach_event(bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = scope_stop_matching(bus, SCOPE_UNIT_PATTERN);
        if (r < 0) {
                log_warning_errno(r, "Failed to look for leftover run scopes: %m");
                return;
        }
        m->systemd_bus = TAKE_PTR(bus);
}

static void load_policy(Manager *m) {
        _cleanup_free_ char *error = NULL;
        int r;

        r = policy_load(m->options.policy_path, &m->policy, &error);
        if (r < 0) {
                /* SECURITY: no guessing at what the admin meant: no runs until the policy loads. */
                m->policy_error = strdup_printf("The admin policy does not load, so no skill can run "
                                                "until it is fixed: %s", error ?: strerror(-r));
                log_error("%s", m->policy_error ?: "The admin policy does not load.");
                return;
        }
        if (m->policy->idle_timeout_usec > 0)
                m->idle_timeout_usec = m->policy->idle_timeout_usec;
}

/* Journal entries for the runs a dead predecessor left unfinished, now settled as interrupted. */
static void report_settled(Manager *m, uint64_t now) {
        _cleanup_free_ StoreRun **l = NULL;
        size_t n = 0;

        if (store_list_runs(m->store, UID_INVALID, &l, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                if (l[i]->state == RUN_INTERRUPTED && l[i]->finished_usec == now)
                        journal_run_finished(&(JournalRun) {
                                .id = l[i]->id,
                                .skill_name = l[i]->skill_name,
                                .skill_hash = l[i]->skill_hash,
                                .owner = l[i]->owner,
                                .status = "interrupted",
                                .exit_code = -1,
                                .reason = l[i]->reason,
                        });
}

static int setup_store(Manager *m) {
        _cleanup_free_ char *lock = NULL, *installed = NULL;
        StoreLoadStats stats = {};
        uint64_t now = realtime_usec();
        int r;

        r = mkdir_p_at(AT_FDCWD, m->state_dir, 0700);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", m->state_dir);
        r = store_open(m->state_dir, &m->store);
        if (r < 0)
                return log_error_errno(r, "Failed to open the results store in %s: %m", m->state_dir);
        r = sd_event_add_io(m->event, &m->store_created_source, store_created_fd(m->store), EPOLLIN,
                            on_store_created, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the results store: %m");
        (void) sd_event_source_set_description(m->store_created_source, "store-created");
        r = store_load(m->store, now, &stats);
        if (r < 0)
                log_warning_errno(r, "Some runs in the store could not be read: %m");
        if (stats.interrupted > 0 || stats.repaired > 0 || stats.quarantined > 0)
                log_notice("Results store: %u runs, %u left unfinished by an earlier instance (now "
                           "interrupted), %u finished ones settled, %u unreadable ones quarantined.",
                           stats.loaded, stats.interrupted, stats.repaired, stats.quarantined);
        if (stats.migrated > 0)
                log_info("Results store: %u runs brought up to record format %u.", stats.migrated,
                         STORE_FORMAT_VERSION);
        if (stats.newer > 0)
                log_warning("Results store: %u runs of a record format newer than %u (a later skilld's) "
                            "left as they are and not loaded.", stats.newer, STORE_FORMAT_VERSION);
        report_settled(m, now);

        /* Sessions: kept on disk, they outlast us; the expired ones go now. */
        {
                _cleanup_free_ char *sessions = strjoin_path(m->state_dir, "sessions"), *why = NULL;

                if (!sessions)
                        return log_oom();
                r = session_store_open(sessions, &m->sessions, &why);
                if (r < 0)
                        log_warning("Sessions are not available: %s", strna(why));
                manager_session_gc(m);
        }
        if (m->policy) {
                r = store_gc(m->store, &m->policy->retention, 0, NULL);
                if (r < 0)
                        log_warning_errno(r, "Failed to apply the retention policy: %m");
        }

        /* Unpacked archives of runs that are over, whatever happened to them. */
        m->work_dir = strjoin_path(m->state_dir, "work");
        if (!m->work_dir)
                return log_oom();
        (void) rm_rf_at(AT_FDCWD, m->work_dir);
        if (mkdir(m->work_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "Failed to create %s: %m", m->work_dir);

        installed = strjoin_path(m->state_dir, "skills");
        if (!installed)
                return log_oom();
        r = skill_dirs_init(&m->skill_dirs, NULL, installed, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the skill directories: %m");
        skills_purge(&m->skill_dirs, true);

        r = mkdir_p_at(AT_FDCWD, m->runtime_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", m->runtime_dir);
        /* The seccomp programs' cache lives there too: the workers read it (seccomp-cache.c). */
        if (sandbox_seccomp_cache_set_runtime_dir(m->runtime_dir) < 0)
                return log_oom();
        if (m->policy) {
                lock = strjoin_path(m->runtime_dir, "uids.lock");
                if (!lock)
                        return log_oom();
                r = uid_allocator_new(lock, m->policy->uid_first, m->policy->uid_count, &m->uids);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the run uid range: %m");
        }
        return 0;
}

static int setup_listen(Manager *m) {
        int n, r;

        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "Failed to read the sockets passed by systemd: %m");
        if (n == 0)
                return 0;
        if (n > 1)
                log_warning("%d sockets passed, only the first is used.", n);
        r = sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0);
        if (r <= 0)
                return log_error_errno(r < 0 ? r : SYNTHETIC_ERRNO(EINVAL),
                                       "The socket passed is not a listening AF_UNIX stream socket.");
        m->listen_fd = SD_LISTEN_FDS_START;
        r = sd_event_add_io(m->event, &m->listen_source, m->listen_fd, EPOLLIN, on_listen, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the private socket: %m");
        log_debug("Serving the private socket.");
        return 0;
}

int manager_startup(Manager *m) {
        int r;

        /* 1. Policy and store: what is allowed, what happened before. */
        load_policy(m);
        r = setup_store(m);
        if (r < 0)
                return r;

        /* 2. Signals (sd-event wants them blocked; main() did that). */
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up signal handling: %m");

        /* 3. The buses: the system bus unless only the private socket reaches us. */
        r = setup_listen(m);
        if (r < 0)
                return r;
        r = connect_bus(m);
        if (r < 0) {
                if (m->listen_fd < 0)
                        return log_error_errno(r, "Failed to connect to the bus: %m");
                log_full_errno(LOG_NOTICE, r, "No system bus (%m); serving the private socket only.");
        }
        /* The names told of runs, and polkit's held callers (polkit.h). */
        if (m->bus) {
                r = peer_names_new(m->bus, &m->peers);
                if (r >= 0)
                        r = peer_names_new(m->bus, &m->polkit_callers);
                if (r < 0)
                        return log_oom();
                r = caller_uids_new(m->bus, &m->caller_uids);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch for new callers on the bus: %m");
        }
        r = polkit_registry_new(m->bus, m->polkit_callers, &m->polkit);
        if (r < 0)
                return log_oom();

        /* 4. Runs go into systemd scopes where systemd is there and we may ask it. Elsewhere
         *    (tests without root) the engine picks its own limit backend. */
        m->use_scopes = geteuid() == 0 && sd_booted() > 0;
        /* An instance on a bus of its own (tests) must not touch the system service's scopes. */
        if (m->use_scopes && !m->options.bus_address)
                stop_leftover_scopes(m);
        else
                log_notice("Not running under systemd as root: runs use the sandbox engine's own limits.");

        if (m->bus) {
                r = manager_add_objects(m, m->bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to export the objects: %m");
                r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
                if (r < 0)
                        return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
                /* A bus that goes away (dbus restarting) ends us; activation brings us back. */
                (void) sd_bus_set_exit_on_disconnect(m->bus, true);
                r = request_name(m);
                if (r < 0)
                        return log_error_errno(r, "Failed to request the bus name: %m");
        }

        (void) sd_notifyf(false, "READY=1\nSTATUS=%s",
                          m->policy ? "Serving." : "Serving, but the policy is invalid.");
        return 0;
}

int manager_loop(Manager *m) {
        int r;

        for (;;) {
                bool idle;

                if (sd_event_get_state(m->event) == SD_EVENT_FINISHED)
                        break;

                idle = !m->options.no_idle_exit && !m->releasing_name && manager_is_idle(m);
                if (manager_is_idle(m) && !m->trimmed) {
                        uint64_t now, due;

                        /* Settled after a burst of work (runs, a long listing): hand the heap's
                         * free pages back, and end the user database's helper (uid-alloc.c),
                         * once the service has been idle for a moment. Counted from when it
                         * became idle, not from the last event: the bus's signals about other
                         * peers wake the loop without bringing it work, and on a busy system
                         * they never stop for a whole second. */
                        r = sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                        if (r < 0)
                                return log_error_errno(r, "Failed to read the event loop's clock: %m");
                        if (m->idle_since_usec == 0)
                                m->idle_since_usec = now;
                        due = m->idle_since_usec + MIN(MANAGER_TRIM_DELAY_USEC, m->idle_timeout_usec);
                        if (now >= due) {
                                uid_allocator_stop_lookups(m->uids);
                                (void) malloc_trim(0);
                                m->trimmed = true;
                                m->idle_since_usec = 0;
                                continue;
                        }
                        r = sd_event_run(m->event, due - now);
                        if (r < 0)
                                return log_error_errno(r, "Failed to run the event loop: %m");
                        if (!manager_is_idle(m))
                                m->idle_since_usec = 0;
                        continue;
                }
                r = sd_event_run(m->event, idle ? m->idle_timeout_usec : UINT64_MAX);
                if (r > 0)
                        m->trimmed = false;
                if (r < 0)
                        return log_error_errno(r, "Failed to run the event loop: %m");
                if (sd_event_get_state(m->event) == SD_EVENT_FINISHED)
                        break;
                /* Nothing at all happened for the whole timeout. */
                if (r == 0 && idle && manager_is_idle(m)) {
                        /* Root's clients that connected meanwhile are served first. */
                        root_socket_close(m, true);
                        if (!manager_is_idle(m)) {
                                root_socket_open(m);
                                continue;
                        }
                        if (m->bus && m->name_acquired) {
                                /* Give up the name first: calls sent meanwhile reach us, and anything
                                 * later starts a new instance. */
                                m->releasing_name = true;
                                r = sd_bus_release_name_async(m->bus, &m->name_slot, SKILLD_BUS_NAME,
                                                              on_name_released, m);
                                if (r < 0)
                                        return log_error_errno(r, "Failed to release the bus name: %m");
                        } else {
                                log_info("Idle, exiting.");
                                break;
                        }
                }
        }

        /* The next start reads the final runs from the store's index, not every record. */
        if (m->store) {
                int k = store_save_index(m->store);
                if (k < 0)
                        log_debug_errno(k, "Failed to write the store's index, leaving it for the next start: %m");
        }

        r = 0;
        (void) sd_event_get_exit_code(m->event, &r);
        return r;
}
