/* Tests for entry point resolution: every step of the order, the error listing the scripts,
 * paths that try to leave the skill, symlinks and special files, interpreter detection from
 * extensions and shebangs, and the script listing. */
#include <sys/stat.h>

#include "entry.h"
#include "test-util.h"

#define assert_contains(haystack, needle)                                                       \
        ck_assert_msg(strstr((haystack), (needle)), "'%s' does not contain '%s'", (haystack), (needle))

static Skill *skill_with_entry_point(const char *entry_point) {
        _cleanup_free_ char *text = strdup_printf("---\nname: x\nentry_point: %s\n---\n", entry_point);
        Skill *s = NULL;

        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(skill_parse_markdown(text, strlen(text), "SKILL.md", &s, NULL), 0);
        return s;
}

static void assert_entry(const Skill *s, int dir_fd, const char *override, const char *script,
                         Interpreter interpreter, const char *how) {
        _cleanup_(skill_entry_done) SkillEntry e = {};
        _cleanup_free_ char *error = NULL;
        int r;

        r = skill_resolve_entry(s, dir_fd, override, &e, &error);
        if (r < 0)
                ck_abort_msg("resolving failed: %d %s", r, strna(error));
        ck_assert_ptr_null(error);
        ck_assert_str_eq(e.script, script);
        ck_assert_int_eq(e.interpreter, interpreter);
        ck_assert_str_eq(e.how, how);
}

/* Resolution that must fail with expected; returns the message. */
static char *entry_fail(const Skill *s, int dir_fd, const char *override, int expected) {
        SkillEntry e = { .script = NULL, .how = "untouched" };
        char *error = NULL;
        int r;

        r = skill_resolve_entry(s, dir_fd, override, &e, &error);
        ck_assert_msg(r == expected, "expected %d, got %d (%s)", expected, r, strna(error));
        ck_assert_ptr_nonnull(error);
        ck_assert_ptr_null(e.script);
        ck_assert_str_eq(e.how, "untouched");
        return error;
}

static const char * const order[] = {
        "scripts/main.py",
        "scripts/main.js",
        "scripts/main.mjs",
        "scripts/main.sh",
        "scripts/run.py",
        "main.py",
        "run.py",
};

START_TEST(test_order) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        static const Interpreter interp[] = {
                INTERPRETER_PYTHON, INTERPRETER_NODE, INTERPRETER_NODE, INTERPRETER_BASH,
                INTERPRETER_PYTHON, INTERPRETER_PYTHON, INTERPRETER_PYTHON,
        };

        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                test_write_file(t.fd, order[i], "print('hi')\n", 0644);
        test_write_file(t.fd, "scripts/other.sh", "echo\n", 0755);

        /* Each candidate wins while it exists; removing it hands over to the next one. */
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                assert_entry(NULL, t.fd, NULL, order[i], interp[i], order[i]);
                ck_assert_int_eq(unlinkat(t.fd, order[i], 0), 0);
        }

        /* Then the only script left in scripts/. */
        assert_entry(NULL, t.fd, NULL, "scripts/other.sh", INTERPRETER_BASH, "only script in scripts/");
}
END_TEST

START_TEST(test_override_and_entry_point) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_freep) Skill *s = skill_with_entry_point("scripts/tool.js");
        _cleanup_(skill_freep) Skill *dotted = skill_with_entry_point("./scripts//tool.js");

        test_write_file(t.fd, "scripts/main.py", "", 0644);
        test_write_file(t.fd, "scripts/tool.js", "", 0644);
        test_write_file(t.fd, "bin/run", "#!/bin/sh\necho\n", 0755);

        /* entry_point beats the conventional names; --script beats entry_point. */
        assert_entry(s, t.fd, NULL, "scripts/tool.js", INTERPRETER_NODE, "entry_point");
        assert_entry(dotted, t.fd, NULL, "scripts/tool.js", INTERPRETER_NODE, "entry_point");
        assert_entry(s, t.fd, "bin/run", "bin/run", INTERPRETER_SH, "--script");
        assert_entry(NULL, t.fd, "./scripts/main.py", "scripts/main.py", INTERPRETER_PYTHON, "--script");
        assert_entry(NULL, t.fd, NULL, "scripts/main.py", INTERPRETER_PYTHON, "scripts/main.py");
}
END_TEST

START_TEST(test_named_file_missing) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_freep) Skill *s = skill_with_entry_point("scripts/gone.py");
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL;

        /* A fallback exists, but a named file that is missing is an error, not a hint. */
        test_write_file(t.fd, "scripts/main.py", "", 0644);
        test_write_file(t.fd, "notadir", "", 0644);

        e1 = entry_fail(NULL, t.fd, "scripts/nope.py", -ENOENT);
        ck_assert_str_eq(e1, "--script scripts/nope.py: no such file in the skill");
        e2 = entry_fail(s, t.fd, NULL, -ENOENT);
        ck_assert_str_eq(e2, "entry_point scripts/gone.py: no such file in the skill");
        e3 = entry_fail(NULL, t.fd, "notadir/x.py", -ENOENT);
        assert_contains(e3, "notadir/x.py");
}
END_TEST

START_TEST(test_traversal) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_freep) Skill *s = skill_with_entry_point("../outside.py");
        static const char * const bad[] = {
                "/etc/passwd", "..", "../x.py", "scripts/../../x.py", "scripts/..", "", ".", "./", "//",
        };

        test_write_file(t.fd, "scripts/main.py", "", 0644);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *e = entry_fail(NULL, t.fd, bad[i], -EINVAL);

                assert_contains(e, "must be a relative path inside the skill");
                assert_contains(e, "--script");
        }

        _cleanup_free_ char *e = entry_fail(s, t.fd, NULL, -EINVAL);
        ck_assert_str_eq(e, "entry_point ../outside.py: must be a relative path inside the skill");
}
END_TEST

START_TEST(test_symlinks_and_special_files) {
        _cleanup_test_dir_ TestDir t = test_dir_new(), outside = test_dir_new(), fifo = test_dir_new(),
                cand = test_dir_new(), dirlink = test_dir_new();
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL, *e6 = NULL,
                *target = NULL;

        test_write_file(outside.fd, "evil.py", "import os\n", 0755);
        target = strdup_printf("%s/evil.py", outside.path);
        ck_assert_ptr_nonnull(target);

        /* A symlink as the script, and as a folder on the way. */
        test_write_file(t.fd, "scripts/real.py", "", 0644);
        ck_assert_int_eq(symlinkat(target, t.fd, "scripts/link.py"), 0);
        ck_assert_int_eq(symlinkat(outside.path, t.fd, "out"), 0);
        e1 = entry_fail(NULL, t.fd, "scripts/link.py", -ELOOP);
        ck_assert_str_eq(e1, "--script scripts/link.py: symlinks are not allowed");
        e2 = entry_fail(NULL, t.fd, "out/evil.py", -ELOOP);
        assert_contains(e2, "symlinks are not allowed");

        e3 = entry_fail(NULL, t.fd, "scripts", -EBADFD);
        ck_assert_str_eq(e3, "--script scripts: not a regular file");

        /* A FIFO must not block the open. */
        ck_assert_int_eq(mkdirat(fifo.fd, "scripts", 0755), 0);
        ck_assert_int_eq(mkfifoat(fifo.fd, "scripts/main.py", 0644), 0);
        e4 = entry_fail(NULL, fifo.fd, NULL, -EBADFD);
        ck_assert_str_eq(e4, "scripts/main.py: not a regular file");

        /* A conventional name that is a symlink is refused, not passed over. */
        test_write_file(cand.fd, "scripts/main.js", "", 0644);
        ck_assert_int_eq(symlinkat(target, cand.fd, "scripts/main.py"), 0);
        e5 = entry_fail(NULL, cand.fd, NULL, -ELOOP);
        ck_assert_str_eq(e5, "scripts/main.py: symlinks are not allowed");

        /* scripts/ itself a symlink out of the skill. */
        ck_assert_int_eq(symlinkat(outside.path, dirlink.fd, "scripts"), 0);
        e6 = entry_fail(NULL, dirlink.fd, NULL, -ELOOP);
        assert_contains(e6, "symlinks are not allowed");
}
END_TEST

START_TEST(test_not_found_lists_scripts) {
        _cleanup_test_dir_ TestDir none = test_dir_new(), many = test_dir_new(), lots = test_dir_new();
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL;

        test_write_file(none.fd, "README.md", "docs\n", 0644);
        test_write_file(none.fd, "references/notes.txt", "notes\n", 0644);
        e1 = entry_fail(NULL, none.fd, NULL, -ENOENT);
        assert_contains(e1, "no entry point found");
        assert_contains(e1, "no scripts");

        test_write_file(many.fd, "scripts/b.sh", "echo\n", 0644);
        test_write_file(many.fd, "scripts/a.py", "print()\n", 0644);
        test_write_file(many.fd, "tool.js", "\n", 0644);
        e2 = entry_fail(NULL, many.fd, NULL, -ENOENT);
        ck_assert_str_eq(e2, "no entry point found among the scripts scripts/a.py, scripts/b.sh, tool.js; "
                             "choose one with --script or entry_point");
        {
                /* The service's callers have no flags: the D-Bus API's words, never skillctl's. */
                _cleanup_(skill_entry_done) SkillEntry e = {};
                _cleanup_free_ char *msg = NULL, *msg2 = NULL;

                ck_assert_int_eq(skill_resolve_entry_named(NULL, many.fd, NULL, "the script argument", &e, &msg),
                                 -ENOENT);
                ck_assert_str_eq(msg, "no entry point found among the scripts scripts/a.py, scripts/b.sh, "
                                      "tool.js; choose one with the script argument or entry_point");
                ck_assert_int_eq(skill_resolve_entry_named(NULL, many.fd, "nope.py", "the script argument", &e,
                                                           &msg2), -ENOENT);
                ck_assert_str_eq(msg2, "the script argument nope.py: no such file in the skill");
        }

        for (unsigned i = 0; i < 25; i++) {
                _cleanup_free_ char *p = strdup_printf("scripts/s%02u.py", i);

                ck_assert_ptr_nonnull(p);
                test_write_file(lots.fd, p, "", 0644);
        }
        e3 = entry_fail(NULL, lots.fd, NULL, -ENOENT);
        assert_contains(e3, "among 25 scripts (scripts/s00.py, ");
        assert_contains(e3, "scripts/s19.py, and 5 more)");
}
END_TEST

START_TEST(test_only_script_direct_children) {
        _cleanup_test_dir_ TestDir t = test_dir_new();

        /* Helpers in subfolders and data files do not make the choice ambiguous. */
        test_write_file(t.fd, "scripts/convert", "#!/usr/bin/env python3\n", 0644);
        test_write_file(t.fd, "scripts/lib/helper.py", "", 0644);
        test_write_file(t.fd, "scripts/data.json", "{}", 0644);
        test_write_file(t.fd, "scripts/__pycache__/x.py", "", 0644);
        test_write_file(t.fd, "scripts/.hidden.sh", "", 0644);
        assert_entry(NULL, t.fd, NULL, "scripts/convert", INTERPRETER_PYTHON, "only script in scripts/");
}
END_TEST

START_TEST(test_shebangs) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        static const struct {
                const char *contents;
                Interpreter interpreter;
        } cases[] = {
                { "#!/usr/bin/env python3\n",                 INTERPRETER_PYTHON },
                { "#!/usr/bin/python3 -u\nprint()\n",         INTERPRETER_PYTHON },
                { "#! /usr/bin/python3.11\n",                 INTERPRETER_PYTHON },
                { "#!/usr/bin/env python\n",                  INTERPRETER_PYTHON },
                { "#!/usr/bin/env -S python3 -u\n",           INTERPRETER_PYTHON },
                { "#!/usr/bin/env LANG=C node\n",             INTERPRETER_NODE },
                { "#!/usr/bin/node\n",                        INTERPRETER_NODE },
                { "#!/usr/bin/env nodejs\n",                  INTERPRETER_NODE },
                { "#!/bin/bash\n",                            INTERPRETER_BASH },
                { "#!/bin/bash\r\necho\r\n",                  INTERPRETER_BASH },
                { "#!/usr/bin/env bash\n",                    INTERPRETER_BASH },
                { "#!/bin/sh -e\n",                           INTERPRETER_SH },
                { "#!/bin/dash\n",                            INTERPRETER_SH },
                { "#!/usr/bin/perl\n",                        INTERPRETER_NONE },
                { "#!/usr/bin/python3x\n",                    INTERPRETER_NONE },
                { "#!/usr/bin/env\n",                         INTERPRETER_NONE },
                { "#!\n",                                     INTERPRETER_NONE },
                { "\x7f" "ELF\x02\x01\x01",                   INTERPRETER_NONE },
                { "#!/bin/sh",                                INTERPRETER_SH },
                { "echo no shebang\n",                        INTERPRETER_NONE },
                { "",                                         INTERPRETER_NONE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *name = strdup_printf("bin/tool%zu", i);

                ck_assert_ptr_nonnull(name);
                test_write_file(t.fd, name, cases[i].contents, 0755);
                ck_assert_msg(interpreter_for_script(t.fd, name) == cases[i].interpreter,
                              "%s: got %d, expected %d", cases[i].contents,
                              interpreter_for_script(t.fd, name), cases[i].interpreter);
        }

        /* The extension wins over the shebang, and needs no file at all. */
        test_write_file(t.fd, "x.sh", "#!/bin/sh\n", 0644);
        ck_assert_int_eq(interpreter_for_script(t.fd, "x.sh"), INTERPRETER_BASH);
        ck_assert_int_eq(interpreter_for_script(t.fd, "missing.py"), INTERPRETER_PYTHON);
        ck_assert_int_eq(interpreter_for_script(t.fd, "a.js"), INTERPRETER_NODE);
        ck_assert_int_eq(interpreter_for_script(t.fd, "a.mjs"), INTERPRETER_NODE);
        ck_assert_int_eq(interpreter_for_script(t.fd, "a.cjs"), INTERPRETER_NODE);

        /* Without an extension the file is read, safely. */
        ck_assert_int_eq(interpreter_for_script(t.fd, "missing"), -ENOENT);
        ck_assert_int_eq(interpreter_for_script(t.fd, "../x"), -EINVAL);
        ck_assert_int_eq(symlinkat("bin/tool0", t.fd, "link"), 0);
        ck_assert_int_eq(interpreter_for_script(t.fd, "link"), -ELOOP);
        ck_assert_int_eq(interpreter_for_script(t.fd, "bin"), -EBADFD);
}
END_TEST

START_TEST(test_interpreter_names) {
        ck_assert_str_eq(interpreter_to_string(INTERPRETER_PYTHON), "python3");
        ck_assert_str_eq(interpreter_to_string(INTERPRETER_NODE), "node");
        ck_assert_str_eq(interpreter_to_string(INTERPRETER_BASH), "bash");
        ck_assert_str_eq(interpreter_to_string(INTERPRETER_SH), "sh");
        ck_assert_str_eq(interpreter_to_string(INTERPRETER_NONE), "exec");
        ck_assert_ptr_null(interpreter_to_string(_INTERPRETER_MAX));
        ck_assert_ptr_null(interpreter_to_string(_INTERPRETER_INVALID));

        ck_assert_str_eq(interpreter_path(INTERPRETER_PYTHON), "/usr/bin/python3");
        ck_assert_str_eq(interpreter_path(INTERPRETER_NODE), "/usr/bin/node");
        ck_assert_str_eq(interpreter_path(INTERPRETER_BASH), "/usr/bin/bash");
        ck_assert_str_eq(interpreter_path(INTERPRETER_SH), "/usr/bin/sh");
        ck_assert_ptr_null(interpreter_path(INTERPRETER_NONE));
        ck_assert_ptr_null(interpreter_path(_INTERPRETER_INVALID));
}
END_TEST

START_TEST(test_list_scripts) {
        _cleanup_test_dir_ TestDir t = test_dir_new(), empty = test_dir_new();
        _cleanup_strv_free_ char **list = NULL, **none = NULL;
        static const char * const expected[] = {
                "main.py",
                "run",
                "scripts/a/b/deep.sh",
                "scripts/exec-bit",
                "scripts/main.mjs",
                "scripts/shebang",
                "setup.cjs",
        };

        test_write_file(t.fd, "main.py", "", 0644);
        test_write_file(t.fd, "setup.cjs", "", 0644);
        test_write_file(t.fd, "run", "#!/bin/sh\n", 0644);
        test_write_file(t.fd, "SKILL.md", "---\n---\n", 0755);
        test_write_file(t.fd, "scripts/main.mjs", "", 0644);
        test_write_file(t.fd, "scripts/a/b/deep.sh", "", 0644);
        test_write_file(t.fd, "scripts/exec-bit", "\x7f" "ELF", 0755);
        test_write_file(t.fd, "scripts/shebang", "#!/usr/bin/env node\n", 0644);
        test_write_file(t.fd, "scripts/data.csv", "a,b\n", 0644);
        test_write_file(t.fd, "scripts/__pycache__/main.cpython-311.pyc", "", 0755);
        test_write_file(t.fd, "scripts/node_modules/x/index.js", "", 0644);
        test_write_file(t.fd, "scripts/.env.sh", "", 0644);
        test_write_file(t.fd, "references/example.py", "", 0644);
        test_write_file(t.fd, "assets/run.sh", "", 0755);
        ck_assert_int_eq(symlinkat("/usr/bin/python3", t.fd, "scripts/python.py"), 0);
        ck_assert_int_eq(symlinkat("/usr", t.fd, "scripts/usr"), 0);
        ck_assert_int_eq(mkfifoat(t.fd, "scripts/fifo.sh", 0644), 0);

        ck_assert_int_eq(skill_list_scripts(t.fd, &list), 0);
        ck_assert_uint_eq(strv_length(list), ELEMENTSOF(expected));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                ck_assert_str_eq(list[i], expected[i]);

        /* A symlinked scripts/ is refused rather than silently left out. */
        ck_assert_int_eq(symlinkat("/usr/bin", empty.fd, "scripts"), 0);
        ck_assert_int_eq(skill_list_scripts(empty.fd, &none), -ELOOP);
        ck_assert_int_eq(unlinkat(empty.fd, "scripts", 0), 0);
        ck_assert_int_eq(skill_list_scripts(empty.fd, &none), 0);
        ck_assert_ptr_nonnull(none);
        ck_assert_uint_eq(strv_length(none), 0);
}
END_TEST

static Suite *entry_suite(void) {
        Suite *s = suite_create("entry");
        TCase *tc = tcase_create("resolve");

        tcase_add_test(tc, test_order);
        tcase_add_test(tc, test_override_and_entry_point);
        tcase_add_test(tc, test_named_file_missing);
        tcase_add_test(tc, test_traversal);
        tcase_add_test(tc, test_symlinks_and_special_files);
        tcase_add_test(tc, test_not_found_lists_scripts);
        tcase_add_test(tc, test_only_script_direct_children);
        tcase_add_test(tc, test_shebangs);
        tcase_add_test(tc, test_interpreter_names);
        tcase_add_test(tc, test_list_scripts);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(entry_suite());
}
