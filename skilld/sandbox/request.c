/* Checking a run request before anything is created: limits within sane bounds, environment
 * additions that cannot change how interpreters load code or what the sandbox promises, input
 * file names that stay plain names. And building the environment from scratch. */
#include "error.h"
#include "parse-util.h"
#include "sandbox-internal.h"

#define ENV_ENTRIES_MAX 256U
#define ENV_BYTES_MAX (256U * 1024U)

int sandbox_limits_check(const SandboxLimits *l, char **error) {
        char a[FORMAT_BYTES_MAX];

        /* Each lower bound keeps a limit meaningful: tmpfs "size=0" would mean unlimited, and an
         * init plus a shell already take a few tasks. */
        if (l->memory_max < 4ULL * 1024 * 1024)
                return error_setf(error, -EINVAL, "Memory limit %s is below the minimum of 4M",
                                  format_bytes(a, sizeof(a), l->memory_max));
        if (l->tasks_max < 4 || l->tasks_max > 1000000)
                return error_setf(error, -EINVAL, "Tasks limit %" PRIu64 " is outside 4..1000000",
                                  l->tasks_max);
        if (l->cpu_percent < 1 || l->cpu_percent > 100000)
                return error_setf(error, -EINVAL, "CPU limit %u%% is outside 1..100000%%", l->cpu_percent);
        if (l->timeout_usec < 100000ULL || l->timeout_usec > 7ULL * 24 * 3600 * 1000000)
                return error_setf(error, -EINVAL, "Timeout is outside 100ms..7d");
        if (l->stdout_max > 1024ULL * 1024 * 1024 || l->stderr_max > 1024ULL * 1024 * 1024)
                return error_setf(error, -EINVAL, "Output capture caps may not exceed 1G");
        if (l->out_max < 64 * 1024 || l->tmpfs_size < 64 * 1024)
                return error_setf(error, -EINVAL, "The /out and tmpfs sizes must be at least 64K");
        if (l->artifacts_max < 1 || l->artifacts_max > 1000000)
                return error_setf(error, -EINVAL, "The artifact cap %" PRIu64 " is outside 1..1000000",
                                  l->artifacts_max);
        return 0;
}

static bool env_name_valid(const char *name, size_t n) {
        if (n == 0 || n > 255)
                return false;
        if (!(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') ||
                      (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9')))
                        return false;
        return true;
}

/* Names the sandbox owns (PATH, HOME, SKILL_*, SANDBOX_*) and names that change which code an
 * interpreter or the dynamic linker loads. */
static bool env_name_denied(const char *name, size_t n) {
        static const char *const exact[] = {
                "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PATH", "HOME",
        };
        static const char *const prefixes[] = { "LD_", "SKILL_", "SANDBOX_" };

        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (strlen(exact[i]) == n && strncmp(name, exact[i], n) == 0)
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (n >= strlen(prefixes[i]) && strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

int sandbox_env_check(const char *assignment, char **error) {
        _cleanup_free_ char *shown = NULL;
        const char *eq;
        size_t n;

        /* SECURITY: a refused name is the caller's text and ends up in D-Bus errors and on
         * terminals: escaped, and cut before escaping. */
        eq = strchr(assignment, '=');
        n = eq ? (size_t) (eq - assignment) : strlen(assignment);
        if (!eq || !env_name_valid(assignment, n)) {
                _cleanup_free_ char *head = strndup(assignment, MIN(n, 64U));

                shown = head ? cescape(head) : NULL;
                if (!shown)
                        return -ENOMEM;
        }
        if (!eq)
                return error_setf(error, -EINVAL, "Environment entry '%s' is not NAME=VALUE", shown);
        if (!env_name_valid(assignment, n))
                return error_setf(error, -EINVAL, "Environment name '%s' is not a valid name", shown);
        if (env_name_denied(assignment, n))
                return error_setf(error, -EPERM, "Environment variable %.*s may not be set for a skill",
                                  (int) n,
                                  assignment);
        if (strlen(eq + 1) > 32 * 1024)
                return error_setf(error, -E2BIG, "Environment variable %.*s is longer than 32K", (int) n,
                                  assignment);
        return 0;
}

int sandbox_file_name_check(const char *name, char **error) {
        _cleanup_free_ char *head = NULL, *shown = NULL;
        size_t n = strlen(name);
        const char *why = NULL;

        /* Plain names only: no directories, nothing hidden (where the engine could put its own
         * files), no surprises for shells that glob /work. */
        if (n == 0 || n > 255 || name[0] == '.' || name[0] == '-')
                why = "is not allowed (empty, hidden, or too long)";
        for (size_t i = 0; !why && i < n; i++)
                if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
                      (name[i] >= '0' && name[i] <= '9') || strchr("._-", name[i])))
                        why = "may contain only letters, digits, '.', '_' and '-'";
        if (!why)
                return 0;

        /* SECURITY: the refused name is the caller's text: escaped, as in sandbox_env_check(). */
        head = strndup(name, MIN(n, 255U));
        shown = head ? cescape(head) : NULL;
        if (!shown)
                return -ENOMEM;
        return error_setf(error, -EINVAL, "Input file name '%s' %s", shown, why);
}

int sandbox_env_check_all(char * const *env, char **error) {
        size_t bytes = 0;
        int r;

        if (strv_length(env) > ENV_ENTRIES_MAX)
                return error_setf(error, -E2BIG, "More than %u environment variables", ENV_ENTRIES_MAX);
        STRV_FOREACH(e, env) {
                size_t n = strcspn(*e, "=");

                r = sandbox_env_check(*e, error);
                if (r < 0)
                        return r;
                for (char * const *f = env; f < e; f++)
                        if (strncmp(*f, *e, n + 1) == 0)
                                return error_setf(error, -EINVAL, "Environment variable %.*s is given twice",
                                                  (int) n, *e);
                bytes += strlen(*e) + 1;
        }
        if (bytes > ENV_BYTES_MAX)
                return error_setf(error, -E2BIG, "The environment additions exceed %u bytes", ENV_BYTES_MAX);
        return 0;
}

/* The skill's environment, built from nothing: fixed entries, the input channels, then the
 * caller's checked additions (which may override LANG and TERM, and nothing else of ours), and
 * the search paths of a skill environment, which nothing overrides.
 *
 * The skill root is on Python's and Node's module search path, ahead of an environment's,
 * because skills are written to be run from their root ("python -m scripts.package_skill", whose
 * modules then import "scripts.quick_validate"): a script started by path gets its own folder on
 * sys.path, not the root, and would fail on those imports. It is the skill's own read-only tree,
 * the same for every run; callers still may not set either variable. */
int sandbox_env_build(char * const *extra, char * const *search, const char *input_json, char ***ret) {
        static const char *const fixed[] = {
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOME=/home/skill",
                "LANG=C.UTF-8",
                "TERM=dumb",
                "SKILL_DIR=/skill",
                "PYTHONPATH=/skill",
                "NODE_PATH=/skill",
                "SKILL_ASSETS_DIR=/skill/assets",
                "SANDBOX_OUTPUT=/out/output.json",
                "SANDBOX_FILES_DIR=/out/files/",
        };
        _cleanup_strv_free_ char **env = NULL;
        int r;

        STRV_FOREACH(e, search) {
                /* The skill root first: its own modules win over the environment's. */
                if (startswith(*e, "PYTHONPATH=") || startswith(*e, "NODE_PATH=")) {
                        size_t n = strcspn(*e, "=");
                        char *v = strdup_printf("%.*s=/skill:%s", (int) n, *e, *e + n + 1);

                        r = v ? strv_push(&env, v) : -ENOMEM;
                } else
                        r = strv_extend(&env, *e);
                if (r < 0)
                        return r;
        }
        STRV_FOREACH(e, extra) {
                size_t n = strcspn(*e, "=");
                bool overridden = false;

                STRV_FOREACH(s, search)
                        if (strncmp(*s, *e, n + 1) == 0)
                                overridden = true;
                if (overridden)
                        continue;
                r = strv_extend(&env, *e);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                size_t n = strcspn(fixed[i], "=");
                bool overridden = false;

                STRV_FOREACH(e, extra)
                        if (strncmp(*e, fixed[i], n + 1) == 0)
                                overridden = true;
                STRV_FOREACH(e, search)
                        if (strncmp(*e, fixed[i], n + 1) == 0)
                                overridden = true;
                if (!overridden) {
                        r = strv_extend(&env, fixed[i]);
                        if (r < 0)
                                return r;
                }
        }
        if (input_json) {
                r = strv_extend(&env, "SKILL_INPUT_FILE=" SANDBOX_INPUT_PATH);
                if (r < 0)
                        return r;
                if (strlen("SANDBOX_INPUT=") + strlen(input_json) + 1 <= SANDBOX_INPUT_ENV_MAX) {
                        char *s = strdup_printf("SANDBOX_INPUT=%s", input_json);

                        r = s ? strv_push(&env, s) : -ENOMEM;
                        if (r < 0)
                                return r;
                }
        }
        strv_sort(env);
        *ret = TAKE_PTR(env);
        return 0;
}
