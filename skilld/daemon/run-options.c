/* See run-options.h. Every refusal is a D-Bus error with a sentence for a person: the caller's
 * strings are quoted only when they are printable text, since they end up on terminals and in
 * the journal. */
#include <cjson/cJSON.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "engine.h"
#include "inspect.h"
#include "lint.h"
#include "run-options.h"
#include "session.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* Caps on what one call may carry. */
#define RUN_ARGS_MAX 4096U
#define RUN_ARGS_BYTES_MAX (1024U * 1024U)
#define RUN_SCRIPT_MAX 1024U
#define RUN_INPUT_MAX (64U * 1024U * 1024U)

void run_options_done(RunOptions *o) {
        o->args = strv_free(o->args);
        o->env = strv_free(o->env);
        o->file_names = strv_free(o->file_names);
        free(o->file_fds);
        o->file_fds = NULL;
        free(o->file_folders);
        o->file_folders = NULL;
        o->n_files = 0;
}

int bus_invalid_args(sd_bus_error *error, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = sd_bus_error_setfv(error, SD_BUS_ERROR_INVALID_ARGS, fmt, ap);
        va_end(ap);
        return r;
}

bool bus_text_ok(const char *s, size_t max) {
        size_t n = strlen(s);

        if (n > max || !utf8_is_valid(s, n) || string_has_cc(s, n))
                return false;
        /* The C1 controls U+0080..U+009F are valid UTF-8, and U+009B opens an escape sequence on
         * some terminals. In valid UTF-8 they are exactly 0xc2 followed by 0x80..0x9f. */
        for (size_t i = 0; i + 1 < n; i++)
                if ((unsigned char) s[i] == 0xc2 && (unsigned char) s[i + 1] < 0xa0)
                        return false;
        return true;
}

int bus_check_archive_fd(int fd, sd_bus_error *error) {
        unsigned char magic[4];
        struct stat st;
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
                return bus_invalid_args(error, "The skill file descriptor is not open for reading.");
        if (fstat(fd, &st) < 0)
                return bus_invalid_args(error, "The skill file descriptor cannot be examined: %s",
                                        strerror(errno));
        if (!S_ISREG(st.st_mode))
                return bus_invalid_args(error,
                                        "The skill must be passed as a .skill archive in a regular file "
                                        "or memfd (skillctl packs folders that way).");
        if (st.st_size <= 0)
                return sd_bus_error_setf(error, SKILLD_ERROR_INVALID_SKILL, "The skill archive is empty.");
        if ((uint64_t) st.st_size > INSPECT_ARCHIVE_MAX)
                return sd_bus_error_setf(error, SKILLD_ERROR_LIMIT_EXCEEDED,
                                         "The skill archive is larger than the 256M allowed.");
        if (pread(fd, magic, sizeof(magic), 0) != (ssize_t) sizeof(magic) ||
            memcmp(magic, "PK\003\004", sizeof(magic)) != 0)
                return sd_bus_error_setf(error, SKILLD_ERROR_INVALID_SKILL,
                                         "The skill is not a .skill (zip) archive.");
        return 0;
}

int bus_check_output_fd(int fd, const char *which, sd_bus_error *error) {
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_RDONLY)
                return bus_invalid_args(error, "The %s file descriptor is not open for writing.", which);
        return 0;
}

static int parse_limits(sd_bus_message *msg, RunOptions *c, sd_bus_error *error) {
        const char *name;
        uint64_t value;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{st}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "{st}", &name, &value)) > 0) {
                PolicyLimit l = policy_limit_from_string(name);

                if (l < 0)
                        return bus_invalid_args(error,
                                                "Unknown limit '%s'; known are memory, tasks, cpu, timeout, "
                                                "stdout, stderr, output and tmpfs.",
                                                bus_text_ok(name, 64) ? name : "?");
                if (c->asked.value[l] != POLICY_LIMIT_UNSET)
                        return bus_invalid_args(error, "The limit %s is given twice.", name);
                if (value == POLICY_LIMIT_UNSET)
                        return bus_invalid_args(error, "The limit %s is out of range.", name);
                c->asked.value[l] = value;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

static int parse_env(sd_bus_message *msg, RunOptions *c, sd_bus_error *error) {
        const char *name, *value;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{ss}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "{ss}", &name, &value)) > 0) {
                _cleanup_free_ char *assignment = NULL, *why = NULL;

                if (strchr(name, '='))
                        return bus_invalid_args(error, "Environment names may not contain '='.");
                assignment = strdup_printf("%s=%s", name, value);
                if (!assignment)
                        return -ENOMEM;
                r = sandbox_env_check(assignment, &why);
                if (r < 0)
                        return bus_invalid_args(error, "%s.", why ?: "Invalid environment variable");
                STRV_FOREACH(e, c->env)
                        if (strncmp(*e, assignment, strlen(name) + 1) == 0)
                                return bus_invalid_args(error, "The environment variable %s is given twice.",
                                                        name);
                r = strv_push(&c->env, TAKE_PTR(assignment));
                if (r < 0)
                        return r;
                if (strv_length(c->env) > 256)
                        return bus_invalid_args(error, "More than 256 environment variables.");
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

/* files and folders: name to fd. A folder is a zip of its contents in a memfd sealed against any
 * change, so the loader reads exactly what was checked (the engine unpacks it, folder-input.c). */
static int parse_files(sd_bus_message *msg, RunOptions *c, bool folders, sd_bus_error *error) {
        const int immutable = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
        const char *name;
        int fd, r;

        r = sd_bus_message_enter_container(msg, 'a', "{sh}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "{sh}", &name, &fd)) > 0) {
                _cleanup_free_ char *why = NULL;
                struct stat st;
                int flags, *fds;
                bool *kinds;

                r = sandbox_file_name_check(name, &why);
                if (r < 0)
                        return bus_invalid_args(error, "%s.", why ?: "Invalid input file name");
                if (strv_contains(c->file_names, name))
                        return bus_invalid_args(error, "The input file %s is given twice.", name);
                if (c->n_files >= RUN_FILES_MAX)
                        return bus_invalid_args(error, "More than %u input files.", RUN_FILES_MAX);
                /* SECURITY: a file the caller opened, never a path we would open for them. */
                flags = fcntl(fd, F_GETFL);
                if (flags < 0 || (flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY || fstat(fd, &st) < 0 ||
                    !S_ISREG(st.st_mode))
                        return bus_invalid_args(error,
                                                "The input file %s is not a regular file open for reading.",
                                                name);
                if (folders) {
                        int seals = fcntl(fd, F_GET_SEALS);

                        if (seals < 0 || (seals & immutable) != immutable)
                                return bus_invalid_args(error, "The input folder %s is not a memfd sealed "
                                                        "against writes, shrinking and growing.", name);
                }
                r = strv_extend(&c->file_names, name);
                if (r < 0)
                        return r;
                fds = reallocarray(c->file_fds, c->n_files + 1, sizeof(int));
                if (!fds)
                        return -ENOMEM;
                c->file_fds = fds;
                kinds = reallocarray(c->file_folders, c->n_files + 1, sizeof(bool));
                if (!kinds)
                        return -ENOMEM;
                c->file_folders = kinds;
                c->file_folders[c->n_files] = folders;
                c->file_fds[c->n_files++] = fd;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

static int parse_options(sd_bus_message *msg, RunOptions *c, sd_bus_error *error) {
        unsigned seen = 0;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                static const char *const known[] = {
                        "limits", "env", "files", "network", "stdout", "stderr", "command", "cwd", "folders",
                        "session",
                };
                static const char *const types[] = {
                        "a{st}", "a{ss}", "a{sh}", "b", "h", "h", "b", "s", "a{sh}", "s",
                };
                const char *key;
                size_t i;

                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                for (i = 0; i < ELEMENTSOF(known); i++)
                        if (streq(key, known[i]))
                                break;
                if (i == ELEMENTSOF(known))
                        return bus_invalid_args(error, "Unknown option '%s'.",
                                                bus_text_ok(key, 64) ? key : "?");
                if (seen & (1U << i))
                        return bus_invalid_args(error, "The option %s is given twice.", key);
                seen |= 1U << i;

                r = sd_bus_message_enter_container(msg, 'v', types[i]);
                if (r < 0)
                        return bus_invalid_args(error, "The option %s must be of type %s.", key, types[i]);
                switch (i) {
                case 0:
                        r = parse_limits(msg, c, error);
                        break;
                case 1:
                        r = parse_env(msg, c, error);
                        break;
                case 9:
                        r = sd_bus_message_read(msg, "s", &c->session);
                        if (r >= 0 && !session_id_valid(c->session))
                                return bus_invalid_args(error, "The option session is not a session id.");
                        break;
                case 2:
                case 8:
                        r = parse_files(msg, c, i == 8, error);
                        break;
                case 3:
                case 6: {
                        int b;

                        r = sd_bus_message_read(msg, "b", &b);
                        if (i == 3)
                                c->network = b;
                        else
                                c->command = b;
                        break;
                }
                case 7:
                        r = sd_bus_message_read(msg, "s", &c->cwd);
                        if (r >= 0 && !streq(c->cwd, "/work") && !streq(c->cwd, "/skill"))
                                return bus_invalid_args(error, "The option cwd must be /work or /skill.");
                        break;
                default: {
                        int fd;

                        r = sd_bus_message_read(msg, "h", &fd);
                        if (r >= 0)
                                r = bus_check_output_fd(fd, key, error);
                        if (r >= 0 && streq(key, "stdout"))
                                c->stdout_fd = fd;
                        else if (r >= 0)
                                c->stderr_fd = fd;
                        break;
                }
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

static int parse_run_call(sd_bus_message *msg, bool installed, RunOptions *c, sd_bus_error *error) {
        const char *script, *input;
        size_t bytes = 0;
        int r;

        if (installed)
                r = sd_bus_message_read(msg, "ss", &c->name, &script);
        else
                r = sd_bus_message_read(msg, "hs", &c->skill_fd, &script);
        if (r < 0)
                return r;
        r = sd_bus_message_read_strv(msg, &c->args);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "s", &input);
        if (r < 0)
                return r;
        r = parse_options(msg, c, error);
        if (r < 0)
                return r;

        if (installed && !skill_name_is_valid(c->name))
                return bus_invalid_args(error, "'%s' is not a valid skill name.",
                                        bus_text_ok(c->name, 64) ? c->name : "?");
        if (!installed) {
                r = bus_check_archive_fd(c->skill_fd, error);
                if (r < 0)
                        return r;
        }
        if (!isempty(script)) {
                if (!bus_text_ok(script, RUN_SCRIPT_MAX))
                        return bus_invalid_args(error, "The script path is not a valid path of the skill.");
                c->script = script;
        }
        /* The command form: args is the whole argv, and there is no script to name. */
        if (c->command && c->script)
                return bus_invalid_args(error, "A command run names no script.");
        if (c->command && (!c->args || isempty(c->args[0])))
                return bus_invalid_args(error, "The command is empty.");
        if (c->command && !bus_text_ok(c->args[0], RUN_SCRIPT_MAX))
                return bus_invalid_args(error, "The command's program is not a valid name.");
        if (strv_length(c->args) > RUN_ARGS_MAX)
                return bus_invalid_args(error, "More than %u arguments.", RUN_ARGS_MAX);
        STRV_FOREACH(a, c->args)
                bytes += strlen(*a) + 1;
        if (bytes > RUN_ARGS_BYTES_MAX)
                return bus_invalid_args(error, "The arguments are longer than 1M together.");
        if (!isempty(input)) {
                _cleanup_(cJSON_Deletep) cJSON *j = NULL;

                if (strlen(input) > RUN_INPUT_MAX)
                        return sd_bus_error_setf(error, SKILLD_ERROR_LIMIT_EXCEEDED,
                                                 "The input is larger than 64M.");
                j = cJSON_ParseWithOpts(input, NULL, true);
                if (!j)
                        return bus_invalid_args(error, "The input is not valid JSON.");
                c->input_json = input;
        }
        return 0;
}

int run_options_parse(sd_bus_message *msg, bool installed, RunOptions *ret, sd_bus_error *error) {
        _cleanup_(run_options_done) RunOptions o = {
                .skill_fd = -EBADF,
                .stdout_fd = -EBADF,
                .stderr_fd = -EBADF,
        };
        int r;

        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                o.asked.value[l] = POLICY_LIMIT_UNSET;
        r = parse_run_call(msg, installed, &o, error);
        if (r < 0)
                return r;
        *ret = o;
        o = (RunOptions) {};
        return 0;
}

char *run_command_line(char * const *argv) {
        _cleanup_free_ char *line = strdup("");

        if (!line)
                return NULL;
        STRV_FOREACH(a, argv) {
                _cleanup_free_ char *e = cescape(*a);
                bool quote;
                char *n;

                if (!e)
                        return NULL;
                quote = isempty(e) || strpbrk(e, " \t'\"");
                if (strchr(e, '\'')) {
                        /* In quotes, a quote of the argument's own is escaped. */
                        char *q = malloc(strlen(e) * 2 + 1), *w = q;

                        if (!q)
                                return NULL;
                        for (const char *c = e; *c; c++) {
                                if (*c == '\'')
                                        *w++ = '\\';
                                *w++ = *c;
                        }
                        *w = '\0';
                        free(e);
                        e = q;
                }
                n = strdup_printf("%s%s%s%s%s", line, isempty(line) ? "" : " ", quote ? "'" : "", e,
                                  quote ? "'" : "");
                if (!n)
                        return NULL;
                free(line);
                line = n;
        }
        return TAKE_PTR(line);
}
