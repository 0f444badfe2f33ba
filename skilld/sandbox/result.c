/* The result of a run and its JSON form (result.json, and the daemon's Result property). The
 * JSON is the stable interface: snake_case keys, sizes in bytes, times in microseconds plus an
 * ISO 8601 UTC string for people, null for what is unknown rather than a made-up zero. */
#include <inttypes.h>
#include <signal.h>
#include <time.h>

#include "json-exact.h"
#include "sandbox-internal.h"
#include "string-table.h"

static const char *const status_table[_RUN_STATUS_MAX] = {
        [RUN_STATUS_SUCCEEDED]    = "succeeded",
        [RUN_STATUS_FAILED]       = "failed",
        [RUN_STATUS_TIMEOUT]      = "timeout",
        [RUN_STATUS_OOM]          = "oom",
        [RUN_STATUS_TASKS]        = "tasks",
        [RUN_STATUS_SIGNAL]       = "signal",
        [RUN_STATUS_SECCOMP]      = "seccomp",
        [RUN_STATUS_OUTPUT_LIMIT] = "output-limit",
        [RUN_STATUS_ERROR]        = "error",
        [RUN_STATUS_CANCELED]     = "canceled",
        [RUN_STATUS_INTERRUPTED]  = "interrupted",
        [RUN_STATUS_QUEUED]       = "queued",
        [RUN_STATUS_RUNNING]      = "running",
        [RUN_STATUS_ENVIRONMENT]  = "environment",
};

DEFINE_STRING_TABLE_LOOKUP(run_status, RunStatus, status_table);

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

uint64_t timeval_usec(const struct timeval *tv) {
        return (uint64_t) tv->tv_sec * 1000000ULL + (uint64_t) tv->tv_usec;
}

void run_result_add_skipped(RunResult *r, const char *path, const char *reason) {
        RunSkipped *s;

        /* Best effort: the list is a report, losing an entry to ENOMEM loses no data. */
        s = reallocarray(r->skipped, r->n_skipped + 1, sizeof(RunSkipped));
        if (!s)
                return;
        r->skipped = s;
        s[r->n_skipped].path = strdup(path);
        s[r->n_skipped].reason = strdup(reason);
        if (!s[r->n_skipped].path || !s[r->n_skipped].reason) {
                free(s[r->n_skipped].path);
                free(s[r->n_skipped].reason);
                return;
        }
        r->n_skipped++;
}

void run_refused_free_many(RunRefused *l, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(l[i].syscall);
                free(l[i].arg);
        }
        free(l);
}

RunResult *run_result_free(RunResult *r) {
        if (!r)
                return NULL;
        free(r->run_id);
        free(r->skill_name);
        free(r->skill_hash);
        free(r->script);
        free(r->cwd);
        free(r->interpreter);
        strv_free(r->argv);
        free(r->error);
        cJSON_Delete(r->output);
        free(r->output_error);
        free(r->stdout_stream.data);
        free(r->stderr_stream.data);
        for (size_t i = 0; i < r->n_artifacts; i++)
                free(r->artifacts[i].path);
        free(r->artifacts);
        for (size_t i = 0; i < r->n_skipped; i++) {
                free(r->skipped[i].path);
                free(r->skipped[i].reason);
        }
        free(r->skipped);
        run_refused_free_many(r->refused, r->n_refused);
        free(r->output_dir);
        free(r->store_error);
        free(r);
        return NULL;
}

int run_result_exit_code(const RunResult *r) {
        switch (r->status) {
        case RUN_STATUS_SUCCEEDED:
                return 0;
        case RUN_STATUS_TIMEOUT:
                return 124;
        case RUN_STATUS_OOM:
                return 128 + SIGKILL;
        case RUN_STATUS_ERROR:
                if (r->exec_failed)
                        return r->error_errno == ENOENT ? 127 : 126;
                return 125;
        case RUN_STATUS_CANCELED:
                return 128 + SIGINT;
        case RUN_STATUS_ENVIRONMENT:
                return RUN_EXIT_ENVIRONMENT;
        case RUN_STATUS_FAILED:
        case RUN_STATUS_TASKS:
        case RUN_STATUS_SIGNAL:
        case RUN_STATUS_SECCOMP:
        case RUN_STATUS_OUTPUT_LIMIT:
        case RUN_STATUS_INTERRUPTED:
        case RUN_STATUS_QUEUED:
        case RUN_STATUS_RUNNING:
        case _RUN_STATUS_MAX:
        case _RUN_STATUS_INVALID:
        default:
                if (r->signal > 0)
                        return 128 + r->signal;
                if (r->exit_code >= 0)
                        return r->exit_code == 0 ? 1 : r->exit_code; /* never "success" here */
                return 125;
        }
}

static cJSON *json_u64(uint64_t v) {
        if (v == RUN_USAGE_UNKNOWN)
                return cJSON_CreateNull();
        return json_create_uint64(v);
}

static cJSON *json_string_or_null(const char *s) {
        return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *json_time(uint64_t usec) {
        char buf[UTC_TIMESTAMP_MAX];

        if (usec == 0 || format_utc_timestamp(usec, buf) < 0)
                return cJSON_CreateNull();
        return cJSON_CreateString(buf);
}

/* Stream text goes into the JSON only while it is small and valid UTF-8; stdout.log and
 * stderr.log next to result.json always hold all that was kept. */
#define STREAM_INLINE_MAX (64U * 1024U)

static cJSON *stream_to_json(const RunStream *s, const char *log_name) {
        cJSON *o = cJSON_CreateObject();
        bool inline_text = s->size <= STREAM_INLINE_MAX && utf8_is_valid(strempty(s->data), s->size) &&
                           !memchr(strempty(s->data), '\0', s->size);

        if (!o)
                return NULL;
        if (json_attach(o, "bytes", json_u64(s->total)) < 0 ||
            json_attach(o, "kept", json_u64(s->size)) < 0 ||
            json_attach(o, "truncated", cJSON_CreateBool(s->truncated)) < 0 ||
            json_attach(o, "path", json_string_or_null(log_name)) < 0 ||
            json_attach(o, "text",
                        inline_text ? cJSON_CreateString(strempty(s->data)) : cJSON_CreateNull()) < 0)
                return cJSON_Delete(o), NULL;
        return o;
}

/* SandboxLimit bits as an array of their names. */
static cJSON *limit_bits_to_json(unsigned bits) {
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {
                { SANDBOX_LIMIT_MEMORY, "memory" }, { SANDBOX_LIMIT_TASKS, "tasks" },
                { SANDBOX_LIMIT_CPU, "cpu" }, { SANDBOX_LIMIT_TIMEOUT, "timeout" },
                { SANDBOX_LIMIT_OUTPUT, "output" }, { SANDBOX_LIMIT_TMPFS, "tmpfs" },
        };
        cJSON *arr = cJSON_CreateArray();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if ((bits & names[i].bit) && json_attach(arr, NULL, cJSON_CreateString(names[i].name)) < 0)
                        return cJSON_Delete(arr), NULL;
        return arr;
}

static cJSON *limits_to_json(const RunResult *r) {
        const SandboxLimits *l = &r->limits;
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        if (json_attach(o, "backend", json_string_or_null(r->backend)) < 0 ||
            json_attach(o, "memory_max", json_u64(l->memory_max)) < 0 ||
            json_attach(o, "tasks_max", json_u64(l->tasks_max)) < 0 ||
            json_attach(o, "cpu_percent", json_u64(l->cpu_percent)) < 0 ||
            json_attach(o, "timeout_usec", json_u64(l->timeout_usec)) < 0 ||
            json_attach(o, "stdout_max", json_u64(l->stdout_max)) < 0 ||
            json_attach(o, "stderr_max", json_u64(l->stderr_max)) < 0 ||
            json_attach(o, "out_max", json_u64(l->out_max)) < 0 ||
            json_attach(o, "tmpfs_size", json_u64(l->tmpfs_size)) < 0 ||
            json_attach(o, "artifacts_max", json_u64(l->artifacts_max)) < 0 ||
            json_attach(o, "enforced", limit_bits_to_json(r->limits_enforced)) < 0 ||
            json_attach(o, "from_skill", limit_bits_to_json(r->limits_from_skill)) < 0)
                return cJSON_Delete(o), NULL;
        return o;
}

static cJSON *artifacts_to_json(const RunResult *r) {
        cJSON *arr = cJSON_CreateArray();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < r->n_artifacts; i++) {
                const RunArtifact *a = &r->artifacts[i];
                cJSON *o = cJSON_CreateObject();

                if (json_attach(arr, NULL, o) < 0 ||
                    json_attach(o, "path", cJSON_CreateString(a->path)) < 0 ||
                    json_attach(o, "type", cJSON_CreateString(a->directory ? "directory" : "file")) < 0 ||
                    (!a->directory && json_attach(o, "size", json_u64(a->size)) < 0) ||
                    (!a->directory && json_attach(o, "sha256", cJSON_CreateString(a->sha256)) < 0))
                        return cJSON_Delete(arr), NULL;
        }
        return arr;
}

static cJSON *skipped_to_json(const RunResult *r) {
        cJSON *arr = cJSON_CreateArray();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < r->n_skipped; i++) {
                cJSON *o = cJSON_CreateObject();

                if (json_attach(arr, NULL, o) < 0 ||
                    json_attach(o, "path", cJSON_CreateString(r->skipped[i].path)) < 0 ||
                    json_attach(o, "reason", cJSON_CreateString(r->skipped[i].reason)) < 0)
                        return cJSON_Delete(arr), NULL;
        }
        return arr;
}

/* null when the run had no filter that reports what it refuses, else every refused call. */
static cJSON *refused_to_json(const RunResult *r) {
        cJSON *arr;

        if (!r->refused_known)
                return cJSON_CreateNull();
        arr = cJSON_CreateArray();
        if (!arr)
                return NULL;
        for (size_t i = 0; i < r->n_refused; i++) {
                const RunRefused *f = &r->refused[i];
                cJSON *o = cJSON_CreateObject();

                if (json_attach(arr, NULL, o) < 0 ||
                    json_attach(o, "syscall", cJSON_CreateString(f->syscall)) < 0 ||
                    json_attach(o, "count", json_u64(f->count)) < 0 ||
                    json_attach(o, "arg", json_string_or_null(f->arg)) < 0)
                        return cJSON_Delete(arr), NULL;
        }
        return arr;
}

int run_result_refused_from_json(RunResult *r, const cJSON *result) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(result, "refused_syscalls"), *a;
        int n = cJSON_GetArraySize(arr);

        if (!cJSON_IsArray(arr))
                return 0;
        r->refused_known = true;
        r->refused_truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "refused_syscalls_truncated"));
        if (n == 0)
                return 0;
        r->refused = calloc(n, sizeof(RunRefused));
        if (!r->refused)
                return -ENOMEM;
        cJSON_ArrayForEach(a, arr) {
                RunRefused *t = &r->refused[r->n_refused];
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "syscall");
                const char *name = cJSON_IsString(v) ? v->valuestring : NULL, *arg;

                v = cJSON_GetObjectItemCaseSensitive(a, "arg");
                arg = cJSON_IsString(v) ? v->valuestring : NULL;

                if (!name)
                        continue;
                t->syscall = strdup(name);
                t->arg = arg ? strdup(arg) : NULL;
                if (!t->syscall || (arg && !t->arg)) {
                        free(t->syscall);
                        free(t->arg);
                        return -ENOMEM;
                }
                v = cJSON_GetObjectItemCaseSensitive(a, "count");
                t->count = cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e18
                                   ? (uint64_t) v->valuedouble : 1;
                r->n_refused++;
        }
        return 0;
}

int run_result_refused_string(const RunResult *r, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_refused; i++) {
                const RunRefused *c = &r->refused[i];
                /* SECURITY: from a result JSON, like the error: escaped. */
                _cleanup_free_ char *name = cescape(strempty(c->syscall)),
                                    *arg = c->arg ? cescape(c->arg) : NULL;

                if (!name || (c->arg && !arg)) {
                        (void) fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, "%s%s", i > 0 ? ", " : "", name);
                if (arg)
                        fprintf(f, "(%s)", arg);
                if (c->count > 1)
                        fprintf(f, " x%" PRIu64, c->count);
        }
        if (r->refused_truncated)
                fprintf(f, "%sand more", r->n_refused > 0 ? ", " : "");
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

const char *sandbox_layer_to_string(SandboxLayer l) {
        switch (l) {
        case SANDBOX_LAYER_CGROUP:
                return "cgroup";
        case SANDBOX_LAYER_SECCOMP:
                return "seccomp";
        case SANDBOX_LAYER_NETNS:
                return "netns";
        case SANDBOX_LAYER_IPCNS:
                return "ipcns";
        case SANDBOX_LAYER_UTSNS:
                return "utsns";
        case SANDBOX_LAYER_CGROUPNS:
                return "cgroupns";
        case _SANDBOX_LAYER_ALL:
        default:
                return NULL;
        }
}

int run_result_new_unrun(const char *run_id, const char *skill_name, const char *skill_hash,
                         const char *script, const SandboxLimits *limits, RunStatus status,
                         const char *message, RunResult **ret) {
        _cleanup_(run_result_freep) RunResult *res = calloc(1, sizeof(RunResult));

        if (!res)
                return -ENOMEM;
        res->run_id = strdup(run_id);
        res->skill_name = strdup(strempty(skill_name));
        res->skill_hash = strdup(strempty(skill_hash));
        res->script = strdup(strempty(script));
        if (!res->run_id || !res->skill_name || !res->skill_hash || !res->script)
                return -ENOMEM;
        if (message && !(res->error = strdup(message)))
                return -ENOMEM;
        res->status = status;
        res->exit_code = -1;
        res->uid = (uid_t) -1;
        res->limits = *limits;
        res->usage = (RunUsage) {
                .wall_usec = RUN_USAGE_UNKNOWN,
                .user_usec = RUN_USAGE_UNKNOWN,
                .system_usec = RUN_USAGE_UNKNOWN,
                .memory_peak = RUN_USAGE_UNKNOWN,
                .tasks_peak = RUN_USAGE_UNKNOWN,
        };
        *ret = TAKE_PTR(res);
        return 0;
}

int sandbox_layer_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (unsigned bit = 1; bit < _SANDBOX_LAYER_ALL; bit <<= 1)
                if (streq(s, sandbox_layer_to_string(bit)))
                        return (int) bit;
        return -EINVAL;
}

static cJSON *layers_to_json(unsigned layers) {
        cJSON *arr = cJSON_CreateArray();

        if (!arr)
                return NULL;
        for (unsigned bit = 1; bit & _SANDBOX_LAYER_ALL; bit <<= 1)
                if ((layers & bit) &&
                    json_attach(arr, NULL, cJSON_CreateString(sandbox_layer_to_string(bit))) < 0)
                        return cJSON_Delete(arr), NULL;
        return arr;
}

int run_result_to_json(const RunResult *r, cJSON **ret) {
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        cJSON *usage;

        o = cJSON_CreateObject();
        if (!o)
                return -ENOMEM;

        if (json_attach(o, "run_id", json_string_or_null(r->run_id)) < 0 ||
            json_attach(o, "skill", json_string_or_null(r->skill_name)) < 0 ||
            json_attach(o, "skill_hash", json_string_or_null(r->skill_hash)) < 0 ||
            json_attach(o, "script", json_string_or_null(r->script)) < 0 ||
            json_attach(o, "interpreter", json_string_or_null(r->interpreter)) < 0 ||
            json_attach(o, "command", cJSON_CreateBool(r->command)) < 0 ||
            json_attach(o, "cwd", json_string_or_null(r->cwd)) < 0 ||
            json_attach(o, "argv", r->argv ? cJSON_CreateStringArray((const char * const *) r->argv,
                                                             (int) strv_length(r->argv))
                                   : cJSON_CreateArray()) < 0 ||
            json_attach(o, "status", json_string_or_null(run_status_to_string(r->status))) < 0 ||
            json_attach(o, "exit_code",
                r->exit_code >= 0 ? cJSON_CreateNumber(r->exit_code) : cJSON_CreateNull()) < 0 ||
            json_attach(o, "signal",
                        r->signal > 0 ? cJSON_CreateNumber(r->signal) : cJSON_CreateNull()) < 0 ||
            json_attach(o, "signal_name", r->signal > 0 ? json_string_or_null(sigabbrev_np(r->signal))
                                                : cJSON_CreateNull()) < 0 ||
            json_attach(o, "error", json_string_or_null(r->error)) < 0 ||
            /* What run_result_exit_code() needs to tell 126 and 127 from 125, for a client that
             * only has this JSON (skillctl through the service). */
            json_attach(o, "error_errno", r->error_errno > 0 ? cJSON_CreateNumber(r->error_errno)
                                                     : cJSON_CreateNull()) < 0 ||
            json_attach(o, "exec_failed", cJSON_CreateBool(r->exec_failed)) < 0 ||
            json_attach(o, "output", r->output ? cJSON_Duplicate(r->output, true) : cJSON_CreateNull()) < 0 ||
            json_attach(o, "output_source", json_string_or_null(r->output_source)) < 0 ||
            json_attach(o, "output_error", json_string_or_null(r->output_error)) < 0 ||
            json_attach(o, "stdout",
                        stream_to_json(&r->stdout_stream, r->output_dir ? "stdout.log" : NULL)) < 0 ||
            json_attach(o, "stderr",
                        stream_to_json(&r->stderr_stream, r->output_dir ? "stderr.log" : NULL)) < 0 ||
            json_attach(o, "artifacts", artifacts_to_json(r)) < 0 ||
            json_attach(o, "artifacts_skipped", skipped_to_json(r)) < 0 ||
            json_attach(o, "artifacts_truncated", cJSON_CreateBool(r->artifacts_truncated)) < 0 ||
            json_attach(o, "out_full", cJSON_CreateBool(r->out_full)) < 0 ||
            json_attach(o, "store_error", json_string_or_null(r->store_error)) < 0 ||
            json_attach(o, "usage", usage = cJSON_CreateObject()) < 0 ||
            json_attach(usage, "wall_usec", json_u64(r->usage.wall_usec)) < 0 ||
            json_attach(usage, "user_usec", json_u64(r->usage.user_usec)) < 0 ||
            json_attach(usage, "system_usec", json_u64(r->usage.system_usec)) < 0 ||
            json_attach(usage, "memory_peak", json_u64(r->usage.memory_peak)) < 0 ||
            json_attach(usage, "tasks_peak", json_u64(r->usage.tasks_peak)) < 0 ||
            json_attach(o, "limits", limits_to_json(r)) < 0 ||
            json_attach(o, "layers_missing", layers_to_json(r->layers_missing)) < 0 ||
            json_attach(o, "refused_syscalls", refused_to_json(r)) < 0 ||
            json_attach(o, "refused_syscalls_truncated", cJSON_CreateBool(r->refused_truncated)) < 0 ||
            json_attach(o, "network", cJSON_CreateBool(r->network)) < 0 ||
            json_attach(o, "uid",
                        r->uid != (uid_t) -1 ? cJSON_CreateNumber(r->uid) : cJSON_CreateNull()) < 0 ||
            json_attach(o, "started_at", json_time(r->started_at)) < 0 ||
            json_attach(o, "ended_at", json_time(r->ended_at)) < 0 ||
            json_attach(o, "started_at_usec", json_u64(r->started_at)) < 0 ||
            json_attach(o, "ended_at_usec", json_u64(r->ended_at)) < 0)
                return -ENOMEM;

        *ret = TAKE_PTR(o);
        return 0;
}
