/* The verbs on runs the skilld service keeps: list, status, logs, result, artifacts, cancel, wait,
 * rm. Each is one or two calls of the io.skilld.Skilld1 API; the service decides who sees what
 * (the owner their own runs, io.skilld.manage-runs everyone's), skillctl only reports.
 *
 * Exit status: 0; 1 when the service refused or failed; 2 usage; 4 no such run or artifact.
 * result and wait return the run's exit status, as run does, and 125 for their own failures. */
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>

#include "bus-client.h"
#include "fetch.h"
#include "fileio.h"
#include "log.h"
#include "output.h"
#include "parse-util.h"
#include "run-result.h"
#include "verbs.h"
#include "term-escape.h"

/* How often logs -f looks for more output of a running run. */
#define FOLLOW_INTERVAL_USEC (250ULL * 1000)
/* How often wait and logs -f ask for the state when no RunFinished came. */
#define WAIT_RECHECK_USEC (5ULL * 1000000)

typedef struct NamedValue {
        char *name;
        uint64_t value;
} NamedValue;

/* The properties of a run object. */
typedef struct RunInfo {
        char *id, *skill, *skill_hash, *script, *state, *status, *result, *unit;
        char **args;
        uint32_t owner;
        int32_t exit_code, signal;
        int network;
        uint64_t created, started, finished;
        NamedValue *limits, *usage;
        size_t n_limits, n_usage;
} RunInfo;

static void named_values_free(NamedValue *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

static void run_info_done(RunInfo *i) {
        free(i->id);
        free(i->skill);
        free(i->skill_hash);
        free(i->script);
        free(i->state);
        free(i->status);
        free(i->result);
        free(i->unit);
        strv_free(i->args);
        named_values_free(i->limits, i->n_limits);
        named_values_free(i->usage, i->n_usage);
}

static bool state_is_final(const char *state) {
        return streq_ptr(state, "finished") || streq_ptr(state, "interrupted");
}

static int read_named_values(sd_bus_message *m, NamedValue **ret, size_t *ret_n) {
        NamedValue *v = NULL;
        size_t n = 0;
        const char *name;
        uint64_t value;
        int r;

        r = sym_sd_bus_message_enter_container(m, 'a', "{st}");
        if (r < 0)
                return r;
        while ((r = sym_sd_bus_message_read(m, "{st}", &name, &value)) > 0) {
                NamedValue *t = reallocarray(v, n + 1, sizeof(NamedValue));

                if (!t) {
                        named_values_free(v, n);
                        return -ENOMEM;
                }
                v = t;
                v[n].name = strdup(name);
                v[n].value = value;
                if (!v[n].name) {
                        named_values_free(v, n);
                        return -ENOMEM;
                }
                n++;
        }
        if (r >= 0)
                r = sym_sd_bus_message_exit_container(m);
        if (r < 0) {
                named_values_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* One property of GetAll's a{sv}, read if its type is the one the API has, else skipped: a
 * newer service may add properties, and a wrong type is not worth failing the whole status. */
static int read_property(sd_bus_message *m, const char *name, RunInfo *i) {
        static const struct {
                const char *name;
                const char *signature;
                size_t offset;
        } table[] = {
                { "Id",                "s",     offsetof(RunInfo, id) },
                { "Skill",             "s",     offsetof(RunInfo, skill) },
                { "SkillHash",         "s",     offsetof(RunInfo, skill_hash) },
                { "Script",            "s",     offsetof(RunInfo, script) },
                { "State",             "s",     offsetof(RunInfo, state) },
                { "Status",            "s",     offsetof(RunInfo, status) },
                { "Result",            "s",     offsetof(RunInfo, result) },
                { "Unit",              "s",     offsetof(RunInfo, unit) },
                { "Args",              "as",    offsetof(RunInfo, args) },
                { "Owner",             "u",     offsetof(RunInfo, owner) },
                { "ExitCode",          "i",     offsetof(RunInfo, exit_code) },
                { "Signal",            "i",     offsetof(RunInfo, signal) },
                { "Network",           "b",     offsetof(RunInfo, network) },
                { "CreatedTimestamp",  "t",     offsetof(RunInfo, created) },
                { "StartedTimestamp",  "t",     offsetof(RunInfo, started) },
                { "FinishedTimestamp", "t",     offsetof(RunInfo, finished) },
                { "Limits",            "a{st}", offsetof(RunInfo, limits) },
                { "Usage",             "a{st}", offsetof(RunInfo, usage) },
        };
        const char *contents;
        char type;
        int r;

        r = sym_sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(table); k++) {
                void *p = (uint8_t *) i + table[k].offset;

                if (!streq(name, table[k].name) || !streq(contents, table[k].signature))
                        continue;
                r = sym_sd_bus_message_enter_container(m, 'v', contents);
                if (r < 0)
                        return r;
                switch (contents[0]) {
                case 's': {
                        const char *s;

                        r = sym_sd_bus_message_read(m, "s", &s);
                        if (r >= 0) {
                                free(*(char **) p);
                                *(char **) p = strdup(s);
                                if (!*(char **) p)
                                        r = -ENOMEM;
                        }
                        break;
                }
                case 'a':
                        if (streq(contents, "as")) {
                                strv_free(*(char ***) p);
                                *(char ***) p = NULL;
                                r = sym_sd_bus_message_read_strv(m, (char ***) p);
                        } else if (p == &i->limits)
                                r = read_named_values(m, &i->limits, &i->n_limits);
                        else
                                r = read_named_values(m, &i->usage, &i->n_usage);
                        break;
                default:
                        r = sym_sd_bus_message_read_basic(m, contents[0], p);
                        break;
                }
                if (r < 0)
                        return r;
                return sym_sd_bus_message_exit_container(m);
        }
        return sym_sd_bus_message_skip(m, "v");
}

static int run_info_get(Client *c, const char *id, const char *path, RunInfo *ret) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *what = strdup_printf("run %s", id);
        RunInfo i = { .exit_code = -1 };
        const char *name;
        int r;

        if (!what)
                return log_oom();
        r = client_call_method(c, path, "org.freedesktop.DBus.Properties", "GetAll", &e, &reply, "s",
                               SKILLD_BUS_RUN);
        if (r < 0)
                return client_log_error(what, &e, r);

        r = sym_sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sym_sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sym_sd_bus_message_read(reply, "s", &name);
                if (r >= 0)
                        r = read_property(reply, name, &i);
                if (r >= 0)
                        r = sym_sd_bus_message_exit_container(reply);
        }
        if (r < 0) {
                run_info_done(&i);
                return log_error_errno(r, "%s: cannot parse the properties: %m", what);
        }
        *ret = i;
        return 0;
}

/* The owner for people: a name when the uid is one of this host's (not over -H). */
static char *owner_name(uint32_t uid) {
        struct passwd pw, *res = NULL;
        char buf[1024];

        if (!arg_host && getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
                return strdup(res->pw_name);
        return strdup_printf("%" PRIu32, uid);
}

/* owner_name() with every answer kept: a listing has thousands of rows, and each lookup in the
 * user database goes through NSS (files, and systemd's userdb for a uid no file knows). An
 * open-addressing table from uid to name, doubled when half full. */
typedef struct OwnerCache {
        uint32_t *uid;
        char **name;
        size_t size;
        size_t used;
} OwnerCache;

static void owner_cache_done(OwnerCache *c) {
        for (size_t i = 0; i < c->size; i++)
                free(c->name[i]);
        free(c->name);
        free(c->uid);
        *c = (OwnerCache) {};
}

static size_t owner_cache_slot(const OwnerCache *c, uint32_t uid) {
        size_t i = (size_t) uid * 2654435761U % c->size;

        while (c->name[i] && c->uid[i] != uid)
                i = (i + 1) % c->size;
        return i;
}

static int owner_cache_grow(OwnerCache *c) {
        OwnerCache n = { .size = MAX(c->size * 2, (size_t) 64) };

        n.uid = calloc(n.size, sizeof(uint32_t));
        n.name = calloc(n.size, sizeof(char *));
        if (!n.uid || !n.name) {
                free(n.uid);
                free(n.name);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->size; i++)
                if (c->name[i]) {
                        size_t k = owner_cache_slot(&n, c->uid[i]);

                        n.uid[k] = c->uid[i];
                        n.name[k] = c->name[i];
                        n.used++;
                }
        free(c->uid);
        free(c->name);
        *c = n;
        return 0;
}

static const char *owner_cache_name(OwnerCache *c, uint32_t uid) {
        size_t k;

        if ((c->used + 1) * 2 > c->size && owner_cache_grow(c) < 0)
                return NULL;
        k = owner_cache_slot(c, uid);
        if (!c->name[k]) {
                c->name[k] = owner_name(uid);
                if (!c->name[k])
                        return NULL;
                c->uid[k] = uid;
                c->used++;
        }
        return c->name[k];
}

/* Parses "--json" (when json is given) and "--help" for verbs that take run ids and nothing else.
 * Returns 1 to go on, 0 after --help, or the negative exit status after a usage error. */
static int parse_simple(int argc, char *argv[], const char *usage, const char *text, bool *json) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        printf("Usage: skillctl %s\n\n%s\n", usage, text);
                        return 0;
                case 'j':
                        if (!json)
                                return -usage_error(argv[0], "--json is not an option here");
                        *json = true;
                        break;
                default:
                        return -EXIT_USAGE;
                }
        if (optind >= argc)
                return -usage_error(argv[0], "expects a run id");
        return 1;
}

/* The table shows the newest runs by default, as journalctl shows the last lines: a store keeps
 * thousands (100 000 sent whole take a second), and a person reads the latest. */
#define LIST_LINES_DEFAULT 100U
/* What one ListRunsFiltered() reply carries at most (about 2 MB): a listing of everything comes in
 * pages, each far below the bus's limit on a message's size. */
#define LIST_PAGE_MAX 10000U

/* Where the rows go: printed at once (--quiet), into the JSON array or into the table. */
typedef struct ListOutput {
        bool quiet;
        cJSON *arr;
        Table *t;
        OwnerCache owners;
} ListOutput;

static int list_add_run(ListOutput *o, const char *id, const char *path, const char *skill, const char *script,
                        uint32_t owner, const char *state, const char *status, int32_t exit_code,
                        uint64_t created, uint64_t ended) {
        _cleanup_free_ char *st = NULL;
        char ts[FORMAT_TIMESTAMP_MAX];
        const char *user;
        cJSON *j;

        if (o->quiet) {
                (void) fputs(id, stdout);
                (void) fputc('\n', stdout);
                return 0;
        }
        if (o->arr) {
                j = cJSON_CreateObject();
                if (!j || !cJSON_AddItemToArray(o->arr, j))
                        return cJSON_Delete(j), -ENOMEM;
                if (!cJSON_AddStringToObject(j, "id", id) ||
                    !cJSON_AddStringToObject(j, "object", path) ||
                    !cJSON_AddStringToObject(j, "skill", skill) ||
                    !cJSON_AddStringToObject(j, "script", script) ||
                    !cJSON_AddItemToObject(j, "owner", json_u64(owner)) ||
                    !cJSON_AddStringToObject(j, "state", state) ||
                    !cJSON_AddItemToObject(j, "status", isempty(status) ? cJSON_CreateNull()
                                                                        : cJSON_CreateString(status)) ||
                    !cJSON_AddItemToObject(j, "exit_code", exit_code >= 0 ? cJSON_CreateNumber(exit_code)
                                                                         : cJSON_CreateNull()) ||
                    !cJSON_AddItemToObject(j, "created_usec", json_u64(created)) ||
                    !cJSON_AddItemToObject(j, "ended_usec", ended > 0 ? json_u64(ended) : cJSON_CreateNull()))
                        return -ENOMEM;
                return 0;
        }

        user = owner_cache_name(&o->owners, owner);
        if (isempty(status))
                st = strdup("-");
        else if (exit_code >= 0)
                st = strdup_printf("%s (%" PRIi32 ")", status, exit_code);
        else
                st = strdup(status);
        if (!st || !user ||
            table_add(o->t, id) < 0 || table_add(o->t, skill) < 0 || table_add(o->t, script) < 0 ||
            table_add(o->t, user) < 0 || table_add(o->t, state) < 0 || table_add(o->t, st) < 0 ||
            table_add(o->t, format_timestamp_short(ts, sizeof(ts), created)) < 0)
                return -ENOMEM;
        return 0;
}

/* Adds the runs of reply's a(sossussitt), at its current position, but the first skip of them. */
static int list_add_runs(ListOutput *o, sd_bus_message *reply, uint64_t skip) {
        const char *id, *path, *skill, *script, *state, *status;
        uint64_t created, ended;
        uint32_t owner;
        int32_t exit_code;
        int r;

        r = sym_sd_bus_message_enter_container(reply, 'a', "(sossussitt)");
        for (; r >= 0 && skip > 0; skip--)
                r = sym_sd_bus_message_skip(reply, "(sossussitt)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(sossussitt)", &id, &path, &skill, &script,
                                                      &owner, &state, &status, &exit_code, &created,
                                                      &ended)) > 0) {
                r = list_add_run(o, id, path, skill, script, owner, state, status, exit_code, created, ended);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sym_sd_bus_message_exit_container(reply);
}

/* The newest lines runs (UINT64_MAX: all) through ListRunsFiltered(), a page a call, each page
 * paging back from the one before: the replies newest page first, and how many older runs were
 * left out. -EOPNOTSUPP, with error set, from a service older than the method. */
static int list_fetch(Client *c, bool all, uint64_t lines, sd_bus_message ***ret_pages, size_t *ret_n,
                      uint64_t *ret_older, sd_bus_error *error) {
        sd_bus_message **pages = NULL;
        _cleanup_free_ char *cursor = NULL;
        size_t n = 0;
        uint64_t got = 0, older = 0;
        int r = 0;

        for (;;) {
                _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
                uint32_t limit = (uint32_t) MIN(lines - got, (uint64_t) LIST_PAGE_MAX);
                sd_bus_message **l;
                const char *next;

                r = client_new_call(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListRunsFiltered", &m);
                if (r >= 0)
                        r = sym_sd_bus_message_open_container(m, 'a', "{sv}");
                if (r >= 0)
                        r = sym_sd_bus_message_append(m, "{sv}", "limit", "u", limit);
                if (r >= 0 && all)
                        r = sym_sd_bus_message_append(m, "{sv}", "all", "b", 1);
                if (r >= 0 && cursor)
                        r = sym_sd_bus_message_append(m, "{sv}", "before", "s", cursor);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
                if (r < 0)
                        break;
                r = client_call(c, m, error, &reply);
                if (r < 0) {
                        if (n == 0 && sym_sd_bus_error_has_name(error, SD_BUS_ERROR_UNKNOWN_METHOD))
                                r = -EOPNOTSUPP;
                        break;
                }
                /* The count and the cursor come first; the runs are read later, the reply left at
                 * them. */
                r = sym_sd_bus_message_read(reply, "ts", &older, &next);
                if (r < 0)
                        break;
                l = reallocarray(pages, n + 1, sizeof(sd_bus_message *));
                if (!l) {
                        r = -ENOMEM;
                        break;
                }
                pages = l;
                pages[n++] = TAKE_PTR(reply);
                /* A page with older runs left out is full. */
                got += limit;
                if (older == 0 || got >= lines)
                        break;
                free(cursor);
                cursor = strdup(next);
                if (!cursor) {
                        r = -ENOMEM;
                        break;
                }
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        sym_sd_bus_message_unref(pages[i]);
                free(pages);
                return r;
        }
        *ret_pages = pages;
        *ret_n = n;
        *ret_older = older;
        return 0;
}

/* The same from ListRuns() or ListAllRuns(), for a service older than ListRunsFiltered(): all of
 * them come, the oldest beyond lines are skipped here. */
static int list_fetch_compat(Client *c, bool all, uint64_t lines, sd_bus_message **ret_reply, uint64_t *ret_skip,
                             sd_bus_error *error) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t n = 0;
        int r;

        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, all ? "ListAllRuns" : "ListRuns", error,
                               &reply, NULL);
        if (r < 0)
                return r;
        if (lines != UINT64_MAX) {
                r = sym_sd_bus_message_enter_container(reply, 'a', "(sossussitt)");
                while (r >= 0 && (r = sym_sd_bus_message_skip(reply, "(sossussitt)")) > 0)
                        n++;
                if (r >= 0)
                        r = sym_sd_bus_message_rewind(reply, true);
                if (r < 0)
                        return r;
        }
        *ret_reply = TAKE_PTR(reply);
        *ret_skip = n > lines ? n - lines : 0;
        return 0;
}

static int parse_lines(const char *s, uint64_t *ret) {
        uint64_t n;

        if (streq(s, "all")) {
                *ret = UINT64_MAX;
                return 0;
        }
        if (safe_atou64(s, &n) < 0 || n == 0 || n == UINT64_MAX)
                return -EINVAL;
        *ret = n;
        return 0;
}

int verb_list(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "all",   no_argument, NULL, 'a' },
                { "json",  no_argument, NULL, 'j' },
                { "quiet", no_argument, NULL, 'q' },
                { "lines", required_argument, NULL, 'n' },
                {}
        };
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *compat = NULL;
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_(cJSON_Deletep) cJSON *arr = NULL;
        ListOutput o = {};
        sd_bus_message **pages = NULL;
        size_t n_pages = 0;
        bool all = false, json = false, quiet = false, lines_set = false;
        uint64_t lines = UINT64_MAX, older = 0;
        int ch, r;

        while ((ch = getopt_long(argc, argv, "haqn:", options, NULL)) >= 0)
                switch (ch) {
                case 'h':
                        printf("Usage: skillctl list [--all] [-n N|--lines=N|--lines=all] [--json|--quiet]\n\n"
                               "List your runs, oldest first (--all: everyone's, as an administrator).\n"
                               "The table shows the newest %u, --json and --quiet every run; -n N the newest N,\n"
                               "--lines=all every run. --quiet prints only their ids, one a line (for scripts\n"
                               "and completions).\n", LIST_LINES_DEFAULT);
                        return 0;
                case 'q':
                        quiet = true;
                        break;
                case 'a':
                        all = true;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'n':
                        if (parse_lines(optarg, &lines) < 0)
                                return usage_error("list", "--lines takes a number of runs (1 or more) or 'all'");
                        lines_set = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind < argc)
                return usage_error("list", "takes no arguments");
        if (!lines_set && !json && !quiet)
                lines = LIST_LINES_DEFAULT;

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        if (all)
                client_polkit_agent_open(c);
        r = list_fetch(c, all, lines, &pages, &n_pages, &older, &e);
        if (r == -EOPNOTSUPP) {
                sym_sd_bus_error_free(&e);
                r = list_fetch_compat(c, all, lines, &compat, &older, &e);
        }
        if (r < 0)
                return client_exit_status(client_log_error(all ? "list --all" : "list", &e, r));

        /* Only what is printed is built: the table or the JSON array. */
        if (json)
                arr = cJSON_CreateArray();
        else if (!quiet)
                t = table_new(7, "RUN", "SKILL", "SCRIPT", "OWNER", "STATE", "STATUS", "CREATED");
        if (json ? !arr : !quiet && !t)
                r = -ENOMEM;
        o = (ListOutput) { .quiet = quiet && !json, .arr = arr, .t = t };
        /* Oldest first: the pages came newest first. */
        if (r >= 0 && compat)
                r = list_add_runs(&o, compat, older);
        for (size_t i = n_pages; r >= 0 && i > 0; i--)
                r = list_add_runs(&o, pages[i - 1], 0);
        for (size_t i = 0; i < n_pages; i++)
                sym_sd_bus_message_unref(pages[i]);
        free(pages);
        owner_cache_done(&o.owners);
        if (r == -ENOMEM)
                return log_oom(), EXIT_FAILURE;
        if (r < 0)
                return log_error_errno(r, "Failed to parse the run list: %m"), EXIT_FAILURE;
        if (quiet && !json)
                return EXIT_SUCCESS;

        r = listing_print(t, arr, json, "run", "listed");
        if (r == 0 && older > 0 && !json) {
                /* After the table, also where both go to one file. */
                (void) fflush(stdout);
                fprintf(stderr, "%" PRIu64 " older run%s not shown; --lines=all lists every run.\n", older,
                        older == 1 ? "" : "s");
        }
        return r;
}

/* The API's keys of Limits and Usage as people say them; a key not listed shows as it is. */
static const char *named_label(const char *name) {
        static const char *const labels[][2] = {
                { "memory", "memory" },          { "tasks", "tasks" },
                { "cpu", "CPU" },                { "timeout", "time" },
                { "output", "output" },          { "tmpfs", "temporary files" },
                { "wall-usec", "wall time" },    { "cpu-user-usec", "CPU user" },
                { "cpu-system-usec", "CPU system" }, { "memory-peak", "peak memory" },
                { "tasks-peak", "peak tasks" },
        };

        for (size_t i = 0; i < ELEMENTSOF(labels); i++)
                if (streq(name, labels[i][0]))
                        return labels[i][1];
        return name;
}

static char *format_named(const NamedValue *v) {
        char buf[FORMAT_BYTES_MAX + FORMAT_TIMESPAN_MAX];
        const char *label = named_label(v->name);

        /* Units by name, as the API documents them: bytes, microseconds, percent, counts. */
        if (streq(v->name, "timeout") || endswith(v->name, "-usec"))
                return strdup_printf("%s %s", label, format_timespan(buf, sizeof(buf), v->value));
        if (streq(v->name, "cpu"))
                return strdup_printf("%s %" PRIu64 "%%", label, v->value);
        if (streq(v->name, "tasks") || streq(v->name, "tasks-peak"))
                return strdup_printf("%s %" PRIu64, label, v->value);
        return strdup_printf("%s %s", label, format_bytes(buf, sizeof(buf), v->value));
}

static void print_named(const char *label, const NamedValue *v, size_t n) {
        printf("%12s:", label);
        for (size_t k = 0; k < n; k++) {
                _cleanup_free_ char *s = format_named(&v[k]);

                printf("%s %s", k > 0 ? "," : "", strna(s));
        }
        printf("%s\n", n == 0 ? " -" : "");
}

static cJSON *named_to_json(const NamedValue *v, size_t n) {
        cJSON *o = cJSON_CreateObject();

        for (size_t k = 0; o && k < n; k++)
                if (!cJSON_AddItemToObject(o, v[k].name, json_u64(v[k].value)))
                        return cJSON_Delete(o), NULL;
        return o;
}

/* The result's refused_syscalls, as the result has it (null while the run has no result). */
static cJSON *refused_json(const RunInfo *i) {
        _cleanup_(cJSON_Deletep) cJSON *j = isempty(i->result) ? NULL : cJSON_Parse(i->result);
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(j, "refused_syscalls");

        return cJSON_IsArray(v) ? v : (cJSON_Delete(v), cJSON_CreateNull());
}

static int status_json(const RunInfo *i, const char *path) {
        _cleanup_(cJSON_Deletep) cJSON *o = cJSON_CreateObject();
        cJSON *args = cJSON_CreateArray();

        if (!o || !args || !cJSON_AddItemToObject(o, "id", cJSON_CreateString(strempty(i->id))))
                return cJSON_Delete(args), -ENOMEM;
        if (!cJSON_AddItemToObject(o, "args", args))
                return cJSON_Delete(args), -ENOMEM;
        STRV_FOREACH(a, i->args)
                if (!cJSON_AddItemToArray(args, cJSON_CreateString(*a)))
                        return -ENOMEM;
        if (!cJSON_AddStringToObject(o, "object", path) ||
            !cJSON_AddStringToObject(o, "skill", strempty(i->skill)) ||
            !cJSON_AddStringToObject(o, "skill_hash", strempty(i->skill_hash)) ||
            !cJSON_AddStringToObject(o, "script", strempty(i->script)) ||
            !cJSON_AddItemToObject(o, "owner", json_u64(i->owner)) ||
            !cJSON_AddStringToObject(o, "state", strempty(i->state)) ||
            !cJSON_AddItemToObject(o, "status", isempty(i->status) ? cJSON_CreateNull()
                                                                   : cJSON_CreateString(i->status)) ||
            !cJSON_AddItemToObject(o, "exit_code", i->exit_code >= 0 ? cJSON_CreateNumber(i->exit_code)
                                                                    : cJSON_CreateNull()) ||
            !cJSON_AddItemToObject(o, "signal", i->signal > 0 ? cJSON_CreateNumber(i->signal)
                                                             : cJSON_CreateNull()) ||
            !cJSON_AddItemToObject(o, "unit", isempty(i->unit) ? cJSON_CreateNull()
                                                               : cJSON_CreateString(i->unit)) ||
            !cJSON_AddBoolToObject(o, "network", i->network) ||
            !cJSON_AddItemToObject(o, "limits", named_to_json(i->limits, i->n_limits)) ||
            !cJSON_AddItemToObject(o, "usage", named_to_json(i->usage, i->n_usage)) ||
            !cJSON_AddItemToObject(o, "refused_syscalls", refused_json(i)) ||
            !cJSON_AddItemToObject(o, "created_usec", json_u64(i->created)) ||
            !cJSON_AddItemToObject(o, "started_usec", i->started ? json_u64(i->started)
                                                                 : cJSON_CreateNull()) ||
            !cJSON_AddItemToObject(o, "finished_usec", i->finished ? json_u64(i->finished)
                                                                   : cJSON_CreateNull()))
                return -ENOMEM;
        return json_print(o);
}

/* "Refused: socket(AF_PACKET), mount": what the filter refused, once the run has a result that
 * says (a run that was refused nothing, or predates the field, prints no line). */
static void print_refused(const RunInfo *i) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_free_ char *list = NULL;

        if (isempty(i->result) || run_result_from_json(i->result, &j, &res) < 0)
                return;
        if (res->n_refused == 0 && !res->refused_truncated)
                return;
        if (run_result_refused_string(res, &list) >= 0)
                printf("%12s: %s\n", "Refused", list);
}

static void status_print(const RunInfo *i) {
        _cleanup_free_ char *skill = cescape(strempty(i->skill)), *script = cescape(strempty(i->script)),
                            *owner = owner_name(i->owner);
        char ts[FORMAT_TIMESTAMP_MAX], span[FORMAT_TIMESPAN_MAX];

        printf("Run %s: %s\n", strempty(i->id), strna(skill));
        printf("%12s: %s", "Script", strna(script));
        STRV_FOREACH(a, i->args) {
                _cleanup_free_ char *e = cescape(*a);
                printf(" %s", strna(e));
        }
        printf("\n%12s: %s (%" PRIu32 ")\n", "Owner", strna(owner), i->owner);
        printf("%12s: %s", "State", strna(i->state));
        if (!isempty(i->status)) {
                printf(" (%s", i->status);
                if (i->exit_code >= 0)
                        printf(", exit %" PRIi32, i->exit_code);
                if (i->signal > 0)
                        printf(", signal %s", strna(sigabbrev_np(i->signal)));
                printf(")");
        }
        printf("\n%12s: sha256:%s\n", "Skill hash", strna(i->skill_hash));
        printf("%12s: %s\n", "Created", format_timestamp(ts, sizeof(ts), i->created));
        printf("%12s: %s\n", "Started", format_timestamp(ts, sizeof(ts), i->started));
        printf("%12s: %s", "Finished", format_timestamp(ts, sizeof(ts), i->finished));
        if (i->finished > 0 && i->started > 0 && i->finished >= i->started)
                printf(" (after %s)", format_timespan(span, sizeof(span), i->finished - i->started));
        printf("\n");
        if (!isempty(i->unit))
                printf("%12s: %s\n", "Unit", i->unit);
        printf("%12s: %s\n", "Network", i->network ? "yes" : "no");
        print_named("Limits", i->limits, i->n_limits);
        print_named("Usage", i->usage, i->n_usage);
        print_refused(i);
}

int verb_status(int argc, char *argv[]) {
        _cleanup_(client_freep) Client *c = NULL;
        bool json = false;
        int r, ret = 0;

        r = parse_simple(argc, argv, "status ID... [--json]",
                         "Show the state, times, limits and usage of runs.", &json);
        if (r <= 0)
                return r < 0 ? -r : 0;
        r = client_open_or_fail(&c);
        if (r != 0)
                return r;

        for (int k = optind; k < argc; k++) {
                _cleanup_(run_info_done) RunInfo i = {};
                _cleanup_free_ char *id = NULL, *path = NULL;

                r = client_get_run(c, argv[k], &id, &path);
                if (r >= 0)
                        r = run_info_get(c, id, path, &i);
                if (r < 0) {
                        ret = ret ?: client_exit_status(r);
                        continue;
                }
                if (json) {
                        if (status_json(&i, path) < 0)
                                return log_oom(), EXIT_FAILURE;
                } else {
                        if (k > optind)
                                printf("\n");
                        status_print(&i);
                }
        }
        return ret;
}

/* Copies what fd has now to dest, escaped by esc when dest is a terminal (term-escape.h); *eof is
 * set at the end of a pipe, and of a regular file when final (a stored log grows while its run
 * goes). Returns bytes copied or a negative errno. */
static ssize_t drain(int fd, int dest, TermEscape *esc, bool *dest_broken, bool regular, bool final,
                     bool *eof) {
        ssize_t total = 0;

        for (;;) {
                char buf[64 * 1024];
                ssize_t k = read(fd, buf, sizeof(buf));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return total;
                if (k < 0)
                        return -errno;
                if (k == 0) {
                        *eof = !regular || final;
                        if (*eof && !*dest_broken && term_escape_flush(esc, dest) < 0)
                                *dest_broken = true;
                        return total;
                }
                if (!*dest_broken && term_escape_write(esc, dest, buf, k) < 0)
                        *dest_broken = true;
                total += k;
        }
}

typedef struct Follow {
        const char *id;
        bool finished;
} Follow;

static int on_finished(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Follow *f = userdata;
        const char *id;

        if (sym_sd_bus_message_read(m, "s", &id) >= 0 && streq(id, f->id))
                f->finished = true;
        return 0;
}

int verb_logs(int argc, char *argv[]) {
        enum { ARG_STREAM = 0x100 };
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "follow", no_argument,       NULL, 'f' },
                { "stream", required_argument, NULL, ARG_STREAM },
                {}
        };
        static const char *const names[] = { "stdout", "stderr" };
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL, *state = NULL;
        _cleanup_close_pair_ int fds[2] = { -EBADF, -EBADF };
        bool follow = false, want[2] = { true, true }, eof[2] = {}, regular[2] = {}, broken[2] = {};
        TermEscape esc[2];
        uint64_t offset[2] = {};        /* over SSH: how far ReadLog has been read */
        Follow f = {};
        int ch, r;

        while ((ch = getopt_long(argc, argv, "hf", options, NULL)) >= 0)
                switch (ch) {
                case 'h':
                        printf("Usage: skillctl logs ID [-f] [--stream stdout|stderr]\n\n"
                               "Write the stored output of a run: its stdout to stdout, its stderr to\n"
                               "stderr. -f follows a running run until it ends.\n");
                        return 0;
                case 'f':
                        follow = true;
                        break;
                case ARG_STREAM:
                        if (!streq(optarg, "stdout") && !streq(optarg, "stderr"))
                                return usage_error("--stream", "expects stdout or stderr");
                        want[0] = streq(optarg, "stdout");
                        want[1] = !want[0];
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("logs", "expects exactly one run id");

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        r = client_get_run(c, argv[optind], &id, &path);
        if (r < 0)
                return client_exit_status(r);
        f.id = id;

        /* The match before the state: a run ending in between is seen either way. */
        if (follow) {
                r = sym_sd_bus_match_signal(c->bus, &slot, c->destination, SKILLD_BUS_PATH,
                                            SKILLD_BUS_MANAGER, "RunFinished", on_finished, &f);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch run %s: %m", id), EXIT_FAILURE;
        }
        r = client_get_run_string(c, id, path, "State", &state);
        if (r < 0)
                return client_exit_status(r);
        f.finished = !follow || state_is_final(state);

        for (size_t k = 0; k < 2; k++) {
                struct stat st;

                eof[k] = !want[k];
                /* Over SSH no fd passes: the logs are read in chunks, from where we left off. */
                if (!want[k] || !c->can_pass_fds)
                        continue;
                r = client_open_log(c, id, path, names[k], &fds[k]);
                if (r < 0)
                        return client_exit_status(r);
                regular[k] = fstat(fds[k], &st) >= 0 && S_ISREG(st.st_mode);
                /* Our own open file description (OpenLog opens anew): ours to make non-blocking. */
                r = fcntl(fds[k], F_GETFL);
                if (r < 0 || fcntl(fds[k], F_SETFL, r | O_NONBLOCK) < 0)
                        return log_error_errno(errno, "run %s: %s: %m", id, names[k]), EXIT_FAILURE;
        }

        term_escape_init(&esc[0], STDOUT_FILENO);
        term_escape_init(&esc[1], STDERR_FILENO);
        (void) signal(SIGPIPE, SIG_IGN);
        for (uint64_t waited = 0;;) {
                bool final = f.finished;

                for (size_t k = 0; k < 2; k++)
                        if (!eof[k] && !c->can_pass_fds) {
                                r = client_copy_log(c, id, path, names[k], &offset[k],
                                                    k == 0 ? STDOUT_FILENO : STDERR_FILENO, &broken[k]);
                                if (r < 0)
                                        return client_exit_status(r);
                                eof[k] = final;
                        } else if (!eof[k]) {
                                ssize_t n = drain(fds[k], k == 0 ? STDOUT_FILENO : STDERR_FILENO,
                                                  &esc[k], &broken[k], regular[k], final, &eof[k]);
                                if (n < 0)
                                        return log_error_errno(n, "run %s: cannot read %s: %m", id,
                                                               names[k]), EXIT_FAILURE;
                        }
                if (eof[0] && eof[1])
                        break;

                if (final) {
                        /* Only a pipe is left, and it ends when its writer closes it. */
                        struct pollfd p[2];
                        nfds_t n = 0;

                        for (size_t k = 0; k < 2; k++)
                                if (!eof[k])
                                        p[n++] = (struct pollfd) { .fd = fds[k], .events = POLLIN };
                        (void) poll(p, n, -1);
                        continue;
                }

                /* A stored log grows without telling: look again soon, or at the end. */
                r = sym_sd_bus_wait(c->bus, FOLLOW_INTERVAL_USEC);
                while (r >= 0 && (r = sym_sd_bus_process(c->bus, NULL)) > 0)
                        ;
                if (r < 0)
                        return log_error_errno(r, "run %s: lost the service: %m", id), EXIT_FAILURE;
                waited += FOLLOW_INTERVAL_USEC;
                if (!f.finished && waited >= WAIT_RECHECK_USEC) {
                        _cleanup_free_ char *now = NULL;

                        /* As wait does: a service that died sends no RunFinished. */
                        waited = 0;
                        r = client_get_run_string(c, id, path, "State", &now);
                        if (r < 0)
                                return client_exit_status(r);
                        f.finished = state_is_final(now);
                }
        }
        return 0;
}

/* Prints a run's result as run does (summary, or the JSON) and returns run's exit status. */
static int print_result(Client *c, const char *id, const char *path, bool json) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_free_ char *result = NULL, *state = NULL, *where = NULL;
        const cJSON *output;
        int r;

        r = client_get_run_string(c, id, path, "Result", &result);
        if (r < 0)
                return EXIT_RUN_FAILED;
        if (isempty(result)) {
                if (client_get_run_string(c, id, path, "State", &state) < 0)
                        return EXIT_RUN_FAILED;
                log_error("run %s: has no result (%s)", id,
                          streq(state, "interrupted") ? "interrupted: the service stopped under it" : state);
                return EXIT_RUN_FAILED;
        }
        r = run_result_from_json(result, &j, &res);
        if (r < 0) {
                log_error("run %s: the service's result is not one skillctl understands", id);
                return EXIT_RUN_FAILED;
        }

        if (json) {
                if (json_print(j) < 0)
                        return log_oom(), EXIT_RUN_FAILED;
        } else {
                /* The skill's output document on stdout, how it went on stderr: run's split. */
                output = cJSON_GetObjectItemCaseSensitive(j, "output");
                if (output && !cJSON_IsNull(output) && json_print(output) < 0)
                        return log_oom(), EXIT_RUN_FAILED;
                where = strdup_printf("run %s", id);
                if (!where)
                        return log_oom(), EXIT_RUN_FAILED;
                run_summary_print(res, where);
        }
        return run_result_exit_code(res);
}

int verb_result(int argc, char *argv[]) {
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL;
        bool json = false;
        int r;

        r = parse_simple(argc, argv, "result ID [--json]",
                         "Show how a run ended: its output JSON on stdout and the summary on stderr,\n"
                         "or with --json the whole result. Exits with the run's exit status.", &json);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_FAILED : 0;
        if (optind + 1 != argc)
                return usage_error("result", "expects exactly one run id"), EXIT_RUN_FAILED;
        if (client_open_or_fail(&c) != 0)
                return EXIT_RUN_FAILED;
        if (client_get_run(c, argv[optind], &id, &path) < 0)
                return EXIT_RUN_FAILED;
        return print_result(c, id, path, json);
}

/* The match only has to wake sd_bus_wait() up: what happened is read from the run object. */
static int on_wake(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return 0;
}

int verb_wait(int argc, char *argv[]) {
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL;
        bool json = false;
        int r;

        r = parse_simple(argc, argv, "wait ID [--json]",
                         "Wait until a run ended, then report it as 'result' does.", &json);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_FAILED : 0;
        if (optind + 1 != argc)
                return usage_error("wait", "expects exactly one run id"), EXIT_RUN_FAILED;
        if (client_open_or_fail(&c) != 0)
                return EXIT_RUN_FAILED;
        if (client_get_run(c, argv[optind], &id, &path) < 0)
                return EXIT_RUN_FAILED;

        /* The match first, then the state: the end cannot slip in between. The signal only says
         * when to look again; the run object says whether it ended. */
        r = sym_sd_bus_match_signal(c->bus, &slot, c->destination, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER,
                                    "RunFinished", on_wake, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to watch run %s: %m", id), EXIT_RUN_FAILED;
        for (;;) {
                _cleanup_free_ char *state = NULL;

                if (client_get_run_string(c, id, path, "State", &state) < 0)
                        return EXIT_RUN_FAILED;
                if (state_is_final(state))
                        break;

                /* Until a message comes, or a while: a service that died sends no RunFinished, and
                 * asking again activates a new one, which marks the run interrupted. */
                r = sym_sd_bus_wait(c->bus, WAIT_RECHECK_USEC);
                while (r >= 0 && (r = sym_sd_bus_process(c->bus, NULL)) > 0)
                        ;
                if (r < 0)
                        return log_error_errno(r, "run %s: lost the service while waiting: %m", id),
                               EXIT_RUN_FAILED;
        }
        return print_result(c, id, path, json);
}

/* cancel and rm: one method of each run named, errors reported per run. */
static int call_each(int argc, char *argv[], const char *member) {
        _cleanup_(client_freep) Client *c = NULL;
        int r, ret = 0;

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        client_polkit_agent_open(c);
        for (int k = optind; k < argc; k++) {
                _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_free_ char *id = NULL, *path = NULL, *what = NULL;

                r = client_get_run(c, argv[k], &id, &path);
                if (r >= 0) {
                        r = client_call_method(c, path, SKILLD_BUS_RUN, member, &e, NULL, NULL);
                        if (r < 0) {
                                what = strdup_printf("run %s", id);
                                r = client_log_error(what ?: "run", &e, r);
                        }
                }
                if (r < 0)
                        ret = ret ?: client_exit_status(r);
        }
        return ret;
}

int verb_cancel(int argc, char *argv[]) {
        int r;

        r = parse_simple(argc, argv, "cancel ID...",
                         "Stop queued or running runs; they end with status \"canceled\".", NULL);
        if (r <= 0)
                return r < 0 ? -r : 0;
        return call_each(argc, argv, "Cancel");
}

int verb_rm(int argc, char *argv[]) {
        int r;

        r = parse_simple(argc, argv, "rm ID...", "Delete ended runs and everything stored of them.", NULL);
        if (r <= 0)
                return r < 0 ? -r : 0;
        return call_each(argc, argv, "Remove");
}

static int artifacts_list(Client *c, const char *id, const char *path, bool json) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_(cJSON_Deletep) cJSON *arr = NULL;
        ArtifactInfo *list = NULL;
        size_t n = 0;
        int r;

        r = client_list_artifacts(c, id, path, &list, &n);
        if (r < 0)
                return client_exit_status(r);

        t = table_new(3, "SIZE", "SHA256", "PATH");
        arr = cJSON_CreateArray();
        for (size_t k = 0; t && arr && k < n; k++) {
                char size[FORMAT_BYTES_MAX];
                cJSON *o = cJSON_CreateObject();

                if (!o || !cJSON_AddItemToArray(arr, o) ||
                    !cJSON_AddStringToObject(o, "path", list[k].path) ||
                    !cJSON_AddItemToObject(o, "size", json_u64(list[k].size)) ||
                    !cJSON_AddStringToObject(o, "sha256", list[k].sha256) ||
                    table_add(t, format_bytes(size, sizeof(size), list[k].size)) < 0 ||
                    table_add(t, list[k].sha256) < 0 || table_add(t, list[k].path) < 0)
                        r = -ENOMEM;
        }
        artifact_info_free_many(list, n);
        if (!t || !arr || r < 0)
                return log_oom(), EXIT_FAILURE;

        return listing_print(t, arr, json, "artifact", NULL);
}

int verb_artifacts(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "get",    required_argument, NULL, 'g' },
                { "output", required_argument, NULL, 'o' },
                { "json",   no_argument,       NULL, 'j' },
                {}
        };
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_strv_free_ char **get = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const char *dir = NULL;
        bool json = false, to_stdout;
        int ch, r;

        while ((ch = getopt_long(argc, argv, "ho:", options, NULL)) >= 0)
                switch (ch) {
                case 'h':
                        printf("Usage: skillctl artifacts ID [--get PATH]... [-o DIR] [--json]\n\n"
                               "List the files a run left in /out/files, or fetch them: --get PATH fetches\n"
                               "one (repeatable), -o DIR alone fetches all. They are written below DIR\n"
                               "(default: the current directory) under their paths; -o - with one --get\n"
                               "writes it to stdout.\n");
                        return 0;
                case 'g':
                        if (strv_extend(&get, optarg) < 0)
                                return log_oom(), EXIT_FAILURE;
                        break;
                case 'o':
                        dir = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("artifacts", "expects exactly one run id");
        if (json && (get || dir))
                return usage_error("artifacts", "--json lists; it does not go with --get or -o");
        to_stdout = streq_ptr(dir, "-");
        if (to_stdout && (!get || get[1]))
                return usage_error("-o -", "writes exactly one --get PATH to stdout");

        r = client_open_or_fail(&c);
        if (r != 0)
                return r;
        r = client_get_run(c, argv[optind], &id, &path);
        if (r < 0)
                return client_exit_status(r);

        if (!get && !dir)
                return artifacts_list(c, id, path, json);

        if (to_stdout) {
                _cleanup_close_ int fd = -EBADF;
                TermEscape esc;

                r = client_open_artifact(c, id, path, get[0], &fd);
                if (r < 0)
                        return client_exit_status(r);
                (void) signal(SIGPIPE, SIG_IGN);
                term_escape_init(&esc, STDOUT_FILENO);
                for (bool eof = false, broken = false; !eof;) {
                        ssize_t n = drain(fd, STDOUT_FILENO, &esc, &broken, true, true, &eof);

                        if (n < 0)
                                return log_error_errno(n, "run %s: cannot read %s: %m", id, get[0]),
                                       EXIT_FAILURE;
                }
                return 0;
        }

        dir = dir ?: ".";
        r = mkdir_p_at(AT_FDCWD, dir, 0755);
        if (r >= 0) {
                dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = dir_fd < 0 ? -errno : 0;
        }
        if (r < 0)
                return log_error_errno(r, "%s: cannot open: %m", dir), EXIT_FAILURE;

        r = fetch_artifacts(c, id, path, dir_fd, get);
        return r < 0 ? client_exit_status(r) : 0;
}
