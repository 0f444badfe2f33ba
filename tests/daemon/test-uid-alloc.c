/* Tests for uid-alloc.c: the run uid rule. Every uid comes from the range, is locked while held,
 * goes round the range before coming back, and is never handed out while a process has it. */
#include <dirent.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>

#include "parse-util.h"
#include "test-util.h"
#include "uid-alloc.h"

/* High in the space and far from the policy's default range: nobody has these. */
#define FIRST ((uid_t) 0x7A000000U)

static char *lock_path(const TestDir *d) {
        char *p = strdup_printf("%s/uids.lock", d->path);

        ck_assert_ptr_nonnull(p);
        return p;
}

START_TEST(test_collect_finds_our_uid) {
        _cleanup_free_ uid_t *l = NULL;
        size_t n = 0;

        ck_assert_int_eq(uid_collect_in_use(getuid(), 1, &l, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(l[0], getuid());

        free(l);
        l = NULL;
        ck_assert_int_eq(uid_collect_in_use(FIRST, 16, &l, &n), 0);
        ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_range_rotation_and_exhaustion) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL;
        _cleanup_free_ char *path = lock_path(&d), *error = NULL;
        int fds[3] = { -EBADF, -EBADF, -EBADF }, extra = -EBADF;
        uid_t uids[3], again;

        ck_assert_int_eq(uid_allocator_new(path, FIRST, 3, &a), 0);
        for (size_t i = 0; i < 3; i++) {
                ck_assert_int_eq(uid_allocator_take(a, &uids[i], &fds[i], NULL), 0);
                ck_assert_uint_ge(uids[i], FIRST);
                ck_assert_uint_lt(uids[i], FIRST + 3);
                for (size_t j = 0; j < i; j++)
                        ck_assert_uint_ne(uids[i], uids[j]);
        }

        /* All three held: none left, and the message says which range. */
        ck_assert_int_eq(uid_allocator_take(a, &again, &extra, &error), -EBUSY);
        ck_assert_ptr_nonnull(strstr(error, "in use"));

        /* Releasing one (closing its fd) frees exactly that one. */
        fds[1] = safe_close(fds[1]);
        ck_assert_int_eq(uid_allocator_take(a, &again, &extra, NULL), 0);
        ck_assert_uint_eq(again, uids[1]);
        safe_close(extra);
        for (size_t i = 0; i < 3; i++)
                safe_close(fds[i]);
}
END_TEST

START_TEST(test_rotation_goes_round) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL;
        _cleanup_free_ char *path = lock_path(&d);
        uid_t first, second;
        int fd = -EBADF;

        /* Taken and given back at once: the next one is still another uid. */
        ck_assert_int_eq(uid_allocator_new(path, FIRST, 8, &a), 0);
        ck_assert_int_eq(uid_allocator_take(a, &first, &fd, NULL), 0);
        fd = safe_close(fd);
        ck_assert_int_eq(uid_allocator_take(a, &second, &fd, NULL), 0);
        fd = safe_close(fd);
        ck_assert_uint_ne(first, second);
}
END_TEST

START_TEST(test_other_instance_locks_count) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL, *b = NULL;
        _cleanup_free_ char *path = lock_path(&d);
        int fa = -EBADF, fb = -EBADF;
        uid_t ua, ub;

        /* Two allocators on one lock file (two instances of the service) never share a uid. */
        ck_assert_int_eq(uid_allocator_new(path, FIRST, 2, &a), 0);
        ck_assert_int_eq(uid_allocator_new(path, FIRST, 2, &b), 0);
        ck_assert_int_eq(uid_allocator_take(a, &ua, &fa, NULL), 0);
        ck_assert_int_eq(uid_allocator_take(b, &ub, &fb, NULL), 0);
        ck_assert_uint_ne(ua, ub);
        safe_close(fa);
        safe_close(fb);
}
END_TEST

/* Several at once (the service's spares): the uids single takes would have given, in that order,
 * each locked on its own fd; fewer when fewer are free; -EBUSY when none is. */
START_TEST(test_take_many) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL, *b = NULL;
        _cleanup_free_ char *path = lock_path(&d), *error = NULL;
        int fds[8], other[8], single = -EBADF;
        uid_t uids[8], again[8], one;
        size_t n = 0, m = 0;

        ck_assert_int_eq(uid_allocator_new(path, FIRST, 5, &a), 0);
        ck_assert_int_eq(uid_allocator_new(path, FIRST, 5, &b), 0);
        ck_assert_int_eq(uid_allocator_take_many(a, 3, uids, fds, &n, NULL), 0);
        ck_assert_uint_eq(n, 3);
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_ge(uids[i], FIRST);
                ck_assert_uint_lt(uids[i], FIRST + 5);
                ck_assert_int_ge(fds[i], 0);
                /* One after the other round the range, as single takes go. */
                if (i > 0)
                        ck_assert_uint_eq(uids[i], FIRST + (uids[i - 1] - FIRST + 1) % 5);
        }
        /* The next single take goes on after them. */
        ck_assert_int_eq(uid_allocator_take(a, &one, &single, NULL), 0);
        ck_assert_uint_eq(one, FIRST + (uids[2] - FIRST + 1) % 5);
        single = safe_close(single);

        /* Another instance gets only what is left: one held by none of the four locks. */
        ck_assert_int_eq(uid_allocator_take_many(b, 8, again, other, &m, NULL), 0);
        ck_assert_uint_eq(m, 2);
        for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++)
                        ck_assert_uint_ne(again[i], uids[j]);
        ck_assert_int_eq(uid_allocator_take_many(b, 6, again + 2, other + 2, &m, &error), -EBUSY);
        ck_assert_ptr_nonnull(strstr(error, "in use"));
        safe_close(other[0]);
        safe_close(other[1]);

        /* Each lock on its own: closing the middle one frees that uid alone. */
        fds[1] = safe_close(fds[1]);
        ck_assert_int_eq(uid_allocator_take(b, &one, &single, NULL), 0);
        ck_assert_uint_ne(one, uids[0]);
        ck_assert_uint_ne(one, uids[2]);
        safe_close(single);
        safe_close(fds[0]);
        safe_close(fds[2]);
        ck_assert_int_eq(uid_allocator_take_many(a, 0, uids, fds, &n, NULL), -EINVAL);
}
END_TEST

START_TEST(test_process_holds_uid) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL;
        _cleanup_free_ char *path = lock_path(&d);
        int p[2], fd = -EBADF, fd2 = -EBADF;
        uid_t taken;
        pid_t pid;
        char c;

        if (geteuid() != 0)
                return; /* only root can become another uid */

        /* A process of FIRST+1 (say, a run of a service that was killed, still dying) with no
         * lock held: the allocator must skip that uid all the same. */
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setresgid(FIRST + 1, FIRST + 1, FIRST + 1) < 0 ||
                    setresuid(FIRST + 1, FIRST + 1, FIRST + 1) < 0)
                        _exit(1);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        safe_close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        safe_close(p[0]);

        ck_assert_int_eq(uid_allocator_new(path, FIRST, 2, &a), 0);
        for (int i = 0; i < 4; i++) {
                ck_assert_int_eq(uid_allocator_take(a, &taken, &fd, NULL), 0);
                ck_assert_uint_eq(taken, FIRST);
                fd = safe_close(fd);
        }
        /* With FIRST held too, nothing is left. */
        ck_assert_int_eq(uid_allocator_take(a, &taken, &fd, NULL), 0);
        ck_assert_int_eq(uid_allocator_take(a, &taken, &fd2, NULL), -EBUSY);
        safe_close(fd);

        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        ck_assert_int_eq(uid_allocator_take(a, &taken, &fd, NULL), 0);
        safe_close(fd);
}
END_TEST

/* Both ways of reading a process's uids agree, for every process of the host (the pidfd's where
 * the kernel has PIDFD_GET_INFO, else both are the status file). */
START_TEST(test_pidfd_and_status_agree) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned compared = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                uid_t a[4], b[4];
                unsigned pid;

                if (safe_atou(de->d_name, &pid) < 0 || pid == 0)
                        continue;
                if (uid_of_process((pid_t) pid, false, a) < 0 || uid_of_process((pid_t) pid, true, b) < 0)
                        continue; /* gone meanwhile */
                ck_assert_mem_eq(a, b, sizeof(a));
                compared++;
        }
        closedir(d);
        ck_assert_uint_gt(compared, 0);
}
END_TEST

/* Children whose real, effective and saved uids differ, one of them a zombie not reaped yet: each
 * uid counts, until the zombie is reaped. */
START_TEST(test_every_uid_of_a_process_counts) {
        _cleanup_free_ uid_t *l = NULL;
        int p[2];
        pid_t live, zombie;
        size_t n = 0;
        siginfo_t si = {};
        char c;

        if (geteuid() != 0)
                return; /* only root can become another uid */

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        live = fork();
        ck_assert_int_ge(live, 0);
        if (live == 0) {
                if (setresgid(FIRST + 4, FIRST + 4, FIRST + 4) < 0 ||
                    setresuid(FIRST + 4, FIRST + 5, FIRST + 6) < 0)
                        _exit(1);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        zombie = fork();
        ck_assert_int_ge(zombie, 0);
        if (zombie == 0) {
                if (setresgid(FIRST + 8, FIRST + 8, FIRST + 8) < 0 ||
                    setresuid(FIRST + 8, FIRST + 8, FIRST + 8) < 0)
                        _exit(1);
                _exit(0);
        }
        safe_close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        safe_close(p[0]);
        ck_assert_int_eq(waitid(P_PID, (id_t) zombie, &si, WEXITED | WNOWAIT), 0);

        ck_assert_int_eq(uid_collect_in_use(FIRST + 4, 5, &l, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(l[0], FIRST + 4);
        ck_assert_uint_eq(l[1], FIRST + 5);
        ck_assert_uint_eq(l[2], FIRST + 6);
        ck_assert_uint_eq(l[3], FIRST + 8);

        (void) kill(live, SIGKILL);
        (void) waitpid(live, NULL, 0);
        (void) waitpid(zombie, NULL, 0);
        free(l);
        l = NULL;
        ck_assert_int_eq(uid_collect_in_use(FIRST + 4, 5, &l, &n), 0);
        ck_assert_uint_eq(n, 0);
}
END_TEST

/* A uid of the user database that no process has, whose next uid is neither named nor in use. */
static bool find_named_uid(uid_t *ret) {
        struct passwd *pw;
        bool found = false;

        setpwent();
        while (!found && (pw = getpwent())) {
                _cleanup_free_ uid_t *l = NULL;
                size_t n = 1;

                if (pw->pw_uid == 0 || pw->pw_uid >= UINT32_MAX - 2 || getpwuid(pw->pw_uid + 1))
                        continue;
                if (uid_collect_in_use(pw->pw_uid, 2, &l, &n) < 0 || n > 0)
                        continue;
                *ret = pw->pw_uid;
                found = true;
        }
        endpwent();
        return found;
}

START_TEST(test_named_uid_skipped) {
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL, *b = NULL;
        _cleanup_free_ char *path = lock_path(&d), *error = NULL;
        uid_t named = 0, taken;
        int fd = -EBADF;

        if (!find_named_uid(&named))
                return; /* a user database without such an entry */

        /* The helper process answers (rule 3), before and after it was ended. */
        ck_assert_int_eq(uid_allocator_new(path, named, 2, &a), 0);
        for (int i = 0; i < 6; i++) {
                ck_assert_int_eq(uid_allocator_take(a, &taken, &fd, NULL), 0);
                ck_assert_uint_eq(taken, named + 1);
                fd = safe_close(fd);
                if (i % 2 == 1)
                        uid_allocator_stop_lookups(a);
        }
        uid_allocator_stop_lookups(a);
        uid_allocator_stop_lookups(a);

        ck_assert_int_eq(uid_allocator_new(path, named, 1, &b), 0);
        ck_assert_int_eq(uid_allocator_take(b, &taken, &fd, &error), -EBUSY);
        ck_assert_int_lt(fd, 0);
}
END_TEST

START_TEST(test_invalid_ranges) {
        UidAllocator *a = NULL;

        ck_assert_int_eq(uid_allocator_new("/nonexistent/lock", 0, 10, &a), -EINVAL);
        ck_assert_int_eq(uid_allocator_new("/nonexistent/lock", FIRST, 0, &a), -EINVAL);
        ck_assert_int_eq(uid_allocator_new("/nonexistent/lock", UINT32_MAX - 4, 10, &a), -EINVAL);
        ck_assert_ptr_null(a);
}
END_TEST

int main(void) {
        Suite *s = suite_create("uid-alloc");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_collect_finds_our_uid);
        tcase_add_test(tc, test_range_rotation_and_exhaustion);
        tcase_add_test(tc, test_rotation_goes_round);
        tcase_add_test(tc, test_other_instance_locks_count);
        tcase_add_test(tc, test_take_many);
        tcase_add_test(tc, test_process_holds_uid);
        tcase_add_test(tc, test_pidfd_and_status_agree);
        tcase_add_test(tc, test_every_uid_of_a_process_counts);
        tcase_add_test(tc, test_named_uid_skipped);
        tcase_add_test(tc, test_invalid_ranges);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
