/* Tests for env/: PEP 440 versions and Debian's, the Debian name mapping, the spec and its id
 * (what changes it and what does not), the search paths a run gets, the tree digest, sealing and
 * removal, bindings and the lifecycle functions on a scratch cache. Nothing here builds: the
 * test-env-*.sh scripts do, for real. */
#include <sys/stat.h>

#include "env-internal.h"
#include "test-util.h"

static void write_table(int dir_fd) {
        test_write_file(dir_fd, "fallback",
                        "# comment\n"
                        "Pillow python3-pil\n"
                        "PyYAML python3-yaml\n"
                        "python_docx python3-docx\n"
                        "XlsxWriter python3-xlsxwriter\n", 0644);
}

START_TEST(test_debian_candidates) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *table = NULL;
        _cleanup_strv_free_ char **a = NULL, **b = NULL, **c = NULL, **d = NULL;

        write_table(t.fd);
        table = strdup_printf("%s/fallback", t.path);
        ck_assert_ptr_nonnull(table);

        /* Debian's own name first, compared normalized, then the python3-<name> rule. */
        ck_assert_int_eq(env_debian_candidates("pillow", table, &a), 0);
        ck_assert_str_eq(a[0], "python3-pil");
        ck_assert_str_eq(a[1], "python3-pillow");
        ck_assert_ptr_null(a[2]);

        ck_assert_int_eq(env_debian_candidates("python-docx", table, &b), 0);
        ck_assert_str_eq(b[0], "python3-docx");
        ck_assert_str_eq(b[1], "python3-python-docx");
        ck_assert_ptr_null(b[2]);

        ck_assert_int_eq(env_debian_candidates("tabulate", table, &c), 0);
        ck_assert_str_eq(c[0], "python3-tabulate");
        ck_assert_ptr_null(c[1]);

        /* No table at all: the rule alone. */
        ck_assert_int_eq(env_debian_candidates("pyyaml", "/nonexistent/table", &d), 0);
        ck_assert_str_eq(d[0], "python3-pyyaml");
        ck_assert_ptr_null(d[1]);
}
END_TEST

START_TEST(test_debian_candidates_real_table) {
        _cleanup_strv_free_ char **a = NULL;

        if (access(ENV_DH_PYTHON_TABLE, R_OK) < 0)
                return; /* dh-python is not installed: the rule is all there is */
        ck_assert_int_eq(env_debian_candidates("pyyaml", NULL, &a), 0);
        ck_assert_str_eq(a[0], "python3-yaml");
}
END_TEST

static EnvSpec *spec_for(int dir_fd, const char *requirements, const EnvOptions *o) {
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        _cleanup_free_ char *error = NULL;
        EnvSpec *s = NULL;

        test_write_file(dir_fd, "requirements.txt", requirements, 0644);
        ck_assert_int_eq(skill_deps_discover(dir_fd, NULL, NULL, &deps, &error), 0);
        ck_assert_msg(env_spec_new(deps, dir_fd, o, &s, &error) == 0, "%s", strna(error));
        return s;
}

START_TEST(test_spec_id) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(env_spec_freep) EnvSpec *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL;
        _cleanup_(skill_deps_freep) SkillDeps *none = NULL;
        _cleanup_free_ char *error = NULL, *canonical = NULL;
        EnvOptions pip_only = ENV_OPTIONS_INIT;
        EnvSpec *empty = (EnvSpec *) 1;

        a = spec_for(t.fd, "pypdf\nlxml>=4\n", NULL);
        ck_assert_uint_eq(strlen(a->id), 64);
        ck_assert_str_eq(a->python_names[0], "lxml");
        ck_assert_str_eq(a->python[0], "lxml>=4");

        /* Order and spelling do not matter; the code of the skill is not an input at all. */
        test_write_file(t.fd, "scripts/main.py", "import pypdf\n", 0644);
        b = spec_for(t.fd, "LXML>=4\n\npypdf\n", NULL);
        ck_assert_str_eq(a->id, b->id);

        /* A different constraint is a different environment. */
        c = spec_for(t.fd, "pypdf\nlxml>=5\n", NULL);
        ck_assert_str_ne(a->id, c->id);

        /* So are other sources, though the needs are the same. */
        pip_only.resolvers[0] = ENV_RESOLVER_PIP;
        pip_only.n_resolvers = 1;
        d = spec_for(t.fd, "pypdf\nlxml>=4\n", &pip_only);
        ck_assert_str_ne(a->id, d->id);
        ck_assert_str_eq(a->needs_id, d->needs_id);
        pip_only.pip_index_url = "http://127.0.0.1:1/simple/";
        e = spec_for(t.fd, "pypdf\nlxml>=4\n", &pip_only);
        ck_assert_str_ne(d->id, e->id);

        /* The canonical text names the builder and the interpreter. */
        ck_assert_int_eq(env_spec_canonical(a, &canonical), 0);
        ck_assert_ptr_nonnull(strstr(canonical, "skilld-environment " ENV_BUILDER_VERSION "\n"));
        ck_assert_ptr_nonnull(strstr(canonical, "\npython python3."));
        ck_assert_ptr_nonnull(strstr(canonical, " cpython-3"));
        ck_assert_ptr_nonnull(strstr(canonical, "\nrequires lxml>=4\n"));

        /* Hash-pinned files go to pip as written, and their bytes are in the id. */
        f = spec_for(t.fd, "pypdf==3.4.1 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n", NULL);
        ck_assert_ptr_nonnull(f->requirements);

        /* Nothing needed: no spec. */
        ck_assert_int_eq(unlinkat(t.fd, "requirements.txt", 0), 0);
        ck_assert_int_eq(skill_deps_discover(t.fd, NULL, NULL, &none, &error), 0);
        ck_assert_int_eq(env_spec_new(none, t.fd, NULL, &empty, &error), 0);
        ck_assert_ptr_null(empty);
}
END_TEST

START_TEST(test_spec_node) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        _cleanup_(env_spec_freep) EnvSpec *a = NULL, *b = NULL;
        _cleanup_free_ char *error = NULL;

        test_write_file(t.fd, "package.json", "{\"name\": \"x\", \"version\": \"1.0.0\", \"dependencies\": {\"ms\": \"2.1.3\"}}",
                        0644);
        ck_assert_int_eq(skill_deps_discover(t.fd, NULL, NULL, &deps, &error), 0);
        ck_assert_int_eq(env_spec_new(deps, t.fd, NULL, &a, &error), 0);
        ck_assert(a->node_without_lock);
        ck_assert_str_eq(a->node[0], "ms");
        deps = skill_deps_free(deps);

        /* The lockfile's bytes are part of the id. */
        test_write_file(t.fd, "package-lock.json",
                        "{\"name\": \"x\", \"lockfileVersion\": 3, \"packages\": {\"node_modules/ms\": {\"version\": \"2.1.3\"}}}",
                        0644);
        ck_assert_int_eq(skill_deps_discover(t.fd, NULL, NULL, &deps, &error), 0);
        ck_assert_int_eq(env_spec_new(deps, t.fd, NULL, &b, &error), 0);
        ck_assert(!b->node_without_lock);
        ck_assert_str_ne(a->id, b->id);
}
END_TEST

START_TEST(test_spec_optional) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(env_spec_freep) EnvSpec *s = NULL;
        _cleanup_free_ char *error = NULL;
        SkillDep item = {
                .ecosystem = DEP_ECOSYSTEM_PYTHON,
                .origin = DEP_ORIGIN_INFERRED,
                .name = (char *) "yaml-nothing",
                .optional = true,
        };
        SkillDeps deps = { .items = &item, .n = 1, .inferred = true };
        int fd = -EBADF;

        /* An import guarded by try/except ImportError is built if it can be, but its absence
         * does not stop a run. */
        ck_assert_int_eq(env_spec_new(&deps, t.fd, NULL, &s, &error), 0);
        ck_assert_ptr_nonnull(s);
        ck_assert(!s->required);
        ck_assert_int_eq(env_open_for_run(t.path, NULL, s, &fd, &error), 0);
        ck_assert_int_lt(fd, 0);

        item.optional = false;
        s = env_spec_free(s);
        ck_assert_int_eq(env_spec_new(&deps, t.fd, NULL, &s, &error), 0);
        ck_assert(s->required);
        ck_assert_int_eq(env_open_for_run(t.path, NULL, s, &fd, &error), -ENOENT);
        ck_assert_ptr_nonnull(strstr(error, "Python packages yaml-nothing"));
}
END_TEST

START_TEST(test_search_paths) {
        _cleanup_strv_free_ char **l = NULL;
        bool python = false, ld = false, path = false;

        ck_assert_int_eq(env_search_paths(&l), 0);
        STRV_FOREACH(e, l) {
                char *msg = NULL;

                /* The search paths are names callers may not set themselves. */
                if (!startswith(*e, "PYTHONDONTWRITEBYTECODE=")) {
                        ck_assert_int_lt(sandbox_env_check(*e, &msg), 0);
                        free(msg);
                }
                python |= !!startswith(*e, "PYTHONPATH=/env/python:");
                ld |= !!startswith(*e, "LD_LIBRARY_PATH=/env/debian/");
                path |= !!startswith(*e, "PATH=/env/debian/usr/bin:");
        }
        ck_assert(python && ld && path);
}
END_TEST

START_TEST(test_tree_digest_seal_remove) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_close_ int fd = -EBADF;
        char d1[65], d2[65], d3[65];
        uint64_t size;
        struct stat st;

        test_write_file(t.fd, "env/python/a.py", "print(1)\n", 0644);
        test_write_file(t.fd, "env/debian/usr/bin/tool", "#!/bin/sh\n", 0755);
        test_write_file(t.fd, "env/manifest.json", "{}", 0644);
        ck_assert_int_eq(symlinkat("a.py", t.fd, "env/python/link.py"), 0);
        fd = openat(t.fd, "env", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);

        ck_assert_int_eq(env_tree_digest(fd, "manifest.json", d1, &size), 0);
        ck_assert_uint_eq(size, strlen("print(1)\n") + strlen("#!/bin/sh\n"));
        /* The manifest is left out; contents count. */
        test_write_file(t.fd, "env/manifest.json", "{\"x\": 1}", 0644);
        ck_assert_int_eq(env_tree_digest(fd, "manifest.json", d2, NULL), 0);
        ck_assert_str_eq(d1, d2);
        test_write_file(t.fd, "env/python/a.py", "print(2)\n", 0644);
        ck_assert_int_eq(env_tree_digest(fd, "manifest.json", d3, NULL), 0);
        ck_assert_str_ne(d1, d3);

        /* Sealing takes the write bits and keeps the digest. */
        ck_assert_int_eq(env_tree_seal(fd), 0);
        ck_assert_int_eq(fstatat(t.fd, "env/python/a.py", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0444);
        ck_assert_int_eq(fstatat(t.fd, "env/debian/usr/bin/tool", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0555);
        ck_assert_int_eq(fstatat(t.fd, "env/python", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0555);
        ck_assert_int_eq(env_tree_digest(fd, "manifest.json", d2, NULL), 0);
        ck_assert_str_eq(d2, d3);
}
END_TEST

START_TEST(test_cache_lifecycle) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_strv_free_ char **removed = NULL;
        _cleanup_free_ char *error = NULL;
        char id[65], a[65], b[65];
        EnvInfo *l = NULL;
        size_t n = 0;
        int fd;

        memset(a, 'a', 64);
        a[64] = '\0';
        memset(b, 'b', 64);
        b[64] = '\0';
        for (int i = 0; i < 2; i++) {
                _cleanup_free_ char *m = strdup_printf("%s/manifest.json", i ? b : a);
                _cleanup_close_ int efd = -EBADF;

                test_write_file(t.fd, m, "{\"size\": 1000, \"resolved\": [], \"missing\": []}", 0444);
                efd = openat(t.fd, i ? b : a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_eq(env_tree_seal(efd), 0);
        }
        /* A leftover of a killed build, and a file that is not an environment. */
        test_write_file(t.fd, ".build-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-x1/env/f", "x", 0644);
        test_write_file(t.fd, "README", "x", 0644);

        ck_assert_int_eq(env_list(t.path, &l, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(l[0].size, 1000);
        env_info_array_free(l, n);

        ck_assert_int_eq(env_resolve_id(t.path, "aaaaaaaa", id, &error), 0);
        ck_assert_str_eq(id, a);
        ck_assert_int_eq(env_resolve_id(t.path, "abc", id, &error), -EINVAL);
        free(error);
        error = NULL;
        ck_assert_int_eq(env_resolve_id(t.path, "cccccccc", id, &error), -ENOENT);

        /* Bindings: a skill hash to an id, "-" for nothing needed. */
        ck_assert_int_eq(env_binding_set(t.path, b, a), 0);
        ck_assert_int_eq(env_binding_get(t.path, b, id), 1);
        ck_assert_str_eq(id, a);
        ck_assert_int_eq(env_binding_get(t.path, a, id), 0);

        /* b was used last: gc keeps it, removes a and the leftover. */
        fd = openat(t.fd, b, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(utimensat(fd, "", (const struct timespec[2]) { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 4000000000 } },
                                   AT_EMPTY_PATH), 0);
        safe_close(fd);
        ck_assert_int_eq(env_gc(t.path, 1, UINT64_MAX, &removed), 2);
        ck_assert_str_eq(removed[0], a);
        ck_assert_int_eq(faccessat(t.fd, a, F_OK, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(faccessat(t.fd, b, F_OK, AT_SYMLINK_NOFOLLOW), 0);

        ck_assert_int_eq(env_remove(t.path, b), 0);
        ck_assert_int_eq(faccessat(t.fd, b, F_OK, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(env_remove(t.path, "not-an-id"), -EINVAL);
}
END_TEST

START_TEST(test_resolver_names) {
        ck_assert_str_eq(env_resolver_to_string(ENV_RESOLVER_DEBIAN), "debian");
        ck_assert_int_eq(env_resolver_from_string("npm"), ENV_RESOLVER_NPM);
        ck_assert_int_eq(env_resolver_from_string("conda"), -EINVAL);
}
END_TEST

/* PEP 440, checked case by case against pypa's packaging 23.0 (SpecifierSet.contains), which is
 * what pip decides with. */
START_TEST(test_pep440_satisfies) {
        static const struct {
                const char *version, *spec;
                int expected;
        } cases[] = {
                { "3.4.1", ">=4", 0 },
                { "4.0.1", ">=4", 1 },
                { "3.4.1", ">=3,<4", 1 },
                { "1.24.2", "==1.24.*", 1 },
                { "1.25.0", "==1.24.*", 0 },
                { "1.24", "==1.24.0", 1 },
                { "1.24.0", "==1.24", 1 },
                { "1.24.0+local.7", "==1.24.0", 1 },
                { "1.24.0+local.7", "==1.24.0+local.7", 1 },
                { "1.24.0+local.8", "==1.24.0+local.7", 0 },
                { "1.24.2", "!=1.24.2", 0 },
                { "1.24.2", "!=1.24.*", 0 },
                { "1.23.5", "!=1.24.*", 1 },
                { "2.2.5", "~=2.2", 1 },
                { "3.0", "~=2.2", 0 },
                { "2.2.5", "~=2.2.3", 1 },
                { "2.3.0", "~=2.2.3", 0 },
                { "2.2.2", "~=2.2.3", 0 },
                { "1!1.0", ">=2.0", 1 },
                { "1.0", ">=1!0.1", 0 },
                { "3.0a1", "<3", 0 },
                { "3.0a1", "<3.0rc1", 0 },
                { "2.9", "<3", 1 },
                { "3.0.post1", ">3", 0 },
                { "3.0.post2", ">3.0.post1", 1 },
                { "3.0+deb", ">3", 0 },
                { "3.1", ">3", 1 },
                { "1.0rc1", ">=0.9", 0 },
                { "1.0rc1", ">=1.0rc1", 1 },
                { "1.0rc1", ">=0.9,!=1.1a1", 0 },
                { "1.0.dev0", "<1.0", 0 },
                { "1.0.dev0", ">=1.0.dev0", 1 },
                { "1.0a1", ">1.0.dev0", 0 },
                { "1.0", "===1.0", 1 },
                { "1.0.0", "===1.0", 0 },
                { "1.0", "<=1.0", 1 },
                { "1.0.post1", "<=1.0", 0 },
                { "1.0", ">1.0", 0 },
                { "9.4.0", ">=9,<11", 1 },
                { "3.0.9", ">=3.1", 0 },
                { "1.0a1", "==1.0a1", 1 },
                { "1.0", "==1.0.0.0.0", 1 },
                { "1.0", ">= 0.5 , < 2", 1 },
                { "2.0", " ", 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(env_pep440_satisfies(cases[i].version, cases[i].spec) == cases[i].expected,
                              "%s against '%s': expected %d", cases[i].version, cases[i].spec, cases[i].expected);

        /* What does not parse is an error, never a match. */
        ck_assert_int_eq(env_pep440_satisfies("3.4.1", ">=four"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("3.4.1", "=>4"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("3.4.1", "~=4"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("3.4.1", ">=4.*"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("3.4.1", ">=4+local"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("not a version", ">=1"), -EINVAL);
        ck_assert_int_eq(env_pep440_satisfies("1.0", ">=1,"), 1); /* an empty clause is skipped */
}
END_TEST

START_TEST(test_pep440_order) {
        /* packaging's sorted() of these, in order. */
        static const char *const order[] = {
                "1.0.dev0", "1.0a1", "1.0a1.post1.dev2", "1.0b2", "1.0rc1", "1.0", "1.0+abc", "1.0+abc.5",
                "1.0+5", "1.0.post1.dev1", "1.0.post1", "1.1.dev1", "1!0.1",
        };
        int c;

        for (size_t i = 0; i + 1 < ELEMENTSOF(order); i++) {
                ck_assert_int_eq(env_pep440_compare(order[i], order[i + 1], &c), 0);
                ck_assert_msg(c < 0, "%s < %s", order[i], order[i + 1]);
                ck_assert_int_eq(env_pep440_compare(order[i + 1], order[i], &c), 0);
                ck_assert_int_gt(c, 0);
        }
        /* Normalization: spellings pip treats as one version. */
        ck_assert_int_eq(env_pep440_compare("1.0-ALPHA.1", "1.0a1", &c), 0);
        ck_assert_int_eq(c, 0);
        ck_assert_int_eq(env_pep440_compare("v1.0-1", "1.0.post1", &c), 0);
        ck_assert_int_eq(c, 0);
        ck_assert_int_eq(env_pep440_compare("1.0_preview_2", "1.0rc2", &c), 0);
        ck_assert_int_eq(c, 0);
        ck_assert_int_eq(env_pep440_compare("1.0.rev3", "1.0.post3", &c), 0);
        ck_assert_int_eq(c, 0);
        ck_assert_int_eq(env_pep440_compare("1.0dev", "1.0.dev0", &c), 0);
        ck_assert_int_eq(c, 0);
        ck_assert_int_eq(env_pep440_compare("1.0", "1.0.x", &c), -EINVAL);
        ck_assert_int_eq(env_pep440_compare("99999999999999999999999", "1", &c), -EINVAL);
}
END_TEST

START_TEST(test_debian_upstream_version) {
        static const char *const cases[][2] = {
                { "3.4.1-1+deb12u1", "3.4.1" },         /* Debian 12's python3-pypdf */
                { "1:1.24.2-1+deb12u1", "1.24.2" },     /* python3-numpy: an epoch */
                { "9.4.0-1.1+deb12u1", "9.4.0" },       /* python3-pil: a non-maintainer upload */
                { "1.26.4+ds-6", "1.26.4" },
                { "2.0.3+dfsg1-2", "2.0.3" },
                { "0.9.1.dfsg-2", "0.9.1" },
                { "2.0+really1.9-1", "1.9" },
                { "3.0~rc1-1", "3.0rc1" },
                { "3.0~b2-1", "3.0b2" },
                { "3.0~git20240101.abcdef-1", "3.0.dev0" },
                { "1.2.3", "1.2.3" },                   /* a native package: no revision */
                { "4.9.2-1~bpo12+1", "4.9.2" },         /* a backport */
        };
        char *v = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ck_assert_int_eq(env_debian_upstream_version(cases[i][0], &v), 0);
                ck_assert_str_eq(v, cases[i][1]);
                free(v);
                v = NULL;
        }
        ck_assert_int_eq(env_debian_upstream_version("20230101-1", &v), 0); /* a date is a version */
        ck_assert_str_eq(v, "20230101");
        free(v);
        v = NULL;
        ck_assert_int_eq(env_debian_upstream_version("abc-1", &v), -EINVAL);
        ck_assert_ptr_null(v);

        /* The case of the issue: Debian 12's pypdf does not satisfy pypdf>=4. */
        ck_assert_int_eq(env_debian_upstream_version("3.4.1-1+deb12u1", &v), 0);
        ck_assert_int_eq(env_pep440_satisfies(v, ">=4"), 0);
        ck_assert_int_eq(env_pep440_satisfies(v, ">=3,<4"), 1);
        free(v);
        v = NULL;
}
END_TEST

/* pip's configuration as pip install reads it: files in order (each later one wins), [install]
 * over [global], the environment over both, PIP_CONFIG_FILE=/dev/null for no files. */
START_TEST(test_pip_config) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(env_pip_config_done) EnvPipConfig a = {}, b = {}, c = {};
        _cleanup_free_ char *xdg = NULL, *conf = NULL;

        ck_assert_int_eq(mkdirat(t.fd, "xdg", 0755), 0);
        ck_assert_int_eq(mkdirat(t.fd, "xdg/pip", 0755), 0);
        ck_assert_int_eq(mkdirat(t.fd, ".config", 0755), 0);
        ck_assert_int_eq(mkdirat(t.fd, ".config/pip", 0755), 0);
        test_write_file(t.fd, "xdg/pip/pip.conf",
                        "[global]\nindex-url = http://127.0.0.1:1/a/\nfind_links = /x\n", 0644);
        test_write_file(t.fd, ".config/pip/pip.conf",
                        "# the user's\n[install]\nfind-links =\n    /y\n    /z\n[download]\nfind-links = /no\n", 0644);
        test_write_file(t.fd, "explicit.conf", "[global]\nindex-url: http://127.0.0.1:2/b/\n", 0644);
        xdg = strdup_printf("%s/xdg", t.path);
        conf = strdup_printf("%s/explicit.conf", t.path);
        ck_assert_int_eq(setenv("XDG_CONFIG_DIRS", xdg, 1), 0);
        ck_assert_int_eq(setenv("HOME", t.path, 1), 0);
        ck_assert_int_eq(setenv("PIP_CONFIG_FILE", conf, 1), 0);
        ck_assert_int_eq(unsetenv("XDG_CONFIG_HOME"), 0);
        ck_assert_int_eq(unsetenv("PIP_INDEX_URL"), 0);
        ck_assert_int_eq(unsetenv("PIP_FIND_LINKS"), 0);
        ck_assert_int_eq(unsetenv("PIP_NO_INDEX"), 0);

        ck_assert_int_eq(env_pip_config(&a), 0);
        ck_assert_str_eq(a.index_url, "http://127.0.0.1:2/b/");
        ck_assert_uint_eq(strv_length(a.find_links), 2);
        ck_assert_str_eq(a.find_links[0], "/y");
        ck_assert_str_eq(a.find_links[1], "/z");
        ck_assert(!a.no_index);

        ck_assert_int_eq(setenv("PIP_FIND_LINKS", "/e1 /e2", 1), 0);
        ck_assert_int_eq(setenv("PIP_NO_INDEX", "yes", 1), 0);
        ck_assert_int_eq(env_pip_config(&b), 0);
        ck_assert_ptr_null(b.index_url);
        ck_assert(b.no_index);
        ck_assert_uint_eq(strv_length(b.find_links), 2);
        ck_assert_str_eq(b.find_links[0], "/e1");

        ck_assert_int_eq(setenv("PIP_CONFIG_FILE", "/dev/null", 1), 0);
        ck_assert_int_eq(unsetenv("PIP_FIND_LINKS"), 0);
        ck_assert_int_eq(unsetenv("PIP_NO_INDEX"), 0);
        ck_assert_int_eq(env_pip_config(&c), 0);
        ck_assert_ptr_null(c.index_url);
        ck_assert_ptr_null(c.find_links);

        ck_assert(env_find_links_is_valid("/srv/wheels"));
        ck_assert(env_find_links_is_valid("http://127.0.0.1:8/w/"));
        ck_assert(!env_find_links_is_valid("wheels"));
        ck_assert(!env_find_links_is_valid("/srv/w --index-url http://x/"));
        ck_assert(!env_find_links_is_valid("/srv/w\n--index-url=http://x/"));
        ck_assert(!env_find_links_is_valid("ftp://x/"));
}
END_TEST

static Suite *env_suite(void) {
        Suite *s = suite_create("env");
        TCase *tc = tcase_create("env");

        tcase_add_test(tc, test_debian_candidates);
        tcase_add_test(tc, test_debian_candidates_real_table);
        tcase_add_test(tc, test_spec_id);
        tcase_add_test(tc, test_spec_node);
        tcase_add_test(tc, test_spec_optional);
        tcase_add_test(tc, test_search_paths);
        tcase_add_test(tc, test_tree_digest_seal_remove);
        tcase_add_test(tc, test_cache_lifecycle);
        tcase_add_test(tc, test_resolver_names);
        tcase_add_test(tc, test_pep440_satisfies);
        tcase_add_test(tc, test_pep440_order);
        tcase_add_test(tc, test_debian_upstream_version);
        tcase_add_test(tc, test_pip_config);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(env_suite());
}
