/* Helpers shared by the check-based tests: scratch directories that clean up after themselves,
 * writing fixture files, and paths into the source tree. */
#pragma once

#undef NDEBUG
#include <check.h>
#include <dirent.h>
#include <sys/stat.h>

#include "fileio.h"
#include "util.h"

/* Whether this build runs under AddressSanitizer, whose runtime reserves terabytes of address
 * space and dies under small rlimits: gcc says so with __SANITIZE_ADDRESS__, clang 14 only
 * through __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#  define TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TEST_ASAN 1
#  endif
#endif
#ifndef TEST_ASAN
#  define TEST_ASAN 0
#endif

/* A fresh directory under $TMPDIR; freed with rm -rf by the cleanup attribute. */
typedef struct TestDir {
        char *path;
        int fd;
} TestDir;

static inline void test_dir_done(TestDir *t) {
        if (t->path)
                (void) rm_rf_at(AT_FDCWD, t->path);
        free(t->path);
        t->path = NULL;
        t->fd = safe_close(t->fd);
}
#define _cleanup_test_dir_ _cleanup_(test_dir_done)

static inline TestDir test_dir_new(void) {
        TestDir t = { .fd = -EBADF };

        ck_assert_int_eq(mkdtemp_malloc("skilld-test-XXXXXX", &t.path), 0);
        t.fd = open(t.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(t.fd, 0);
        return t;
}

/* Writes a file (creating parent directories) under dir_fd. */
static inline void test_write_file(int dir_fd, const char *path, const char *contents, mode_t mode) {
        const char *slash = strrchr(path, '/');
        _cleanup_close_ int fd = -EBADF;

        if (slash) {
                _cleanup_free_ char *parent = strndup(path, slash - path);
                ck_assert_ptr_nonnull(parent);
                ck_assert_int_eq(mkdir_p_at(dir_fd, parent, 0755), 0);
        }
        fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, contents, strlen(contents)), 0);
}

/* The path of a file in the source tree, from SKILLD_SOURCE_ROOT set by meson. */
static inline char *test_source_path(const char *rel) {
        const char *root = getenv("SKILLD_SOURCE_ROOT");
        ck_assert_ptr_nonnull(root);
        return strdup_printf("%s/%s", root, rel);
}

/* The entries of a directory, "." and ".." left out (a /proc directory's fds or threads, a
 * scratch directory's leftovers). */
static inline size_t test_count_entries(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

/* Runs a check suite and returns the process exit code. */
static inline int test_run_suite(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The same for a suite that needs root (namespaces, mounts, a throwaway uid): elsewhere it is
 * skipped (77, as meson counts it), saying which tests and why. CI runs them as root. */
static inline int test_run_suite_as_root(Suite *(*make)(void), const char *what) {
        if (geteuid() != 0) {
                fprintf(stderr, "%s need root, skipping\n", what);
                return 77;
        }
        return test_run_suite(make());
}
