/* "skillctl run": runs one script of a skill in the sandbox and reports how it went.
 *
 * Embedded for now: the skill is loaded and validated here (as the caller, through the loader),
 * and the sandbox engine runs in this process. When the skilld service exists, this verb will
 * ask it first and fall back to embedded only when no service answers; --system then forbids
 * the fallback and --local skips the service.
 *
 * Exit status: the skill's own exit code; 124 timeout; 128+N killed by signal N (an OOM kill is
 * 137); 125 when skillctl or the engine failed before the skill ran; 126 entry point not
 * executable; 127 entry point or interpreter not found. skillctl's own errors (usage included)
 * are 125, so they never pass for an exit status of the skill. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-id128.h>

#include "engine.h"
#include "entry.h"
#include "fileio.h"
#include "loader.h"
#include "log.h"
#include "parse-util.h"
#include "skill.h"
#include "verbs.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

#define EXIT_RUN_FAILED 125
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

/* Input JSON read from a file or stdin; the engine has the same cap. */
#define INPUT_MAX (64U * 1024U * 1024U)

typedef struct RunArgs {
        const char *skill;
        const char *script;
        char *input;
        char **files;                   /* NAME=PATH, as given */
        char **env;
        const char *output_dir;
        SandboxLimits limits;
        char **args;
        bool json;
        bool quiet;
        bool local;
        bool system;
} RunArgs;

static void run_args_done(RunArgs *a) {
        free(a->input);
        strv_free(a->files);
        strv_free(a->env);
}

static void help(void) {
        printf("Usage: skillctl run [OPTIONS] SKILL [--] [ARGS...]\n"
               "\n"
               "Run a skill (a folder or a .skill file) in a sandbox: no network, a private file\n"
               "system, a throwaway user, and limits. ARGS are passed to the script.\n"
               "\n"
               "Options:\n"
               "     --script PATH        Script to run, relative to the skill (default: its entry point)\n"
               "     --input JSON         Input JSON (stdin, SKILL_INPUT_FILE and SANDBOX_INPUT inside)\n"
               "     --input-file FILE    Read the input JSON from FILE, or stdin for -\n"
               "     --file NAME=PATH     Copy PATH into the working directory as NAME (repeatable)\n"
               "     --output-dir DIR     Where artifacts, logs and result.json go\n"
               "                          (default: ./skill-out/RUN-ID/)\n"
               "     --timeout SECONDS    Wall clock limit (default: 60s)\n"
               "     --memory SIZE        Memory limit, e.g. 256M (default: 512M)\n"
               "     --cpu PERCENT        CPU limit in percent of one CPU (default: 100)\n"
               "     --tasks N            Process and thread limit (default: 256)\n"
               "     --env NAME=VALUE     Set a variable for the skill (repeatable)\n"
               "     --json               Print only the result JSON\n"
               "  -q --quiet              No summary line\n"
               "     --local              Run in this process, not through the skilld service\n"
               "     --system             Require the skilld system service\n"
               "  -h --help               Show this help\n"
               "\n"
               "Exit status: the skill's; 124 timeout; 128+N signal N (137 out of memory);\n"
               "125 skillctl or sandbox failure; 126 not executable; 127 not found.\n");
}

_printf_(1, 2)
static int fail(const char *fmt, ...) {
        va_list ap;

        fputs("skillctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return EXIT_RUN_FAILED;
}

/* For parse_args(): prints and returns -EINVAL. */
_printf_(1, 2)
static int parse_fail(const char *fmt, ...) {
        va_list ap;

        fputs("skillctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return -EINVAL;
}

static int read_input_file(const char *path, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        size_t size;
        int r;

        if (!streq(path, "-")) {
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return -errno;
        }
        r = read_full_fd(fd >= 0 ? fd : STDIN_FILENO, INPUT_MAX, ret, &size);
        if (r < 0)
                return r;
        if (strlen(*ret) != size) {
                free(*ret);
                *ret = NULL;
                return -EINVAL;
        }
        return 0;
}

static int parse_args(int argc, char *argv[], RunArgs *a) {
        enum {
                ARG_SCRIPT = 0x100, ARG_INPUT, ARG_INPUT_FILE, ARG_FILE, ARG_OUTPUT_DIR, ARG_TIMEOUT,
                ARG_MEMORY, ARG_CPU, ARG_TASKS, ARG_ENV, ARG_JSON, ARG_LOCAL, ARG_SYSTEM,
        };
        static const struct option options[] = {
                { "help",       no_argument,       NULL, 'h' },
                { "script",     required_argument, NULL, ARG_SCRIPT },
                { "input",      required_argument, NULL, ARG_INPUT },
                { "input-file", required_argument, NULL, ARG_INPUT_FILE },
                { "file",       required_argument, NULL, ARG_FILE },
                { "output-dir", required_argument, NULL, ARG_OUTPUT_DIR },
                { "timeout",    required_argument, NULL, ARG_TIMEOUT },
                { "memory",     required_argument, NULL, ARG_MEMORY },
                { "cpu",        required_argument, NULL, ARG_CPU },
                { "tasks",      required_argument, NULL, ARG_TASKS },
                { "env",        required_argument, NULL, ARG_ENV },
                { "json",       no_argument,       NULL, ARG_JSON },
                { "quiet",      no_argument,       NULL, 'q' },
                { "local",      no_argument,       NULL, ARG_LOCAL },
                { "system",     no_argument,       NULL, ARG_SYSTEM },
                {}
        };
        _cleanup_free_ char *error = NULL;
        const char *input_file = NULL;
        int c, r;

        /* Options may come before or after SKILL (the usual "skillctl run DIR --input ..."); the
         * script's own options go after "--", where getopt stops. */
        while ((c = getopt_long(argc, argv, "hq", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_SCRIPT:
                        a->script = optarg;
                        break;
                case ARG_INPUT:
                        free(a->input);
                        a->input = strdup(optarg);
                        if (!a->input)
                                return log_oom();
                        break;
                case ARG_INPUT_FILE:
                        input_file = optarg;
                        break;
                case ARG_FILE:
                        if (!strchr(optarg, '=') || optarg[0] == '=')
                                return parse_fail("--file %s: expected NAME=PATH", optarg);
                        r = strv_extend(&a->files, optarg);
                        if (r < 0)
                                return log_oom();
                        break;
                case ARG_OUTPUT_DIR:
                        a->output_dir = optarg;
                        break;
                case ARG_TIMEOUT:
                        r = parse_sec(optarg, &a->limits.timeout_usec);
                        if (r < 0)
                                return parse_fail("--timeout %s: not a duration", optarg);
                        break;
                case ARG_MEMORY:
                        r = parse_size(optarg, &a->limits.memory_max);
                        if (r < 0)
                                return parse_fail("--memory %s: not a size", optarg);
                        break;
                case ARG_CPU:
                        r = parse_percent_unbounded(optarg, &a->limits.cpu_percent);
                        if (r < 0)
                                return parse_fail("--cpu %s: not a percentage", optarg);
                        break;
                case ARG_TASKS:
                        r = safe_atou64(optarg, &a->limits.tasks_max);
                        if (r < 0)
                                return parse_fail("--tasks %s: not a number", optarg);
                        break;
                case ARG_ENV:
                        r = sandbox_env_check(optarg, &error);
                        if (r < 0)
                                return parse_fail("--env: %s", error);
                        r = strv_extend(&a->env, optarg);
                        if (r < 0)
                                return log_oom();
                        break;
                case ARG_JSON:
                        a->json = true;
                        break;
                case 'q':
                        a->quiet = true;
                        break;
                case ARG_LOCAL:
                        a->local = true;
                        break;
                case ARG_SYSTEM:
                        a->system = true;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        return parse_fail("unexpected option");
                }

        if (optind >= argc)
                return parse_fail("run: missing SKILL (try 'skillctl run --help')");
        a->skill = argv[optind++];
        a->args = argv + optind;

        if (a->local && a->system)
                return parse_fail("--local and --system exclude each other");
        if (input_file && a->input)
                return parse_fail("--input and --input-file exclude each other");
        if (input_file) {
                r = read_input_file(input_file, &a->input);
                if (r < 0)
                        return parse_fail("--input-file %s: %s", input_file,
                                    r == -EFBIG ? "larger than 64M" : r == -EINVAL ? "holds a NUL byte" :
                                    strerror(-r));
        }
        if (a->input) {
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_ParseWithOpts(a->input, NULL, true);

                if (!j)
                        return parse_fail("the input is not valid JSON");
        }
        r = sandbox_limits_check(&a->limits, &error);
        if (r < 0)
                return parse_fail("%s", error);
        return 1;
}

/* Opens the --file inputs as the caller: the engine is handed fds, never paths. */
static int open_files(char **specs, RunFile **ret, int **ret_fds, size_t *ret_n) {
        size_t n = strv_length(specs);
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_free_ int *fds = NULL;
        _cleanup_free_ char *error = NULL;

        files = calloc(MAX(n, 1U), sizeof(RunFile));
        fds = calloc(MAX(n, 1U), sizeof(int));
        if (!files || !fds)
                return log_oom();
        for (size_t i = 0; i < n; i++)
                fds[i] = -EBADF;
        *ret_fds = fds; /* the caller closes what was opened, also on failure */

        for (size_t i = 0; i < n; i++) {
                char *eq = strchr(specs[i], '=');
                const char *path = eq + 1;

                *eq = '\0';
                if (sandbox_file_name_check(specs[i], &error) < 0)
                        return fail("--file: %s", error);
                fds[i] = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fds[i] < 0)
                        return fail("--file %s: %m", path);
                files[i] = (RunFile) { .name = specs[i], .fd = fds[i], .path = path };
        }
        *ret = TAKE_PTR(files);
        TAKE_PTR(fds);
        *ret_n = n;
        return 0;
}

static void close_fds(int *fds, size_t n) {
        for (size_t i = 0; fds && i < n; i++)
                safe_close(fds[i]);
        free(fds);
}

/* The skill's output reached our stdout and stderr as it came: it may have stopped in the middle
 * of a line, or left the terminal drawing concealed or colored text, and so have the summary read
 * as the end of a line of its own making, or not show at all. The summary starts a line of its
 * own, in the terminal's default attributes. */
static void summary_begin(const RunResult *r) {
        const RunStream *streams[] = { &r->stdout_stream, &r->stderr_stream };
        bool partial = false;

        for (size_t i = 0; i < ELEMENTSOF(streams); i++)
                if (streams[i]->size > 0 && streams[i]->data[streams[i]->size - 1] != '\n')
                        partial = true;
        if (isatty(STDERR_FILENO))
                fputs("\033[0m", stderr);
        if (partial)
                fputc('\n', stderr);
}

static void print_summary(const RunResult *r) {
        char mem[FORMAT_BYTES_MAX];
        const char *status = run_status_to_string(r->status);

        summary_begin(r);
        if (r->status == RUN_STATUS_ERROR) {
                fprintf(stderr, "skillctl: %s\n", strna(r->error));
                return;
        }

        fprintf(stderr, "skillctl: %s", status);
        if (r->exit_code >= 0)
                fprintf(stderr, ", exit %d", r->exit_code);
        if (r->signal > 0)
                fprintf(stderr, ", signal %s", strna(sigabbrev_np(r->signal)));
        fprintf(stderr, ", %.2fs", (double) r->usage.wall_usec / 1e6);
        if (r->usage.memory_peak != RUN_USAGE_UNKNOWN)
                fprintf(stderr, ", peak memory %s", format_bytes(mem, sizeof(mem), r->usage.memory_peak));
        fprintf(stderr, ", %zu artifact%s in %s (limits: %s)\n", r->n_artifacts,
                r->n_artifacts == 1 ? "" : "s",
                r->output_dir, strna(r->backend));
        if (r->stdout_stream.truncated || r->stderr_stream.truncated)
                fprintf(stderr, "skillctl: output was truncated; the kept part is in %s\n", r->output_dir);
        if (r->n_skipped > 0)
                fprintf(stderr, "skillctl: %zu entr%s in /out/files skipped (see result.json)\n",
                        r->n_skipped,
                        r->n_skipped == 1 ? "y was" : "ies were");
}

/* Blocks the signals that end a run from the terminal and turns them into a cancel fd. */
static int cancel_fd_new(void) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

int verb_run(int argc, char *argv[]) {
        _cleanup_(run_args_done) RunArgs a = { .limits = SANDBOX_LIMITS_DEFAULT };
        _cleanup_(skill_source_freep) SkillSource *source = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_free_ char *error = NULL, *default_dir = NULL;
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_close_ int cancel_fd = -EBADF;
        LoaderLimits loader_limits = LOADER_LIMITS_DEFAULT;
        RunRequest req = RUN_REQUEST_INIT;
        char hash[65], id[SD_ID128_STRING_MAX];
        int *fds = NULL;
        size_t n_files = 0;
        sd_id128_t rid;
        int r;

        /* < 0: bad arguments (already reported), 0: --help, > 0: run. */
        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_FAILED : 0;

        if (a.system)
                /* The daemon (issue 5) is not there yet: say so rather than run embedded. */
                return fail("no skilld service answered, and --system forbids running embedded");

        r = skill_source_open(a.skill, &loader_limits, &source, &error);
        if (r < 0)
                return fail("%s: %s", a.skill, error ?: strerror(-r));
        r = skill_load_at(source->dir_fd, &skill, &error);
        if (r < 0)
                return fail("%s: %s", a.skill, error ?: strerror(-r));
        r = skill_resolve_entry(skill, source->dir_fd, a.script, &entry, &error);
        if (r < 0) {
                fail("%s: %s", a.skill, error ?: strerror(-r));
                return r == -ENOENT ? EXIT_NOT_FOUND : r == -EBADFD || r == -ELOOP ? EXIT_NOT_EXECUTABLE :
                                                                                 EXIT_RUN_FAILED;
        }
        r = skill_tree_hash(source->dir_fd, hash, &error);
        if (r < 0)
                return fail("%s: %s", a.skill, error ?: strerror(-r));

        r = sd_id128_randomize(&rid);
        if (r < 0)
                return fail("Failed to generate a run id: %s", strerror(-r));
        sd_id128_to_string(rid, id);
        if (!a.output_dir) {
                default_dir = strdup_printf("skill-out/%s", id);
                if (!default_dir)
                        return log_oom();
        }

        r = open_files(a.files, &files, &fds, &n_files);
        if (r != 0) {
                close_fds(fds, strv_length(a.files));
                return EXIT_RUN_FAILED;
        }

        cancel_fd = cancel_fd_new();
        if (cancel_fd < 0) {
                close_fds(fds, n_files);
                return fail("Failed to set up signal handling: %s", strerror(-cancel_fd));
        }
        /* A reader of our output that goes away (skillctl run ... | head) stops the copy, not us. */
        (void) signal(SIGPIPE, SIG_IGN);

        req.run_id = id;
        req.skill_dir = source->path;
        req.skill_dir_fd = source->dir_fd;
        req.skill_name = skill->name;
        req.skill_hash = hash;
        req.script = entry.script;
        req.interpreter = interpreter_path(entry.interpreter);
        req.args = a.args;
        req.input_json = a.input;
        req.files = files;
        req.n_files = n_files;
        req.env = a.env;
        req.limits = a.limits;
        /* Embedded runs may fall back to rlimits where no cgroup can be had: the documented
         * fallback, and the result says which backend was in force. Nothing else may be missing. */
        req.allow_missing = SANDBOX_LAYER_CGROUP;
        req.output_dir = a.output_dir ?: default_dir;
        req.stdout_fd = a.json ? -EBADF : STDOUT_FILENO;
        req.stderr_fd = a.json ? -EBADF : STDERR_FILENO;
        req.cancel_fd = cancel_fd;

        r = sandbox_run(&req, &res, &error);
        close_fds(fds, n_files);
        if (r < 0)
                return fail("%s", error ?: strerror(-r));

        if (a.json) {
                _cleanup_(cJSON_Deletep) cJSON *j = NULL;
                _cleanup_free_ char *text = NULL;

                r = run_result_to_json(res, &j);
                if (r < 0 || !(text = cJSON_Print(j)))
                        return log_oom();
                puts(text);
        } else if (!a.quiet || res->status == RUN_STATUS_ERROR)
                print_summary(res);
        if (res->store_error)
                fprintf(stderr, "skillctl: warning: %s\n", res->store_error);

        return run_result_exit_code(res);
}
