/* "skillctl run": runs one script of a skill in the sandbox and reports how it went.
 *
 * Through the skilld service when one answers (run-service.c), else embedded: the skill is
 * loaded and validated here, as the caller, and the sandbox engine runs in this process. The
 * fallback is said on stderr; --system forbids it and --local skips the service. Both modes load
 * the skill the same way first, and end with the same summary line and exit status
 * (run-result.c), so a script cannot tell which one ran it.
 *
 * Exit status: the skill's own exit code; 124 timeout; 128+N killed by signal N (an OOM kill is
 * 137); 125 when skillctl or the engine failed before the skill ran; 126 entry point not
 * executable; 127 entry point or interpreter not found. skillctl's own errors (usage included)
 * are 125, so they never pass for an exit status of the skill. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json-format.h"
#include "lint.h"
#include "loader.h"
#include "log.h"
#include "parse-util.h"
#include "random-id.h"
#include "run-result.h"
#include "run.h"
#include "session-local.h"
#include "skill-limits.h"
#include "skill-path.h"
#include "env.h"
#include "verbs-env.h"
#include "verbs.h"

/* Input JSON read from a file or stdin; the engine has the same cap. */
#define INPUT_MAX (64U * 1024U * 1024U)

static void run_args_done(RunArgs *a) {
        free(a->input);
        strv_free(a->files);
        strv_free(a->env);
}

static void exec_help(void) {
        printf("Usage: skillctl exec [OPTIONS] SKILL -- CMD [ARGS...]\n"
               "\n"
               "Run a command in a skill's sandbox, the way the skill's instructions say to run it\n"
               "(\"python3 -m scripts.tool ARG\" from the skill's root, \"node scripts/x.js\"). The command\n"
               "is executed as given, with no shell unless it names one (sh -c '...'); it has the same\n"
               "isolation, limits, result and artifacts as 'skillctl run'. The skill is /skill\n"
               "(read-only), and its root is on Python's and Node's module path.\n"
               "\n"
               "Options:\n"
               "     --cwd /work|/skill   Working directory (default: /work)\n"
               "     --session ID         Run in a session: /work kept between runs\n"
               "     --input JSON, --input-file FILE, --file NAME=PATH, --output-dir DIR,\n"
               "     --timeout SECONDS, --memory SIZE, --cpu PERCENT, --tasks N, --env NAME=VALUE,\n"
               "     --network, --json, -q, --local, --system\n"
               "                          As for 'skillctl run' (see 'skillctl run --help')\n"
               "  -h --help               Show this help\n"
               "\n"
               "Exit status: the command's; 124 timeout; 128+N signal N (137 out of memory);\n"
               "125 skillctl or sandbox failure; 126 not executable; 127 not found.\n");
}

static void help(void) {
        printf("Usage: skillctl run [OPTIONS] SKILL [--] [ARGS...]\n"
               "\n"
               "Run a skill (a folder, a .skill file, or the name of a skill installed on the host)\n"
               "in a sandbox: no network (unless asked), a private file system, a throwaway user, and limits.\n"
               "ARGS are passed to the script. The skilld service runs it when one answers, else\n"
               "skillctl does, in this process.\n"
               "\n"
               "Options:\n"
               "     --script PATH        Script to run, relative to the skill (default: its entry point)\n"
               "     --input JSON         Input JSON (stdin, SKILL_INPUT_FILE and SANDBOX_INPUT inside)\n"
               "     --input-file FILE    Read the input JSON from FILE, or stdin for -\n"
               "     --file NAME=PATH     Copy PATH (a file, or a folder as a tree) into the working\n"
               "                          directory as NAME (repeatable)\n"
               "     --output-dir DIR     Where artifacts, logs and result.json go\n"
               "                          (default: ./skill-out/RUN-ID/)\n"
               "     --timeout SECONDS    Wall clock limit (default: 60s)\n"
               "     --memory SIZE        Memory limit, e.g. 256M (default: 512M)\n"
               "     --cpu PERCENT        CPU limit in percent of one CPU (default: 100)\n"
               "     --tasks N            Process and thread limit (default: 256)\n"
               "     --env NAME=VALUE     Set a variable for the skill (repeatable)\n"
               "     --network            Share the host's network (the service asks polkit and its policy;\n"
               "                          a local run has the network of the caller)\n"
               "     --session ID         Run in a session: /work as the session's last run left it\n"
               "                          (see 'skillctl session --help')\n"
               "     --json               Print only the result JSON\n"
               "  -q --quiet              No summary line\n"
               "     --local              Run in this process, not through the skilld service\n"
               "     --system             Require the skilld service, never run embedded\n"
               "  -h --help               Show this help\n"
               "\n"
               "Exit status: the skill's; 124 timeout; 128+N signal N (137 out of memory);\n"
               "125 skillctl or sandbox failure; 126 not executable; 127 not found.\n");
}

_printf_(1, 0)
static void print_errorv(const char *fmt, va_list ap) {
        int saved_errno = errno;

        (void) fputs("skillctl: ", stderr);
        errno = saved_errno; /* %m names the failure of the caller's last call, not of fputs() */
        (void) vfprintf(stderr, fmt, ap);
        (void) fputc('\n', stderr);
}

void run_error(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        print_errorv(fmt, ap);
        va_end(ap);
}

/* For parse_args(): prints and evaluates to -EINVAL. */
#define parse_fail(...) (run_error(__VA_ARGS__), -EINVAL)

static int read_input_file(const char *path, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        size_t size;
        int r;

        if (!streq(path, "-")) {
                fd = open_regular_at(AT_FDCWD, path, O_RDONLY);
                if (fd < 0)
                        return fd;
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
                ARG_MEMORY, ARG_CPU, ARG_TASKS, ARG_ENV, ARG_NETWORK, ARG_JSON, ARG_LOCAL, ARG_SYSTEM,
                ARG_CWD, ARG_SESSION,
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
                { "network",    no_argument,       NULL, ARG_NETWORK },
                { "json",       no_argument,       NULL, ARG_JSON },
                { "quiet",      no_argument,       NULL, 'q' },
                { "local",      no_argument,       NULL, ARG_LOCAL },
                { "system",     no_argument,       NULL, ARG_SYSTEM },
                { "cwd",        required_argument, NULL, ARG_CWD },
                { "session",    required_argument, NULL, ARG_SESSION },
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
                        if (a->exec)
                                exec_help();
                        else
                                help();
                        return 0;
                case ARG_SCRIPT:
                        if (a->exec)
                                return parse_fail("exec: --script is for 'skillctl run'; exec runs the "
                                                  "command after '--'");
                        a->script = optarg;
                        break;
                case ARG_SESSION:
                        a->session = optarg;
                        break;
                case ARG_CWD:
                        if (!a->exec)
                                return parse_fail("run: --cwd is for 'skillctl exec'");
                        if (!streq(optarg, "/work") && !streq(optarg, "/skill"))
                                return parse_fail("--cwd %s: must be /work or /skill", optarg);
                        a->cwd = optarg;
                        break;
                case ARG_INPUT:
                        free(a->input);
                        a->input = strdup(optarg);
                        if (!a->input)
                                return log_oom(), -ENOMEM;
                        break;
                case ARG_INPUT_FILE:
                        input_file = optarg;
                        break;
                case ARG_FILE:
                        if (!strchr(optarg, '=') || optarg[0] == '=')
                                return parse_fail("--file %s: expected NAME=PATH", optarg);
                        r = strv_extend(&a->files, optarg);
                        if (r < 0)
                                return log_oom(), -ENOMEM;
                        break;
                case ARG_OUTPUT_DIR:
                        a->output_dir = optarg;
                        break;
                case ARG_TIMEOUT:
                        r = parse_sec(optarg, &a->limits.timeout_usec);
                        if (r < 0)
                                return parse_fail("--timeout %s: not a duration; give seconds, or a number with "
                                                  "one of the units us, ms, s, min, h, d, w (e.g. 90s, 5min)", optarg);
                        a->limits_set |= SANDBOX_LIMIT_TIMEOUT;
                        break;
                case ARG_MEMORY:
                        r = parse_size(optarg, &a->limits.memory_max);
                        if (r < 0)
                                return parse_fail("--memory %s: not a size; give bytes, or a number with one of "
                                                  "the units K, M, G, T (binary; KB, MiB... alike), e.g. 256M", optarg);
                        a->limits_set |= SANDBOX_LIMIT_MEMORY;
                        break;
                case ARG_CPU:
                        r = parse_percent_unbounded(optarg, &a->limits.cpu_percent);
                        if (r < 0)
                                return parse_fail("--cpu %s: not a percentage", optarg);
                        a->limits_set |= SANDBOX_LIMIT_CPU;
                        break;
                case ARG_TASKS:
                        r = safe_atou64(optarg, &a->limits.tasks_max);
                        if (r < 0)
                                return parse_fail("--tasks %s: not a number", optarg);
                        a->limits_set |= SANDBOX_LIMIT_TASKS;
                        break;
                case ARG_ENV:
                        r = sandbox_env_check(optarg, &error);
                        if (r < 0)
                                return parse_fail("--env: %s", error);
                        r = strv_extend(&a->env, optarg);
                        if (r < 0)
                                return log_oom(), -ENOMEM;
                        break;
                case ARG_NETWORK:
                        a->network = true;
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
                return parse_fail("%s: missing SKILL (try 'skillctl %s --help')", a->exec ? "exec" : "run",
                                  a->exec ? "exec" : "run");
        a->skill = argv[optind++];
        a->args = argv + optind;
        if (a->exec && !a->args[0])
                return parse_fail("exec: missing the command (skillctl exec SKILL -- CMD [ARGS...])");

        if (a->local && a->system)
                return parse_fail("--local and --system exclude each other");
        if (a->local && arg_host)
                return parse_fail("--local and -H exclude each other");
        if (input_file && a->input)
                return parse_fail("--input and --input-file exclude each other");
        if (input_file) {
                r = read_input_file(input_file, &a->input);
                if (r < 0)
                        return parse_fail("--input-file %s: %s", input_file,
                                    r == -EFBIG ? "larger than 64M" : r == -EINVAL ? "holds a NUL byte" :
                                    open_regular_strerror(r));
        }
        if (a->input) {
                const char *end = NULL;
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_ParseWithOpts(a->input, &end, true);

                if (!j) {
                        unsigned line = 1, column = 1;

                        /* cJSON stops where it could not go on: say where, as editors count. */
                        for (const char *p = a->input; end && p < end && *p; p++)
                                if (*p == '\n')
                                        line++, column = 1;
                                else
                                        column++;
                        return parse_fail("%s: not valid JSON at line %u, column %u (near '%.12s')",
                                          input_file ? input_file : "--input", line, column,
                                          end && *end ? end : "the end");
                }
        }
        r = sandbox_limits_check(&a->limits, &error);
        if (r < 0)
                return parse_fail("%s", error);
        return 1;
}

void run_close_files(int *fds, size_t n) {
        for (size_t i = 0; fds && i < n; i++)
                safe_close(fds[i]);
        free(fds);
}

/* A folder given to --file goes to the engine or the service as a sealed memfd holding a zip of
 * its contents, checked on the way with the loader's rules: a symlink, a hard link, a device or
 * a FIFO in it is refused with its name, never followed. *fd (the folder) is replaced by the
 * memfd. Regular files are left as they are. Returns 0, or the exit status after saying why. */
static int pack_folder(int *fd, bool *ret_folder, const char *path) {
        const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int zip = -EBADF;
        struct stat st;
        int r;

        if (fstat(*fd, &st) < 0)
                return run_fail("--file %s: %m", path);
        if (!S_ISDIR(st.st_mode))
                return 0;

        /* What the engine takes in all (1G); the entries and depth of a folder input. */
        limits.max_total_bytes = limits.max_file_bytes = 1024ULL * 1024 * 1024;
        limits.max_ratio = UINT64_MAX;
        zip = memfd_create("skill-folder-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (zip < 0)
                return run_fail("--file %s: cannot create a memfd: %m", path);
        r = loader_package_folder(*fd, &limits, zip, &error);
        if (r < 0)
                return run_fail("--file %s: %s", path, error ?: strerror(-r));
        if (fcntl(zip, F_ADD_SEALS, seals) < 0 || lseek(zip, 0, SEEK_SET) < 0)
                return run_fail("--file %s: cannot seal the packed folder: %m", path);
        safe_close(*fd);
        *fd = TAKE_FD(zip);
        *ret_folder = true;
        return 0;
}

int run_open_files(char **specs, RunFile **ret, int **ret_fds, size_t *ret_n) {
        size_t n = strv_length(specs), opened = 0;
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_free_ char *error = NULL;
        int *fds, r = 0;

        files = calloc(MAX(n, 1U), sizeof(RunFile));
        fds = calloc(MAX(n, 1U), sizeof(int));
        if (!files || !fds) {
                free(fds);
                return log_oom(), -ENOMEM;
        }

        for (; specs && opened < n; opened++) {
                char *spec = specs[opened], *eq = strchr(spec, '=');
                const char *path = eq + 1;

                *eq = '\0';
                if (sandbox_file_name_check(spec, &error) < 0) {
                        r = run_fail("--file: %s", error);
                        break;
                }
                /* A regular file, or a folder (packed below); never blocks on a FIFO. */
                fds[opened] = open_regular_at(AT_FDCWD, path, O_RDONLY);
                if (fds[opened] == -EISDIR) {
                        fds[opened] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (fds[opened] < 0)
                                fds[opened] = -errno;
                }
                if (fds[opened] < 0) {
                        r = run_fail("--file %s: %s", path, open_regular_strerror(fds[opened]));
                        break;
                }
                files[opened] = (RunFile) { .name = spec, .fd = fds[opened], .path = path };
                r = pack_folder(&fds[opened], &files[opened].folder, path);
                if (r != 0) {
                        fds[opened] = safe_close(fds[opened]);
                        break;
                }
                files[opened].fd = fds[opened];
        }
        if (r != 0) {
                /* Nothing stays open and the outputs are untouched. */
                run_close_files(fds, opened);
                return r;
        }

        *ret = TAKE_PTR(files);
        *ret_fds = fds;
        *ret_n = n;
        return 0;
}

/* Blocks the signals that end a run from the terminal and turns them into a cancel fd. */
static int cancel_fd_new(void) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        /* Ctrl-\ too: its default (a core dump of skillctl) would leave the run's cgroups for
         * the next run to sweep instead of ending the run in order. */
        sigaddset(&mask, SIGQUIT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
}

/* What 'skill lint' calls an error is not run, in either mode: the service would refuse it too,
 * and a run must not record a skill without a name. Warnings do not stop a run. */
static int run_lint_skill(const char *path, const LocalSkill *skill) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();

        if (!report || skill_lint(skill->skill, skill->source->dir_name, report) < 0)
                return log_oom(), EXIT_RUN_FAILED;
        if (report->n_errors == 0)
                return 0;
        for (size_t k = 0; k < report->n_diags; k++)
                if (report->diags[k].severity == LINT_ERROR)
                        lint_diag_print(stderr, "skillctl: ", path, &report->diags[k]);
        return run_fail("%s: not run: the skill is invalid (%zu error%s; see 'skillctl skill lint %s')", path,
                        report->n_errors, report->n_errors == 1 ? "" : "s", path);
}

int run_load_skill(const RunArgs *a, LocalSkill *ret, SkillEntry *ret_entry) {
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = local_skill_open(a->skill, &skill, &error);
        if (r < 0)
                return run_fail("%s", error ?: strerror(-r));
        r = run_lint_skill(a->skill, &skill);
        if (r != 0)
                return r;
        /* A command needs no entry point: the skill may have no script at all. */
        if (a->exec) {
                *ret = skill;
                skill = (LocalSkill) LOCAL_SKILL_NULL;
                return 0;
        }
        r = skill_resolve_entry(skill.skill, skill.source->dir_fd, a->script, ret_entry, &error);
        if (r < 0) {
                run_error("%s: %s", a->skill, error ?: strerror(-r));
                return r == -ENOENT ? EXIT_NOT_FOUND : r == -EBADFD || r == -ELOOP ? EXIT_NOT_EXECUTABLE :
                                                                                 EXIT_RUN_FAILED;
        }
        *ret = skill;
        skill = (LocalSkill) LOCAL_SKILL_NULL;
        return 0;
}

/* --json always prints a result, also for a run refused before it started: its callers (skillctl
 * mcp, the Python client, scripts) read the status there, not in our stderr. */
static int run_print_unrun_json(const char *name, const char *hash, const char *script,
                                const SandboxLimits *limits, RunStatus status, const char *message,
                                int exit_status) {
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *text = NULL;
        char id[RANDOM_ID_STRING_MAX];
        int r;

        r = random_id(id);
        if (r < 0)
                return run_fail("Failed to generate a run id: %s", strerror(-r));
        r = run_result_new_unrun(id, name, hash, script, limits, status, message, &res);
        if (r < 0 || run_result_to_json(res, &j) < 0 || !(text = json_format(j)))
                return log_oom(), EXIT_RUN_FAILED;
        (void) fputs(text, stdout);
        return exit_status;
}

static int run_embedded(const RunArgs *a) {
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_free_ char *error = NULL, *default_dir = NULL;
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_close_ int cancel_fd = -EBADF, env_fd = -EBADF;
        _cleanup_strv_free_ char **env_search = NULL, **hidden_dirs = NULL, **hidden_files = NULL;
        RunRequest req = RUN_REQUEST_INIT;
        _cleanup_(session_store_freep) SessionStore *sessions = NULL;
        _cleanup_(session_freep) Session *session = NULL;
        _cleanup_close_ int session_fd = -EBADF;
        _cleanup_(sandbox_ahead_freep) SandboxAhead *ahead = NULL;
        SkillDeclaredLimits declared;
        char hash[65], id[RANDOM_ID_STRING_MAX];
        int *fds = NULL;
        size_t n_files = 0;
        int r;

        /* The run's network namespace, made by a helper process while the skill is loaded and
         * hashed (as root; a run with network needs none): the clone is 0.4 ms shorter. The run
         * spends it; on the ways out before that the cleanup kills and reaps the helper. */
        if (!a->network) {
                r = sandbox_ahead_start_full(true, &ahead);
                if (r < 0)
                        log_debug_errno(r, "Failed to start making the sandbox ahead, the run makes it: %m");
        }

        r = run_load_skill(a, &skill, &entry);
        if (r != 0)
                return r;
        r = skill_source_hash(skill.source, hash, &error);
        if (r < 0)
                return run_fail("%s: %s", a->skill, error ?: strerror(-r));
        /* What the sandbox hides (compiled Python, which the hash leaves out), from the same walk. */
        r = skill_source_list_excluded(skill.source, &hidden_dirs, &hidden_files, &error);
        if (r < 0)
                return run_fail("%s: %s", a->skill, error ?: strerror(-r));
        r = skill_declared_limits(skill.skill, &declared, &error);
        if (r < 0)
                return run_fail("%s: %s", a->skill, error ?: strerror(-r));
        /* Before anything runs: a skill whose environment is not built does not start. */
        r = env_prepare_run(&skill, a->skill, hash, &env_fd);
        if (r == RUN_EXIT_ENVIRONMENT && a->json)
                return run_print_unrun_json(skill.skill->name, hash, a->exec ? NULL : entry.script, &a->limits,
                                            RUN_STATUS_ENVIRONMENT,
                                            "The skill's environment is not built (skillctl env build)", r);
        if (r != 0)
                return r;
        if (env_fd >= 0 && env_search_paths(&env_search) < 0)
                return log_oom(), EXIT_RUN_FAILED;

        r = random_id(id);
        if (r < 0)
                return run_fail("Failed to generate a run id: %s", strerror(-r));
        if (!a->output_dir) {
                default_dir = strdup_printf("skill-out/%s", id);
                if (!default_dir)
                        return log_oom(), EXIT_RUN_FAILED;
        }

        if (a->session) {
                r = session_local_store(&sessions);
                if (r != 0)
                        return EXIT_RUN_FAILED;
                r = session_local_attach(sessions, a->session, skill.skill->name, &req, &session, &session_fd);
                if (r != 0)
                        return r;
        }

        r = run_open_files(a->files, &files, &fds, &n_files);
        if (r != 0)
                return EXIT_RUN_FAILED;

        cancel_fd = cancel_fd_new();
        if (cancel_fd < 0) {
                run_close_files(fds, n_files);
                return run_fail("Failed to set up signal handling: %s", strerror(-cancel_fd));
        }
        /* A reader of our output that goes away (skillctl run ... | head) stops the copy, not us. */
        (void) signal(SIGPIPE, SIG_IGN);

        req.run_id = id;
        req.skill_dir = skill.source->path;
        req.skill_dir_fd = skill.source->dir_fd;
        req.hidden_listed = true;
        req.hidden_dirs = hidden_dirs;
        req.hidden_files = hidden_files;
        req.skill_name = skill.skill->name;
        req.skill_hash = hash;
        if (a->exec) {
                req.command = a->args;
                req.cwd = a->cwd;
        } else {
                req.script = entry.script;
                req.interpreter = interpreter_path(entry.interpreter);
                req.args = a->args;
        }
        req.input_json = a->input;
        req.files = files;
        req.n_files = n_files;
        req.env = a->env;
        req.limits = a->limits;
        /* The skill's own declaration can only lower what the flags or the defaults give. */
        req.limits_from_skill = skill_declared_limits_apply(&declared, &req.limits);
        /* The run gets no more than the caller has: it shares this process's network. */
        req.network = a->network;
        req.env_dir_fd = env_fd;
        req.env_search = env_search;
        /* Embedded runs may fall back to rlimits where no cgroup can be had: the documented
         * fallback, and the result says which backend was in force. Nothing else may be missing. */
        req.allow_missing = SANDBOX_LAYER_CGROUP;
        req.output_dir = a->output_dir ?: default_dir;
        req.stdout_fd = a->json ? -EBADF : STDOUT_FILENO;
        req.stderr_fd = a->json ? -EBADF : STDERR_FILENO;
        req.cancel_fd = cancel_fd;
        req.ahead = ahead;

        r = sandbox_run(&req, &res, &error);
        run_close_files(fds, n_files);
        if (r < 0)
                return run_fail("%s", error ?: strerror(-r));
        /* The idle TTL counts from the end of the last run. */
        if (session)
                (void) session_touch(sessions, session, now_realtime_usec());

        if (a->json) {
                _cleanup_(cJSON_Deletep) cJSON *j = NULL;
                _cleanup_free_ char *text = NULL;

                r = run_result_to_json(res, &j);
                if (r < 0 || !(text = json_format(j)))
                        return log_oom(), EXIT_RUN_FAILED;
                (void) fputs(text, stdout);
        } else if (!a->quiet || res->status == RUN_STATUS_ERROR)
                run_summary_print(res, res->output_dir);
        if (res->store_error)
                fprintf(stderr, "skillctl: warning: %s\n", res->store_error);

        return run_result_exit_code(res);
}

bool run_skill_is_installed_name(const char *skill) {
        return access(skill, F_OK) < 0 && errno == ENOENT && !strchr(skill, '/') &&
               skill_name_is_valid(skill);
}

/* SKILL as given: an existing path is used as it is; a bare name is looked up in the user's
 * skill folders (skill-path.h), else left for the service's installed skills. Anything else
 * that does not exist is an error here, before any service is asked. Sets *found to the folder
 * found, or NULL. Returns 0, or the exit status after printing why. */
static int resolve_skill(RunArgs *a, char **found) {
        int r;

        if (access(a->skill, F_OK) >= 0)
                return 0;
        if (errno != ENOENT)
                return run_fail("%s: %m", a->skill);
        if (!run_skill_is_installed_name(a->skill))
                return run_fail("%s: no such file or directory (expected a skill folder, a .skill file, "
                                "or the name of a skill: see 'skillctl skill list')", a->skill);
        r = skill_path_find(a->skill, found);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return run_fail("%s: cannot search the skill folders: %s", a->skill, strerror(-r));
        log_debug("Skill %s found in the user's skill folders: %s", a->skill, *found);
        a->skill = *found;
        return 0;
}

/* Whether a skilld service is installed here (its bus activation file is): only then is running
 * embedded worth a notice, since the caller may have expected the service. */
static bool service_installed(void) {
        return access(DBUS_SYSTEM_SERVICE_DIR "/io.skilld.Skilld1.service", F_OK) >= 0;
}

/* $SKILLCTL_MODE: local (always embedded, as --local), system (as --system) or auto (the
 * default: the service when one answers). The options win over it. */
static int apply_mode(RunArgs *a) {
        const char *mode = getenv("SKILLCTL_MODE");

        if (isempty(mode) || streq(mode, "auto") || a->local || a->system)
                return 0;
        if (streq(mode, "local"))
                a->local = !arg_host;
        else if (streq(mode, "system"))
                a->system = true;
        else
                return run_fail("$SKILLCTL_MODE=%s: expected local, system or auto", mode);
        return 0;
}

static int run_or_exec(int argc, char *argv[], bool exec) {
        _cleanup_(run_args_done) RunArgs a = { .limits = SANDBOX_LIMITS_DEFAULT, .exec = exec };
        _cleanup_(client_freep) Client *client = NULL;
        _cleanup_free_ char *reason = NULL, *found = NULL;
        bool installed;
        int r;

        /* < 0: bad arguments (already reported), 0: --help, > 0: run. */
        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_RUN_FAILED : 0;
        r = apply_mode(&a);
        if (r != 0)
                return r;
        if (!arg_host) {
                r = resolve_skill(&a, &found);
                if (r != 0)
                        return r;
        }

        if (a.local)
                return run_embedded(&a);

        /* Only when nothing answers do we run embedded: a service that exists and fails is an
         * error, since its host's admin chose it (its policy, its limits) for runs here. An
         * installed skill's Run itself asks the system bus whether the service is there (nothing
         * is packed for it, and it cannot run embedded): no Ping before it. */
        installed = run_skill_is_installed_name(a.skill);
        r = installed ? client_open_unconfirmed(&client, &reason) : client_open(&client, &reason);
        if (r > 0) {
                r = run_via_service(client, &a, &reason);
                if (r != RUN_NO_SERVICE)
                        return r;
                /* Nothing on the system bus: on to the private socket, as client_open() goes. */
                client = client_free(client);
                r = client_open_after_bus(&client, &reason);
                if (r > 0)
                        return run_via_service(client, &a, NULL);
        }
        if (r < 0)
                return run_fail("%s%s", reason ?: strerror(-r),
                                arg_host ? "" : " (--local runs without the service)");

        log_debug("No skilld service: %s", strna(reason));
        if (a.system || arg_host)
                return run_fail("no skilld service answered, and %s forbids running embedded: %s",
                                a.system ? "--system" : "-H", strna(reason));
        if (installed)
                return run_fail("%s: no skill of that name in your skill folders (see 'skillctl skill "
                                "list'), and no skilld service answered to run an installed one", a.skill);
        if (!a.quiet && !a.json && service_installed())
                (void) fputs("skillctl: the skilld service is installed but did not answer, running embedded "
                             "(--local or SKILLCTL_MODE=local to always do so)\n", stderr);
        return run_embedded(&a);
}

int verb_run(int argc, char *argv[]) {
        return run_or_exec(argc, argv, false);
}

int verb_exec(int argc, char *argv[]) {
        return run_or_exec(argc, argv, true);
}
