/* Fuzz target "input-json": the JSON a run takes in and gives back, without running anything. The
 * input (cut at its first NUL, as a D-Bus string or a command line argument would be) is used
 * twice: as the run's --input JSON, and as a result JSON (result.json, the service's Result
 * property) read back by skillctl.
 *
 * Promises checked, input side: what cJSON accepts (the check skillctl, the service and the
 * engine all make) prints and parses back to the same printed text; the skill's environment built with
 * it holds SKILL_INPUT_FILE, holds SANDBOX_INPUT equal to the input exactly when it fits in one
 * environment string, is sorted and names each variable once.
 *
 * Result side: run_result_from_json() accepts a JSON object with a known status or refuses with
 * -EBADMSG; what it accepts is within range (exit code -1..255, a valid signal, artifact hashes
 * of 64 characters or none), survives run_result_to_json() and reading back with the same status,
 * exit status, messages and artifacts, and its summary line is fit for a terminal. No fd leaks. */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>

#include "engine.h"
#include "fuzz.h"
/* Both headers define cJSON_Deletep (skillctl and the engine never meet elsewhere): rename the
 * engine's copy. */
#define cJSON_Deletep sandbox_cJSON_Deletep
#include "sandbox-internal.h"
#undef cJSON_Deletep
#include "run-result.h"


static void check_input(const char *text) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *back = NULL;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *printed = NULL, *again = NULL;
        bool fits, has_input = false, has_file = false;

        j = cJSON_ParseWithOpts(text, NULL, true);
        if (!j)
                return;

        printed = cJSON_PrintUnformatted(j);
        fuzz_assert(printed);
        back = cJSON_ParseWithOpts(printed, NULL, true);
        fuzz_assert(back, "printed input does not parse: %s", printed);
        /* Printing is a fixed point after one round (not cJSON_Compare(): exponential in the depth
         * of nested objects). The skill gets the caller's text, never this printed form. */
        again = cJSON_PrintUnformatted(back);
        fuzz_assert(again && streq(again, printed), "input changed in a round trip: %s", printed);

        fuzz_assert(sandbox_env_build(NULL, NULL, text, &env) >= 0);
        fits = strlen("SANDBOX_INPUT=") + strlen(text) + 1 <= SANDBOX_INPUT_ENV_MAX;
        for (size_t i = 0; env && env[i]; i++) {
                const char *eq = strchr(env[i], '=');

                fuzz_assert(eq && eq > env[i], "bad environment entry %s", env[i]);
                if (i > 0) {
                        fuzz_assert(strcmp(env[i - 1], env[i]) <= 0, "environment not sorted");
                        fuzz_assert(strncmp(env[i - 1], env[i], (size_t) (eq - env[i]) + 1) != 0,
                                    "%.*s given twice", (int) (eq - env[i]), env[i]);
                }
                if (startswith(env[i], "SANDBOX_INPUT=")) {
                        fuzz_assert(streq(eq + 1, text), "SANDBOX_INPUT differs from the input");
                        has_input = true;
                }
                if (streq(env[i], "SKILL_INPUT_FILE=" SANDBOX_INPUT_PATH))
                        has_file = true;
        }
        fuzz_assert(has_file, "no SKILL_INPUT_FILE");
        fuzz_assert(has_input == fits, "SANDBOX_INPUT %s", has_input ? "too long" : "missing");
}

/* run_summary_print() writes to stderr: borrow it for a memfd. */
static char *summary_of(const RunResult *r) {
        _cleanup_close_ int fd = memfd_create("summary", MFD_CLOEXEC), saved = -EBADF;
        _cleanup_free_ char *text = NULL;
        size_t size;

        fuzz_assert(fd >= 0);
        fflush(stderr);
        saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        fuzz_assert(saved >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
        run_summary_print(r, "run fuzz");
        fflush(stderr);
        fuzz_assert(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        fuzz_assert(lseek(fd, 0, SEEK_SET) == 0);
        fuzz_assert(read_full_fd(fd, 1024 * 1024, &text, &size) >= 0);
        fuzz_assert(!memchr(text, '\0', size));
        return TAKE_PTR(text);
}

static void check_summary(const RunResult *r) {
        _cleanup_free_ char *text = summary_of(r);
        char *line, *p = text;

        while ((line = strsep(&p, "\n")))
                fuzz_assert(fuzz_text_is_safe(line), "summary line unsafe for a terminal: %s", line);
}

static uint64_t unknown_as_0(uint64_t v) {
        return v == UINT64_MAX ? 0 : v;
}

static void check_result(const char *text) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *j2 = NULL, *out = NULL;
        _cleanup_(run_result_freep) RunResult *r = NULL, *r2 = NULL;
        _cleanup_free_ char *printed = NULL;
        int q;

        q = run_result_from_json(text, &j, &r);
        if (q < 0) {
                fuzz_assert(q == -EBADMSG || q == -ENOMEM, "undocumented code %d", q);
                fuzz_assert(!r && !j, "ret touched on failure");
                return;
        }
        fuzz_assert(r && j && cJSON_IsObject(j));
        fuzz_assert(run_status_to_string(r->status));
        fuzz_assert(r->exit_code >= -1 && r->exit_code <= 255, "exit code %d", r->exit_code);
        fuzz_assert(r->signal >= 0 && r->signal < _NSIG, "signal %d", r->signal);
        fuzz_assert(r->error_errno >= 0);
        for (size_t i = 0; i < r->n_artifacts; i++) {
                size_t n = strlen(r->artifacts[i].sha256);

                fuzz_assert(r->artifacts[i].path && (n == 0 || n == 64), "sha256 of %zu", n);
        }
        (void) run_result_exit_code(r);
        check_summary(r);

        /* The streams come back as counts without their text; to_json() reads the text of what
         * it was told is kept, so only counts of text that is there may go out. */
        r->stdout_stream.size = r->stderr_stream.size = 0;
        fuzz_assert(run_result_to_json(r, &out) >= 0);
        printed = cJSON_PrintUnformatted(out);
        fuzz_assert(printed);
        fuzz_assert(run_result_from_json(printed, &j2, &r2) >= 0, "own JSON refused: %s", printed);

        fuzz_assert(r2->status == r->status && r2->exit_code == r->exit_code && r2->signal == r->signal);
        fuzz_assert(r2->error_errno == r->error_errno && r2->exec_failed == r->exec_failed);
        fuzz_assert(run_result_exit_code(r2) == run_result_exit_code(r));
        fuzz_assert(streq_ptr(r2->run_id, r->run_id) && streq_ptr(r2->skill_name, r->skill_name) &&
                    streq_ptr(r2->skill_hash, r->skill_hash) && streq_ptr(r2->script, r->script) &&
                    streq_ptr(r2->interpreter, r->interpreter) && streq_ptr(r2->error, r->error) &&
                    streq_ptr(r2->output_error, r->output_error) &&
                    streq_ptr(r2->store_error, r->store_error), "a message changed: %s", printed);
        /* UINT64_MAX is written as null ("unknown"), which reads back as 0 for the byte counts
         * and the wall time. */
        fuzz_assert(r2->stdout_stream.total == unknown_as_0(r->stdout_stream.total) &&
                    r2->stderr_stream.total == unknown_as_0(r->stderr_stream.total) &&
                    r2->stdout_stream.truncated == r->stdout_stream.truncated);
        fuzz_assert(r2->artifacts_truncated == r->artifacts_truncated && r2->out_full == r->out_full);
        fuzz_assert(r2->n_artifacts == r->n_artifacts && r2->n_skipped == r->n_skipped);
        for (size_t i = 0; i < r->n_artifacts; i++) {
                const RunArtifact *a = &r->artifacts[i], *b = &r2->artifacts[i];

                fuzz_assert(streq(a->path, b->path) && a->directory == b->directory);
                /* A size past UINT64_MAX reads as unknown, written as null, read back as 0. */
                if (!a->directory)
                        fuzz_assert(unknown_as_0(a->size) == b->size && streq(a->sha256, b->sha256));
        }
        for (size_t i = 0; i < r->n_skipped; i++)
                fuzz_assert(streq(r->skipped[i].path, r2->skipped[i].path) &&
                            streq(r->skipped[i].reason, r2->skipped[i].reason));
        fuzz_assert(r2->usage.user_usec == r->usage.user_usec &&
                    r2->usage.memory_peak == r->usage.memory_peak &&
                    r2->usage.tasks_peak == r->usage.tasks_peak);
        fuzz_assert(r2->usage.wall_usec == unknown_as_0(r->usage.wall_usec));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = strndup((const char *) data, size);
        int fd_before = fuzz_lowest_free_fd();

        fuzz_assert(text);
        check_input(text);
        check_result(text);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
