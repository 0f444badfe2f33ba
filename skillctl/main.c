/* skillctl: entry point and verb dispatch. Global options come before the verb; each verb parses
 * its own with getopt_long, so "skillctl skill lint --help" works like "skillctl --help". */
#include <getopt.h>

#include "bus-client.h"
#include "log.h"
#include "verbs.h"

static const Verb verbs[] = {
        { "skill",     verb_skill },
        { "run",       verb_run },
        { "exec",      verb_exec },
        { "session",   verb_session },
        { "env",       verb_env },
        { "list",      verb_list },
        { "status",    verb_status },
        { "logs",      verb_logs },
        { "result",    verb_result },
        { "artifacts", verb_artifacts },
        { "cancel",    verb_cancel },
        { "wait",      verb_wait },
        { "rm",        verb_rm },
        { "mcp",       verb_mcp },
        { "runs",      verb_runs },
};

static void help(void) {
        printf("Usage: skillctl [OPTIONS] COMMAND ...\n"
               "\n"
               "Run Agent Skills in a sandbox, through the skilld service or embedded, and inspect,\n"
               "package and install them.\n"
               "\n"
               "Commands:\n"
               "  run [OPTIONS] SKILL [--] [ARGS...]    Run a skill in a sandbox (see 'run --help')\n"
               "  exec [OPTIONS] SKILL -- CMD [ARGS...] Run a command in a skill's sandbox\n"
               "  session create|list|show|rm           Sessions: /work kept between runs\n"
               "\n"
               "  env build|list|show|rm|gc ...         Build and manage skill environments\n"
               "\n"
               "Run commands (the skilld service):\n"
               "  list [--all] [-n N|all] [--json]      List your newest runs (--all: everyone's)\n"
               "  status ID... [--json]                 Show state, times, limits and usage of runs\n"
               "  logs ID [-f] [--stream STREAM]        Write a run's stored output\n"
               "  result ID [--json]                    Show how a run ended; exit with its status\n"
               "  artifacts ID [--get PATH] [-o DIR]    List or fetch the files a run left\n"
               "  cancel ID...                          Stop queued or running runs\n"
               "  wait ID [--json]                      Wait for a run to end, then as 'result'\n"
               "  rm ID...                              Delete ended runs\n"
               "  runs prune [--older-than D] [--keep N]  Remove old run folders from ./skill-out\n"
               "\n"
               "Agents:\n"
               "  mcp [--skills-dir DIR]...             Serve skills to AI agents over MCP (stdio)\n"
               "\n"
               "Skill commands:\n"
               "  skill lint PATH [--strict] [--json]   Validate a skill folder or .skill file\n"
               "  skill show PATH [--json]              Show a skill's metadata, entry point, hash\n"
               "  skill package DIR [-o FILE]           Build a .skill archive from a folder\n"
               "  skill list [--json]                   List the skills installed on the host\n"
               "  skill install FILE|DIR [--replace]    Install a skill on the host\n"
               "  skill remove NAME...                  Remove installed skills\n"
               "  skill init [--lang py|js|sh] NAME     Create a new skill folder ./NAME\n"
               "\n"
               "Options:\n"
               "  -h --help             Show this help\n"
               "     --version          Show the version\n"
               "  -v --verbose          Log debug messages\n"
               "  -H --host=[USER@]HOST Talk to the skilld service of HOST, over SSH\n"
               "     --no-ask-password  Do not ask for a password to authorize a call\n"
               "\n"
               "See skillctl(1) for details.\n");
}

int usage_error(const char *what, const char *why) {
        fprintf(stderr, "skillctl: %s: %s\n", what, why);
        return EXIT_USAGE;
}

int main(int argc, char *argv[]) {
        enum { ARG_NO_ASK_PASSWORD = 0x100 };
        static const struct option options[] = {
                { "help",            no_argument,       NULL, 'h' },
                { "version",         no_argument,       NULL, 'V' },
                { "verbose",         no_argument,       NULL, 'v' },
                { "host",            required_argument, NULL, 'H' },
                { "no-ask-password", no_argument,       NULL, ARG_NO_ASK_PASSWORD },
                {}
        };
        int c;

        log_set_program("skillctl");

        /* "+" stops at the first non-option, the verb. */
        while ((c = getopt_long(argc, argv, "+hvH:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("skillctl %s\n", PROJECT_VERSION);
                        return 0;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'H':
                        arg_host = optarg;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        arg_ask_password = false;
                        break;
                case '?':
                        return EXIT_USAGE;
                default:
                        return EXIT_USAGE;
                }

        if (optind >= argc)
                return usage_error("missing command", "try 'skillctl --help'");

        return dispatch_verb(verbs, ELEMENTSOF(verbs), argc - optind, argv + optind, "command");
}

int dispatch_verb(const Verb *table, size_t n, int argc, char *argv[], const char *what) {
        const char *suggestion;

        for (size_t i = 0; i < n; i++)
                if (streq(argv[0], table[i].name)) {
                        optind = 0; /* reset getopt for the verb's own parsing */
                        verb_path_push(argv[0]);
                        return table[i].run(argc, argv);
                }

        suggestion = verb_suggest(table, n, argv[0]);
        fprintf(stderr, "skillctl: %s: unknown %s%s%s%s (see 'skillctl%s --help')\n", argv[0], what,
                suggestion ? "; did you mean '" : "", strempty(suggestion), suggestion ? "'?" : "",
                verb_path_get());
        return EXIT_USAGE;
}
