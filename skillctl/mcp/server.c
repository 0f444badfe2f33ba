/* "skillctl mcp": a Model Context Protocol server on stdin and stdout.
 *
 * Newline-delimited JSON-RPC 2.0 (MCP's stdio transport), protocol 2025-11-25; a client asking
 * for an older version we also speak (2025-06-18, 2025-03-26, 2024-11-05) gets it echoed, any
 * other gets ours, as the lifecycle rules say. stdout carries MCP messages only; logs go to
 * stderr. Requests other than initialize and ping before initialize get -32600; methods we do
 * not serve -32601 (server/discover included, so that a client speaking both revisions falls
 * back to initialize). When stdin closes, runs still going are canceled and we exit 0 once they
 * ended.
 *
 * One sd-event loop serves stdin and the runs, so a long run never blocks ping, progress or its
 * own cancellation. */
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>

#include "fileio.h"
#include "log.h"
#include "mcp.h"
#include "output.h"
#include "skill-path.h"
#include "verbs.h"

static const char *const supported_versions[] = {
        MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26", "2024-11-05",
};

int mcp_error(JsonRpcError *e, int code, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = jsonrpc_error_setv(e, code, NULL, fmt, ap);
        va_end(ap);
        return r;
}

cJSON *mcp_tool_error(const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        cJSON *o, *content, *t;
        va_list ap;
        int q;

        va_start(ap, fmt);
        q = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (q < 0)
                return NULL;
        o = cJSON_CreateObject();
        if (!o || !(content = cJSON_AddArrayToObject(o, "content")) || !(t = cJSON_CreateObject()) ||
            !cJSON_AddItemToArray(content, t) || !cJSON_AddStringToObject(t, "type", "text") ||
            !cJSON_AddStringToObject(t, "text", text) || !cJSON_AddTrueToObject(o, "isError"))
                return cJSON_Delete(o), NULL;
        return o;
}

int mcp_send(McpServer *s, char *line) {
        _cleanup_free_ char *l = line;
        int r;

        if (!l)
                return -ENOMEM;
        r = loop_write(STDOUT_FILENO, l, strlen(l));
        if (r < 0) {
                /* The client went away: nobody will read another answer. */
                log_debug_errno(r, "Cannot write to stdout, stopping: %m");
                s->stopping = true;
                mcp_runs_stop_all(s);
        }
        return r;
}

int mcp_send_result(McpServer *s, const char *id, cJSON *result) {
        return mcp_send(s, jsonrpc_format_result(id, result));
}

int mcp_send_error(McpServer *s, const char *id, int code, const char *message) {
        return mcp_send(s, jsonrpc_format_error(id, code, message));
}

static int method_initialize(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->params, "protocolVersion");
        _cleanup_(cJSON_Deletep) cJSON *o = NULL;
        const char *version = MCP_PROTOCOL_VERSION;
        cJSON *caps, *x, *info;

        if (s->initialized)
                return mcp_error(ret_error, JSONRPC_INVALID_REQUEST,
                                 "Invalid Request: the session is already initialized");
        if (!cJSON_IsString(v))
                return mcp_error(ret_error, JSONRPC_INVALID_PARAMS,
                                 "Invalid params: initialize needs \"protocolVersion\", a string");
        for (size_t i = 0; i < ELEMENTSOF(supported_versions); i++)
                if (streq(v->valuestring, supported_versions[i]))
                        version = supported_versions[i];

        o = cJSON_CreateObject();
        if (!o || !cJSON_AddStringToObject(o, "protocolVersion", version) ||
            !(caps = cJSON_AddObjectToObject(o, "capabilities")) ||
            !(x = cJSON_AddObjectToObject(caps, "tools")) || !cJSON_AddFalseToObject(x, "listChanged") ||
            !(x = cJSON_AddObjectToObject(caps, "resources")) || !cJSON_AddFalseToObject(x, "listChanged") ||
            !cJSON_AddFalseToObject(x, "subscribe") ||
            !(x = cJSON_AddObjectToObject(caps, "extensions")) || !cJSON_AddObjectToObject(x, MCP_SKILLS_EXTENSION) ||
            !(info = cJSON_AddObjectToObject(o, "serverInfo")) ||
            !cJSON_AddStringToObject(info, "name", "skillctl") ||
            !cJSON_AddStringToObject(info, "title", "skilld: Agent Skills in a sandbox") ||
            !cJSON_AddStringToObject(info, "version", PROJECT_VERSION) ||
            !cJSON_AddStringToObject(o, "instructions",
                                     "Agent Skills, run in a sandbox by skilld. list_skills shows the skills; "
                                     "read_skill gives a skill's instructions (SKILL.md) and files; run_skill runs "
                                     "one of its scripts isolated (no network, private files, limits) and returns "
                                     "its result. Artifacts of runs are resources."))
                return -ENOMEM;
        s->initialized = true;
        log_debug("Initialized with protocol %s (the client asked for %s).", version, v->valuestring);
        *ret = TAKE_PTR(o);
        return 0;
}

static int method_ping(McpServer *s, const JsonRpcMessage *m, cJSON **ret, JsonRpcError *ret_error) {
        *ret = cJSON_CreateObject();
        return *ret ? 0 : -ENOMEM;
}

static const struct {
        const char *name;
        mcp_method_t handler;
        bool before_init;
} methods[] = {
        { "initialize",               method_initialize,            true },
        { "ping",                     method_ping,                  true },
        { "tools/list",               mcp_tools_list,               false },
        { "tools/call",               mcp_tools_call,               false },
        { "resources/list",           mcp_resources_list,           false },
        { "resources/templates/list", mcp_resources_templates_list, false },
        { "resources/read",           mcp_resources_read,           false },
        { "skills/list",              mcp_skills_list,              false },
        { "skills/get",               mcp_skills_get,               false },
};

static int handle_request(McpServer *s, const JsonRpcMessage *m) {
        _cleanup_(jsonrpc_error_done) JsonRpcError e = {};
        cJSON *result = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
                if (!streq(m->method, methods[i].name))
                        continue;
                if (!s->initialized && !methods[i].before_init)
                        return mcp_send_error(s, m->id, JSONRPC_INVALID_REQUEST,
                                              "Invalid Request: the session is not initialized; send initialize first");
                r = methods[i].handler(s, m, &result, &e);
                if (r == 1)
                        return 0;       /* answered later */
                if (r == -EBADMSG)
                        return mcp_send_error(s, m->id, e.code, e.message ?: "Invalid Request");
                if (r < 0) {
                        log_warning_errno(r, "%s failed: %m", m->method);
                        return mcp_send_error(s, m->id, JSONRPC_INTERNAL_ERROR,
                                              r == -ENOMEM ? "Internal error: out of memory" : "Internal error");
                }
                return mcp_send_result(s, m->id, result);
        }
        return mcp_send_error(s, m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found");
}

static void handle_notification(McpServer *s, const JsonRpcMessage *m) {
        if (streq(m->method, "notifications/cancelled")) {
                const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->params, "requestId");
                _cleanup_free_ char *raw = NULL;
                size_t n;
                const char *t;

                if (!cJSON_IsString(id) && !cJSON_IsNumber(id))
                        return;
                t = json_find_raw(m->text, "params\nrequestId", &n);
                raw = t ? strndup(t, n) : cJSON_PrintUnformatted(id);
                if (raw)
                        mcp_run_cancel(s, raw);
                return;
        }
        /* notifications/initialized, progress, roots/list_changed: nothing to do. */
        log_debug("Notification %s.", m->method);
}

static void handle_line(McpServer *s, const char *line, size_t size, bool too_long) {
        _cleanup_(jsonrpc_message_done) JsonRpcMessage m = {};
        _cleanup_(jsonrpc_error_done) JsonRpcError e = {};
        int r;

        if (too_long) {
                (void) mcp_send_error(s, NULL, JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: the message is longer than the 48 MiB this server reads");
                return;
        }
        r = jsonrpc_decode(line, size, &m, &e);
        if (r == -EBADMSG) {
                (void) mcp_send_error(s, e.id, e.code, e.message ?: "Invalid Request");
                return;
        }
        if (r < 0) {
                (void) mcp_send_error(s, NULL, JSONRPC_INTERNAL_ERROR, "Internal error: out of memory");
                return;
        }

        switch (m.kind) {
        case JSONRPC_REQUEST:
                (void) handle_request(s, &m);
                break;
        case JSONRPC_NOTIFICATION:
                handle_notification(s, &m);
                break;
        case JSONRPC_RESPONSE:
        default:
                /* We never ask the client anything. */
                log_debug("Ignoring a response to id %s.", m.id);
                break;
        }
}

/* Each line is answered (or not) on its own: a failure to answer one must not drop the lines
 * read with it, so this never fails the reader. */
static int on_line(const char *line, size_t size, bool too_long, void *userdata) {
        McpServer *s = userdata;

        if (!s->stopping)
                handle_line(s, line, size, too_long);
        return 0;
}

void mcp_maybe_exit(McpServer *s) {
        if ((s->stdin_closed || s->stopping) && !s->runs)
                (void) sym_sd_event_exit(s->event, 0);
}

static int on_stdin(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        McpServer *s = userdata;
        char buf[64 * 1024];
        ssize_t n;
        int r;

        n = read(STDIN_FILENO, buf, sizeof(buf));
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                log_debug_errno(errno, "Reading stdin failed, as if closed: %m");
                n = 0;
        }
        if (n == 0) {
                (void) line_reader_finish(&s->reader, on_line, s);
                s->stdin_source = sym_sd_event_source_disable_unref(s->stdin_source);
                s->stdin_closed = true;
                /* Nobody will read the results: runs still going are canceled. */
                mcp_runs_stop_all(s);
                mcp_maybe_exit(s);
                return 0;
        }
        r = line_reader_feed(&s->reader, buf, n, on_line, s);
        if (r < 0) {
                /* Only running out of memory for a line gets here. */
                log_error_errno(r, "Reading a message failed, stopping: %m");
                s->stopping = true;
                mcp_runs_stop_all(s);
        }
        if (s->stopping)
                mcp_maybe_exit(s);
        return 0;
}

/* stdin as a regular file (a redirect) cannot be polled: read it, a chunk per loop iteration. */
static int on_stdin_defer(sd_event_source *source, void *userdata) {
        return on_stdin(source, STDIN_FILENO, EPOLLIN, userdata);
}

static int on_signal(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        McpServer *s = userdata;

        log_debug("Signal %u: canceling the runs and stopping.", si->ssi_signo);
        s->stopping = true;
        mcp_runs_stop_all(s);
        mcp_maybe_exit(s);
        return 0;
}

static void help(void) {
        printf("Usage: skillctl mcp [OPTIONS]\n"
               "\n"
               "Serve skills to AI agents over the Model Context Protocol, on stdin and stdout\n"
               "(configure an MCP client to start this command). Tools: list_skills, read_skill,\n"
               "run_skill, exec_skill (a command line), create_session, list_sessions,\n"
               "remove_session; skill files as skill://NAME/PATH resources; the skills extension.\n"
               "\n"
               "Skills offered, the first of a name winning: each --skills-dir, the user's skill folders\n"
               "as 'skillctl run NAME' searches them (./.claude/skills, ./.agents/skills,\n"
               "$XDG_DATA_HOME/skills, ~/.claude/skills, ~/.agents/skills; $SKILLCTL_SKILLS_PATH), then the\n"
               "skills installed on the skilld service.\n"
               "\n"
               "Options:\n"
               "     --skills-dir DIR   Offer the skills in DIR (each subfolder, or DIR itself); repeatable\n"
               "     --local            Run skills in this process, without the skilld service\n"
               "     --system           Require the skilld service; never run embedded\n"
               "  -h --help             Show this help\n");
}

/* After the --skills-dir folders, the user's skill folders, as skillctl run finds skills by name
 * (skill-path.h: the same folders in the same order, $SKILLCTL_SKILLS_PATH included). */
static int search_dirs_default(char ***l) {
        _cleanup_strv_free_ char **folders = NULL;
        int r;

        r = skill_path_folders(&folders);
        if (r < 0)
                return r;
        STRV_FOREACH(f, folders) {
                if (strv_contains(*l, *f))
                        continue;
                r = strv_extend(l, *f);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void server_done(McpServer *s) {
        mcp_runs_free(s);
        for (size_t i = 0; i < s->n_kept; i++) {
                free(s->kept[i].run_id);
                free(s->kept[i].dir);
        }
        if (s->work_dir)
                (void) rm_rf_at(AT_FDCWD, s->work_dir);
        free(s->work_dir);
        free(s->self);
        s->stdin_source = sym_sd_event_source_disable_unref(s->stdin_source);
        s->event = sym_sd_event_unref(s->event);
        line_reader_done(&s->reader);
        strv_free(s->search_dirs);
        s->client = client_free(s->client);
}

static int parse_args(int argc, char *argv[], McpServer *s) {
        enum { ARG_SKILLS_DIR = 0x100, ARG_LOCAL, ARG_SYSTEM };
        static const struct option options[] = {
                { "help",       no_argument,       NULL, 'h' },
                { "skills-dir", required_argument, NULL, ARG_SKILLS_DIR },
                { "local",      no_argument,       NULL, ARG_LOCAL },
                { "system",     no_argument,       NULL, ARG_SYSTEM },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_SKILLS_DIR: {
                        char *p = realpath(optarg, NULL);
                        struct stat st;

                        if (!p || stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
                                free(p);
                                return usage_error(optarg, "--skills-dir needs an existing folder");
                        }
                        r = strv_push(&s->search_dirs, p);
                        if (r < 0)
                                return log_oom(), EXIT_FAILURE;
                        break;
                }
                case ARG_LOCAL:
                        s->local = true;
                        break;
                case ARG_SYSTEM:
                        s->system = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind < argc)
                return usage_error("mcp", "takes no arguments (try 'skillctl mcp --help')");
        if (s->local && s->system)
                return usage_error("mcp", "--local and --system exclude each other");
        if (s->local && arg_host)
                return usage_error("mcp", "--local and -H exclude each other");
        return -1;
}

int verb_mcp(int argc, char *argv[]) {
        _cleanup_(server_done) McpServer s = {};
        _cleanup_free_ char *reason = NULL;
        const char *bases[] = { getenv("XDG_RUNTIME_DIR"), "/tmp" };
        _cleanup_free_ char *template = NULL, *error = NULL;
        sigset_t mask;
        int r;

        r = parse_args(argc, argv, &s);
        if (r >= 0)
                return r;
        r = search_dirs_default(&s.search_dirs);
        if (r < 0)
                return log_oom(), EXIT_FAILURE;

        /* The mode is settled once: runs of one session all go the same way. */
        if (!s.local) {
                r = client_open_lasting(&s.client, &reason);
                if (r < 0)
                        return log_error_errno(r, "%s", reason ?: strerror(-r)), EXIT_FAILURE;
                if (r == 0) {
                        if (s.system || arg_host)
                                return log_error("No skilld service answered, and %s forbids running embedded: %s",
                                                 s.system ? "--system" : "-H", strna(reason)), EXIT_FAILURE;
                        log_info("No skilld service answered (%s): skills run embedded.", strna(reason));
                        s.local = true;
                } else {
                        s.system = true;
                        log_debug("Skills run through the skilld service on %s.", s.client->where);
                }
        }

        /* The path, not /proc/self/exe at exec time: under a wrapper (valgrind) that is the
         * wrapper's. */
        s.self = realpath("/proc/self/exe", NULL);
        if (!s.self)
                return log_error_errno(errno, "Failed to find our own executable: %m"), EXIT_FAILURE;

        /* Inputs and outputs of runs, private to us, removed when we go: in our runtime folder,
         * or /tmp where there is none (or it is another user's, inherited through su). */
        for (size_t i = 0; i < ELEMENTSOF(bases) && !s.work_dir; i++) {
                if (isempty(bases[i]))
                        continue;
                free(template);
                template = strdup_printf("%s/skillctl-mcp-XXXXXX", bases[i]);
                if (!template)
                        return log_oom(), EXIT_FAILURE;
                if (mkdtemp(template))
                        s.work_dir = TAKE_PTR(template);
        }
        if (!s.work_dir)
                return log_error_errno(errno, "Failed to create a work folder in /tmp: %m"), EXIT_FAILURE;

        /* Signals and children come through the loop; runs are our children. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) signal(SIGPIPE, SIG_IGN);

        /* Loaded already when a service answered; the embedded mode needs it for sd-event alone. */
        r = dlopen_libsystemd("the MCP server's event loop", &error);
        if (r < 0)
                return log_error("%s", error), EXIT_FAILURE;
        r = sym_sd_event_new(&s.event);
        if (r >= 0)
                r = sym_sd_event_add_signal(s.event, NULL, SIGTERM, on_signal, &s);
        if (r >= 0)
                r = sym_sd_event_add_signal(s.event, NULL, SIGINT, on_signal, &s);
        if (r >= 0)
                r = sym_sd_event_add_signal(s.event, NULL, SIGHUP, on_signal, &s);
        if (r >= 0) {
                r = sym_sd_event_add_io(s.event, &s.stdin_source, STDIN_FILENO, EPOLLIN, on_stdin, &s);
                if (r == -EPERM)
                        r = sym_sd_event_add_defer(s.event, &s.stdin_source, on_stdin_defer, &s);
                if (r >= 0)
                        r = sym_sd_event_source_set_enabled(s.stdin_source, SD_EVENT_ON);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m"), EXIT_FAILURE;

        r = sym_sd_event_loop(s.event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m"), EXIT_FAILURE;
        return 0;
}
