/* "skillctl session": sessions, a /work kept between runs of one skill (skilld/session/), for
 * skills whose instructions take several steps over one folder. create, list, show and rm, with
 * --json on each. skillctl's own sessions live in $XDG_STATE_HOME/skilld/sessions and are used by
 * its embedded runs (--local); run --session and exec --session name them.
 *
 * Exit status: 0; 1 when the store refused or failed; 2 usage; 4 no such session. */
#include <getopt.h>

#include "log.h"
#include "output.h"
#include "parse-util.h"
#include "run.h"
#include "session.h"
#include "session-local.h"
#include "session-service.h"
#include "verbs.h"

#define EXIT_NO_SUCH_SESSION 4

typedef struct SessionArgs {
        bool json;
        bool local;
        bool system;
        bool all;
        uint64_t ttl_usec;
        uint64_t quota;
} SessionArgs;

static void help(void) {
        printf("Usage: skillctl session create [--ttl DURATION] [--quota SIZE] [--json] SKILL\n"
               "       skillctl session list [--all] [--json]\n"
               "       skillctl session show ID [--json]\n"
               "       skillctl session rm [--json] ID...\n"
               "\n"
               "A session keeps /work between runs of one skill (and nothing else: /tmp, processes and\n"
               "the rest are fresh each run): 'skillctl run --session ID' and 'skillctl exec --session ID'\n"
               "run in it. It expires after its idle TTL (default 24h) and holds at most its quota.\n"
               "\n"
               "Options:\n"
               "     --ttl DURATION       Idle time until the session expires (create; e.g. 2h, 7d)\n"
               "     --quota SIZE         The most its /work holds (create; default 256M)\n"
               "     --json               Print JSON\n"
               "     --all                Everyone's sessions (list; io.skilld.manage-runs)\n"
               "     --local              skillctl's own sessions, for embedded runs\n"
               "     --system             The skilld service's sessions (the default when it answers)\n"
               "  -h --help               Show this help\n");
}

static int parse(int argc, char *argv[], SessionArgs *a) {
        enum { ARG_TTL = 0x100, ARG_QUOTA, ARG_JSON, ARG_LOCAL, ARG_SYSTEM, ARG_ALL };
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "ttl",    required_argument, NULL, ARG_TTL },
                { "quota",  required_argument, NULL, ARG_QUOTA },
                { "json",   no_argument,       NULL, ARG_JSON },
                { "local",  no_argument,       NULL, ARG_LOCAL },
                { "system", no_argument,       NULL, ARG_SYSTEM },
                { "all",    no_argument,       NULL, ARG_ALL },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_TTL:
                        if (parse_sec(optarg, &a->ttl_usec) < 0 || a->ttl_usec < 1000000 ||
                            a->ttl_usec > SESSION_TTL_MAX_USEC)
                                return usage_error("session", "--ttl: not a duration between 1s and 30d"), -EINVAL;
                        break;
                case ARG_QUOTA:
                        if (parse_size(optarg, &a->quota) < 0 || a->quota < 64 * 1024 ||
                            a->quota > SESSION_QUOTA_MAX)
                                return usage_error("session", "--quota: not a size between 64K and 4G"), -EINVAL;
                        break;
                case ARG_JSON:
                        a->json = true;
                        break;
                case ARG_LOCAL:
                        a->local = true;
                        break;
                case ARG_SYSTEM:
                        a->system = true;
                        break;
                case ARG_ALL:
                        a->all = true;
                        break;
                default:
                        return -EINVAL;
                }
        if (a->local && a->system)
                return usage_error("session", "--local and --system exclude each other"), -EINVAL;
        return 1;
}

/* The service when one answers (1, with *ret), skillctl's own store (0), or the exit status after
 * saying why neither (< 0 is never returned). */
static int session_where(const SessionArgs *a, Client **ret) {
        _cleanup_free_ char *reason = NULL;
        int r;

        if (a->local)
                return 0;
        r = client_open(ret, &reason);
        if (r < 0)
                return log_error("%s", reason ?: strerror(-r)), -EXIT_INVALID;
        if (r > 0)
                return 1;
        if (a->system || arg_host)
                return log_error("no skilld service answered: %s", strna(reason)), -EXIT_INVALID;
        return 0;
}

static void print_time(const char *label, uint64_t usec) {
        char buf[FORMAT_TIMESTAMP_MAX];

        printf("%s%s\n", label, format_timestamp(buf, sizeof(buf), usec));
}

static int print_session(const Session *s, uint64_t usage, bool json) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        char b1[FORMAT_BYTES_MAX], b2[FORMAT_BYTES_MAX];

        if (session_to_json(s, &j) < 0 || !cJSON_AddNumberToObject(j, "usage_bytes", (double) usage))
                return log_oom(), EXIT_INVALID;
        if (json)
                return json_print(j) < 0 ? EXIT_INVALID : 0;
        {
                _cleanup_free_ char *skill = cescape(s->skill);

                printf("      Session: %s\n", s->id);
                printf("        Skill: %s\n", strna(skill));
                printf("        Owner: %u\n", s->owner);
        }
        print_time("      Created: ", s->created_usec);
        print_time("    Last used: ", s->used_usec);
        print_time("      Expires: ", s->used_usec + s->ttl_usec);
        printf("        /work: %s of %s\n", format_bytes(b1, sizeof(b1), usage),
               format_bytes(b2, sizeof(b2), s->quota_bytes));
        return 0;
}

static int session_create_verb(SessionArgs *a, int argc, char *argv[]) {
        _cleanup_(client_freep) Client *client = NULL;
        _cleanup_(session_store_freep) SessionStore *st = NULL;
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_free_ char *error = NULL;
        RunArgs ra = { .skill = NULL, .exec = true };
        int r;

        if (argc != 1)
                return usage_error("session create", "expects exactly one SKILL");
        r = session_where(a, &client);
        if (r < 0)
                return -r;
        if (r > 0) {
                if (a->quota)
                        return usage_error("session create", "--quota is the service's policy's to set");
                r = session_service_create(client, argv[0], a->ttl_usec, &s);
                if (r < 0)
                        return client_exit_status(r);
                if (a->json)
                        return print_session(s, 0, true);
                puts(s->id);
                return 0;
        }
        /* The skill must load as it would for a run; the session is for that skill. */
        ra.skill = argv[0];
        r = run_load_skill(&ra, &skill, NULL);
        if (r != 0)
                return EXIT_INVALID;
        r = session_local_store(&st);
        if (r != 0)
                return r;
        (void) session_gc(st, now_realtime_usec());
        r = session_create(st, getuid(), skill.skill->name, a->ttl_usec ?: SESSION_TTL_DEFAULT_USEC,
                           a->quota ?: SESSION_QUOTA_DEFAULT, SESSION_PER_USER_DEFAULT, &s, &error);
        if (r < 0)
                return log_error_errno(r, "%s", error ?: strerror(-r)), EXIT_INVALID;
        if (a->json)
                return print_session(s, 0, true);
        puts(s->id);
        return 0;
}

static int session_list_verb(SessionArgs *a, int argc) {
        _cleanup_(client_freep) Client *client = NULL;
        _cleanup_free_ uint64_t *usages = NULL;
        _cleanup_(session_store_freep) SessionStore *st = NULL;
        _cleanup_(cJSON_Deletep) cJSON *arr = NULL;
        Session **v = NULL;
        size_t n = 0;
        int r;

        if (argc != 0)
                return usage_error("session list", "takes no arguments");
        r = session_where(a, &client);
        if (r < 0)
                return -r;
        if (r > 0) {
                r = session_service_list(client, a->all, &v, &usages, &n);
                if (r < 0)
                        return client_exit_status(r);
        } else {
                r = session_local_store(&st);
                if (r != 0)
                        return r;
                (void) session_gc(st, now_realtime_usec());
                r = session_list(st, &v, &n);
                if (r < 0)
                        return log_error_errno(r, "Failed to list sessions: %m"), EXIT_INVALID;
        }
        arr = cJSON_CreateArray();
        for (size_t i = 0; arr && i < n; i++) {
                cJSON *o = NULL;
                uint64_t usage = 0;

                if (usages)
                        usage = usages[i];
                else
                        (void) session_usage(st, v[i]->id, &usage);
                if (a->json) {
                        if (session_to_json(v[i], &o) < 0 || !cJSON_AddItemToArray(arr, o)) {
                                cJSON_Delete(o);
                                session_freev(v, n);
                                return log_oom(), EXIT_INVALID;
                        }
                        (void) cJSON_AddNumberToObject(o, "usage_bytes", (double) usage);
                } else {
                        _cleanup_free_ char *skill = cescape(v[i]->skill);
                        char b[FORMAT_BYTES_MAX];

                        printf("%s  %-24s  %8s\n", v[i]->id, strna(skill), format_bytes(b, sizeof(b), usage));
                }
        }
        session_freev(v, n);
        if (!arr)
                return log_oom(), EXIT_INVALID;
        if (a->json)
                return json_print(arr) < 0 ? EXIT_INVALID : 0;
        return 0;
}

static int session_show_verb(SessionArgs *a, int argc, char *argv[]) {
        _cleanup_(client_freep) Client *client = NULL;
        _cleanup_(session_store_freep) SessionStore *st = NULL;
        _cleanup_(session_freep) Session *s = NULL;
        uint64_t usage = 0;
        int r;

        if (argc != 1)
                return usage_error("session show", "expects exactly one ID");
        r = session_where(a, &client);
        if (r < 0)
                return -r;
        if (r > 0) {
                r = session_service_get(client, argv[0], &s);
                if (r < 0)
                        return client_exit_status(r);
                (void) session_service_usage(client, s->id, &usage);
                return print_session(s, usage, a->json);
        }
        r = session_local_store(&st);
        if (r != 0)
                return r;
        r = session_local_find(st, argv[0], &s);
        if (r != 0)
                return r;
        (void) session_usage(st, s->id, &usage);
        return print_session(s, usage, a->json);
}

static int session_rm_verb(SessionArgs *a, int argc, char *argv[]) {
        _cleanup_(client_freep) Client *client = NULL;
        _cleanup_(cJSON_Deletep) cJSON *removed = NULL;
        _cleanup_(session_store_freep) SessionStore *st = NULL;
        int r, ret = 0;

        if (argc < 1)
                return usage_error("session rm", "expects at least one ID");
        r = session_where(a, &client);
        if (r < 0)
                return -r;
        removed = cJSON_CreateArray();
        if (!removed)
                return log_oom(), EXIT_INVALID;
        if (r > 0) {
                client_polkit_agent_open(client);
                for (int i = 0; i < argc; i++) {
                        r = session_service_remove(client, argv[i]);
                        if (r < 0)
                                ret = ret ?: client_exit_status(r);
                        else
                                (void) cJSON_AddItemToArray(removed, cJSON_CreateString(argv[i]));
                }
                return a->json && json_print(removed) < 0 ? EXIT_INVALID : ret;
        }
        r = session_local_store(&st);
        if (r != 0)
                return r;
        for (int i = 0; i < argc; i++) {
                _cleanup_(session_freep) Session *s = NULL;

                r = session_local_find(st, argv[i], &s);
                if (r != 0) {
                        ret = ret ?: r;
                        continue;
                }
                r = session_remove(st, s->id);
                if (r == -EBUSY)
                        log_error("session %s is in use by a run; try again when it has ended", s->id);
                else if (r < 0)
                        log_error_errno(r, "Failed to remove session %s: %m", s->id);
                if (r < 0)
                        ret = ret ?: EXIT_INVALID;
                else
                        (void) cJSON_AddItemToArray(removed, cJSON_CreateString(s->id));
        }
        /* --json: the ids removed, whatever else failed. */
        return a->json && json_print(removed) < 0 ? EXIT_INVALID : ret;
}

int verb_session(int argc, char *argv[]) {
        SessionArgs a = {};
        const char *what;
        int r;

        r = parse(argc, argv, &a);
        if (r <= 0)
                return r == 0 ? 0 : EXIT_USAGE;
        if (optind >= argc)
                return usage_error("session", "expects create, list, show or rm (try --help)");
        what = argv[optind++];
        if (streq(what, "create"))
                return session_create_verb(&a, argc - optind, argv + optind);
        if (streq(what, "list"))
                return session_list_verb(&a, argc - optind);
        if (streq(what, "show"))
                return session_show_verb(&a, argc - optind, argv + optind);
        if (streq(what, "rm"))
                return session_rm_verb(&a, argc - optind, argv + optind);
        return usage_error("session", "expects create, list, show or rm (try --help)");
}
