/* Tests for skilld/shared: the checked parsers, string helpers, atomic writes and hashing that
 * everything else trusts. */
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <systemd/sd-id128.h>

#include "error.h"
#include "fileio.h"
#include "hash.h"
#include "parse-util.h"
#include "random-id.h"
#include "term-escape.h"
#include "thread-util.h"
#include "test-util.h"

START_TEST(test_safe_atou64) {
        uint64_t v = 7;

        ck_assert_int_eq(safe_atou64("0", &v), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(safe_atou64("18446744073709551615", &v), 0);
        ck_assert_uint_eq(v, UINT64_MAX);
        v = 7;
        ck_assert_int_eq(safe_atou64("18446744073709551616", &v), -ERANGE);
        ck_assert_int_eq(safe_atou64("-1", &v), -EINVAL);
        ck_assert_int_eq(safe_atou64(" 1", &v), -EINVAL);
        ck_assert_int_eq(safe_atou64("1x", &v), -EINVAL);
        ck_assert_int_eq(safe_atou64("", &v), -EINVAL);
        ck_assert_uint_eq(v, 7); /* untouched on failure */
}
END_TEST

START_TEST(test_safe_atoi) {
        int v = 5;
        unsigned u = 5;

        ck_assert_int_eq(safe_atoi("-12", &v), 0);
        ck_assert_int_eq(v, -12);
        ck_assert_int_eq(safe_atoi("2147483648", &v), -ERANGE);
        ck_assert_int_eq(safe_atoi("12 ", &v), -EINVAL);
        ck_assert_int_eq(safe_atou("4294967296", &u), -ERANGE);
        ck_assert_uint_eq(u, 5);
}
END_TEST

START_TEST(test_parse_size) {
        uint64_t v = 0;

        ck_assert_int_eq(parse_size("512", &v), 0);
        ck_assert_uint_eq(v, 512);
        ck_assert_int_eq(parse_size("256M", &v), 0);
        ck_assert_uint_eq(v, 256ULL << 20);
        ck_assert_int_eq(parse_size("1.5G", &v), 0);
        ck_assert_uint_eq(v, 3ULL << 29);
        ck_assert_int_eq(parse_size("64KiB", &v), 0);
        ck_assert_uint_eq(v, 64ULL << 10);
        ck_assert_int_eq(parse_size("1X", &v), -EINVAL);
        ck_assert_int_eq(parse_size("-1M", &v), -EINVAL);
        ck_assert_int_eq(parse_size("M", &v), -EINVAL);
        ck_assert_int_eq(parse_size("99999999999T", &v), -ERANGE);
}
END_TEST

START_TEST(test_parse_sec) {
        uint64_t v = 0;

        ck_assert_int_eq(parse_sec("30", &v), 0);
        ck_assert_uint_eq(v, 30000000ULL);
        ck_assert_int_eq(parse_sec("1.5", &v), 0);
        ck_assert_uint_eq(v, 1500000ULL);
        ck_assert_int_eq(parse_sec("500ms", &v), 0);
        ck_assert_uint_eq(v, 500000ULL);
        ck_assert_int_eq(parse_sec("2min", &v), 0);
        ck_assert_uint_eq(v, 120000000ULL);
        ck_assert_int_eq(parse_sec("1.5d", &v), 0);
        ck_assert_uint_eq(v, 129600000000ULL);
        ck_assert_int_eq(parse_sec("2w", &v), 0);
        ck_assert_uint_eq(v, 1209600000000ULL);
        ck_assert_int_eq(parse_sec("1y", &v), -EINVAL);
        ck_assert_int_eq(parse_sec("", &v), -EINVAL);
}
END_TEST

START_TEST(test_utf8_and_escape) {
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL;

        ck_assert(utf8_is_valid("plain", 5));
        ck_assert(utf8_is_valid("h\xc3\xa9", 3));
        ck_assert(!utf8_is_valid("\xc0\xaf", 2));               /* overlong '/' */
        ck_assert(!utf8_is_valid("\xed\xa0\x80", 3));           /* surrogate */
        ck_assert(!utf8_is_valid("\xf4\x90\x80\x80", 4));       /* past U+10FFFF */
        ck_assert(!utf8_is_valid("\xe2\x82", 2));               /* truncated */
        ck_assert(string_has_cc("a\nb", 3));
        ck_assert(!string_has_cc("a b", 3));

        /* A name with an escape sequence and a newline cannot forge a line of output. */
        e1 = cescape("evil\x1b[2J\nfake: ok");
        ck_assert_str_eq(e1, "evil\\x1b[2J\\x0afake: ok");
        e2 = cescape("caf\xc3\xa9\xff");
        ck_assert_str_eq(e2, "caf\xc3\xa9\\xff");
        /* C1 controls are valid UTF-8 but controls all the same; U+00A0 is not one. */
        e3 = cescape("\xc2\x9b" "31m\xc2\x85\xc2\xa0");
        ck_assert_str_eq(e3, "\\xc2\\x9b" "31m\\xc2\\x85\xc2\xa0");
}
END_TEST

START_TEST(test_layout_controls) {
        /* Each bidirectional control and separator, and its neighbours that are fine. */
        static const struct {
                const char *utf8;
                const char *escaped;    /* NULL: passes through */
        } cases[] = {
                { "\xd8\x9c", "\\u061c" },            /* ARABIC LETTER MARK */
                { "\xd8\x9b", NULL },                  /* U+061B, a semicolon */
                { "\xe2\x80\x8e", "\\u200e" },        /* LRM */
                { "\xe2\x80\x8f", "\\u200f" },        /* RLM */
                { "\xe2\x80\x8d", NULL },              /* U+200D, the emoji joiner */
                { "\xe2\x80\xa8", "\\u2028" },        /* LINE SEPARATOR */
                { "\xe2\x80\xa9", "\\u2029" },        /* PARAGRAPH SEPARATOR */
                { "\xe2\x80\xaa", "\\u202a" },        /* LRE */
                { "\xe2\x80\xae", "\\u202e" },        /* RLO */
                { "\xe2\x80\xaf", NULL },              /* U+202F, a narrow space */
                { "\xe2\x81\xa6", "\\u2066" },        /* LRI */
                { "\xe2\x81\xa9", "\\u2069" },        /* PDI */
                { "\xe2\x81\xaa", NULL },              /* U+206A, deprecated, inert */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *in = strdup_printf("a%sb", cases[i].utf8), *e = cescape(in),
                                    *want = strdup_printf("a%sb", cases[i].escaped ?: cases[i].utf8);

                ck_assert(utf8_is_valid(in, strlen(in)));
                ck_assert_msg(utf8_has_layout_control(in, strlen(in)) == !!cases[i].escaped, "case %zu", i);
                ck_assert_str_eq(e, want);
        }

        /* "invoice_\u202egnp.exe" shows as "invoice_exe.png": escaped, the trick is in plain
         * sight, and the rest of the text keeps its UTF-8. */
        {
                _cleanup_free_ char *e = cescape("invoice_\xe2\x80\xaegnp.exe caf\xc3\xa9");

                ck_assert_str_eq(e, "invoice_\\u202egnp.exe caf\xc3\xa9");
        }
        /* The worst case still fits cescape()'s 4 bytes per input byte. */
        {
                _cleanup_free_ char *in = strdup("\xd8\x9c\xd8\x9c\xd8\x9c"), *e = cescape(in);

                ck_assert_str_eq(e, "\\u061c\\u061c\\u061c");
        }
}
END_TEST

START_TEST(test_strv) {
        _cleanup_strv_free_ char **l = NULL, **c = NULL;

        ck_assert_int_eq(strv_extend(&l, "b"), 0);
        ck_assert_int_eq(strv_extend(&l, "a"), 0);
        ck_assert_int_eq(strv_push(&l, strdup("c")), 0);
        ck_assert_uint_eq(strv_length(l), 3);
        strv_sort(l);
        ck_assert_str_eq(l[0], "a");
        ck_assert_str_eq(l[2], "c");
        ck_assert(strv_contains(l, "b"));
        ck_assert(!strv_contains(l, "d"));
        c = strv_copy(l);
        ck_assert_ptr_nonnull(c);
        ck_assert_str_eq(c[1], "b");
        ck_assert_ptr_null(c[3]);
}
END_TEST

/* format_utc_timestamp() against glibc's gmtime_r(): the epoch, leap days and the centuries
 * around them, the ends of months and years, and a day's worth of seconds stepped through a
 * few thousand years. */
static void assert_utc_as_gmtime(uint64_t usec) {
        char got[UTC_TIMESTAMP_MAX], want[64];
        time_t t = (time_t) (usec / 1000000U);
        struct tm tm;

        ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
        (void) snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                        (unsigned) (usec % 1000000U));
        ck_assert_int_eq(format_utc_timestamp(usec, got), 0);
        ck_assert_str_eq(got, want);
}

START_TEST(test_utc_timestamp) {
        static const uint64_t secs[] = {
                0, 59, 86399, 86400, 951782399, 951782400, 951868800, 978307199, 1709164800,
                1709251199, 1709251200, 1795686897, 4107456000, 4107542400, 4102444800, 253402300799,
        };
        char buf[UTC_TIMESTAMP_MAX];

        for (size_t i = 0; i < ELEMENTSOF(secs); i++) {
                assert_utc_as_gmtime(secs[i] * 1000000U);
                assert_utc_as_gmtime(secs[i] * 1000000U + 999999U);
        }
        for (uint64_t s = 0; s < 253402300800U; s += 86400U * 97U + 3607U)
                assert_utc_as_gmtime(s * 1000000U + s % 1000000U);
        ck_assert_int_eq(format_utc_timestamp(UINT64_C(1795686897123456), buf), 0);
        ck_assert_str_eq(buf, "2026-11-26T09:54:57.123456Z");
        ck_assert_int_eq(format_utc_timestamp(UINT64_C(253402300800) * 1000000U, buf), -ERANGE);
        ck_assert_int_eq(format_utc_timestamp(UINT64_MAX, buf), -ERANGE);
}
END_TEST

START_TEST(test_error_first_wins) {
        _cleanup_free_ char *e = NULL;

        ck_assert_int_eq(error_setf(&e, -EINVAL, "inner: %s", "why"), -EINVAL);
        ck_assert_int_eq(error_setf(&e, EPERM, "outer"), -EPERM);
        ck_assert_str_eq(e, "inner: why");
        ck_assert_int_eq(error_setf(NULL, -ENOENT, "ignored"), -ENOENT);
}
END_TEST

START_TEST(test_atomic_write) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n;

        ck_assert_int_eq(mkdir_p_at(t.fd, "a/b", 0755), 0);
        ck_assert_int_eq(write_file_atomic_at(t.fd, "a/b/f", "one", 3, 0600), 0);
        ck_assert_int_eq(write_file_atomic_at(t.fd, "a/b/f", "two!", 4, 0640), 0);
        ck_assert_int_eq(read_full_file_at(t.fd, "a/b/f", 100, true, &buf, &n), 0);
        ck_assert_str_eq(buf, "two!");
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(fstatat(t.fd, "a/b/f", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0640);

        /* No temporary file is left behind. */
        ck_assert_int_eq(rm_rf_at(t.fd, "a/b/f"), 0);
        ck_assert_int_eq(unlinkat(t.fd, "a/b", AT_REMOVEDIR), 0);

        /* The cap is enforced. */
        free(buf);
        buf = NULL;
        ck_assert_int_eq(write_file_atomic_at(t.fd, "big", "0123456789", 10, 0644), 0);
        ck_assert_int_eq(read_full_file_at(t.fd, "big", 9, true, &buf, &n), -EFBIG);
        ck_assert_ptr_null(buf);
}
END_TEST

/* mkdir_p_open_at(): the one-call path for a directory that exists and the walk that makes one
 * answer alike; neither goes through a symlink, wherever it is on the path. */
START_TEST(test_mkdir_p_open) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_close_ int made = -EBADF, found = -EBADF, top = -EBADF;
        struct stat a, b;

        ck_assert_int_eq(mkdir_p_open_at(t.fd, "x/y/z", 0700, &made), 0);
        ck_assert_int_eq(mkdir_p_open_at(t.fd, "x/y/z", 0700, &found), 0);
        ck_assert_int_eq(fstat(made, &a), 0);
        ck_assert_int_eq(fstat(found, &b), 0);
        ck_assert(S_ISDIR(a.st_mode));
        ck_assert_uint_eq(a.st_mode & 07777, 0700 & ~umask_get());
        ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
        ck_assert_int_eq(mkdir_p_at(t.fd, "x/./y/../y/z", 0755), 0);

        /* A symlink on the way or at the end: refused whether the rest exists or not. */
        ck_assert_int_eq(symlinkat("x", t.fd, "link"), 0);
        ck_assert_int_lt(mkdir_p_at(t.fd, "link/y/z", 0755), 0);
        ck_assert_int_lt(mkdir_p_at(t.fd, "link/new", 0755), 0);
        ck_assert_int_lt(mkdir_p_at(t.fd, "link", 0755), 0);
        ck_assert_int_lt(fstatat(t.fd, "x/new", &a, 0), 0);

        /* A file where a folder should be. */
        ck_assert_int_eq(write_file_atomic_at(t.fd, "x/file", "", 0, 0644), 0);
        ck_assert_int_eq(mkdir_p_at(t.fd, "x/file", 0755), -ENOTDIR);
        ck_assert_int_eq(mkdir_p_at(t.fd, "x/file/sub", 0755), -ENOTDIR);

        /* No component: dir_fd itself. */
        ck_assert_int_eq(mkdir_p_open_at(t.fd, "", 0755, &top), 0);
        ck_assert_int_eq(fstat(top, &a), 0);
        ck_assert_int_eq(fstat(t.fd, &b), 0);
        ck_assert(a.st_ino == b.st_ino);
}
END_TEST

typedef struct ThreadSeen {
        sigset_t mask;
        size_t stack;
        cpu_set_t cpus;
} ThreadSeen;

static void *thread_look(void *arg) {
        ThreadSeen *seen = arg;
        pthread_attr_t attr;

        ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &seen->mask), 0);
        ck_assert_int_eq(pthread_getattr_np(pthread_self(), &attr), 0);
        ck_assert_int_eq(pthread_attr_getstacksize(&attr, &seen->stack), 0);
        (void) pthread_attr_destroy(&attr);
        ck_assert_int_eq(sched_getaffinity(0, sizeof(seen->cpus), &seen->cpus), 0);
        return NULL;
}

START_TEST(test_thread_start_small) {
        ThreadSeen seen = {};
        cpu_set_t mine, one;
        pthread_t t = 0;
        int cpu = -1;

        /* Every signal blocked from its first instruction, whatever the caller's mask; a small
         * stack; the caller's CPUs unless told. */
        ck_assert_int_eq(thread_start_small(&t, thread_look, &seen, NULL), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert_int_eq(sigismember(&seen.mask, SIGTERM), 1);
        ck_assert_int_eq(sigismember(&seen.mask, SIGCHLD), 1);
        ck_assert_int_eq(sigismember(&seen.mask, SIGRTMIN), 1);
        ck_assert_uint_le(seen.stack, 128 * 1024);
        ck_assert_int_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
        ck_assert(CPU_EQUAL(&seen.cpus, &mine));

        for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
                if (CPU_ISSET(i, &mine))
                        cpu = i;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ck_assert_int_eq(thread_start_small(&t, thread_look, &seen, &one), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);
        ck_assert(CPU_EQUAL(&seen.cpus, &one));
        /* The caller's own affinity is not touched. */
        ck_assert_int_eq(sched_getaffinity(0, sizeof(one), &one), 0);
        ck_assert(CPU_EQUAL(&one, &mine));
}
END_TEST

START_TEST(test_fsync_many) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_close_ int f = -EBADF, g = -EBADF;
        int p[2], k[5];

        f = openat(t.fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(f, 0);
        ck_assert_int_eq(write(f, "x", 1), 1);
        g = openat(t.fd, "g", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(g, 0);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);

        /* Each fd gets its own result, whichever thread synced it; negative fds are skipped. */
        ck_assert_int_eq(fsync_many((const int[]) { f, -EBADF, g, t.fd }, 4, k), 0);
        ck_assert_int_eq(k[0], 0);
        ck_assert_int_eq(k[1], 0);
        ck_assert_int_eq(k[2], 0);
        ck_assert_int_eq(k[3], 0);
        /* A pipe cannot be synced (EINVAL), wherever it is in the list. */
        ck_assert_int_eq(fsync_many((const int[]) { p[0], f, g, t.fd, p[1] }, 5, k), -EINVAL);
        ck_assert_int_eq(k[0], -EINVAL);
        ck_assert_int_eq(k[1], 0);
        ck_assert_int_eq(k[4], -EINVAL);
        ck_assert_int_eq(fsync_many((const int[]) { f }, 1, NULL), 0);
        ck_assert_int_eq(fsync_many(NULL, 0, NULL), 0);
        ck_assert_int_eq(fsync_many((const int[9]) {}, 9, NULL), -E2BIG);
        safe_close(p[0]);
        safe_close(p[1]);
}
END_TEST

START_TEST(test_close_all_fds_except) {
        int keep[3], other[3], status;
        pid_t pid;

        for (size_t i = 0; i < 3; i++) {
                keep[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                other[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                ck_assert_int_ge(keep[i], 0);
                ck_assert_int_ge(other[i], 0);
        }
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                /* Unsorted, with a duplicate, a negative and a standard fd in the list. */
                int list[] = { keep[2], -EBADF, keep[0], 1, keep[2], keep[1] };
                bool ok = close_all_fds_except(list, ELEMENTSOF(list)) == 0;

                for (size_t i = 0; i < 3; i++)
                        ok = ok && fcntl(keep[i], F_GETFD) >= 0 && fcntl(other[i], F_GETFD) < 0 &&
                             errno == EBADF;
                ok = ok && fcntl(0, F_GETFD) >= 0 && fcntl(2, F_GETFD) >= 0;
                ok = ok && close_all_fds_except(NULL, 0) == 0 && fcntl(keep[0], F_GETFD) < 0;
                _exit(ok ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        for (size_t i = 0; i < 3; i++) {
                safe_close(keep[i]);
                safe_close(other[i]);
        }
}
END_TEST

START_TEST(test_read_nofollow) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *buf = NULL;

        test_write_file(t.fd, "target", "secret", 0644);
        ck_assert_int_eq(symlinkat("target", t.fd, "link"), 0);
        ck_assert_int_eq(read_full_file_at(t.fd, "link", 100, true, &buf, NULL), -ELOOP);
        ck_assert_ptr_null(buf);
}
END_TEST

START_TEST(test_sha256) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        char hex[SHA256_HEX_SIZE];

        ck_assert_int_eq(sha256_new(&h), 0);
        ck_assert_int_eq(sha256_update(h, "abc", 3), 0);
        ck_assert_int_eq(sha256_final_hex(h, hex), 0);
        ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

/* Both implementations (hash.c): libmd for small inputs, Nettle loaded by the first large one,
 * on the FIPS 180-4 vectors, whole and in uneven pieces, and for a file and a pipe. */
static void sha256_chunked(const char *data, size_t n, size_t piece, char hex[static SHA256_HEX_SIZE]) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;

        ck_assert_int_eq(sha256_new(&h), 0);
        for (size_t off = 0; off < n; off += piece)
                ck_assert_int_eq(sha256_update(h, data + off, MIN(piece, n - off)), 0);
        ck_assert_int_eq(sha256_final_hex(h, hex), 0);
}

START_TEST(test_sha256_both) {
        static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        static const char *const want_two = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
        static const char *const want_million = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *million = malloc(1000000);
        _cleanup_close_ int fd = -EBADF;
        char hex[SHA256_HEX_SIZE];
        uint64_t n = 0;
        int p[2];

        ck_assert_ptr_nonnull(million);
        memset(million, 'a', 1000000);
        if (!streq_ptr(getenv("CK_FORK"), "no"))
                ck_assert(!sha256_fast_loaded());
        for (int round = 0; round < 2; round++) {
                /* Round 0 in this test's own process (check forks one per test): libmd, until the
                 * large buffer loads Nettle; round 1: Nettle for everything. */
                ck_assert_int_eq(sha256_buffer_hex(two_blocks, strlen(two_blocks), hex), 0);
                ck_assert_str_eq(hex, want_two);
                sha256_chunked(two_blocks, strlen(two_blocks), 7, hex);
                ck_assert_str_eq(hex, want_two);
                sha256_chunked(million, 1000000, 1000, hex);
                ck_assert_str_eq(hex, want_million);
                ck_assert_int_eq(sha256_buffer_hex("", 0, hex), 0);
                ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
                ck_assert_int_eq(sha256_buffer_hex(million, 1000000, hex), 0);
                ck_assert_str_eq(hex, want_million);
                /* libnettle8 is installed wherever the tests run (libarchive13 needs it). */
                ck_assert(sha256_fast_loaded());
        }

        /* A file (its size known) and a pipe (taken as large). */
        ck_assert_int_eq(write_file_atomic_at(t.fd, "f", million, 100000, 0644), 0);
        fd = openat(t.fd, "f", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(sha256_fd(fd, hex, &n), 0);
        ck_assert_uint_eq(n, 100000);
        {
                char want[SHA256_HEX_SIZE];

                ck_assert_int_eq(sha256_buffer_hex(million, 100000, want), 0);
                ck_assert_str_eq(hex, want);
        }
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(write(p[1], two_blocks, strlen(two_blocks)), (ssize_t) strlen(two_blocks));
        (void) close(p[1]);
        ck_assert_int_eq(sha256_fd(p[0], hex, &n), 0);
        (void) close(p[0]);
        ck_assert_str_eq(hex, want_two);
}
END_TEST

START_TEST(test_rm_rf_does_not_follow_links) {
        _cleanup_test_dir_ TestDir outside = test_dir_new(), t = test_dir_new();
        struct stat st;

        test_write_file(outside.fd, "keep", "x", 0644);
        test_write_file(t.fd, "tree/file", "y", 0644);
        ck_assert_int_eq(symlinkat(outside.path, t.fd, "tree/link"), 0);
        ck_assert_int_eq(rm_rf_at(t.fd, "tree"), 0);
        ck_assert_int_eq(fstatat(t.fd, "tree", &st, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(fstatat(outside.fd, "keep", &st, 0), 0);
}
END_TEST

START_TEST(test_atomic_write_umask) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        struct stat st;
        mode_t old = umask(077);

        ck_assert_uint_eq(umask_get(), 077);
        ck_assert_int_eq(write_file_atomic_at(t.fd, "f", "x", 1, 0644), 0);
        umask(old);
        ck_assert_int_eq(fstatat(t.fd, "f", &st, 0), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
}
END_TEST

START_TEST(test_open_regular) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;

        test_write_file(t.fd, "file", "data", 0644);
        ck_assert_int_eq(mkfifoat(t.fd, "fifo", 0644), 0);
        ck_assert_int_eq(mkdirat(t.fd, "dir", 0755), 0);
        /* A FIFO without a writer: refused at once, not waited on. */
        ck_assert_int_eq(open_regular_at(t.fd, "fifo", O_RDONLY), -EBADFD);
        ck_assert_str_eq(open_regular_strerror(-EBADFD), "not a regular file (a FIFO, socket or device)");
        ck_assert_int_eq(read_full_file_at(t.fd, "fifo", 100, false, &buf, NULL), -EBADFD);
        ck_assert_int_eq(open_regular_at(t.fd, "dir", O_RDONLY), -EISDIR);
        fd = open_regular_at(t.fd, "file", O_RDONLY);
        ck_assert_int_ge(fd, 0);
        /* Blocking again, close-on-exec. */
        ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}
END_TEST

/* What term_escape_write() makes of the chunks, read back from a pipe. */
static char *escaped(const char *const *chunks, size_t n) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        TermEscape e = { .on = true };
        char *out = NULL;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(term_escape_write(&e, p[1], chunks[i], strlen(chunks[i])), 0);
        ck_assert_int_eq(term_escape_flush(&e, p[1]), 0);
        p[1] = safe_close(p[1]);
        ck_assert_int_eq(read_full_fd(p[0], 1 << 16, &out, NULL), 0);
        return out;
}

START_TEST(test_term_escape) {
        static const char *const osc[] = { "\x1b]52;c;ZWNobw==\x07\x1b[6n\x1b(0\x1b[31mred\r\x7f\tok\n" };
        /* é and U+202E cut between writes, U+009B whole, an invalid byte, a cut sequence at the end. */
        static const char *const cut[] = { "caf\xc3", "\xa9 \xe2\x80", "\xae \xc2\x9b \xff \xe2\x82" };
        _cleanup_free_ char *a = escaped(osc, 1), *b = escaped(cut, 3);
        TermEscape off;

        ck_assert_str_eq(a, "\\x1b]52;c;ZWNobw==\\x07\\x1b[6n\\x1b(0\\x1b[31mred\\x0d\\x7f\tok\n");
        ck_assert_str_eq(b, "caf\xc3\xa9 \\u202e \\u009b \\xff \\xe2\\x82");

        /* Not a terminal: the bytes as they are. */
        term_escape_init(&off, -EBADF);
        ck_assert(!off.on);
}
END_TEST

/* Ids as sd-id128 makes them (the service's are compared with ours, and both show in one list):
 * sd-id128 reads ours back as the same id, a version 4 UUID. */
START_TEST(test_random_id) {
        char a[RANDOM_ID_STRING_MAX], b[RANDOM_ID_STRING_MAX], again[SD_ID128_STRING_MAX];
        sd_id128_t id;

        ck_assert_int_eq(random_id(a), 0);
        ck_assert_int_eq(random_id(b), 0);
        ck_assert_uint_eq(strlen(a), 32);
        ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
        ck_assert_str_ne(a, b);
        ck_assert_int_eq(sd_id128_from_string(a, &id), 0);
        ck_assert_str_eq(sd_id128_to_string(id, again), a);
        ck_assert_int_eq(a[12], '4');
        ck_assert_ptr_nonnull(strchr("89ab", a[16]));
}
END_TEST

static Suite *shared_suite(void) {
        Suite *s = suite_create("shared");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_safe_atou64);
        tcase_add_test(tc, test_safe_atoi);
        tcase_add_test(tc, test_parse_size);
        tcase_add_test(tc, test_parse_sec);
        tcase_add_test(tc, test_utf8_and_escape);
        tcase_add_test(tc, test_layout_controls);
        tcase_add_test(tc, test_strv);
        tcase_add_test(tc, test_error_first_wins);
        tcase_add_test(tc, test_atomic_write);
        tcase_add_test(tc, test_fsync_many);
        tcase_add_test(tc, test_thread_start_small);
        tcase_add_test(tc, test_close_all_fds_except);
        tcase_add_test(tc, test_read_nofollow);
        tcase_add_test(tc, test_atomic_write_umask);
        tcase_add_test(tc, test_open_regular);
        tcase_add_test(tc, test_term_escape);
        tcase_add_test(tc, test_sha256);
        tcase_add_test(tc, test_sha256_both);
        tcase_add_test(tc, test_random_id);
        tcase_add_test(tc, test_rm_rf_does_not_follow_links);
        tcase_add_test(tc, test_mkdir_p_open);
        tcase_add_test(tc, test_utc_timestamp);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(shared_suite());
}
