/* Tests for the loader: the path rules, zip extraction against a corpus of hostile archives the
 * tests build themselves, the directory walk, the content hash, packaging and skill sources.
 * Every refused archive is extracted into scratch/target, and afterwards scratch must hold the
 * empty target and nothing else: refusing is not enough, nothing may have been written. */
#include <dirent.h>
#include <locale.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "loader.h"
#include "zip-builder.h"
#include "zip-directory.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static int cmp_strp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

/* The entries of a directory below dir_fd, sorted, joined by spaces. */
static char *list_dir(int dir_fd, const char *path) {
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *de;
        size_t len = 1;
        char *s;
        DIR *d;
        int fd;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        d = fdopendir(fd);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        ck_assert_int_eq(strv_extend(&names, de->d_name), 0);
        closedir(d);
        if (names)
                qsort(names, strv_length(names), sizeof(char *), cmp_strp);
        STRV_FOREACH(n, names)
                len += strlen(*n) + 1;
        s = calloc(1, len);
        ck_assert_ptr_nonnull(s);
        STRV_FOREACH(n, names) {
                if (n != names)
                        strcat(s, " ");
                strcat(s, *n);
        }
        return s;
}

static char *read_file_at(int dir_fd, const char *path) {
        char *s = NULL;

        ck_assert_int_eq(read_full_file_at(dir_fd, path, 64 * 1024 * 1024, true, &s, NULL), 0);
        return s;
}

static mode_t mode_at(int dir_fd, const char *path) {
        struct stat st;

        ck_assert_int_eq(fstatat(dir_fd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
        return st.st_mode;
}

static void assert_absent_at(int dir_fd, const char *path) {
        ck_assert_msg(faccessat(dir_fd, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT,
                      "%s exists", path);
}

/* error is passed by reference so that it is read after the call that fills it. */
static void assert_error(int r, char **error_ref, const char *entry, const char *reason) {
        const char *error = *error_ref;

        ck_assert_msg(r < 0, "expected a refusal, got %d", r);
        ck_assert_ptr_nonnull(error);
        if (entry)
                ck_assert_msg(startswith(error, entry) && error[strlen(entry)] == ':',
                              "message \"%s\" does not name \"%s\"", error, entry);
        ck_assert_msg(strstr(error, reason), "message \"%s\" lacks \"%s\"", error, reason);
}

/* A scratch directory holding an empty "target" to extract into. */
typedef struct Case {
        TestDir scratch;
        int target_fd;
        char *error;
        char *top;
} Case;

static void case_done(Case *c) {
        free(c->error);
        free(c->top);
        c->target_fd = safe_close(c->target_fd);
        test_dir_done(&c->scratch);
}
#define _cleanup_case_ _cleanup_(case_done)

static Case case_new(void) {
        Case c = { .target_fd = -EBADF };

        c.scratch = test_dir_new();
        ck_assert_int_eq(mkdirat(c.scratch.fd, "target", 0755), 0);
        c.target_fd = openat(c.scratch.fd, "target", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(c.target_fd, 0);
        return c;
}

static int case_extract(Case *c, const Bytes *zip, const LoaderLimits *limits) {
        _cleanup_close_ int fd = bytes_memfd(zip);

        free(c->error);
        free(c->top);
        c->error = c->top = NULL;
        return loader_extract_zip(fd, c->target_fd, limits, &c->top, &c->error);
}

/* The refusal names the entry and the reason, and scratch holds the empty target only. */
static void case_assert_refused(Case *c, int r, const char *entry, const char *reason) {
        _cleanup_free_ char *outside = NULL, *inside = NULL;

        assert_error(r, &c->error, entry, reason);
        ck_assert_ptr_null(c->top);
        outside = list_dir(c->scratch.fd, ".");
        inside = list_dir(c->scratch.fd, "target");
        ck_assert_str_eq(outside, "target");
        ck_assert_str_eq(inside, "");
        ck_assert(uselocale((locale_t) 0) == LC_GLOBAL_LOCALE);
}

/* Builds a zip from specs, extracts it and expects a refusal. */
static void refuse_zip(const ZipSpec *specs, size_t n, const LoaderLimits *limits, const char *entry,
                       const char *reason) {
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};

        zip_build(specs, n, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, limits), entry, reason);
}

#define FILE_SPEC(n, text) { .name = (n), .mode = S_IFREG | 0644, .data = (text), .size = strlen(text) }
#define DIR_SPEC(n) { .name = (n), .mode = S_IFDIR | 0755 }

/* ---- path rules ----------------------------------------------------------------------- */

START_TEST(test_check_path) {
        static const char * const good[] = {
                "a", "SKILL.md", "scripts/main.py", "a/b/c", ("r\xc3\xa9" "f\xc3\xa9rences.md"), ".hidden",
                "a..b", "...", "x/.y", "\xf0\x9f\x98\x80",
        };
        static const struct {
                const char *path;
                const char *reason;
        } bad[] = {
                { "", "empty" },
                { "/a", "absolute" },
                { "/", "absolute" },
                { "..", "\"..\"" },
                { "a/../b", "\"..\"" },
                { "../x", "\"..\"" },
                { ".", "\".\"" },
                { "./a", "\".\"" },
                { "a/.", "\".\"" },
                { "a//b", "empty path components" },
                { "a/", "empty path components" },
                { "a\\b", "backslashes" },
                { "..\\x", "backslashes" },
                { "a\nb", "control characters" },
                { "a\x1b[31m", "control characters" },
                { "a\x7f", "control characters" },
                { "\xff", "UTF-8" },
                { "\xc0\xaf", "UTF-8" },                /* overlong "/" */
                { "\xed\xa0\x80", "UTF-8" },            /* surrogate */
                { "invoice_\xe2\x80\xaegnp.sh", "bidirectional" },  /* U+202E, RLO */
                { "scripts/\xe2\x81\xa6x", "bidirectional" },        /* U+2066, LRI */
                { "a\xe2\x80\x8f", "bidirectional" },                /* U+200F, RLM */
                { "\xd8\x9c/a", "bidirectional" },                    /* U+061C */
                { "a\xe2\x80\xa8" "b", "line separator" },              /* U+2028 */
        };
        char deep[33 * 2 + 1] = {}, long_path[1100] = {}, long_name[300] = {};

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                _cleanup_free_ char *error = NULL;

                ck_assert_msg(loader_check_path(good[i], NULL, &error) == 0, "%s: %s", good[i],
                              strna(error));
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *error = NULL;

                assert_error(loader_check_path(bad[i].path, NULL, &error), &error, NULL, bad[i].reason);
        }

        /* 32 levels are fine, 33 are not. */
        for (unsigned i = 0; i < 32; i++)
                strcat(deep, i == 0 ? "d" : "/d");
        ck_assert_int_eq(loader_check_path(deep, NULL, NULL), 0);
        strcat(deep, "/d");
        {
                _cleanup_free_ char *error = NULL;
                assert_error(loader_check_path(deep, NULL, &error), &error, deep, "deeper than 32");
        }

        /* 1024 bytes are fine, 1025 are not. */
        memset(long_path, 'a', 1024);
        for (unsigned i = 100; i < 1024; i += 101)
                long_path[i] = '/';
        ck_assert_int_eq(loader_check_path(long_path, NULL, NULL), 0);
        long_path[1024] = 'b';
        {
                _cleanup_free_ char *error = NULL;
                assert_error(loader_check_path(long_path, NULL, &error), &error, NULL, "longer than 1024");
        }

        memset(long_name, 'n', 256);
        {
                _cleanup_free_ char *error = NULL;
                assert_error(loader_check_path(long_name, NULL, &error), &error, NULL, "longer than 255");
        }
}
END_TEST

START_TEST(test_excluded) {
        ck_assert(skill_path_is_excluded("__pycache__"));
        ck_assert(skill_path_is_excluded("scripts/__pycache__/x.cpython-311.pyc"));
        ck_assert(skill_path_is_excluded("x.pyc"));
        ck_assert(skill_path_is_excluded("a/b/x.pyc"));
        ck_assert(skill_path_is_excluded(".DS_Store"));
        ck_assert(skill_path_is_excluded("a/.DS_Store"));
        ck_assert(!skill_path_is_excluded("SKILL.md"));
        ck_assert(!skill_path_is_excluded("pyc"));
        ck_assert(!skill_path_is_excluded("a.pyc.txt"));
        /* Vendored packages are code the skill runs. */
        ck_assert(!skill_path_is_excluded("node_modules"));
        ck_assert(!skill_path_is_excluded("a/node_modules/b/c.js"));
        ck_assert(!skill_path_is_excluded("my__pycache__/a"));
        ck_assert(!skill_path_is_excluded("DS_Store"));
}
END_TEST

/* ---- zips that load --------------------------------------------------------------------- */

START_TEST(test_zip_top_folder) {
        static const char md[] = "---\nname: my-skill\ndescription: x\n---\nBody\n";
        const ZipSpec specs[] = {
                FILE_SPEC("my-skill/SKILL.md", md),
                { .name = "my-skill/scripts/main.py", .mode = S_IFREG | 0755, .data = "print(1)\n",
                  .size = 9 },
                FILE_SPEC("my-skill/references/r\xc3\xa9" "f.md", "ref\n"),
        };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *root = NULL, *got = NULL;

        zip_build(specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_str_eq(c.top, "my-skill");
        root = list_dir(c.target_fd, ".");
        ck_assert_str_eq(root, "SKILL.md references scripts");
        got = read_file_at(c.target_fd, "SKILL.md");
        ck_assert_str_eq(got, md);
        ck_assert_int_eq(mode_at(c.target_fd, "SKILL.md"), S_IFREG | 0644);
        ck_assert_int_eq(mode_at(c.target_fd, "scripts/main.py"), S_IFREG | 0755);
        ck_assert_int_eq(mode_at(c.target_fd, "scripts"), S_IFDIR | 0755);
        ck_assert_int_eq(mode_at(c.target_fd, "references/r\xc3\xa9" "f.md"), S_IFREG | 0644);
        /* Reading UTF-8 names switched locales for a moment only. */
        ck_assert(uselocale((locale_t) 0) == LC_GLOBAL_LOCALE);
}
END_TEST

START_TEST(test_zip_top_folder_with_dir_entries) {
        /* What libarchive and zip(1) write: directory entries too, lower-case skill.md. */
        const ArSpec specs[] = {
                { "tool/", AE_IFDIR, 0755, NULL, false },
                { "tool/skill.md", AE_IFREG, 0644, "---\nname: tool\n---\n", false },
                { "tool/empty/", AE_IFDIR, 0755, NULL, false },
        };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *root = NULL;

        ar_build(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_str_eq(c.top, "tool");
        root = list_dir(c.target_fd, ".");
        ck_assert_str_eq(root, "empty skill.md");
}
END_TEST

START_TEST(test_zip_flat) {
        const ZipSpec specs[] = {
                FILE_SPEC("SKILL.md", "---\nname: flat\n---\n"),
                { .name = "scripts/x.sh", .mode = S_IFREG | 0700, .data = "echo\n", .size = 5,
                  .deflate = true },
        };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *root = NULL, *got = NULL;

        zip_build(specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_ptr_null(c.top);
        root = list_dir(c.target_fd, ".");
        ck_assert_str_eq(root, "SKILL.md scripts");
        got = read_file_at(c.target_fd, "scripts/x.sh");
        ck_assert_str_eq(got, "echo\n");
        ck_assert_int_eq(mode_at(c.target_fd, "scripts/x.sh"), S_IFREG | 0755);
}
END_TEST

START_TEST(test_zip_folder_without_skill_md) {
        /* One folder, but no SKILL.md in it: not the <name>/ layout, so nothing is stripped. */
        const ZipSpec specs[] = { FILE_SPEC("docs/a.md", "a\n"), FILE_SPEC("docs/b.md", "b\n") };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *root = NULL;

        zip_build(specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_ptr_null(c.top);
        root = list_dir(c.target_fd, ".");
        ck_assert_str_eq(root, "docs");
}
END_TEST

START_TEST(test_zip_modes_normalized) {
        /* setuid, setgid and sticky bits are dropped; only "executable or not" survives. */
        const ZipSpec specs[] = {
                { .name = "suid", .mode = S_IFREG | 04755, .data = "x", .size = 1 },
                { .name = "sgid", .mode = S_IFREG | 02644, .data = "x", .size = 1 },
                { .name = "world", .mode = S_IFREG | 0666, .data = "x", .size = 1 },
                { .name = "other-exec", .mode = S_IFREG | 0601, .data = "x", .size = 1 },
                { .name = "sticky/", .mode = S_IFDIR | 01777 },
                { .name = "dos.txt", .mode = 0, .data = "x", .size = 1 },
                { .name = "dosdir/", .mode = 0 },
        };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};

        zip_build(specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_int_eq(mode_at(c.target_fd, "suid"), S_IFREG | 0755);
        ck_assert_int_eq(mode_at(c.target_fd, "sgid"), S_IFREG | 0644);
        ck_assert_int_eq(mode_at(c.target_fd, "world"), S_IFREG | 0644);
        ck_assert_int_eq(mode_at(c.target_fd, "other-exec"), S_IFREG | 0755);
        ck_assert_int_eq(mode_at(c.target_fd, "sticky"), S_IFDIR | 0755);
        ck_assert_int_eq(mode_at(c.target_fd, "dos.txt"), S_IFREG | 0644);
        ck_assert_int_eq(mode_at(c.target_fd, "dosdir"), S_IFDIR | 0755);
}
END_TEST

START_TEST(test_zip_hardlink_entry) {
        /* Zip cannot carry hard links: libarchive writes one as an empty regular file, and it must
         * come out as exactly that, not as a link to anything. */
        const ArSpec specs[] = {
                { "a", AE_IFREG, 0644, "secret\n", false },
                { "b", AE_IFREG, 0644, "a", true },
        };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        struct stat a, b;

        ar_build(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, specs, ELEMENTSOF(specs), &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_int_eq(fstatat(c.target_fd, "a", &a, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_int_eq(fstatat(c.target_fd, "b", &b, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISREG(b.st_mode));
        ck_assert_int_eq(b.st_nlink, 1);
        ck_assert_int_eq(a.st_nlink, 1);
        ck_assert(a.st_ino != b.st_ino);
        ck_assert_int_eq(b.st_size, 0);
}
END_TEST

START_TEST(test_zip_depth_boundary) {
        /* 32 levels below the top folder load, as the same folder on disk would. */
        char deep[200] = "top";
        ZipSpec specs[2] = { FILE_SPEC("top/SKILL.md", "x") };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};

        for (unsigned i = 0; i < 31; i++)
                strcat(deep, "/d");
        strcat(deep, "/f");
        specs[1] = (ZipSpec) FILE_SPEC(deep, "deep");
        zip_build(specs, 2, &zip);
        ck_assert_msg(case_extract(&c, &zip, NULL) == 0, "%s", strna(c.error));
        ck_assert_str_eq(c.top, "top");
}
END_TEST

START_TEST(test_zip_target_not_empty) {
        const ZipSpec specs[] = { FILE_SPEC("SKILL.md", "x") };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *kept = NULL;

        test_write_file(c.target_fd, "mine", "keep me", 0644);
        zip_build(specs, 1, &zip);
        ck_assert_int_eq(case_extract(&c, &zip, NULL), -ENOTEMPTY);
        kept = read_file_at(c.target_fd, "mine");
        ck_assert_str_eq(kept, "keep me");
        assert_absent_at(c.target_fd, "SKILL.md");
}
END_TEST

/* ---- the hostile corpus ------------------------------------------------------------------ */

START_TEST(test_evil_zip_slip) {
        const ZipSpec one[] = { FILE_SPEC("../x", "escaped") };
        const ZipSpec two[] = { FILE_SPEC("ok", "fine"), FILE_SPEC("a/../../x", "escaped") };
        const ZipSpec top[] = { FILE_SPEC("s/SKILL.md", "x"), FILE_SPEC("s/../../x", "escaped") };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *far = NULL, *far_path = NULL;
        const char *base = strrchr(c.scratch.path, '/') + 1;
        int r;

        zip_build(one, 1, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "../x", "\"..\" components are not allowed");
        assert_absent_at(c.scratch.fd, "x");
        bytes_done(&zip);

        zip_build(two, 2, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "a/../../x", "\"..\"");
        assert_absent_at(c.scratch.fd, "x");
        bytes_done(&zip);

        zip_build(top, 2, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "s/../../x", "\"..\"");
        assert_absent_at(c.scratch.fd, "x");
        bytes_done(&zip);

        /* Two levels up from the target is the scratch directory's parent. */
        far = strdup_printf("../../%s-escaped", base);
        far_path = strdup_printf("%s-escaped", c.scratch.path);
        {
                const ZipSpec up[] = { FILE_SPEC(far, "escaped") };

                zip_build(up, 1, &zip);
                r = case_extract(&c, &zip, NULL);
        }
        case_assert_refused(&c, r, far, "\"..\"");
        assert_absent_at(AT_FDCWD, far_path);
}
END_TEST

START_TEST(test_evil_absolute) {
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_free_ char *abs = strdup_printf("%s/abs", c.scratch.path);
        const ZipSpec specs[] = { FILE_SPEC(abs, "escaped") };
        const ZipSpec root[] = { DIR_SPEC("/") };

        zip_build(specs, 1, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), abs, "absolute paths are not allowed");
        assert_absent_at(c.scratch.fd, "abs");
        bytes_done(&zip);

        zip_build(root, 1, &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "/", "absolute");
}
END_TEST

START_TEST(test_evil_symlink) {
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {};
        /* A link out of the target, then a file written "through" it. */
        const ZipSpec specs[] = {
                { .name = "link", .mode = S_IFLNK | 0777, .data = c.scratch.path,
                  .size = strlen(c.scratch.path) },
                FILE_SPEC("link/evil", "escaped"),
        };
        const ArSpec ar[] = {
                { "SKILL.md", AE_IFREG, 0644, "x", false },
                { "etc", AE_IFLNK, 0777, "/etc", false },
        };

        zip_build(specs, ELEMENTSOF(specs), &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "link", "symlinks are not allowed");
        assert_absent_at(c.scratch.fd, "evil");
        bytes_done(&zip);

        /* The same as libarchive (and Info-ZIP) write symlinks. */
        ar_build(ARCHIVE_FORMAT_ZIP, ARCHIVE_FILTER_NONE, ar, ELEMENTSOF(ar), &zip);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), "etc", "symlinks are not allowed");
}
END_TEST

START_TEST(test_evil_special_files) {
        static const struct {
                mode_t mode;
                const char *reason;
        } kinds[] = {
                { S_IFCHR | 0666, "device nodes are not allowed" },
                { S_IFBLK | 0660, "device nodes are not allowed" },
                { S_IFIFO | 0644, "FIFOs are not allowed" },           /* libarchive calls it a file */
                { S_IFSOCK | 0644, "sockets are not allowed" },
        };

        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                const ZipSpec specs[] = {
                        FILE_SPEC("SKILL.md", "x"),
                        { .name = "special", .mode = kinds[i].mode },
                };

                refuse_zip(specs, ELEMENTSOF(specs), NULL, "special", kinds[i].reason);
        }
}
END_TEST

START_TEST(test_evil_duplicates) {
        const ZipSpec same[] = { FILE_SPEC("SKILL.md", "good"), FILE_SPEC("SKILL.md", "evil") };
        const ZipSpec file_dir[] = { FILE_SPEC("a", "file"), DIR_SPEC("a/") };
        const ZipSpec below_file[] = { FILE_SPEC("a", "file"), FILE_SPEC("a/b", "below") };
        const ZipSpec dir_twice[] = { DIR_SPEC("d/"), DIR_SPEC("d/") };

        refuse_zip(same, 2, NULL, "SKILL.md", "duplicate entry");
        refuse_zip(file_dir, 2, NULL, "a/", "duplicate entry (also a)");
        refuse_zip(below_file, 2, NULL, "a/b", "is below a, which is a file");
        refuse_zip(dir_twice, 2, NULL, "d/", "duplicate entry");
}
END_TEST

START_TEST(test_evil_names) {
        const ZipSpec nul[] = {
                FILE_SPEC("SKILL.md", "x"),
                { .name = "ab\0../x", .name_len = 7, .mode = S_IFREG | 0644 },
        };
        const ZipSpec newline[] = { FILE_SPEC("a\nb", "x") };
        const ZipSpec escape[] = { FILE_SPEC("a\x1b[2J", "x") };
        const ZipSpec backslash[] = { FILE_SPEC("..\\x", "x") };
        const ZipSpec backslash2[] = { FILE_SPEC("scripts\\run.py", "x") };
        const ZipSpec utf8[] = { FILE_SPEC("h\xffllo", "x") };
        const ZipSpec overlong[] = { FILE_SPEC("a\xc0\xae\xc0\xae/x", "x") };
        const ZipSpec empty_component[] = { FILE_SPEC("a//b", "x") };

        refuse_zip(nul, 2, NULL, "ab\\x00../x", "NUL");
        refuse_zip(newline, 1, NULL, "a\\x0ab", "control characters are not allowed");
        refuse_zip(escape, 1, NULL, "a\\x1b[2J", "control characters are not allowed");
        refuse_zip(backslash, 1, NULL, "..\\\\x", "backslashes are not allowed");
        refuse_zip(backslash2, 1, NULL, "scripts\\\\run.py", "backslashes are not allowed");
        refuse_zip(utf8, 1, NULL, "h\\xffllo", "valid UTF-8");
        refuse_zip(overlong, 1, NULL, "a\\xc0\\xae\\xc0\\xae/x", "valid UTF-8");
        refuse_zip(empty_component, 1, NULL, "a//b", "empty path components");
}
END_TEST

START_TEST(test_evil_deep) {
        char deep[200] = "d";
        char top_deep[200] = "top";

        for (unsigned i = 1; i < 32; i++)
                strcat(deep, "/d");
        strcat(deep, "/f");             /* 33 components */
        {
                const ZipSpec specs[] = { FILE_SPEC(deep, "x") };
                refuse_zip(specs, 1, NULL, deep, "nested deeper than 32 levels");
        }

        /* Below a top folder, its own level does not count, but 33 more do. */
        for (unsigned i = 0; i < 32; i++)
                strcat(top_deep, "/d");
        strcat(top_deep, "/f");
        {
                const ZipSpec specs[] = { FILE_SPEC("top/SKILL.md", "x"), FILE_SPEC(top_deep, "x") };
                refuse_zip(specs, 2, NULL, top_deep, "nested deeper than 32 levels");
        }
}
END_TEST

/* How a long name shows in a message: its first 200 bytes, then "...". */
static char *shortened(const char *name) {
        return strdup_printf("%.200s...", name);
}

START_TEST(test_evil_long_path) {
        char long_path[1100] = {}, long_name[300] = {};
        _cleanup_free_ char *short_path = NULL, *short_name = NULL;

        memset(long_path, 'p', 1030);
        for (unsigned i = 200; i < 1030; i += 201)
                long_path[i] = '/';
        {
                const ZipSpec specs[] = { FILE_SPEC(long_path, "x") };

                short_path = shortened(long_path);
                refuse_zip(specs, 1, NULL, short_path, "path is longer than 1024 bytes");
        }
        memset(long_name, 'n', 256);
        {
                const ZipSpec specs[] = { FILE_SPEC(long_name, "x") };

                short_name = shortened(long_name);
                refuse_zip(specs, 1, NULL, short_name, "longer than 255 bytes");
        }
        /* Beyond what the loader even reads into memory. */
        {
                char *huge = malloc(40000);

                ck_assert_ptr_nonnull(huge);
                memset(huge, 'h', 39999);
                huge[39999] = '\0';
                {
                        const ZipSpec specs[] = { FILE_SPEC(huge, "x") };
                        _cleanup_free_ char *short_huge = shortened(huge);

                        refuse_zip(specs, 1, NULL, short_huge, "path is longer than 1024 bytes");
                }
                free(huge);
        }
}
END_TEST

START_TEST(test_evil_too_many_entries) {
        const size_t n = 10001;
        ZipSpec *specs = calloc(n, sizeof(ZipSpec));
        char (*names)[16] = calloc(n, sizeof(*names));

        ck_assert_ptr_nonnull(specs);
        ck_assert_ptr_nonnull(names);
        for (size_t i = 0; i < n; i++) {
                snprintf(names[i], sizeof(names[i]), "f%05zu", i);
                specs[i] = (ZipSpec) { .name = names[i], .mode = S_IFREG | 0644 };
        }
        refuse_zip(specs, n, NULL, "f10000", "too many entries (more than 10000)");

        /* The cap is the caller's to set. */
        {
                LoaderLimits l = LOADER_LIMITS_DEFAULT;
                l.max_entries = 3;
                refuse_zip(specs, 4, &l, "f00003", "too many entries (more than 3)");
        }

        /* Directories implied by deeper names count too: the cap holds for what lands on disk,
         * so the extracted tree also passes as a folder under the same limits. */
        {
                const ZipSpec deep[] = { FILE_SPEC("a/b/c/x", "x"), FILE_SPEC("d/y", "y") };
                LoaderLimits l = LOADER_LIMITS_DEFAULT;
                _cleanup_case_ Case c = case_new();
                _cleanup_bytes_ Bytes zip = {};

                l.max_entries = 4;
                zip_build(deep, 1, &zip);
                ck_assert_int_eq(case_extract(&c, &zip, &l), 0);
                ck_assert_int_eq(loader_check_tree(c.target_fd, &l, NULL), 0);
                refuse_zip(deep, 2, &l, "d/y", "too many files and directories, counting the implied "
                           "ones (more than 4)");
        }
        free(specs);
        free(names);
}
END_TEST

START_TEST(test_evil_bomb_ratio) {
        /* 16 MiB of zeros deflate to about 16 KiB: a ratio near 1000. */
        const size_t size = 16 * 1024 * 1024;
        _cleanup_free_ char *zeros = calloc(1, size);
        ck_assert_ptr_nonnull(zeros);
        const ZipSpec specs[] = {
                FILE_SPEC("SKILL.md", "x"),
                { .name = "bomb", .mode = S_IFREG | 0644, .data = zeros, .size = size, .deflate = true },
        };

        refuse_zip(specs, 2, NULL, "bomb", "expands more than 200 times its size");
}
END_TEST

START_TEST(test_evil_bomb_total) {
        /* Stored, so no ratio to speak of: only the byte count stops it. */
        const size_t size = 600 * 1024;
        _cleanup_free_ char *data = malloc(size);
        LoaderLimits l = LOADER_LIMITS_DEFAULT;

        ck_assert_ptr_nonnull(data);
        memset(data, 'x', size);
        const ZipSpec specs[] = {
                { .name = "one", .mode = S_IFREG | 0644, .data = data, .size = size },
                { .name = "two", .mode = S_IFREG | 0644, .data = data, .size = size },
        };
        l.max_total_bytes = 1024 * 1024;
        refuse_zip(specs, 2, &l, "two", "archive expands to more than 1.0M");

        l = LOADER_LIMITS_DEFAULT;
        l.max_file_bytes = 100 * 1024;
        refuse_zip(specs, 2, &l, "one", "file is larger than 100.0K");
}
END_TEST

START_TEST(test_evil_lying_sizes) {
        /* The headers say 16 bytes; the deflate stream holds 4 MiB. The cap counts what comes
         * out, so it stops the entry although the headers look harmless. */
        const size_t size = 4 * 1024 * 1024;
        _cleanup_free_ char *zeros = calloc(1, size);
        LoaderLimits l = LOADER_LIMITS_DEFAULT;

        ck_assert_ptr_nonnull(zeros);
        const ZipSpec big[] = {
                FILE_SPEC("SKILL.md", "x"),
                { .name = "liar", .mode = S_IFREG | 0644, .data = zeros, .size = size, .deflate = true,
                  .lie_size = true, .declared_size = 16 },
        };
        l.max_total_bytes = 1024 * 1024;
        l.max_ratio = UINT64_MAX;
        refuse_zip(big, 2, &l, "liar", "archive expands to more than 1.0M");

        /* Within the caps, the mismatch itself is refused. */
        const ZipSpec small[] = {
                FILE_SPEC("SKILL.md", "x"),
                { .name = "liar", .mode = S_IFREG | 0644, .data = zeros, .size = 64 * 1024, .deflate = true,
                  .lie_size = true, .declared_size = 16 },
        };
        refuse_zip(small, 2, NULL, "liar", "wrong size");

        /* And a header claiming more than there is. */
        const ZipSpec more[] = {
                FILE_SPEC("SKILL.md", "x"),
                { .name = "liar", .mode = S_IFREG | 0644, .data = "tiny", .size = 4, .deflate = true,
                  .lie_size = true, .declared_size = 1000000 },
        };
        refuse_zip(more, 2, NULL, "liar", "size");
}
END_TEST

START_TEST(test_evil_inconsistent_headers) {
        /* The central directory says one name, the local header another. */
        const ZipSpec names[] = {
                { .name = "SKILL.md", .local_name = "../x", .mode = S_IFREG | 0644, .data = "x", .size = 1 },
        };
        const ZipSpec nul[] = {
                { .name = "ab", .local_name = "ab\0x", .local_name_len = 4, .mode = S_IFREG | 0644,
                  .data = "x", .size = 1 },
        };
        const ZipSpec encrypted[] = {
                { .name = "secret", .mode = S_IFREG | 0644, .data = "x", .size = 1, .flags = 1 },
        };
        /* a's data, as the directory tells it, runs over b: one stream under several names is
         * how a small zip expands without bound. */
        const ZipSpec overlap[] = {
                { .name = "a", .mode = S_IFREG | 0644, .data = "x", .size = 1, .central_csize = 20 },
                FILE_SPEC("b", "y"),
        };
        const ZipSpec bzip2[] = {
                { .name = "packed", .mode = S_IFREG | 0644, .data = "x", .size = 1, .method = 12 },
        };

        refuse_zip(names, 1, NULL, "SKILL.md", "local header name differs");
        refuse_zip(nul, 1, NULL, "ab", "local header name differs");
        refuse_zip(encrypted, 1, NULL, "secret", "encrypted entries are not supported");
        refuse_zip(overlap, 2, NULL, "b", "overlaps with entry a");
        refuse_zip(bzip2, 1, NULL, "packed", "compression method 12 is not supported");
}
END_TEST

START_TEST(test_evil_partial_extraction_removed) {
        /* Good entries first, a bad one last: by then files exist, and they must go. */
        const size_t size = 600 * 1024;
        _cleanup_free_ char *data = malloc(size);
        LoaderLimits l = LOADER_LIMITS_DEFAULT;

        ck_assert_ptr_nonnull(data);
        memset(data, 'y', size);
        const ZipSpec specs[] = {
                FILE_SPEC("SKILL.md", "---\nname: x\n---\n"),
                FILE_SPEC("scripts/a/b/c.py", "print()\n"),
                DIR_SPEC("assets/empty/"),
                { .name = "assets/big", .mode = S_IFREG | 0644, .data = data, .size = size },
                { .name = "assets/big2", .mode = S_IFREG | 0644, .data = data, .size = size },
        };
        l.max_total_bytes = 1024 * 1024;
        refuse_zip(specs, ELEMENTSOF(specs), &l, "assets/big2", "expands to more than");
}
END_TEST

START_TEST(test_evil_corrupt) {
        const ZipSpec specs[] = { FILE_SPEC("SKILL.md", "x") };
        _cleanup_case_ Case c = case_new();
        _cleanup_bytes_ Bytes zip = {}, empty = {};

        zip_build(specs, 1, &zip);
        zip.n -= 5;     /* no end record any more */
        case_assert_refused(&c, case_extract(&c, &zip, NULL), NULL, "corrupt zip archive");
        zip.n += 5;
        bytes_put(&zip, "trailing", 8);
        case_assert_refused(&c, case_extract(&c, &zip, NULL), NULL, "corrupt zip archive");

        case_assert_refused(&c, case_extract(&c, &empty, NULL), NULL, "not a zip archive");
}
END_TEST

/* Writes bytes as name in a scratch dir, with $TMPDIR in the scratch dir too, and expects
 * skill_source_open() to refuse it leaving no temporary directory behind. */
static void refuse_source(const Bytes *b, const char *name, const char *reason) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_source_freep) SkillSource *s = NULL;
        _cleanup_free_ char *tmp = NULL, *path = NULL, *error = NULL, *left = NULL, *all = NULL;

        ck_assert_int_eq(mkdirat(t.fd, "tmp", 0700), 0);
        tmp = strjoin_path(t.path, "tmp");
        ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
        bytes_write_file(t.fd, name, b);
        path = strjoin_path(t.path, name);

        assert_error(skill_source_open(path, NULL, &s, &error), &error, NULL, reason);
        ck_assert_ptr_null(s);
        left = list_dir(t.fd, "tmp");
        ck_assert_str_eq(left, "");
        all = list_dir(t.fd, ".");
        ck_assert_ptr_nonnull(strstr(all, name));
        ck_assert_int_eq(unsetenv("TMPDIR"), 0);
}

START_TEST(test_evil_not_zip) {
        const ArSpec specs[] = {
                { "SKILL.md", AE_IFREG, 0644, "---\nname: x\n---\n", false },
                { "link", AE_IFLNK, 0777, "/etc/passwd", false },
        };
        _cleanup_bytes_ Bytes tar = {}, tgz = {}, gz = {}, sevenz = {}, rar = {}, text = {};

        ar_build(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_NONE, specs, 2, &tar);
        refuse_source(&tar, "evil.skill", "not a zip archive (this is a tar archive)");
        ar_build(ARCHIVE_FORMAT_TAR_USTAR, ARCHIVE_FILTER_GZIP, specs, 2, &tgz);
        refuse_source(&tgz, "evil.skill", "not a zip archive (this is a gzip file)");
        ar_build(ARCHIVE_FORMAT_RAW, ARCHIVE_FILTER_GZIP, specs, 1, &gz);
        refuse_source(&gz, "evil.skill", "not a zip archive (this is a gzip file)");
        ar_build(ARCHIVE_FORMAT_7ZIP, ARCHIVE_FILTER_NONE, specs, 1, &sevenz);
        refuse_source(&sevenz, "evil.skill", "not a zip archive (this is a 7z archive)");
        bytes_put(&rar, "Rar!\x1a\x07\x01\x00", 8);
        bytes_put(&rar, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
        refuse_source(&rar, "evil.skill", "not a zip archive (this is a RAR archive)");
        bytes_put(&text, "just some text, long enough to look at\n", 39);
        refuse_source(&text, "evil.zip", "not a zip archive");
}
END_TEST

START_TEST(test_evil_zip_via_source) {
        /* The same corpus through skill_source_open(): refused, and no temporary tree left. */
        const ZipSpec specs[] = { FILE_SPEC("SKILL.md", "x"), FILE_SPEC("../../../../x", "escaped") };
        _cleanup_bytes_ Bytes zip = {};

        zip_build(specs, 2, &zip);
        refuse_source(&zip, "evil.skill", "\"..\"");
}
END_TEST

/* ---- directories -------------------------------------------------------------------------- */

static void make_skill_tree(int dir_fd) {
        test_write_file(dir_fd, "SKILL.md", "---\nname: demo\ndescription: d\n---\nBody\n", 0644);
        test_write_file(dir_fd, "scripts/main.py", "import json\nprint(json.dumps({}))\n", 0755);
        test_write_file(dir_fd, "references/notes.md", "notes\n", 0644);
        test_write_file(dir_fd, "assets/r\xc3\xa9sum\xc3\xa9.txt", "caf\xc3\xa9\n", 0600);
        ck_assert_int_eq(mkdirat(dir_fd, "assets/empty", 0700), 0);
}

static void refuse_tree(int dir_fd, const LoaderLimits *limits, const char *entry, const char *reason) {
        _cleanup_free_ char *error = NULL;

        assert_error(loader_check_tree(dir_fd, limits, &error), &error, entry, reason);
}

START_TEST(test_tree_good) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *error = NULL;

        make_skill_tree(t.fd);
        ck_assert_msg(loader_check_tree(t.fd, NULL, &error) == 0, "%s", strna(error));
}
END_TEST

START_TEST(test_tree_symlinks) {
        _cleanup_test_dir_ TestDir t = test_dir_new();

        make_skill_tree(t.fd);
        ck_assert_int_eq(symlinkat("/etc/passwd", t.fd, "scripts/out"), 0);
        refuse_tree(t.fd, NULL, "scripts/out", "symlinks are not allowed");
        ck_assert_int_eq(unlinkat(t.fd, "scripts/out", 0), 0);

        /* Even one that stays inside the tree. */
        ck_assert_int_eq(symlinkat("../SKILL.md", t.fd, "references/in"), 0);
        refuse_tree(t.fd, NULL, "references/in", "symlinks are not allowed");
        ck_assert_int_eq(unlinkat(t.fd, "references/in", 0), 0);

        ck_assert_int_eq(symlinkat("/", t.fd, "rootdir"), 0);
        refuse_tree(t.fd, NULL, "rootdir", "symlinks are not allowed");
}
END_TEST

START_TEST(test_tree_special_files) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int sock = -EBADF;

        make_skill_tree(t.fd);
        ck_assert_int_eq(mkfifoat(t.fd, "scripts/fifo", 0644), 0);
        refuse_tree(t.fd, NULL, "scripts/fifo", "FIFOs are not allowed");
        ck_assert_int_eq(unlinkat(t.fd, "scripts/fifo", 0), 0);

        sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(sock, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", t.path);
        ck_assert_int_eq(bind(sock, (struct sockaddr *) &sa, sizeof(sa)), 0);
        refuse_tree(t.fd, NULL, "sock", "sockets are not allowed");
        ck_assert_int_eq(unlinkat(t.fd, "sock", 0), 0);

        if (mknodat(t.fd, "null", S_IFCHR | 0666, makedev(1, 3)) == 0)
                refuse_tree(t.fd, NULL, "null", "device nodes are not allowed");
        else
                ck_assert_int_eq(errno, EPERM);         /* not root: nothing to test */
}
END_TEST

START_TEST(test_tree_hardlinks) {
        _cleanup_test_dir_ TestDir t = test_dir_new();

        make_skill_tree(t.fd);
        ck_assert_int_eq(linkat(t.fd, "SKILL.md", t.fd, "references/alias", 0), 0);
        refuse_tree(t.fd, NULL, NULL, "hard links are not allowed");
}
END_TEST

START_TEST(test_tree_names_and_caps) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        LoaderLimits l = LOADER_LIMITS_DEFAULT;
        char deep[200] = "d";

        make_skill_tree(t.fd);

        test_write_file(t.fd, "bad\nname", "x", 0644);
        refuse_tree(t.fd, NULL, "bad\\x0aname", "control characters are not allowed");
        ck_assert_int_eq(unlinkat(t.fd, "bad\nname", 0), 0);

        test_write_file(t.fd, "bad\xff", "x", 0644);
        refuse_tree(t.fd, NULL, "bad\\xff", "valid UTF-8");
        ck_assert_int_eq(unlinkat(t.fd, "bad\xff", 0), 0);

        test_write_file(t.fd, "back\\slash", "x", 0644);
        refuse_tree(t.fd, NULL, "back\\\\slash", "backslashes");
        ck_assert_int_eq(unlinkat(t.fd, "back\\slash", 0), 0);

        for (unsigned i = 1; i < 33; i++)
                strcat(deep, "/d");
        ck_assert_int_eq(mkdir_p_at(t.fd, deep, 0755), 0);
        refuse_tree(t.fd, NULL, deep, "nested deeper than 32 levels");
        ck_assert_int_eq(rm_rf_at(t.fd, "d"), 0);

        l.max_entries = 5;
        refuse_tree(t.fd, &l, NULL, "too many entries (more than 5)");

        l = LOADER_LIMITS_DEFAULT;
        l.max_total_bytes = 40;
        refuse_tree(t.fd, &l, NULL, "the tree holds more than");

        l = LOADER_LIMITS_DEFAULT;
        l.max_file_bytes = 20;
        refuse_tree(t.fd, &l, NULL, "file is larger than");
}
END_TEST

/* ---- the content hash ------------------------------------------------------------------- */

static void tree_hash(int dir_fd, char hex[static 65]) {
        _cleanup_free_ char *error = NULL;

        ck_assert_msg(skill_tree_hash(dir_fd, hex, &error) == 0, "%s", strna(error));
        ck_assert_int_eq(strlen(hex), 64);
}

START_TEST(test_hash_known_answer) {
        /* Pins the format: computed independently from the description in tree-hash.c. */
        _cleanup_test_dir_ TestDir t = test_dir_new();
        char hex[65];

        test_write_file(t.fd, "SKILL.md", "---\nname: kat\n---\n", 0640);
        test_write_file(t.fd, "scripts/run.sh", "echo hi\n", 0700);
        ck_assert_int_eq(mkdirat(t.fd, "empty", 0700), 0);
        tree_hash(t.fd, hex);
        ck_assert_str_eq(hex, "259ba383064b026c111d858355694fd32890ee8a11d60360e43914e2845fba81");
}
END_TEST

START_TEST(test_hash_sensitivity) {
        const struct timespec times[2] = { { 0, 0 }, { 12345, 0 } };
        _cleanup_test_dir_ TestDir t = test_dir_new();
        char base[65], h[65];

        make_skill_tree(t.fd);
        tree_hash(t.fd, base);

        /* Times and owners do not count. */
        ck_assert_int_eq(utimensat(t.fd, "SKILL.md", times, 0), 0);
        if (geteuid() == 0)
                ck_assert_int_eq(fchownat(t.fd, "references/notes.md", 1234, 1234, 0), 0);
        tree_hash(t.fd, h);
        ck_assert_str_eq(h, base);

        /* Contents, the executable bit, names and empty directories do. */
        test_write_file(t.fd, "references/notes.md", "notes!\n", 0644);
        tree_hash(t.fd, h);
        ck_assert_str_ne(h, base);
        test_write_file(t.fd, "references/notes.md", "notes\n", 0644);
        tree_hash(t.fd, h);
        ck_assert_str_eq(h, base);

        ck_assert_int_eq(fchmodat(t.fd, "references/notes.md", 0744, 0), 0);
        tree_hash(t.fd, h);
        ck_assert_str_ne(h, base);
        ck_assert_int_eq(fchmodat(t.fd, "references/notes.md", 0664, 0), 0);
        tree_hash(t.fd, h);
        ck_assert_str_eq(h, base);

        ck_assert_int_eq(renameat(t.fd, "references/notes.md", t.fd, "references/notes2.md"), 0);
        tree_hash(t.fd, h);
        ck_assert_str_ne(h, base);
        ck_assert_int_eq(renameat(t.fd, "references/notes2.md", t.fd, "references/notes.md"), 0);

        ck_assert_int_eq(mkdirat(t.fd, "more", 0755), 0);
        tree_hash(t.fd, h);
        ck_assert_str_ne(h, base);
}
END_TEST

START_TEST(test_hash_framing) {
        /* Moving bytes between a name and contents, or between two files, changes the hash. */
        _cleanup_test_dir_ TestDir a = test_dir_new(), b = test_dir_new();
        _cleanup_test_dir_ TestDir c = test_dir_new(), d = test_dir_new();
        char ha[65], hb[65], hc[65], hd[65];

        test_write_file(a.fd, "x", "yz", 0644);
        test_write_file(b.fd, "xy", "z", 0644);
        test_write_file(c.fd, "f", "ab", 0644);
        test_write_file(c.fd, "g", "", 0644);
        test_write_file(d.fd, "f", "a", 0644);
        test_write_file(d.fd, "g", "b", 0644);
        tree_hash(a.fd, ha);
        tree_hash(b.fd, hb);
        tree_hash(c.fd, hc);
        tree_hash(d.fd, hd);
        ck_assert_str_ne(ha, hb);
        ck_assert_str_ne(hc, hd);
}
END_TEST

START_TEST(test_hash_refuses_symlinks) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *error = NULL;
        char hex[65];

        make_skill_tree(t.fd);
        ck_assert_int_eq(symlinkat("/etc/passwd", t.fd, "pw"), 0);
        assert_error(skill_tree_hash(t.fd, hex, &error), &error, "pw", "symlinks are not allowed");
}
END_TEST

static void add_excluded(int dir_fd) {
        test_write_file(dir_fd, "scripts/__pycache__/main.cpython-311.pyc", "bytecode", 0644);
        test_write_file(dir_fd, ".DS_Store", "finder", 0644);
        test_write_file(dir_fd, "references/.DS_Store", "finder", 0644);
        test_write_file(dir_fd, "stray.pyc", "bytecode", 0644);
        /* Packaging skips them whole, so even what the loader would refuse in there. */
        ck_assert_int_eq(symlinkat("main.cpython-311.pyc", dir_fd, "scripts/__pycache__/alias.pyc"), 0);
}

START_TEST(test_list_excluded) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_strv_free_ char **dirs = NULL, **files = NULL;

        make_skill_tree(t.fd);
        ck_assert_int_eq(skill_list_excluded(t.fd, &dirs, &files, NULL), 0);
        ck_assert_ptr_null(dirs);
        ck_assert_ptr_null(files);

        add_excluded(t.fd);
        ck_assert_int_eq(unlinkat(t.fd, "scripts/__pycache__/alias.pyc", 0), 0);
        test_write_file(t.fd, "scripts/__pycache__/deeper/x.pyc", "", 0644);
        test_write_file(t.fd, "node_modules/x/__pycache__/y.pyc", "", 0644);
        ck_assert_int_eq(skill_list_excluded(t.fd, &dirs, &files, NULL), 0);
        /* Top-most only, sorted; nothing under a hidden folder is listed again. */
        ck_assert_int_eq(strv_length(dirs), 2);
        ck_assert_str_eq(dirs[0], "node_modules/x/__pycache__");
        ck_assert_str_eq(dirs[1], "scripts/__pycache__");
        ck_assert_int_eq(strv_length(files), 3);
        ck_assert_str_eq(files[0], ".DS_Store");
        ck_assert_str_eq(files[1], "references/.DS_Store");
        ck_assert_str_eq(files[2], "stray.pyc");
}
END_TEST

START_TEST(test_hash_skips_excluded) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        char before[65], after[65];

        make_skill_tree(t.fd);
        tree_hash(t.fd, before);
        add_excluded(t.fd);
        tree_hash(t.fd, after);
        ck_assert_str_eq(before, after);
}
END_TEST

/* ---- packaging ---------------------------------------------------------------------------- */

static void package_to(int dir_fd, const char *name, int out_dir_fd, const char *file) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *error = NULL;

        fd = openat(out_dir_fd, file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_msg(skill_package(dir_fd, name, fd, &error) == 0, "%s", strna(error));
}

/* The entry names of a zip, in archive order, joined by spaces. */
static char *zip_listing(int dir_fd, const char *file) {
        locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t) 0), saved;
        struct archive *a = archive_read_new();
        struct archive_entry *e;
        char *s = strdup("");
        int fd;

        ck_assert(utf8 != (locale_t) 0);
        saved = uselocale(utf8);
        fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(archive_read_support_format_zip_seekable(a), ARCHIVE_OK);
        ck_assert_int_eq(archive_read_open_fd(a, fd, 4096), ARCHIVE_OK);
        while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
                char *n = strdup_printf("%s%s%s", s, *s ? " " : "", archive_entry_pathname(e));
                free(s);
                s = n;
        }
        archive_read_free(a);
        close(fd);
        uselocale(saved);
        freelocale(utf8);
        return s;
}

START_TEST(test_package_layout) {
        _cleanup_test_dir_ TestDir src = test_dir_new(), out = test_dir_new();
        _cleanup_(zip_directory_freep) ZipDirectory *z = NULL;
        _cleanup_free_ char *listing = NULL;
        _cleanup_close_ int fd = -EBADF;
        LoaderLimits l = LOADER_LIMITS_DEFAULT;

        make_skill_tree(src.fd);
        add_excluded(src.fd);
        package_to(src.fd, "demo", out.fd, "demo.skill");

        listing = zip_listing(out.fd, "demo.skill");
        ck_assert_str_eq(listing, "demo/ demo/SKILL.md demo/assets/ demo/assets/empty/ "
                                  "demo/assets/r\xc3\xa9sum\xc3\xa9.txt demo/references/ "
                                  "demo/references/notes.md demo/scripts/ demo/scripts/main.py");

        /* Deflated files, under the loader's own reading of the directory. */
        fd = openat(out.fd, "demo.skill", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(zip_directory_read(fd, &l, &z, NULL), 0);
        for (size_t i = 0; i < z->n; i++)
                ck_assert_int_eq(z->entries[i].method, z->entries[i].is_dir ? 0 : 8);
}
END_TEST

START_TEST(test_hash_includes_node_modules) {
        _cleanup_test_dir_ TestDir t = test_dir_new(), out = test_dir_new();
        _cleanup_free_ char *listing = NULL;
        char a[65], b[65], c[65];

        make_skill_tree(t.fd);
        tree_hash(t.fd, a);
        test_write_file(t.fd, "scripts/node_modules/left-pad/index.js", "module.exports = 1;\n", 0644);
        tree_hash(t.fd, b);
        test_write_file(t.fd, "scripts/node_modules/left-pad/index.js", "module.exports = 2;\n", 0644);
        tree_hash(t.fd, c);
        ck_assert_str_ne(a, b);
        ck_assert_str_ne(b, c);

        package_to(t.fd, "demo", out.fd, "demo.skill");
        listing = zip_listing(out.fd, "demo.skill");
        ck_assert_msg(strstr(listing, "demo/scripts/node_modules/left-pad/index.js"), "%s", listing);
}
END_TEST

/* Whether every entry of a zip has this mtime. */
static bool zip_all_mtimes(int dir_fd, const char *file, time_t t) {
        struct archive *a = archive_read_new();
        struct archive_entry *e;
        bool all = true;
        int fd;

        fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(archive_read_support_format_zip_seekable(a), ARCHIVE_OK);
        ck_assert_int_eq(archive_read_open_fd(a, fd, 4096), ARCHIVE_OK);
        while (archive_read_next_header(a, &e) == ARCHIVE_OK)
                if (archive_entry_mtime(e) != t)
                        all = false;
        archive_read_free(a);
        close(fd);
        return all;
}

START_TEST(test_package_deterministic) {
        const struct timespec times[2] = { { 0, 0 }, { 999999, 0 } };
        _cleanup_test_dir_ TestDir src = test_dir_new(), out = test_dir_new();
        _cleanup_free_ char *a = NULL, *b = NULL;
        size_t na, nb;

        /* The default first: dpkg-buildpackage sets $SOURCE_DATE_EPOCH for the whole build. */
        ck_assert_int_eq(unsetenv("SOURCE_DATE_EPOCH"), 0);
        make_skill_tree(src.fd);
        package_to(src.fd, "demo", out.fd, "a.skill");
        ck_assert_int_eq(utimensat(src.fd, "SKILL.md", times, 0), 0);
        if (geteuid() == 0)
                ck_assert_int_eq(fchownat(src.fd, "scripts/main.py", 4321, 4321, 0), 0);
        package_to(src.fd, "demo", out.fd, "b.skill");
        ck_assert_int_eq(read_full_file_at(out.fd, "a.skill", 1 << 20, true, &a, &na), 0);
        ck_assert_int_eq(read_full_file_at(out.fd, "b.skill", 1 << 20, true, &b, &nb), 0);
        ck_assert_uint_eq(na, nb);
        ck_assert(memcmp(a, b, na) == 0);

        /* 1980-01-02 unless $SOURCE_DATE_EPOCH says otherwise. */
        ck_assert(zip_all_mtimes(out.fd, "a.skill", 315619200));
        ck_assert_int_eq(setenv("SOURCE_DATE_EPOCH", "1700000000", 1), 0);
        package_to(src.fd, "demo", out.fd, "c.skill");
        ck_assert_int_eq(unsetenv("SOURCE_DATE_EPOCH"), 0);
        ck_assert(zip_all_mtimes(out.fd, "c.skill", 1700000000));
}
END_TEST

START_TEST(test_package_refusals) {
        _cleanup_test_dir_ TestDir src = test_dir_new(), out = test_dir_new();
        _cleanup_close_ int fd = -EBADF;

        make_skill_tree(src.fd);
        fd = openat(out.fd, "x.skill", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        {
                _cleanup_free_ char *error = NULL;
                assert_error(skill_package(src.fd, "a/b", fd, &error), &error, NULL,
                             "not a valid folder name");
        }
        {
                _cleanup_free_ char *error = NULL;
                assert_error(skill_package(src.fd, "..", fd, &error), &error, NULL, "\"..\"");
        }
        ck_assert_int_eq(symlinkat("/etc", src.fd, "scripts/etc"), 0);
        {
                _cleanup_free_ char *error = NULL;
                assert_error(skill_package(src.fd, "demo", fd, &error), &error, "scripts/etc",
                             "symlinks are not allowed");
        }
}
END_TEST

/* ---- sources and the round trip ----------------------------------------------------------- */

START_TEST(test_roundtrip_hash) {
        /* Package, load the package, hash: the same as the folder it came from. */
        _cleanup_test_dir_ TestDir parent = test_dir_new(), out = test_dir_new();
        _cleanup_(skill_source_freep) SkillSource *dir = NULL, *pkg = NULL;
        _cleanup_free_ char *error = NULL, *src_path = NULL, *pkg_path = NULL, *temp = NULL;
        _cleanup_close_ int src_fd = -EBADF;
        char h_dir[65], h_pkg[65], h_src[65];
        struct stat st;

        ck_assert_int_eq(mkdirat(parent.fd, "demo", 0755), 0);
        src_fd = openat(parent.fd, "demo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(src_fd, 0);
        make_skill_tree(src_fd);
        add_excluded(src_fd);
        ck_assert_int_eq(unlinkat(src_fd, "scripts/__pycache__/alias.pyc", 0), 0);        /* a symlink */

        src_path = strjoin_path(parent.path, "demo");
        ck_assert_msg(skill_source_open(src_path, NULL, &dir, &error) == 0, "%s", strna(error));
        ck_assert_str_eq(dir->dir_name, "demo");
        ck_assert(!dir->temporary && !dir->from_archive);
        ck_assert_ptr_null(dir->temp_dir);
        tree_hash(dir->dir_fd, h_dir);

        package_to(src_fd, "demo", out.fd, "whatever.skill");
        pkg_path = strjoin_path(out.path, "whatever.skill");
        ck_assert_msg(skill_source_open(pkg_path, NULL, &pkg, &error) == 0, "%s", strna(error));
        ck_assert_str_eq(pkg->dir_name, "demo");
        ck_assert(pkg->temporary && pkg->from_archive);
        ck_assert_int_eq(stat(pkg->temp_dir, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0700);
        ck_assert_int_eq(stat(pkg->path, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0755);
        tree_hash(pkg->dir_fd, h_pkg);
        ck_assert_str_eq(h_dir, h_pkg);
        /* One walk for validation and hash gives the same hash as a walk of its own, excluded
         * paths (here stray.pyc and scripts/__pycache__/) left out alike. */
        ck_assert_msg(skill_source_hash(dir, h_src, &error) == 0, "%s", strna(error));
        ck_assert_str_eq(h_src, h_dir);
        ck_assert_msg(skill_source_hash(pkg, h_src, &error) == 0, "%s", strna(error));
        ck_assert_str_eq(h_src, h_pkg);
        assert_absent_at(pkg->dir_fd, "stray.pyc");
        assert_absent_at(pkg->dir_fd, "scripts/__pycache__");
        ck_assert_int_eq(mode_at(pkg->dir_fd, "scripts/main.py"), S_IFREG | 0755);
        ck_assert_int_eq(mode_at(pkg->dir_fd, "assets/r\xc3\xa9sum\xc3\xa9.txt"), S_IFREG | 0644);
        ck_assert_int_eq(mode_at(pkg->dir_fd, "assets/empty"), S_IFDIR | 0755);

        /* The temporary tree goes with the source. */
        temp = strdup(pkg->temp_dir);
        pkg = skill_source_free(pkg);
        assert_absent_at(AT_FDCWD, temp);
}
END_TEST

START_TEST(test_source_fd) {
        const ZipSpec flat[] = { FILE_SPEC("SKILL.md", "---\nname: flat\n---\n") };
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_source_freep) SkillSource *s = NULL, *d = NULL, *n = NULL;
        _cleanup_free_ char *error = NULL, *md = NULL;
        _cleanup_bytes_ Bytes zip = {};
        _cleanup_close_ int zfd = -EBADF;

        /* A memfd holding a flat zip: the folder name comes from the hint. */
        zip_build(flat, 1, &zip);
        zfd = bytes_memfd(&zip);
        ck_assert_int_eq(lseek(zfd, 7, SEEK_SET), 7);
        ck_assert_msg(skill_source_open_fd(zfd, "/some/where/flat.skill", NULL, &s, &error) == 0, "%s",
                      strna(error));
        ck_assert_str_eq(s->dir_name, "flat");
        ck_assert(s->from_archive);
        md = read_file_at(s->dir_fd, "SKILL.md");
        ck_assert_str_eq(md, "---\nname: flat\n---\n");
        ck_assert_int_eq(lseek(zfd, 0, SEEK_CUR), 7);    /* the caller's offset is left alone */

        /* Without a hint, a flat zip has no folder name. */
        ck_assert_int_eq(skill_source_open_fd(zfd, NULL, NULL, &n, NULL), 0);
        ck_assert_ptr_null(n->dir_name);

        /* A directory fd. */
        make_skill_tree(t.fd);
        ck_assert_msg(skill_source_open_fd(t.fd, "demo", NULL, &d, &error) == 0, "%s", strna(error));
        ck_assert_str_eq(d->dir_name, "demo");
        ck_assert_ptr_nonnull(d->path);
        ck_assert(!d->temporary);
        ck_assert_int_ne(d->dir_fd, t.fd);
}
END_TEST

START_TEST(test_source_hash_after_swap) {
        /* The hash reuses the validation's list but opens every file anew: a file swapped for a
         * symlink (or a directory for one) since the walk is refused, never followed. */
        _cleanup_test_dir_ TestDir parent = test_dir_new();
        _cleanup_(skill_source_freep) SkillSource *s = NULL;
        _cleanup_free_ char *error = NULL, *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        char hex[65];

        ck_assert_int_eq(mkdirat(parent.fd, "demo", 0755), 0);
        fd = openat(parent.fd, "demo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        make_skill_tree(fd);
        path = strjoin_path(parent.path, "demo");
        ck_assert_msg(skill_source_open(path, NULL, &s, &error) == 0, "%s", strna(error));

        ck_assert_int_eq(unlinkat(fd, "scripts/main.py", 0), 0);
        ck_assert_int_eq(symlinkat("/etc/passwd", fd, "scripts/main.py"), 0);
        assert_error(skill_source_hash(s, hex, &error), &error, "scripts/main.py", "cannot open");

        free(error);
        error = NULL;
        ck_assert_int_eq(unlinkat(fd, "scripts/main.py", 0), 0);
        test_write_file(fd, "scripts/main.py", "import json\nprint(json.dumps({}))\n", 0755);
        ck_assert_int_eq(renameat(fd, "scripts", fd, "scripts.real"), 0);
        ck_assert_int_eq(symlinkat("scripts.real", fd, "scripts"), 0);
        assert_error(skill_source_hash(s, hex, &error), &error, "scripts/main.py", "cannot open");
}
END_TEST

START_TEST(test_source_refusals) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_(skill_source_freep) SkillSource *s = NULL;
        _cleanup_free_ char *fifo = NULL, *missing = NULL;

        ck_assert_int_eq(mkfifoat(t.fd, "fifo", 0644), 0);
        fifo = strjoin_path(t.path, "fifo");
        {
                _cleanup_free_ char *error = NULL;
                assert_error(skill_source_open(fifo, NULL, &s, &error), &error, fifo,
                             "not a directory or a .skill file");
        }
        missing = strjoin_path(t.path, "missing");
        {
                _cleanup_free_ char *error = NULL;
                ck_assert_int_eq(skill_source_open(missing, NULL, &s, &error), -ENOENT);
                ck_assert_ptr_nonnull(error);
        }
        /* A directory with a symlink is refused as a whole. */
        make_skill_tree(t.fd);
        ck_assert_int_eq(unlinkat(t.fd, "fifo", 0), 0);
        ck_assert_int_eq(symlinkat("/etc/shadow", t.fd, "scripts/shadow"), 0);
        {
                _cleanup_free_ char *error = NULL;
                assert_error(skill_source_open(t.path, NULL, &s, &error), &error, "scripts/shadow",
                             "symlinks");
        }
        ck_assert_ptr_null(s);
}
END_TEST

static Suite *loader_suite(void) {
        Suite *s = suite_create("loader");
        TCase *tc;

        tc = tcase_create("path");
        tcase_add_test(tc, test_check_path);
        tcase_add_test(tc, test_excluded);
        suite_add_tcase(s, tc);

        tc = tcase_create("zip");
        tcase_add_test(tc, test_zip_top_folder);
        tcase_add_test(tc, test_zip_top_folder_with_dir_entries);
        tcase_add_test(tc, test_zip_flat);
        tcase_add_test(tc, test_zip_folder_without_skill_md);
        tcase_add_test(tc, test_zip_modes_normalized);
        tcase_add_test(tc, test_zip_hardlink_entry);
        tcase_add_test(tc, test_zip_depth_boundary);
        tcase_add_test(tc, test_zip_target_not_empty);
        suite_add_tcase(s, tc);

        tc = tcase_create("corpus");
        tcase_add_test(tc, test_evil_zip_slip);
        tcase_add_test(tc, test_evil_absolute);
        tcase_add_test(tc, test_evil_symlink);
        tcase_add_test(tc, test_evil_special_files);
        tcase_add_test(tc, test_evil_duplicates);
        tcase_add_test(tc, test_evil_names);
        tcase_add_test(tc, test_evil_deep);
        tcase_add_test(tc, test_evil_long_path);
        tcase_add_test(tc, test_evil_too_many_entries);
        tcase_add_test(tc, test_evil_bomb_ratio);
        tcase_add_test(tc, test_evil_bomb_total);
        tcase_add_test(tc, test_evil_lying_sizes);
        tcase_add_test(tc, test_evil_inconsistent_headers);
        tcase_add_test(tc, test_evil_partial_extraction_removed);
        tcase_add_test(tc, test_evil_corrupt);
        tcase_add_test(tc, test_evil_not_zip);
        tcase_add_test(tc, test_evil_zip_via_source);
        suite_add_tcase(s, tc);

        tc = tcase_create("tree");
        tcase_add_test(tc, test_tree_good);
        tcase_add_test(tc, test_tree_symlinks);
        tcase_add_test(tc, test_tree_special_files);
        tcase_add_test(tc, test_tree_hardlinks);
        tcase_add_test(tc, test_tree_names_and_caps);
        suite_add_tcase(s, tc);

        tc = tcase_create("hash");
        tcase_add_test(tc, test_hash_known_answer);
        tcase_add_test(tc, test_hash_sensitivity);
        tcase_add_test(tc, test_hash_framing);
        tcase_add_test(tc, test_hash_refuses_symlinks);
        tcase_add_test(tc, test_hash_skips_excluded);
        tcase_add_test(tc, test_list_excluded);
        tcase_add_test(tc, test_hash_includes_node_modules);
        suite_add_tcase(s, tc);

        tc = tcase_create("package");
        tcase_add_test(tc, test_package_layout);
        tcase_add_test(tc, test_package_deterministic);
        tcase_add_test(tc, test_package_refusals);
        tcase_add_test(tc, test_roundtrip_hash);
        tcase_add_test(tc, test_source_fd);
        tcase_add_test(tc, test_source_hash_after_swap);
        tcase_add_test(tc, test_source_refusals);
        suite_add_tcase(s, tc);

        return s;
}

int main(void) {
        return test_run_suite(loader_suite());
}
