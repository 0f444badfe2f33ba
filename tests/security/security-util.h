/* What the adversarial suite's groups share: the outcome table every case reports into, runs of
 * a skill holding the probe (through the engine, or through the skillctl binary), reading the
 * probe's "what detail value" lines, and looking at the host: processes, files, liveness. */
#pragma once

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "engine.h"
#include "fileio.h"
#include "sandbox-internal.h"
#include "test-util.h"

/* ---- the outcome table (test-security.c) ---- */

/* One row: group, case, what must happen, what did. Safe from check's forked test processes. A
 * row that did not pass fails its test when the test ends (the teardown every group's TCase
 * gets), so the rows after it are still checked and reported. */
void outcome_record(const char *group, const char *name, const char *expected, bool pass,
                    const char *observed);

#define CHECK_CASE(group, name, expected, pass, ...)                                            \
        do {                                                                                    \
                bool _pass_ = (pass);                                                           \
                _cleanup_free_ char *_obs_ = strdup_printf(__VA_ARGS__);                        \
                outcome_record((group), (name), (expected), _pass_, _obs_);                     \
        } while (0)

TCase *security_tcase_filesystem(void);
TCase *security_tcase_identity(void);
TCase *security_tcase_network(void);
TCase *security_tcase_resources(void);
TCase *security_tcase_inputs(void);
TCase *security_tcase_artifacts(void);

/* ---- small things ---- */

static inline const char *errno_name(int e) {
        return e == 0 ? "0" : strerrorname_np(e) ?: "E?";
}

static inline char *random_marker(void) {
        uint64_t x;

        ck_assert_int_eq(getentropy(&x, sizeof(x)), 0);
        return strdup_printf("skilld-sec-%016" PRIx64, x);
}

static inline const char *test_env_path(const char *var) {
        const char *p = getenv(var);

        ck_assert_msg(p, "$%s is not set (run through meson)", var);
        return p;
}

static inline void copy_file_to(const char *src, int dir_fd, const char *dst, mode_t mode) {
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, src, 64 << 20, false, &data, &size), 0);
        fd = openat(dir_fd, dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, data, size), 0);
        ck_assert_int_eq(fchmod(fd, mode), 0);
}

/* Whether a file is as it was: same inode, mode, owner, size, links and times. */
static inline bool stat_same(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
                a->st_uid == b->st_uid && a->st_gid == b->st_gid && a->st_size == b->st_size &&
                a->st_nlink == b->st_nlink && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
                a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
                a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* ---- a skill, and runs of it through the engine ---- */

typedef struct SecRun {
        TestDir base;           /* 0755; holds skill/ and whatever the case puts next to it */
        char *skill_path;
        int skill_fd;
        TestDir out;
        char *out_path;         /* out/run, the run's output directory */
        RunRequest req;
        RunResult *res;
} SecRun;

static inline void sec_run_done(SecRun *t) {
        t->res = run_result_free(t->res);
        free(t->out_path);
        t->out_path = NULL;
        free(t->skill_path);
        t->skill_path = NULL;
        t->skill_fd = safe_close(t->skill_fd);
        test_dir_done(&t->out);
        test_dir_done(&t->base);
}
#define _cleanup_sec_run_ _cleanup_(sec_run_done)

/* base/skill: SKILL.md (entry point scripts/main.sh, holding body), and the probe at /skill/probe. */
static inline SecRun sec_run_new(const char *body) {
        _cleanup_free_ char *script = strdup_printf("#!/bin/bash\n%s\n", body ?: "true");
        SecRun t = { .base = test_dir_new(), .skill_fd = -EBADF, .out = test_dir_new() };

        ck_assert_int_eq(fchmod(t.base.fd, 0755), 0);
        ck_assert_int_eq(mkdirat(t.base.fd, "skill", 0755), 0);
        t.skill_path = strdup_printf("%s/skill", t.base.path);
        t.skill_fd = openat(t.base.fd, "skill", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(t.skill_fd, 0);
        test_write_file(t.skill_fd, "SKILL.md",
                        "---\nname: skill\ndescription: A hostile skill of the adversarial suite.\n"
                        "entry_point: scripts/main.sh\n---\nAttacks.\n", 0644);
        test_write_file(t.skill_fd, "scripts/main.sh", script, 0755);
        ck_assert_int_eq(fchmodat(t.skill_fd, "scripts", 0755, 0), 0);
        copy_file_to(test_env_path("SECURITY_PROBE"), t.skill_fd, "probe", 0755);

        t.out_path = strdup_printf("%s/run", t.out.path);
        t.req = RUN_REQUEST_INIT;
        t.req.skill_dir = t.skill_path;
        t.req.script = "scripts/main.sh";
        t.req.output_dir = t.out_path;
        t.req.allow_missing = SANDBOX_LAYER_CGROUP;
        t.req.limits.timeout_usec = 30ULL * 1000 * 1000;
        t.req.limits.memory_max = 256ULL * 1024 * 1024;
        t.req.limits.tasks_max = 64;
        t.req.limits.tmpfs_size = 16ULL * 1024 * 1024;
        t.req.limits.out_max = 16ULL * 1024 * 1024;
        return t;
}

/* Replaces scripts/main.sh with body after a bash shebang. */
static inline void sec_run_set_script(SecRun *t, const char *body) {
        _cleanup_free_ char *script = strdup_printf("#!/bin/bash\n%s\n", body);

        test_write_file(t->skill_fd, "scripts/main.sh", script, 0755);
}

/* Whether any host process (any thread, too) runs as uid. */
static inline bool host_has_uid(uid_t uid) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)) && !found) {
                char path[300];
                struct stat st;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                (void) snprintf(path, sizeof(path), "/proc/%s", de->d_name);
                found = stat(path, &st) >= 0 && st.st_uid == uid;
        }
        closedir(d);
        return found;
}

/* Whether any host process has marker in its command line or its name. */
static inline bool host_has_marker(const char *marker) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)) && !found) {
                static const char *const files[] = { "cmdline", "comm" };

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(files) && !found; i++) {
                        char path[300], buf[4096];
                        _cleanup_close_ int fd = -EBADF;
                        ssize_t n;

                        (void) snprintf(path, sizeof(path), "/proc/%s/%s", de->d_name, files[i]);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                continue;
                        n = read(fd, buf, sizeof(buf) - 1);
                        if (n <= 0)
                                continue;
                        for (ssize_t k = 0; k < n; k++)
                                if (buf[k] == '\0')
                                        buf[k] = ' ';
                        buf[n] = '\0';
                        /* comm keeps 15 bytes of the name. */
                        found = strstr(buf, marker) || (streq(files[i], "comm") &&
                                                        strncmp(buf, marker, 15) == 0);
                }
        }
        closedir(d);
        return found;
}

/* Runs the request. Whatever the run did, afterwards no process of its uid may be left on the
 * host: the uid goes back to the pool, and the next run that gets it must find nothing. */
static inline void sec_run_go(SecRun *t) {
        _cleanup_free_ char *error = NULL;

        t->res = run_result_free(t->res);
        ck_assert_msg(sandbox_run(&t->req, &t->res, &error) == 0, "sandbox_run: %s", strna(error));
        ck_assert_ptr_nonnull(t->res);
        if (t->res->uid != (uid_t) -1 && t->res->uid != 0)
                ck_assert_msg(!host_has_uid(t->res->uid), "a process of uid %u outlived the run",
                              t->res->uid);
}

/* The probe itself as the entry point, with these arguments (NULL-terminated). */
static inline void sec_run_probe(SecRun *t, char **args) {
        t->req.script = "probe";
        t->req.args = args;
        sec_run_go(t);
}

static inline const char *sec_stdout(const RunResult *r) {
        return strempty(r->stdout_stream.data);
}

static inline bool run_output_has(const RunResult *r, const char *needle) {
        return strstr(strempty(r->stdout_stream.data), needle) ||
               strstr(strempty(r->stderr_stream.data), needle);
}

/* The rest of the first stdout line that starts with "prefix ", or NULL. */
static inline const char *probe_find(const RunResult *r, const char *prefix) {
        size_t n = strlen(prefix);

        for (const char *p = sec_stdout(r); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
                        return p + n + 1;
        return NULL;
}

/* The number after "prefix ", or LONG_MIN when the line is missing. */
static inline long probe_long(const RunResult *r, const char *prefix) {
        const char *v = probe_find(r, prefix);

        return v ? strtol(v, NULL, 10) : LONG_MIN;
}

/* The number after "prefix " on the line prefix_fmt names. */
_printf_(2, 3)
static inline long probe_longf(const RunResult *r, const char *prefix_fmt, ...) {
        _cleanup_free_ char *prefix = NULL;
        va_list ap;

        va_start(ap, prefix_fmt);
        if (vasprintf(&prefix, prefix_fmt, ap) < 0)
                prefix = NULL;
        va_end(ap);
        ck_assert_ptr_nonnull(prefix);
        return probe_long(r, prefix);
}

/* How many stdout lines start with prefix. */
static inline size_t probe_count(const RunResult *r, const char *prefix) {
        size_t n = 0, l = strlen(prefix);

        for (const char *p = sec_stdout(r); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, prefix, l) == 0)
                        n++;
        return n;
}

static inline const char *status_name(const RunResult *r) {
        return strna(run_status_to_string(r->status));
}

/* ---- skillctl, as a user runs it ---- */

typedef struct Exec {
        int status;             /* the exit status; 128+N when killed by signal N */
        char *out;
        char *err;
} Exec;

static inline void exec_done(Exec *e) {
        free(e->out);
        free(e->err);
        *e = (Exec) {};
}
#define _cleanup_exec_ _cleanup_(exec_done)

/* Runs argv (argv[0] a path) with stdin from /dev/null or stdin_fd, stdout and stderr captured,
 * and, when leak_fd >= 0, that descriptor inherited without close-on-exec as fd 7. */
static inline Exec exec_capture(char **argv, int stdin_fd, int leak_fd, const char *cwd) {
        _cleanup_close_ int out = memfd_create("stdout", MFD_CLOEXEC),
                            err = memfd_create("stderr", MFD_CLOEXEC);
        Exec e = {};
        int status;
        pid_t pid;

        ck_assert_int_ge(out, 0);
        ck_assert_int_ge(err, 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                        _exit(126);
                if (leak_fd >= 0 && dup2(leak_fd, 7) < 0)
                        _exit(126);
                if (cwd && chdir(cwd) < 0)
                        _exit(126);
                execv(argv[0], argv);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        e.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
        ck_assert_int_eq(lseek(err, 0, SEEK_SET), 0);
        ck_assert_int_eq(read_full_fd(out, 256 << 20, &e.out, NULL), 0);
        ck_assert_int_eq(read_full_fd(err, 256 << 20, &e.err, NULL), 0);
        return e;
}

/* "skillctl run --local ARGS...", the skillctl meson built: the embedded engine is what is under
 * attack here, also where a skilld service runs (the VM). */
static inline Exec skillctl_run(char **args, int stdin_fd, int leak_fd, const char *cwd) {
        _cleanup_free_ char **argv = NULL;
        size_t n = strv_length(args);

        argv = calloc(n + 4, sizeof(char *));
        ck_assert_ptr_nonnull(argv);
        argv[0] = (char *) test_env_path("SKILLCTL");
        argv[1] = (char *) "run";
        argv[2] = (char *) "--local";
        memcpy(argv + 3, args, n * sizeof(char *));
        return exec_capture(argv, stdin_fd, leak_fd, cwd);
}

/* Control characters that could move the cursor, recolor or retitle a terminal (tabs and
 * newlines are layout). */
static inline bool has_control_chars(const char *s) {
        for (; s && *s; s++)
                if (((unsigned char) *s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
                        return true;
        return false;
}

/* ---- the host stays responsive ---- */

/* A host process that keeps forking and reaping children, counting the rounds in shared
 * memory. Progress across a run is the timing-free proof the host kept scheduling its own
 * work: no rate is asserted, only that the count moved. */
typedef struct Liveness {
        pid_t pid;
        volatile uint64_t *counter;
        uint64_t start;
} Liveness;

static inline Liveness liveness_start(void) {
        Liveness l = {};

        l.counter = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert(l.counter != MAP_FAILED);
        l.pid = fork();
        ck_assert_int_ge(l.pid, 0);
        if (l.pid == 0) {
                for (;;) {
                        pid_t c = fork();

                        if (c == 0)
                                _exit(0);
                        if (c > 0)
                                (void) waitpid(c, NULL, 0);
                        __atomic_add_fetch(l.counter, 1, __ATOMIC_SEQ_CST);
                }
        }
        /* Running before the run starts. */
        while (__atomic_load_n(l.counter, __ATOMIC_SEQ_CST) == 0)
                (void) usleep(1000);
        l.start = __atomic_load_n(l.counter, __ATOMIC_SEQ_CST);
        return l;
}

/* Stops the helper; returns how many rounds it made since liveness_start(). */
static inline uint64_t liveness_stop(Liveness *l) {
        uint64_t n = __atomic_load_n(l->counter, __ATOMIC_SEQ_CST) - l->start;

        (void) kill(l->pid, SIGKILL);
        (void) waitpid(l->pid, NULL, 0);
        (void) munmap((void *) l->counter, sizeof(uint64_t));
        return n;
}

/* A host process that samples a host-wide figure (socket memory, fs.aio-nr) every 20 ms during a
 * run and keeps the highest value seen, in shared memory. */
typedef struct Sampler {
        pid_t pid;
        volatile uint64_t *peak;
        uint64_t start;
} Sampler;

static inline Sampler sampler_start(uint64_t (*sample)(void)) {
        Sampler m = {};

        m.peak = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert(m.peak != MAP_FAILED);
        m.start = *m.peak = sample();
        m.pid = fork();
        ck_assert_int_ge(m.pid, 0);
        if (m.pid == 0)
                for (;;) {
                        uint64_t v = sample();

                        if (v > *m.peak)
                                *m.peak = v;
                        (void) usleep(20 * 1000);
                }
        return m;
}

/* Stops the sampler; returns how far above its starting value the figure rose at most. */
static inline uint64_t sampler_stop(Sampler *m) {
        uint64_t peak = *m->peak;

        (void) kill(m->pid, SIGKILL);
        (void) waitpid(m->pid, NULL, 0);
        (void) munmap((void *) m->peak, sizeof(uint64_t));
        return peak > m->start ? peak - m->start : 0;
}

/* After a run: the host can still start a process and see it end. */
static inline bool host_can_fork(void) {
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return false;
        if (pid == 0) {
                execl("/bin/true", "true", (char *) NULL);
                _exit(3);
        }
        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
