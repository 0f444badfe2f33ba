/* Strict validation of a skill against the Agent Skills specification, as `skillctl skill lint`
 * reports it. Errors make a skill invalid; warnings are advice that --strict turns into errors.
 * Every diagnostic names the file, the key (where one applies) and the line. */
#pragma once

#include "skill.h"

typedef enum LintSeverity {
        LINT_WARNING,
        LINT_ERROR,
} LintSeverity;

/* Warnings: keys outside the specification (except entry_point, which skilld honours), unquoted
 * values YAML reads as numbers/booleans/dates where a string belongs, allowed-tools written as a
 * list, an empty Markdown body, SKILL.md named skill.md. Having no scripts is not an issue. */
typedef struct LintDiag {
        LintSeverity severity;
        char *file;     /* relative to the skill root, e.g. "SKILL.md" */
        char *key;      /* frontmatter key, or NULL */
        unsigned line;  /* 0 when not tied to a line */
        char *message;
} LintDiag;

typedef struct LintReport {
        LintDiag *diags;
        size_t n_diags;
        size_t n_errors;
        size_t n_warnings;
} LintReport;

/* An empty report; callers may also calloc() one. */
LintReport *lint_report_new(void);
LintReport *lint_report_free(LintReport *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(LintReport *, lint_report_free);

int lint_report_add(LintReport *r, LintSeverity severity, const char *file, const char *key,
                    unsigned line, const char *fmt, ...) _printf_(6, 7);

/* Records a parser's error message ("SKILL.md:4: what") as an error diagnostic, taking the file
 * and line out of the text when it starts with them. */
int lint_report_add_error_message(LintReport *r, const char *default_file, const char *message);

/* Checks the parsed skill and appends to report (what it adds is sorted by line). dir_name is
 * the basename of the skill folder (or the top-level folder of an archive), which the name must
 * equal; NULL skips that rule. Works on any Skill, however little of it was filled in. Returns
 * -ENOMEM or -EINVAL only; an invalid skill is a report with n_errors > 0. */
int skill_lint(const Skill *s, const char *dir_name, LintReport *report);

/* Name rules alone: 1-64 of [a-z0-9-], no leading, trailing or doubled hyphen. */
bool skill_name_is_valid(const char *name);

const char *lint_severity_to_string(LintSeverity s);
