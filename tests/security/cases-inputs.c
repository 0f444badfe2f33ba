/* The hostile skills and inputs group: the loader's whole hostile-archive corpus through
 * skill_source_open() and through skillctl, asserting nothing lands outside the target; YAML
 * bombs; deep and huge JSON; names and output holding control characters and escape sequences;
 * arguments that look like options. */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <termios.h>

#include "../loader/zip-builder.h"
#include "loader.h"
#include "security-util.h"
#include "skill.h"

#define GROUP "hostile-input"

#define FILE_SPEC(n, text) { .name = (n), .mode = S_IFREG | 0644, .data = (text), .size = strlen(text) }
#define DIR_SPEC(n) { .name = (n), .mode = S_IFDIR | 0755 }

/* ---- archives ---- */

typedef struct Evil {
        const char *category;
        Bytes bytes;
} Evil;

typedef struct Corpus {
        Evil *v;
        size_t n;
} Corpus;

static void corpus_zip(Corpus *c, const char *category, const ZipSpec *specs, size_t n) {
        c->v = reallocarray(c->v, c->n + 1, sizeof(Evil));
        ck_assert_ptr_nonnull(c->v);
        c->v[c->n] = (Evil) { .category = category };
        zip_build(specs, n, &c->v[c->n].bytes);
        c->n++;
}

static void corpus_ar(Corpus *c, const char *category, int format, int filter, const ArSpec *specs,
                      size_t n) {
        c->v = reallocarray(c->v, c->n + 1, sizeof(Evil));
        ck_assert_ptr_nonnull(c->v);
        c->v[c->n] = (Evil) { .category = category };
        ar_build(format, filter, specs, n, &c->v[c->n].bytes);
        c->n++;
}

static void corpus_raw(Corpus *c, const char *category, const void *data, size_t n) {
        c->v = reallocarray(c->v, c->n + 1, sizeof(Evil));
        ck_assert_ptr_nonnull(c->v);
        c->v[c->n] = (Evil) { .category = category };
        bytes_put(&c->v[c->n].bytes, data, n);
        c->n++;
}

#define ZIP(c, cat, ...)                                                        \
        do {                                                                    \
                const ZipSpec _s_[] = { __VA_ARGS__ };                          \
                corpus_zip((c), (cat), _s_, ELEMENTSOF(_s_));                   \
        } while (0)

/* The loader test suite's hostile corpus (tests/loader/test-loader.c), category by category;
 * escape targets point at the scratch directory's surroundings, the places the check looks. */
static void corpus_build(Corpus *c, const char *scratch, const char *marker, char **big, char **zeros) {
        _cleanup_free_ char *up = strdup_printf("../../../../../../../../tmp/%s-escaped", marker),
                            *abs = strdup_printf("/tmp/%s-abs", marker), *deep = NULL, *long_path = NULL,
                            *long_name = NULL;
        static char names[10002][12];
        ZipSpec *many;

        ZIP(c, "zip slip (\"..\" in names)", FILE_SPEC("../x", "escaped"));
        ZIP(c, "zip slip (\"..\" in names)", FILE_SPEC("ok", "fine"), FILE_SPEC("a/../../x", "escaped"));
        ZIP(c, "zip slip (\"..\" in names)", FILE_SPEC("s/SKILL.md", "x"),
            FILE_SPEC("s/../../x", "escaped"));
        ZIP(c, "zip slip (\"..\" in names)", FILE_SPEC(up, "escaped"));
        ZIP(c, "absolute paths", FILE_SPEC(abs, "escaped"));
        ZIP(c, "absolute paths", DIR_SPEC("/"));
        ZIP(c, "symlinks (and writes through them)",
            { .name = "link", .mode = S_IFLNK | 0777, .data = scratch, .size = strlen(scratch) },
            FILE_SPEC("link/evil", "escaped"));
        {
                const ArSpec ar[] = { { "SKILL.md", AE_IFREG, 0644, "x", false },
                                      { "etc", AE_IFLNK, 0777, "/etc", false } };

                corpus_ar(c, "symlinks (and writes through them)", ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE,
                          ar, 2);
        }
        ZIP(c, "symlinks (and writes through them)", FILE_SPEC("SKILL.md", "x"),
            { .name = "shadow", .mode = S_IFLNK | 0777, .data = "/etc/shadow", .size = 11 });
        ZIP(c, "devices, FIFOs, sockets", FILE_SPEC("SKILL.md", "x"),
            { .name = "special", .mode = S_IFCHR | 0666 });
        ZIP(c, "devices, FIFOs, sockets", FILE_SPEC("SKILL.md", "x"),
            { .name = "special", .mode = S_IFBLK | 0660 });
        ZIP(c, "devices, FIFOs, sockets", FILE_SPEC("SKILL.md", "x"),
            { .name = "special", .mode = S_IFIFO | 0644 });
        ZIP(c, "devices, FIFOs, sockets", FILE_SPEC("SKILL.md", "x"),
            { .name = "special", .mode = S_IFSOCK | 0644 });
        ZIP(c, "duplicates and file/dir clashes", FILE_SPEC("SKILL.md", "good"),
            FILE_SPEC("SKILL.md", "evil"));
        ZIP(c, "duplicates and file/dir clashes", FILE_SPEC("a", "file"), DIR_SPEC("a/"));
        ZIP(c, "duplicates and file/dir clashes", FILE_SPEC("a", "file"), FILE_SPEC("a/b", "below"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("SKILL.md", "x"),
            { .name = "ab\0../x", .name_len = 7, .mode = S_IFREG | 0644 });
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("a\nb", "x"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("a\x1b[2J", "x"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("..\\x", "x"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("h\xffllo", "x"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("a\xc0\xae\xc0\xae/x", "x"));
        ZIP(c, "names: NUL, control chars, \\, bad UTF-8", FILE_SPEC("a//b", "x"));
        /* Valid UTF-8 that reorders or breaks the line it is shown on: "invoice_<RLO>hs.exe"
         * displays as "invoice_exe.sh". */
        ZIP(c, "names: bidi controls, line separators", FILE_SPEC("SKILL.md", "x"),
            FILE_SPEC("invoice_\xe2\x80\xaehs.exe", "x"));
        ZIP(c, "names: bidi controls, line separators", FILE_SPEC("SKILL.md", "x"),
            FILE_SPEC("scripts/\xe2\x81\xa6main.sh\xe2\x81\xa9", "x"));
        ZIP(c, "names: bidi controls, line separators", FILE_SPEC("SKILL.md", "x"),
            FILE_SPEC("a\xe2\x80\x8f\xd8\x9c", "x"));
        ZIP(c, "names: bidi controls, line separators", FILE_SPEC("SKILL.md", "x"),
            FILE_SPEC("a\xe2\x80\xa8" "2026-01-01 skilld: ok", "x"));

        deep = strdup("d");
        for (unsigned i = 1; i < 33; i++) {
                char *d = strdup_printf("%s/d", deep);

                free(deep);
                deep = d;
        }
        ZIP(c, "too deep, too long", FILE_SPEC(deep, "x"));
        long_path = calloc(1, 1100);
        memset(long_path, 'p', 1030);
        for (unsigned i = 200; i < 1030; i += 201)
                long_path[i] = '/';
        ZIP(c, "too deep, too long", FILE_SPEC(long_path, "x"));
        long_name = calloc(1, 300);
        memset(long_name, 'n', 256);
        ZIP(c, "too deep, too long", FILE_SPEC(long_name, "x"));

        many = calloc(10002, sizeof(ZipSpec));
        ck_assert_ptr_nonnull(many);
        for (size_t i = 0; i < 10001; i++) {
                (void) snprintf(names[i], sizeof(names[i]), "f%05zu", i);
                many[i] = (ZipSpec) { .name = names[i], .mode = S_IFREG | 0644 };
        }
        corpus_zip(c, "too many entries (10001)", many, 10001);
        free(many);

        /* 16M of zeros deflate to ~16K; and a header that lies about what it holds. */
        *zeros = calloc(1, 16 << 20);
        ck_assert_ptr_nonnull(*zeros);
        ZIP(c, "zip bombs, lying sizes", FILE_SPEC("SKILL.md", "x"),
            { .name = "bomb", .mode = S_IFREG | 0644, .data = *zeros, .size = 16 << 20, .deflate = true });
        ZIP(c, "zip bombs, lying sizes", FILE_SPEC("SKILL.md", "x"),
            { .name = "liar", .mode = S_IFREG | 0644, .data = *zeros, .size = 64 * 1024, .deflate = true,
              .lie_size = true, .declared_size = 16 });
        ZIP(c, "zip bombs, lying sizes", FILE_SPEC("SKILL.md", "x"),
            { .name = "liar",
              .mode = S_IFREG | 0644,
              .data = "tiny",
              .size = 4,
              .deflate = true,
              .lie_size = true,
              .declared_size = 1000000 });
        ZIP(c, "inconsistent headers, encryption, methods",
            { .name = "SKILL.md", .local_name = "../x", .mode = S_IFREG | 0644, .data = "x", .size = 1 });
        ZIP(c, "inconsistent headers, encryption, methods",
            { .name = "ab",
              .local_name = "ab\0x",
              .local_name_len = 4,
              .mode = S_IFREG | 0644,
              .data = "x",
              .size = 1 });
        ZIP(c, "inconsistent headers, encryption, methods",
            { .name = "secret", .mode = S_IFREG | 0644, .data = "x", .size = 1, .flags = 1 });
        ZIP(c, "inconsistent headers, encryption, methods",
            { .name = "a", .mode = S_IFREG | 0644, .data = "x", .size = 1, .central_csize = 20 },
            FILE_SPEC("b", "y"));
        ZIP(c, "inconsistent headers, encryption, methods",
            { .name = "packed", .mode = S_IFREG | 0644, .data = "x", .size = 1, .method = 12 });
        /* Good entries first, the bad one last: what was extracted must go again. */
        *big = malloc(300 << 10);
        ck_assert_ptr_nonnull(*big);
        memset(*big, 'y', 300 << 10);
        ZIP(c, "partial extraction, then refusal", FILE_SPEC("SKILL.md", "---\nname: x\n---\n"),
            FILE_SPEC("scripts/a/b/c.py", "print()\n"), DIR_SPEC("assets/empty/"),
            { .name = "assets/big", .mode = S_IFREG | 0644, .data = *big, .size = 300 << 10 },
            { .name = "assets/liar",
              .mode = S_IFREG | 0644,
              .data = *zeros,
              .size = 64 * 1024,
              .deflate = true,
              .lie_size = true,
              .declared_size = 16 });
        {
                const ZipSpec one[] = { FILE_SPEC("SKILL.md", "x") };
                Bytes b = {};

                zip_build(one, 1, &b);
                corpus_raw(c, "corrupt zips", b.p, b.n - 5);
                bytes_put(&b, "trailing", 8);
                corpus_raw(c, "corrupt zips", b.p, b.n);
                bytes_done(&b);
        }
        {
                const ArSpec ar[] = { { "SKILL.md", AE_IFREG, 0644, "---\nname: x\n---\n", false },
                                      { "link", AE_IFLNK, 0777, "/etc/passwd", false } };

                corpus_ar(c, "other formats (tar, tgz, 7z, rar)", ARCHIVE_FORMAT_TAR_USTAR,
                          ARCHIVE_FILTER_NONE, ar, 2);
                corpus_ar(c, "other formats (tar, tgz, 7z, rar)", ARCHIVE_FORMAT_TAR_USTAR,
                          ARCHIVE_FILTER_GZIP, ar, 2);
                corpus_ar(c, "other formats (tar, tgz, 7z, rar)", ARCHIVE_FORMAT_7ZIP, ARCHIVE_FILTER_NONE,
                          ar, 1);
                corpus_raw(c, "other formats (tar, tgz, 7z, rar)",
                           "Rar!\x1a\x07\x01\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
                           "\0\0\0\0\0\0\0\0\0\0",
                           32);
        }
}

/* Names in dir, sorted, "/"-separated, recursively. */
static void list_tree(int dir_fd, const char *prefix, char ***l) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fdopendir(fd);
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        TAKE_FD(fd);
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                p = prefix ? strdup_printf("%s/%s", prefix, de->d_name) : strdup(de->d_name);
                ck_assert_int_eq(strv_extend(l, p), 0);
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub =
                                openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                        ck_assert_int_ge(sub, 0);
                        list_tree(sub, p, l);
                }
        }
        closedir(d);
        strv_sort(*l);
}

START_TEST(test_archive_corpus) {
        _cleanup_test_dir_ TestDir scratch = test_dir_new();
        _cleanup_free_ char *marker = random_marker(), *big = NULL, *zeros = NULL, *tmp = NULL,
                            *archive = NULL, *escaped = NULL, *abs = NULL, *evil = NULL;
        _cleanup_strv_free_ char **categories = NULL;
        Corpus c = {};

        ck_assert_int_eq(mkdirat(scratch.fd, "tmp", 0700), 0);
        tmp = strjoin_path(scratch.path, "tmp");
        archive = strjoin_path(scratch.path, "evil.skill");
        escaped = strdup_printf("/tmp/%s-escaped", marker);
        abs = strdup_printf("/tmp/%s-abs", marker);
        evil = strjoin_path(scratch.path, "evil");
        corpus_build(&c, scratch.path, marker, &big, &zeros);

        for (size_t i = 0; i < c.n; i++) {
                size_t refused = 0, total = 0, clean = 0;
                const char *category = c.v[i].category;

                if (strv_contains(categories, category))
                        continue;
                ck_assert_int_eq(strv_extend(&categories, category), 0);

                for (size_t k = i; k < c.n; k++) {
                        _cleanup_(skill_source_freep) SkillSource *s = NULL;
                        _cleanup_free_ char *error = NULL;
                        _cleanup_strv_free_ char **left = NULL;
                        _cleanup_exec_ Exec x = {};
                        int r;

                        if (!streq(c.v[k].category, category))
                                continue;
                        total++;
                        bytes_write_file(scratch.fd, "evil.skill", &c.v[k].bytes);
                        ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
                        r = skill_source_open(archive, NULL, &s, &error);
                        {
                                char *args[] = { archive, (char *) "--output-dir", tmp, (char *) "-q",
                                                 NULL };

                                /* skillctl extracts under $TMPDIR too; its output dir must not appear. */
                                x = skillctl_run(args, -EBADF, -EBADF, scratch.path);
                        }
                        ck_assert_int_eq(unsetenv("TMPDIR"), 0);
                        if (r < 0 && error && x.status == 125 && !has_control_chars(x.err) &&
                            strchr(x.err, '\n') == x.err + strlen(x.err) - 1)
                                refused++;
                        /* Nothing anywhere but the archive and the empty TMPDIR. */
                        list_tree(scratch.fd, NULL, &left);
                        if (strv_length(left) == 2 && streq(left[0], "evil.skill") &&
                            streq(left[1], "tmp") && access(escaped, F_OK) < 0 && access(abs, F_OK) < 0 &&
                            access(evil, F_OK) < 0 && access("/etc/evil", F_OK) < 0)
                                clean++;
                        ck_assert_int_eq(unlinkat(scratch.fd, "evil.skill", 0), 0);
                }
                CHECK_CASE(GROUP, category, "refused (also skillctl: 125); 0 files outside",
                           refused == total && clean == total, "%zu/%zu refused, %zu/%zu left nothing",
                           refused, total, clean, total);
        }
        /* Zip cannot carry a hard link: libarchive writes one as an empty file, and that is all
         * it may become (never a second name of anything). */
        {
                const ArSpec ar[] = { { "SKILL.md", AE_IFREG, 0644, "secret\n", false },
                                      { "hard", AE_IFREG, 0644, "SKILL.md", true } };
                _cleanup_(skill_source_freep) SkillSource *s = NULL;
                _cleanup_bytes_ Bytes b = {};
                struct stat a = {}, h = {};
                int r;

                ar_build(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, ar, ELEMENTSOF(ar), &b);
                bytes_write_file(scratch.fd, "evil.skill", &b);
                ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
                r = skill_source_open(archive, NULL, &s, NULL);
                ck_assert_int_eq(unsetenv("TMPDIR"), 0);
                CHECK_CASE(GROUP, "hard link entry (zip has none: libarchive's)", "an empty file, no link",
                           r == 0 && fstatat(s->dir_fd, "SKILL.md", &a, AT_SYMLINK_NOFOLLOW) == 0 &&
                           fstatat(s->dir_fd, "hard", &h, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(h.st_mode) &&
                           h.st_size == 0 && h.st_nlink == 1 && a.st_nlink == 1 && a.st_ino != h.st_ino,
                           "%s", r < 0 ? errno_name(-r) : h.st_nlink == 1 ? "empty file, 1 link" : "LINKED");
        }
        for (size_t i = 0; i < c.n; i++)
                bytes_done(&c.v[i].bytes);
        free(c.v);
}
END_TEST

/* ---- YAML ---- */

/* Parses SKILL.md text in a child with an address-space cap: a crash or a runaway allocation
 * is caught there. Returns the negative errno, or 1000 + signal. */
static int parse_contained(const char *text, size_t size) {
        int status;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct rlimit rl = { 1ULL << 30, 1ULL << 30 };
                Skill *s = NULL;
                char *error = NULL;
                int r;

                /* AddressSanitizer reserves terabytes of address space up front. */
#if !TEST_ASAN
                (void) setrlimit(RLIMIT_AS, &rl);
#else
                (void) rl;
#endif
                (void) alarm(60);
                r = skill_parse_markdown(text, size, "SKILL.md", &s, &error);
                /* A refusal comes with a message. */
                _exit(r < 0 && error && !has_control_chars(error) ? (-r & 0xff) : r < 0 ? 254 : 0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFSIGNALED(status) ? 1000 + WTERMSIG(status) : -WEXITSTATUS(status);
}

START_TEST(test_yaml_bombs) {
        static const struct {
                const char *name;
                const char *head;
                size_t head_len;        /* 0: strlen(head) */
                const char *unit;
                size_t repeat;
                const char *tail;
                int expect;
        } bombs[] = {
                { "YAML: billion laughs (anchors, aliases)",
                  "---\nname: x\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
                  0, "", 0, "---\n", -EOPNOTSUPP },
                { "YAML: flow nesting 30000 deep", "---\nname: x\nd: ", 0, "[", 30000, "\n---\n", -E2BIG },
                { "YAML: block mappings 200 deep", "---\nname: x\n", 0, "a:\n", 200, "---\n", -E2BIG },
                { "YAML: 100000 keys", "---\nname: x\n", 0, "k%zu: v\n", 100000, "---\n", -EFBIG },
                { "YAML: 2000 keys (under the size cap)", "---\nname: x\n", 0, "k%zu: v\n", 2000, "---\n",
                  -E2BIG },
                { "YAML: !!python/object tag", "---\nname: !!python/object:os.system [\"id\"]\n", 0, "", 0,
                  "---\n", -EOPNOTSUPP },
                { "SKILL.md of 2M", "---\nname: x\ndescription: d\n---\n", 0, "xxxxxxxxxxxxxxxx", 131072,
                  "\n", -EFBIG },
                { "SKILL.md with a NUL byte", "---\nname: x\0y\n", 14, "", 0, "---\n", -EILSEQ },
        };

        for (size_t i = 0; i < ELEMENTSOF(bombs); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_test_dir_ TestDir d = test_dir_new();
                _cleanup_exec_ Exec x = {};
                size_t size = 0, head_len = bombs[i].head_len ?: strlen(bombs[i].head);
                FILE *f = open_memstream(&text, &size);
                int r;

                ck_assert_ptr_nonnull(f);
                fwrite(bombs[i].head, 1, head_len, f);
                if (streq(bombs[i].unit, "a:\n"))
                        for (size_t k = 0; k < bombs[i].repeat; k++)
                                fprintf(f, "%*sa:\n", (int) k, "");
                else if (strstr(bombs[i].unit, "%zu"))
                        for (size_t k = 0; k < bombs[i].repeat; k++)
                                fprintf(f, "k%zu: v\n", k);
                else
                        for (size_t k = 0; k < bombs[i].repeat; k++)
                                fputs(bombs[i].unit, f);
                fputs(bombs[i].tail, f);
                ck_assert_int_eq(fclose(f), 0);

                r = parse_contained(text, size);
                /* Through skillctl as a user would meet it: a skill folder with this SKILL.md. */
                ck_assert_int_eq(fchmod(d.fd, 0755), 0);
                {
                        _cleanup_close_ int fd =
                                openat(d.fd, "SKILL.md", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                        char *args[] = { d.path, (char *) "-q", NULL };

                        ck_assert_int_ge(fd, 0);
                        ck_assert_int_eq(loop_write(fd, text, size), 0);
                        test_write_file(d.fd, "scripts/main.sh", "#!/bin/sh\necho ran\n", 0755);
                        x = skillctl_run(args, -EBADF, -EBADF, d.path);
                }
                CHECK_CASE(GROUP, bombs[i].name, "clear error, no crash (skillctl 125)",
                           r == bombs[i].expect && x.status == 125 && !strstr(x.out, "ran") &&
                                   !has_control_chars(x.err),
                           "parser %s, skillctl exit %d: %.*s",
                           r >= 1000 ? strsignal(r - 1000) : errno_name(-r), x.status,
                           (int) MIN(strcspn(x.err, "\n"), (size_t) 60), x.err);
        }
}
END_TEST

/* ---- JSON ---- */

static int write_temp(int dir_fd, const char *name, const char *data, size_t size) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_int_ge(fd, 0);
        return loop_write(fd, data, size);
}

START_TEST(test_json_inputs) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *deep = NULL, *huge = NULL, *deep_path = NULL, *huge_path = NULL,
                            *over_path = NULL, *error = NULL, *huge_out = NULL;
        const size_t depth = 100000, huge_len = 50 * 1024 * 1024;
        RunResult *res = NULL;
        int r;

        /* 100000 levels of arrays. */
        deep = malloc(2 * depth + 1);
        ck_assert_ptr_nonnull(deep);
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = '\0';
        ck_assert_int_eq(write_temp(t.base.fd, "deep.json", deep, 2 * depth), 0);
        deep_path = strdup_printf("%s/deep.json", t.base.path);
        {
                char *args[] = { t.skill_path, (char *) "--input-file",
                                 deep_path,    (char *) "--output-dir",
                                 t.out_path,   NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);

                /* The engine refuses it too, for callers that are not skillctl. */
                t.req.input_json = deep;
                r = sandbox_run(&t.req, &res, &error);
                CHECK_CASE(GROUP, "input JSON nested 100000 deep", "clear error (125), no crash",
                           x.status == 125 && strstr(x.err, "not valid JSON") && r == -EINVAL && !res &&
                                   access(t.out_path, F_OK) < 0,
                           "skillctl exit %d, engine %s", x.status, errno_name(-r));
        }

        /* 50 MB in one JSON string: handled, through every channel but the environment. */
        huge = malloc(huge_len + 3);
        ck_assert_ptr_nonnull(huge);
        huge[0] = '"';
        memset(huge + 1, 'j', huge_len);
        huge[huge_len + 1] = '"';
        huge[huge_len + 2] = '\0';
        ck_assert_int_eq(write_temp(t.base.fd, "huge.json", huge, huge_len + 2), 0);
        huge_path = strdup_printf("%s/huge.json", t.base.path);
        huge_out = strdup_printf("%s/huge", t.out.path);
        {
                char *args[] = { t.skill_path,
                                 (char *) "--script",
                                 (char *) "probe",
                                 (char *) "--input-file",
                                 huge_path,
                                 (char *) "--output-dir",
                                 huge_out,
                                 (char *) "-q",
                                 (char *) "--",
                                 (char *) "input",
                                 NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                _cleanup_free_ char *want =
                        strdup_printf("stdin %zu\nfile %zu\nenv -1\n", huge_len + 2, huge_len + 2);

                CHECK_CASE(GROUP, "input JSON: one 50M string", "runs; stdin, file: 50M; no env",
                           x.status == 0 && streq(x.out, want), "exit %d, %.*s", x.status,
                           (int) strcspn(x.out, "\n"), x.out);
        }

        /* Past the cap: a clear refusal before anything runs. */
        huge = realloc(huge, 65 * 1024 * 1024 + 3);
        ck_assert_ptr_nonnull(huge);
        memset(huge + 1, 'j', 65 * 1024 * 1024);
        huge[65 * 1024 * 1024 + 1] = '"';
        ck_assert_int_eq(write_temp(t.base.fd, "over.json", huge, 65 * 1024 * 1024 + 2), 0);
        over_path = strdup_printf("%s/over.json", t.base.path);
        {
                char *args[] = { t.skill_path, (char *) "--input-file",
                                 over_path,    (char *) "--output-dir",
                                 t.out_path,   NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);

                CHECK_CASE(GROUP, "input JSON of 65M (cap 64M)", "clear error (125)",
                           x.status == 125 && strstr(x.err, "larger than 64M") &&
                                   access(t.out_path, F_OK) < 0,
                           "exit %d: %.*s", x.status, (int) strcspn(x.err, "\n"), x.err);
        }

        /* The skill hands the same back: as output.json and as stdout. */
        t.req.input_json = NULL;
        test_write_file(t.skill_fd, "deep.json", deep, 0644);
        sec_run_set_script(&t, "cp /skill/deep.json /out/output.json");
        sec_run_go(&t);
        {
                bool ok = t.res->status == RUN_STATUS_SUCCEEDED && !t.res->output && t.res->output_error;

                sec_run_set_script(&t, "cat /skill/deep.json");
                ck_assert_int_eq(rm_rf_at(AT_FDCWD, t.out_path), 0);
                sec_run_go(&t);
                CHECK_CASE(GROUP, "output JSON nested 100000 deep (file, stdout)", "run ok, output null",
                           ok && t.res->status == RUN_STATUS_SUCCEEDED && !t.res->output &&
                                   t.res->stdout_stream.size == 2 * depth,
                           "status %s, output %s", status_name(t.res), t.res->output ? "PARSED" : "null");
        }
}
END_TEST

/* ---- names and output that would forge terminal and log lines ---- */

START_TEST(test_control_characters) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "printf '\\033[2J\\033]0;owned\\007}\\n{\"status\": \"succeeded\"}\\n'\n"
                "printf 'skillctl: succeeded, exit 0' >&2\n"
                "exit 3\n");
        /* YAML double quotes decode \e and \n into the real characters. */
        test_write_file(t.skill_fd, "SKILL.md",
                        "---\nname: \"evil\\e[2J\\e]0;pwned\\a\\nskillctl: succeeded, exit 0\"\n"
                        "description: \"line one\\nskillctl: warning: forged\\e[8m\"\n"
                        "entry_point: scripts/main.sh\n---\nBody.\n", 0644);

        {
                char *args[] = { t.skill_path, (char *) "--output-dir", t.out_path, NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                const char *last = strrchr(x.err, '\n'), *summary;

                /* run lints first: the name is invalid, so the skill never runs, and lint's words about
                 * it (which quote the name) are escaped, each on its own line. */
                ck_assert_ptr_nonnull(last);
                for (summary = last; summary > x.err && summary[-1] != '\n'; summary--)
                        ;
                CHECK_CASE(GROUP, "ESC/newlines in name+description; forged stderr",
                           "refused by lint, escaped",
                           x.status == 125 && startswith(summary, "skillctl: ") &&
                                   strstr(summary, "not run: the skill is invalid") &&
                                   !has_control_chars(x.err) && !strstr(x.err, "\nskillctl: succeeded"),
                           "exit %d, last line: %.*s", x.status,
                           (int) MIN((size_t) (last - summary), (size_t) 40), summary);
        }
        {
                char *args[] = { t.skill_path, (char *) "--json", (char *) "--output-dir", t.out_path,
                                 NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);

                CHECK_CASE(GROUP, "the same with --json: nothing forged on stdout", "exit 125, stdout empty",
                           x.status == 125 && isempty(x.out) && !has_control_chars(x.err),
                           "exit %d, stdout %zu bytes", x.status, strlen(strempty(x.out)));
        }
        {
                char *show[] = { (char *) test_env_path("SKILLCTL"), (char *) "skill", (char *) "show",
                                 t.skill_path, NULL };
                char *lint[] = { (char *) test_env_path("SKILLCTL"), (char *) "skill", (char *) "lint",
                                 t.skill_path, NULL };
                _cleanup_exec_ Exec s = exec_capture(show, -EBADF, -EBADF, NULL),
                                    l = exec_capture(lint, -EBADF, -EBADF, NULL);

                CHECK_CASE(GROUP, "the same through skill show / skill lint", "escaped (\\x1b, \\x0a)",
                           s.status == 0 && !has_control_chars(s.out) && !has_control_chars(s.err) &&
                                   strstr(s.out, "\\x1b") && !has_control_chars(l.out) &&
                                   !has_control_chars(l.err) && !strstr(s.out, "\nskillctl: succeeded"),
                           "show exit %d, lint exit %d", s.status, l.status);
        }
}
END_TEST

/* The same deception without control characters: bidirectional controls reorder what a terminal
 * or log viewer shows, U+2028 starts a new line in some. In a file name the loader refuses them;
 * in metadata and messages they come out as \uNNNN. */
START_TEST(test_layout_controls) {
        _cleanup_sec_run_ SecRun t = sec_run_new("echo ran");
        static const char *const raw[] = { "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x80\xa8" };
        size_t raw_seen = 0;

        test_write_file(t.skill_fd, "SKILL.md",
                        "---\nname: skill\n"
                        "description: \"Safe \u202eexe.txt\u202c helper \u2066x\u2069\u2028forged line\"\n"
                        "entry_point: scripts/main.sh\n---\nBody.\n", 0644);
        {
                char *show[] = { (char *) test_env_path("SKILLCTL"), (char *) "skill", (char *) "show",
                                 t.skill_path, NULL };
                _cleanup_exec_ Exec x = exec_capture(show, -EBADF, -EBADF, NULL);

                for (size_t i = 0; i < ELEMENTSOF(raw); i++)
                        raw_seen += strstr(x.out, raw[i]) || strstr(x.err, raw[i]);
                CHECK_CASE(GROUP, "U+202E, U+2066, U+2028 in a description: skill show",
                           "escaped (\\u202e, ...)",
                           x.status == 0 && raw_seen == 0 && strstr(x.out, "\\u202e") &&
                                   strstr(x.out, "\\u2066") && strstr(x.out, "\\u2028"),
                           "exit %d, %zu raw, %s", x.status, raw_seen,
                           strstr(x.out, "\\u202e") ? "\\u202e shown" : "NOT ESCAPED");
        }

        /* A file of the skill folder whose name is reversed on screen: refused, named escaped. */
        test_write_file(t.skill_fd, "SKILL.md",
                        "---\nname: skill\ndescription: Plain.\nentry_point: scripts/main.sh\n---\nB.\n",
                        0644);
        test_write_file(t.skill_fd, "scripts/invoice_\xe2\x80\xaehs.exe", "x", 0644);
        {
                char *args[] = { t.skill_path, (char *) "--output-dir", t.out_path, NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);

                raw_seen = 0;
                for (size_t i = 0; i < ELEMENTSOF(raw); i++)
                        raw_seen += strstr(x.out, raw[i]) || strstr(x.err, raw[i]);
                CHECK_CASE(GROUP, "U+202E in a file name of a skill folder", "refused (125), escaped",
                           x.status == 125 && raw_seen == 0 && strstr(x.err, "\\u202e") &&
                                   strstr(x.err, "bidirectional") && !strstr(x.out, "ran") &&
                                   access(t.out_path, F_OK) < 0,
                           "exit %d: %.*s", x.status, (int) strcspn(x.err, "\n"), x.err);
        }
}
END_TEST

/* Every file below dir whose mode has a bit of mask set; 0 when none. */
static size_t modes_with(int dir_fd, mode_t mask, char **ret_first) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fdopendir(fd);
        struct dirent *de;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        TAKE_FD(fd);
        while ((de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                ck_assert_int_eq(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
                if (st.st_mode & mask) {
                        n++;
                        if (!*ret_first)
                                *ret_first = strdup_printf("%s %04o", de->d_name, st.st_mode & 07777);
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = openat(dirfd(d), de->d_name,
                                                         O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                        ck_assert_int_ge(sub, 0);
                        n += modes_with(sub, mask, ret_first);
                }
        }
        closedir(d);
        return n;
}

/* With umask 077 a user's files are theirs alone: the skill echoes its (private) input to stdout,
 * stderr, output.json and an artifact, into an output directory that already exists (0755), and
 * no file skillctl writes there may be readable by others. `skillctl skill package` the same. */
START_TEST(test_output_umask) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "cat \"$SKILL_INPUT_FILE\"; cat \"$SKILL_INPUT_FILE\" >&2\n"
                "cp \"$SKILL_INPUT_FILE\" /out/output.json; cp \"$SKILL_INPUT_FILE\" /out/files/copy.json\n");
        _cleanup_free_ char *first = NULL, *pack = strdup_printf("%s/skill.skill", t.base.path);
        char *args[] = { t.skill_path, (char *) "--input", (char *) "{\"secret\": 1}", (char *) "--output-dir",
                         t.out_path, NULL };
        char *pack_args[] = { (char *) test_env_path("SKILLCTL"), (char *) "skill", (char *) "package",
                              t.skill_path, (char *) "-o", pack, NULL };
        _cleanup_close_ int out_fd = -EBADF;
        struct stat st;
        size_t open_files;
        mode_t old;
        int pack_status;

        ck_assert_int_eq(mkdir(t.out_path, 0755), 0);
        old = umask(077);
        {
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                _cleanup_exec_ Exec p = exec_capture(pack_args, -EBADF, -EBADF, NULL);

                umask(old);
                out_fd = open(t.out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_ge(out_fd, 0);
                open_files = modes_with(out_fd, 077, &first);
                pack_status = p.status;
                CHECK_CASE(GROUP, "umask 077, existing output dir: logs, result, artifacts",
                           "no file readable by others",
                           x.status == 0 && open_files == 0 && faccessat(out_fd, "stdout.log", F_OK, 0) == 0 &&
                                   faccessat(out_fd, "result.json", F_OK, 0) == 0,
                           "exit %d, %zu open to others%s%s", x.status, open_files, first ? ", first " : "",
                           strempty(first));
        }
        CHECK_CASE(GROUP, "umask 077: skill package's archive", "0600",
                   pack_status == 0 && stat(pack, &st) == 0 && (st.st_mode & 0777) == 0600,
                   "exit %d, mode %04o", pack_status, pack_status == 0 ? st.st_mode & 0777 : 0);
}
END_TEST

/* A FIFO where skillctl expects a file: opening it for reading would wait for a writer forever.
 * As --file, --input-file and the skill itself, skillctl must refuse at once, saying why. A
 * timeout(1) around it turns a hang into a visible failure instead of a stuck suite. */
START_TEST(test_fifo_paths) {
        _cleanup_sec_run_ SecRun t = sec_run_new("echo ran");
        _cleanup_free_ char *fifo = strdup_printf("%s/fifo", t.base.path), *file = NULL;
        static const char *const forms[] = { "--file", "--input-file", "skill" };
        size_t refused = 0;
        _cleanup_free_ char *observed = strdup("");

        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        file = strdup_printf("data=%s", fifo);
        for (size_t i = 0; i < ELEMENTSOF(forms); i++) {
                char *argv[16] = { (char *) "/usr/bin/timeout", (char *) "-s", (char *) "KILL", (char *) "20",
                                   (char *) test_env_path("SKILLCTL"), (char *) "run", (char *) "--local",
                                   (char *) "--output-dir", t.out_path };
                size_t n = 9;
                char *more;

                if (i == 0) {
                        argv[n++] = (char *) "--file";
                        argv[n++] = file;
                } else if (i == 1) {
                        argv[n++] = (char *) "--input-file";
                        argv[n++] = fifo;
                }
                argv[n++] = i == 2 ? fifo : t.skill_path;
                {
                        _cleanup_exec_ Exec x = exec_capture(argv, -EBADF, -EBADF, NULL);
                        bool ok = x.status != 137 && x.status != 0 && strstr(x.err, "fifo") &&
                                  (strstr(x.err, "not a regular file") || strstr(x.err, "not a directory") ||
                                   strstr(x.err, "Not a directory"));

                        refused += ok;
                        more = strdup_printf("%s%s%s exit %d", observed, i ? ", " : "", forms[i], x.status);
                        ck_assert_ptr_nonnull(more);
                        free(observed);
                        observed = more;
                }
        }
        CHECK_CASE(GROUP, "a FIFO as --file, --input-file, the skill", "refused at once, saying why",
                   refused == ELEMENTSOF(forms) && faccessat(AT_FDCWD, t.out_path, F_OK, 0) < 0, "%s",
                   observed);
}
END_TEST

/* Runs "skillctl run --local SKILL --output-dir OUT ARGS..." on a pty in raw mode, as a user's
 * terminal would have it; returns what reached the terminal and the exit status. */
static char *skillctl_on_pty(SecRun *t, char **extra, int *ret_status) {
        _cleanup_close_ int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), slave = -EBADF;
        _cleanup_free_ char *screen = NULL;
        size_t size = 0;
        struct termios tio;
        int status;
        char *pts;
        pid_t pid;

        ck_assert_int_ge(master, 0);
        ck_assert_int_eq(grantpt(master), 0);
        ck_assert_int_eq(unlockpt(master), 0);
        pts = ptsname(master);
        ck_assert_ptr_nonnull(pts);
        slave = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(slave, 0);
        ck_assert_int_eq(tcgetattr(slave, &tio), 0);
        cfmakeraw(&tio);
        ck_assert_int_eq(tcsetattr(slave, TCSANOW, &tio), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char *argv[16] = { (char *) test_env_path("SKILLCTL"), (char *) "run", (char *) "--local",
                                   t->skill_path, (char *) "--output-dir", t->out_path };
                size_t n = 6;
                int tty;

                for (size_t i = 0; extra && extra[i] && n < 15; i++)
                        argv[n++] = extra[i];
                if (setsid() < 0)
                        _exit(126);
                tty = open(pts, O_RDWR);
                if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) < 0 || dup2(tty, 0) < 0 || dup2(tty, 1) < 0 ||
                    dup2(tty, 2) < 0)
                        _exit(126);
                execv(argv[0], argv);
                _exit(127);
        }
        /* Read while it runs: the pty's buffer is small. */
        ck_assert_int_eq(fcntl(master, F_SETFL, O_NONBLOCK), 0);
        for (;;) {
                char buf[4096];
                ssize_t k = read(master, buf, sizeof(buf));
                pid_t w;

                if (k > 0) {
                        char *more = realloc(screen, size + k + 1);

                        ck_assert_ptr_nonnull(more);
                        screen = more;
                        memcpy(screen + size, buf, k);
                        size += k;
                        screen[size] = '\0';
                        continue;
                }
                w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
                (void) usleep(10 * 1000);
        }
        for (;;) {
                char buf[4096];
                ssize_t k = read(master, buf, sizeof(buf));
                char *more;

                if (k <= 0)
                        break;
                more = realloc(screen, size + k + 1);
                ck_assert_ptr_nonnull(more);
                screen = more;
                memcpy(screen + size, buf, k);
                size += k;
                screen[size] = '\0';
        }
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return screen ? TAKE_PTR(screen) : strdup("");
}

/* The skill writes what terminals act on: OSC 52 (the clipboard), OSC 0 (the title), ESC[6n (the
 * terminal answers by typing into the shell after skillctl exits), ESC(0 (line drawing for what
 * follows), colours, 8-bit CSI (0x9b, and U+009B), \r, DEL, a bell, invalid UTF-8 and a bidi
 * override, on stdout and stderr. On the caller's terminal none of it may arrive as is; valid
 * UTF-8 text stays readable. The logs keep the bytes. */
START_TEST(test_terminal_sequences) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "printf '\\033]52;c;ZWNobyBvd25lZA==\\007\\033]0;owned\\007\\033[6n\\033(0\\033[31mred'\n"
                "printf '\\233\\302\\233 cr\\rhidden\\177\\007 bad\\377\\300 rlo\\342\\200\\256 caf\\303\\251\\n'\n"
                "printf '\\033]52;c;c3RkZXJy\\007\\033[2J\\n' >&2\n");
        _cleanup_free_ char *screen = NULL, *log = NULL;
        const char *summary;
        size_t raw = 0;
        int status;

        screen = skillctl_on_pty(&t, NULL, &status);
        /* skillctl's own attribute reset before its summary is not the skill's. */
        summary = strstr(screen, "skillctl: succeeded");
        if (summary && summary - screen >= 5 && startswith(summary - 5, "\x1b[0m\n"))
                summary -= 5;
        else if (summary && summary - screen >= 4 && startswith(summary - 4, "\x1b[0m"))
                summary -= 4;
        for (const char *p = screen; summary && p < summary; p++) {
                unsigned char c = (unsigned char) *p;

                raw += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0x9b ||
                       (c == 0xc2 && (unsigned char) p[1] == 0x9b) || c == 0xff || c == 0xc0 ||
                       (c == 0xe2 && (unsigned char) p[1] == 0x80 && (unsigned char) p[2] == 0xae);
        }
        {
                _cleanup_close_ int out = open(t.out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                ck_assert_int_ge(out, 0);
                ck_assert_int_eq(read_full_file_at(out, "stdout.log", 1 << 20, false, &log, NULL), 0);
        }
        CHECK_CASE(GROUP, "OSC 52/0, ESC[6n, ESC(0, 8-bit CSI, \\r, DEL, bad UTF-8 to a tty",
                   "escaped on the terminal; UTF-8 text kept; log byte-exact",
                   status == 0 && summary && raw == 0 && strstr(screen, "\\x1b]52;c;") &&
                           strstr(screen, "\\x9b\\u009b cr\\x0dhidden\\x7f\\x07") && strstr(screen, "caf\xc3\xa9") &&
                           strstr(screen, "\\u202e") && strstr(log, "\x1b]52;c;ZWNobyBvd25lZA==\x07"),
                   "exit %d, %zu raw controls before the summary, log %s", status, raw,
                   log && strstr(log, "\x1b]52") ? "byte-exact" : "ALTERED");
}
END_TEST

START_TEST(test_dash_arguments) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *evil_dir = NULL, *py_out = NULL;

        test_write_file(t.skill_fd, "scripts/py.py", "import json, sys\nprint(json.dumps(sys.argv[1:]))\n",
                        0755);
        evil_dir = strdup_printf("%s/evil-out", t.base.path);
        py_out = strdup_printf("%s/py", t.out.path);
        {
                char *args[] = { t.skill_path,
                                 (char *) "--script",
                                 (char *) "scripts/py.py",
                                 (char *) "--output-dir",
                                 py_out,
                                 (char *) "-q",
                                 (char *) "--",
                                 (char *) "-c",
                                 (char *) "open('/out/files/pwned', 'w')",
                                 (char *) "-m",
                                 (char *) "http.server",
                                 NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                _cleanup_free_ char *pwned = strdup_printf("%s/files/pwned", py_out);

                CHECK_CASE(GROUP, "python skill: -- -c CODE -m MODULE", "argv of the script, not python's",
                           x.status == 0 &&
                                   streq(x.out, "[\"-c\", \"open('/out/files/pwned', 'w')\", \"-m\", "
                                                "\"http.server\"]\n") &&
                                   access(pwned, F_OK) < 0,
                           "exit %d, %.*s", x.status, (int) strcspn(x.out, "\n"), x.out);
        }
        sec_run_set_script(&t, "printf '[%s]' \"$@\"; echo");
        {
                char *args[] = { t.skill_path,
                                 (char *) "--output-dir",
                                 t.out_path,
                                 (char *) "-q",
                                 (char *) "--",
                                 (char *) "-c",
                                 (char *) "touch /out/files/pwned",
                                 (char *) "--norc",
                                 NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                _cleanup_free_ char *pwned = strdup_printf("%s/files/pwned", t.out_path);

                CHECK_CASE(GROUP, "bash skill: -- -c CODE --norc", "argv of the script, not bash's",
                           x.status == 0 && streq(x.out, "[-c][touch /out/files/pwned][--norc]\n") &&
                                   access(pwned, F_OK) < 0,
                           "exit %d, %.*s", x.status, (int) strcspn(x.out, "\n"), x.out);
        }
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, t.out_path), 0);
        {
                char *args[] = { t.skill_path,
                                 (char *) "--output-dir",
                                 t.out_path,
                                 (char *) "-q",
                                 (char *) "--",
                                 (char *) "--output-dir",
                                 evil_dir,
                                 (char *) "--json",
                                 (char *) "--input-file",
                                 (char *) "/etc/shadow",
                                 (char *) "--env=LD_PRELOAD=/x.so",
                                 NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);
                _cleanup_free_ char *want =
                        strdup_printf("[--output-dir][%s][--json][--input-file][/etc/shadow]"
                                      "[--env=LD_PRELOAD=/x.so]\n",
                                      evil_dir);

                CHECK_CASE(GROUP, "skillctl options after --", "reach the script; not taken by skillctl",
                           x.status == 0 && streq(x.out, want) && access(evil_dir, F_OK) < 0,
                           "exit %d, %s", x.status, access(evil_dir, F_OK) == 0 ? "EVIL DIR CREATED" :
                           streq(x.out, want) ? "passed through" : "not passed through");
        }
}
END_TEST

TCase *security_tcase_inputs(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_archive_corpus);
        tcase_add_test(tc, test_yaml_bombs);
        tcase_add_test(tc, test_json_inputs);
        tcase_add_test(tc, test_control_characters);
        tcase_add_test(tc, test_layout_controls);
        tcase_add_test(tc, test_dash_arguments);
        tcase_add_test(tc, test_output_umask);
        tcase_add_test(tc, test_fifo_paths);
        tcase_add_test(tc, test_terminal_sequences);
        return tc;
}
