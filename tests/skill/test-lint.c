/* Tests for the lint rules: each rule with a passing and a failing case, the severity, the key
 * and the line each diagnostic carries, and lint on skills that are only partly filled in. */
#include "lint.h"
#include "test-util.h"

#define assert_contains(haystack, needle)                                                       \
        ck_assert_msg(strstr((haystack), (needle)), "'%s' does not contain '%s'", (haystack), (needle))

#define VALID_BODY "\n# Usage\n\nRun it.\n"

static LintReport *lint_text_as(const char *text, const char *filename, const char *dir_name) {
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_free_ char *error = NULL;
        LintReport *report;
        int r;

        r = skill_parse_markdown(text, strlen(text), filename, &s, &error);
        if (r < 0)
                ck_abort_msg("parse failed: %d %s", r, strna(error));
        report = lint_report_new();
        ck_assert_ptr_nonnull(report);
        ck_assert_int_eq(skill_lint(s, dir_name, report), 0);
        return report;
}

static LintReport *lint_text(const char *text, const char *dir_name) {
        return lint_text_as(text, "SKILL.md", dir_name);
}

/* The only diagnostic about key (NULL: about no key) with that severity. */
static const LintDiag *find_diag(const LintReport *r, LintSeverity severity, const char *key) {
        const LintDiag *found = NULL;

        for (size_t i = 0; i < r->n_diags; i++) {
                const LintDiag *d = &r->diags[i];

                if (d->severity != severity || !streq_ptr(d->key, key))
                        continue;
                ck_assert_msg(!found, "two %s diagnostics for %s", lint_severity_to_string(severity),
                              strna(key));
                found = d;
        }
        ck_assert_msg(found, "no %s diagnostic for %s", lint_severity_to_string(severity), strna(key));
        ck_assert_ptr_nonnull(found->file);
        ck_assert_ptr_nonnull(found->message);
        return found;
}

static void assert_clean(const LintReport *r) {
        for (size_t i = 0; i < r->n_diags; i++)
                ck_abort_msg("unexpected %s: %s: %s", lint_severity_to_string(r->diags[i].severity),
                             strna(r->diags[i].key), r->diags[i].message);
        ck_assert_uint_eq(r->n_errors, 0);
        ck_assert_uint_eq(r->n_warnings, 0);
}

/* Lints "---\nname: NAME\n<extra>---\nbody" in folder dir, i.e. with the key lines starting at 3. */
static LintReport *lint_with(const char *name, const char *extra, const char *dir) {
        _cleanup_free_ char *text = strdup_printf("---\nname: %s\n%s---\n" VALID_BODY, name, extra);

        ck_assert_ptr_nonnull(text);
        return lint_text(text, dir);
}

START_TEST(test_valid) {
        _cleanup_(lint_report_freep) LintReport *r = lint_text(
                "---\n"
                "name: pdf-tools\n"
                "description: Extracts text from PDFs. Use for PDF tasks.\n"
                "license: MIT\n"
                "compatibility: python3\n"
                "allowed-tools: Read Bash(python3:*)\n"
                "entry_point: scripts/run.py\n"
                "metadata:\n"
                "  author: me\n"
                "  version: \"1.0\"\n"
                "---\n" VALID_BODY, "pdf-tools");

        assert_clean(r);
}
END_TEST

START_TEST(test_name_missing) {
        _cleanup_(lint_report_freep) LintReport *r = lint_text("---\ndescription: d\n---\n" VALID_BODY, "x");
        const LintDiag *d = find_diag(r, LINT_ERROR, "name");

        ck_assert_str_eq(d->file, "SKILL.md");
        ck_assert_uint_eq(d->line, 1);
        assert_contains(d->message, "required");
        ck_assert_uint_eq(r->n_errors, 1);
}
END_TEST

START_TEST(test_name_rules) {
        static const struct {
                const char *name;
                const char *message;    /* NULL: valid */
        } cases[] = {
                { "a",                   NULL },
                { "pdf-tools-2",         NULL },
                { "0abc",                NULL },
                { "PDF-Tools",           "lowercase letters" },
                { "pdf_tools",           "lowercase letters" },
                { "pdf.tools",           "lowercase letters" },
                { "caf\xc3\xa9",         "lowercase letters" },
                { "-pdf",                "start or end with a hyphen" },
                { "pdf-",                "start or end with a hyphen" },
                { "pdf--tools",          "two hyphens in a row" },
                { "\"\"",                "must not be empty" },
                { "[a]",                 "must be a string, found a list" },
                { "",                    "must not be empty" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(lint_report_freep) LintReport *r = NULL;

                r = lint_with(cases[i].name, "description: d\n", NULL);

                if (!cases[i].message) {
                        assert_clean(r);
                        continue;
                }
                const LintDiag *d = find_diag(r, LINT_ERROR, "name");
                assert_contains(d->message, cases[i].message);
                ck_assert_uint_eq(d->line, 2);
                ck_assert_uint_eq(r->n_errors, 1);
        }
}
END_TEST

START_TEST(test_name_length) {
        char name[66];
        _cleanup_(lint_report_freep) LintReport *ok = NULL, *bad = NULL;

        memset(name, 'a', 64);
        name[64] = '\0';
        ok = lint_with(name, "description: d\n", name);
        assert_clean(ok);
        ck_assert(skill_name_is_valid(name));

        name[64] = 'a';
        name[65] = '\0';
        bad = lint_with(name, "description: d\n", name);
        assert_contains(find_diag(bad, LINT_ERROR, "name")->message, "65 characters");
        ck_assert(!skill_name_is_valid(name));
}
END_TEST

START_TEST(test_name_folder) {
        _cleanup_(lint_report_freep) LintReport *ok = lint_with("my-skill", "description: d\n", "my-skill");
        _cleanup_(lint_report_freep) LintReport *bad = lint_with("my-skill", "description: d\n", "other");
        _cleanup_(lint_report_freep) LintReport *unknown = lint_with("my-skill", "description: d\n", NULL);
        const LintDiag *d;

        assert_clean(ok);
        assert_clean(unknown);
        d = find_diag(bad, LINT_ERROR, "name");
        ck_assert_uint_eq(d->line, 2);
        assert_contains(d->message, "does not match the folder name 'other'");
}
END_TEST

START_TEST(test_name_is_valid) {
        ck_assert(skill_name_is_valid("a-b-c"));
        ck_assert(skill_name_is_valid("x1"));
        ck_assert(!skill_name_is_valid(NULL));
        ck_assert(!skill_name_is_valid(""));
        ck_assert(!skill_name_is_valid("-a"));
        ck_assert(!skill_name_is_valid("a-"));
        ck_assert(!skill_name_is_valid("a--b"));
        ck_assert(!skill_name_is_valid("A"));
        ck_assert(!skill_name_is_valid("a b"));
}
END_TEST

START_TEST(test_description) {
        _cleanup_free_ char *max = malloc(1100 * 2 + 64), *over = NULL, *wide = NULL;
        _cleanup_(lint_report_freep) LintReport *missing = NULL, *empty = NULL, *null = NULL, *ok = NULL,
                *too_long = NULL, *wide_ok = NULL, *list = NULL;
        const LintDiag *d;

        missing = lint_with("x", "license: MIT\n", "x");
        d = find_diag(missing, LINT_ERROR, "description");
        assert_contains(d->message, "required");
        ck_assert_uint_eq(d->line, 1);

        empty = lint_with("x", "description: ''\n", "x");
        d = find_diag(empty, LINT_ERROR, "description");
        assert_contains(d->message, "must not be empty");
        ck_assert_uint_eq(d->line, 3);

        null = lint_with("x", "description:\n", "x");
        assert_contains(find_diag(null, LINT_ERROR, "description")->message, "must not be empty");

        list = lint_with("x", "license: MIT\ndescription:\n  - a\n", "x");
        d = find_diag(list, LINT_ERROR, "description");
        assert_contains(d->message, "must be a string, found a list");
        ck_assert_uint_eq(d->line, 4);

        ck_assert_ptr_nonnull(max);
        strcpy(max, "description: ");
        memset(max + strlen(max), 'd', 1024);
        strcpy(max + 13 + 1024, "\n");
        ok = lint_with("x", max, "x");
        assert_clean(ok);

        over = strdup_printf("license: MIT\ndescription: d%s", max + 13);
        ck_assert_ptr_nonnull(over);
        too_long = lint_with("x", over, "x");
        d = find_diag(too_long, LINT_ERROR, "description");
        assert_contains(d->message, "1025 characters");
        assert_contains(d->message, "at most 1024");
        ck_assert_uint_eq(d->line, 4);

        /* Characters, not bytes: 1024 two-byte characters are fine. */
        wide = malloc(1024 * 2 + 64);
        ck_assert_ptr_nonnull(wide);
        strcpy(wide, "description: ");
        for (size_t i = 0; i < 1024; i++)
                strcat(wide + 13 + 2 * i, "\xc3\xa9");
        strcat(wide, "\n");
        wide_ok = lint_with("x", wide, "x");
        assert_clean(wide_ok);
}
END_TEST

START_TEST(test_compatibility) {
        _cleanup_free_ char *ok_text = malloc(600), *bad_text = malloc(600);
        _cleanup_(lint_report_freep) LintReport *ok = NULL, *bad = NULL, *empty = NULL, *absent = NULL;
        const LintDiag *d;

        ck_assert_ptr_nonnull(ok_text);
        ck_assert_ptr_nonnull(bad_text);
        strcpy(ok_text, "description: d\ncompatibility: ");
        memset(ok_text + strlen(ok_text), 'c', 500);
        strcpy(ok_text + 30 + 500, "\n");
        ok = lint_with("x", ok_text, "x");
        assert_clean(ok);

        strcpy(bad_text, "description: d\ncompatibility: ");
        memset(bad_text + strlen(bad_text), 'c', 501);
        strcpy(bad_text + 30 + 501, "\n");
        bad = lint_with("x", bad_text, "x");
        d = find_diag(bad, LINT_ERROR, "compatibility");
        assert_contains(d->message, "501 characters");
        ck_assert_uint_eq(d->line, 4);

        empty = lint_with("x", "description: d\ncompatibility:\n", "x");
        assert_contains(find_diag(empty, LINT_ERROR, "compatibility")->message, "must not be empty");

        absent = lint_with("x", "description: d\n", "x");
        assert_clean(absent);
}
END_TEST

START_TEST(test_metadata) {
        _cleanup_(lint_report_freep) LintReport *ok = NULL, *bad = NULL, *scalar = NULL, *empty = NULL;
        const LintDiag *d;

        ok = lint_with("x", "description: d\nmetadata:\n  a: b\n  version: '1.0'\n", "x");
        assert_clean(ok);

        bad = lint_with("x",
                        "description: d\n"      /* 3 */
                        "metadata:\n"           /* 4 */
                        "  author: me\n"        /* 5 */
                        "  version: 1.0\n"      /* 6 */
                        "  stable: yes\n"       /* 7 */
                        "  tags: [a]\n"         /* 8 */
                        "  empty:\n"            /* 9 */
                        "  deep: {a: b}\n",     /* 10 */
                        "x");
        ck_assert_uint_eq(bad->n_errors, 5);
        ck_assert_uint_eq(bad->n_warnings, 0);
        d = find_diag(bad, LINT_ERROR, "metadata.version");
        ck_assert_uint_eq(d->line, 6);
        assert_contains(d->message, "must be strings");
        assert_contains(d->message, "'1.0' as a number");
        d = find_diag(bad, LINT_ERROR, "metadata.stable");
        ck_assert_uint_eq(d->line, 7);
        assert_contains(d->message, "boolean");
        d = find_diag(bad, LINT_ERROR, "metadata.tags");
        ck_assert_uint_eq(d->line, 8);
        assert_contains(d->message, "found a list");
        d = find_diag(bad, LINT_ERROR, "metadata.empty");
        ck_assert_uint_eq(d->line, 9);
        d = find_diag(bad, LINT_ERROR, "metadata.deep");
        ck_assert_uint_eq(d->line, 10);
        assert_contains(d->message, "found a mapping");

        scalar = lint_with("x", "description: d\nmetadata: [a, b]\n", "x");
        d = find_diag(scalar, LINT_ERROR, "metadata");
        ck_assert_uint_eq(d->line, 4);
        assert_contains(d->message, "must be a mapping");

        empty = lint_with("x", "description: d\nmetadata:\n", "x");
        ck_assert_uint_eq(empty->n_errors, 0);
        assert_contains(find_diag(empty, LINT_WARNING, "metadata")->message, "is empty");
}
END_TEST

START_TEST(test_allowed_tools) {
        _cleanup_(lint_report_freep) LintReport *ok = NULL, *list = NULL, *map = NULL, *nested = NULL;
        const LintDiag *d;

        ok = lint_with("x", "description: d\nallowed-tools: Read Write\n", "x");
        assert_clean(ok);

        list = lint_with("x", "description: d\nallowed-tools:\n  - Read\n", "x");
        ck_assert_uint_eq(list->n_errors, 0);
        d = find_diag(list, LINT_WARNING, "allowed-tools");
        ck_assert_uint_eq(d->line, 4);
        assert_contains(d->message, "space-separated string");

        map = lint_with("x", "description: d\nallowed-tools: {Read: true}\n", "x");
        assert_contains(find_diag(map, LINT_ERROR, "allowed-tools")->message, "must be a string");
        nested = lint_with("x", "description: d\nallowed-tools: [Read, [Write]]\n", "x");
        assert_contains(find_diag(nested, LINT_ERROR, "allowed-tools")->message, "must be a string");
}
END_TEST

START_TEST(test_non_string_scalars) {
        _cleanup_(lint_report_freep) LintReport *r =
                lint_with("x", "description: yes\nlicense: 2024-01-01\n", "x");
        _cleanup_(lint_report_freep) LintReport *quoted = lint_with("x", "description: 'yes'\n", "x");
        const LintDiag *d;

        ck_assert_uint_eq(r->n_errors, 0);
        d = find_diag(r, LINT_WARNING, "description");
        ck_assert_uint_eq(d->line, 3);
        assert_contains(d->message, "as a boolean");
        assert_contains(d->message, "quote it");
        assert_contains(find_diag(r, LINT_WARNING, "license")->message, "timestamp");
        assert_clean(quoted);
}
END_TEST

START_TEST(test_unknown_keys) {
        _cleanup_(lint_report_freep) LintReport *r = lint_with("x",
                "description: d\n"              /* 3 */
                "version: 1.0.0\n"              /* 4 */
                "lang: python\n"                /* 5 */
                "timeout: 5s\n"                 /* 6: skilld reads it */
                "dependencies: [a, b]\n"        /* 7 */
                "entry_point: scripts/x.py\n",  /* 8 */
                "x");
        const LintDiag *d;

        ck_assert_uint_eq(r->n_errors, 0);
        ck_assert_uint_eq(r->n_warnings, 3);
        d = find_diag(r, LINT_WARNING, "version");
        ck_assert_uint_eq(d->line, 4);
        ck_assert_str_eq(d->message, "kept but not part of the Agent Skills specification");
        ck_assert_uint_eq(find_diag(r, LINT_WARNING, "lang")->line, 5);
        ck_assert_uint_eq(find_diag(r, LINT_WARNING, "dependencies")->line, 7);
}
END_TEST

START_TEST(test_body_and_filename) {
        _cleanup_(lint_report_freep) LintReport *empty = NULL, *none = NULL, *lower = NULL;

        empty = lint_text("---\nname: x\ndescription: d\n---\n \n\t\n", "x");
        none = lint_text("---\nname: x\ndescription: d\n---", "x");
        lower = lint_text_as("---\nname: x\ndescription: d\n---\n" VALID_BODY, "skill.md", "x");
        const LintDiag *d;

        ck_assert_uint_eq(empty->n_errors, 0);
        d = find_diag(empty, LINT_WARNING, NULL);
        ck_assert_uint_eq(d->line, 5);
        assert_contains(d->message, "body is empty");
        assert_contains(find_diag(none, LINT_WARNING, NULL)->message, "body is empty");

        ck_assert_uint_eq(lower->n_errors, 0);
        d = find_diag(lower, LINT_WARNING, NULL);
        ck_assert_str_eq(d->file, "skill.md");
        assert_contains(d->message, "named skill.md");
        assert_contains(d->message, "SKILL.md");
}
END_TEST

START_TEST(test_sorted_by_line) {
        _cleanup_(lint_report_freep) LintReport *r = lint_text(
                "---\n"
                "extra: 1\n"                    /* 2: warning */
                "name: Bad\n"                   /* 3: error */
                "metadata: {v: 1}\n"            /* 4: error */
                "---\n", "Bad");                /* no description: line 1; empty body: line 6 */

        ck_assert_uint_eq(r->n_diags, 5);
        ck_assert_uint_eq(r->n_errors, 3);
        ck_assert_uint_eq(r->n_warnings, 2);
        for (size_t i = 1; i < r->n_diags; i++)
                ck_assert_uint_le(r->diags[i - 1].line, r->diags[i].line);
        ck_assert_str_eq(r->diags[0].key, "description");
        ck_assert_str_eq(r->diags[1].key, "extra");
        ck_assert_str_eq(r->diags[2].key, "name");
        ck_assert_str_eq(r->diags[3].key, "metadata.v");
        ck_assert_ptr_null(r->diags[4].key);
}
END_TEST

START_TEST(test_half_parsed) {
        _cleanup_(lint_report_freep) LintReport *r = lint_report_new();
        Skill empty = {};
        SkillField f[] = {
                { .key = NULL, .kind = SKILL_VALUE_STRING, .is_scalar = true },
                { .key = (char *) "metadata", .kind = SKILL_VALUE_MAPPING },
                { .key = (char *) "name", .kind = SKILL_VALUE_STRING, .is_scalar = true, .value = NULL },
        };
        SkillField m[] = {
                { .key = NULL, .kind = SKILL_VALUE_INT, .is_scalar = true, .value = NULL },
        };
        Skill odd = {
                .fields = f,
                .n_fields = ELEMENTSOF(f),
                .metadata_fields = m,
                .n_metadata_fields = ELEMENTSOF(m),
        };

        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(skill_lint(&empty, "x", r), 0);
        ck_assert_uint_eq(r->n_errors, 2);
        ck_assert_uint_eq(r->n_warnings, 1);
        find_diag(r, LINT_ERROR, "name");
        find_diag(r, LINT_ERROR, "description");

        ck_assert_int_eq(skill_lint(&odd, NULL, r), 0);
        ck_assert_uint_ge(r->n_errors, 4);

        ck_assert_int_eq(skill_lint(NULL, "x", r), -EINVAL);
        ck_assert_int_eq(skill_lint(&empty, "x", NULL), -EINVAL);
}
END_TEST

START_TEST(test_report) {
        _cleanup_(lint_report_freep) LintReport *r = lint_report_new();

        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(lint_report_add(r, LINT_ERROR, "SKILL.md", "name", 3, "bad %s", "thing"), 0);
        ck_assert_int_eq(lint_report_add(r, LINT_WARNING, NULL, NULL, 0, "advice"), 0);
        ck_assert_uint_eq(r->n_diags, 2);
        ck_assert_uint_eq(r->n_errors, 1);
        ck_assert_uint_eq(r->n_warnings, 1);
        ck_assert_str_eq(r->diags[0].message, "bad thing");
        ck_assert_str_eq(r->diags[0].key, "name");
        ck_assert_str_eq(r->diags[1].file, "SKILL.md");
        ck_assert_ptr_null(r->diags[1].key);
        ck_assert_str_eq(lint_severity_to_string(LINT_ERROR), "error");
        ck_assert_str_eq(lint_severity_to_string(LINT_WARNING), "warning");
        ck_assert_ptr_null(lint_report_free(NULL));
}
END_TEST

START_TEST(test_error_message_to_diag) {
        _cleanup_(lint_report_freep) LintReport *r = lint_report_new();

        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(lint_report_add_error_message(r, "SKILL.md", "skill.md:12: YAML tags are not supported"), 0);
        ck_assert_str_eq(r->diags[0].file, "skill.md");
        ck_assert_uint_eq(r->diags[0].line, 12);
        ck_assert_str_eq(r->diags[0].message, "YAML tags are not supported");

        /* Text without a "file:line: " prefix is kept whole, under the default file. */
        ck_assert_int_eq(lint_report_add_error_message(r, "SKILL.md", "no frontmatter: a: b"), 0);
        ck_assert_str_eq(r->diags[1].file, "SKILL.md");
        ck_assert_uint_eq(r->diags[1].line, 0);
        ck_assert_str_eq(r->diags[1].message, "no frontmatter: a: b");
        ck_assert_uint_eq(r->n_errors, 2);
}
END_TEST

static Suite *lint_suite(void) {
        Suite *s = suite_create("lint");
        TCase *tc = tcase_create("rules");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_error_message_to_diag);
        tcase_add_test(tc, test_name_missing);
        tcase_add_test(tc, test_name_rules);
        tcase_add_test(tc, test_name_length);
        tcase_add_test(tc, test_name_folder);
        tcase_add_test(tc, test_name_is_valid);
        tcase_add_test(tc, test_description);
        tcase_add_test(tc, test_compatibility);
        tcase_add_test(tc, test_metadata);
        tcase_add_test(tc, test_allowed_tools);
        tcase_add_test(tc, test_non_string_scalars);
        tcase_add_test(tc, test_unknown_keys);
        tcase_add_test(tc, test_body_and_filename);
        tcase_add_test(tc, test_sorted_by_line);
        tcase_add_test(tc, test_half_parsed);
        tcase_add_test(tc, test_report);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(lint_suite());
}
