/* The resources group: memory, the tmpfs mounts, /out, inodes, output, processes, threads, CPU,
 * escaping daemons and core dumps. Each case asserts the status the run ended with and that the
 * host stayed responsive: a helper process on the host kept making progress during the run and
 * the host can still start a process afterwards (no rate is asserted). Where the backend decides
 * the outcome, the case runs with the engine's own choice (a cgroup, as root) and with the rlimit
 * fallback forced. */
#include "security-util.h"

#define GROUP "resources"

static const SandboxBackendOps *const backends[] = { NULL, &sandbox_backend_rlimit };

/* Under AddressSanitizer the engine's forked child runs instrumented code after setting the rlimit
 * backend's RLIMIT_DATA, and the sanitizer's allocator dies there: that backend is tested in
 * ordinary builds only. */
#if TEST_ASAN
#define N_BACKENDS 1
#else
#define N_BACKENDS ELEMENTSOF(backends)
#endif

static bool is_rlimit(const RunResult *r) {
        return streq_ptr(r->backend, "rlimit");
}

/* The row's name with the backend that enforced the limits. */
static char *with_backend(const char *name, const RunResult *r) {
        return strdup_printf("%s [%s]", name, strna(r->backend));
}

START_TEST(test_memory_many_processes) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "memhog", (char *) "3", (char *) "120", NULL };
        _cleanup_free_ char *name = NULL;
        Liveness l = liveness_start();
        uint64_t progress;

        sec_run_probe(&t, args);
        progress = liveness_stop(&l);
        name = with_backend("3 processes x 120M under a 256M limit", t.res);
        if (is_rlimit(t.res))
                /* Documented: rlimits cap each process, not the run; the case still proves the
                 * host came through, and the cgroup backends are where the total is held. */
                CHECK_CASE(GROUP, name, "each within RLIMIT_DATA; host alive",
                           t.res->status == RUN_STATUS_SUCCEEDED && progress > 0 && host_can_fork(),
                           "status %s, host helper +%" PRIu64, status_name(t.res), progress);
        else
                CHECK_CASE(GROUP, name, "oom (137); host alive",
                           t.res->status == RUN_STATUS_OOM && run_result_exit_code(t.res) == 137 &&
                                   progress > 0 && host_can_fork(),
                           "status %s, peak %" PRIu64 "M, host helper +%" PRIu64, status_name(t.res),
                           t.res->usage.memory_peak == RUN_USAGE_UNKNOWN ? 0
                                                                         : t.res->usage.memory_peak >> 20,
                           progress);
}
END_TEST

/* The host's socket memory, in pages: the TCP and UDP "mem" counters of /proc/net/sockstat, which
 * are the kernel's host-wide totals (every network namespace's sockets count in them). */
static uint64_t host_socket_pages(void) {
        _cleanup_free_ char *s = NULL;
        uint64_t total = 0;

        if (read_full_file_at(AT_FDCWD, "/proc/net/sockstat", 1 << 16, false, &s, NULL) < 0)
                return 0;
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
                char *m = strstr(line, " mem ");
                uint64_t v;

                if ((startswith(line, "TCP:") || startswith(line, "UDP:")) && m &&
                    sscanf(m, " mem %" SCNu64, &v) == 1)
                        total += v;
        }
        return total;
}

/* Loopback TCP and UDP queues the skill fills and never reads are kernel memory of the host: a
 * host process samples the host-wide socket memory during the run, and its highest point above
 * where it started must stay within the run's memory limit (plus a little: other programs of the
 * host use sockets too, and the kernel lets a charge overshoot by a batch). Under cgroup v1 the
 * socket counter refuses more and the run goes on; under v2 socket memory counts with the rest
 * and reaching the limit is the OOM kill of the run. */
START_TEST(test_socket_memory) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "sockhold", (char *) "3", (char *) "256", NULL };
        _cleanup_free_ char *name = NULL;
        uint64_t held, slack = 8ULL << 20;
        Sampler m;

        t.req.limits.memory_max = 64ULL * 1024 * 1024;
        m = sampler_start(host_socket_pages);
        sec_run_probe(&t, args);
        held = sampler_stop(&m) * (uint64_t) sysconf(_SC_PAGESIZE);
        name = with_backend("loopback TCP+UDP queues never read, 64M limit", t.res);
        CHECK_CASE(GROUP, name,
                   "host socket memory <= 64M + 8M (v1: refused; v2: oom); in the reported peak",
                   ((t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "sock holding") == 1) ||
                    t.res->status == RUN_STATUS_OOM) &&
                           held <= t.req.limits.memory_max + slack &&
                           t.res->usage.memory_peak != RUN_USAGE_UNKNOWN &&
                           t.res->usage.memory_peak + 2 * slack >= held,
                   "status %s, queued %ldM TCP + %ldM UDP, host socket memory +%" PRIu64 "M, peak %" PRIu64 "M",
                   status_name(t.res), MAX(probe_long(t.res, "sock tcp"), 0L) >> 20,
                   MAX(probe_long(t.res, "sock udp"), 0L) >> 20, held >> 20,
                   t.res->usage.memory_peak == RUN_USAGE_UNKNOWN ? 0 : t.res->usage.memory_peak >> 20);
}
END_TEST

static uint64_t host_aio_nr(void) {
        _cleanup_free_ char *s = NULL;
        uint64_t v = 0;

        if (read_full_file_at(AT_FDCWD, "/proc/sys/fs/aio-nr", 64, false, &s, NULL) >= 0)
                (void) sscanf(s, "%" SCNu64, &v);
        return v;
}

/* Linux AIO contexts count in the host-wide fs.aio-nr against fs.aio-max-nr: a run that takes them
 * all makes every program of the host that uses AIO fail. The host samples aio-nr during the run. */
START_TEST(test_host_aio_counter) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "counters", (char *) "1", NULL };
        uint64_t rose;
        Sampler m;

        m = sampler_start(host_aio_nr);
        sec_run_probe(&t, args);
        rose = sampler_stop(&m);
        CHECK_CASE(GROUP, "io_setup() until the kernel refuses", "ENOSYS at once; host fs.aio-nr unchanged",
                   t.res->status == RUN_STATUS_SUCCEEDED && probe_long(t.res, "aio contexts") == 0 &&
                           probe_long(t.res, "aio errno") == ENOSYS && rose == 0,
                   "status %s, %ld contexts (%s), host fs.aio-nr +%" PRIu64, status_name(t.res),
                   probe_long(t.res, "aio contexts"), errno_name((int) probe_long(t.res, "aio errno")), rose);
}
END_TEST

/* The host paths of the run cgroups (skilld-run-* under v1, run-* under v2) that a process with
 * marker in its command line is in, from its /proc/PID/cgroup. */
static char **run_cgroups_of(const char *marker) {
        _cleanup_strv_free_ char **paths = NULL;
        DIR *d = opendir("/proc");
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *cmdline = NULL, *cgroups = NULL, *p1 = NULL, *p2 = NULL;
                size_t n = 0;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                p1 = strdup_printf("/proc/%s/cmdline", de->d_name);
                p2 = strdup_printf("/proc/%s/cgroup", de->d_name);
                if (read_full_file_at(AT_FDCWD, p1, 1 << 16, false, &cmdline, &n) < 0)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (cmdline[i] == '\0')
                                cmdline[i] = ' ';
                if (!strstr(cmdline, marker) || read_full_file_at(AT_FDCWD, p2, 1 << 16, false, &cgroups, NULL) < 0)
                        continue;
                for (char *line = strtok(cgroups, "\n"); line; line = strtok(NULL, "\n")) {
                        char *ctrls = strchr(line, ':'), *path = ctrls ? strchr(ctrls + 1, ':') : NULL, *base;

                        if (!path)
                                continue;
                        *path++ = '\0';
                        ctrls++;
                        base = strrchr(path, '/');
                        if (!base || !(startswith(base + 1, "skilld-run-") || startswith(base + 1, "run-")))
                                continue;
                        if (isempty(ctrls)) {
                                const char *const mnts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

                                for (size_t i = 0; i < ELEMENTSOF(mnts); i++) {
                                        _cleanup_free_ char *full = strdup_printf("%s%s", mnts[i], path);

                                        if (access(full, F_OK) >= 0 && !strv_contains(paths, full))
                                                ck_assert_int_eq(strv_extend(&paths, full), 0);
                                }
                        } else if (!startswith(ctrls, "name=")) {
                                _cleanup_free_ char *full = strdup_printf("/sys/fs/cgroup/%s%s", ctrls, path);

                                if (!strv_contains(paths, full))
                                        ck_assert_int_eq(strv_extend(&paths, full), 0);
                        }
                }
        }
        closedir(d);
        return TAKE_PTR(paths);
}

static size_t paths_existing(char **paths) {
        size_t n = 0;

        STRV_FOREACH(p, paths)
                n += access(*p, F_OK) >= 0;
        return n;
}

/* skillctl killed mid-run, with SIGKILL (nothing it can do) and with SIGQUIT (Ctrl-\): the run's
 * processes must die at once, and its cgroups must not stay: SIGQUIT ends the run in order, and
 * what a SIGKILL leaves, the next run removes. */
START_TEST(test_killed_client_cgroups) {
        static const int sigs[] = { SIGKILL, SIGQUIT };
        _cleanup_free_ char *marker = random_marker(), *body = NULL;
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);

        body = strdup_printf("exec -a %s sleep 60", marker);
        sec_run_set_script(&t, body);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
                _cleanup_strv_free_ char **cgroups = NULL;
                char *argv[] = { (char *) test_env_path("SKILLCTL"), (char *) "run", (char *) "--local",
                                 (char *) "-q", (char *) "--output-dir", t.out_path, t.skill_path, NULL };
                _cleanup_free_ char *name = NULL;
                size_t after_kill, after_next;
                bool alive_after = true;
                int status;
                pid_t pid;

                (void) rm_rf_at(AT_FDCWD, t.out_path);
                pid = fork();
                ck_assert_int_ge(pid, 0);
                if (pid == 0) {
                        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                                _exit(126);
                        execv(argv[0], argv);
                        _exit(127);
                }
                for (unsigned k = 0; k < 1000 && !cgroups; k++) {
                        cgroups = run_cgroups_of(marker);
                        if (!cgroups)
                                (void) usleep(10 * 1000);
                }
                ck_assert_msg(cgroups, "the run never started");
                ck_assert_int_eq(kill(pid, sigs[i]), 0);
                ck_assert_int_eq(waitpid(pid, &status, 0), pid);
                for (unsigned k = 0; k < 500 && alive_after; k++) {
                        alive_after = host_has_marker(marker);
                        if (alive_after)
                                (void) usleep(10 * 1000);
                }
                after_kill = paths_existing(cgroups);
                /* The next run, through the engine as skillctl would. */
                sec_run_set_script(&t, "true");
                (void) rm_rf_at(AT_FDCWD, t.out_path);
                sec_run_go(&t);
                sec_run_set_script(&t, body);
                after_next = paths_existing(cgroups);
                name = strdup_printf("skillctl killed by SIG%s mid-run [%s]", sigabbrev_np(sigs[i]),
                                     strna(t.res->backend));
                CHECK_CASE(GROUP, name, sigs[i] == SIGKILL ? "skill dies; cgroups gone after the next run"
                                                           : "canceled (130); skill dies; no cgroup left",
                           !alive_after && after_next == 0 &&
                                   (sigs[i] == SIGKILL || (WIFEXITED(status) && WEXITSTATUS(status) == 130 &&
                                                           after_kill == 0)),
                           "skill %s, %zu cgroups (%zu right after), exit %s%d", alive_after ? "ALIVE" : "gone",
                           after_next, after_kill, WIFSIGNALED(status) ? "signal " : "",
                           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
}
END_TEST

START_TEST(test_tmpfs_caps) {
        static const char *const dirs[] = { "/tmp", "/home/skill", "/work", "/dev/shm" };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "fill", (char *) "/tmp", (char *) "/home/skill", (char *) "/work",
                         (char *) "/dev/shm", NULL };
        size_t capped = 0;
        long max = 0;

        sec_run_probe(&t, args);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *prefix = strdup_printf("fill %s", dirs[i]);
                const char *v = probe_find(t.res, prefix);
                long long bytes = -1;
                int e = -1;

                /* The file size limit is the largest tmpfs: either may stop the write first. */
                if (v && sscanf(v, "%lld %d", &bytes, &e) == 2 && (e == ENOSPC || e == EFBIG) && bytes > 0 &&
                    (uint64_t) bytes <= t.req.limits.tmpfs_size)
                        capped++;
                max = MAX(max, (long) (bytes >> 20));
        }
        CHECK_CASE(GROUP, "fill /tmp, HOME, /work, /dev/shm (16M each)", "ENOSPC/EFBIG at <= 16M",
                   capped == ELEMENTSOF(dirs), "%zu of 4 capped, largest %ldM", capped, max);
}
END_TEST

static uint64_t tree_bytes(int dir_fd, size_t *ret_entries) {
        _cleanup_close_ int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = fdopendir(fd);
        struct dirent *de;
        uint64_t total = 0;

        ck_assert_ptr_nonnull(d);
        TAKE_FD(fd);
        while ((de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                ck_assert_int_eq(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
                (*ret_entries)++;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub =
                                openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                        ck_assert_int_ge(sub, 0);
                        total += tree_bytes(sub, ret_entries);
                } else
                        total += (uint64_t) st.st_size;
        }
        closedir(d);
        return total;
}

START_TEST(test_out_floods) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "i=0; while head -c 1048576 /dev/zero > /out/files/f$i 2>/dev/null; do i=$((i + 1)); done\n"
                "echo \"files $i\"\n");
        _cleanup_close_ int files = -EBADF;
        size_t entries = 0;
        uint64_t bytes;

        sec_run_go(&t);
        files = open(t.out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(files, 0);
        bytes = tree_bytes(files, &entries);
        CHECK_CASE(GROUP, "/out filled with 1M files", "output-limit; host <= 16M",
                   t.res->status == RUN_STATUS_OUTPUT_LIMIT && t.res->out_full &&
                           bytes <= t.req.limits.out_max + (1 << 20) /* logs, result.json */,
                   "status %s, %" PRIu64 "M on the host", status_name(t.res), bytes >> 20);

        /* The same with empty files: the inode count of /out is the artifact cap. */
        sec_run_set_script(&t, "/skill/probe inodes files /out/files");
        t.req.limits.artifacts_max = 200;
        files = safe_close(files);
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, t.out_path), 0);
        sec_run_go(&t);
        entries = 0;
        files = open(t.out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(files, 0);
        (void) tree_bytes(files, &entries);
        {
                long made = -1;
                int e = -1;

                (void) sscanf(probe_find(t.res, "inodes /out/files") ?: "", "%ld %d", &made, &e);
                CHECK_CASE(GROUP, "/out flooded with empty files (cap 200)", "output-limit; <= 200 copied",
                           t.res->status == RUN_STATUS_OUTPUT_LIMIT && t.res->n_artifacts <= 200 &&
                           entries <= 200 + 4, "status %s, stopped after %ld (%s), %zu copied",
                           status_name(t.res), made, errno_name(e), t.res->n_artifacts);
        }
}
END_TEST

START_TEST(test_inode_flood) {
        static const char *const dirs[] = { "/tmp", "/work", "/dev/shm", "/home/skill" };
        _cleanup_sec_run_ SecRun t = sec_run_new("/skill/probe inodes files /tmp /work /dev/shm\n"
                                                 "/skill/probe inodes dirs /home/skill\n");
        _cleanup_free_ char *name = NULL;
        /* What the engine allows per tmpfs of this size: two per page, plus 1024. */
        long cap = (long) (t.req.limits.tmpfs_size / 2048 + 1024), most = 0;
        size_t stopped = 0;
        Liveness l;
        uint64_t progress;

        t.req.backend = backends[_i];
        l = liveness_start();
        sec_run_go(&t);
        progress = liveness_stop(&l);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *prefix = strdup_printf("inodes %s", dirs[i]);
                const char *v = probe_find(t.res, prefix);
                long n = -1;
                int e = -1;

                if (v && sscanf(v, "%ld %d", &n, &e) == 2 && e == ENOSPC && n > 100 && n <= cap)
                        stopped++;
                most = MAX(most, n);
        }
        name = with_backend("inode flood: empty files, dirs (4 tmpfs)", t.res);
        CHECK_CASE(GROUP, name, "ENOSPC at <= 9216 each; run ends",
                   t.res->status == RUN_STATUS_SUCCEEDED && stopped == ELEMENTSOF(dirs) && progress > 0,
                   "status %s, %zu of 4 stopped, most %ld, host helper +%" PRIu64, status_name(t.res),
                   stopped, most, progress);
}
END_TEST

START_TEST(test_output_flood) {
        _cleanup_sec_run_ SecRun t = sec_run_new(
                "for i in 1 2 3 4; do\n"
                "  head -c 8000000 /dev/zero | tr '\\0' o &\n"
                "  head -c 8000000 /dev/zero | tr '\\0' e >&2 &\n"
                "done\n"
                "wait\n");

        t.req.limits.stdout_max = t.req.limits.stderr_max = 1024 * 1024;
        /* 64M through tr: under TCG on a loaded host that took longer than the default 30 s
         * (status timeout with 30 of the 32M counted on each stream). The case is about the cap,
         * not the speed. */
        t.req.limits.timeout_usec = 180ULL * 1000 * 1000;
        sec_run_go(&t);
        CHECK_CASE(GROUP, "4 writers x 8M on stdout and stderr (1M cap)", "succeeded; both truncated",
                   t.res->status == RUN_STATUS_SUCCEEDED && t.res->stdout_stream.truncated &&
                           t.res->stderr_stream.truncated && t.res->stdout_stream.total == 32000000 &&
                           t.res->stderr_stream.total == 32000000 &&
                           t.res->stdout_stream.size < (1 << 20) + 128 &&
                           t.res->stderr_stream.size < (1 << 20) + 128,
                   "status %s, kept %zu/%zu of %" PRIu64 "/%" PRIu64, status_name(t.res),
                   t.res->stdout_stream.size, t.res->stderr_stream.size, t.res->stdout_stream.total,
                   t.res->stderr_stream.total);
}
END_TEST

START_TEST(test_fork_bomb) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "forkbomb", NULL };
        _cleanup_free_ char *name = NULL;
        const char *v;
        long procs = -1, e = -1;
        Liveness l;
        uint64_t progress;

        t.req.backend = backends[_i];
        t.req.limits.tasks_max = 32;
        l = liveness_start();
        sec_run_probe(&t, args);
        progress = liveness_stop(&l);
        v = probe_find(t.res, "forkbomb");
        if (v)
                (void) sscanf(v, "%ld procs %ld", &e, &procs);
        name = with_backend("fork bomb (every process forks)", t.res);
        CHECK_CASE(GROUP, name, is_rlimit(t.res) ? "failed (EAGAIN); <= 32 procs" : "tasks; <= 32 procs",
                   t.res->status == (is_rlimit(t.res) ? RUN_STATUS_FAILED : RUN_STATUS_TASKS) &&
                           e == EAGAIN && procs > 1 && procs <= 32 && progress > 0 && host_can_fork(),
                   "status %s, %ld processes, host helper +%" PRIu64, status_name(t.res), procs, progress);
}
END_TEST

START_TEST(test_thread_bomb) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "threadbomb", NULL };
        _cleanup_free_ char *name = NULL;
        const char *v;
        long threads = -1, e = -1;
        Liveness l;
        uint64_t progress;

        t.req.backend = backends[_i];
        t.req.limits.tasks_max = 32;
        l = liveness_start();
        sec_run_probe(&t, args);
        progress = liveness_stop(&l);
        v = probe_find(t.res, "threadbomb");
        if (v)
                (void) sscanf(v, "%ld threads %ld", &e, &threads);
        name = with_backend("thread bomb", t.res);
        CHECK_CASE(GROUP, name, is_rlimit(t.res) ? "failed (EAGAIN); < 32 threads" : "tasks; < 32 threads",
                   t.res->status == (is_rlimit(t.res) ? RUN_STATUS_FAILED : RUN_STATUS_TASKS) &&
                           e == EAGAIN && threads > 0 && threads < 32 && progress > 0,
                   "status %s, %ld threads, host helper +%" PRIu64, status_name(t.res), threads, progress);
}
END_TEST

START_TEST(test_cpu_burners) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "burn", (char *) "4", NULL };
        _cleanup_free_ char *name = NULL;
        Liveness l;
        uint64_t progress;

        t.req.backend = backends[_i];
        t.req.limits.timeout_usec = 2ULL * 1000 * 1000;
        l = liveness_start();
        sec_run_probe(&t, args);
        progress = liveness_stop(&l);
        name = with_backend("4 busy threads, 2s timeout", t.res);
        CHECK_CASE(GROUP, name, "timeout (124); host alive",
                   t.res->status == RUN_STATUS_TIMEOUT && run_result_exit_code(t.res) == 124 &&
                           progress > 0 && host_can_fork(),
                   "status %s, CPU %.1fs in %.1fs, host helper +%" PRIu64, status_name(t.res),
                   (double) (t.res->usage.user_usec + t.res->usage.system_usec) / 1e6,
                   (double) t.res->usage.wall_usec / 1e6, progress);
}
END_TEST

START_TEST(test_escape) {
        _cleanup_free_ char *marker = random_marker(), *body = NULL;
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        bool during = false;

        /* Double fork, setsid, hangup and termination ignored, a new name, a brood of children;
         * the skill then ends at once. */
        body = strdup_printf("/skill/probe escape %s\n"
                             "n=0; for p in /proc/[0-9]*; do grep -qsa %s $p/cmdline && n=$((n + 1)); done\n"
                             "echo \"alive $n\"\n", marker, marker);
        sec_run_set_script(&t, body);
        sec_run_go(&t);
        during = probe_long(t.res, "escaped") == 1 && probe_long(t.res, "alive") > 0;
        CHECK_CASE(GROUP, "double fork + setsid daemon, skill exits", "succeeded; daemon gone from host",
                   t.res->status == RUN_STATUS_SUCCEEDED && during && !host_has_marker(marker) &&
                   !host_has_uid(t.res->uid), "status %s, %s inside, %s on the host", status_name(t.res),
                   during ? "alive" : "NOT STARTED", host_has_marker(marker) ? "ALIVE" : "gone");

        /* The same, and the skill then busy-loops into its timeout. */
        free(body);
        body = strdup_printf("/skill/probe escape %s\nwhile :; do :; done\n", marker);
        sec_run_set_script(&t, body);
        t.req.limits.timeout_usec = 2ULL * 1000 * 1000;
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, t.out_path), 0);
        sec_run_go(&t);
        CHECK_CASE(GROUP, "the same daemon, skill times out", "timeout; daemon gone from host",
                   t.res->status == RUN_STATUS_TIMEOUT && probe_long(t.res, "escaped") == 1 &&
                   !host_has_marker(marker) && !host_has_uid(t.res->uid), "status %s, %s on the host",
                   status_name(t.res), host_has_marker(marker) ? "ALIVE" : "gone");
}
END_TEST

START_TEST(test_uid_clean_for_reuse) {
        _cleanup_free_ char *marker = random_marker(), *body = NULL;
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        uid_t uid;

        /* The first run leaves all it can: a daemon, files in every private place. */
        body = strdup_printf("/skill/probe escape %s\n"
                             "for d in /tmp /dev/shm /home/skill /work; do echo left > $d/left-%s; done\n",
                             marker, marker);
        sec_run_set_script(&t, body);
        sec_run_go(&t);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        uid = t.res->uid;

        /* The next run gets the very same uid, and finds nothing of the first: no file, no
         * process but its own init and script, nobody to signal. */
        t.req.uid = uid;
        sec_run_set_script(
                &t, "echo \"left $(ls -A /tmp /dev/shm /home/skill /work 2>/dev/null | grep -c left)\"\n"
                    "n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo \"procs $n\"\n"
                    "kill -0 -1 2>/dev/null; echo \"others $?\"\n");
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, t.out_path), 0);
        sec_run_go(&t);
        CHECK_CASE(GROUP, "uid reused by the next run", "nothing of the last run left",
                   t.res->status == RUN_STATUS_SUCCEEDED && t.res->uid == uid &&
                           probe_long(t.res, "left") == 0 && probe_long(t.res, "procs") == 2 &&
                           probe_long(t.res, "others") == 1 && !host_has_marker(marker),
                   "uid %u again: %ld files left, %ld processes, %s to signal", uid,
                   probe_long(t.res, "left"), probe_long(t.res, "procs"),
                   probe_long(t.res, "others") == 1 ? "nobody" : "SOMEONE");
}
END_TEST

START_TEST(test_core_dumps) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        char *args[] = { (char *) "core", (char *) "die", NULL };
        _cleanup_free_ char *pattern = NULL;
        const char *v;
        bool piped, host_core = false;
        long sig = -1, dumped = -1;
        int dirs[3];

        (void) read_full_file_at(AT_FDCWD, "/proc/sys/kernel/core_pattern", 4096, false, &pattern, NULL);
        piped = pattern && pattern[0] == '|';
        sec_run_probe(&t, args);
        v = probe_find(t.res, "core-child");
        if (v)
                (void) sscanf(v, "signal %ld dumped %ld", &sig, &dumped);

        /* Wherever a "core" pattern could have put one on the host: the skill, the output, here. */
        dirs[0] = t.skill_fd;
        dirs[1] = t.out.fd;
        dirs[2] = AT_FDCWD;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_close_ int fd = openat(dirs[i], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                DIR *d = fdopendir(fd);
                struct dirent *de;

                ck_assert_ptr_nonnull(d);
                TAKE_FD(fd);
                while ((de = readdir(d)))
                        host_core = host_core || startswith(de->d_name, "core");
                closedir(d);
        }
        CHECK_CASE(GROUP, "core dumps: RLIMIT_CORE, raising it, a crash", "0/0, EPERM; no core file",
                   t.res->status == RUN_STATUS_SIGNAL && t.res->signal == SIGABRT &&
                           probe_long(t.res, "core-soft") == 0 && probe_long(t.res, "core-hard") == 0 &&
                           probe_long(t.res, "core-raise") == EPERM && sig == SIGABRT &&
                           (piped || dumped == 0) && probe_long(t.res, "core-files") == 0 && !host_core,
                   "status %s (%s), limit %ld/%ld, raise %s, child dumped %ld%s, core file %s",
                   status_name(t.res), strna(sigabbrev_np(t.res->signal)), probe_long(t.res, "core-soft"),
                   probe_long(t.res, "core-hard"), errno_name((int) probe_long(t.res, "core-raise")),
                   dumped, piped ? " (piped core_pattern)" : "",
                   host_core || probe_long(t.res, "core-files") != 0 ? "FOUND" : "none");
}
END_TEST

TCase *security_tcase_resources(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_memory_many_processes);
        tcase_add_test(tc, test_socket_memory);
        tcase_add_test(tc, test_host_aio_counter);
        tcase_add_test(tc, test_killed_client_cgroups);
        tcase_add_test(tc, test_tmpfs_caps);
        tcase_add_test(tc, test_out_floods);
        tcase_add_loop_test(tc, test_inode_flood, 0, N_BACKENDS);
        tcase_add_test(tc, test_output_flood);
        tcase_add_loop_test(tc, test_fork_bomb, 0, N_BACKENDS);
        tcase_add_loop_test(tc, test_thread_bomb, 0, N_BACKENDS);
        tcase_add_loop_test(tc, test_cpu_burners, 0, N_BACKENDS);
        tcase_add_test(tc, test_escape);
        tcase_add_test(tc, test_uid_clean_for_reuse);
        tcase_add_test(tc, test_core_dumps);
        return tc;
}
