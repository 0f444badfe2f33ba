/* The file system group: host secrets through every path a skill could try, writes outside the
 * writable places, links, set-uid binaries and device nodes. The host side plants the secrets
 * (world-readable, so only the sandbox's view stands between them and the skill) and checks
 * afterwards that the host is as it was. */
#include <sys/sysmacros.h>

#include "loader.h"
#include "security-util.h"

#define GROUP "filesystem"

/* Calls f for every "read PATH ERRNO" line of the probe. */
static void for_each_read(const RunResult *r, void (*f)(const char *path, long e, void *userdata),
                          void *userdata) {
        for (const char *p = sec_stdout(r); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                char path[PATH_MAX];
                long e;

                if (sscanf(p, "read %4095s %ld", path, &e) == 2)
                        f(path, e, userdata);
        }
}

typedef struct ProcReads {
        size_t tried;
        size_t read;
        char what[64];
} ProcReads;

/* Lines for /proc/PID/<what> of a process other than the probe (pid 1, the init, the one that
 * holds the caller's environment); own files are the probe's business. */
static void count_proc_reads(const char *path, long e, void *userdata) {
        ProcReads *c = userdata;
        const char *rest = startswith(path, "/proc/1/");

        if (!rest || !startswith(rest, c->what))
                return;
        c->tried++;
        if (e == 0)
                c->read++;
}

START_TEST(test_secrets) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *secret = NULL, *secret_path = NULL,
                            *env_secret = NULL, *cwd = getcwd(NULL, 0), *p = NULL;
        _cleanup_close_ int leak_file = -EBADF, leak_dir = -EBADF;
        static const char *const procs[][2] = {
                { "root/", "/proc/1/root of the init (the caller's fork)" },
                { "cwd/", "/proc/1/cwd of the init (the caller's fork)" },
                { "environ", "/proc/1/environ of the init (the caller's fork)" },
                { "mem", "/proc/1/mem of the init (the caller's fork)" },
        };
        char *args[] = { (char *) "secrets", NULL, (char *) "secret.txt", NULL };
        long e;

        secret = strdup_printf("SECRET-%s", marker);
        test_write_file(t.base.fd, "secret.txt", secret, 0644);
        secret_path = strdup_printf("%s/secret.txt", t.base.path);
        args[1] = secret_path;
        /* The caller's environment: the sandbox's init is a fork of this process. */
        env_secret = strdup_printf("ENVSECRET-%s", marker);
        ck_assert_int_eq(setenv("SKILLD_SECURITY_SECRET", env_secret, 1), 0);
        /* The caller's mistakes: a file and a directory open without close-on-exec, and a working
         * directory right next to the secret. */
        leak_file = open(secret_path, O_RDONLY);
        leak_dir = open(t.base.path, O_RDONLY | O_DIRECTORY);
        ck_assert_int_ge(leak_file, 0);
        ck_assert_int_ge(leak_dir, 0);
        ck_assert_int_eq(chdir(t.base.path), 0);
        sec_run_probe(&t, args);
        ck_assert_int_eq(chdir(cwd), 0);
        ck_assert_int_eq(unsetenv("SKILLD_SECURITY_SECRET"), 0);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

        e = probe_longf(t.res, "read %s", secret_path);
        CHECK_CASE(GROUP, "host secret by its own path", "ENOENT", e == ENOENT, "%s", errno_name((int) e));

        for (size_t i = 0; i < ELEMENTSOF(procs); i++) {
                ProcReads c = {};

                strncpy(c.what, procs[i][0], sizeof(c.what) - 1);
                for_each_read(t.res, count_proc_reads, &c);
                CHECK_CASE(GROUP, procs[i][1], "unreadable", c.tried > 0 && c.read == 0,
                           "%zu of %zu paths read", c.read, c.tried);
        }

        p = strdup_printf("read /work/../../../../..%s", secret_path);
        e = probe_long(t.res, p);
        free(p);
        p = strdup_printf("read /skill/../../../..%s", secret_path);
        e = e == ENOENT ? probe_long(t.res, p) : e;
        e = e == ENOENT ? probe_long(t.res, "read /skill/../secret.txt") : e;
        CHECK_CASE(GROUP, "\"..\" from /work, /skill (next to the secret)", "ENOENT", e == ENOENT, "%s",
                   errno_name((int) e));

        CHECK_CASE(GROUP, "caller's leaked file and directory fds", "none inside",
                   probe_count(t.res, "fd ") == 0, "%zu inherited", probe_count(t.res, "fd "));

        CHECK_CASE(GROUP, "secret file or env content in any output", "absent",
                   !run_output_has(t.res, secret) && !run_output_has(t.res, env_secret) && !t.res->output,
                   "%s",
                   run_output_has(t.res, secret) || run_output_has(t.res, env_secret) ? "LEAKED"
                                                                                      : "absent");
}
END_TEST

START_TEST(test_secrets_through_skillctl) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *secret = NULL, *secret_path = NULL;
        _cleanup_close_ int leak = -EBADF;
        _cleanup_exec_ Exec x = {};

        secret = strdup_printf("SECRET-%s", marker);
        test_write_file(t.base.fd, "secret.txt", secret, 0644);
        secret_path = strdup_printf("%s/secret.txt", t.base.path);
        leak = open(secret_path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(leak, 0);
        {
                char *args[] = { t.skill_path,
                                 (char *) "--script",
                                 (char *) "probe",
                                 (char *) "--output-dir",
                                 t.out_path,
                                 (char *) "-q",
                                 (char *) "--",
                                 (char *) "secrets",
                                 secret_path,
                                 (char *) "secret.txt",
                                 NULL };

                /* skillctl's caller leaves fd 7 open on the secret. */
                x = skillctl_run(args, -EBADF, leak, t.base.path);
        }
        CHECK_CASE(GROUP, "fd leaked into skillctl by its caller", "none inside, exit 0",
                   x.status == 0 && !strstr(x.out, "\nfd ") && !strstr(x.out, secret),
                   "exit %d, %s", x.status, strstr(x.out, secret) ? "LEAKED" : strstr(x.out, "\nfd ") ?
                   "fd inherited" : "none inside");
}
END_TEST

/* What the host must still look like after the write attempts. */
typedef struct Snapshot {
        const char *path;
        struct stat st;
} Snapshot;

START_TEST(test_writes_outside) {
        /* Everything the sandbox shows that is not one of its private writable places. */
        static const char *const refused[] = {
                "/",
                "/etc",
                "/etc/ssl",
                "/etc/ssl/certs",
                "/usr",
                "/usr/bin",
                "/usr/lib",
                "/usr/local",
                "/bin",
                "/skill",
                "/skill/scripts",
                "/dev",
                "/proc",
                "/proc/sys/kernel",
                "/run",
                "/run/skill",
                "/var",
                "/home",
                "/sys",
                "/root",
                "/mnt",
                "/out/..",
        };
        static const char *const private[] = { "/work", "/out",        "/out/files",
                                               "/tmp",  "/home/skill", "/dev/shm" };
        /* Host places the refused ones correspond to, and the host's own /tmp-like places. */
        static const char *const host_dirs[] = {
                "/",        "/etc",       "/etc/ssl", "/etc/ssl/certs", "/usr",  "/usr/bin",
                "/usr/lib", "/usr/local", "/run",     "/var",           "/home", "/tmp",
                "/var/tmp", "/dev/shm",   "/dev",     "/root",          "/mnt",
        };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *script = NULL, *probe = NULL;
        _cleanup_strv_free_ char **args = NULL;
        Snapshot snaps[] = {
                { "/etc/ld.so.cache" },
                { "/usr/bin/env" },
                { "/dev/null" },
                { "/dev/zero" },
                { "/etc/passwd" },
                { "/etc/services" },
                { NULL /* the skill's script */ },
                { NULL /* the probe */ },
        };
        size_t ok_refused = 0, ok_private = 0, ok_tamper = 0, n_tamper = 0, host_found = 0, changed = 0;

        script = strdup_printf("%s/scripts/main.sh", t.skill_path);
        probe = strdup_printf("%s/probe", t.skill_path);
        snaps[6].path = script;
        snaps[7].path = probe;
        for (size_t i = 0; i < ELEMENTSOF(snaps); i++)
                if (stat(snaps[i].path, &snaps[i].st) < 0)
                        snaps[i].path = NULL;

        ck_assert_int_eq(strv_extend(&args, "write"), 0);
        ck_assert_int_eq(strv_extend(&args, marker), 0);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                ck_assert_int_eq(strv_extend(&args, refused[i]), 0);
        for (size_t i = 0; i < ELEMENTSOF(private); i++)
                ck_assert_int_eq(strv_extend(&args, private[i]), 0);
        ck_assert_int_eq(strv_extend(&args, "--"), 0);
        /* Existing files to change: bound from the host (the skill, /usr, /etc) or the sandbox's. */
        {
                static const char *const files[] = {
                        "/skill/scripts/main.sh", "/skill/probe",          "/usr/bin/env",
                        "/etc/ld.so.cache",       "/etc/passwd",           "/etc/hosts",
                        "/etc/services",          "/run/skill/input.json", "/dev/null",
                };
                for (size_t i = 0; i < ELEMENTSOF(files); i++)
                        ck_assert_int_eq(strv_extend(&args, files[i]), 0);
        }
        t.req.input_json = "{}";
        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                if (probe_longf(t.res, "create %s", refused[i]) > 0 &&
                    probe_longf(t.res, "mkdir %s", refused[i]) > 0)
                        ok_refused++;
        for (size_t i = 0; i < ELEMENTSOF(private); i++)
                if (probe_longf(t.res, "create %s", private[i]) == 0)
                        ok_private++;
        /* Each change to an existing file fails; writing into /dev/null is what it is for. */
        for (const char *p = sec_stdout(t.res); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                static const char *const ops[] = { "append",  "truncate", "chmod", "chown",
                                                   "utimens", "rename",   "unlink" };
                char op[32], path[PATH_MAX];
                long e;

                if (sscanf(p, "%31s %4095s %ld", op, path, &e) != 3)
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                        if (streq(op, ops[i]) && !(streq(path, "/dev/null") && streq(op, "append"))) {
                                n_tamper++;
                                if (e > 0)
                                        ok_tamper++;
                        }
        }
        CHECK_CASE(GROUP, "create files/dirs outside /work,/out,/tmp,HOME", "refused in all",
                   ok_refused == ELEMENTSOF(refused), "%zu of %zu refused", ok_refused, ELEMENTSOF(refused));
        CHECK_CASE(GROUP, "change existing files (skill, /usr, /etc, /run, /dev)", "refused in all",
                   n_tamper == 9 * 7 - 1 && ok_tamper == n_tamper, "%zu of %zu refused", ok_tamper,
                   n_tamper);

        /* The host: nothing named after the marker anywhere the attempts could have reached. */
        for (size_t i = 0; i < ELEMENTSOF(host_dirs); i++) {
                _cleanup_free_ char *f = strdup_printf("%s/%s", host_dirs[i], marker),
                        *d = strdup_printf("%s/%s.d", host_dirs[i], marker);

                if (access(f, F_OK) == 0 || access(d, F_OK) == 0)
                        host_found++;
        }
        if (faccessat(t.skill_fd, marker, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
            faccessat(t.base.fd, marker, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                host_found++;
        CHECK_CASE(GROUP, "host after writes (also to the private places)", "no new file",
                   ok_private == ELEMENTSOF(private) && host_found == 0, "%zu new files; %zu of %zu private "
                   "places writable inside", host_found, ok_private, ELEMENTSOF(private));

        for (size_t i = 0; i < ELEMENTSOF(snaps); i++) {
                struct stat st;

                if (snaps[i].path && (stat(snaps[i].path, &st) < 0 || !stat_same(&st, &snaps[i].st)))
                        changed++;
        }
        CHECK_CASE(GROUP, "host files the skill sees (stat: mode, size, times)", "unchanged", changed == 0,
                   "%zu changed", changed);
}
END_TEST

START_TEST(test_links) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "links", (char *) "/usr/bin/env", NULL };
        struct stat env_before, env_after, probe_before, probe_after;
        size_t refused = 0, tried = 0;

        ck_assert_int_eq(stat("/usr/bin/env", &env_before), 0);
        ck_assert_int_eq(fstatat(t.skill_fd, "probe", &probe_before, 0), 0);
        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (const char *p = sec_stdout(t.res); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                char op[32], where[PATH_MAX];
                long e;

                if ((sscanf(p, "%31s %4095s %ld", op, where, &e) == 3 && startswith(op, "link")) ||
                    (sscanf(p, "%31s %ld", op, &e) == 2 && startswith(op, "linkat"))) {
                        tried++;
                        if (e > 0)
                                refused++;
                }
        }
        ck_assert_int_eq(stat("/usr/bin/env", &env_after), 0);
        ck_assert_int_eq(fstatat(t.skill_fd, "probe", &probe_after, 0), 0);
        CHECK_CASE(GROUP, "link(2) to host files, or onto places outside /work", "refused",
                   tried == 5 * 2 + 6 + 2 && refused == tried && probe_count(t.res, "symlink-out") == 6,
                   "%zu of %zu refused", refused, tried);
        CHECK_CASE(GROUP, "link count of the host files targeted", "unchanged",
                   env_before.st_nlink == env_after.st_nlink &&
                           probe_before.st_nlink == probe_after.st_nlink,
                   "/usr/bin/env %ju -> %ju, skill probe %ju -> %ju", (uintmax_t) env_before.st_nlink,
                   (uintmax_t) env_after.st_nlink, (uintmax_t) probe_before.st_nlink,
                   (uintmax_t) probe_after.st_nlink);
}
END_TEST

START_TEST(test_planted_hardlink) {
        /* A skill tree holding a hard link to a host secret: the loader refuses the tree. */
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *secret = NULL, *error = NULL, *dst = NULL;
        _cleanup_exec_ Exec x = {};
        int r;

        secret = strdup_printf("SECRET-%s", marker);
        test_write_file(t.base.fd, "secret.txt", secret, 0644);
        ck_assert_int_eq(linkat(t.base.fd, "secret.txt", t.skill_fd, "leak.txt", 0), 0);
        r = loader_check_tree(t.skill_fd, NULL, &error);
        {
                char *args[] = { t.skill_path, (char *) "--output-dir", t.out_path, (char *) "--", NULL };

                x = skillctl_run(args, -EBADF, -EBADF, NULL);
        }
        dst = strdup_printf("%s", t.out_path);
        CHECK_CASE(GROUP, "skill tree with a hard link to a host file", "refused by the loader (125)",
                   r == -EPERM && x.status == 125 && strstr(x.err, "hard link") && !strstr(x.out, secret) &&
                   access(dst, F_OK) < 0, "loader %s, skillctl exit %d", errno_name(-r), x.status);
}
END_TEST

START_TEST(test_setuid) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *usr_dir = strdup("/usr/lib/skilld-security-XXXXXX"), *body = NULL,
                            *usr_suid = NULL;
        _cleanup_close_ int usr_fd = -EBADF;
        const char *suid = test_env_path("SECURITY_SUID");
        struct stat st;
        bool host_mount_suid = stat("/usr/bin/mount", &st) == 0 && (st.st_mode & S_ISUID) && st.st_uid == 0;
        uid_t uid;

        /* Set-uid and set-gid root copies in the skill, and in a scratch directory of the host's
         * /usr (removed below; the program can do nothing but print its ids). */
        copy_file_to(suid, t.skill_fd, "suid", 0755);
        ck_assert_int_eq(fchownat(t.skill_fd, "suid", 0, 0, 0), 0);
        ck_assert_int_eq(fchmodat(t.skill_fd, "suid", 06755, 0), 0);
        ck_assert_ptr_nonnull(mkdtemp(usr_dir));
        usr_fd = open(usr_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(usr_fd, 0);
        ck_assert_int_eq(fchmod(usr_fd, 0755), 0);
        copy_file_to(suid, usr_fd, "suid", 0755);
        ck_assert_int_eq(fchmodat(usr_fd, "suid", 06755, 0), 0);
        usr_suid = strdup_printf("%s/suid", usr_dir);

        body = strdup_printf("echo '== skill'; /skill/suid\n"
                             "echo '== usr'; %s\n"
                             "before=$(wc -l < /proc/self/mountinfo)\n"
                             "/usr/bin/mount -t tmpfs none /tmp >/dev/null 2>&1; echo \"mount-exit $?\"\n"
                             "echo \"mounts-added $(( $(wc -l < /proc/self/mountinfo) - before ))\"\n",
                             usr_suid);
        sec_run_set_script(&t, body);
        sec_run_go(&t);
        (void) unlinkat(usr_fd, "suid", 0);
        (void) rmdir(usr_dir);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        uid = t.res->uid;

        {
                const char *skill = strstr(sec_stdout(t.res), "== skill"),
                           *usr = strstr(sec_stdout(t.res), "== usr");
                /* What stays when the program printed nothing: no pass. */
                unsigned long e1 = ULONG_MAX, e2 = ULONG_MAX, c1 = ULONG_MAX, c2 = ULONG_MAX;
                long s1 = -1, s2 = -1;

                ck_assert_ptr_nonnull(skill);
                ck_assert_ptr_nonnull(usr);
                (void) sscanf(strstr(skill, "euid ") ?: "", "euid %lu", &e1);
                (void) sscanf(strstr(skill, "capeff ") ?: "", "capeff %lx", &c1);
                (void) sscanf(strstr(skill, "setuid0 ") ?: "", "setuid0 %ld", &s1);
                (void) sscanf(strstr(usr, "euid ") ?: "", "euid %lu", &e2);
                (void) sscanf(strstr(usr, "capeff ") ?: "", "capeff %lx", &c2);
                (void) sscanf(strstr(usr, "setuid0 ") ?: "", "setuid0 %ld", &s2);
                CHECK_CASE(GROUP, "set-uid/gid root copy in the skill", "runs as the sandbox uid",
                           e1 == uid && c1 == 0 && s1 == EPERM, "euid %lu, CapEff %lx, setuid(0) %s", e1, c1,
                           errno_name((int) s1));
                CHECK_CASE(GROUP, "set-uid/gid root copy in the host's /usr", "runs as the sandbox uid",
                           e2 == uid && c2 == 0 && s2 == EPERM, "euid %lu, CapEff %lx, setuid(0) %s", e2, c2,
                           errno_name((int) s2));
        }
        if (host_mount_suid)
                CHECK_CASE(GROUP, "the host's set-uid mount(8): mount a tmpfs", "fails, no mount",
                           probe_long(t.res, "mount-exit") != 0 && probe_long(t.res, "mounts-added") == 0,
                           "exit %ld, %ld mounts added", probe_long(t.res, "mount-exit"),
                           probe_long(t.res, "mounts-added"));
        ck_assert_int_ne(access(usr_dir, F_OK), 0);
}
END_TEST

START_TEST(test_device_nodes) {
        static const char *const allowed[] = { "null", "zero",  "full",   "random", "urandom",
                                               "fd",   "stdin", "stdout", "stderr", "shm" };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "mknod", NULL };
        size_t made = 0, tried = 0, opened = 0, extra = 0;

        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (const char *p = sec_stdout(t.res); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                char op[32], what[PATH_MAX];
                long e;

                if (sscanf(p, "%31s %4095s %ld", op, what, &e) == 3) {
                        if (startswith(op, "mknod-")) {
                                tried++;
                                made += e == 0;
                        } else if (streq(op, "open"))
                                opened += e == 0;
                } else if (sscanf(p, "dev %4095s", what) == 1) {
                        bool ok = false;

                        for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                                ok = ok || streq(what, allowed[i]);
                        extra += !ok;
                }
        }
        CHECK_CASE(GROUP, "mknod char/block in every writable place and /dev", "refused",
                   tried == 12 && made == 0 && probe_long(t.res, "mkfifo /work") == 0, "%zu of %zu created",
                   made, tried);
        CHECK_CASE(GROUP, "host devices (/dev/mem, kmsg, disks, tty, kvm...)", "absent",
                   opened == 0 && extra == 0, "%zu opened, %zu unexpected /dev entries", opened, extra);
}
END_TEST

TCase *security_tcase_filesystem(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_secrets);
        tcase_add_test(tc, test_secrets_through_skillctl);
        tcase_add_test(tc, test_writes_outside);
        tcase_add_test(tc, test_links);
        tcase_add_test(tc, test_planted_hardlink);
        tcase_add_test(tc, test_setuid);
        tcase_add_test(tc, test_device_nodes);
        return tc;
}
