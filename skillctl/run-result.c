/* See run-result.h. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>

#include "json-exact.h"
#include "log.h"
#include "parse-util.h"
#include "run-result.h"

/* The skill's output reached our stdout and stderr as it came: it may have stopped in the middle
 * of a line, or left the terminal drawing concealed or colored text, and so have the summary read
 * as the end of a line of its own making, or not show at all. The summary starts a line of its
 * own, in the terminal's default attributes. */
static void summary_begin(const RunResult *r) {
        const RunStream *streams[] = { &r->stdout_stream, &r->stderr_stream };
        bool partial = false;

        for (size_t i = 0; i < ELEMENTSOF(streams); i++)
                if (streams[i]->data && streams[i]->size > 0 &&
                    streams[i]->data[streams[i]->size - 1] != '\n')
                        partial = true;
        if (isatty(STDERR_FILENO))
                (void) fputs("\033[0m", stderr);
        if (partial)
                (void) fputc('\n', stderr);
}

static uint64_t refused_total(const RunResult *r) {
        uint64_t n = 0;

        for (size_t i = 0; i < r->n_refused; i++)
                n = r->refused[i].count > UINT64_MAX - n ? UINT64_MAX : n + r->refused[i].count;
        return n;
}

void run_summary_print(const RunResult *r, const char *where) {
        char mem[FORMAT_BYTES_MAX];
        const char *status = run_status_to_string(r->status);
        /* SECURITY: the error and the backend name may come from a result JSON (the service's
         * store, a result.json) and an error may quote what a skill chose: escaped, so that they
         * cannot move the cursor or forge a line of the summary. */
        _cleanup_free_ char *error = cescape(strna(r->error)), *backend = cescape(strna(r->backend));

        summary_begin(r);
        if (r->status == RUN_STATUS_ERROR) {
                fprintf(stderr, "skillctl: %s\n", strna(error));
                return;
        }

        fprintf(stderr, "skillctl: %s", strna(status));
        if (r->exit_code >= 0)
                fprintf(stderr, ", exit %d", r->exit_code);
        if (r->signal > 0)
                fprintf(stderr, ", signal %s", strna(sigabbrev_np(r->signal)));
        fprintf(stderr, ", %.2fs", (double) r->usage.wall_usec / 1e6);
        if (r->usage.memory_peak != RUN_USAGE_UNKNOWN)
                fprintf(stderr, ", peak memory %s", format_bytes(mem, sizeof(mem), r->usage.memory_peak));
        if (r->n_refused > 0 || r->refused_truncated)
                fprintf(stderr, ", %" PRIu64 "%s system call%s refused", refused_total(r),
                        r->refused_truncated ? "+" : "", refused_total(r) == 1 && !r->refused_truncated ? "" : "s");
        fprintf(stderr, ", %zu artifact%s in %s (limits: %s)\n", r->n_artifacts,
                r->n_artifacts == 1 ? "" : "s", strna(where), strna(backend));
        if (r->stdout_stream.truncated || r->stderr_stream.truncated)
                fprintf(stderr, "skillctl: output was truncated; the kept part is in %s\n", strna(where));
        if (r->n_skipped > 0)
                fprintf(stderr, "skillctl: %zu entr%s in /out/files skipped (see result.json)\n",
                        r->n_skipped, r->n_skipped == 1 ? "y was" : "ies were");
        if (r->n_refused > 0 || r->refused_truncated) {
                _cleanup_free_ char *list = NULL;

                /* A skill that failed on EPERM or EAFNOSUPPORT is told why. */
                if (run_result_refused_string(r, &list) >= 0)
                        fprintf(stderr, "skillctl: the sandbox refused these system calls: %s "
                                "(see refused_syscalls in result.json)\n", list);
        }
}

static const char *json_string(const cJSON *o, const char *key) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int json_strdup(const cJSON *o, const char *key, char **ret) {
        const char *s = json_string(o, key);

        if (!s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

/* Integers are written exactly (see result.c) and read back as doubles: exact up to 2^53, which
 * covers every size and time a run has. */
static uint64_t json_get_u64(const cJSON *o, const char *key, uint64_t unknown) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
                return unknown;
        if (v->valuedouble >= 18446744073709551615.0)
                return UINT64_MAX;
        return (uint64_t) v->valuedouble;
}

static int json_get_int(const cJSON *o, const char *key, int unknown) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!cJSON_IsNumber(v) || v->valuedouble < INT_MIN || v->valuedouble > INT_MAX)
                return unknown;
        return v->valueint;
}

static void stream_from_json(const cJSON *o, RunStream *ret) {
        if (!cJSON_IsObject(o))
                return;
        ret->total = json_get_u64(o, "bytes", 0);
        ret->size = json_get_u64(o, "kept", 0);
        ret->truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "truncated"));
}

static int artifacts_from_json(const cJSON *arr, RunResult *r) {
        const cJSON *a;
        int n = cJSON_GetArraySize(arr);

        if (!cJSON_IsArray(arr) || n == 0)
                return 0;
        r->artifacts = calloc(n, sizeof(RunArtifact));
        if (!r->artifacts)
                return -ENOMEM;
        cJSON_ArrayForEach(a, arr) {
                RunArtifact *t = &r->artifacts[r->n_artifacts];
                const char *path = json_string(a, "path"), *sha = json_string(a, "sha256");

                if (!path)
                        continue;
                t->path = strdup(path);
                if (!t->path)
                        return -ENOMEM;
                t->directory = streq_ptr(json_string(a, "type"), "directory");
                t->size = json_get_u64(a, "size", 0);
                if (sha && strlen(sha) == 64)
                        memcpy(t->sha256, sha, 65);
                r->n_artifacts++;
        }
        return 0;
}

static int skipped_from_json(const cJSON *arr, RunResult *r) {
        const cJSON *a;
        int n = cJSON_GetArraySize(arr);

        if (!cJSON_IsArray(arr) || n == 0)
                return 0;
        r->skipped = calloc(n, sizeof(RunSkipped));
        if (!r->skipped)
                return -ENOMEM;
        cJSON_ArrayForEach(a, arr) {
                RunSkipped *t = &r->skipped[r->n_skipped];

                t->path = strdup(strempty(json_string(a, "path")));
                t->reason = strdup(strempty(json_string(a, "reason")));
                if (!t->path || !t->reason) {
                        free(t->path);
                        free(t->reason);
                        return -ENOMEM;
                }
                r->n_skipped++;
        }
        return 0;
}

int run_result_from_json(const char *text, cJSON **ret_json, RunResult **ret) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_(run_result_freep) RunResult *r = NULL;
        const cJSON *usage, *limits;
        int errno_value;

        /* The skill's output as it wrote it; the rest is ours and reads well as doubles. */
        j = json_parse_keeping_exact(text, "output");
        if (!cJSON_IsObject(j))
                return -EBADMSG;

        r = calloc(1, sizeof(RunResult));
        if (!r)
                return -ENOMEM;
        r->uid = (uid_t) -1;
        r->status = run_status_from_string(json_string(j, "status"));
        if (r->status < 0)
                return -EBADMSG;

        if (json_strdup(j, "run_id", &r->run_id) < 0 ||
            json_strdup(j, "skill", &r->skill_name) < 0 ||
            json_strdup(j, "skill_hash", &r->skill_hash) < 0 ||
            json_strdup(j, "script", &r->script) < 0 ||
            json_strdup(j, "interpreter", &r->interpreter) < 0 ||
            json_strdup(j, "error", &r->error) < 0 ||
            json_strdup(j, "output_error", &r->output_error) < 0 ||
            json_strdup(j, "store_error", &r->store_error) < 0)
                return -ENOMEM;

        r->exit_code = json_get_int(j, "exit_code", -1);
        r->signal = json_get_int(j, "signal", 0);
        if (r->exit_code < -1 || r->exit_code > 255 || r->signal < 0 || r->signal >= _NSIG)
                return -EBADMSG;
        errno_value = json_get_int(j, "error_errno", 0);
        r->error_errno = errno_value > 0 ? errno_value : 0;
        r->exec_failed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "exec_failed"));

        stream_from_json(cJSON_GetObjectItemCaseSensitive(j, "stdout"), &r->stdout_stream);
        stream_from_json(cJSON_GetObjectItemCaseSensitive(j, "stderr"), &r->stderr_stream);
        if (artifacts_from_json(cJSON_GetObjectItemCaseSensitive(j, "artifacts"), r) < 0 ||
            skipped_from_json(cJSON_GetObjectItemCaseSensitive(j, "artifacts_skipped"), r) < 0 ||
            run_result_refused_from_json(r, j) < 0)
                return -ENOMEM;
        r->artifacts_truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "artifacts_truncated"));
        r->out_full = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "out_full"));

        usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
        r->usage = (RunUsage) {
                .wall_usec = json_get_u64(usage, "wall_usec", 0),
                .user_usec = json_get_u64(usage, "user_usec", RUN_USAGE_UNKNOWN),
                .system_usec = json_get_u64(usage, "system_usec", RUN_USAGE_UNKNOWN),
                .memory_peak = json_get_u64(usage, "memory_peak", RUN_USAGE_UNKNOWN),
                .tasks_peak = json_get_u64(usage, "tasks_peak", RUN_USAGE_UNKNOWN),
        };
        limits = cJSON_GetObjectItemCaseSensitive(j, "limits");
        r->backend = json_string(limits, "backend");
        r->started_at = json_get_u64(j, "started_at_usec", 0);
        r->ended_at = json_get_u64(j, "ended_at_usec", 0);

        *ret_json = TAKE_PTR(j);
        *ret = TAKE_PTR(r);
        return 0;
}
