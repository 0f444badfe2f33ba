/* The cache of the seccomp filter's programs (skilld/sandbox/seccomp-cache.c): what it serves is
 * byte for byte what libseccomp generates; an entry that is damaged, not ours alone, a symlink or
 * of another key is refused and replaced by a generated one; the directory is used only when
 * nobody else may write it. Against the real libseccomp and kernel, in scratch directories; any
 * user (the parts about other owners need root). */
#include <linux/filter.h>
#include <grp.h>
#include <seccomp.h>
#include <sys/wait.h>

#include "sandbox-internal.h"
#include "seccomp-dlopen.h"
#include "test-util.h"

static const char *variant_name(bool notify) {
        return notify ? "notify.bpf" : "errno.bpf";
}

/* The variants this kernel and libseccomp can build: the errno one, and the notify one if the
 * kernel has user notifications. */
static int n_variants(void) {
        if (!sandbox_seccomp_available())
                return 0;
        return sandbox_seccomp_notify_available() ? 2 : 1;
}

static void generate(bool notify, struct sock_filter **ret, size_t *ret_n) {
        _cleanup_free_ char *error = NULL;

        ck_assert_msg(sandbox_seccomp_program(notify, ret, ret_n, &error) == 0, "%s", strna(error));
        ck_assert_uint_gt(*ret_n, 0);
}

static void assert_same(const struct sock_filter *a, size_t n_a, const struct sock_filter *b, size_t n_b) {
        ck_assert_uint_eq(n_a, n_b);
        ck_assert_int_eq(memcmp(a, b, n_a * sizeof(*a)), 0);
}

/* The entry under dir_fd loads, and holds exactly the generated program. */
static void assert_entry_good(int dir_fd, const char *name, const char *key, const struct sock_filter *want,
                              size_t n_want) {
        _cleanup_free_ struct sock_filter *got = NULL;
        struct stat st;
        size_t n_got = 0;

        ck_assert_int_eq(fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(dir_fd, name, key, &got, &n_got), 0);
        assert_same(got, n_got, want, n_want);
}

/* get_at() on a refused entry generates, serves the generated program and rewrites the entry. */
static void assert_regenerated(int dir_fd, const char *name, const char *key, bool notify,
                               const struct sock_filter *want, size_t n_want) {
        _cleanup_free_ struct sock_filter *got = NULL;
        size_t n_got = 0;

        ck_assert_int_eq(sandbox_seccomp_cache_get_at(dir_fd, name, key, notify, &got, &n_got, NULL), 0);
        assert_same(got, n_got, want, n_want);
        assert_entry_good(dir_fd, name, key, want, n_want);
}

START_TEST(test_key) {
        _cleanup_free_ char *k_errno = NULL, *k_notify = NULL, *again = NULL;

        /* This test binary has a build-id (the toolchain's default), as skilld and skillctl do. */
        ck_assert_int_eq(sandbox_seccomp_cache_key(false, &k_errno), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_key(true, &k_notify), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_key(false, &again), 0);
        ck_assert_str_eq(k_errno, again);
        ck_assert_str_ne(k_errno, k_notify);
        ck_assert_ptr_nonnull(strstr(k_errno, "variant errno\nrules "));
        ck_assert_ptr_nonnull(strstr(k_errno, "\nlibseccomp "));
        /* Not libseccomp's API level: asking for it probes the kernel (test_same_at_every_level). */
        ck_assert_ptr_null(strstr(k_errno, "\napi "));
        ck_assert_ptr_nonnull(strstr(k_errno, "\narch "));
        ck_assert_ptr_nonnull(strstr(k_errno, "\nkernel "));
        /* "rules " and a build-id of at least 20 bytes, 40 hex digits (SHA-1, the GNU default). */
        ck_assert_uint_ge(strcspn(strstr(k_errno, "rules ") + 6, "\n"), 40);
}
END_TEST

/* The engine loads libseccomp only to generate (seccomp-dlopen.h): the key made before, from the
 * library's file, is the key made after, from the copy loaded (this binary links libseccomp too,
 * the same file, which the engine's load finds already mapped). In a child of its own, so that
 * nothing here has loaded it yet. */
START_TEST(test_key_before_loading) {
        pid_t pid;
        int status;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                _cleanup_free_ char *before = NULL, *after = NULL;

                if (sym_seccomp_init)
                        _exit(2);
                if (sandbox_seccomp_cache_key(false, &before) < 0 || sym_seccomp_init)
                        _exit(3);
                if (dlopen_libseccomp(NULL) < 0 || !sym_seccomp_init)
                        _exit(4);
                if (sandbox_seccomp_cache_key(false, &after) < 0)
                        _exit(5);
                _exit(streq(before, after) && strstr(before, "\nlibseccomp ") ? 0 : 6);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
END_TEST

/* Why the key can leave libseccomp's API level out: the level decides whether libseccomp
 * generates a variant at all, never what it generates. Each variant at every level from the
 * lowest that generates it to the highest this libseccomp knows (its own probes overridden with
 * seccomp_api_set(), so the kernel does not matter) is the same program; below, generation
 * fails. And where the engine's own checks say the kernel takes a variant, libseccomp left to
 * probe for itself generates it. */
START_TEST(test_same_at_every_level) {
        static const unsigned lowest[2] = { 3, 5 };
        unsigned natural = seccomp_api_get();

        for (int notify = 0; notify < 2; notify++) {
                _cleanup_free_ struct sock_filter *first = NULL;
                size_t n_first = 0;

                for (unsigned level = 1; level <= 7; level++) {
                        _cleanup_free_ struct sock_filter *insns = NULL;
                        size_t n = 0;
                        int r;

                        if (seccomp_api_set(level) < 0) {
                                ck_assert_uint_gt(level, 6); /* libseccomp 2.5 knows 1 to 6 */
                                break;
                        }
                        r = sandbox_seccomp_program(notify, &insns, &n, NULL);
                        if (level < lowest[notify]) {
                                ck_assert_int_lt(r, 0);
                                continue;
                        }
                        ck_assert_int_eq(r, 0);
                        if (!first) {
                                first = TAKE_PTR(insns);
                                n_first = n;
                        } else
                                assert_same(insns, n, first, n_first);
                }
        }
        ck_assert_int_eq(seccomp_api_set(natural), 0);
}
END_TEST

/* The engine's direct checks of the kernel against libseccomp probing for itself (in a process
 * of its own, so that nothing set above is left): a variant the checks allow is one libseccomp
 * generates. */
START_TEST(test_checks_agree_with_libseccomp) {
        for (int notify = 0; notify < n_variants(); notify++) {
                _cleanup_free_ struct sock_filter *insns = NULL;
                size_t n = 0;

                generate(notify, &insns, &n);
        }
        ck_assert(!sandbox_seccomp_available() || seccomp_api_get() >= 3);
        ck_assert(!sandbox_seccomp_notify_available() || seccomp_api_get() >= 5);
}
END_TEST

START_TEST(test_round_trip) {
        for (int notify = 0; notify < n_variants(); notify++) {
                _cleanup_test_dir_ TestDir t = test_dir_new();
                _cleanup_free_ struct sock_filter *gen = NULL, *gen2 = NULL, *got = NULL;
                _cleanup_free_ char *key = NULL;
                const char *name = variant_name(notify);
                size_t n_gen = 0, n_gen2 = 0, n_got = 0;
                struct stat st;

                generate(notify, &gen, &n_gen);
                /* The generator is deterministic: what makes caching it sound at all. */
                generate(notify, &gen2, &n_gen2);
                assert_same(gen, n_gen, gen2, n_gen2);

                ck_assert_int_eq(sandbox_seccomp_cache_key(notify, &key), 0);
                /* A miss: generated and written. */
                ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, name, key, &got, &n_got), -ENOENT);
                ck_assert_int_eq(sandbox_seccomp_cache_get_at(t.fd, name, key, notify, &got, &n_got, NULL), 0);
                assert_same(got, n_got, gen, n_gen);
                ck_assert_int_eq(fstatat(t.fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
                ck_assert_uint_eq(st.st_mode & 07777, 0600);
                ck_assert_uint_eq(st.st_uid, geteuid());
                /* A hit: the same bytes. */
                free(got);
                got = NULL;
                ck_assert_int_eq(sandbox_seccomp_cache_get_at(t.fd, name, key, notify, &got, &n_got, NULL), 0);
                assert_same(got, n_got, gen, n_gen);
                assert_entry_good(t.fd, name, key, gen, n_gen);
        }
}
END_TEST

/* What the engine loads (the process's copy, from the cache or generated) is the generated
 * program, and the entries are where a service's runtime directory says (as skilld
 * --runtime-dir makes it: here, a scratch directory). */
START_TEST(test_process_copy) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_close_ int dir_fd = -EBADF;

        ck_assert_int_eq(sandbox_seccomp_cache_set_runtime_dir(t.path), 0);
        for (int notify = 0; notify < n_variants(); notify++) {
                _cleanup_free_ struct sock_filter *gen = NULL, *from_fd = NULL;
                _cleanup_free_ char *key = NULL, *name = NULL;
                const struct sock_filter *a = NULL, *b = NULL;
                _cleanup_close_ int fd = -EBADF;
                size_t n_gen = 0, n_a = 0, n_b = 0;
                struct stat st;

                generate(notify, &gen, &n_gen);
                ck_assert_int_eq(sandbox_seccomp_program_cached(notify, &a, &n_a, NULL), 0);
                assert_same(a, n_a, gen, n_gen);
                ck_assert_int_eq(sandbox_seccomp_program_cached(notify, &b, &n_b, NULL), 0);
                ck_assert_ptr_eq(a, b);

                /* Written under the program's name, in DIR/seccomp, private. */
                ck_assert_int_eq(sandbox_seccomp_cache_key(notify, &key), 0);
                name = strdup_printf("seccomp/%s.%s", program_invocation_short_name, variant_name(notify));
                ck_assert_ptr_nonnull(name);
                assert_entry_good(t.fd, name, key, gen, n_gen);
                ck_assert_int_eq(fstatat(t.fd, "seccomp", &st, AT_SYMLINK_NOFOLLOW), 0);
                ck_assert_uint_eq(st.st_mode & 07777, 0700);

                /* The sealed memfd the init gets. */
                ck_assert_int_eq(sandbox_seccomp_program_fd(notify, &fd, NULL), 0);
                ck_assert_int_eq(fstat(fd, &st), 0);
                ck_assert_int_eq(st.st_size, (off_t) (n_gen * sizeof(*gen)));
                ck_assert_int_eq(fcntl(fd, F_GET_SEALS), F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
                from_fd = malloc(st.st_size);
                ck_assert_ptr_nonnull(from_fd);
                ck_assert_int_eq(pread(fd, from_fd, st.st_size, 0), st.st_size);
                assert_same(from_fd, n_gen, gen, n_gen);
        }
        /* A runtime directory others may write is not used: generated, nothing written. */
        ck_assert_int_eq(chmod(t.path, 0777), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_dir(&dir_fd), -EPERM);
        ck_assert_int_eq(chmod(t.path, 0700), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_set_runtime_dir(NULL), 0);
}
END_TEST

START_TEST(test_damaged) {
        for (int notify = 0; notify < n_variants(); notify++) {
                _cleanup_test_dir_ TestDir t = test_dir_new();
                _cleanup_free_ struct sock_filter *gen = NULL, *got = NULL;
                _cleanup_free_ char *key = NULL, *data = NULL;
                const char *name = variant_name(notify);
                size_t n_gen = 0, n_got = 0, size = 0;
                static const struct {
                        const char *what;
                        size_t at;      /* from the end of the file */
                } flips[] = {
                        { "the last instruction", 1 },
                        { "the first instruction", 0 },  /* filled in below */
                };

                generate(notify, &gen, &n_gen);
                ck_assert_int_eq(sandbox_seccomp_cache_key(notify, &key), 0);
                ck_assert_int_eq(sandbox_seccomp_cache_store_at(t.fd, name, key, gen, n_gen), 0);
                ck_assert_int_eq(read_full_file_at(t.fd, name, 1 << 20, true, &data, &size), 0);
                /* A 32-byte header, the key, the program. */
                ck_assert_uint_eq(size, 32 + strlen(key) + n_gen * sizeof(*gen));

                /* A tampered program (its checksum no longer matches), anywhere in it. */
                for (size_t i = 0; i < ELEMENTSOF(flips); i++) {
                        size_t at = flips[i].at ? size - flips[i].at : size - n_gen * sizeof(*gen);

                        data[at] ^= 0x01;
                        ck_assert_int_eq(write_file_atomic_at(t.fd, name, data, size, 0600), 0);
                        data[at] ^= 0x01;
                        ck_assert_msg(sandbox_seccomp_cache_load_at(t.fd, name, key, &got, &n_got) == -EBADMSG,
                                      "%s changed, still served", flips[i].what);
                        assert_regenerated(t.fd, name, key, notify, gen, n_gen);
                }
                /* A tampered checksum (the header's last 8 bytes). */
                data[30] ^= 0x01;
                ck_assert_int_eq(write_file_atomic_at(t.fd, name, data, size, 0600), 0);
                data[30] ^= 0x01;
                ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, name, key, &got, &n_got), -EBADMSG);
                assert_regenerated(t.fd, name, key, notify, gen, n_gen);

                /* Truncated anywhere: in the program (torn at an instruction or inside one), in
                 * the key, in the header, empty. */
                const size_t cuts[] = { size - sizeof(*gen), size - 3, 32 + strlen(key) - 1, 20, 0 };
                for (size_t i = 0; i < ELEMENTSOF(cuts); i++) {
                        ck_assert_int_eq(write_file_atomic_at(t.fd, name, data, cuts[i], 0600), 0);
                        ck_assert_msg(sandbox_seccomp_cache_load_at(t.fd, name, key, &got, &n_got) == -EBADMSG,
                                      "truncated to %zu bytes, still served", cuts[i]);
                        assert_regenerated(t.fd, name, key, notify, gen, n_gen);
                }

                /* Grown by an instruction (the header's count no longer matches). */
                _cleanup_free_ char *longer = malloc(size + sizeof(*gen));
                ck_assert_ptr_nonnull(longer);
                memcpy(longer, data, size);
                memcpy(longer + size, gen, sizeof(*gen));
                ck_assert_int_eq(write_file_atomic_at(t.fd, name, longer, size + sizeof(*gen), 0600), 0);
                ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, name, key, &got, &n_got), -EBADMSG);
                assert_regenerated(t.fd, name, key, notify, gen, n_gen);
        }
}
END_TEST

START_TEST(test_not_ours_alone) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ struct sock_filter *gen = NULL, *got = NULL;
        _cleanup_free_ char *key = NULL;
        size_t n_gen = 0, n_got = 0;
        static const mode_t modes[] = { 0666, 0622, 0620, 0602 };

        if (n_variants() == 0)
                return;
        generate(false, &gen, &n_gen);
        ck_assert_int_eq(sandbox_seccomp_cache_key(false, &key), 0);

        /* Writable by others: refused, and replaced by an entry only we may write. */
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                ck_assert_int_eq(sandbox_seccomp_cache_store_at(t.fd, "e", key, gen, n_gen), 0);
                ck_assert_int_eq(fchmodat(t.fd, "e", modes[i], 0), 0);
                ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -EPERM);
                assert_regenerated(t.fd, "e", key, false, gen, n_gen);
        }

        /* A second link (made by whoever could write the directory). */
        ck_assert_int_eq(linkat(t.fd, "e", t.fd, "e2", 0), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -EPERM);
        ck_assert_int_eq(unlinkat(t.fd, "e2", 0), 0);

        /* A symlink to a good entry: never followed; replaced by the entry itself. */
        ck_assert_int_eq(renameat(t.fd, "e", t.fd, "target"), 0);
        ck_assert_int_eq(symlinkat("target", t.fd, "e"), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -ELOOP);
        assert_regenerated(t.fd, "e", key, false, gen, n_gen);

        /* Not a regular file. */
        ck_assert_int_eq(unlinkat(t.fd, "e", 0), 0);
        ck_assert_int_eq(mkfifoat(t.fd, "e", 0600), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -EBADFD);
        assert_regenerated(t.fd, "e", key, false, gen, n_gen);

        /* Another owner (root can make one). */
        if (geteuid() == 0) {
                ck_assert_int_eq(fchownat(t.fd, "e", 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
                ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -EPERM);
                assert_regenerated(t.fd, "e", key, false, gen, n_gen);
        }
}
END_TEST

START_TEST(test_other_key) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ struct sock_filter *gen = NULL, *got = NULL;
        _cleanup_free_ char *key = NULL, *other = NULL, *kernel = NULL;
        size_t n_gen = 0, n_got = 0;

        if (n_variants() == 0)
                return;
        generate(false, &gen, &n_gen);
        ck_assert_int_eq(sandbox_seccomp_cache_key(false, &key), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_key(true, &other), 0);
        ck_assert_int_eq(sandbox_seccomp_cache_store_at(t.fd, "e", key, gen, n_gen), 0);

        /* The other variant's key, under the same name: a miss, never the wrong program. */
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", other, &got, &n_got), -ESTALE);
        /* Another kernel, rules build or libseccomp: any change of the key misses. */
        kernel = strdup_printf("%s ", key);
        ck_assert_ptr_nonnull(kernel);
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", kernel, &got, &n_got), -ESTALE);
        kernel[strlen(key) - 2] ^= 0x01;
        kernel[strlen(key)] = '\0';
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", kernel, &got, &n_got), -ESTALE);
        /* The entry is replaced by the right one for the key asked. */
        assert_regenerated(t.fd, "e", kernel, false, gen, n_gen);
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, "e", key, &got, &n_got), -ESTALE);
        /* Another variant has another entry name in the engine. */
        ck_assert_int_eq(sandbox_seccomp_cache_load_at(t.fd, variant_name(true), other, &got, &n_got), -ENOENT);
}
END_TEST

/* An unprivileged user's directory is $XDG_RUNTIME_DIR/skilld/seccomp, used only when
 * $XDG_RUNTIME_DIR is theirs and closed to everyone else. Runs as nobody in a child (root only). */
static int dir_as_nobody(const char *runtime, uid_t owner, mode_t mode) {
        pid_t pid;
        int status;

        if (runtime[0] != '\0') {
                ck_assert_int_eq(chown(runtime, owner, owner), 0);
                ck_assert_int_eq(chmod(runtime, mode), 0);
        }
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = -EBADF, r;

                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(100);
                if (runtime[0] != '\0')
                        (void) setenv("XDG_RUNTIME_DIR", runtime, 1);
                else
                        (void) unsetenv("XDG_RUNTIME_DIR");
                r = sandbox_seccomp_cache_dir(&fd);
                _exit(r == 0 ? 0 : r == -EPERM ? 1 : r == -ENXIO ? 2 : (r == -ELOOP || r == -ENOTDIR) ? 3 : 4);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

START_TEST(test_user_dir) {
        _cleanup_test_dir_ TestDir t = test_dir_new();
        _cleanup_free_ char *runtime = NULL;
        struct stat st;

        if (geteuid() != 0)
                return;
        /* nobody must reach the scratch directory's parent. */
        ck_assert_int_eq(chmod(t.path, 0755), 0);
        runtime = strjoin_path(t.path, "run");
        ck_assert_ptr_nonnull(runtime);
        ck_assert_int_eq(mkdir(runtime, 0700), 0);

        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0700), 0);
        ck_assert_int_eq(fstatat(t.fd, "run/skilld/seccomp", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        ck_assert_uint_eq(st.st_uid, 65534);
        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0700), 0);
        /* Others may enter $XDG_RUNTIME_DIR: not used. */
        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0755), 1);
        /* Another user's $XDG_RUNTIME_DIR: not used. */
        ck_assert_int_eq(dir_as_nobody(runtime, 0, 0755), 1);
        /* Not set: no directory, runs generate. */
        ck_assert_int_eq(dir_as_nobody("", 65534, 0700), 2);
        /* skilld/seccomp of another user, or open to others: not used. */
        ck_assert_int_eq(fchownat(t.fd, "run/skilld/seccomp", 0, 0, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_int_eq(fchmodat(t.fd, "run/skilld/seccomp", 0755, 0), 0);
        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0700), 1);
        ck_assert_int_eq(fchownat(t.fd, "run/skilld/seccomp", 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_int_eq(fchmodat(t.fd, "run/skilld/seccomp", 0750, 0), 0);
        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0700), 1);
        /* skilld a symlink (to a directory of theirs that would pass): never followed (O_NOFOLLOW
         * with O_DIRECTORY fails with ENOTDIR). */
        ck_assert_int_eq(renameat(t.fd, "run/skilld", t.fd, "run/elsewhere"), 0);
        ck_assert_int_eq(fchmodat(t.fd, "run/elsewhere/seccomp", 0700, 0), 0);
        ck_assert_int_eq(symlinkat("elsewhere", t.fd, "run/skilld"), 0);
        ck_assert_int_eq(dir_as_nobody(runtime, 65534, 0700), 3);
}
END_TEST

static Suite *cache_suite(void) {
        Suite *s = suite_create("seccomp-cache");
        TCase *tc = tcase_create("cache");

        tcase_add_test(tc, test_key);
        tcase_add_test(tc, test_key_before_loading);
        tcase_add_test(tc, test_same_at_every_level);
        tcase_add_test(tc, test_checks_agree_with_libseccomp);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_process_copy);
        tcase_add_test(tc, test_damaged);
        tcase_add_test(tc, test_not_ours_alone);
        tcase_add_test(tc, test_other_key);
        tcase_add_test(tc, test_user_dir);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(cache_suite());
}
