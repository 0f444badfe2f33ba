/* The identity and kernel surface group: capabilities and no_new_privs as the kernel reports
 * them, every refused syscall through each of the three x86 entry points, the filter across
 * fork, threads and exec, user namespaces, and TIOCSTI into the caller's real terminal. */
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <termios.h>

#include "security-util.h"

#define GROUP "identity"

START_TEST(test_capabilities) {
        static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "status", NULL };
        size_t zero_self = 0, zero_init = 0;

        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                _cleanup_free_ char *s = strdup_printf("self %s", sets[i]),
                                    *n = strdup_printf("init %s", sets[i]);
                const char *a = probe_find(t.res, s), *b = probe_find(t.res, n);

                zero_self += a && startswith(a, "0000000000000000");
                zero_init += b && startswith(b, "0000000000000000");
        }
        CHECK_CASE(GROUP, "skill's capability sets (inh/prm/eff/bnd/amb)", "all zero",
                   zero_self == ELEMENTSOF(sets), "%zu of 5 zero", zero_self);
        CHECK_CASE(GROUP, "sandbox init's capability sets", "all zero", zero_init == ELEMENTSOF(sets),
                   "%zu of 5 zero", zero_init);
        CHECK_CASE(GROUP, "no_new_privs (skill and init)", "NoNewPrivs 1",
                   probe_long(t.res, "self NoNewPrivs") == 1 && probe_long(t.res, "init NoNewPrivs") == 1,
                   "skill %ld, init %ld", probe_long(t.res, "self NoNewPrivs"),
                   probe_long(t.res, "init NoNewPrivs"));
        CHECK_CASE(GROUP, "seccomp mode of the skill", "2 (filter)", probe_long(t.res, "self Seccomp") == 2,
                   "%ld", probe_long(t.res, "self Seccomp"));
        {
                const char *g = probe_find(t.res, "self Groups");

                CHECK_CASE(GROUP, "supplementary groups", "none",
                           g && g[0] == '-' && (g[1] == '\n' || !g[1]), "%.*s",
                           g ? (int) strcspn(g, "\n") : 3, g ?: "n/a");
        }
}
END_TEST

/* ---- every refused syscall through every entry point ---- */

typedef struct Spec {
        char name[64];          /* syscall, with the argument variant after a slash */
        char syscall[48];
        long a0, a1;
        int errno64;            /* what the native entry point answers */
} Spec;

typedef struct Specs {
        Spec *v;
        size_t n;
        char **names;           /* every syscall the filter has a rule for */
} Specs;

static void specs_add(Specs *s, const char *syscall, const char *variant, long a0, long a1, int e) {
        Spec *sp;

        s->v = reallocarray(s->v, s->n + 1, sizeof(Spec));
        ck_assert_ptr_nonnull(s->v);
        sp = &s->v[s->n++];
        *sp = (Spec) { .a0 = a0, .a1 = a1, .errno64 = e };
        (void) snprintf(sp->syscall, sizeof(sp->syscall), "%s", syscall);
        (void) snprintf(sp->name, sizeof(sp->name), "%s%s%s", syscall, variant ? "/" : "",
                        strempty(variant));
}

/* The filter the engine builds, exported as libseccomp's pseudo filter code: the syscalls it
 * has rules for, and the address families refused for socket(). The test follows the filter,
 * so a rule added there is attacked here without anyone editing a list. */
static void specs_from_filter(Specs *s) {
        static const struct {
                const char *name;
                unsigned long flag;
        } ns[] = {
                { "NEWNS", CLONE_NEWNS }, { "NEWUTS", CLONE_NEWUTS }, { "NEWIPC", CLONE_NEWIPC },
                { "NEWUSER", CLONE_NEWUSER }, { "NEWPID", CLONE_NEWPID }, { "NEWNET", CLONE_NEWNET },
                { "NEWCGROUP", CLONE_NEWCGROUP }, { "NEWTIME", 0x80 },
        };
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_free_ char *error = NULL, *pfc = NULL;
        _cleanup_close_ int fd = memfd_create("pfc", MFD_CLOEXEC);
        char current[64] = "";
        bool unconditional = false;

        ck_assert_msg(sandbox_seccomp_new(false, &ctx, &error) == 0, "%s", strna(error));
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(seccomp_export_pfc(ctx, fd), 0);
        ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
        ck_assert_int_eq(read_full_fd(fd, 4 << 20, &pfc, NULL), 0);

        for (char *line = strtok(pfc, "\n"); line; line = strtok(NULL, "\n")) {
                char name[64];
                long v;

                if (sscanf(line, " # filter for syscall \"%63[^\"]\"", name) == 1) {
                        snprintf(current, sizeof(current), "%s", name);
                        ck_assert_int_eq(strv_extend(&s->names, name), 0);
                        if (streq(name, "unshare"))
                                for (size_t i = 0; i < ELEMENTSOF(ns); i++)
                                        specs_add(s, name, ns[i].name, (long) ns[i].flag, 0, EPERM);
                        else if (streq(name, "clone"))
                                for (size_t i = 0; i < ELEMENTSOF(ns); i++) {
                                        if (ns[i].flag != 0x80) /* on clone() that is the exit signal */
                                                specs_add(s, name, ns[i].name, (long) ns[i].flag | SIGCHLD,
                                                          0, EPERM);
                                }
                        else if (streq(name, "clone3"))
                                specs_add(s, name, NULL, 0, 0, ENOSYS);
                        else if (streq(name, "ioctl")) {
                                specs_add(s, name, "TIOCSTI", 0, TIOCSTI, EPERM);
                                specs_add(s, name, "TIOCLINUX", 0, TIOCLINUX, EPERM);
                        } else if (streq(name, "personality"))
                                specs_add(s, name, "READ_IMPLIES_EXEC", 0x0400000, 0, EPERM);
                        else if (streq(name, "prlimit64"))
                                specs_add(s, name, "init", 1, RLIMIT_NOFILE, EPERM);
                        else if (startswith(name, "sched_set"))
                                specs_add(s, name, "init", 1, 0, EPERM);
                        else if (streq(name, "setpriority")) {
                                specs_add(s, name, "PROCESS-init", 0 /* PRIO_PROCESS */, 1, EPERM);
                                specs_add(s, name, "PGRP-init", 1 /* PRIO_PGRP */, 1, EPERM);
                                specs_add(s, name, "USER", 2 /* PRIO_USER */, 0, EPERM);
                        } else if (streq(name, "ioprio_set")) {
                                specs_add(s, name, "PROCESS-init", 1 /* IOPRIO_WHO_PROCESS */, 1, EPERM);
                                specs_add(s, name, "PGRP-init", 2 /* IOPRIO_WHO_PGRP */, 1, EPERM);
                                specs_add(s, name, "USER", 3 /* IOPRIO_WHO_USER */, 0, EPERM);
                        } else if (!streq(name, "socket") && !streq(name, "socketpair")) {
                                /* Refused outright: the errno is the rule's own action. */
                                specs_add(s, name, NULL, 0, 0, EPERM);
                                unconditional = true;
                                continue;
                        }
                        unconditional = false;
                } else if (unconditional && sscanf(line, " action ERRNO(%ld)", &v) == 1) {
                        s->v[s->n - 1].errno64 = (int) v;
                        unconditional = false;
                } else if ((streq(current, "socket") || streq(current, "socketpair")) &&
                           sscanf(line, " if ($a0.lo32 == %ld)", &v) == 1 &&
                           /* the allowed families' type and protocol rules; the network group
                            * checks those */
                           v != AF_UNIX && v != AF_INET && v != AF_INET6 && v != AF_NETLINK) {
                        char family[16];

                        (void) snprintf(family, sizeof(family), "AF%ld", v);
                        specs_add(s, current, family, v, SOCK_STREAM, EAFNOSUPPORT);
                }
        }
}

/* The syscall names in the "Refused" tables of policy/seccomp.md. */
static char **documented_syscalls(void) {
        _cleanup_free_ char *path = test_source_path("policy/seccomp.md"), *doc = NULL;
        _cleanup_strv_free_ char **names = NULL;
        bool in_table = false;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, path, 1 << 20, false, &doc, NULL), 0);
        for (char *line = strtok(doc, "\n"); line; line = strtok(NULL, "\n")) {
                char *end;

                if (startswith(line, "## "))
                        in_table = startswith(line, "## Refused with EPERM") != NULL;
                if (!in_table || !startswith(line, "| `"))
                        continue;
                /* The first column only: "| `a`, `b` with ... | why |" */
                end = strchr(line + 1, '|');
                if (end)
                        *end = '\0';
                for (char *p = strchr(line, '`'); p; p = strchr(p, '`')) {
                        char *q = strchr(p + 1, '`');

                        if (!q)
                                break;
                        *q = '\0';
                        if (strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(p + 1) &&
                            seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, p + 1) >= 0)
                                ck_assert_int_eq(strv_extend(&names, p + 1), 0);
                        p = q + 1;
                }
        }
        return TAKE_PTR(names);
}

/* Whether the probe said this entry point has no such syscall. */
static bool abi_absent(const RunResult *r, const char *abi, const char *name) {
        _cleanup_free_ char *p = strdup_printf("sys %s %s none", abi, name);

        return probe_find(r, p) != NULL;
}

static char *first_bad(const RunResult *r, const char *abi, const char *name) {
        _cleanup_free_ char *p = strdup_printf("sys %s %s", abi, name);
        const char *v = probe_find(r, p);

        return strdup_printf(" (first: %s: %.*s)", name, v ? (int) strcspn(v, "\n") : 1, v ?: "?");
}

START_TEST(test_refused_syscalls_every_abi) {
#if !defined(__x86_64__)
        return; /* the three entry points are x86-64's */
#else
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_strv_free_ char **args = NULL, **documented = documented_syscalls();
        Specs specs = {};
        size_t ok64 = 0, ok32 = 0, okx32 = 0, n32 = 0, nx32 = 0, undocumented = 0, unfiltered = 0;
        _cleanup_free_ char *bad64 = NULL, *bad32 = NULL, *badx32 = NULL;

        specs_from_filter(&specs);
        ck_assert_int_gt(specs.n, 50);
        ck_assert_int_eq(strv_extend(&args, "abi"), 0);
        for (size_t i = 0; i < specs.n; i++) {
                Spec *sp = &specs.v[i];
                int nr64 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, sp->syscall),
                    nr32 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, sp->syscall),
                    nrx32 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, sp->syscall);
                _cleanup_free_ char *a = strdup_printf("%s:%lx:%lx:%lx:%lx:%lx", sp->name, (long) nr64,
                                                       nr32 < 0 ? -1L : (long) nr32,
                                                       nrx32 < 0 ? -1L : (long) nrx32, sp->a0, sp->a1);

                ck_assert_int_eq(strv_extend(&args, a), 0);
        }
        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

        for (size_t i = 0; i < specs.n; i++) {
                Spec *sp = &specs.v[i];
                long v;

                v = probe_longf(t.res, "sys 64 %s exit", sp->name);
                if (v == sp->errno64)
                        ok64++;
                else if (!bad64)
                        bad64 = first_bad(t.res, "64", sp->name);

                if (!abi_absent(t.res, "32", sp->name)) {
                        n32++;
                        if (probe_longf(t.res, "sys 32 %s signal", sp->name) == SIGSYS)
                                ok32++;
                        else if (!bad32)
                                bad32 = first_bad(t.res, "32", sp->name);
                }
                if (!abi_absent(t.res, "x32", sp->name)) {
                        nx32++;
                        if (probe_longf(t.res, "sys x32 %s signal", sp->name) == SIGSYS)
                                okx32++;
                        else if (!badx32)
                                badx32 = first_bad(t.res, "x32", sp->name);
                }
        }
        CHECK_CASE(GROUP, "refused syscalls via syscall (x86-64)",
                   "EPERM; clone3, AIO, inotify ENOSYS; AF_* EAFNOSUPPORT",
                   ok64 == specs.n, "%zu of %zu%s", ok64, specs.n, strempty(bad64));
        CHECK_CASE(GROUP, "the same via int 0x80 (i386 entry point)", "killed by SIGSYS",
                   n32 > 50 && ok32 == n32, "%zu of %zu killed%s", ok32, n32, strempty(bad32));
        CHECK_CASE(GROUP, "the same via x32 (nr | 0x40000000)", "killed by SIGSYS",
                   nx32 > 50 && okx32 == nx32, "%zu of %zu killed%s", okx32, nx32, strempty(badx32));

        /* The policy document and the filter name the same calls. */
        STRV_FOREACH(n, documented)
                unfiltered += !strv_contains(specs.names, *n);
        STRV_FOREACH(n, specs.names)
                undocumented +=
                        !strv_contains(documented, *n) && !streq(*n, "socket") && !streq(*n, "socketpair");
        CHECK_CASE(GROUP, "policy/seccomp.md vs the filter's rules", "the same syscalls",
                   unfiltered == 0 && undocumented == 0 && strv_length(documented) > 50,
                   "%zu documented, %zu of them not filtered, %zu filtered undocumented",
                   strv_length(documented), unfiltered, undocumented);
        free(specs.v);
        strv_free(specs.names);
#endif
}
END_TEST

/* The number after "prefix " at the start of a line of text, or LONG_MIN. */
static long probe_long_from(const char *text, const char *prefix) {
        size_t n = strlen(prefix);

        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
                        return strtol(p + n + 1, NULL, 10);
        return LONG_MIN;
}

/* The sandbox init is a fork of skillctl (or of the daemon's worker): its command line, which
 * /proc/1/cmdline shows whatever the reader's uid, was skillctl's. A marker in skillctl's
 * arguments (the output directory, which the skill never sees) and in its environment must not
 * reach the skill through the init. */
START_TEST(test_init_command_line) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *out = NULL, *env = NULL;
        const char *data, *comm, *name;

        out = strdup_printf("%s/out-%s-arg", t.base.path, marker);
        env = strdup_printf("%s-env", marker);
        ck_assert_int_eq(setenv("SKILLD_SEC_CALLER_SECRET", env, 1), 0);
        {
                char *args[] = { t.skill_path,  (char *) "--script", (char *) "probe",
                                 (char *) "--output-dir", out, (char *) "--",
                                 (char *) "init-cmdline", NULL };
                _cleanup_exec_ Exec x = skillctl_run(args, -EBADF, -EBADF, NULL);

                ck_assert_int_eq(unsetenv("SKILLD_SEC_CALLER_SECRET"), 0);
                ck_assert_msg(x.status == 0, "skillctl exit %d: %s", x.status, x.err);
                data = strstr(x.out, "data /proc/1/cmdline ");
                comm = strstr(x.out, "data /proc/1/comm ");
                name = strstr(x.out, "Name:\\x09");
                CHECK_CASE(GROUP, "the caller's command line in /proc/1/cmdline", "\"sandbox-init\" only",
                           strstr(x.out, "init-cmdline 13\n") && data &&
                                   startswith(data, "data /proc/1/cmdline sandbox-init \n") &&
                                   !strstr(x.out, marker),
                           "%.*s", data ? (int) strcspn(data, "\n") : 7, data ?: "no data");
                CHECK_CASE(GROUP, "the caller's name and environment (/proc/1)",
                           "comm sandbox-init; environ unreadable",
                           comm && startswith(comm, "data /proc/1/comm sandbox-init") && name &&
                                   startswith(name, "Name:\\x09sandbox-init") &&
                                   probe_long_from(x.out, "read /proc/1/environ") == EACCES,
                           "%.*s, environ %s", comm ? (int) strcspn(comm, "\n") : 7, comm ?: "no comm",
                           errno_name((int) probe_long_from(x.out, "read /proc/1/environ")));
        }
}
END_TEST

/* The init is pid 1 of the run and has the skill's uid: the skill tries to lower its limits (a
 * hard RLIMIT_CPU would kill it and fail the run as a sandbox error), renice, re-pin, reschedule
 * it, stop it and write its /proc files. The run must end as the skill did, with the init's
 * limits and nice value as they were, and the skill's own processes still its to change. */
START_TEST(test_init_untouchable) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "init-attack", NULL };
        static const char *const refused[] = {
                "init prlimit-nofile", "init prlimit-cpu", "init setpriority", "init setpriority-pgrp",
                "init setpriority-user", "init setaffinity", "init setscheduler", "init ioprio",
        };
        size_t held = 0;
        long nice_caller;

        /* The init runs at the caller's nice value (the test may run under nice). */
        errno = 0;
        nice_caller = getpriority(PRIO_PROCESS, 0);
        ck_assert_int_eq(errno, 0);
        sec_run_probe(&t, args);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                held += probe_long(t.res, refused[i]) == EPERM;
        CHECK_CASE(GROUP, "prlimit, setpriority, affinity, ioprio on the init",
                   "EPERM; init's limits and nice unchanged; succeeded",
                   t.res->status == RUN_STATUS_SUCCEEDED && held == ELEMENTSOF(refused) &&
                           probe_long(t.res, "init nofile") > 5 &&
                           startswith(strempty(probe_find(t.res, "init cpu")), "unlimited\n") &&
                           probe_long(t.res, "init nice") == nice_caller && probe_long(t.res, "init oom-write") != 0,
                   "status %s, %zu of %zu refused, init nofile %ld, nice %ld, oom_score_adj write %s",
                   status_name(t.res), held, ELEMENTSOF(refused), probe_long(t.res, "init nofile"),
                   probe_long(t.res, "init nice"), errno_name((int) probe_long(t.res, "init oom-write")));
        CHECK_CASE(GROUP, "the skill's own limits and priority", "prlimit(0), prlimit(self), nice: allowed",
                   probe_long(t.res, "self prlimit") == 0 && probe_long(t.res, "self prlimit-pid") == 0 &&
                           probe_long(t.res, "self setpriority") == 0,
                   "%s, %s, %s", errno_name((int) probe_long(t.res, "self prlimit")),
                   errno_name((int) probe_long(t.res, "self prlimit-pid")),
                   errno_name((int) probe_long(t.res, "self setpriority")));
}
END_TEST

/* inotify on the bound host /usr/bin would report every program the host, and every other run,
 * executes: the host runs programs from it during the run, and the skill must have seen nothing.
 * fanotify the same. */
START_TEST(test_host_watch) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "counters", (char *) "0", NULL };
        pid_t busy = fork();

        ck_assert_int_ge(busy, 0);
        if (busy == 0)
                for (;;) {
                        pid_t c = fork();

                        if (c == 0) {
                                execl("/usr/bin/true", "true", (char *) NULL);
                                _exit(3);
                        }
                        (void) waitpid(c, NULL, 0);
                        (void) usleep(10 * 1000);
                }
        sec_run_probe(&t, args);
        (void) kill(busy, SIGKILL);
        (void) waitpid(busy, NULL, 0);
        CHECK_CASE(GROUP, "inotify/fanotify on /usr/bin while the host execs", "ENOSYS; no event seen",
                   t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "inotify errno") == ENOSYS &&
                           probe_long(t.res, "fanotify errno") == ENOSYS &&
                           probe_long(t.res, "inotify events") == 0,
                   "status %s, inotify %s, fanotify %s, %ld events", status_name(t.res),
                   errno_name((int) probe_long(t.res, "inotify errno")),
                   errno_name((int) probe_long(t.res, "fanotify errno")), probe_long(t.res, "inotify events"));
}
END_TEST

/* What names the host in /proc: its kernel command line, its boot id and the kernel's symbols.
 * The host's own values must not appear in what the run could read (empty files). */
START_TEST(test_proc_host_identity) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "echo \"cmdline $(wc -c < /proc/cmdline)\"; cat /proc/cmdline\n"
                "echo \"boot_id $(wc -c < /proc/sys/kernel/random/boot_id)\"; cat /proc/sys/kernel/random/boot_id\n"
                "echo \"kallsyms $(head -c 4096 /proc/kallsyms | wc -c)\"\n");
        _cleanup_free_ char *cmdline = NULL, *boot_id = NULL;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/proc/cmdline", 1 << 16, false, &cmdline, NULL), 0);
        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", 64, false, &boot_id,
                                           NULL), 0);
        cmdline[strcspn(cmdline, "\n")] = '\0';
        boot_id[strcspn(boot_id, "\n")] = '\0';
        sec_run_go(&t);
        CHECK_CASE(GROUP, "/proc/cmdline, boot_id, kallsyms", "empty; host values nowhere in the output",
                   t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "cmdline") == 0 &&
                           probe_long(t.res, "boot_id") == 0 && probe_long(t.res, "kallsyms") == 0 &&
                           !run_output_has(t.res, boot_id) && (isempty(cmdline) || !run_output_has(t.res, cmdline)),
                   "status %s, sizes %ld, %ld, %ld", status_name(t.res), probe_long(t.res, "cmdline"),
                   probe_long(t.res, "boot_id"), probe_long(t.res, "kallsyms"));
}
END_TEST

/* The host's load and thread count (/proc/loadavg): the kernel counts them host-wide, so the run
 * must read the engine's idle line, not the host's (which never says "1/1": the host has more
 * than one thread), also when the caller's umask is 077. */
START_TEST(test_proc_loadavg) {
        _cleanup_sec_run_ SecRun t = sec_run_new("echo \"loadavg $(cat /proc/loadavg)\"\n");
        const char *line;
        mode_t mask;

        /* Under the caller's strictest umask (the service's is 077), still readable. */
        mask = umask(077);
        sec_run_go(&t);
        (void) umask(mask);
        line = probe_find(t.res, "loadavg");
        CHECK_CASE(GROUP, "/proc/loadavg", "\"0.00 0.00 0.00 1/1 1\", not the host's",
                   t.res->status == RUN_STATUS_SUCCEEDED && line && startswith(line, "0.00 0.00 0.00 1/1 1\n"),
                   "status %s, read \"%.*s\"", status_name(t.res), line ? (int) strcspn(line, "\n") : 6,
                   line ?: "(none)");
}
END_TEST

/* Whether the engine can mount overlayfs here: built in or loaded, or a module the kernel can load
 * on the first mount (the VM's image has no modules: the engine then binds the tree). */
static bool overlayfs_available(void) {
        _cleanup_free_ char *fs = NULL, *dir = NULL;
        struct utsname u;

        if (read_full_file_at(AT_FDCWD, "/proc/filesystems", 1 << 16, false, &fs, NULL) >= 0 &&
            strstr(fs, "\toverlay\n"))
                return true;
        if (uname(&u) < 0)
                return false;
        dir = strdup_printf("/lib/modules/%s/kernel/fs/overlayfs", u.release);
        return access(dir, F_OK) >= 0;
}

/* mountinfo prints each mount's root as a path within its file system: a bind of the skill
 * folder would show where it lives on the host. The run reads its own and its init's mountinfo;
 * neither may name the test's skill folder or output folder (their random names), and /skill
 * must be a mount of its own root. */
START_TEST(test_proc_mountinfo_host_paths) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "echo \"self $(grep -c . /proc/self/mountinfo)\"; cat /proc/self/mountinfo\n"
                "echo \"init $(grep -c . /proc/1/mountinfo)\"; cat /proc/1/mountinfo\n"
                "echo \"skill-root-slash $(grep -c '^[0-9]* [0-9]* [0-9:]* / /skill ' /proc/self/mountinfo)\"\n");
        const char *skill_name = strrchr(t.base.path, '/') ? strrchr(t.base.path, '/') + 1 : t.base.path;
        const char *out_name = strrchr(t.out.path, '/') ? strrchr(t.out.path, '/') + 1 : t.out.path;

        sec_run_go(&t);
        if (!overlayfs_available()) {
                /* The documented fallback: the tree is bound and shows its path; the rest holds. */
                CHECK_CASE(GROUP, "host paths in mountinfo (no overlayfs: the tree is bound)",
                           "the output folder not shown",
                           t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "self") > 0 &&
                                   !run_output_has(t.res, out_name),
                           "status %s, output folder %s", status_name(t.res),
                           run_output_has(t.res, out_name) ? "shown" : "hidden");
                return;
        }
        CHECK_CASE(GROUP, "host paths in /proc/self/mountinfo and /proc/1/mountinfo",
                   "neither the skill's nor the output's folder; /skill rooted at /",
                   t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "self") > 0 &&
                           probe_long(t.res, "init") > 0 && probe_long(t.res, "skill-root-slash") == 1 &&
                           !run_output_has(t.res, skill_name) && !run_output_has(t.res, out_name),
                   "status %s, %ld and %ld lines, /skill rooted at / %ld, skill folder %s, output folder %s",
                   status_name(t.res), probe_long(t.res, "self"), probe_long(t.res, "init"),
                   probe_long(t.res, "skill-root-slash"), run_output_has(t.res, skill_name) ? "shown" : "hidden",
                   run_output_has(t.res, out_name) ? "shown" : "hidden");
}
END_TEST

START_TEST(test_i386_from_thread) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "i386-thread", NULL };

        sec_run_probe(&t, args);
        CHECK_CASE(GROUP, "int 0x80 from a second thread", "whole process killed: seccomp",
                   t.res->status == RUN_STATUS_SECCOMP && !strstr(sec_stdout(t.res), "survived"),
                   "status %s, signal %d%s", status_name(t.res), t.res->signal,
                   strstr(sec_stdout(t.res), "survived") ? ", main thread survived" : "");
}
END_TEST

/* socketcall(), the i386 multiplexer that carries every socket call's arguments in memory the
 * filter cannot read: through int 0x80 (the only table that has it on x86-64) it must kill like
 * any other i386 call, not open a socket the allowlist would refuse. */
START_TEST(test_socketcall_i386) {
#if !defined(__x86_64__)
        return;
#else
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, "socketcall");
        /* SYS_SOCKET (1) with no argument block: EFAULT if the call got through, SIGSYS if the
         * entry point kills it first. */
        _cleanup_free_ char *spec = strdup_printf("socketcall:-1:%x:-1:1:0", nr);
        char *args[] = { (char *) "abi", spec, NULL };

        ck_assert_int_gt(nr, 0);
        sec_run_probe(&t, args);
        CHECK_CASE(GROUP, "socketcall() via int 0x80 (i386 multiplexer)", "killed by SIGSYS",
                   t.res->status == RUN_STATUS_SUCCEEDED &&
                           probe_long(t.res, "sys 32 socketcall signal") == SIGSYS,
                   "status %s, %s", status_name(t.res),
                   probe_find(t.res, "sys 32 socketcall") ? "attempted" : "not attempted");
#endif
}
END_TEST

START_TEST(test_filter_survives) {
        static const char *const wheres[] = { "main", "fork", "thread", "exec", "python" };
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "/skill/probe survive\n"
                "python3 -c '\n"
                "import ctypes\n"
                "l = ctypes.CDLL(None, use_errno=True)\n"
                "u = ctypes.get_errno() if l.unshare(0x10000000) else 0\n"
                "m = ctypes.get_errno() if l.mount(b\"none\", b\"/tmp\", b\"tmpfs\", 0, None) else 0\n"
                "s = [x.split()[1] for x in open(\"/proc/self/status\") if x.startswith(\"Seccomp:\")][0]\n"
                "print(\"survive python unshare %d mount %d seccomp %s\" % (u, m, s))\n"
                "'\n");

        sec_run_go(&t);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (size_t i = 0; i < ELEMENTSOF(wheres); i++) {
                _cleanup_free_ char *prefix = strdup_printf("survive %s", wheres[i]),
                                    *name = strdup_printf("filter in %s",
                                                          streq(wheres[i], "main")     ? "the skill process"
                                                          : streq(wheres[i], "fork")   ? "a forked child"
                                                          : streq(wheres[i], "thread") ? "a thread"
                                                          : streq(wheres[i], "exec")
                                                                  ? "an exec'd program"
                                                                  : "python3 started by bash");
                const char *v = probe_find(t.res, prefix);
                long u = -1, m = -1, sc = -1;

                if (v)
                        (void) sscanf(v, "unshare %ld mount %ld seccomp %ld", &u, &m, &sc);
                CHECK_CASE(GROUP, name, "unshare/mount EPERM, Seccomp 2",
                           u == EPERM && m == EPERM && sc == 2, "unshare %s, mount %s, Seccomp %ld",
                           errno_name((int) u), errno_name((int) m), sc);
        }
}
END_TEST

START_TEST(test_user_namespaces) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "userns", NULL };
        long tool;

        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        CHECK_CASE(GROUP, "unshare(CLONE_NEWUSER), alone and with others", "EPERM",
                   probe_long(t.res, "userns unshare") == EPERM &&
                           probe_long(t.res, "userns unshare-all") == EPERM,
                   "%s, %s", errno_name((int) probe_long(t.res, "userns unshare")),
                   errno_name((int) probe_long(t.res, "userns unshare-all")));
        CHECK_CASE(GROUP, "clone(CLONE_NEWUSER), clone3(CLONE_NEWUSER)", "EPERM, ENOSYS; no child",
                   probe_long(t.res, "userns clone") == EPERM &&
                           probe_long(t.res, "userns clone3") == ENOSYS &&
                           !strstr(sec_stdout(t.res), "created"),
                   "%s, %s%s", errno_name((int) probe_long(t.res, "userns clone")),
                   errno_name((int) probe_long(t.res, "userns clone3")),
                   strstr(sec_stdout(t.res), "created") ? ", CHILD CREATED" : "");
        tool = probe_long(t.res, "userns unshare-tool");
        CHECK_CASE(GROUP, "unshare(1) --user --map-root-user; setns(init's)", "fails; same user namespace",
                   tool != 0 && probe_long(t.res, "userns setns") > 0 &&
                           probe_long(t.res, "userns same-ns") == 1,
                   "unshare(1) %s, setns %s, same namespace %ld",
                   tool == LONG_MIN ? "absent"
                   : tool == 0      ? "SUCCEEDED"
                                    : "failed",
                   errno_name((int) probe_long(t.res, "userns setns")),
                   probe_long(t.res, "userns same-ns"));
}
END_TEST

/* skillctl on a real terminal (a pty this test owns, as its controlling terminal): the skill
 * tries TIOCSTI on everything it has; the terminal's input queue must stay empty. */
START_TEST(test_tiocsti_terminal) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_close_ int master = -EBADF, slave = -EBADF;
        _cleanup_free_ char *screen = NULL;
        struct termios tio;
        int queued = -1, control = -1, status;
        char *pts;
        pid_t pid;

        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(master, 0);
        ck_assert_int_eq(grantpt(master), 0);
        ck_assert_int_eq(unlockpt(master), 0);
        pts = ptsname(master);
        ck_assert_ptr_nonnull(pts);
        slave = open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
        ck_assert_int_ge(slave, 0);
        /* Raw: nothing echoed, nothing cooked; what sits in the input queue is what was injected. */
        ck_assert_int_eq(tcgetattr(slave, &tio), 0);
        cfmakeraw(&tio);
        ck_assert_int_eq(tcsetattr(slave, TCSANOW, &tio), 0);

        /* The control: an injection the way a process that may do it would, seen in the queue. */
        ck_assert_int_eq(ioctl(slave, TIOCSTI, "x"), 0);
        ck_assert_int_eq(ioctl(slave, FIONREAD, &control), 0);
        ck_assert_int_eq(tcflush(slave, TCIFLUSH), 0);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char *argv[] = { (char *) test_env_path("SKILLCTL"),
                                 (char *) "run",
                                 (char *) "--local",
                                 t.skill_path,
                                 (char *) "--script",
                                 (char *) "probe",
                                 (char *) "--output-dir",
                                 t.out_path,
                                 (char *) "--",
                                 (char *) "tty",
                                 NULL };
                int tty;

                if (setsid() < 0)
                        _exit(126);
                tty = open(pts, O_RDWR);
                if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) < 0 || dup2(tty, 0) < 0 || dup2(tty, 1) < 0 ||
                    dup2(tty, 2) < 0)
                        _exit(126);
                execv(argv[0], argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_int_eq(ioctl(slave, FIONREAD, &queued), 0);
        {
                char buf[16384];
                ssize_t n;

                size_t have = 0;

                /* A pty hands its buffer out in pieces: read until it is empty. */
                ck_assert_int_eq(fcntl(master, F_SETFL, O_NONBLOCK), 0);
                while (have < sizeof(buf) - 1 && (n = read(master, buf + have, sizeof(buf) - 1 - have)) > 0)
                        have += (size_t) n;
                buf[have] = '\0';
                screen = strdup(buf);
        }

        CHECK_CASE(GROUP, "TIOCSTI on the skill's fds and /dev/tty (pty caller)", "EPERM; no tty reachable",
                   WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(screen, "tiocsti fd0 1") &&
                           strstr(screen, "tiocsti fd1 1") && strstr(screen, "tiocsti fd2 1") &&
                           strstr(screen, "ttys 0") && strstr(screen, "open /dev/tty 2"),
                   "exit %d; fd0-2 %s, /dev/tty %s", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                   strstr(screen, "tiocsti fd0 1") ? "EPERM" : "?",
                   strstr(screen, "open /dev/tty 2") ? "ENOENT" : "?");
        CHECK_CASE(GROUP, "the caller's terminal input queue", "empty (control: 1 byte seen)",
                   control == 1 && queued == 0, "%d bytes queued (control %d)", queued, control);
        /* The skill tried to leave the terminal concealing text, mid-line: its escape reaches the
         * terminal as text, and the summary still starts a line of its own. */
        CHECK_CASE("hostile-input", "skill output hiding the summary (ESC[8m, no newline)",
                   "escaped; summary on its own line",
                   strstr(screen, "\\x1b[8m") && !strstr(screen, "\x1b[8m") &&
                           strstr(screen, "\nskillctl: succeeded") != NULL, "%s",
                   strstr(screen, "\x1b[8m") ? "ESC[8m REACHED the terminal" : "escaped, own line");
}
END_TEST

TCase *security_tcase_identity(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_capabilities);
        tcase_add_test(tc, test_refused_syscalls_every_abi);
        tcase_add_test(tc, test_i386_from_thread);
        tcase_add_test(tc, test_socketcall_i386);
        tcase_add_test(tc, test_init_command_line);
        tcase_add_test(tc, test_filter_survives);
        tcase_add_test(tc, test_user_namespaces);
        tcase_add_test(tc, test_tiocsti_terminal);
        tcase_add_test(tc, test_init_untouchable);
        tcase_add_test(tc, test_host_watch);
        tcase_add_test(tc, test_proc_host_identity);
        tcase_add_test(tc, test_proc_loadavg);
        tcase_add_test(tc, test_proc_mountinfo_host_paths);
        return tc;
}
