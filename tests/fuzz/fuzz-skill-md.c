/* Fuzz target "skill-md": bytes as a SKILL.md through the frontmatter parser, then everything
 * downstream that reads a parsed Skill: lint, and entry point resolution of a hostile
 * entry_point inside a fixed fixture skill (with a symlink leading out and a secret outside).
 *
 * Promises checked: a refusal carries one of the documented codes and a message that names the
 * file and is safe for a terminal; a parsed Skill is consistent (counts, lines inside the file,
 * known keys set only when usable); lint's report adds up; a resolved entry point is a regular
 * file inside the fixture, never the secret. */
#include <sys/stat.h>

#include "entry.h"
#include "error.h"
#include "fuzz.h"
#include "lint.h"
#include "skill.h"

static int skill_fd = -EBADF;

static void write_at(int dir_fd, const char *path, const char *contents, mode_t mode) {
        _cleanup_close_ int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

        fuzz_assert(fd >= 0, "%s: %m", path);
        fuzz_assert(loop_write(fd, contents, strlen(contents)) >= 0);
}

/* scratch/secret, and scratch/skill with a few scripts, a symlink to the secret, a FIFO and a
 * directory where a script could be expected. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
        int scratch = fuzz_scratch_fd();

        write_at(scratch, "secret", "top secret\n", 0600);
        fuzz_assert(mkdirat(scratch, "skill", 0755) >= 0);
        skill_fd = openat(scratch, "skill", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fuzz_assert(skill_fd >= 0);
        fuzz_assert(mkdirat(skill_fd, "scripts", 0755) >= 0);
        fuzz_assert(mkdirat(skill_fd, "scripts/sub", 0755) >= 0);
        fuzz_assert(mkdirat(skill_fd, "scripts/dir.py", 0755) >= 0);
        write_at(skill_fd, "SKILL.md", "---\nname: skill\ndescription: d\n---\n", 0644);
        write_at(skill_fd, "scripts/main.py", "print(1)\n", 0644);
        write_at(skill_fd, "scripts/tool", "#!/usr/bin/env -S node --x\n", 0755);
        write_at(skill_fd, "scripts/sub/x.sh", "echo\n", 0755);
        fuzz_assert(symlinkat("../../secret", skill_fd, "scripts/link.py") >= 0);
        fuzz_assert(symlinkat("..", skill_fd, "scripts/up") >= 0);
        fuzz_assert(mkfifoat(skill_fd, "scripts/fifo.sh", 0644) >= 0);
        return 0;
}

static bool code_is_documented(int r) {
        static const int codes[] = { -ENOMEM, -EFBIG, -EILSEQ, -EBADMSG, -EOPNOTSUPP, -E2BIG };

        for (size_t i = 0; i < ELEMENTSOF(codes); i++)
                if (r == codes[i])
                        return true;
        return false;
}

static void check_entry(const Skill *s, const char *override) {
        _cleanup_(skill_entry_done) SkillEntry e = {};
        _cleanup_free_ char *error = NULL;
        struct stat st;
        int r;

        r = skill_resolve_entry(s, skill_fd, override, &e, &error);
        if (r < 0) {
                fuzz_assert(r == -ENOMEM || error, "refusal %d without a message", r);
                fuzz_assert(!e.script, "ret touched on failure");
                return;
        }
        fuzz_assert(e.script && e.how);
        fuzz_assert(e.script[0] != '/' && !strstr(e.script, ".."), "entry point %s", e.script);
        fuzz_assert(fstatat(skill_fd, e.script, &st, AT_SYMLINK_NOFOLLOW) >= 0, "%s: %m", e.script);
        fuzz_assert(S_ISREG(st.st_mode), "entry point %s is not a regular file", e.script);
        fuzz_assert(!strstr(e.script, "link.py") && !strstr(e.script, "up/"), "followed a link: %s",
                    e.script);
        fuzz_assert(interpreter_to_string(e.interpreter));
}

static void check_lint(const Skill *s, const char *dir_name, unsigned lines) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();
        size_t errors = 0;

        fuzz_assert(report);
        fuzz_assert(skill_lint(s, dir_name, report) >= 0);
        fuzz_assert(report->n_errors + report->n_warnings == report->n_diags);
        for (size_t i = 0; i < report->n_diags; i++) {
                const LintDiag *d = &report->diags[i];

                fuzz_assert(d->file && d->message);
                fuzz_assert(d->line <= lines + 1, "diagnostic on line %u of %u", d->line, lines);
                fuzz_assert(i == 0 || report->diags[i - 1].line <= d->line, "not sorted by line");
                errors += d->severity == LINT_ERROR;
        }
        fuzz_assert(errors == report->n_errors);
        /* A skill that lints clean has a valid name, and a description. */
        if (report->n_errors == 0)
                fuzz_assert(skill_name_is_valid(s->name) && !isempty(s->description));
}

static void check_skill(const Skill *s, unsigned lines) {
        const struct {
                const char *key;
                char * const *value;
        } known[] = {
                { "name",          &s->name },
                { "description",   &s->description },
                { "license",       &s->license },
                { "compatibility", &s->compatibility },
                { "allowed-tools", &s->allowed_tools },
                { "entry_point",   &s->entry_point },
        };

        fuzz_assert(s->md_filename && s->body);
        fuzz_assert(s->n_fields <= SKILL_KEYS_MAX && s->n_metadata_fields <= SKILL_KEYS_MAX);
        /* An empty body after a closing line without a newline starts just past the end. */
        fuzz_assert(s->body_line >= 2 && s->body_line <= lines + 1, "body on line %u of %u",
                    s->body_line, lines);
        for (size_t i = 0; i < s->n_fields; i++) {
                const SkillField *f = &s->fields[i];

                fuzz_assert(f->key && f->line >= 1 && f->line < s->body_line,
                            "field on line %u, body on line %u", f->line, s->body_line);
                fuzz_assert(f->is_scalar == !!f->value);
                fuzz_assert(skill_value_kind_to_string(f->kind));
                fuzz_assert(skill_get_field(s, f->key) == f, "duplicate key %s", f->key);
        }
        for (size_t i = 0; i < s->n_metadata_fields; i++)
                fuzz_assert(s->metadata_fields[i].key && s->metadata_fields[i].line < s->body_line);
        STRV_FOREACH(m, s->metadata)
                fuzz_assert(*++m, "metadata list of odd length");
        /* A known key's value is set only from a scalar of that key that is not null. */
        for (size_t i = 0; i < ELEMENTSOF(known); i++) {
                const SkillField *f = skill_get_field(s, known[i].key);

                if (*known[i].value && !streq(known[i].key, "allowed-tools"))
                        fuzz_assert(f && f->is_scalar && f->kind != SKILL_VALUE_NULL &&
                                    streq(f->value, *known[i].value), "%s", known[i].key);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_free_ char *error = NULL;
        int fd_before = fuzz_lowest_free_fd();
        unsigned lines = 1;
        int r;

        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';

        /* data is not NUL-terminated: the parser must keep to size. */
        r = skill_parse_markdown((const char *) data, size, NULL, &s, &error);
        if (r < 0) {
                _cleanup_(lint_report_freep) LintReport *report = lint_report_new();

                fuzz_assert(code_is_documented(r), "undocumented error %d: %s", r, strna(error));
                fuzz_assert(!s, "ret set on failure");
                if (r != -ENOMEM) {
                        fuzz_assert(error && startswith(error, "SKILL.md"), "message: %s", strna(error));
                        fuzz_assert(fuzz_text_is_safe(error), "unsafe message: %s", error);
                        fuzz_assert(report);
                        fuzz_assert(lint_report_add_error_message(report, "SKILL.md", error) >= 0);
                        fuzz_assert(report->n_errors == 1 && streq(report->diags[0].file, "SKILL.md"));
                }
        } else {
                fuzz_assert(s && !error, "success with a message: %s", strna(error));
                check_skill(s, lines);
                check_lint(s, NULL, lines);
                check_lint(s, "skill", lines);
                check_entry(s, NULL);
                if (s->entry_point)
                        check_entry(NULL, s->entry_point);
        }

        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
