/* Tests for deps/: the requirements.txt and package.json parsers, the metadata keys, the import
 * name table, Node specifiers, discovery of declaration files, the Node scan, and the Python scan
 * of fixtures modelled on real document skills. The test case "infer-python" runs the sandbox: it
 * is tagged "sandbox", which meson runs in the 'sandbox' suite and leaves out of 'unit'
 * (CK_INCLUDE_TAGS, CK_EXCLUDE_TAGS). */
#include <sys/stat.h>

#include "deps.h"
#include "engine.h"
#include "test-util.h"

#define assert_contains(haystack, needle)                                                       \
        ck_assert_msg(strstr((haystack), (needle)), "'%s' does not contain '%s'", (haystack), (needle))

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

typedef struct Items {
        SkillDep *items;
        size_t n;
} Items;

static void items_done(Items *l) {
        for (size_t i = 0; i < l->n; i++)
                skill_dep_done(&l->items[i]);
        free(l->items);
        *l = (Items) {};
}
#define _cleanup_items_ _cleanup_(items_done)

static void parse_requirements_ok(const char *text, Items *l) {
        _cleanup_free_ char *error = NULL;
        int r = deps_parse_requirements(text, strlen(text), "requirements.txt", &l->items, &l->n, &error);

        ck_assert_msg(r == 0, "parse failed: %d %s", r, strna(error));
}

static char *parse_requirements_fail(const char *text, int expected) {
        _cleanup_items_ Items l = {};
        char *error = NULL;
        int r = deps_parse_requirements(text, strlen(text), "requirements.txt", &l.items, &l.n, &error);

        ck_assert_msg(r == expected, "expected %d, got %d (%s) for '%s'", expected, r, strna(error), text);
        ck_assert_ptr_nonnull(error);
        return error;
}

static const SkillDep *find(const SkillDep *items, size_t n, DepEcosystem e, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (items[i].ecosystem == e && streq(items[i].name, name))
                        return &items[i];
        return NULL;
}

static const SkillDep *find_origin(const SkillDeps *d, DepEcosystem e, const char *name, DepOrigin o) {
        for (size_t i = 0; i < d->n; i++)
                if (d->items[i].ecosystem == e && streq(d->items[i].name, name) && d->items[i].origin == o)
                        return &d->items[i];
        return NULL;
}

START_TEST(test_requirements) {
        _cleanup_items_ Items l = {};
        const SkillDep *d;

        parse_requirements_ok("# comment\n"
                              "\n"
                              "Pillow==10.4.0\n"
                              "numpy >= 1.24, <3  # trailing comment\n"
                              "python_docx\n"
                              "XlsxWriter[a, b]==3.2.0 ; python_version >= \"3.8\"\r\n"
                              "requests==2.31.0 \\\n"
                              "    --hash=sha256:0123456789abcdef\n"
                              "tabulate (>=0.9)\n"
                              "six==1.*\n"
                              "attrs===23.1.0\n"
                              "--require-hashes\n"
                              "lxml --hash sha256:aa --hash=sha256:bb", &l);
        ck_assert_int_eq(l.n, 9);

        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "pillow");
        ck_assert_ptr_nonnull(d);
        ck_assert_str_eq(d->spec, "==10.4.0");
        ck_assert(d->pinned);
        ck_assert_str_eq(d->where, "requirements.txt:3");
        ck_assert_int_eq(d->origin, DEP_ORIGIN_FILE);
        ck_assert(d->declared);

        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "numpy");
        ck_assert_str_eq(d->spec, ">= 1.24, <3");
        ck_assert(!d->pinned);

        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "python-docx");
        ck_assert_ptr_null(d->spec);
        ck_assert(!d->pinned);

        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "xlsxwriter");
        ck_assert_str_eq(d->extras, "a, b");
        ck_assert_str_eq(d->spec, "==3.2.0");
        ck_assert_str_eq(d->marker, "python_version >= \"3.8\"");
        ck_assert(d->pinned);

        /* A continued line keeps the number of its first line; a hash pins it. */
        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "requests");
        ck_assert_str_eq(d->where, "requirements.txt:7");
        ck_assert(d->pinned);

        d = find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "tabulate");
        ck_assert_str_eq(d->spec, ">=0.9");
        ck_assert_str_eq(d->where, "requirements.txt:9");

        ck_assert(!find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "six")->pinned);
        ck_assert(find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "attrs")->pinned);
        ck_assert(find(l.items, l.n, DEP_ECOSYSTEM_PYTHON, "lxml")->pinned);
}
END_TEST

START_TEST(test_requirements_refused) {
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL, *e6 = NULL,
                            *e7 = NULL, *e8 = NULL, *e9 = NULL;

        e1 = parse_requirements_fail("pypdf\n-r other.txt\n", -EOPNOTSUPP);
        assert_contains(e1, "requirements.txt:2");
        assert_contains(e1, "-r other.txt");
        e2 = parse_requirements_fail("--index-url http://127.0.0.1/simple\n", -EOPNOTSUPP);
        assert_contains(e2, "policy");
        e3 = parse_requirements_fail("-e .\n", -EOPNOTSUPP);
        e4 = parse_requirements_fail("pkg @ https://example.invalid/pkg.whl\n", -EOPNOTSUPP);
        assert_contains(e4, "URLs");
        e5 = parse_requirements_fail("./local/pkg\n", -EOPNOTSUPP);
        e6 = parse_requirements_fail("ok\n-bad name\n", -EOPNOTSUPP);
        e7 = parse_requirements_fail("pkg !! 3\n", -EBADMSG);
        e8 = parse_requirements_fail("pkg[extra\n", -EBADMSG);
        assert_contains(e8, "unclosed");
        e9 = parse_requirements_fail("pkg==1 --no-binary :all:\n", -EOPNOTSUPP);
        free(parse_requirements_fail("pkg==\n", -EBADMSG));
        free(parse_requirements_fail("pkg>=1,\n", -EBADMSG));
        free(parse_requirements_fail("pkg=1\n", -EBADMSG));
        assert_contains(e9, "--hash");

        /* Not text. */
        {
                _cleanup_items_ Items l = {};
                _cleanup_free_ char *error = NULL;

                ck_assert_int_eq(deps_parse_requirements("a\0b", 3, "r.txt", &l.items, &l.n, &error), -EBADMSG);
                ck_assert_int_eq(l.n, 0);
        }
}
END_TEST

START_TEST(test_requirement_one) {
        _cleanup_(skill_dep_done) SkillDep d = {};
        _cleanup_free_ char *error = NULL;

        ck_assert_int_eq(deps_parse_requirement("Foo.Bar__baz>=1", &d, NULL), 0);
        ck_assert_str_eq(d.name, "foo-bar-baz");
        ck_assert_str_eq(d.spec, ">=1");
        skill_dep_done(&d);
        ck_assert_int_eq(deps_parse_requirement("-x", &d, &error), -EBADMSG);
        ck_assert_ptr_null(d.name);
        free(error);
        error = NULL;
        ck_assert_int_eq(deps_parse_requirement("x-", &d, &error), -EBADMSG);
        ck_assert_int_eq(deps_parse_requirement("x;", &d, NULL), -EBADMSG);
}
END_TEST

START_TEST(test_package_json) {
        static const char pkg[] =
                "{\n"
                "  \"name\": \"x\",\n"
                "  \"dependencies\": {\n"
                "    \"docx\": \"^9.5.0\",\n"
                "    \"@acme/helpers\": \"1.2.3\",\n"
                "    \"left-pad\": \"~1.3\"\n"
                "  },\n"
                "  \"optionalDependencies\": { \"fsevents\": \"*\" },\n"
                "  \"devDependencies\": { \"eslint\": \"^9\" }\n"
                "}\n";
        static const char lock[] =
                "{ \"lockfileVersion\": 3, \"packages\": {\n"
                "  \"\": {}, \"node_modules/docx\": { \"version\": \"9.5.1\" } } }";
        _cleanup_items_ Items l = {};
        _cleanup_free_ char *error = NULL;
        const SkillDep *d;

        ck_assert_int_eq(deps_parse_package_json(pkg, strlen(pkg), "scripts/package.json", lock, strlen(lock),
                                                 "scripts/package-lock.json", &l.items, &l.n, &error), 0);
        ck_assert_int_eq(l.n, 4);
        ck_assert_ptr_null(find(l.items, l.n, DEP_ECOSYSTEM_NODE, "eslint"));

        d = find(l.items, l.n, DEP_ECOSYSTEM_NODE, "docx");
        ck_assert_str_eq(d->spec, "^9.5.0");
        ck_assert_str_eq(d->version, "9.5.1");
        ck_assert(d->pinned);
        ck_assert_str_eq(d->where, "scripts/package.json:4");

        d = find(l.items, l.n, DEP_ECOSYSTEM_NODE, "@acme/helpers");
        ck_assert_ptr_null(d->version);
        ck_assert(d->pinned);           /* an exact version */
        ck_assert_str_eq(d->where, "scripts/package.json:5");

        ck_assert(!find(l.items, l.n, DEP_ECOSYSTEM_NODE, "left-pad")->pinned);
        ck_assert_str_eq(find(l.items, l.n, DEP_ECOSYSTEM_NODE, "fsevents")->where, "scripts/package.json:8");

        /* lockfileVersion 1 */
        static const char lock1[] = "{\"dependencies\":{\"left-pad\":{\"version\":\"1.3.0\"}}}";
        items_done(&l);
        ck_assert_int_eq(deps_parse_package_json(pkg, strlen(pkg), "package.json",
                                                 lock1, strlen(lock1),
                                                 "package-lock.json", &l.items, &l.n, NULL), 0);
        ck_assert_str_eq(find(l.items, l.n, DEP_ECOSYSTEM_NODE, "left-pad")->version, "1.3.0");
}
END_TEST

START_TEST(test_package_json_refused) {
        static const struct {
                const char *text;
                const char *message;
        } cases[] = {
                { "[]", "top level must be a JSON object" },
                { "{\n\"dependencies\": {\n  \"x\": 1 }}", "package.json:3: the version of x must be a string" },
                { "{\"dependencies\": [\"x\"]}", "must be an object" },
                { "{\"dependencies\": {\"../evil\": \"1\"}}", "not a valid npm package name" },
                { "{\"dependencies\": {\"@a/b/c\": \"1\"}}", "not a valid npm package name" },
                { "{\n\n \"a\": ", "package.json:3: invalid JSON" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_items_ Items l = {};
                _cleanup_free_ char *error = NULL;
                int r;

                r = deps_parse_package_json(cases[i].text, strlen(cases[i].text), "package.json", NULL, 0, NULL,
                                            &l.items, &l.n, &error);
                ck_assert_int_eq(r, -EBADMSG);
                ck_assert_int_eq(l.n, 0);
                assert_contains(error, cases[i].message);
        }
}
END_TEST

START_TEST(test_import_names) {
        static const struct {
                const char *module;
                const char *distribution;
        } table[] = {
                { "PIL", "pillow" },
                { "PIL.Image", "pillow" },
                { "yaml", "pyyaml" },
                { "docx", "python-docx" },
                { "pptx", "python-pptx" },
                { "bs4", "beautifulsoup4" },
                { "cv2", "opencv-python" },
                { "sklearn", "scikit-learn" },
                { "fitz", "pymupdf" },
                { "dateutil", "python-dateutil" },
                { "dateutil.parser", "python-dateutil" },
                { "google.protobuf", "protobuf" },
                { "google.protobuf.json_format", "protobuf" },
                { "Bio", "biopython" },
                { "zmq", "pyzmq" },
                { "attr", "attrs" },
                { "Crypto", "pycryptodome" },
        };
        static const char * const unmapped[] = { "pypdf", "openpyxl", "lxml", "google", "pil", "", "PIL_" };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                const char *d = dep_python_distribution_for_import(table[i].module);

                ck_assert_msg(d && streq(d, table[i].distribution), "%s -> %s, expected %s", table[i].module,
                              strna(d), table[i].distribution);
        }
        for (size_t i = 0; i < ELEMENTSOF(unmapped); i++)
                ck_assert_ptr_null(dep_python_distribution_for_import(unmapped[i]));
        ck_assert_ptr_null(dep_python_distribution_for_import(NULL));
}
END_TEST

START_TEST(test_normalize) {
        static const char * const cases[][2] = {
                { "Pillow", "pillow" },
                { "python_docx", "python-docx" },
                { "zope.interface", "zope-interface" },
                { "A-_.B", "a-b" },
                { "XlsxWriter", "xlsxwriter" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *n = dep_python_normalize(cases[i][0]);
                ck_assert_str_eq(n, cases[i][1]);
        }
}
END_TEST

START_TEST(test_node_specifiers) {
        static const char * const cases[][2] = {
                { "docx", "docx" },
                { "lodash/get.js", "lodash" },
                { "@acme/helpers", "@acme/helpers" },
                { "@acme/helpers/sub/path", "@acme/helpers" },
                { "fs", NULL },
                { "fs/promises", NULL },
                { "node:fs", NULL },
                { "node:test", NULL },
                { "./x.js", NULL },
                { "../x", NULL },
                { "/abs/x", NULL },
                { "#internal", NULL },
                { "https://example.invalid/x.js", NULL },
                { "@scope", NULL },
                { "@/x", NULL },
                { "", NULL },
                { ".hidden", NULL },
                { "child_process", NULL },
                { "worker_threads", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *p = dep_node_package_for_specifier(cases[i][0]);

                ck_assert_msg(streq_ptr(p, cases[i][1]), "'%s' -> %s, expected %s", cases[i][0], strna(p),
                              strna(cases[i][1]));
        }
        ck_assert(dep_node_is_builtin("node:sqlite"));
        ck_assert(!dep_node_is_builtin("docx"));
        ck_assert(dep_node_name_is_valid("JSONStream"));
        ck_assert(!dep_node_name_is_valid("_private"));
}
END_TEST

START_TEST(test_discover_declarations) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        _cleanup_(skill_freep) Skill *s = NULL;
        _cleanup_free_ char *error = NULL;
        static const char md[] =
                "---\n"
                "name: x\n"
                "description: y\n"
                "metadata:\n"
                "  python-packages: \"pypdf>=4 pdfplumber==0.11.4\"\n"
                "  system-packages: poppler-utils qpdf\n"
                "  required-commands: pdftoppm\n"
                "  node-packages: docx@9.5.0 @acme/x@^1\n"
                "  other: kept\n"
                "---\n";

        test_write_file(t.fd, "SKILL.md", md, 0644);
        test_write_file(t.fd, "scripts/requirements.txt", "pillow==10.4.0\n", 0644);
        test_write_file(t.fd, "package.json", "{\"dependencies\": {\"docx\": \"^9\"}}", 0644);
        test_write_file(t.fd, "package-lock.json",
                        "{\"packages\": {\"node_modules/docx\": {\"version\": \"9.5.1\"}}}", 0644);
        ck_assert_int_eq(skill_load_at(t.fd, &s, NULL), 0);

        ck_assert_int_eq(skill_deps_discover(t.fd, s, NULL, &d, &error), 0);
        ck_assert_str_eq(d->requirements_file, "scripts/requirements.txt");
        ck_assert_str_eq(d->package_json, "package.json");
        ck_assert_str_eq(d->package_lock, "package-lock.json");
        ck_assert(d->declares);
        ck_assert(!d->inferred);
        ck_assert_int_eq(d->n, 1 + 1 + 2 + 2 + 1 + 2);

        ck_assert_str_eq(find_origin(d, DEP_ECOSYSTEM_PYTHON, "pillow", DEP_ORIGIN_FILE)->where,
                         "scripts/requirements.txt:1");
        ck_assert_str_eq(find_origin(d, DEP_ECOSYSTEM_PYTHON, "pypdf", DEP_ORIGIN_FRONTMATTER)->where, "SKILL.md:5");
        ck_assert(find_origin(d, DEP_ECOSYSTEM_PYTHON, "pdfplumber", DEP_ORIGIN_FRONTMATTER)->pinned);
        ck_assert_str_eq(find_origin(d, DEP_ECOSYSTEM_SYSTEM, "qpdf", DEP_ORIGIN_FRONTMATTER)->where, "SKILL.md:6");
        ck_assert_ptr_nonnull(find_origin(d, DEP_ECOSYSTEM_COMMAND, "pdftoppm", DEP_ORIGIN_FRONTMATTER));
        ck_assert_str_eq(find_origin(d, DEP_ECOSYSTEM_NODE, "@acme/x", DEP_ORIGIN_FRONTMATTER)->spec, "^1");
        ck_assert_str_eq(find_origin(d, DEP_ECOSYSTEM_NODE, "docx", DEP_ORIGIN_FILE)->version, "9.5.1");

        {
                _cleanup_free_ const SkillDep **l = NULL;

                ck_assert_int_eq(skill_deps_needed(d, DEP_ECOSYSTEM_SYSTEM, &l), 2);
                ck_assert_str_eq(l[0]->name, "poppler-utils");
                ck_assert_ptr_null(l[2]);
                ck_assert_int_eq(skill_deps_needed(d, DEP_ECOSYSTEM_PYTHON, NULL), 3);
        }
        {
                _cleanup_(cJSON_Deletep) cJSON *j = NULL;
                _cleanup_free_ char *text = NULL;

                ck_assert_int_eq(skill_deps_to_json(d, &j), 0);
                text = cJSON_PrintUnformatted(j);
                assert_contains(text, "\"requirements_file\":\"scripts/requirements.txt\"");
                assert_contains(text, "\"origin\":\"frontmatter\"");
        }
}
END_TEST

static char *discover_fail(int fd, const Skill *s, int expected) {
        SkillDeps *d = NULL;
        char *error = NULL;
        int r = skill_deps_discover(fd, s, NULL, &d, &error);

        ck_assert_msg(r == expected, "expected %d, got %d (%s)", expected, r, strna(error));
        ck_assert_ptr_null(d);
        ck_assert_ptr_nonnull(error);
        return error;
}

START_TEST(test_discover_refused) {
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL;

        {
                _cleanup_test_dir_ TestDir t = test_dir_new();

                test_write_file(t.fd, "requirements.txt", "a\n", 0644);
                test_write_file(t.fd, "scripts/requirements.txt", "b\n", 0644);
                e1 = discover_fail(t.fd, NULL, -EEXIST);
                assert_contains(e1, "requirements.txt and scripts/requirements.txt");
        }
        {
                _cleanup_test_dir_ TestDir t = test_dir_new();

                test_write_file(t.fd, "target", "a\n", 0644);
                ck_assert_int_eq(symlinkat("target", t.fd, "requirements.txt"), 0);
                e2 = discover_fail(t.fd, NULL, -ELOOP);
        }
        {
                _cleanup_test_dir_ TestDir t = test_dir_new();
                _cleanup_free_ char *big = malloc(DEPS_FILE_MAX + 2);

                ck_assert_ptr_nonnull(big);
                memset(big, 'a', DEPS_FILE_MAX + 1);
                big[DEPS_FILE_MAX + 1] = '\0';
                test_write_file(t.fd, "package.json", big, 0644);
                e3 = discover_fail(t.fd, NULL, -EFBIG);
        }
        {
                _cleanup_test_dir_ TestDir t = test_dir_new();
                _cleanup_(skill_freep) Skill *s = NULL;
                static const char md[] = "---\nname: x\nmetadata:\n  a: b\n  system-packages: \"Bad_Name\"\n---\n";

                ck_assert_int_eq(skill_parse_markdown(md, strlen(md), "SKILL.md", &s, NULL), 0);
                e4 = discover_fail(t.fd, s, -EBADMSG);
                assert_contains(e4, "SKILL.md:5: 'Bad_Name' is not a Debian package name");
        }
}
END_TEST

START_TEST(test_lint_rules) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();
        _cleanup_(skill_freep) Skill *s = NULL;
        static const char md[] =
                "---\n"
                "name: x\n"
                "description: y\n"
                "metadata:\n"
                "  python-packages: \"ok==1 bad!!\"\n"
                "  node-packages: \"\"\n"
                "  required-commands: \"/usr/bin/x\"\n"
                "---\n";

        ck_assert_int_eq(skill_parse_markdown(md, strlen(md), "SKILL.md", &s, NULL), 0);
        ck_assert_int_eq(skill_lint(s, "x", report), 0);
        ck_assert_int_eq(report->n_errors, 2);
        for (size_t i = 0; i < report->n_diags; i++) {
                const LintDiag *g = &report->diags[i];

                if (g->line == 5) {
                        ck_assert_str_eq(g->key, "metadata.python-packages");
                        assert_contains(g->message, "bad!!");
                } else if (g->line == 6) {
                        ck_assert_int_eq(g->severity, LINT_WARNING);
                        assert_contains(g->message, "is empty");
                } else if (g->line == 7)
                        assert_contains(g->message, "not a command name");
        }
}
END_TEST

START_TEST(test_lint_advice) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();
        SkillDep items[] = {
                { .ecosystem = DEP_ECOSYSTEM_PYTHON, .origin = DEP_ORIGIN_FILE, .name = (char *) "numpy",
                  .spec = (char *) ">=1", .where = (char *) "requirements.txt:2", .declared = true },
                { .ecosystem = DEP_ECOSYSTEM_PYTHON, .origin = DEP_ORIGIN_FILE, .name = (char *) "pillow",
                  .spec = (char *) "==10", .where = (char *) "requirements.txt:3", .declared = true, .pinned = true },
                { .ecosystem = DEP_ECOSYSTEM_SYSTEM, .origin = DEP_ORIGIN_FRONTMATTER, .name = (char *) "qpdf",
                  .where = (char *) "SKILL.md:5", .declared = true },
                { .ecosystem = DEP_ECOSYSTEM_PYTHON, .origin = DEP_ORIGIN_INFERRED, .name = (char *) "pyyaml",
                  .module = (char *) "yaml", .where = (char *) "scripts/a.py:7" },
                { .ecosystem = DEP_ECOSYSTEM_PYTHON, .origin = DEP_ORIGIN_INFERRED, .name = (char *) "pillow",
                  .module = (char *) "PIL", .where = (char *) "scripts/a.py:8", .declared = true },
        };
        SkillDeps d = { .items = items, .n = ELEMENTSOF(items), .declares = true,
                        .requirements_file = (char *) "requirements.txt" };

        ck_assert_int_eq(skill_deps_lint(NULL, &d, report), 0);
        ck_assert_int_eq(report->n_errors, 0);
        ck_assert_int_eq(report->n_warnings, 2);
        ck_assert_str_eq(report->diags[0].file, "requirements.txt");
        ck_assert_int_eq(report->diags[0].line, 2);
        assert_contains(report->diags[0].message, "numpy is not pinned");
        ck_assert_str_eq(report->diags[1].file, "scripts/a.py");
        ck_assert_int_eq(report->diags[1].line, 7);
        assert_contains(report->diags[1].message, "imports 'yaml' (python pyyaml)");
        assert_contains(report->diags[1].message, "add it to requirements.txt");

        /* A skill that declares nothing is not told about undeclared imports. */
        lint_report_free(report);
        report = lint_report_new();
        d.declares = false;
        d.items = items + 3;
        d.n = 2;
        ck_assert_int_eq(skill_deps_lint(NULL, &d, report), 0);
        ck_assert_int_eq(report->n_diags, 0);
}
END_TEST

static char *fixture(const char *name) {
        _cleanup_free_ char *rel = strdup_printf("tests/deps/fixtures/%s", name);

        ck_assert_ptr_nonnull(rel);
        return test_source_path(rel);
}

/* A copy of the node fixture with a vendored package: fixtures hold no node_modules. */
START_TEST(test_infer_node) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        _cleanup_free_ char *src = fixture("node-tool"), *cmd = NULL, *error = NULL;
        SkillDepsOptions opts = SKILL_DEPS_OPTIONS_INIT;
        const SkillDep *x;

        cmd = strdup_printf("cp -R '%s/.' '%s/'", src, t.path);
        ck_assert_int_eq(system(cmd), 0);
        test_write_file(t.fd, "scripts/node_modules/left-pad/package.json", "{\"name\":\"left-pad\"}", 0644);
        test_write_file(t.fd, "scripts/node_modules/@acme/helpers/package.json", "{}", 0644);

        opts.infer = true;
        opts.skill_dir = t.path;
        ck_assert_int_eq(skill_deps_discover(t.fd, NULL, &opts, &d, &error), 0);
        ck_assert(d->inferred);
        ck_assert(!d->declares);

        static const char * const expected[] = { "@acme/helpers", "chalk", "docx", "left-pad", "lodash", "uuid" };
        ck_assert_int_eq(d->n, ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                ck_assert_int_eq(d->items[i].ecosystem, DEP_ECOSYSTEM_NODE);
                ck_assert_int_eq(d->items[i].origin, DEP_ORIGIN_INFERRED);
                ck_assert_str_eq(d->items[i].name, expected[i]);
        }
        x = find(d->items, d->n, DEP_ECOSYSTEM_NODE, "docx");
        ck_assert_str_eq(x->where, "scripts/build.mjs:5");
        ck_assert(!x->vendored);
        x = find(d->items, d->n, DEP_ECOSYSTEM_NODE, "lodash");
        ck_assert_str_eq(x->module, "lodash/get.js");
        ck_assert(find(d->items, d->n, DEP_ECOSYSTEM_NODE, "left-pad")->vendored);
        ck_assert(find(d->items, d->n, DEP_ECOSYSTEM_NODE, "@acme/helpers")->vendored);
        ck_assert_str_eq(find(d->items, d->n, DEP_ECOSYSTEM_NODE, "uuid")->where, "scripts/legacy.cjs:4");
        ck_assert_int_eq(skill_deps_needed(d, DEP_ECOSYSTEM_NODE, NULL), 4);
}
END_TEST

static SkillDeps *infer_fixture(const char *name) {
        _cleanup_free_ char *path = fixture(name), *error = NULL;
        _cleanup_close_ int fd = -EBADF;
        SkillDepsOptions opts = SKILL_DEPS_OPTIONS_INIT;
        SkillDeps *d = NULL;
        int r;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        opts.infer = true;
        opts.skill_dir = path;
        opts.allow_missing = SANDBOX_LAYER_CGROUP;
        r = skill_deps_discover(fd, NULL, &opts, &d, &error);
        ck_assert_msg(r == 0, "inference failed: %d %s", r, strna(error));
        return d;
}

START_TEST(test_infer_python_pdf) {
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        static const char * const expected[] = { "pdf2image", "pdfplumber", "pillow", "pypdf" };
        const SkillDep *x;

        d = infer_fixture("pdf");
        ck_assert(d->inferred);
        ck_assert_ptr_null(d->unparsed);
        /* Not the standard library (json, sys, os, unittest, dataclasses), not the sibling modules
         * (extract_form_field_info, check_bounding_boxes). */
        ck_assert_int_eq(d->n, ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                ck_assert_str_eq(d->items[i].name, expected[i]);
        x = find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "pillow");
        ck_assert_str_eq(x->module, "PIL");
        ck_assert(x->mapped);
        ck_assert_str_eq(x->where, "scripts/create_validation_image.py:4");
        x = find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "pypdf");
        ck_assert_str_eq(x->where, "scripts/check_fillable_fields.py:3");
        ck_assert(!x->mapped);
}
END_TEST

START_TEST(test_infer_python_office) {
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        static const char * const expected[] = { "defusedxml", "lxml", "openpyxl" };

        d = infer_fixture("office-docx");
        /* helpers.merge_runs, "from helpers import", ".merge_runs" and scripts.office.validators are
         * the skill's own. lxml is imported in a try block in pack.py, but unguarded elsewhere. */
        ck_assert_int_eq(d->n, ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                ck_assert_str_eq(d->items[i].name, expected[i]);
        ck_assert(!find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "lxml")->optional);
}
END_TEST

START_TEST(test_infer_python_edge_cases) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_deps_freep) SkillDeps *d = NULL;
        _cleanup_free_ char *error = NULL;
        SkillDepsOptions opts = SKILL_DEPS_OPTIONS_INIT;

        ck_assert_int_eq(fchmod(t.fd, 0755), 0);
        test_write_file(t.fd, "scripts/main.py",
                        "import os, yaml\n"
                        "try:\n"
                        "    import ujson as json\n"
                        "except ImportError:\n"
                        "    import json\n"
                        "def f():\n"
                        "    import importlib\n"
                        "    return importlib.import_module('bs4'), __import__('cv2')\n"
                        "from . import sibling\n"
                        "import sibling\n"
                        "import ext\n"
                        "import typing\n"
                        "if typing.TYPE_CHECKING:\n"
                        "    import ujson\n", 0644);
        test_write_file(t.fd, "scripts/sibling.py", "", 0644);
        test_write_file(t.fd, "scripts/ext.cpython-311-x86_64-linux-gnu.so", "", 0644);
        test_write_file(t.fd, "scripts/broken.py", "def (\n", 0644);
        test_write_file(t.fd, "scripts/tool", "#!/usr/bin/env python3\nimport docx\n", 0755);
        {
                /* Past the scan's size cap: listed as not scanned, its imports unknown. */
                _cleanup_free_ char *big = malloc(5 * 1024 * 1024);

                ck_assert_ptr_nonnull(big);
                memset(big, '#', 5 * 1024 * 1024 - 1);
                big[5 * 1024 * 1024 - 1] = '\0';
                test_write_file(t.fd, "scripts/generated.py", big, 0644);
        }

        opts.infer = true;
        opts.skill_dir = t.path;
        opts.allow_missing = SANDBOX_LAYER_CGROUP;
        ck_assert_int_eq(skill_deps_discover(t.fd, NULL, &opts, &d, &error), 0);

        static const char * const expected[] = { "beautifulsoup4", "opencv-python", "python-docx", "pyyaml",
                                                  "ujson" };
        ck_assert_int_eq(d->n, ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                ck_assert_str_eq(d->items[i].name, expected[i]);
        ck_assert(find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "ujson")->optional);
        ck_assert(!find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "pyyaml")->optional);
        ck_assert_str_eq(find(d->items, d->n, DEP_ECOSYSTEM_PYTHON, "python-docx")->where, "scripts/tool:2");
        ck_assert_int_eq(strv_length(d->unparsed), 2);
        assert_contains(d->unparsed[0], "scripts/generated.py:0: larger than");
        assert_contains(d->unparsed[1], "scripts/broken.py:1: invalid syntax");
}
END_TEST

static Suite *deps_suite(void) {
        Suite *s = suite_create("deps");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_requirements);
        tcase_add_test(tc, test_requirements_refused);
        tcase_add_test(tc, test_requirement_one);
        tcase_add_test(tc, test_package_json);
        tcase_add_test(tc, test_package_json_refused);
        tcase_add_test(tc, test_import_names);
        tcase_add_test(tc, test_normalize);
        tcase_add_test(tc, test_node_specifiers);
        suite_add_tcase(s, tc);

        tc = tcase_create("discover");
        tcase_add_test(tc, test_discover_declarations);
        tcase_add_test(tc, test_discover_refused);
        tcase_add_test(tc, test_lint_rules);
        tcase_add_test(tc, test_lint_advice);
        tcase_add_test(tc, test_infer_node);
        suite_add_tcase(s, tc);

        tc = tcase_create("infer-python");
        tcase_set_tags(tc, "sandbox");
        tcase_add_test(tc, test_infer_python_pdf);
        tcase_add_test(tc, test_infer_python_office);
        tcase_add_test(tc, test_infer_python_edge_cases);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(deps_suite());
}
