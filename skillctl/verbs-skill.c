/* "skillctl skill ...": lint, show and package skills from a folder or a .skill file. These run
 * entirely in the client: loading a skill is safe for the caller (the loader never writes
 * outside its private temporary directory), and nothing here needs privileges. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <sys/stat.h>

#include "entry.h"
#include "error.h"
#include "fileio.h"
#include "hash.h"
#include "lint.h"
#include "loader.h"
#include "log.h"
#include "skill-deps.h"
#include "parse-util.h"
#include "skill-limits.h"
#include "output.h"
#include "skill.h"
#include "verbs.h"

/* A skill opened for inspection: the validated tree and its parsed SKILL.md. */
typedef struct Inspected {
        SkillSource *source;
        Skill *skill;
} Inspected;

static void inspected_done(Inspected *i) {
        i->skill = skill_free(i->skill);
        i->source = skill_source_free(i->source);
}

/* Errors that say the skill could not be read at all, as opposed to being read and found bad. */
static bool errno_is_io(int r) {
        switch (-r) {
        case ENOENT: case EACCES: case EIO: case ENOMEM: case ENOSPC: case EROFS: case EMFILE:
                return true;
        default:
                return false;
        }
}

static int print_json(cJSON *j) {
        return json_print(j) < 0 ? log_oom() : 0;
}

/* Opens and parses a skill. On failure prints "skillctl: PATH: why" and returns the exit status
 * (EXIT_USAGE when the path cannot be read, EXIT_INVALID when what was read is not a valid skill),
 * unless report is given, in which case an invalid skill becomes a lint error in it. */
static int inspect(const char *path, Inspected *ret, LintReport *report) {
        _cleanup_free_ char *error = NULL;
        struct stat st;
        int r;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "skillctl: %s: %m\n", path);
                return EXIT_USAGE;
        }
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
                fprintf(stderr, "skillctl: %s: not a directory or a .skill file\n", path);
                return EXIT_USAGE;
        }

        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        r = skill_source_open(path, &limits, &ret->source, &error);
        if (r < 0) {
                if (errno_is_io(r) || !report) {
                        fprintf(stderr, "skillctl: %s: %s\n", path, error ?: strerror(-r));
                        return errno_is_io(r) ? EXIT_USAGE : EXIT_INVALID;
                }
                (void) lint_report_add(report, LINT_ERROR, ".", NULL, 0, "%s", error ?: strerror(-r));
                return EXIT_INVALID;
        }

        r = skill_load_at(ret->source->dir_fd, &ret->skill, &error);
        if (r < 0) {
                if (!report || errno_is_io(r)) {
                        fprintf(stderr, "skillctl: %s: %s\n", path, error ?: strerror(-r));
                        return errno_is_io(r) ? EXIT_USAGE : EXIT_INVALID;
                }
                (void) lint_report_add_error_message(report, "SKILL.md", error ?: strerror(-r));
                return EXIT_INVALID;
        }
        return 0;
}

/* inspect() and then the lint rules: what lint reports and what package refuses on. Returns
 * EXIT_USAGE when the path could not be read; otherwise the report says whether it is valid. */
static int inspect_and_lint(const char *path, Inspected *i, LintReport **ret_report) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();
        int r;

        if (!report)
                return log_oom(), EXIT_USAGE;
        r = inspect(path, i, report);
        if (r == EXIT_USAGE)
                return r;
        if (r == 0 && skill_lint(i->skill, i->source->dir_name, report) < 0)
                return log_oom(), EXIT_USAGE;
        if (r == 0 && cli_skill_deps_lint(i->source, i->skill, report) < 0)
                return log_oom(), EXIT_USAGE;
        *ret_report = TAKE_PTR(report);
        return 0;
}

void lint_diag_print(FILE *f, const char *prefix, const char *path, const LintDiag *d) {
        _cleanup_free_ char *msg = cescape(d->message);

        (void) fputs(prefix, f);
        /* "." stands for the skill as a whole (say, an archive the loader refused). */
        if (streq(d->file, "."))
                fprintf(f, "%s", path);
        else
                fprintf(f, "%s/%s", path, d->file);
        if (d->line > 0)
                fprintf(f, ":%u", d->line);
        fprintf(f, ": %s: ", lint_severity_to_string(d->severity));
        if (d->key) {
                _cleanup_free_ char *key = cescape(d->key);
                fprintf(f, "%s: ", key ?: d->key);
        }
        fprintf(f, "%s\n", msg ?: d->message);
}

static cJSON *diag_to_json(const LintDiag *d) {
        cJSON *j = cJSON_CreateObject();

        if (!j)
                return NULL;
        cJSON_AddStringToObject(j, "severity", lint_severity_to_string(d->severity));
        cJSON_AddStringToObject(j, "file", d->file);
        if (d->key)
                cJSON_AddStringToObject(j, "key", d->key);
        else
                cJSON_AddNullToObject(j, "key");
        cJSON_AddNumberToObject(j, "line", d->line);
        cJSON_AddStringToObject(j, "message", d->message);
        return j;
}

static void lint_help(void) {
        printf("Usage: skillctl skill lint PATH [--strict] [--json]\n\n"
               "Validate a skill folder or .skill file against the Agent Skills specification.\n\n"
               "  --strict    Treat warnings as errors\n"
               "  --json      Print the diagnostics as JSON\n\n"
               "Exit status: 0 valid, 1 invalid, 2 usage or I/O error.\n");
}

static int skill_lint_main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",   no_argument, NULL, 'h' },
                { "strict", no_argument, NULL, 's' },
                { "json",   no_argument, NULL, 'j' },
                {}
        };
        _cleanup_(lint_report_freep) LintReport *report = NULL;
        _cleanup_(inspected_done) Inspected i = {};
        bool strict = false, json = false, valid;
        const char *path;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        lint_help();
                        return 0;
                case 's':
                        strict = true;
                        break;
                case 'j':
                        json = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("skill lint", "expects exactly one PATH");
        path = argv[optind];

        r = inspect_and_lint(path, &i, &report);
        if (r == EXIT_USAGE)
                return r;

        valid = report->n_errors == 0 && (!strict || report->n_warnings == 0);

        if (json) {
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateObject();
                cJSON *arr;

                if (!j)
                        return log_oom(), EXIT_USAGE;
                cJSON_AddStringToObject(j, "path", path);
                cJSON_AddBoolToObject(j, "valid", valid);
                cJSON_AddBoolToObject(j, "strict", strict);
                cJSON_AddNumberToObject(j, "errors", report->n_errors);
                cJSON_AddNumberToObject(j, "warnings", report->n_warnings);
                arr = cJSON_AddArrayToObject(j, "diagnostics");
                for (size_t k = 0; arr && k < report->n_diags; k++)
                        cJSON_AddItemToArray(arr, diag_to_json(&report->diags[k]));
                if (print_json(j) < 0)
                        return EXIT_USAGE;
        } else {
                for (size_t k = 0; k < report->n_diags; k++)
                        lint_diag_print(stdout, "", path, &report->diags[k]);
                printf("%s: %s (%zu error%s, %zu warning%s%s)\n", path, valid ? "valid" : "invalid",
                       report->n_errors, report->n_errors == 1 ? "" : "s",
                       report->n_warnings, report->n_warnings == 1 ? "" : "s",
                       strict && report->n_warnings > 0 ? ", --strict" : "");
        }
        return valid ? 0 : EXIT_INVALID;
}

static void show_help(void) {
        printf("Usage: skillctl skill show PATH [--json]\n\n"
               "Show a skill's metadata, scripts, entry point, interpreter, content hash and the\n"
               "dependencies it declares or its scripts import.\n\n"
               "  --json      Print as JSON\n");
}

static int skill_show_main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                {}
        };
        _cleanup_(inspected_done) Inspected i = {};
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_free_ char *entry_error = NULL, *hash_error = NULL, *infer_error = NULL, *deps_error = NULL,
                *limits_error = NULL;
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        SkillDeclaredLimits declared = {};
        _cleanup_strv_free_ char **scripts = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        char hash[SHA256_HEX_SIZE];
        bool json = false;
        const Skill *s;
        cJSON *o;
        int c, r, entry_r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        show_help();
                        return 0;
                case 'j':
                        json = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("skill show", "expects exactly one PATH");

        r = inspect(argv[optind], &i, NULL);
        if (r != 0)
                return r;
        s = i.skill;

        r = skill_source_hash(i.source, hash, &hash_error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: cannot hash: %s\n", argv[optind], hash_error ?: strerror(-r));
                return EXIT_INVALID;
        }
        r = skill_list_scripts(i.source->dir_fd, &scripts);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: cannot list scripts: %s\n", argv[optind], strerror(-r));
                return EXIT_USAGE;
        }
        entry_r = skill_resolve_entry(s, i.source->dir_fd, NULL, &entry, &entry_error);
        r = cli_skill_deps(i.source, s, &deps, &infer_error, &deps_error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: %s\n", argv[optind], deps_error ?: strerror(-r));
                return r == -ENOMEM ? EXIT_USAGE : EXIT_INVALID;
        }
        if (skill_declared_limits(s, &declared, &limits_error) == -ENOMEM)
                return log_oom(), EXIT_USAGE;

        j = cJSON_CreateObject();
        if (!j)
                return log_oom(), EXIT_USAGE;
        cJSON_AddStringToObject(j, "path", argv[optind]);
        cJSON_AddStringToObject(j, "source", i.source->from_archive ? "archive" : "directory");
        cJSON_AddStringToObject(j, "name", strempty(s->name));
        cJSON_AddStringToObject(j, "description", strempty(s->description));
        if (s->license)
                cJSON_AddStringToObject(j, "license", s->license);
        if (s->compatibility)
                cJSON_AddStringToObject(j, "compatibility", s->compatibility);
        if (s->allowed_tools)
                cJSON_AddStringToObject(j, "allowed_tools", s->allowed_tools);
        o = cJSON_AddObjectToObject(j, "metadata");
        for (char **m = s->metadata; o && m && m[0] && m[1]; m += 2)
                cJSON_AddStringToObject(o, m[0], m[1]);
        o = cJSON_AddArrayToObject(j, "scripts");
        STRV_FOREACH(p, scripts)
                cJSON_AddItemToArray(o, cJSON_CreateString(*p));
        o = cJSON_AddObjectToObject(j, "entry_point");
        if (o && entry_r >= 0) {
                cJSON_AddStringToObject(o, "script", entry.script);
                cJSON_AddStringToObject(o, "interpreter", interpreter_to_string(entry.interpreter));
                if (interpreter_path(entry.interpreter))
                        cJSON_AddStringToObject(o, "interpreter_path", interpreter_path(entry.interpreter));
                cJSON_AddStringToObject(o, "resolved_by", entry.how);
        } else if (o)
                cJSON_AddStringToObject(o, "error", entry_error ?: strerror(-entry_r));
        cJSON_AddStringToObject(j, "content_hash", hash);
        if (limits_error) {
                o = cJSON_AddObjectToObject(j, "declared_limits");
                if (o)
                        cJSON_AddStringToObject(o, "error", limits_error);
        } else {
                r = skill_declared_limits_to_json(&declared, &o);
                if (r < 0)
                        return log_oom(), EXIT_USAGE;
                cJSON_AddItemToObject(j, "declared_limits", o ?: cJSON_CreateNull());
        }
        o = cJSON_AddArrayToObject(j, "unknown_keys");
        for (size_t k = 0; o && k < s->n_fields; k++)
                if (!skill_key_is_known(s->fields[k].key))
                        cJSON_AddItemToArray(o, cJSON_CreateString(s->fields[k].key));
        if (cli_skill_deps_json(j, deps, infer_error) < 0)
                return log_oom(), EXIT_USAGE;

        if (json)
                return print_json(j) < 0 ? EXIT_USAGE : 0;

        /* Everything below comes from the skill, and a hostile one would write escape sequences
         * to the terminal: all of it goes through cescape(). */
        {
                _cleanup_free_ char *name = cescape(strempty(s->name)),
                                    *desc = cescape(strempty(s->description));

                printf("         Name: %s\n", strna(name));
                printf("  Description: %s\n", strna(desc));
        }
        if (s->license) {
                _cleanup_free_ char *e = cescape(s->license);
                printf("      License: %s\n", strna(e));
        }
        if (s->compatibility) {
                _cleanup_free_ char *e = cescape(s->compatibility);
                printf("Compatibility: %s\n", strna(e));
        }
        {
                _cleanup_free_ char *e = cescape(argv[optind]);
                printf("       Source: %s (%s)\n", strna(e), i.source->from_archive ? "archive" : "directory");
        }
        printf("      Scripts:");
        if (strv_length(scripts) == 0)
                printf(" none");
        STRV_FOREACH(p, scripts) {
                _cleanup_free_ char *e = cescape(*p);
                printf(" %s", strna(e));
        }
        printf("\n");
        if (entry_r >= 0) {
                _cleanup_free_ char *e = cescape(entry.script);
                printf("  Entry point: %s (%s, %s)\n", strna(e), interpreter_to_string(entry.interpreter),
                       entry.how);
        } else {
                _cleanup_free_ char *e = cescape(entry_error ?: strerror(-entry_r));
                printf("  Entry point: none: %s\n", strna(e));
        }
        printf("         Hash: sha256:%s\n", hash);
        if (limits_error) {
                _cleanup_free_ char *e = cescape(limits_error);
                printf("       Limits: invalid: %s\n", strna(e));
        } else if (declared.set != 0) {
                char b[FORMAT_BYTES_MAX];

                /* Requests: a run gets no more than its caller's flags and the policy give. */
                printf("       Limits:");
                if (declared.set & SANDBOX_LIMIT_TIMEOUT)
                        printf(" timeout %" PRIu64 ".%03" PRIu64 "s", declared.timeout_usec / 1000000,
                               declared.timeout_usec / 1000 % 1000);
                if (declared.set & SANDBOX_LIMIT_MEMORY)
                        printf(" memory %s", format_bytes(b, sizeof(b), declared.memory_max));
                if (declared.set & SANDBOX_LIMIT_CPU)
                        printf(" cpu %u%%", declared.cpu_percent);
                printf(" (at most; the caller's and the policy's limits still apply)\n");
        }
        cli_skill_deps_print(deps, infer_error);
        for (char **m = s->metadata; m && m[0] && m[1]; m += 2) {
                _cleanup_free_ char *k = cescape(m[0]), *v = cescape(m[1]);
                printf("     Metadata: %s=%s\n", strna(k), strna(v));
        }
        for (size_t k = 0; k < s->n_fields; k++)
                if (!skill_key_is_known(s->fields[k].key)) {
                        _cleanup_free_ char *e = cescape(s->fields[k].key);
                        printf("  Unknown key: %s (line %u)\n", strna(e), s->fields[k].line);
                }
        return 0;
}

static void package_help(void) {
        printf("Usage: skillctl skill package DIR [-o FILE]\n\n"
               "Build a .skill archive (a zip with every file under <name>/) from a skill folder.\n"
               "The skill is linted first; an invalid skill is refused.\n\n"
               "  -o --output FILE   Where to write the archive (default: ./<name>.skill)\n");
}

static int skill_package_main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "output", required_argument, NULL, 'o' },
                {}
        };
        _cleanup_(lint_report_freep) LintReport *report = NULL;
        _cleanup_(inspected_done) Inspected i = {};
        _cleanup_free_ char *output = NULL, *tmp = NULL, *error = NULL, *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        char hash[SHA256_HEX_SIZE];
        struct stat st;
        const char *path;
        int c, r;

        while ((c = getopt_long(argc, argv, "ho:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        package_help();
                        return 0;
                case 'o':
                        free(output);
                        output = strdup(optarg);
                        if (!output)
                                return log_oom(), EXIT_USAGE;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("skill package", "expects exactly one DIR");
        path = argv[optind];

        if (stat(path, &st) < 0) {
                fprintf(stderr, "skillctl: %s: %m\n", path);
                return EXIT_USAGE;
        }
        if (!S_ISDIR(st.st_mode))
                return usage_error(path, "not a directory (package takes a skill folder)");

        r = inspect_and_lint(path, &i, &report);
        if (r == EXIT_USAGE)
                return r;
        for (size_t k = 0; k < report->n_diags; k++)
                lint_diag_print(stdout, "", path, &report->diags[k]);
        if (report->n_errors > 0) {
                fprintf(stderr, "skillctl: %s: refusing to package an invalid skill (%zu error%s)\n", path,
                        report->n_errors, report->n_errors == 1 ? "" : "s");
                return EXIT_INVALID;
        }

        if (!output) {
                output = strdup_printf("%s.skill", i.skill->name);
                if (!output)
                        return log_oom(), EXIT_USAGE;
        }

        /* Write next to the destination and rename, so a failure never leaves a partial archive
         * under the final name. */
        dir = strdup(output);
        if (!dir)
                return log_oom(), EXIT_USAGE;
        tmp = strdup_printf("%s/.#skillctl-package.XXXXXX", dirname(dir));
        if (!tmp)
                return log_oom(), EXIT_USAGE;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "skillctl: %s: cannot create temporary file: %m\n", output);
                return EXIT_USAGE;
        }

        r = skill_package(i.source->dir_fd, i.skill->name, fd, &error);
        /* mkostemp() made it 0600: what a created file gets, under the user's umask. */
        if (r >= 0 && fchmod(fd, 0644 & ~umask_get()) < 0)
                r = -errno;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && rename(tmp, output) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                fprintf(stderr, "skillctl: %s: cannot write archive: %s\n", output, error ?: strerror(-r));
                return EXIT_USAGE;
        }

        r = skill_source_hash(i.source, hash, &error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: cannot hash: %s\n", path, error ?: strerror(-r));
                return EXIT_USAGE;
        }
        printf("%s: wrote %s (sha256:%s)\n", i.skill->name, output, hash);
        return 0;
}

int verb_skill(int argc, char *argv[]) {
        static const Verb subverbs[] = {
                { "lint",    skill_lint_main },
                { "show",    skill_show_main },
                { "package", skill_package_main },
                { "list",    verb_skill_list },
                { "install", verb_skill_install },
                { "remove",  verb_skill_remove },
                { "init",    skill_init_main },
                { "tools",   verb_skill_tools },
        };

        if (argc < 2)
                return usage_error("skill",
                                   "missing subcommand (lint, show, package, list, install, remove, init, tools)");
        if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
                printf("Usage: skillctl skill {lint|show|package|list|install|remove|init|tools} ...\n");
                return 0;
        }
        return dispatch_verb(subverbs, ELEMENTSOF(subverbs), argc - 1, argv + 1, "skill subcommand");
}
