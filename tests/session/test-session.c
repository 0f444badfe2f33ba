/* Tests for skilld/session: a session is created with an empty work/ and its record, loads back
 * as written, lists oldest first, refuses bad ids, is held by one run at a time, expires after its
 * idle TTL and is then removed whole by GC, and is gone whole after rm. */
#include <sys/file.h>
#include <sys/stat.h>

#include "session.h"
#include "test-util.h"

static SessionStore *store_new(TestDir *d) {
        SessionStore *st = NULL;
        _cleanup_free_ char *path = strdup_printf("%s/sessions", d->path), *error = NULL;

        ck_assert_msg(session_store_open(path, &st, &error) == 0, "%s", strna(error));
        return st;
}

START_TEST(test_create_load_list) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(session_store_freep) SessionStore *st = store_new(&d);
        _cleanup_(session_freep) Session *a = NULL, *b = NULL, *again = NULL;
        _cleanup_free_ char *error = NULL;
        Session **v = NULL;
        size_t n = 0;
        struct stat sb;
        uint64_t usage = 42;

        ck_assert_int_eq(session_create(st, 1000, "counter", 3600000000ULL, 1 << 20, 2, &a, NULL), 0);
        ck_assert(session_id_valid(a->id));
        ck_assert_int_eq(fstatat(st->dir_fd, a->id, &sb, 0), 0);
        ck_assert_uint_eq(sb.st_mode & 07777, 0700);
        ck_assert_int_eq(session_usage(st, a->id, &usage), 0);
        ck_assert_uint_eq(usage, 0);

        ck_assert_int_eq(session_load(st, a->id, &again), 0);
        ck_assert_uint_eq(again->owner, 1000);
        ck_assert_str_eq(again->skill, "counter");
        ck_assert_uint_eq(again->quota_bytes, 1 << 20);
        ck_assert_uint_eq(again->ttl_usec, 3600000000ULL);
        ck_assert_uint_eq(again->created_usec, a->created_usec);

        ck_assert_int_eq(session_create(st, 1000, "counter", 1, 1, 2, &b, NULL), 0);
        /* Two per user here. */
        ck_assert_int_eq(session_create(st, 1000, "counter", 1, 1, 2, &again, &error), -EUSERS);
        ck_assert_ptr_nonnull(strstr(error, "remove one"));

        ck_assert_int_eq(session_list(st, &v, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(v[0]->id, a->id);
        session_freev(v, n);

        ck_assert_int_eq(session_load(st, "../etc", &again), -EINVAL);
        ck_assert_int_eq(session_load(st, "0123456789abcdef0123456789abcdef", &again), -ENOENT);
}
END_TEST

START_TEST(test_lock_remove_expire) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(session_store_freep) SessionStore *st = store_new(&d);
        _cleanup_(session_freep) Session *a = NULL, *b = NULL, *gone = NULL;
        _cleanup_close_ int fd = -EBADF, fd2 = -EBADF;
        Session **v = NULL;
        size_t n = 0;

        ck_assert_int_eq(session_create(st, 0, "x", 1000000, 1 << 20, 8, &a, NULL), 0);
        ck_assert_int_eq(session_create(st, 0, "x", 1000000, 1 << 20, 8, &b, NULL), 0);

        /* One run at a time; rm waits for it too. */
        ck_assert_int_eq(session_open_locked(st, a->id, &fd), 0);
        ck_assert_int_eq(session_open_locked(st, a->id, &fd2), -EBUSY);
        ck_assert_int_eq(session_remove(st, a->id), -EBUSY);
        fd = safe_close(fd);

        ck_assert_int_eq(session_remove(st, a->id), 0);
        ck_assert_int_eq(session_load(st, a->id, &gone), -ENOENT);
        ck_assert_int_eq(session_remove(st, a->id), -ENOENT);

        /* Idle for longer than its TTL: GC removes it, and what a crashed removal left. */
        ck_assert(!session_expired(b, b->used_usec + 999999));
        ck_assert(session_expired(b, b->used_usec + 1000000));
        ck_assert_int_eq(session_touch(st, b, b->used_usec + 5000000), 0);
        ck_assert(!session_expired(b, b->used_usec + 1));
        ck_assert_int_eq(mkdirat(st->dir_fd, ".rm-0123", 0700), 0);
        ck_assert_int_eq(session_gc(st, b->used_usec + 500000), 0);
        ck_assert_int_eq(session_gc(st, b->used_usec + 1000000), 1);
        ck_assert_int_eq(session_list(st, &v, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(v);
        ck_assert_int_eq(faccessat(st->dir_fd, ".rm-0123", F_OK, AT_SYMLINK_NOFOLLOW), -1);
}
END_TEST

static Suite *session_suite(void) {
        Suite *s = suite_create("session");
        TCase *tc = tcase_create("store");

        tcase_add_test(tc, test_create_load_list);
        tcase_add_test(tc, test_lock_remove_expire);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(session_suite());
}
