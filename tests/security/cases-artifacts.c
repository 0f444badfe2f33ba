/* The hostile artifacts group: a skill leaves in /out/files what a collector could follow, hang
 * on, or pay too much for; the host's output directory must afterwards hold only regular files
 * and directories, within the caps, with nothing written anywhere else. */
#include "security-util.h"

#define GROUP "artifacts"

typedef struct Walk {
        size_t regular, dirs, other, bad_names;
        unsigned max_depth;
        uint64_t bytes;
        bool shadow_content;
} Walk;

static void walk(int dir_fd, unsigned depth, Walk *w) {
        _cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fdopendir(fd);
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        TAKE_FD(fd);
        w->max_depth = MAX(w->max_depth, depth);
        while ((de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                ck_assert_int_eq(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
                if (!utf8_is_valid(de->d_name, strlen(de->d_name)) ||
                    string_has_cc(de->d_name, strlen(de->d_name)))
                        w->bad_names++;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = openat(dirfd(d), de->d_name,
                                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        w->dirs++;
                        ck_assert_int_ge(sub, 0);
                        walk(sub, depth + 1, w);
                } else if (S_ISREG(st.st_mode)) {
                        _cleanup_close_ int f =
                                openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                        char head[5] = {};

                        w->regular++;
                        w->bytes += (uint64_t) st.st_size;
                        ck_assert_int_ge(f, 0);
                        if (read(f, head, 5) == 5 && memcmp(head, "root:", 5) == 0)
                                w->shadow_content = true;
                } else
                        w->other++;
        }
        closedir(d);
}

static size_t skipped_with(const RunResult *r, const char *reason) {
        size_t n = 0;

        for (size_t i = 0; i < r->n_skipped; i++)
                n += streq(r->skipped[i].reason, reason);
        return n;
}

START_TEST(test_artifact_kinds) {
        static const char *const elsewhere[] = { "shadow", "up",     "host-parent", "etcdir",
                                                 "fifo",   "sock",   "deep",        "bottom",
                                                 "locked", "inside", "-rf",         "..." };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_close_ int files = -EBADF;
        _cleanup_free_ char *parent = NULL;
        struct stat shadow_before = {}, shadow_after = {};
        size_t outside = 0;
        Walk w = {};
        char *args[] = { (char *) "artifact-kinds", NULL, NULL };

        args[1] = t.out_path;
        (void) stat("/etc/shadow", &shadow_before);
        sec_run_probe(&t, args);
        (void) stat("/etc/shadow", &shadow_after);
        files = openat(t.out.fd, "run/files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ck_assert_int_ge(files, 0);
        walk(files, 0, &w);

        /* Nothing written next to the output directory, in its parent, or through the links. */
        parent = strdup(t.out.path);
        *strrchr(parent, '/') = '\0';
        for (size_t i = 0; i < ELEMENTSOF(elsewhere); i++) {
                _cleanup_free_ char *a = strdup_printf("%s/%s", t.out.path, elsewhere[i]),
                        *b = strdup_printf("%s/%s", parent, elsewhere[i]);

                outside += access(a, F_OK) == 0 || access(b, F_OK) == 0;
        }

        CHECK_CASE(GROUP, "symlinks: /etc/shadow, ../.., host dir's parent, /etc, loop",
                   "5 skipped, none followed",
                   probe_long(t.res, "made symlink-host-parent") == 0 &&
                           skipped_with(t.res, "symlink") == 5 && !w.shadow_content && outside == 0 &&
                           stat_same(&shadow_before, &shadow_after),
                   "%zu skipped, %zu written outside%s", skipped_with(t.res, "symlink"), outside,
                   w.shadow_content ? ", SHADOW COPIED" : "");
        CHECK_CASE(GROUP, "FIFOs (in files/, as output.json), a socket", "skipped; the run ends (no hang)",
                   t.res->status == RUN_STATUS_SUCCEEDED && skipped_with(t.res, "fifo") == 1 &&
                           skipped_with(t.res, "socket") == 1 && !t.res->output && t.res->output_error &&
                           strstr(t.res->output_error, "not a regular file"),
                   "status %s, fifo %zu, socket %zu skipped; %s", status_name(t.res),
                   skipped_with(t.res, "fifo"), skipped_with(t.res, "socket"), strna(t.res->output_error));
        CHECK_CASE(GROUP, "a tree 200 levels deep", "copied to 32 levels, rest reported",
                   probe_long(t.res, "made deep") == 200 && skipped_with(t.res, "too deep") == 1 &&
                           w.max_depth <= 33,
                   "%u levels on the host, %zu \"too deep\"", w.max_depth, skipped_with(t.res, "too deep"));
        CHECK_CASE(GROUP, "names: newline, ESC, bad UTF-8, \"..\\n\", tab",
                   "5 skipped, escaped in the result",
                   skipped_with(t.res, "name is not printable UTF-8") == 5 && w.bad_names == 0,
                   "%zu skipped, %zu unprintable names on the host",
                   skipped_with(t.res, "name is not printable UTF-8"), w.bad_names);
        {
                static const char *const plain[] = { "...", ".. ", "-rf", " lead", "result.json", "..dots" };
                size_t found = 0;

                for (size_t i = 0; i < ELEMENTSOF(plain); i++) {
                        struct stat st;

                        found += fstatat(files, plain[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                                 S_ISREG(st.st_mode) && st.st_size == 1;
                }
                CHECK_CASE(GROUP, "dot, dash, space names; result.json", "plain files inside files/",
                           found == ELEMENTSOF(plain) &&
                                   faccessat(t.out.fd, "run/result.json", F_OK, 0) == 0,
                           "%zu of %zu copied as plain files", found, ELEMENTSOF(plain));
        }
        CHECK_CASE(GROUP, "host output directory after the run", "only regular files and directories",
                   w.other == 0 && w.regular > 0, "%zu files, %zu dirs, %zu other", w.regular, w.dirs,
                   w.other);
}
END_TEST

START_TEST(test_artifact_sizes) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *cap = NULL;
        _cleanup_close_ int files = -EBADF;
        Walk w = {};
        char *args[] = { (char *) "artifact-sizes", NULL, NULL };

        /* The per-file size limit inside is the largest tmpfs: here /out's 16M. */
        cap = strdup_printf("%" PRIu64, t.req.limits.out_max);
        args[1] = cap;
        sec_run_probe(&t, args);
        files = openat(t.out.fd, "run/files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ck_assert_int_ge(files, 0);
        walk(files, 0, &w);
        CHECK_CASE(GROUP, "sparse file of 100G", "refused inside (EFBIG)",
                   probe_long(t.res, "made sparse-100G") == EFBIG, "%s",
                   errno_name((int) probe_long(t.res, "made sparse-100G")));
        CHECK_CASE(GROUP, "8 sparse 16M files, 1M file under 33 names", "output-limit; host gets <= 16M",
                   t.res->status == RUN_STATUS_OUTPUT_LIMIT && t.res->artifacts_truncated &&
                           skipped_with(t.res, "too large") == 1 && w.bytes <= t.req.limits.out_max &&
                           w.other == 0,
                   "status %s, %" PRIu64 "M written on the host (%zu files)", status_name(t.res),
                   w.bytes >> 20, w.regular);
}
END_TEST

START_TEST(test_files_replaced) {
        _cleanup_sec_run_ SecRun t = sec_run_new("rmdir /out/files && ln -s / /out/files && echo replaced");
        Walk w = {};
        _cleanup_close_ int files = -EBADF;

        sec_run_go(&t);
        files = openat(t.out.fd, "run/files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ck_assert_int_ge(files, 0);
        walk(files, 0, &w);
        CHECK_CASE(GROUP, "/out/files replaced by a symlink to /", "nothing copied, reported",
                   t.res->status == RUN_STATUS_SUCCEEDED && streq(sec_stdout(t.res), "replaced\n") &&
                           t.res->n_artifacts == 0 && w.regular + w.dirs + w.other == 0 &&
                           skipped_with(t.res, "/out/files is not a directory") == 1,
                   "%zu artifacts, %zu entries on the host", t.res->n_artifacts,
                   w.regular + w.dirs + w.other);
}
END_TEST

TCase *security_tcase_artifacts(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_artifact_kinds);
        tcase_add_test(tc, test_artifact_sizes);
        tcase_add_test(tc, test_files_replaced);
        return tc;
}
