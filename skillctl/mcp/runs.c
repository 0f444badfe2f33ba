/* The runs of run_skill and exec_skill: each one is a child "skillctl run --json" or "skillctl
 * exec --json", the very code path a user's `skillctl run` takes (embedded with --local, through
 * the service with --system), so a run over MCP is validated, limited, cancelled and reported
 * exactly like one from a terminal. The session tools' "skillctl session ... --json" go the same
 * way (sessions.c builds their command lines and answers), so that they too never block the loop.
 *
 * 1. The arguments are checked here first (names, base64, limits), so that a bad call comes back
 *    as a tool error naming what was wrong. Input files and input JSON go into a private folder
 *    of the run; the input is passed as the client sent it (its exact JSON text, not cJSON's
 *    reprint), and the output directory is the run's own.
 * 2. The child's stdout (the result JSON) and stderr go to files of the run; stdin is /dev/null,
 *    so nothing can read our protocol stream.
 * 3. While it goes, a request with a progress token gets a notifications/progress every
 *    MCP_HEARTBEAT_USEC, which also keeps clients' request timeouts from firing.
 * 4. notifications/cancelled (or stdin closing) sends SIGTERM, which `skillctl run` turns into a
 *    cancellation of the run (the engine's cancel fd, or Cancel() on the service); SIGKILL
 *    follows if it does not end in time. A cancelled request is not answered, as the spec asks.
 * 5. The answer carries the result JSON as structuredContent as the child printed it (compacted,
 *    never reprinted through doubles, so `output` stays exactly what the skill wrote), and each
 *    artifact as a resource_link that resources/read serves while the server lives. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine.h"
#include "fileio.h"
#include "log.h"
#include "mcp.h"
#include "output.h"
#include "parse-util.h"

/* After SIGTERM, how long a run has to end before SIGKILL. */
#define MCP_KILL_USEC (10ULL * 1000 * 1000)
/* The result JSON a child prints: the skill's stdout and stderr are capped at 16M each. */
#define MCP_RESULT_MAX (64U * 1024U * 1024U)
/* How much of the stdout and stderr of a run the text content quotes. */
#define MCP_TEXT_QUOTE_MAX 8192U
/* The output JSON the text content quotes in full. */
#define MCP_TEXT_OUTPUT_MAX (64U * 1024U)

struct McpRun {
        McpServer *server;
        McpRun *next;
        char *request_id;
        char *progress_token;
        char *skill;
        char *dir;                      /* the run's private folder */
        McpRunKind kind;
        pid_t pid;
        sd_event_source *child;
        sd_event_source *heartbeat;
        sd_event_source *kill_timer;
        uint64_t started_usec;
        unsigned beats;
        bool cancelled;
        bool in_session;                /* run in a session the client named */
        bool keep_dir;                  /* its artifacts are kept (McpServer.kept) */
};

static McpRun *mcp_run_free(McpRun *run) {
        if (!run)
                return NULL;
        run->child = sym_sd_event_source_disable_unref(run->child);
        run->heartbeat = sym_sd_event_source_disable_unref(run->heartbeat);
        run->kill_timer = sym_sd_event_source_disable_unref(run->kill_timer);
        if (run->pid > 0) {
                /* Only when the server itself goes: the child is not left running unwatched. */
                (void) kill(run->pid, SIGKILL);
                (void) waitpid(run->pid, NULL, 0);
        }
        if (run->dir && !run->keep_dir)
                (void) rm_rf_at(AT_FDCWD, run->dir);
        free(run->request_id);
        free(run->progress_token);
        free(run->skill);
        free(run->dir);
        free(run);
        return NULL;
}

static void run_unlink(McpRun *run) {
        for (McpRun **p = &run->server->runs; *p; p = &(*p)->next)
                if (*p == run) {
                        *p = run->next;
                        break;
                }
}

void mcp_runs_free(McpServer *s) {
        while (s->runs) {
                McpRun *run = s->runs;

                s->runs = run->next;
                mcp_run_free(run);
        }
}

const McpKept *mcp_kept_find(const McpServer *s, const char *run_id) {
        for (size_t i = 0; run_id && i < s->n_kept; i++)
                if (streq(s->kept[i].run_id, run_id))
                        return &s->kept[i];
        return NULL;
}

static int on_kill_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        McpRun *run = userdata;

        log_warning("Run of %s did not end after SIGTERM, killing it.", run->skill);
        (void) kill(run->pid, SIGKILL);
        return 0;
}

static void run_stop(McpRun *run) {
        if (run->cancelled)
                return;
        run->cancelled = true;
        run->heartbeat = sym_sd_event_source_disable_unref(run->heartbeat);
        log_debug("Canceling the run of %s (request %s).", run->skill, run->request_id);
        (void) kill(run->pid, SIGTERM);
        (void) sym_sd_event_add_time_relative(run->server->event, &run->kill_timer, CLOCK_MONOTONIC,
                                              MCP_KILL_USEC, 0, on_kill_timer, run);
}

void mcp_run_cancel(McpServer *s, const char *request_id) {
        for (McpRun *run = s->runs; run; run = run->next)
                if (streq(run->request_id, request_id))
                        run_stop(run);
}

void mcp_runs_stop_all(McpServer *s) {
        for (McpRun *run = s->runs; run; run = run->next)
                run_stop(run);
}

static int on_heartbeat(sd_event_source *source, uint64_t usec, void *userdata) {
        McpRun *run = userdata;
        _cleanup_free_ char *message = NULL;
        uint64_t now = 0;
        cJSON *p;
        int r;

        (void) sym_sd_event_now(run->server->event, CLOCK_MONOTONIC, &now);
        message = strdup_printf("%s is running (%" PRIu64 " s)", run->skill,
                                (now - run->started_usec) / 1000000U);
        p = cJSON_CreateObject();
        if (!message || !p || !cJSON_AddItemToObject(p, "progressToken", cJSON_CreateRaw(run->progress_token)) ||
            !cJSON_AddNumberToObject(p, "progress", ++run->beats) || !cJSON_AddStringToObject(p, "message", message))
                cJSON_Delete(p);
        else
                (void) mcp_send(run->server, jsonrpc_format_notification("notifications/progress", p));

        r = sym_sd_event_source_set_time_relative(source, MCP_HEARTBEAT_USEC);
        if (r >= 0)
                r = sym_sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        return r;
}

static int kept_add(McpServer *s, const char *run_id, const char *dir) {
        McpKept k = { .run_id = strdup(run_id), .dir = strdup(dir) };

        if (!k.run_id || !k.dir) {
                free(k.run_id);
                free(k.dir);
                return -ENOMEM;
        }
        if (s->n_kept == MCP_KEPT_RUNS_MAX) {
                /* The oldest run's artifacts go. */
                (void) rm_rf_at(AT_FDCWD, s->kept[0].dir);
                free(s->kept[0].run_id);
                free(s->kept[0].dir);
                memmove(s->kept, s->kept + 1, (MCP_KEPT_RUNS_MAX - 1) * sizeof(McpKept));
                s->n_kept--;
        }
        s->kept[s->n_kept++] = k;
        return 0;
}

static const char *json_str(const cJSON *o, const char *key) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void quote_stream(FILE *f, const cJSON *result, const char *name) {
        const char *text = json_str(cJSON_GetObjectItemCaseSensitive(result, name), "text");
        size_t n;

        if (isempty(text))
                return;
        n = strlen(text);
        if (n > MCP_TEXT_QUOTE_MAX)
                fprintf(f, "%s (last %u of %zu bytes):\n%s\n", name, MCP_TEXT_QUOTE_MAX, n,
                        text + n - MCP_TEXT_QUOTE_MAX);
        else
                fprintf(f, "%s:\n%s%s", name, text, text[n - 1] == '\n' ? "" : "\n");
}

/* The answer to a run that printed its result JSON. */
static cJSON *run_answer(McpRun *run, char *text) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *o = NULL;
        _cleanup_free_ char *summary = NULL;
        const char *status, *run_id, *error, *raw_output;
        const cJSON *exit_code, *usage, *wall, *artifacts, *a;
        size_t size = 0, output_size = 0;
        cJSON *content, *t;
        bool failed;
        FILE *f;

        j = cJSON_ParseWithOpts(text, NULL, true);
        status = json_str(j, "status");
        run_id = json_str(j, "run_id");
        if (!cJSON_IsObject(j) || !status || !run_id)
                return mcp_tool_error("Run of %s: skillctl printed no result JSON that it understands.", run->skill);
        failed = !streq(status, "succeeded");

        /* Compacted in place: whitespace goes, numbers and strings stay as the child wrote them. */
        cJSON_Minify(text);
        raw_output = json_find_raw(text, "output", &output_size);

        exit_code = cJSON_GetObjectItemCaseSensitive(j, "exit_code");
        usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
        wall = cJSON_GetObjectItemCaseSensitive(usage, "wall_usec");
        error = json_str(j, "error");
        artifacts = cJSON_GetObjectItemCaseSensitive(j, "artifacts");

        f = open_memstream(&summary, &size);
        if (!f)
                return NULL;
        fprintf(f, "Run %s of %s: %s", run_id, run->skill, status);
        if (cJSON_IsNumber(exit_code))
                fprintf(f, ", exit code %d", (int) exit_code->valuedouble);
        if (cJSON_IsNumber(wall))
                fprintf(f, ", %.2f s", wall->valuedouble / 1e6);
        (void) fputs(".\n", f);
        if (error)
                fprintf(f, "Error: %s\n", error);
        if (raw_output && output_size > MCP_TEXT_OUTPUT_MAX)
                fprintf(f, "Output: %zu bytes of JSON, in structuredContent.output\n", output_size);
        else if (raw_output && !(output_size == 4 && memcmp(raw_output, "null", 4) == 0))
                fprintf(f, "Output: %.*s\n", (int) output_size, raw_output);
        else
                quote_stream(f, j, "stdout");
        if (failed)
                quote_stream(f, j, "stderr");
        if (cJSON_GetArraySize(artifacts) > 0)
                fprintf(f, "%d artifact%s, as resource links.\n", cJSON_GetArraySize(artifacts),
                        cJSON_GetArraySize(artifacts) == 1 ? "" : "s");
        if (fclose(f) != 0)
                return NULL;

        o = cJSON_CreateObject();
        if (!o || !(content = cJSON_AddArrayToObject(o, "content")) || !(t = cJSON_CreateObject()) ||
            !cJSON_AddItemToArray(content, t) || !cJSON_AddStringToObject(t, "type", "text") ||
            !cJSON_AddStringToObject(t, "text", summary))
                return NULL;
        cJSON_ArrayForEach(a, artifacts) {
                const char *path = json_str(a, "path"), *type = json_str(a, "type");
                const cJSON *sz = cJSON_GetObjectItemCaseSensitive(a, "size");
                _cleanup_free_ char *uri = NULL;
                cJSON *l;

                if (!path || !streq_ptr(type, "file"))
                        continue;
                uri = mcp_resource_uri("skilld-run", run_id, path);
                l = cJSON_CreateObject();
                if (!uri || !l || !cJSON_AddItemToArray(content, l) ||
                    !cJSON_AddStringToObject(l, "type", "resource_link") || !cJSON_AddStringToObject(l, "uri", uri) ||
                    !cJSON_AddStringToObject(l, "name", path) ||
                    !cJSON_AddStringToObject(l, "mimeType", mcp_mime_type(path)) ||
                    (cJSON_IsNumber(sz) && !cJSON_AddNumberToObject(l, "size", sz->valuedouble)))
                        return NULL;
        }
        if (!cJSON_AddItemToObject(o, "structuredContent", cJSON_CreateRaw(text)) ||
            !cJSON_AddBoolToObject(o, "isError", failed))
                return NULL;
        if (kept_add(run->server, run_id, run->dir) < 0)
                return NULL;
        run->keep_dir = true;
        return TAKE_PTR(o);
}

static int dir_fd_of(const McpRun *run, int *ret) {
        *ret = open(run->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return *ret < 0 ? -errno : 0;
}

static int on_child(sd_event_source *source, const siginfo_t *si, void *userdata) {
        McpRun *run = userdata;
        McpServer *s = run->server;
        _cleanup_free_ char *text = NULL, *err = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        size_t size = 0, err_size = 0;
        cJSON *answer = NULL;
        int r;

        run->pid = 0;           /* reaped */
        run_unlink(run);
        if (run->cancelled) {
                log_debug("Run of %s ended after its cancellation; not answered.", run->skill);
                mcp_run_free(run);
                mcp_maybe_exit(s);
                return 0;
        }

        r = dir_fd_of(run, &dir_fd);
        if (r >= 0)
                r = read_full_file_at(dir_fd, "result.json.out", MCP_RESULT_MAX, true, &text, &size);
        if (dir_fd >= 0)
                (void) read_full_file_at(dir_fd, "stderr.log", MCP_TEXT_QUOTE_MAX, true, &err, &err_size);
        if (err && err_size > 0 && err[err_size - 1] == '\n')
                err[err_size - 1] = '\0';
        if (run->kind >= MCP_RUN_SESSION_CREATE)
                answer = mcp_session_answer(run->kind, si->si_code == CLD_EXITED && si->si_status == 0 &&
                                            r >= 0 && !memchr(text, '\0', size) ? text : NULL, err);
        else if (r >= 0 && size > 0 && !memchr(text, '\0', size))
                answer = run_answer(run, text);
        else {
                /* skillctl stopped before a run: its message says why. */
                answer = mcp_tool_error("Run of %s failed before it started (skillctl exited with %d): %s%s",
                                        run->skill, si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status,
                                        isempty(err) ? "no message" : err,
                                        run->in_session ? " (list_sessions shows your sessions; create_session "
                                                          "makes one)" : "");
        }
        if (!answer)
                (void) mcp_send_error(s, run->request_id, JSONRPC_INTERNAL_ERROR, "Internal error: out of memory");
        else
                (void) mcp_send_result(s, run->request_id, answer);
        mcp_run_free(run);
        mcp_maybe_exit(s);
        return 0;
}

/* Writes data as name into dir_fd, new and private. */
static int write_new_file(int dir_fd, const char *name, const char *data, size_t size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0)
                return -errno;
        return loop_write(fd, data, size);
}

int mcp_child_argv(char ***argv, const char *verb) {
        /* The global options skillctl was given apply to its children too. */
        if (strv_extend(argv, "skillctl") < 0 ||
            (arg_host && (strv_extend(argv, "-H") < 0 || strv_extend(argv, arg_host) < 0)) ||
            (!arg_ask_password && strv_extend(argv, "--no-ask-password") < 0) || strv_extend(argv, verb) < 0)
                return -ENOMEM;
        return 0;
}

/* Checks the arguments of run_skill or exec_skill and writes its inputs into dir_fd; the child's
 * command line goes into *argv. Returns 0, or 1 with *ret a tool error. */
static int prepare(McpServer *s, const JsonRpcMessage *m, const cJSON *args, const McpSkill *k, McpRunKind kind,
                   int dir_fd, char ***argv, cJSON **ret) {
        const cJSON *script = cJSON_GetObjectItemCaseSensitive(args, "script");
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(args, "args");
        const cJSON *command = cJSON_GetObjectItemCaseSensitive(args, "command");
        const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(args, "cwd");
        const cJSON *session = cJSON_GetObjectItemCaseSensitive(args, "session");
        const cJSON *input = cJSON_GetObjectItemCaseSensitive(args, "input");
        const cJSON *files = cJSON_GetObjectItemCaseSensitive(args, "files");
        static const char *const limit_keys[] = { "timeout", "memory", "cpu", "tasks" };
        bool exec = kind == MCP_RUN_COMMAND;
        const cJSON *f, *a;
        int r;

#define TOOL_ERROR(...) ({ *ret = mcp_tool_error(__VA_ARGS__); *ret ? 1 : -ENOMEM; })
#define ARG(x) do { if (strv_extend(argv, (x)) < 0) return -ENOMEM; } while (0)

        r = mcp_child_argv(argv, exec ? "exec" : "run");
        if (r < 0)
                return r;
        ARG("--json");
        ARG(s->local ? "--local" : "--system");
        ARG("--output-dir");
        ARG("out");

        if (exec && (script || list))
                return TOOL_ERROR("exec_skill takes \"command\" (the program and its arguments), not \"script\" or "
                                  "\"args\": those are run_skill's.");
        if (!exec && (command || cwd))
                return TOOL_ERROR("run_skill takes \"script\" and \"args\"; to run a command line use exec_skill.");
        if (exec) {
                if (!cJSON_IsArray(command) || cJSON_GetArraySize(command) == 0)
                        return TOOL_ERROR("\"command\" must be a non-empty array of strings: the program and its "
                                          "arguments, e.g. [\"python3\", \"-m\", \"scripts.tool\"].");
                cJSON_ArrayForEach(a, command) {
                        if (!cJSON_IsString(a) || (a == command->child && isempty(a->valuestring)))
                                return TOOL_ERROR("\"command\" must be a non-empty array of strings, the first "
                                                  "naming the program.");
                }
                if (cwd) {
                        if (!cJSON_IsString(cwd) ||
                            !(streq(cwd->valuestring, "/work") || streq(cwd->valuestring, "/skill")))
                                return TOOL_ERROR("\"cwd\" must be \"/work\" (the working folder, the default) or "
                                                  "\"/skill\" (the skill's root, read-only).");
                        ARG("--cwd");
                        ARG(cwd->valuestring);
                }
        }
        if (session) {
                if (!cJSON_IsString(session) || isempty(session->valuestring))
                        return TOOL_ERROR("\"session\" must be a session id, as create_session or list_sessions "
                                          "gives it.");
                ARG("--session");
                ARG(session->valuestring);
        }

        if (script) {
                if (!cJSON_IsString(script) || isempty(script->valuestring))
                        return TOOL_ERROR("\"script\" must be a path relative to the skill, e.g. scripts/run.py.");
                ARG("--script");
                ARG(script->valuestring);
        }

        if (input) {
                _cleanup_free_ char *owned = NULL;
                const char *raw;
                size_t n;

                if (!cJSON_IsObject(input))
                        return TOOL_ERROR("\"input\" must be a JSON object.");
                /* The client's own text: a reprint would turn big integers into doubles. */
                raw = json_find_raw(m->text, "params\narguments\ninput", &n);
                if (!raw) {
                        owned = cJSON_PrintUnformatted(input);
                        if (!owned)
                                return -ENOMEM;
                        raw = owned;
                        n = strlen(owned);
                }
                r = write_new_file(dir_fd, "input.json", raw, n);
                if (r < 0)
                        return r;
                ARG("--input-file");
                ARG("input.json");
        }

        if (files) {
                if (!cJSON_IsObject(files))
                        return TOOL_ERROR("\"files\" must be an object of file names to base64 contents.");
                if (mkdirat(dir_fd, "in", 0700) < 0)
                        return -errno;
                cJSON_ArrayForEach(f, files) {
                        _cleanup_free_ char *error = NULL, *data = NULL, *spec = NULL;
                        _cleanup_close_ int in_fd = -EBADF;
                        size_t size;

                        if (sandbox_file_name_check(f->string, &error) < 0)
                                return TOOL_ERROR("files: %s", error);
                        if (!cJSON_IsString(f) || mcp_base64_decode(f->valuestring, &data, &size) < 0)
                                return TOOL_ERROR("files: %s: the content must be base64 (RFC 4648, padded).", f->string);
                        in_fd = openat(dir_fd, "in", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (in_fd < 0)
                                return -errno;
                        r = write_new_file(in_fd, f->string, data, size);
                        if (r == -EEXIST)
                                return TOOL_ERROR("files: %s is given twice.", f->string);
                        if (r < 0)
                                return r;
                        spec = strdup_printf("%s=in/%s", f->string, f->string);
                        if (!spec)
                                return -ENOMEM;
                        ARG("--file");
                        ARG(spec);
                }
        }

        /* The limits go as options; the engine's or the service's policy has the last word. */
        for (size_t i = 0; i < ELEMENTSOF(limit_keys); i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, limit_keys[i]);
                _cleanup_free_ char *opt = NULL, *value = NULL;
                uint64_t u;

                if (!v)
                        continue;
                if (streq(limit_keys[i], "timeout")) {
                        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 7 * 24 * 3600.0)
                                return TOOL_ERROR("\"timeout\" must be a number of seconds above 0.");
                        value = strdup_printf("%" PRIu64 "ms", (uint64_t) (v->valuedouble * 1000.0 + 0.5) ?: 1);
                } else if (streq(limit_keys[i], "memory")) {
                        if (!cJSON_IsString(v) || parse_size(v->valuestring, &u) < 0)
                                return TOOL_ERROR("\"memory\" must be a size such as \"256M\" or \"1G\".");
                        value = strdup(v->valuestring);
                } else {
                        if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 1e9 ||
                            v->valuedouble != (double) (uint64_t) v->valuedouble)
                                return TOOL_ERROR("\"%s\" must be a positive integer.", limit_keys[i]);
                        value = strdup_printf("%" PRIu64, (uint64_t) v->valuedouble);
                }
                opt = strdup_printf("--%s", limit_keys[i]);
                if (!opt || !value)
                        return -ENOMEM;
                ARG(opt);
                ARG(value);
        }

        /* An installed skill by its name (the service runs its own copy, io.skilld.run), which
         * nothing in our cwd (the run's folder, whose entries are not skill names) can shadow; a
         * folder by its path. */
        ARG(k->installed ? k->name : k->dir);
        ARG("--");
        if (exec) {
                cJSON_ArrayForEach(a, command) {
                        ARG(a->valuestring);
                }
        } else if (list) {
                if (!cJSON_IsArray(list))
                        return TOOL_ERROR("\"args\" must be an array of strings.");
                cJSON_ArrayForEach(a, list) {
                        if (!cJSON_IsString(a))
                                return TOOL_ERROR("\"args\" must be an array of strings.");
                        ARG(a->valuestring);
                }
        }
        return 0;
#undef ARG
#undef TOOL_ERROR
}

static int spawn(McpRun *run, const char *exe, char **argv, int dir_fd) {
        _cleanup_close_ int null_fd = -EBADF, out_fd = -EBADF, err_fd = -EBADF;
        sigset_t mask;
        pid_t pid;

        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        out_fd = openat(dir_fd, "result.json.out", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        err_fd = openat(dir_fd, "stderr.log", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (null_fd < 0 || out_fd < 0 || err_fd < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* The child: our blocked signals and handlers are not its. */
                sigemptyset(&mask);
                (void) sigprocmask(SIG_SETMASK, &mask, NULL);
                (void) signal(SIGPIPE, SIG_DFL);
                if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
                    dup2(err_fd, STDERR_FILENO) < 0 || fchdir(dir_fd) < 0)
                        _exit(EXIT_FAILURE);
                (void) close_all_fds_except(NULL, 0);
                execv(exe, argv);
                _exit(127);
        }
        run->pid = pid;
        return 0;
}

int mcp_run_start(McpServer *s, const JsonRpcMessage *m, const cJSON *args, const McpSkill *k, McpRunKind kind,
                  cJSON **ret) {
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(m->params, "_meta");
        const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
        unsigned n_going = 0;
        McpRun *run;
        int r;

        for (McpRun *i = s->runs; i; i = i->next)
                n_going++;
        if (n_going >= MCP_RUNS_MAX) {
                *ret = mcp_tool_error("%u runs are going, the most this server runs at once: wait for one to "
                                      "end, or cancel one.", n_going);
                return *ret ? 0 : -ENOMEM;
        }

        run = calloc(1, sizeof(McpRun));
        if (!run)
                return -ENOMEM;
        *run = (McpRun) {
                .server = s,
                .request_id = strdup(m->id),
                .skill = strdup(k ? k->name : mcp_session_verb(kind)),
                .kind = kind,
                .in_session = cJSON_HasObjectItem(args, "session"),
                .dir = strdup_printf("%s/run-%u", s->work_dir, ++s->n_runs_started),
        };
        if (!run->request_id || !run->skill || !run->dir) {
                mcp_run_free(run);
                return -ENOMEM;
        }
        if (cJSON_IsString(token) || cJSON_IsNumber(token)) {
                size_t n;
                const char *raw = json_find_raw(m->text, "params\n_meta\nprogressToken", &n);

                run->progress_token = raw ? strndup(raw, n) : cJSON_PrintUnformatted(token);
                if (!run->progress_token) {
                        mcp_run_free(run);
                        return -ENOMEM;
                }
        }

        if (mkdir(run->dir, 0700) < 0 ||
            (dir_fd = open(run->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                r = -errno;
                mcp_run_free(run);
                return r;
        }
        if (kind >= MCP_RUN_SESSION_CREATE)
                r = mcp_session_prepare(s, args, k, kind, &argv, ret);
        else
                r = prepare(s, m, args, k, kind, dir_fd, &argv, ret);
        if (r != 0) {
                mcp_run_free(run);
                return r < 0 ? r : 0;
        }

        r = spawn(run, s->self, argv, dir_fd);
        if (r >= 0)
                r = sym_sd_event_add_child(s->event, &run->child, run->pid, WEXITED, on_child, run);
        if (r >= 0)
                r = sym_sd_event_now(s->event, CLOCK_MONOTONIC, &run->started_usec);
        if (r >= 0 && run->progress_token)
                r = sym_sd_event_add_time_relative(s->event, &run->heartbeat, CLOCK_MONOTONIC, MCP_HEARTBEAT_USEC, 0,
                                                   on_heartbeat, run);
        if (r < 0) {
                mcp_run_free(run);
                return r;
        }
        log_debug("Running %s for request %s (pid %d).", run->skill, m->id, (int) run->pid);
        run->next = s->runs;
        s->runs = run;
        return 1;
}
