/* Tests for the skill model: SKILL.md splitting and lenient frontmatter parsing, the line numbers
 * recorded for every key, and the refusal of hostile YAML (each case asserts the error code and
 * that the message names the problem; the suite's timeout catches a hang, speed is not asserted). */
#include <sys/stat.h>

#include "skill-limits.h"
#include "skill.h"
#include "test-util.h"

static Skill *parse_ok(const char *text) {
        _cleanup_free_ char *error = NULL;
        Skill *s = NULL;
        int r;

        r = skill_parse_markdown(text, strlen(text), "SKILL.md", &s, &error);
        if (r < 0)
                ck_abort_msg("parse failed: %d %s", r, strna(error));
        ck_assert_ptr_nonnull(s);
        return s;
}

/* Parses text that must fail with code r; returns the message (never NULL). */
static char *parse_fail_n(const char *text, size_t size, int expected) {
        char *error = NULL;
        Skill *s = NULL;
        int r;

        r = skill_parse_markdown(text, size, "SKILL.md", &s, &error);
        ck_assert_msg(r == expected, "expected %d, got %d (%s)", expected, r, strna(error));
        ck_assert_ptr_null(s);
        ck_assert_ptr_nonnull(error);
        return error;
}

static char *parse_fail(const char *text, int expected) {
        return parse_fail_n(text, strlen(text), expected);
}

#define assert_contains(haystack, needle)                                                       \
        ck_assert_msg(strstr((haystack), (needle)), "'%s' does not contain '%s'", (haystack), (needle))

static const SkillField *field(const Skill *s, const char *key) {
        const SkillField *f = skill_get_field(s, key);

        ck_assert_msg(f, "no field %s", key);
        return f;
}

static const SkillField *meta_field(const Skill *s, const char *key) {
        for (size_t i = 0; i < s->n_metadata_fields; i++)
                if (streq(s->metadata_fields[i].key, key))
                        return &s->metadata_fields[i];
        ck_abort_msg("no metadata field %s", key);
        return NULL;
}

static const char realistic[] =
        "---\n"                                                         /* 1 */
        "name: pdf-tools\n"                                             /* 2 */
        "description: >\n"                                              /* 3 */
        "  Extracts text and tables from PDF files.\n"                  /* 4 */
        "  Use when a task involves PDFs.\n"                            /* 5 */
        "license: Apache-2.0\n"                                         /* 6 */
        "compatibility: Requires python3 and poppler-utils\n"           /* 7 */
        "allowed-tools: Bash(python3:*) Read\n"                         /* 8 */
        "metadata:\n"                                                   /* 9 */
        "  author: example-org\n"                                       /* 10 */
        "  version: \"1.0\"\n"                                          /* 11 */
        "version: 2.1.0\n"                                              /* 12 */
        "lang: python\n"                                                /* 13 */
        "timeout: 30\n"                                                 /* 14 */
        "resources:\n"                                                  /* 15 */
        "  memory: 256M\n"                                              /* 16 */
        "  limits: {cpu: 1, files: [a, b, {c: d}]}\n"                   /* 17 */
        "dependencies:\n"                                               /* 18 */
        "  - pypdf\n"                                                   /* 19 */
        "  - name: pdfplumber\n"                                        /* 20 */
        "    version: [\">=0.10\"]\n"                                   /* 21 */
        "entry_point: scripts/extract.py\n"                             /* 22 */
        "# a comment\n"                                                 /* 23 */
        "tags: [pdf, text]\n"                                           /* 24 */
        "---\n"                                                         /* 25 */
        "\n"                                                            /* 26 */
        "# PDF tools\n"
        "\n"
        "Run the script.\n";

START_TEST(test_realistic) {
        _cleanup_(skill_freep) Skill *s = parse_ok(realistic);
        static const struct {
                const char *key;
                unsigned line;
                SkillValueKind kind;
                const char *value;
        } expect[] = {
                { "name",          2,  SKILL_VALUE_STRING,   "pdf-tools" },
                { "description",   3,  SKILL_VALUE_STRING,
                  "Extracts text and tables from PDF files. Use when a task involves PDFs.\n" },
                { "license",       6,  SKILL_VALUE_STRING,   "Apache-2.0" },
                { "compatibility", 7,  SKILL_VALUE_STRING,   "Requires python3 and poppler-utils" },
                { "allowed-tools", 8,  SKILL_VALUE_STRING,   "Bash(python3:*) Read" },
                { "metadata",      9,  SKILL_VALUE_MAPPING,  NULL },
                { "version",       12, SKILL_VALUE_STRING,   "2.1.0" },
                { "lang",          13, SKILL_VALUE_STRING,   "python" },
                { "timeout",       14, SKILL_VALUE_INT,      "30" },
                { "resources",     15, SKILL_VALUE_MAPPING,  NULL },
                { "dependencies",  18, SKILL_VALUE_SEQUENCE, NULL },
                { "entry_point",   22, SKILL_VALUE_STRING,   "scripts/extract.py" },
                { "tags",          24, SKILL_VALUE_SEQUENCE, NULL },
        };

        ck_assert_uint_eq(s->n_fields, ELEMENTSOF(expect));
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                const SkillField *f = &s->fields[i];

                ck_assert_str_eq(f->key, expect[i].key);
                ck_assert_msg(f->line == expect[i].line, "%s on line %u, expected %u", f->key, f->line,
                              expect[i].line);
                ck_assert_int_eq(f->kind, expect[i].kind);
                ck_assert(f->is_scalar == (expect[i].value != NULL));
                if (expect[i].value)
                        ck_assert_str_eq(f->value, expect[i].value);
                else
                        ck_assert_ptr_null(f->value);
        }

        ck_assert_str_eq(s->md_filename, "SKILL.md");
        ck_assert_str_eq(s->name, "pdf-tools");
        ck_assert_str_eq(s->description, expect[1].value);
        ck_assert_str_eq(s->license, "Apache-2.0");
        ck_assert_str_eq(s->compatibility, "Requires python3 and poppler-utils");
        ck_assert_str_eq(s->allowed_tools, "Bash(python3:*) Read");
        ck_assert_str_eq(s->entry_point, "scripts/extract.py");

        ck_assert_uint_eq(strv_length(s->metadata), 4);
        ck_assert_str_eq(s->metadata[0], "author");
        ck_assert_str_eq(s->metadata[1], "example-org");
        ck_assert_str_eq(s->metadata[2], "version");
        ck_assert_str_eq(s->metadata[3], "1.0");
        ck_assert_uint_eq(s->n_metadata_fields, 2);
        ck_assert_uint_eq(meta_field(s, "author")->line, 10);
        ck_assert_uint_eq(meta_field(s, "version")->line, 11);
        ck_assert_int_eq(meta_field(s, "version")->kind, SKILL_VALUE_STRING);

        ck_assert_uint_eq(s->body_line, 26);
        ck_assert_str_eq(s->body, "\n# PDF tools\n\nRun the script.\n");

        ck_assert(skill_key_is_known("name"));
        ck_assert(skill_key_is_known("allowed-tools"));
        ck_assert(!skill_key_is_known("entry_point"));
        ck_assert(!skill_key_is_known("version"));
        ck_assert(!skill_key_is_known(NULL));
        ck_assert_ptr_null(skill_get_field(s, "nope"));
        ck_assert_ptr_null(skill_get_field(NULL, "name"));
}
END_TEST

START_TEST(test_lenient_metadata) {
        _cleanup_(skill_freep) Skill *s = parse_ok(
                "---\n"
                "name: x\n"
                "metadata:\n"
                "  version: 1.0\n"             /* 4: a number to YAML */
                "  count: 3\n"                 /* 5 */
                "  beta: yes\n"                /* 6 */
                "  released: 2024-01-31\n"     /* 7 */
                "  empty:\n"                   /* 8 */
                "  tags: [a, b]\n"             /* 9 */
                "  nested: {a: 1}\n"           /* 10 */
                "  author: 'someone'\n"        /* 11 */
                "---\n");

        ck_assert_uint_eq(s->n_metadata_fields, 8);
        ck_assert_int_eq(meta_field(s, "version")->kind, SKILL_VALUE_FLOAT);
        ck_assert_str_eq(meta_field(s, "version")->value, "1.0");
        ck_assert_uint_eq(meta_field(s, "version")->line, 4);
        ck_assert_int_eq(meta_field(s, "count")->kind, SKILL_VALUE_INT);
        ck_assert_int_eq(meta_field(s, "beta")->kind, SKILL_VALUE_BOOL);
        ck_assert_int_eq(meta_field(s, "released")->kind, SKILL_VALUE_TIMESTAMP);
        ck_assert_int_eq(meta_field(s, "empty")->kind, SKILL_VALUE_NULL);
        ck_assert_int_eq(meta_field(s, "tags")->kind, SKILL_VALUE_SEQUENCE);
        ck_assert(!meta_field(s, "tags")->is_scalar);
        ck_assert_ptr_null(meta_field(s, "tags")->value);
        ck_assert_uint_eq(meta_field(s, "tags")->line, 9);
        ck_assert_int_eq(meta_field(s, "nested")->kind, SKILL_VALUE_MAPPING);
        ck_assert_int_eq(meta_field(s, "author")->kind, SKILL_VALUE_STRING);
        ck_assert_uint_eq(meta_field(s, "author")->line, 11);

        /* Scalars (whatever YAML makes of them) are in the key/value list, collections are not. */
        ck_assert_uint_eq(strv_length(s->metadata), 12);
        ck_assert(!strv_contains(s->metadata, "tags"));
        ck_assert(!strv_contains(s->metadata, "nested"));
        ck_assert(strv_contains(s->metadata, "1.0"));
}
END_TEST

START_TEST(test_plain_scalar_kinds) {
        static const struct {
                const char *text;
                SkillValueKind kind;
        } cases[] = {
                { "abc",        SKILL_VALUE_STRING },
                { "1.0.0",      SKILL_VALUE_STRING },
                { "v1",         SKILL_VALUE_STRING },
                { "1-2",        SKILL_VALUE_STRING },
                { "0x",         SKILL_VALUE_STRING },
                { "1e",         SKILL_VALUE_STRING },
                { "'1'",        SKILL_VALUE_STRING },
                { "\"true\"",   SKILL_VALUE_STRING },
                { "1",          SKILL_VALUE_INT },
                { "-12_000",    SKILL_VALUE_INT },
                { "0x1F",       SKILL_VALUE_INT },
                { "0o17",       SKILL_VALUE_INT },
                { "0b101",      SKILL_VALUE_INT },
                { "1:30",       SKILL_VALUE_INT },
                { "1.5",        SKILL_VALUE_FLOAT },
                { ".5",         SKILL_VALUE_FLOAT },
                { "1e3",        SKILL_VALUE_FLOAT },
                { "-2.5E-3",    SKILL_VALUE_FLOAT },
                { ".inf",       SKILL_VALUE_FLOAT },
                { "-.Inf",      SKILL_VALUE_FLOAT },
                { ".NaN",       SKILL_VALUE_FLOAT },
                { "true",       SKILL_VALUE_BOOL },
                { "No",         SKILL_VALUE_BOOL },
                { "on",         SKILL_VALUE_BOOL },
                { "OFF",        SKILL_VALUE_BOOL },
                { "~",          SKILL_VALUE_NULL },
                { "null",       SKILL_VALUE_NULL },
                { "2024-1-5",   SKILL_VALUE_TIMESTAMP },
                { "2024-01-31 10:00:00", SKILL_VALUE_TIMESTAMP },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = strdup_printf("---\nk: %s\n---\n", cases[i].text);
                _cleanup_(skill_freep) Skill *s = NULL;

                ck_assert_ptr_nonnull(text);
                s = parse_ok(text);
                ck_assert_msg(field(s, "k")->kind == cases[i].kind, "%s: kind %s, expected %s",
                              cases[i].text, skill_value_kind_to_string(field(s, "k")->kind),
                              skill_value_kind_to_string(cases[i].kind));
        }

        ck_assert_str_eq(skill_value_kind_to_string(SKILL_VALUE_FLOAT), "number");
        ck_assert_ptr_null(skill_value_kind_to_string(_SKILL_VALUE_KIND_MAX));
        ck_assert_ptr_null(skill_value_kind_to_string(_SKILL_VALUE_KIND_INVALID));
}
END_TEST

START_TEST(test_allowed_tools_list) {
        _cleanup_(skill_freep) Skill *s =
                parse_ok("---\nname: x\nallowed-tools:\n  - Read\n  - \"Bash(git:*)\"\n  - Write\n---\n");
        _cleanup_(skill_freep) Skill *flow = parse_ok("---\nallowed-tools: [Read, Grep]\n---\n");
        _cleanup_(skill_freep) Skill *empty = parse_ok("---\nallowed-tools: []\n---\n");
        _cleanup_(skill_freep) Skill *nested =
                parse_ok("---\nallowed-tools: [Read, [x], {a: b}, Write]\nnext: 1\n---\n");
        _cleanup_(skill_freep) Skill *map = parse_ok("---\nallowed-tools: {Read: yes}\n---\n");

        ck_assert_str_eq(s->allowed_tools, "Read Bash(git:*) Write");
        ck_assert_int_eq(field(s, "allowed-tools")->kind, SKILL_VALUE_SEQUENCE);
        ck_assert_uint_eq(field(s, "allowed-tools")->line, 3);
        ck_assert_str_eq(flow->allowed_tools, "Read Grep");
        ck_assert_str_eq(empty->allowed_tools, "");

        /* Not a list of strings: no value, but the key is kept for lint, and parsing goes on. */
        ck_assert_ptr_null(nested->allowed_tools);
        ck_assert_int_eq(field(nested, "allowed-tools")->kind, SKILL_VALUE_SEQUENCE);
        ck_assert_str_eq(field(nested, "next")->value, "1");
        ck_assert_ptr_null(map->allowed_tools);
        ck_assert_int_eq(field(map, "allowed-tools")->kind, SKILL_VALUE_MAPPING);
}
END_TEST

START_TEST(test_unusable_known_values) {
        _cleanup_(skill_freep) Skill *s = parse_ok("---\nname: [a, b]\ndescription:\nlicense: ~\n"
                                                   "compatibility: ''\nmetadata: text\n---\nBody\n");

        ck_assert_ptr_null(s->name);
        ck_assert_int_eq(field(s, "name")->kind, SKILL_VALUE_SEQUENCE);
        ck_assert_ptr_null(s->description);
        ck_assert_int_eq(field(s, "description")->kind, SKILL_VALUE_NULL);
        ck_assert_str_eq(field(s, "description")->value, "");
        ck_assert_ptr_null(s->license);
        ck_assert_str_eq(s->compatibility, "");
        ck_assert_ptr_null(s->metadata);
        ck_assert_uint_eq(s->n_metadata_fields, 0);
        ck_assert_str_eq(field(s, "metadata")->value, "text");
}
END_TEST

START_TEST(test_crlf_bom) {
        _cleanup_(skill_freep) Skill *s = parse_ok(
                "\xef\xbb\xbf---\r\n"
                "name: crlf-skill\r\n"
                "description: Has CRLF line ends\r\n"
                "metadata:\r\n"
                "  author: me\r\n"
                "---  \r\n"
                "Body line\r\n");

        ck_assert_str_eq(s->name, "crlf-skill");
        ck_assert_str_eq(s->description, "Has CRLF line ends");
        ck_assert_uint_eq(field(s, "name")->line, 2);
        ck_assert_uint_eq(field(s, "description")->line, 3);
        ck_assert_uint_eq(meta_field(s, "author")->line, 5);
        ck_assert_str_eq(meta_field(s, "author")->value, "me");
        ck_assert_uint_eq(s->body_line, 7);
        ck_assert_str_eq(s->body, "Body line\r\n");
}
END_TEST

/* libyaml also breaks lines at a lone CR, NEL and U+2028; editors and our lines do not. */
START_TEST(test_lines_unicode_breaks) {
        _cleanup_(skill_freep) Skill *s = parse_ok(
                "---\n"
                "name: \"a\xc2\x85" "b\xe2\x80\xa8" "c\"\n"        /* 2 */
                "description: \"x\ry\"\n"                              /* 3 */
                "license: caf\xc3\xa9 \xf0\x9f\x98\x80\r\n"           /* 4 */
                "compatibility: z\n"                                    /* 5 */
                "---\n");

        ck_assert_uint_eq(field(s, "name")->line, 2);
        ck_assert_uint_eq(field(s, "description")->line, 3);
        ck_assert_uint_eq(field(s, "license")->line, 4);
        ck_assert_uint_eq(field(s, "compatibility")->line, 5);
}
END_TEST

START_TEST(test_frontmatter_shapes) {
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL;
        _cleanup_(skill_freep) Skill *empty = parse_ok("---\n---\nJust a body.\n");
        _cleanup_(skill_freep) Skill *comments = parse_ok("---\n# nothing here\n\n---\n");
        _cleanup_(skill_freep) Skill *no_body = parse_ok("---\nname: x\n---");

        ck_assert_uint_eq(empty->n_fields, 0);
        ck_assert_str_eq(empty->body, "Just a body.\n");
        ck_assert_uint_eq(empty->body_line, 3);
        ck_assert_uint_eq(comments->n_fields, 0);
        ck_assert_str_eq(no_body->body, "");
        ck_assert_uint_eq(no_body->body_line, 4);

        e1 = parse_fail("# Title\n\nname: x\n", -EBADMSG);
        assert_contains(e1, "SKILL.md");
        assert_contains(e1, "no YAML frontmatter");
        e2 = parse_fail("", -EBADMSG);
        assert_contains(e2, "no YAML frontmatter");
        e3 = parse_fail("---\nname: x\ndescription: y\n", -EBADMSG);
        assert_contains(e3, "not closed");
        e4 = parse_fail(" ---\nname: x\n---\n", -EBADMSG);
        assert_contains(e4, "no YAML frontmatter");
        e5 = parse_fail("----\nname: x\n---\n", -EBADMSG);
        assert_contains(e5, "no YAML frontmatter");
}
END_TEST

START_TEST(test_syntax_error) {
        _cleanup_free_ char *e1 = parse_fail("---\nname: x\ndescription: [unclosed\n---\n", -EBADMSG);
        _cleanup_free_ char *e2 = parse_fail("---\nname: x\n  bad: indent\n---\n", -EBADMSG);

        ck_assert_str_eq(e1, "SKILL.md:4: invalid YAML: did not find expected ',' or ']' "
                             "while parsing a flow sequence started on line 3");
        assert_contains(e2, "SKILL.md:3: invalid YAML");
}
END_TEST

START_TEST(test_alias_bomb) {
        _cleanup_free_ char *e = parse_fail(
                "---\n"
                "name: lol\n"
                "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
                "---\n", -EOPNOTSUPP);

        ck_assert_str_eq(e, "SKILL.md:3: YAML anchors and aliases are not supported");
}
END_TEST

START_TEST(test_alias_self_reference) {
        _cleanup_free_ char *e1 = parse_fail("---\nname: x\nloop: &a [*a]\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e2 = parse_fail("---\nname: x\nmetadata:\n  k: *nothing\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e3 = parse_fail("---\nname: &n x\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e4 = parse_fail("---\n&top\nname: x\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e5 = parse_fail("---\nx: [1, [2, *deep]]\n---\n", -EOPNOTSUPP);

        ck_assert_str_eq(e1, "SKILL.md:3: YAML anchors and aliases are not supported");
        ck_assert_str_eq(e2, "SKILL.md:4: YAML anchors and aliases are not supported");
        ck_assert_str_eq(e3, "SKILL.md:2: YAML anchors and aliases are not supported");
        assert_contains(e4, "anchors and aliases are not supported");
        ck_assert_str_eq(e5, "SKILL.md:2: YAML anchors and aliases are not supported");
}
END_TEST

START_TEST(test_huge_scalar) {
        const size_t big = 10U * 1024U * 1024U;
        _cleanup_free_ char *text = malloc(big + 64), *e1 = NULL, *e2 = NULL;
        size_t n;

        ck_assert_ptr_nonnull(text);
        n = (size_t) sprintf(text, "---\nname: x\ndescription: ");
        memset(text + n, 'a', big);
        n += big;
        n += (size_t) sprintf(text + n, "\n---\nbody\n");

        e1 = parse_fail_n(text, n, -EFBIG);
        assert_contains(e1, "SKILL.md");
        assert_contains(e1, "1 MiB cap");

        /* Small enough for the file cap, too large for the frontmatter cap. */
        n = (size_t) sprintf(text, "---\nname: x\ndescription: ");
        memset(text + n, 'a', 100U * 1024U);
        n += 100U * 1024U;
        n += (size_t) sprintf(text + n, "\n---\nbody\n");
        e2 = parse_fail_n(text, n, -EFBIG);
        assert_contains(e2, "frontmatter");
        assert_contains(e2, "64 KiB cap");
}
END_TEST

static char *nested_text(const char *key, size_t depth, const char *open, const char *close) {
        size_t lo = strlen(open), lc = strlen(close);
        char *t = malloc(depth * (lo + lc) + strlen(key) + 64), *p;

        ck_assert_ptr_nonnull(t);
        p = t + sprintf(t, "---\nname: x\n%s: ", key);
        for (size_t i = 0; i < depth; i++)
                p = mempcpy(p, open, lo);
        for (size_t i = 0; i < depth; i++)
                p = mempcpy(p, close, lc);
        strcpy(p, "\n---\n");
        return t;
}

START_TEST(test_deep_nesting) {
        _cleanup_free_ char *seq = nested_text("deep", 10000, "[", "]");
        _cleanup_free_ char *map = nested_text("deep", 10000, "{a: ", "}");
        _cleanup_free_ char *at_limit = nested_text("deep", SKILL_YAML_DEPTH_MAX - 1, "[", "]");
        _cleanup_free_ char *over = nested_text("deep", SKILL_YAML_DEPTH_MAX, "[", "]");
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *block = NULL, *meta = NULL;
        _cleanup_(skill_freep) Skill *ok = NULL;
        size_t n = 0;

        e1 = parse_fail(seq, -E2BIG);
        ck_assert_str_eq(e1, "SKILL.md:3: YAML nesting deeper than 32 levels");
        e2 = parse_fail(map, -E2BIG);
        assert_contains(e2, "nesting deeper than 32 levels");

        /* The top-level mapping is level 1: 31 more levels are fine, 32 are not. */
        ok = parse_ok(at_limit);
        ck_assert_int_eq(field(ok, "deep")->kind, SKILL_VALUE_SEQUENCE);
        e3 = parse_fail(over, -E2BIG);
        assert_contains(e3, "nesting deeper");

        /* Block style, inside metadata where the parser descends itself. */
        block = malloc(64 * 1024);
        ck_assert_ptr_nonnull(block);
        n = (size_t) sprintf(block, "---\nname: x\nmetadata:\n");
        for (unsigned i = 1; i <= 40; i++)
                n += (size_t) sprintf(block + n, "%*sk%u:\n", (int) (2 * i), "", i);
        sprintf(block + n, "---\n");
        e4 = parse_fail(block, -E2BIG);
        assert_contains(e4, "SKILL.md:");
        assert_contains(e4, "nesting deeper than 32 levels");

        /* Inside allowed-tools, where the parser descends itself too. */
        meta = nested_text("allowed-tools", 10000, "[", "]");
        free(e4);
        e4 = parse_fail(meta, -E2BIG);
        assert_contains(e4, "nesting deeper");
}
END_TEST

START_TEST(test_invalid_utf8) {
        static const char nul[] = "---\nname: x\ndescription: a\0b\n---\n";
        _cleanup_free_ char *e1 = parse_fail("---\nname: x\ndescription: caf\xe9\n---\n", -EILSEQ);
        _cleanup_free_ char *e2 = parse_fail("---\nname: x\n---\nbody \xc0\xaf overlong\n", -EILSEQ);
        _cleanup_free_ char *e3 = parse_fail("---\nname: x\n---\n\xed\xa0\x80 surrogate\n", -EILSEQ);
        _cleanup_free_ char *e4 = parse_fail_n(nul, sizeof(nul) - 1, -EILSEQ);
        _cleanup_free_ char *e5 = parse_fail("---\nname: \"a\\0b\"\n---\n", -EILSEQ);
        _cleanup_free_ char *e6 = parse_fail("---\nname: x\ndescription: \"\\ud800\"\n---\n", -EBADMSG);
        _cleanup_(skill_freep) Skill *ok =
                parse_ok("---\nname: x\ndescription: caf\xc3\xa9 \"\\u00e9\"\n---\n");

        ck_assert_str_eq(e1, "SKILL.md:3: the file is not valid UTF-8");
        ck_assert_str_eq(e2, "SKILL.md:4: the file is not valid UTF-8");
        assert_contains(e3, "not valid UTF-8");
        ck_assert_str_eq(e4, "SKILL.md:3: the file holds a NUL byte");
        ck_assert_str_eq(e5, "SKILL.md:2: a value holds a NUL character");
        assert_contains(e6, "invalid YAML");
        ck_assert_str_eq(ok->description, "caf\xc3\xa9 \"\\u00e9\"");
}
END_TEST

START_TEST(test_tags) {
        _cleanup_free_ char *e1 = parse_fail("---\nname: x\n"
                                             "cmd: !!python/object/apply:os.system [\"id\"]\n---\n",
                                             -EOPNOTSUPP);
        _cleanup_free_ char *e2 = parse_fail("---\nname: !!str x\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e3 = parse_fail("---\n!!map {name: x}\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e4 = parse_fail("---\nmetadata:\n  a: !custom value\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e5 = parse_fail("---\nname: ! x\n---\n", -EOPNOTSUPP);
        _cleanup_free_ char *e6 =
                parse_fail("---\nx: !<tag:example.com,2000:evil> {a: 1}\n---\n", -EOPNOTSUPP);

        ck_assert_str_eq(e1, "SKILL.md:3: YAML tags are not supported "
                             "(found tag:yaml.org,2002:python/object/apply:os.system)");
        ck_assert_str_eq(e2, "SKILL.md:2: YAML tags are not supported (found tag:yaml.org,2002:str)");
        assert_contains(e3, "YAML tags are not supported");
        ck_assert_str_eq(e4, "SKILL.md:3: YAML tags are not supported (found !custom)");
        assert_contains(e5, "YAML tags are not supported");
        assert_contains(e6, "tag:example.com,2000:evil");
}
END_TEST

START_TEST(test_multiple_documents) {
        _cleanup_free_ char *e1 = parse_fail("---\nname: x\n--- {name: y}\n---\n", -EBADMSG);
        _cleanup_free_ char *e2 = parse_fail("---\nname: x\n...\n--- {b: 1}\n---\n", -EBADMSG);

        ck_assert_str_eq(e1, "SKILL.md:3: the frontmatter holds more than one YAML document");
        assert_contains(e2, "more than one YAML document");
}
END_TEST

START_TEST(test_not_a_mapping) {
        _cleanup_free_ char *e1 = parse_fail("---\n- name\n- description\n---\n", -EBADMSG);
        _cleanup_free_ char *e2 = parse_fail("---\njust some text\n---\n", -EBADMSG);
        _cleanup_free_ char *e3 = parse_fail("---\n[a, b]\n---\n", -EBADMSG);

        ck_assert_str_eq(e1, "SKILL.md:2: the frontmatter must be a YAML mapping of keys to values, "
                             "found a list");
        assert_contains(e2, "must be a YAML mapping");
        assert_contains(e2, "found a scalar");
        assert_contains(e3, "found a list");
}
END_TEST

START_TEST(test_duplicate_keys) {
        _cleanup_free_ char *e1 = parse_fail("---\nname: a\ndescription: d\nname: b\n---\n", -EBADMSG);
        _cleanup_free_ char *e2 = parse_fail("---\nmetadata:\n  k: 1\n  k: 2\n---\n", -EBADMSG);
        _cleanup_free_ char *e3 = parse_fail("---\nx: [1]\n\"x\": 2\n---\n", -EBADMSG);
        _cleanup_(skill_freep) Skill *nested = parse_ok("---\nx: {a: 1, a: 2}\n---\n");

        ck_assert_str_eq(e1, "SKILL.md:4: duplicate key 'name' (first on line 2)");
        ck_assert_str_eq(e2, "SKILL.md:4: duplicate key 'metadata.k' (first on line 3)");
        assert_contains(e3, "duplicate key 'x'");
        /* Inside values we do not interpret, duplicates are skipped like everything else. */
        ck_assert_int_eq(field(nested, "x")->kind, SKILL_VALUE_MAPPING);
}
END_TEST

START_TEST(test_complex_keys) {
        _cleanup_free_ char *e1 = parse_fail("---\n? [a, b]\n: value\n---\n", -EBADMSG);
        _cleanup_free_ char *e2 = parse_fail("---\nmetadata:\n  {a: b}: c\n---\n", -EBADMSG);

        _cleanup_free_ char *e3 = parse_fail("---\nname: x\n\"\\e[2Jevil\": 1\n---\n", -EBADMSG);
        _cleanup_free_ char *e4 = parse_fail("---\nmetadata:\n  \"a\\tb\": c\n---\n", -EBADMSG);

        ck_assert_str_eq(e1, "SKILL.md:2: top-level keys must be plain strings");
        assert_contains(e2, "metadata keys must be plain strings");
        ck_assert_str_eq(e3, "SKILL.md:3: top-level keys must not hold control characters");
        ck_assert_str_eq(e4, "SKILL.md:3: metadata keys must not hold control characters");
}
END_TEST

START_TEST(test_too_many_keys) {
        _cleanup_free_ char *text = malloc(SKILL_FRONTMATTER_MAX), *meta = malloc(SKILL_FRONTMATTER_MAX);
        _cleanup_free_ char *e1 = NULL, *e2 = NULL;
        _cleanup_(skill_freep) Skill *ok = NULL;
        size_t n, m;

        ck_assert_ptr_nonnull(text);
        ck_assert_ptr_nonnull(meta);
        n = (size_t) sprintf(text, "---\n");
        m = (size_t) sprintf(meta, "---\nmetadata:\n");
        for (unsigned i = 0; i < SKILL_KEYS_MAX; i++) {
                n += (size_t) sprintf(text + n, "k%u: v\n", i);
                m += (size_t) sprintf(meta + m, " k%u: v\n", i);
        }
        strcpy(text + n, "---\n");
        ok = parse_ok(text);
        ck_assert_uint_eq(ok->n_fields, SKILL_KEYS_MAX);

        strcpy(text + n, "one-more: v\n---\n");
        e1 = parse_fail(text, -E2BIG);
        assert_contains(e1, "more than 512 top-level keys");
        strcpy(meta + m, " one-more: v\n---\n");
        e2 = parse_fail(meta, -E2BIG);
        assert_contains(e2, "more than 512 metadata keys");
}
END_TEST

START_TEST(test_load_at) {
        _cleanup_test_dir_ TestDir both = test_dir_new(), lower = test_dir_new(), none = test_dir_new(),
                link = test_dir_new(), dir = test_dir_new(), fifo = test_dir_new(), big = test_dir_new();
        _cleanup_(skill_freep) Skill *s1 = NULL, *s2 = NULL;
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL;
        _cleanup_close_ int fd = -EBADF;
        Skill *s = NULL;

        test_write_file(both.fd, "SKILL.md", "---\nname: upper\n---\n", 0644);
        test_write_file(both.fd, "skill.md", "---\nname: lower\n---\n", 0644);
        ck_assert_int_eq(skill_load_at(both.fd, &s1, NULL), 0);
        ck_assert_str_eq(s1->name, "upper");
        ck_assert_str_eq(s1->md_filename, "SKILL.md");

        test_write_file(lower.fd, "skill.md", "---\nname: lower\n---\n", 0644);
        ck_assert_int_eq(skill_load_at(lower.fd, &s2, NULL), 0);
        ck_assert_str_eq(s2->name, "lower");
        ck_assert_str_eq(s2->md_filename, "skill.md");

        ck_assert_int_eq(skill_load_at(none.fd, &s, &e1), -ENOENT);
        assert_contains(e1, "no SKILL.md");

        test_write_file(link.fd, "real.md", "---\nname: x\n---\n", 0644);
        ck_assert_int_eq(symlinkat("real.md", link.fd, "SKILL.md"), 0);
        ck_assert_int_eq(skill_load_at(link.fd, &s, &e2), -ELOOP);
        assert_contains(e2, "SKILL.md: is a symlink");

        ck_assert_int_eq(mkdirat(dir.fd, "SKILL.md", 0755), 0);
        ck_assert_int_eq(skill_load_at(dir.fd, &s, &e3), -EBADFD);
        assert_contains(e3, "SKILL.md: not a regular file");

        /* Must not block in open(). */
        ck_assert_int_eq(mkfifoat(fifo.fd, "SKILL.md", 0644), 0);
        ck_assert_int_eq(skill_load_at(fifo.fd, &s, &e4), -EBADFD);
        assert_contains(e4, "not a regular file");

        fd = openat(big.fd, "SKILL.md", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 10 * 1024 * 1024), 0);
        ck_assert_int_eq(skill_load_at(big.fd, &s, &e5), -EFBIG);
        assert_contains(e5, "1 MiB cap");
        ck_assert_ptr_null(s);
}
END_TEST

/* Limits declared the way other formats do (Skillbox's timeout and resources), in their units. */
START_TEST(test_declared_limits) {
        static const struct {
                const char *frontmatter;
                int r;
                unsigned set;
                uint64_t timeout_usec, memory_max;
                unsigned cpu_percent;
        } cases[] = {
                { "timeout: 5s\nresources:\n  memory: 64Mi\n  cpu: \"0.25\"\n", 0,
                  SANDBOX_LIMIT_TIMEOUT | SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_CPU, 5000000, 64ULL << 20, 25 },
                { "timeout: 30\n", 0, SANDBOX_LIMIT_TIMEOUT, 30000000, 0, 0 },
                { "timeout: 2min\nresources: {cpu: 500m, memory: 1G}\n", 0,
                  SANDBOX_LIMIT_TIMEOUT | SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_CPU, 120000000, 1ULL << 30, 50 },
                { "resources:\n  cpu: 2\n  gpu: 1\n", 0, SANDBOX_LIMIT_CPU, 0, 0, 200 },
                { "resources:\n  cpu: 150%\n", 0, SANDBOX_LIMIT_CPU, 0, 0, 150 },
                { "", 0, 0, 0, 0, 0 },
                { "timeout: soon\n", -EINVAL, 0, 0, 0, 0 },
                { "timeout: 10ms\n", -EINVAL, 0, 0, 0, 0 },
                { "timeout: [5s]\n", -EINVAL, 0, 0, 0, 0 },
                { "resources: 64Mi\n", -EINVAL, 0, 0, 0, 0 },
                { "resources:\n  memory: 1Ki\n", -EINVAL, 0, 0, 0, 0 },
                { "resources:\n  cpu: -1\n", -EINVAL, 0, 0, 0, 0 },
                { "resources:\n  cpu: 5m\n", -EINVAL, 0, 0, 0, 0 },
                { "resources:\n  memory: {a: 1}\n", -EINVAL, 0, 0, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = strdup_printf("---\nname: x\n%s---\n", cases[i].frontmatter);
                _cleanup_(skill_freep) Skill *s = parse_ok(text);
                _cleanup_free_ char *error = NULL;
                SkillDeclaredLimits d = {};
                const SandboxLimits dflt = SANDBOX_LIMITS_DEFAULT;
                SandboxLimits l = dflt;
                int r;

                r = skill_declared_limits(s, &d, &error);
                ck_assert_msg(r == cases[i].r, "case %zu: %d (%s)", i, r, strna(error));
                if (r < 0) {
                        ck_assert_ptr_nonnull(error);
                        continue;
                }
                ck_assert_uint_eq(d.set, cases[i].set);
                ck_assert_uint_eq(d.timeout_usec, cases[i].timeout_usec);
                ck_assert_uint_eq(d.memory_max, cases[i].memory_max);
                ck_assert_uint_eq(d.cpu_percent, cases[i].cpu_percent);

                /* Requests only lower: 200% stays 100%, 2min stays 60s. */
                (void) skill_declared_limits_apply(&d, &l);
                ck_assert_uint_le(l.timeout_usec, dflt.timeout_usec);
                ck_assert_uint_le(l.cpu_percent, dflt.cpu_percent);
                ck_assert_uint_le(l.memory_max, dflt.memory_max);
                if (d.set & SANDBOX_LIMIT_TIMEOUT)
                        ck_assert_uint_eq(l.timeout_usec, MIN(d.timeout_usec, 60000000ULL));
        }
}
END_TEST

static Suite *skill_suite(void) {
        Suite *s = suite_create("skill");
        TCase *tc;

        tc = tcase_create("parse");
        tcase_add_test(tc, test_realistic);
        tcase_add_test(tc, test_lenient_metadata);
        tcase_add_test(tc, test_plain_scalar_kinds);
        tcase_add_test(tc, test_allowed_tools_list);
        tcase_add_test(tc, test_unusable_known_values);
        tcase_add_test(tc, test_crlf_bom);
        tcase_add_test(tc, test_lines_unicode_breaks);
        tcase_add_test(tc, test_frontmatter_shapes);
        tcase_add_test(tc, test_syntax_error);
        tcase_add_test(tc, test_load_at);
        tcase_add_test(tc, test_declared_limits);
        suite_add_tcase(s, tc);

        tc = tcase_create("hostile");
        tcase_add_test(tc, test_alias_bomb);
        tcase_add_test(tc, test_alias_self_reference);
        tcase_add_test(tc, test_huge_scalar);
        tcase_add_test(tc, test_deep_nesting);
        tcase_add_test(tc, test_invalid_utf8);
        tcase_add_test(tc, test_tags);
        tcase_add_test(tc, test_multiple_documents);
        tcase_add_test(tc, test_not_a_mapping);
        tcase_add_test(tc, test_duplicate_keys);
        tcase_add_test(tc, test_complex_keys);
        tcase_add_test(tc, test_too_many_keys);
        suite_add_tcase(s, tc);

        return s;
}

int main(void) {
        return test_run_suite(skill_suite());
}
