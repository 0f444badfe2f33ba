/* The lint rules. The parser accepted whatever a lenient client would; here every departure from
 * the Agent Skills specification becomes an error (the skill is invalid) or a warning (advice),
 * each tied to the file, key and line it came from. The checks read the Skill defensively: any
 * member may be NULL, as a half-filled Skill must still lint without crashing. */
#include "deps.h"
#include "error.h"
#include "lint.h"
#include "parse-util.h"
#include "string-table.h"

#define NAME_MAX_CHARS 64U
#define DESCRIPTION_MAX_CHARS 1024U
#define COMPATIBILITY_MAX_CHARS 500U

/* Where a missing key is reported: the frontmatter's opening line. */
#define LINE_FRONTMATTER 1U

static const char * const severity_table[] = {
        [LINT_WARNING] = "warning",
        [LINT_ERROR]   = "error",
};

DEFINE_STRING_TABLE_TO_STRING(lint_severity, LintSeverity, severity_table);

static void lint_diag_done(LintDiag *d) {
        free(d->file);
        free(d->key);
        free(d->message);
        *d = (LintDiag) {};
}

LintReport *lint_report_new(void) {
        return calloc(1, sizeof(LintReport));
}

LintReport *lint_report_free(LintReport *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_diags; i++)
                lint_diag_done(&r->diags[i]);
        free(r->diags);
        free(r);
        return NULL;
}

int lint_report_add(LintReport *r, LintSeverity severity, const char *file, const char *key,
                    unsigned line, const char *fmt, ...) {
        _cleanup_(lint_diag_done) LintDiag d = {
                .severity = severity,
                .line = line,
        };
        LintDiag *a;
        va_list ap;
        int k;

        if (!r || !fmt)
                return -EINVAL;

        d.file = strdup(file ?: "SKILL.md");
        d.key = key ? strdup(key) : NULL;
        if (!d.file || (key && !d.key))
                return -ENOMEM;
        va_start(ap, fmt);
        k = vasprintf(&d.message, fmt, ap);
        va_end(ap);
        if (k < 0) {
                d.message = NULL;
                return -ENOMEM;
        }

        a = reallocarray(r->diags, r->n_diags + 1, sizeof(LintDiag));
        if (!a)
                return -ENOMEM;
        r->diags = a;
        r->diags[r->n_diags++] = d;
        d = (LintDiag) {};
        if (severity == LINT_ERROR)
                r->n_errors++;
        else
                r->n_warnings++;
        return 0;
}

int lint_report_add_error_message(LintReport *r, const char *default_file, const char *message) {
        _cleanup_free_ char *file = NULL;
        const char *colon, *rest = message;
        unsigned line = 0;

        /* The parsers say "SKILL.md:4: what"; keep file and line as fields so they print once. */
        colon = strchr(message, ':');
        if (colon && colon > message) {
                const char *p = colon + 1, *digits = p;

                while (*p >= '0' && *p <= '9')
                        p++;
                if (p > digits && p - digits < 10 && p[0] == ':' && p[1] == ' ') {
                        _cleanup_free_ char *num = strndup(digits, p - digits);

                        if (!num)
                                return -ENOMEM;
                        if (safe_atou(num, &line) >= 0) {
                                file = strndup(message, colon - message);
                                if (!file)
                                        return -ENOMEM;
                                rest = p + 2;
                        }
                }
        }
        return lint_report_add(r, LINT_ERROR, file ?: default_file, NULL, line, "%s", rest);
}

bool skill_name_is_valid(const char *name) {
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        if (n < 1 || n > NAME_MAX_CHARS)
                return false;
        if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
                return false;
        if (name[0] == '-' || name[n - 1] == '-' || strstr(name, "--"))
                return false;
        return true;
}

/* Characters as the specification counts them: Unicode code points. The parser only lets valid
 * UTF-8 through, so counting the bytes that do not continue a sequence is enough. */
static size_t utf8_chars(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        n++;
        return n;
}

typedef struct Linter {
        const Skill *skill;
        LintReport *report;
        const char *file;
} Linter;

#define lint_error(l, key, line, ...) \
        lint_report_add((l)->report, LINT_ERROR, (l)->file, (key), (line), __VA_ARGS__)
#define lint_warning(l, key, line, ...) \
        lint_report_add((l)->report, LINT_WARNING, (l)->file, (key), (line), __VA_ARGS__)

/* The string-valued keys of the specification (and entry_point) with their rules. */
typedef struct StringRule {
        const char *key;
        bool required;
        size_t max_chars;       /* 0: no limit */
        bool empty_is_error;
} StringRule;

static const StringRule string_rules[] = {
        { "name",          true,  NAME_MAX_CHARS,          true  },
        { "description",   true,  DESCRIPTION_MAX_CHARS,   true  },
        { "license",       false, 0,                       false },
        { "compatibility", false, COMPATIBILITY_MAX_CHARS, true  },
        { "allowed-tools", false, 0,                       false },
        { "entry_point",   false, 0,                       true  },
};

static const char *skill_string(const Skill *s, const char *key) {
        if (streq(key, "name"))
                return s->name;
        if (streq(key, "description"))
                return s->description;
        if (streq(key, "license"))
                return s->license;
        if (streq(key, "compatibility"))
                return s->compatibility;
        if (streq(key, "allowed-tools"))
                return s->allowed_tools;
        if (streq(key, "entry_point"))
                return s->entry_point;
        return NULL;
}

static const char *kind_name(SkillValueKind k) {
        return skill_value_kind_to_string(k) ?: "value of unknown kind";
}

static bool kind_is_scalar_non_string(SkillValueKind k) {
        return k == SKILL_VALUE_BOOL || k == SKILL_VALUE_INT || k == SKILL_VALUE_FLOAT ||
                k == SKILL_VALUE_TIMESTAMP;
}

static int lint_name(Linter *l, const char *name, unsigned line, const char *dir_name) {
        size_t n = strlen(name), chars = utf8_chars(name);
        int r = 0;

        if (chars > NAME_MAX_CHARS)
                r = lint_error(l, "name", line, "is %zu characters long; at most %u are allowed", chars,
                               NAME_MAX_CHARS);
        else if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
                r = lint_error(l, "name", line,
                               "'%s' may only hold lowercase letters a-z, digits and hyphens", name);
        else if (name[0] == '-' || name[n - 1] == '-')
                r = lint_error(l, "name", line, "'%s' must not start or end with a hyphen", name);
        else if (strstr(name, "--"))
                r = lint_error(l, "name", line, "'%s' must not hold two hyphens in a row", name);
        if (r < 0)
                return r;

        if (dir_name && !streq(name, dir_name))
                return lint_error(l, "name", line, "'%s' does not match the folder name '%s'", name,
                                  dir_name);
        return 0;
}

static int lint_string_key(Linter *l, const StringRule *rule, const char *dir_name) {
        const SkillField *f = skill_get_field(l->skill, rule->key);
        const char *value = skill_string(l->skill, rule->key);
        size_t chars;
        int r;

        if (!f) {
                if (rule->required)
                        return lint_error(l, rule->key, LINE_FRONTMATTER, "required key is missing");
                return 0;
        }

        if (!f->is_scalar) {
                /* A list of plain tool names: a common, harmless spelling the parser joined. */
                if (streq(rule->key, "allowed-tools") && f->kind == SKILL_VALUE_SEQUENCE && value)
                        return lint_warning(l, rule->key, f->line,
                                            "is a YAML list; the specification asks for one "
                                            "space-separated string");
                return lint_error(l, rule->key, f->line, "must be a string, found a %s", kind_name(f->kind));
        }

        if (f->kind == SKILL_VALUE_NULL || !value) {
                if (rule->empty_is_error)
                        return lint_error(l, rule->key, f->line, "must not be empty");
                return lint_warning(l, rule->key, f->line, "is empty");
        }

        if (kind_is_scalar_non_string(f->kind)) {
                r = lint_warning(l, rule->key, f->line,
                                 "YAML reads the unquoted value '%s' as a %s, not a string; quote it",
                                 value, kind_name(f->kind));
                if (r < 0)
                        return r;
        }

        chars = utf8_chars(value);
        if (chars == 0)
                return rule->empty_is_error ? lint_error(l, rule->key, f->line, "must not be empty")
                                            : lint_warning(l, rule->key, f->line, "is empty");
        if (rule->max_chars > 0 && chars > rule->max_chars && !streq(rule->key, "name"))
                return lint_error(l, rule->key, f->line, "is %zu characters long; at most %zu are allowed",
                                  chars, rule->max_chars);

        if (streq(rule->key, "name"))
                return lint_name(l, value, f->line, dir_name);
        return 0;
}

static int lint_metadata(Linter *l) {
        const SkillField *f = skill_get_field(l->skill, "metadata");
        int r;

        if (!f)
                return 0;
        if (f->kind == SKILL_VALUE_NULL)
                return lint_warning(l, "metadata", f->line, "is empty");
        if (f->kind != SKILL_VALUE_MAPPING)
                return lint_error(l, "metadata", f->line,
                                  "must be a mapping of strings to strings, found a %s", kind_name(f->kind));

        for (size_t i = 0; i < l->skill->n_metadata_fields; i++) {
                const SkillField *m = &l->skill->metadata_fields[i];
                _cleanup_free_ char *key = strdup_printf("metadata.%s", strempty(m->key));

                if (!key)
                        return -ENOMEM;
                if (m->kind == SKILL_VALUE_STRING)
                        continue;
                if (!m->is_scalar)
                        r = lint_error(l, key, m->line, "values must be strings, found a %s",
                                       kind_name(m->kind));
                else if (m->kind == SKILL_VALUE_NULL)
                        r = lint_error(l, key, m->line, "values must be strings, found an empty value");
                else
                        r = lint_error(l, key, m->line,
                                       "values must be strings; YAML reads the unquoted '%s' as a %s, "
                                       "quote it", strempty(m->value), kind_name(m->kind));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int lint_unknown_keys(Linter *l) {
        int r;

        for (size_t i = 0; i < l->skill->n_fields; i++) {
                const SkillField *f = &l->skill->fields[i];

                /* entry_point is not in the specification, but skilld honours it: no advice to
                 * give about it. */
                if (!f->key || skill_key_is_known(f->key) || streq(f->key, "entry_point"))
                        continue;
                r = lint_warning(l, f->key, f->line, "kept but not part of the Agent Skills specification");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int lint_file(Linter *l) {
        const Skill *s = l->skill;
        int r;

        if (s->md_filename && !streq(s->md_filename, "SKILL.md")) {
                r = lint_warning(l, NULL, 0, "named %s; the specification asks for SKILL.md",
                                 s->md_filename);
                if (r < 0)
                        return r;
        }

        if (!s->body || s->body[strspn(s->body, " \t\r\n")] == '\0')
                return lint_warning(l, NULL, s->body_line,
                                    "the Markdown body is empty; "
                                    "it should tell the agent how to use the skill");
        return 0;
}

/* Stable, so that two findings on one line keep the order the checks ran in. n is small (one or
 * two per key, and keys are capped), insertion sort is plenty. */
static void diags_sort_by_line(LintDiag *d, size_t n) {
        for (size_t i = 1; i < n; i++) {
                LintDiag t = d[i];
                size_t j = i;

                for (; j > 0 && d[j - 1].line > t.line; j--)
                        d[j] = d[j - 1];
                d[j] = t;
        }
}

int skill_lint(const Skill *s, const char *dir_name, LintReport *report) {
        Linter l = {
                .skill = s,
                .report = report,
        };
        size_t first;
        int r;

        if (!s || !report)
                return -EINVAL;
        l.file = s->md_filename ?: "SKILL.md";
        first = report->n_diags;

        for (size_t i = 0; i < ELEMENTSOF(string_rules); i++) {
                r = lint_string_key(&l, &string_rules[i], dir_name);
                if (r < 0)
                        return r;
        }
        r = lint_metadata(&l);
        if (r < 0)
                return r;
        r = skill_deps_lint(s, NULL, report);   /* the dependency keys of metadata */
        if (r < 0)
                return r;
        r = lint_unknown_keys(&l);
        if (r < 0)
                return r;
        r = lint_file(&l);
        if (r < 0)
                return r;

        /* With no diagnostics at all, diags is NULL, and NULL + 0 is undefined behaviour. */
        if (report->n_diags > first)
                diags_sort_by_line(report->diags + first, report->n_diags - first);
        return 0;
}
