/* Effect-based tests of the sandbox engine: each one runs a small skill (a bash script written
 * here, or the probe program built next to this file) and asserts what happened, on the host
 * where it matters: the file that is not there, the process that is still alive, the listener
 * that saw no connection. They need root and namespaces, and skip (77) otherwise. */
#include <dirent.h>
#include <linux/magic.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "engine.h"
#include "hash.h"
#include "random-id.h"
#include "sandbox-internal.h"
#include "test-util.h"

/* The probe's path in the skill trees made below. */
#define PROBE "probe"

static void copy_probe(int dir_fd) {
        const char *src = getenv("SANDBOX_PROBE");
        _cleanup_close_ int in = -EBADF;
        _cleanup_free_ char *data = NULL;
        size_t size;

        ck_assert_ptr_nonnull(src);
        ck_assert_int_eq(read_full_file_at(AT_FDCWD, src, 16 * 1024 * 1024, false, &data, &size), 0);
        in = openat(dir_fd, PROBE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        ck_assert_int_ge(in, 0);
        ck_assert_int_eq(loop_write(in, data, size), 0);
}

/* A skill tree with scripts/main.sh holding body (after a bash shebang) and the probe. mkdtemp
 * makes 0700 directories; the sandbox user needs to get in. */
static TestDir skill_new(const char *body) {
        TestDir t = test_dir_new();
        _cleanup_free_ char *script = strdup_printf("#!/bin/bash\n%s\n", body);

        ck_assert_int_eq(chmod(t.path, 0755), 0);
        test_write_file(t.fd, "scripts/main.sh", script, 0755);
        ck_assert_int_eq(fchmodat(t.fd, "scripts", 0755, 0), 0);
        copy_probe(t.fd);
        return t;
}

typedef struct TestRun {
        TestDir skill;
        TestDir out;
        char *out_path;
        RunRequest req;
        RunResult *res;
        bool ahead;                     /* each run gets its sandbox made ahead (SandboxAhead) */
        SandboxAhead *made_ahead;
} TestRun;

static void test_run_done(TestRun *t) {
        t->res = run_result_free(t->res);
        t->made_ahead = sandbox_ahead_free(t->made_ahead);
        free(t->out_path);
        test_dir_done(&t->out);
        test_dir_done(&t->skill);
}
#define _cleanup_test_run_ _cleanup_(test_run_done)

/* Small limits keep the suite quick; each test tightens what it exercises. */
static TestRun test_run_new(const char *body) {
        TestRun t = {
                .skill = skill_new(body),
                .out = test_dir_new(),
        };

        t.out_path = strdup_printf("%s/run", t.out.path);
        t.req = RUN_REQUEST_INIT;
        t.req.skill_dir = t.skill.path;
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

static void test_run_go(TestRun *t) {
        _cleanup_free_ char *error = NULL;

        t->res = run_result_free(t->res);
        if (t->ahead) {
                /* Made afresh for each run, as skillctl does: one is spent by its run. */
                t->made_ahead = sandbox_ahead_free(t->made_ahead);
                ck_assert_int_eq(sandbox_ahead_start(&t->made_ahead), 0);
                ck_assert_ptr_nonnull(t->made_ahead);
                t->req.ahead = t->made_ahead;
        }
        ck_assert_msg(sandbox_run(&t->req, &t->res, &error) == 0, "sandbox_run: %s", strna(error));
        ck_assert_ptr_nonnull(t->res);
}

/* Runs the probe directly as the entry point (no shell between), with the given arguments. */
static void test_run_probe(TestRun *t, char **args) {
        t->req.script = PROBE;
        t->req.args = args;
        test_run_go(t);
}

#define assert_status(res, s)                                                                   \
        ck_assert_msg((res)->status == (s), "status %s, expected %s (error: %s, exit %d, signal %d)\n" \
                      "stdout: %.2000s\nstderr: %.2000s", run_status_to_string((res)->status),  \
                      run_status_to_string(s), strna((res)->error), (res)->exit_code, (res)->signal, \
                      strempty((res)->stdout_stream.data), strempty((res)->stderr_stream.data))

static const char *next_line(const char *p) {
        p = strchr(p, '\n');
        return p ? p + 1 : NULL;
}

/* The value on the probe's "name value" line, or -1. */
static long probe_value(const RunResult *r, const char *name) {
        size_t n = strlen(name);

        for (const char *p = strempty(r->stdout_stream.data); p && *p; p = next_line(p))
                if (strncmp(p, name, n) == 0 && p[n] == ' ')
                        return strtol(p + n + 1, NULL, 10);
        return -1;
}

static bool stdout_has_line(const RunResult *r, const char *line) {
        size_t n = strlen(line);

        for (const char *p = strempty(r->stdout_stream.data); p && *p; p = next_line(p))
                if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

static const cJSON *output_field(const RunResult *r, const char *key) {
        ck_assert_ptr_nonnull(r->output);
        return cJSON_GetObjectItemCaseSensitive(r->output, key);
}

/* Whether any process on the host has this string in its command line. */
static bool host_process_with(const char *marker) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)) && !found) {
                char path[300], buf[4096];
                _cleanup_close_ int fd = -EBADF;
                ssize_t n;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                (void) snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                if (n <= 0)
                        continue;
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == '\0')
                                buf[i] = ' ';
                buf[n] = '\0';
                found = strstr(buf, marker) != NULL;
        }
        closedir(d);
        return found;
}

/* Whether any process on the host runs as this uid. */
static bool host_process_with_uid(uid_t uid) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)) && !found) {
                struct stat st;
                char path[300];

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                (void) snprintf(path, sizeof(path), "/proc/%s", de->d_name);
                if (stat(path, &st) >= 0 && st.st_uid == uid)
                        found = true;
        }
        closedir(d);
        return found;
}

static char *random_marker(void) {
        uint64_t x;

        ck_assert_int_eq(getentropy(&x, sizeof(x)), 0);
        return strdup_printf("skilld-test-%016" PRIx64, x);
}

/* ---- the contract ---- */

START_TEST(test_input_channels_output_artifacts) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "set -e\n"
                "stdin=$(cat)\n"
                "file=$(cat \"$SKILL_INPUT_FILE\")\n"
                "mkdir -p /out/files/sub\n"
                "printf hello > /out/files/a.txt\n"
                "printf world > /out/files/sub/b.txt\n"
                "printf '{\"stdin\": %s, \"file\": %s, \"env\": %s, \"cwd\": \"%s\"}' \"$stdin\" \"$file\" "
                "\"$SANDBOX_INPUT\" \"$PWD\" > \"$SANDBOX_OUTPUT\"\n"
                "echo done\n");
        _cleanup_free_ char *result_json = NULL, *log = NULL;
        _cleanup_(cJSON_Deletep) cJSON *parsed = NULL;
        char hex[SHA256_HEX_SIZE];
        _cleanup_(sha256_freep) Sha256 *h = NULL;

        t.req.input_json = "{\"n\": 42}";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(t.res->exit_code, 0);
        ck_assert_str_eq(t.res->output_source, "output.json");
        ck_assert_str_eq(cJSON_GetObjectItem(output_field(t.res, "stdin"), "n")->valuestring, "42");
        ck_assert_str_eq(cJSON_GetObjectItem(output_field(t.res, "file"), "n")->valuestring, "42");
        ck_assert_str_eq(cJSON_GetObjectItem(output_field(t.res, "env"), "n")->valuestring, "42");
        ck_assert_str_eq(output_field(t.res, "cwd")->valuestring, "/work");
        ck_assert_str_eq(t.res->stdout_stream.data, "done\n");

        /* Artifacts, with their hashes, copied to the host. */
        ck_assert_uint_eq(t.res->n_artifacts, 3);
        ck_assert_str_eq(t.res->artifacts[0].path, "a.txt");
        ck_assert_uint_eq(t.res->artifacts[0].size, 5);
        ck_assert_int_eq(sha256_new(&h), 0);
        ck_assert_int_eq(sha256_update(h, "hello", 5), 0);
        ck_assert_int_eq(sha256_final_hex(h, hex), 0);
        ck_assert_str_eq(t.res->artifacts[0].sha256, hex);
        ck_assert_str_eq(t.res->artifacts[1].path, "sub");
        ck_assert(t.res->artifacts[1].directory);
        ck_assert_str_eq(t.res->artifacts[2].path, "sub/b.txt");
        ck_assert_int_eq(read_full_file_at(AT_FDCWD, t.out_path, 0, false, &log, NULL), -EISDIR);
        free(log);
        log = NULL;
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/files/sub/b.txt", 1024, true, &log, NULL), 0);
        ck_assert_str_eq(log, "world");

        /* result.json next to them says the same. */
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/result.json", 1 << 20, true, &result_json, NULL),
                         0);
        parsed = cJSON_Parse(result_json);
        ck_assert_ptr_nonnull(parsed);
        ck_assert_str_eq(cJSON_GetObjectItem(parsed, "status")->valuestring, "succeeded");
        ck_assert_str_eq(cJSON_GetObjectItem(parsed, "run_id")->valuestring, t.res->run_id);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(parsed, "artifacts")), 3);
        ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(parsed, "limits"), "backend")->valuestring,
                         t.res->backend);
}
END_TEST

/* An output directory used again: result.json and the logs are the last run's, also where it
 * ended before its skill started (the engine removes the earlier run's files once the init is
 * released, or at the store when it never was). */
START_TEST(test_output_dir_reused) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "echo \"$SANDBOX_INPUT\"\n"
                "case \"$SANDBOX_INPUT\" in *1*) echo first >&2;; esac\n");
        _cleanup_free_ char *first_id = NULL;

        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *result_json = NULL, *out = NULL, *err = NULL;
                _cleanup_(cJSON_Deletep) cJSON *parsed = NULL;

                t.req.input_json = i == 0 ? "{\"n\": 1}" : "{\"n\": 2}";
                /* The third run cannot start: its entry point does not exist. */
                t.req.script = i == 2 ? "scripts/missing.sh" : "scripts/main.sh";
                test_run_go(&t);
                assert_status(t.res, i == 2 ? RUN_STATUS_ERROR : RUN_STATUS_SUCCEEDED);
                ck_assert_int_eq(read_full_file_at(t.out.fd, "run/result.json", 1 << 20, true, &result_json,
                                                   NULL), 0);
                parsed = cJSON_Parse(result_json);
                ck_assert_ptr_nonnull(parsed);
                ck_assert_str_eq(cJSON_GetObjectItem(parsed, "run_id")->valuestring, t.res->run_id);
                if (i == 0)
                        first_id = strdup(t.res->run_id);
                else
                        ck_assert_str_ne(t.res->run_id, first_id);
                ck_assert_int_eq(read_full_file_at(t.out.fd, "run/stdout.log", 1024, true, &out, NULL), 0);
                ck_assert_int_eq(read_full_file_at(t.out.fd, "run/stderr.log", 1024, true, &err, NULL), 0);
                ck_assert_str_eq(out, i == 0 ? "{\"n\": 1}\n" : i == 1 ? "{\"n\": 2}\n" : "");
                ck_assert_str_eq(err, i == 0 ? "first\n" : "");
        }
}
END_TEST

/* The record is prepared while the skill runs and its logs written as the skill writes
 * (record.c): they hold exactly the streams as kept, whether the output directory is on a disk
 * (a helper thread makes and syncs the files) or on a tmpfs (the engine does, no thread), and
 * nothing but the record is left beside result.json (no temporary file). */
START_TEST(test_record_written_as_it_comes) {
        const char *const bases[] = { NULL, "/dev/shm" };

        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                _cleanup_test_run_ TestRun t = test_run_new(
                        "for i in 1 2 3 4 5; do head -c 70000 /dev/zero | tr '\\0' $i; sleep 0.05; done\n"
                        "echo err >&2");
                _cleanup_free_ char *shm = NULL, *result_json = NULL, *out = NULL, *err = NULL;
                _cleanup_(cJSON_Deletep) cJSON *parsed = NULL;
                _cleanup_close_ int dir_fd = -EBADF;
                DIR *d = NULL;
                struct dirent *de;
                struct statfs sfs;
                size_t size = 0;

                if (bases[i]) {
                        if (statfs(bases[i], &sfs) < 0 || (unsigned long) sfs.f_type != TMPFS_MAGIC)
                                continue;
                        shm = strdup_printf("%s/skilld-test-XXXXXX", bases[i]);
                        ck_assert_ptr_nonnull(mkdtemp(shm));
                        free(t.out_path);
                        t.out_path = strdup_printf("%s/run", shm);
                        t.req.output_dir = t.out_path;
                }
                test_run_go(&t);
                assert_status(t.res, RUN_STATUS_SUCCEEDED);
                ck_assert_uint_eq(t.res->stdout_stream.size, 350000);
                ck_assert_ptr_null(t.res->store_error);

                dir_fd = open(t.out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ck_assert_int_ge(dir_fd, 0);
                ck_assert_int_eq(read_full_file_at(dir_fd, "stdout.log", 1 << 20, true, &out, &size), 0);
                ck_assert_uint_eq(size, t.res->stdout_stream.size);
                ck_assert(memcmp(out, t.res->stdout_stream.data, size) == 0);
                ck_assert_int_eq(read_full_file_at(dir_fd, "stderr.log", 1024, true, &err, NULL), 0);
                ck_assert_str_eq(err, "err\n");
                ck_assert_int_eq(read_full_file_at(dir_fd, "result.json", 1 << 20, true, &result_json, NULL), 0);
                parsed = cJSON_Parse(result_json);
                ck_assert_ptr_nonnull(parsed);
                ck_assert_str_eq(cJSON_GetObjectItem(parsed, "run_id")->valuestring, t.res->run_id);

                d = opendir(t.out_path);
                ck_assert_ptr_nonnull(d);
                while ((de = readdir(d)))
                        ck_assert_msg(streq(de->d_name, ".") || streq(de->d_name, "..") ||
                                      streq(de->d_name, "files") || streq(de->d_name, "result.json") ||
                                      streq(de->d_name, "stdout.log") || streq(de->d_name, "stderr.log"),
                                      "left in the output directory: %s", de->d_name);
                closedir(d);
                if (shm)
                        ck_assert_int_eq(rm_rf_at(AT_FDCWD, shm), 0);
        }
}
END_TEST

/* A log's name the new log cannot take (a directory stands there): result.json, still written,
 * says why (store_error), the run's own status stands, and no temporary file is left. */
START_TEST(test_record_log_name_taken) {
        _cleanup_test_run_ TestRun t = test_run_new("echo hi");
        _cleanup_free_ char *result_json = NULL;
        _cleanup_(cJSON_Deletep) cJSON *parsed = NULL;
        const cJSON *why;
        struct dirent *de;
        struct stat st;
        DIR *d;

        ck_assert_int_eq(mkdirat(t.out.fd, "run", 0755), 0);
        ck_assert_int_eq(mkdirat(t.out.fd, "run/stdout.log", 0755), 0);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_nonnull(t.res->store_error);
        ck_assert_ptr_nonnull(strstr(t.res->store_error, "Failed to write the logs"));
        ck_assert_int_eq(fstatat(t.out.fd, "run/stdout.log", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/result.json", 1 << 20, true, &result_json, NULL), 0);
        parsed = cJSON_Parse(result_json);
        ck_assert_ptr_nonnull(parsed);
        why = cJSON_GetObjectItem(parsed, "store_error");
        ck_assert(cJSON_IsString(why));
        ck_assert_str_eq(why->valuestring, t.res->store_error);
        ck_assert_str_eq(cJSON_GetObjectItem(parsed, "status")->valuestring, "succeeded");
        d = opendir(t.out_path);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                ck_assert_msg(de->d_name[0] != '.' || streq(de->d_name, ".") || streq(de->d_name, ".."),
                              "left in the output directory: %s", de->d_name);
        closedir(d);
}
END_TEST

START_TEST(test_output_from_stdout) {
        _cleanup_test_run_ TestRun t = test_run_new("echo '{\"answer\": [1, 2]}'");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->output_source, "stdout");
        ck_assert_int_eq(cJSON_GetArraySize(output_field(t.res, "answer")), 2);

        /* Not JSON: no output, stdout kept. Without input, stdin is empty and no variable is set. */
        test_run_done(&t);
        t = test_run_new("echo \"plain ${SKILL_INPUT_FILE:-none} ${SANDBOX_INPUT:-none} $(cat | wc -c)\"");
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_null(t.res->output);
        ck_assert_ptr_null(t.res->output_source);
        ck_assert_str_eq(t.res->stdout_stream.data, "plain none none 0\n");
}
END_TEST

/* The output as the skill wrote it: numbers a double cannot hold, and 1.0, survive into the result
 * and result.json, from output.json and from stdout alike. */
START_TEST(test_output_exact) {
        static const char *const exact = "{\"big\":12345678901234567890,\"id\":9007199254740993,\"f\":1.0}";
        const char *script[] = {
                "printf '{\"big\": 12345678901234567890, \"id\": 9007199254740993, \"f\": 1.0}' "
                "> \"$SANDBOX_OUTPUT\"",
                "printf '{\"big\": 12345678901234567890, \"id\": 9007199254740993, \"f\": 1.0}\\n'",
        };

        for (size_t i = 0; i < ELEMENTSOF(script); i++) {
                _cleanup_test_run_ TestRun t = test_run_new(script[i]);
                _cleanup_free_ char *text = NULL, *result_json = NULL;

                test_run_go(&t);
                assert_status(t.res, RUN_STATUS_SUCCEEDED);
                ck_assert_str_eq(t.res->output_source, i == 0 ? "output.json" : "stdout");
                text = cJSON_PrintUnformatted(t.res->output);
                ck_assert_str_eq(text, exact);

                ck_assert_int_eq(read_full_file_at(t.out.fd, "run/result.json", 1 << 20, true, &result_json,
                                                   NULL), 0);
                ck_assert_ptr_nonnull(strstr(result_json, "12345678901234567890"));
                ck_assert_ptr_nonnull(strstr(result_json, "9007199254740993"));
                ck_assert_ptr_nonnull(strstr(result_json, "\"f\": 1.0"));
        }
}
END_TEST

/* Invalid output.json: no output, and the error says what is wrong and where. */
START_TEST(test_output_json_invalid) {
        _cleanup_test_run_ TestRun t = test_run_new("printf '{\\n  \"n\": 01\\n}' > /out/output.json");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_null(t.res->output);
        ck_assert_str_eq(t.res->output_error,
                         "/out/output.json is not valid JSON: line 2, column 8: leading zeros are not allowed in numbers");
}
END_TEST

START_TEST(test_input_files_in_work) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "cat /work/data.csv; ls -ln /work | tail -n +2 | awk '{print $3}'");
        _cleanup_test_dir_ TestDir in = test_dir_new();
        _cleanup_free_ char *path = NULL, *expected = NULL;
        RunFile f = { .name = "data.csv", .fd = -EBADF };

        test_write_file(in.fd, "input.csv", "a,b\n1,2\n", 0600);
        path = strdup_printf("%s/input.csv", in.path);
        f.path = path;
        t.req.files = &f;
        t.req.n_files = 1;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* The copy belongs to the sandbox user, though the original was root's and 0600. */
        expected = strdup_printf("a,b\n1,2\n%u\n", t.res->uid);
        ck_assert_str_eq(t.res->stdout_stream.data, expected);
}
END_TEST

START_TEST(test_exit_code_and_signal) {
        _cleanup_test_run_ TestRun t = test_run_new("echo oops >&2; exit 3");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_FAILED);
        ck_assert_int_eq(t.res->exit_code, 3);
        ck_assert_int_eq(run_result_exit_code(t.res), 3);
        ck_assert_str_eq(t.res->stderr_stream.data, "oops\n");

        test_run_done(&t);
        t = test_run_new("kill -SEGV $$");
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SIGNAL);
        ck_assert_int_eq(t.res->signal, SIGSEGV);
        ck_assert_int_eq(run_result_exit_code(t.res), 128 + SIGSEGV);
}
END_TEST

START_TEST(test_init_forwards_signals) {
        /* SIGTERM to the init (PID 1) reaches the skill's main process, which handles it. */
        _cleanup_test_run_ TestRun t = test_run_new("trap 'echo got-term; exit 7' TERM\n"
                                                    "kill -TERM 1\n"
                                                    "sleep 20 & wait\n");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_FAILED);
        ck_assert_int_eq(t.res->exit_code, 7);
        ck_assert_str_eq(t.res->stdout_stream.data, "got-term\n");
}
END_TEST

static void test_signal_handler(int sig) {
        (void) sig;
}

START_TEST(test_signals_reset) {
        /* What the caller ignores, handles or blocks reaches neither the skill nor, before its
         * execve(), the skill process (the init resets the dispositions once, before the fork).
         * bash passes the ignored ones on to what it execs. */
        _cleanup_test_run_ TestRun t = test_run_new("exec grep -E '^Sig(Blk|Ign):' /proc/self/status");
        struct sigaction ign = { .sa_handler = SIG_IGN }, handled = { .sa_handler = test_signal_handler };
        struct sigaction old[4];
        static const int ignored[] = { SIGPIPE, SIGHUP, SIGUSR1 };
        sigset_t block, old_mask;

        for (size_t i = 0; i < ELEMENTSOF(ignored); i++)
                ck_assert_int_eq(sigaction(ignored[i], &ign, &old[i]), 0);
        ck_assert_int_eq(sigaction(SIGUSR2, &handled, &old[3]), 0);
        sigemptyset(&block);
        sigaddset(&block, SIGWINCH);
        ck_assert_int_eq(sigprocmask(SIG_BLOCK, &block, &old_mask), 0);

        test_run_go(&t);

        ck_assert_int_eq(sigprocmask(SIG_SETMASK, &old_mask, NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(ignored); i++)
                ck_assert_int_eq(sigaction(ignored[i], &old[i], NULL), 0);
        ck_assert_int_eq(sigaction(SIGUSR2, &old[3], NULL), 0);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}
END_TEST

START_TEST(test_cpus_kept) {
        /* The init pins itself to its CPU for the vfork() of the skill process, which takes the
         * caller's CPUs back before anything else: the skill runs on every CPU the caller may
         * use, not on the one the init happened to be on. */
        _cleanup_test_run_ TestRun t = test_run_new("exec grep '^Cpus_allowed_list:' /proc/self/status");
        _cleanup_free_ char *status = NULL, *expected = NULL;
        const char *line;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/proc/self/status", 1 << 16, false, &status, NULL), 0);
        line = strstr(status, "\nCpus_allowed_list:");
        ck_assert_ptr_nonnull(line);
        expected = strndup(line + 1, strcspn(line + 1, "\n") + 1);
        ck_assert_ptr_nonnull(expected);

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data, expected);
}
END_TEST

START_TEST(test_rlimits_under_caller_hard_limits) {
        /* The skill process sets its rlimits without any capability (the init dropped them all
         * before starting it), so the engine asks for none above the caller's hard limits: a
         * caller whose hard RLIMIT_CPU is below the run's backstop (its timeout times the CPUs)
         * gets a run held by its own limit, not an error. In a forked copy, which lowers its own. */
        _cleanup_test_run_ TestRun t = test_run_new("ulimit -Ht; ulimit -St");
        int status;
        pid_t pid;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct rlimit cpu = { .rlim_cur = 7, .rlim_max = 7 };
                RunResult *res = NULL;

                if (setrlimit(RLIMIT_CPU, &cpu) < 0)
                        _exit(10);
                if (sandbox_run(&t.req, &res, NULL) < 0)
                        _exit(11);
                if (res->status != RUN_STATUS_SUCCEEDED)
                        _exit(12);
                if (!streq(res->stdout_stream.data, "7\n7\n"))
                        _exit(13);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_etc_readable_under_umask_077) {
        /* skilld.service runs with umask 077: the sandbox's own /etc files stay readable by the
         * skill (its passwd entry, hosts, nsswitch.conf), as /proc/loadavg does, and the root's
         * directories have the modes they are made with (the init builds under umask 0; /out/files
         * was once cut to 0700). */
        _cleanup_test_run_ TestRun t = test_run_new("stat -c '%a %n' /etc/passwd /etc/group /etc/hosts "
                                                    "/etc/nsswitch.conf /etc/hostname /proc/loadavg\n"
                                                    "stat -c '%a %n' /etc /etc/ssl /home /var /run /out/files\n"
                                                    "whoami\n"
                                                    "getent hosts localhost >/dev/null && echo resolved");
        mode_t old = umask(077);

        test_run_go(&t);
        (void) umask(old);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data,
                         "644 /etc/passwd\n644 /etc/group\n644 /etc/hosts\n644 /etc/nsswitch.conf\n"
                         "644 /etc/hostname\n444 /proc/loadavg\n"
                         "755 /etc\n755 /etc/ssl\n755 /home\n755 /var\n755 /run\n755 /out/files\n"
                         "skill\nresolved\n");
}
END_TEST

START_TEST(test_exec_failures) {
        _cleanup_test_run_ TestRun t = test_run_new("true");

        t.req.script = "scripts/missing.sh";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert(t.res->exec_failed);
        ck_assert_int_eq(run_result_exit_code(t.res), 127);

        ck_assert_int_eq(fchmodat(t.skill.fd, "scripts/main.sh", 0644, 0), 0);
        t.req.script = "scripts/main.sh";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert_int_eq(run_result_exit_code(t.res), 126);

        /* With an interpreter the x bit does not matter; a missing interpreter is 127. */
        t.req.interpreter = "/bin/bash";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        t.req.interpreter = "/usr/bin/no-such-interpreter";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert_int_eq(run_result_exit_code(t.res), 127);

        /* A shebang naming something the sandbox lacks: execve() fails inside, reported as such. */
        test_write_file(t.skill.fd, "scripts/bad.sh", "#!/opt/nowhere/sh\n", 0755);
        t.req.interpreter = NULL;
        t.req.script = "scripts/bad.sh";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert(t.res->exec_failed);
        ck_assert_int_eq(run_result_exit_code(t.res), 127);
}
END_TEST

START_TEST(test_setup_failure_is_error) {
        _cleanup_test_run_ TestRun t = test_run_new("echo ran > /tmp/x; echo ran");
        _cleanup_test_dir_ TestDir in = test_dir_new();
        _cleanup_close_ int wfd = -EBADF;
        RunFile f = { .name = "input.txt" };

        /* A write-only fd passes the checks in the parent, and fails when the init copies it into
         * /work: the run must end as "error", and the skill must not have run. */
        wfd = openat(in.fd, "w", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(wfd, 0);
        f.fd = wfd;
        t.req.files = &f;
        t.req.n_files = 1;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert_ptr_nonnull(strstr(t.res->error, "Sandbox setup failed"));
        ck_assert_uint_eq(t.res->stdout_stream.total, 0);
        ck_assert_int_eq(run_result_exit_code(t.res), 125);
}
END_TEST

/* Whether pids and memory are cgroup v1 hierarchies here (the backend the next tests are about). */
static bool cgroup1_host(void) {
        struct statfs sf;

        return statfs("/sys/fs/cgroup/pids", &sf) == 0 && (uint64_t) sf.f_type == (uint64_t) CGROUP_SUPER_MAGIC &&
                statfs("/sys/fs/cgroup/memory", &sf) == 0 && (uint64_t) sf.f_type == (uint64_t) CGROUP_SUPER_MAGIC;
}

/* Where a run of that id has its cgroup of controller, beside ours (own: our path in it). */
static char *run_cgroup_path(const char *controller, const char *own, const char *id) {
        return strdup_printf("/sys/fs/cgroup/%s%s/skilld-run-%s", controller, streq(own, "/") ? "" : own, id);
}

/* cgroup v1: the run's cgroups are made after the clone, while the init builds its root. One
 * that cannot be made (its name taken, by a live run as far as the sweep can tell) fails the run
 * with a message naming it; the init is killed and reaped, and the cgroups made before it are
 * removed. The run never started its skill, so it sweeps what killed engines left at its end. */
START_TEST(test_cgroup_failure_after_clone) {
        _cleanup_test_run_ TestRun t = test_run_new("echo ran");
        _cleanup_free_ char *own_pids = NULL, *own_memory = NULL, *taken = NULL, *made = NULL, *stale = NULL;
        _cleanup_close_ int fd = -EBADF;
        char id[RANDOM_ID_STRING_MAX], other[RANDOM_ID_STRING_MAX];

        if (!cgroup1_host())
                return;
        ck_assert_int_eq(cg_own_path("pids", &own_pids), 0);
        ck_assert_int_eq(cg_own_path("memory", &own_memory), 0);
        ck_assert_int_eq(random_id(id), 0);
        taken = run_cgroup_path("pids", own_pids, id);
        made = run_cgroup_path("memory", own_memory, id);
        ck_assert_int_eq(cg_create_locked(taken, &fd), 0);
        ck_assert_int_eq(random_id(other), 0);
        stale = run_cgroup_path("memory", own_memory, other);
        ck_assert_int_eq(mkdir(stale, 0755), 0);

        t.req.run_id = id;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert_msg(strstr(t.res->error, "cgroup1 limits") && strstr(t.res->error, taken),
                      "error: %s", t.res->error);
        ck_assert_uint_eq(t.res->stdout_stream.total, 0);
        /* The init is reaped (no child of ours is left), the memory cgroup made before is gone. */
        ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
        ck_assert_int_eq(errno, ECHILD);
        ck_assert_int_eq(access(made, F_OK), -1);
        ck_assert_int_eq(access(stale, F_OK), -1);
        ck_assert(!host_process_with_uid(t.res->uid));
        fd = safe_close(fd);
        ck_assert_int_eq(rmdir(taken), 0);
}
END_TEST

/* cgroup v1: the cgroups of runs whose engine was killed (empty, their lock free) are swept by the
 * next run, while its skill starts rather than before its init enters its own; one that a live
 * run holds (locked) stays. */
START_TEST(test_cgroup_stale_swept) {
        _cleanup_test_run_ TestRun t = test_run_new("echo ran");
        _cleanup_free_ char *own_pids = NULL, *stale = NULL, *live = NULL;
        _cleanup_close_ int fd = -EBADF;
        char id[RANDOM_ID_STRING_MAX], other[RANDOM_ID_STRING_MAX];

        if (!cgroup1_host())
                return;
        ck_assert_int_eq(cg_own_path("pids", &own_pids), 0);
        ck_assert_int_eq(random_id(id), 0);
        ck_assert_int_eq(random_id(other), 0);
        stale = run_cgroup_path("pids", own_pids, id);
        live = run_cgroup_path("pids", own_pids, other);
        ck_assert_int_eq(mkdir(stale, 0755), 0);
        ck_assert_int_eq(cg_create_locked(live, &fd), 0);

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(access(stale, F_OK), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(access(live, F_OK), 0);
        fd = safe_close(fd);
        ck_assert_int_eq(rmdir(live), 0);
}
END_TEST

/* The engine narrows its own CPU affinity while the init builds its root (step_aside()): the init,
 * the skill and the caller after the run keep the caller's CPUs. */
START_TEST(test_affinity_kept) {
        _cleanup_test_run_ TestRun t = test_run_new("grep Cpus_allowed_list /proc/self/status");
        _cleanup_free_ char *status = NULL, *expected = NULL;
        cpu_set_t before, after;
        const char *line;

        ck_assert_int_eq(sched_getaffinity(0, sizeof(before), &before), 0);
        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/proc/self/status", 64 * 1024, false, &status, NULL), 0);
        line = strstr(status, "Cpus_allowed_list:");
        ck_assert_ptr_nonnull(line);
        expected = strndup(line, strcspn(line, "\n") + 1);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(strempty(t.res->stdout_stream.data), expected);
        ck_assert_int_eq(sched_getaffinity(0, sizeof(after), &after), 0);
        ck_assert(CPU_EQUAL(&before, &after));
}
END_TEST

/* ---- isolation, asserted on the host ---- */

START_TEST(test_tmp_and_home_private) {
        _cleanup_free_ char *marker = random_marker(), *body = NULL, *host = NULL;
        _cleanup_test_run_ TestRun t = {};

        body = strdup_printf("echo x > /tmp/%s && echo x > \"$HOME/%s\" && "
                             "echo x > /var/tmp/%s.v && echo ok", marker, marker, marker);
        t = test_run_new(body);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data, "ok\n");
        host = strdup_printf("/tmp/%s", marker);
        ck_assert_int_eq(access(host, F_OK), -1);
        free(host);
        host = strdup_printf("/var/tmp/%s.v", marker);
        ck_assert_int_eq(access(host, F_OK), -1);
}
END_TEST

START_TEST(test_host_secrets_absent) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "for p in /etc/shadow /root /home/alice /run/dbus/system_bus_socket /var/lib /sys /boot "
                "\"$HOME/.ssh\" /etc/ssh /etc/sudoers; do\n"
                "  if cat \"$p\" >/dev/null 2>&1 || ls \"$p\" >/dev/null 2>&1; then\n"
                "    echo \"reachable $p\"\n"
                "  fi\n"
                "done\n"
                "ls /home\n");

        /* The host does have these (or the test proves little). */
        ck_assert_int_eq(access("/etc/shadow", F_OK), 0);
        ck_assert_int_eq(access("/root", F_OK), 0);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* Only the sandbox's own home, nothing else reachable. */
        ck_assert_str_eq(t.res->stdout_stream.data, "skill\n");
}
END_TEST

START_TEST(test_proc_shows_only_the_run) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "cd /proc && ls -d [0-9]* | sort -n | tr '\\n' ' '; echo; "
                                                    "cat /proc/1/status | grep -c '^Uid:.*' ");
        char mine[32];

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* The init (1), the script (2), ls/sort/tr: a handful of small pids, and not ours. */
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "1 2 "));
        (void) snprintf(mine, sizeof(mine), " %d ", (int) getpid());
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, mine));
        ck_assert_int_lt(strlen(t.res->stdout_stream.data), 40);
}
END_TEST

START_TEST(test_proc_kernel_parts_hidden) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "for f in /proc/keys /proc/timer_list; do echo \"$f $(cat $f 2>/dev/null | wc -c)\"; done\n"
                "(echo x > /proc/sys/kernel/hostname) 2>/dev/null && echo sysctl-written\n"
                "echo \"acpi $(ls -A /proc/acpi 2>/dev/null | wc -l)\"\n");
        _cleanup_free_ char *host = NULL;
        size_t size = 0;

        /* The host's has something to hide. */
        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/proc/timer_list", 64 << 20, false, &host, &size), 0);
        ck_assert_uint_gt(size, 0);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(probe_value(t.res, "/proc/keys"), 0);
        ck_assert_int_eq(probe_value(t.res, "/proc/timer_list"), 0);
        ck_assert_int_eq(probe_value(t.res, "acpi"), 0);
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "sysctl-written"));
}
END_TEST

START_TEST(test_kill_reaches_no_host_process) {
        _cleanup_test_run_ TestRun t = {};
        _cleanup_free_ char *body = NULL;
        pid_t sleeper;

        sleeper = fork();
        ck_assert_int_ge(sleeper, 0);
        if (sleeper == 0) {
                pause();
                _exit(0);
        }
        body = strdup_printf("kill -9 %d; echo \"kill=$?\"; /skill/probe kill %d; kill -9 -1", (int) sleeper,
                             (int) sleeper);
        t = test_run_new(body);
        test_run_go(&t);
        /* kill -9 -1 takes the script along: the run ends by SIGKILL, and that is all it reaches. */
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "kill=1"));
        ck_assert_int_eq(probe_value(t.res, "kill"), ESRCH);
        ck_assert_int_eq(kill(sleeper, 0), 0);
        ck_assert_int_eq(waitpid(sleeper, NULL, WNOHANG), 0);
        (void) kill(sleeper, SIGKILL);
        (void) waitpid(sleeper, NULL, 0);
}
END_TEST

START_TEST(test_environment_from_scratch) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *env[] = { (char *) "GREETING=hi", NULL };
        char *args[] = { (char *) "env", NULL };
        static const char *const allowed[] = {
                "PATH", "HOME", "LANG", "TERM", "SKILL_DIR", "SKILL_ASSETS_DIR", "SANDBOX_OUTPUT",
                "SANDBOX_FILES_DIR", "SKILL_INPUT_FILE", "SANDBOX_INPUT", "GREETING", "PYTHONPATH", "NODE_PATH",
        };
        unsigned seen = 0;

        ck_assert_int_eq(setenv("SKILLD_TEST_SECRET", "hunter2", 1), 0);
        ck_assert_int_eq(setenv("LD_PRELOAD", "/tmp/evil.so", 1), 0);
        t.req.env = env;
        t.req.input_json = "{}";
        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);

        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "hunter2"));
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "LD_PRELOAD"));
        for (const char *p = t.res->stdout_stream.data; p && *p; p = next_line(p)) {
                size_t n = strcspn(p, "=");
                bool ok = false;

                for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                        if (strlen(allowed[i]) == n && strncmp(p, allowed[i], n) == 0)
                                ok = true;
                ck_assert_msg(ok, "unexpected variable: %.*s", (int) n, p);
                seen++;
        }
        ck_assert_uint_eq(seen, ELEMENTSOF(allowed));
        ck_assert(stdout_has_line(t.res, "GREETING=hi"));
        ck_assert(stdout_has_line(t.res, "HOME=/home/skill"));
        ck_assert(stdout_has_line(t.res, "SANDBOX_INPUT={}"));
        (void) unsetenv("LD_PRELOAD");
}
END_TEST

static int listen_tcp_loopback(uint16_t *ret_port) {
        struct sockaddr_in sa = { .sin_family = AF_INET };
        socklen_t len = sizeof(sa);
        int fd;

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(fd, 0);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
        *ret_port = ntohs(sa.sin_port);
        return fd;
}

/* Where the run's network namespace comes from (engine.c, place_netns()): made beside the init by
 * a thread of the engine and entered with its release, where the init is born into its cgroup
 * (cgroup v2: the VM suite), or with the clone elsewhere (cgroup v1, which the init enters itself;
 * a backend that places it from outside, the rlimit one: NETNS_CLONE, either cgroup version).
 * Beside the init both with the engine's uid, whose verdict follows the release, and with one the
 * caller reserved (the uid's lock in *ret_lock), as skilld's worker does. NETNS_AHEAD: made ahead
 * of the run by the caller's thread (ahead.c), as skillctl does, and entered by the init first
 * thing, whatever the backend. */
enum { NETNS_ENGINE_UID, NETNS_CALLER_UID, NETNS_CLONE, NETNS_AHEAD, _NETNS_WAYS };

static void netns_way(TestRun *t, int way, int *ret_lock) {
        uid_t uid;

        *ret_lock = -EBADF;
        t->ahead = way == NETNS_AHEAD;
        if (way == NETNS_CLONE)
                t->req.backend = &sandbox_backend_rlimit;
        if (way != NETNS_CALLER_UID)
                return;
        ck_assert_int_eq(sandbox_uid_reserve(&uid, ret_lock, NULL), 0);
        t->req.uid = uid;
}

START_TEST(test_no_network) {
        _cleanup_test_run_ TestRun t = {};
        _cleanup_close_ int lfd = -EBADF, lock = -EBADF;
        _cleanup_free_ char *body = NULL;
        uint16_t port;

        lfd = listen_tcp_loopback(&port);
        body = strdup_printf("/skill/probe connect %u; /skill/probe ifaces\n"
                             "getent hosts localhost >/dev/null && echo localhost-ok\n"
                             "getent hosts example.com >/dev/null || echo dns-failed\n"
                             "(exec 3<>/dev/tcp/127.0.0.1/%u) 2>/dev/null || echo bash-tcp-failed\n",
                             port, port);
        t = test_run_new(body);
        netns_way(&t, _i, &lock);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* The run's own lo, where nothing listens: the host's listener is out of reach. */
        ck_assert_int_eq(probe_value(t.res, "connect"), ECONNREFUSED);
        ck_assert(stdout_has_line(t.res, "iface lo"));
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "iface eth"));
        ck_assert(stdout_has_line(t.res, "localhost-ok"));
        ck_assert(stdout_has_line(t.res, "dns-failed"));
        ck_assert(stdout_has_line(t.res, "bash-tcp-failed"));
        /* Nothing ever reached the host's listener. */
        ck_assert_int_eq(accept(lfd, NULL, NULL), -1);
        ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

/* With network the run shares our network namespace: it reaches our listener on 127.0.0.1 and
 * resolves names as the host does; the rest of the sandbox is unchanged. */
START_TEST(test_network) {
        _cleanup_test_run_ TestRun t = {};
        _cleanup_close_ int lfd = -EBADF, cfd = -EBADF;
        _cleanup_free_ char *body = NULL, *resolv = NULL;
        _cleanup_(cJSON_Deletep) cJSON *json = NULL;
        size_t size;
        uint16_t port;

        lfd = listen_tcp_loopback(&port);
        body = strdup_printf("/skill/probe connect %u\n"
                             "echo \"hostname $(hostname)\"\n"
                             "test -e /etc/resolv.conf && cat /etc/resolv.conf > /out/files/resolv.conf\n"
                             "true\n",
                             port);
        t = test_run_new(body);
        t.req.network = true;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert(t.res->network);
        ck_assert_int_eq(probe_value(t.res, "connect"), 0);
        cfd = accept(lfd, NULL, NULL);
        ck_assert_int_ge(cfd, 0);
        /* Still its own UTS namespace and no layer given up. */
        ck_assert(stdout_has_line(t.res, "hostname skill"));
        ck_assert_uint_eq(t.res->layers_missing, 0);

        /* The host's name resolution, bound read-only (through its symlink, if it is one). */
        if (read_full_file_at(AT_FDCWD, "/etc/resolv.conf", 1024 * 1024, false, &resolv, &size) >= 0) {
                _cleanup_free_ char *inside = NULL, *path = strdup_printf("%s/files/resolv.conf",
                                                                          t.out_path);
                size_t inside_size;

                ck_assert_int_eq(read_full_file_at(AT_FDCWD, path, 1024 * 1024, false, &inside,
                                                   &inside_size), 0);
                ck_assert_uint_eq(inside_size, size);
                ck_assert_int_eq(memcmp(inside, resolv, size), 0);
        }

        ck_assert_int_eq(run_result_to_json(t.res, &json), 0);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(json, "network")));
        cJSON_Delete(TAKE_PTR(json));

        /* The same request without network: a result that says so. */
        t.req.network = false;
        test_run_go(&t);
        ck_assert(!t.res->network);
        ck_assert_int_eq(run_result_to_json(t.res, &json), 0);
        ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(json, "network")));
}
END_TEST

START_TEST(test_host_sockets_unreachable) {
        _cleanup_free_ char *marker = random_marker(), *abstract = NULL, *body = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_test_run_ TestRun t = {};
        _cleanup_close_ int fd = -EBADF, lock = -EBADF;

        /* An abstract socket on the host: it lives in the host's network namespace. */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(fd, 0);
        memcpy(sa.sun_path + 1, marker, strlen(marker));
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa,
                              offsetof(struct sockaddr_un, sun_path) + 1 + strlen(marker)), 0);
        ck_assert_int_eq(listen(fd, 4), 0);

        abstract = strdup_printf("@%s", marker);
        body = strdup_printf("/skill/probe unix /run/dbus/system_bus_socket; /skill/probe unix %s",
                             abstract);
        t = test_run_new(body);
        netns_way(&t, _i, &lock);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "unix 2\n")); /* ENOENT for the bus */
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "unix 111\n")); /* ECONNREFUSED */
        ck_assert_int_eq(accept(fd, NULL, NULL), -1);
        ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

static char *netns_link(pid_t pid) {
        char path[64], buf[64];
        ssize_t n;

        (void) snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) pid);
        n = readlink(path, buf, sizeof(buf) - 1);
        ck_assert_int_gt(n, 0);
        return strndup(buf, (size_t) n);
}

/* As root the run's network namespace is made beside its init (netns.c) and entered before the
 * skill process is forked: a new one for each run, neither ours nor a concurrent run's, with lo
 * alone in it, up. */
START_TEST(test_network_namespace_own) {
        _cleanup_test_run_ TestRun a = test_run_new("readlink /proc/self/ns/net; exec sleep 60");
        _cleanup_test_run_ TestRun b = test_run_new("readlink /proc/self/ns/net; /skill/probe links");
        _cleanup_free_ char *ours = netns_link(getpid()), *first = NULL, *second = NULL;
        _cleanup_close_ int cancel = -EBADF, lock_a = -EBADF, lock_b = -EBADF;
        char line[128] = {};
        int out[2], status;
        size_t n = 0;
        pid_t pid;

        netns_way(&a, _i, &lock_a);
        netns_way(&b, _i, &lock_b);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        cancel = eventfd(0, EFD_CLOEXEC);
        ck_assert_int_ge(cancel, 0);
        a.req.stdout_fd = out[1];
        a.req.cancel_fd = cancel;
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                RunResult *res = NULL;

                (void) close(out[0]);
                if (a.ahead && sandbox_ahead_start(&a.req.ahead) < 0)
                        _exit(10);
                if (sandbox_run(&a.req, &res, NULL) < 0)
                        _exit(11);
                _exit(res->status == RUN_STATUS_CANCELED ? 0 : 12);
        }
        (void) close(out[1]);
        /* The first run's namespace, alive until it is canceled. */
        while (n < sizeof(line) - 1 && !strchr(line, '\n')) {
                ssize_t k = read(out[0], line + n, sizeof(line) - 1 - n);

                ck_assert_int_gt(k, 0);
                n += (size_t) k;
        }
        (void) close(out[0]);
        first = strndup(line, strcspn(line, "\n"));
        ck_assert_ptr_nonnull(strstr(first, "net:["));

        test_run_go(&b);
        assert_status(b.res, RUN_STATUS_SUCCEEDED);
        second = strndup(b.res->stdout_stream.data, strcspn(b.res->stdout_stream.data, "\n"));
        ck_assert_ptr_nonnull(strstr(second, "net:["));
        ck_assert_str_ne(first, ours);
        ck_assert_str_ne(second, ours);
        ck_assert_str_ne(first, second);
        /* lo and nothing else, and lo up. */
        ck_assert(stdout_has_line(b.res, "link lo up"));
        ck_assert_ptr_null(strstr(strstr(b.res->stdout_stream.data, "link lo up") + 1, "link "));
        ck_assert_ptr_eq(strstr(b.res->stdout_stream.data, "link "), strstr(b.res->stdout_stream.data, "link lo up"));

        ck_assert_int_eq(eventfd_write(cancel, 1), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A network namespace that cannot be made (here the kernel's answer when user.max_net_namespaces
 * is reached, ENOSPC, given by a filter of this test's process to unshare() and clone() with
 * CLONE_NEWNET; clone3(), whose flags a filter cannot see, answers ENOSYS, and the engine falls
 * back to clone()) fails the run with a message that says so, whichever way the namespace is
 * made; the skill never ran, the init is reaped, and no thread or fd of the run is left. */
START_TEST(test_network_namespace_failure) {
        _cleanup_test_run_ TestRun t = test_run_new("echo ran");
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_close_ int lock = -EBADF;
        size_t fds_before, fds_after;
        bool beside;

        netns_way(&t, _i, &lock);
        /* The filter stays with the process: only in the one check forked for this test. */
        ck_assert_msg(!streq_ptr(getenv("CK_FORK"), "no"), "the filter needs check's fork mode");
        ctx = seccomp_init(SCMP_ACT_ALLOW);
        ck_assert_ptr_nonnull(ctx);
        /* Root may load a filter without no_new_privs, which would change what the run inherits. */
        ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0), 0);
        ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSPC), SCMP_SYS(unshare), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET)), 0);
        ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSPC), SCMP_SYS(clone), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET)), 0);
        ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), 0);
        ck_assert_int_eq(seccomp_load(ctx), 0);
        ck_assert_int_eq(unshare(CLONE_NEWNET), -1);
        ck_assert_int_eq(errno, ENOSPC);

        fds_before = test_count_entries("/proc/self/fd");
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        /* Beside the init where it is born into its cgroup (cgroup v2); with the clone elsewhere,
         * and where the thread that made it ahead failed (with the same error). */
        beside = (_i == NETNS_ENGINE_UID || _i == NETNS_CALLER_UID) && streq(t.res->backend, "cgroup2");
        /* Made ahead: by the clone where the helper's failure came before it, else the helper's
         * own error at the release. */
        ck_assert_msg((strstr(t.res->error, beside ? "Failed to create the run's network namespace" :
                                                     "Failed to create the sandbox namespaces") ||
                       (_i == NETNS_AHEAD && strstr(t.res->error, "Failed to create the run's network namespace"))) &&
                      strstr(t.res->error, strerror(ENOSPC)), "error: %s", t.res->error);
        ck_assert_uint_eq(t.res->stdout_stream.total, 0);
        ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
        ck_assert_int_eq(errno, ECHILD);
        ck_assert(!host_process_with_uid(t.res->uid));
        fds_after = test_count_entries("/proc/self/fd");
        ck_assert_uint_eq(fds_after, fds_before);
        ck_assert_uint_eq(test_count_entries("/proc/self/task"), 1);
}
END_TEST

/* A sandbox made ahead (ahead.c) is spent by the run it is given to, whether the run used it or
 * not, and leaves nothing behind: an object never given to a run, one given to a run with
 * network (which shares ours and needs no namespace), one given again once spent (the clone
 * makes the namespace) and one given to a run that fails before its clone leave no thread, no
 * fd and no child with the caller. */
static void assert_nothing_left(size_t fds_before) {
        ck_assert_uint_eq(test_count_entries("/proc/self/fd"), fds_before);
        ck_assert_uint_eq(test_count_entries("/proc/self/task"), 1);
        ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
        ck_assert_int_eq(errno, ECHILD);
}

START_TEST(test_ahead_spent) {
        _cleanup_test_run_ TestRun t = test_run_new("readlink /proc/self/ns/net");
        _cleanup_(sandbox_ahead_freep) SandboxAhead *a = NULL;
        _cleanup_free_ char *ours = netns_link(getpid());
        size_t fds_before = test_count_entries("/proc/self/fd");

        ck_assert_int_eq(sandbox_ahead_start_full(_i, &a), 0);
        ck_assert_ptr_nonnull(a);
        a = sandbox_ahead_free(a);
        assert_nothing_left(fds_before);

        ck_assert_int_eq(sandbox_ahead_start_full(_i, &a), 0);
        t.req.ahead = a;
        t.req.network = true;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert(stdout_has_line(t.res, ours));
        assert_nothing_left(fds_before);

        t.req.network = false;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "net:["));
        ck_assert(!stdout_has_line(t.res, ours));
        assert_nothing_left(fds_before);

        a = sandbox_ahead_free(a);
        ck_assert_int_eq(sandbox_ahead_start_full(_i, &a), 0);
        t.req.ahead = a;
        t.req.script = "scripts/missing.sh";
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_ERROR);
        ck_assert(t.res->exec_failed);
        ck_assert_uint_eq(t.res->stdout_stream.total, 0);
        assert_nothing_left(fds_before);
}
END_TEST

/* A helper that has no CPU (here: stopped) is not waited for past a short while at the release:
 * the init makes a namespace of its own, new, with lo alone in it, up; the helper is killed and
 * reaped with the run's end, and nothing of it is left. */
START_TEST(test_ahead_late_helper) {
        _cleanup_test_run_ TestRun t = test_run_new("readlink /proc/self/ns/net; /skill/probe links");
        _cleanup_(sandbox_ahead_freep) SandboxAhead *a = NULL;
        _cleanup_free_ char *ours = netns_link(getpid());
        size_t fds_before = test_count_entries("/proc/self/fd");

        ck_assert_int_eq(sandbox_ahead_start_full(_i, &a), 0);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(kill(a->pid, SIGSTOP), 0);
        t.req.ahead = a;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "net:["));
        ck_assert(!stdout_has_line(t.res, ours));
        ck_assert(stdout_has_line(t.res, "link lo up"));
        ck_assert_ptr_eq(strstr(t.res->stdout_stream.data, "link "), strstr(t.res->stdout_stream.data, "link lo up"));
        ck_assert_ptr_null(strstr(strstr(t.res->stdout_stream.data, "link lo up") + 1, "link "));
        assert_nothing_left(fds_before);
}
END_TEST

START_TEST(test_identity_unprivileged) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *args[] = { (char *) "ids", NULL };

        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(probe_value(t.res, "setuid0"), EPERM);
        ck_assert_int_eq(probe_value(t.res, "setgid0"), EPERM);
        ck_assert_int_eq(probe_value(t.res, "setgroups0"), EPERM);
        ck_assert_int_eq(probe_value(t.res, "uid"), (long) t.res->uid);
        ck_assert_int_ne(t.res->uid, 0);
        ck_assert_int_ne(t.res->uid, getuid());
        ck_assert(getpwuid(t.res->uid) == NULL);
}
END_TEST

START_TEST(test_read_only_skill_and_system) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "for p in /skill/new /skill/scripts/main.sh /usr/bin/x /etc/x /x /dev/x \\\n"
                "         /proc/sys/kernel/hostname; do\n"
                "  (echo pwned > \"$p\") 2>/dev/null && echo \"wrote $p\"\n"
                "done\n"
                "echo checked\n");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data, "checked\n");
        ck_assert_int_eq(faccessat(t.skill.fd, "new", F_OK, 0), -1);
}
END_TEST

/* An environment build's wheelhouses: host folders at /mnt/N, readable, never writable. */
START_TEST(test_read_only_dirs) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "cat /mnt/0/a.whl /mnt/1/b.whl\n"
                "for p in /mnt/0/a.whl /mnt/0/new /mnt/1/new; do\n"
                "  (echo pwned > \"$p\") 2>/dev/null && echo \"wrote $p\"\n"
                "done\n"
                "echo checked\n");
        _cleanup_test_dir_ TestDir a = test_dir_new(), b = test_dir_new();
        int fds[2];

        ck_assert_int_eq(fchmod(a.fd, 0755), 0);
        ck_assert_int_eq(fchmod(b.fd, 0755), 0);
        test_write_file(a.fd, "a.whl", "first\n", 0644);
        test_write_file(b.fd, "b.whl", "second\n", 0644);
        fds[0] = a.fd;
        fds[1] = b.fd;
        t.req.ro_dir_fds = fds;
        t.req.n_ro_dir_fds = 2;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_str_eq(t.res->stdout_stream.data, "first\nsecond\nchecked\n");
        ck_assert_int_eq(faccessat(a.fd, "new", F_OK, 0), -1);
        ck_assert_int_eq(faccessat(b.fd, "new", F_OK, 0), -1);

        /* A run without them has no /mnt at all. */
        t.req.ro_dir_fds = NULL;
        t.req.n_ro_dir_fds = 0;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "first"));
}
END_TEST

/* ---- seccomp ---- */

/* Runs with the backend the engine picks here (a cgroup when root has one), and with the rlimit
 * fallback forced, so both stay covered on any host. */
static const SandboxBackendOps *const test_backends[] = { NULL, &sandbox_backend_rlimit };

START_TEST(test_seccomp_refusals) {
        static const char *const eperm[] = {
                "unshare_user", "unshare_net", "unshare_ns", "clone_user", "setns", "mount", "umount2",
                "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
                "pivot_root", "chroot", "ptrace", "process_vm_readv", "process_vm_writev", "keyctl",
                "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
                "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module",
                "finit_module", "delete_module", "open_by_handle_at", "name_to_handle_at",
                "personality_set", "acct", "swapon", "swapoff", "reboot", "settimeofday",
                "clock_settime", "adjtimex", "quotactl", "syslog", "vhangup",
        };
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *args[] = { (char *) "syscalls", NULL };

        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        for (size_t i = 0; i < ELEMENTSOF(eperm); i++)
                ck_assert_msg(probe_value(t.res, eperm[i]) == EPERM, "%s: errno %ld, expected EPERM",
                              eperm[i],
                              probe_value(t.res, eperm[i]));
        ck_assert_int_eq(probe_value(t.res, "clone3"), ENOSYS);
        ck_assert_int_eq(probe_value(t.res, "socket_vsock"), EAFNOSUPPORT);
        ck_assert_int_eq(probe_value(t.res, "socket_unix"), 0);
        ck_assert_int_eq(probe_value(t.res, "personality_query"), 0);
        ck_assert_int_eq(probe_value(t.res, "personality_linux"), 0);
        ck_assert_int_eq(probe_value(t.res, "getcwd"), 0);
}
END_TEST

/* The refusal of name (with arg, or none) is in the run's record; its count, or 0 if not. */
static uint64_t refused_count(const RunResult *r, const char *name, const char *arg) {
        for (size_t i = 0; i < r->n_refused; i++)
                if (streq(r->refused[i].syscall, name) && streq_ptr(r->refused[i].arg, arg))
                        return r->refused[i].count;
        return 0;
}

START_TEST(test_seccomp_refusals_recorded) {
        static const struct {
                const char *syscall;
                const char *arg;
        } expected[] = {
                { "unshare", "CLONE_NEWUSER" }, { "unshare", "CLONE_NEWNET" }, { "unshare", "CLONE_NEWNS" },
                { "clone", "CLONE_NEWUSER" }, { "mount", NULL }, { "keyctl", NULL }, { "bpf", NULL },
                { "io_uring_setup", NULL }, { "ptrace", NULL }, { "personality", "0x400000" },
                { "socket", "AF_VSOCK" },
        };
        _cleanup_test_run_ TestRun t = test_run_new("true");
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *text = NULL;
        char *args[] = { (char *) "syscalls", NULL };

        /* A run that is refused nothing says so: an empty list, not null. */
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert(t.res->refused_known);
        ck_assert_uint_eq(t.res->n_refused, 0);

        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert(t.res->refused_known);
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                ck_assert_msg(refused_count(t.res, expected[i].syscall, expected[i].arg) == 1,
                              "%s(%s) not recorded once", expected[i].syscall, strna(expected[i].arg));
        /* Not refusals: clone3's ENOSYS fallback and the personality query answered 0. */
        ck_assert_uint_eq(refused_count(t.res, "clone3", NULL), 0);
        ck_assert_uint_eq(refused_count(t.res, "personality", "0xffffffff"), 0);
        ck_assert(!t.res->refused_truncated);

        /* result.json has it, in the documented shape. */
        ck_assert_int_eq(run_result_to_json(t.res, &j), 0);
        text = cJSON_PrintUnformatted(j);
        ck_assert_ptr_nonnull(strstr(text, "{\"syscall\":\"socket\",\"count\":1,\"arg\":\"AF_VSOCK\"}"));
        ck_assert_ptr_nonnull(strstr(text, "{\"syscall\":\"mount\",\"count\":1,\"arg\":null}"));
}
END_TEST

/* Under either backend: concurrent refusals all get their errno, the record counts them, and
 * keeps a bounded number of distinct ones. */
START_TEST(test_seccomp_refusals_bounded) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *args[] = { (char *) "refuse_many", NULL };

        t.req.backend = test_backends[_i];
        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(probe_value(t.res, "refuse_wrong"), 0);
        ck_assert_uint_eq(refused_count(t.res, "unshare", "CLONE_NEWUSER"), 2000);
        ck_assert_uint_eq(t.res->n_refused, 64);
        ck_assert(t.res->refused_truncated);
}
END_TEST

START_TEST(test_seccomp_tiocsti) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *args[] = { (char *) "tiocsti", NULL };

        t.req.input_json = "{}";
        test_run_probe(&t, args);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_int_eq(probe_value(t.res, "tiocsti"), EPERM);
        ck_assert_int_eq(probe_value(t.res, "tiocsti_high"), EPERM);
        ck_assert_int_eq(probe_value(t.res, "tioclinux"), EPERM);
}
END_TEST

START_TEST(test_seccomp_foreign_abi_killed) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *x32[] = { (char *) "x32", NULL };
        char *int80[] = { (char *) "int80", NULL };

        test_run_probe(&t, x32);
        assert_status(t.res, RUN_STATUS_SECCOMP);
        ck_assert_int_eq(t.res->signal, SIGSYS);
        ck_assert_ptr_null(strstr(strempty(t.res->stdout_stream.data), "survived"));

        test_run_probe(&t, int80);
        assert_status(t.res, RUN_STATUS_SECCOMP);
        ck_assert_int_eq(run_result_exit_code(t.res), 128 + SIGSYS);
}
END_TEST

/* ---- limits and how a run ends ---- */

START_TEST(test_memory_limit) {
        _cleanup_test_run_ TestRun t = test_run_new("true");
        char *args[] = { (char *) "alloc", (char *) "1024", NULL };

        t.req.backend = test_backends[_i];
        test_run_probe(&t, args);
        if (streq(t.res->backend, "rlimit")) {
                /* rlimits refuse the allocation instead of killing. */
                assert_status(t.res, RUN_STATUS_FAILED);
                ck_assert_int_eq(t.res->exit_code, 3);
                ck_assert_int_lt(probe_value(t.res, "alloc-failed"), 256);
        } else {
                assert_status(t.res, RUN_STATUS_OOM);
                ck_assert_int_eq(run_result_exit_code(t.res), 137);
                ck_assert_uint_le(t.res->usage.memory_peak, t.req.limits.memory_max);
        }
        ck_assert_ptr_null(strstr(strempty(t.res->stdout_stream.data), "allocated"));
}
END_TEST

START_TEST(test_fork_bomb_contained) {
        /* The classic bomb; the script stays alive two seconds (with builtins only: fork fails
         * for everyone once the bomb fills the limit), then counts the processes in its /proc. */
        _cleanup_test_run_ TestRun t = test_run_new(
                "bomb() { bomb | bomb & }; bomb\n"
                "while (( SECONDS < 2 )); do :; done\n"
                "n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done\n"
                "echo \"procs $n\"\n");
        pid_t pid;
        int status;

        t.req.backend = test_backends[_i];
        t.req.limits.tasks_max = 32;
        t.req.limits.timeout_usec = 6ULL * 1000 * 1000;
        test_run_go(&t);
        /* Contained: the script got to the end on its own, or the limit or the timer ended it. */
        ck_assert_msg(t.res->status == RUN_STATUS_SUCCEEDED || t.res->status == RUN_STATUS_TASKS ||
                      t.res->status == RUN_STATUS_TIMEOUT, "status %s", run_status_to_string(t.res->status));
        /* Counted from /proc while the bomb's processes die and are reaped: the kernel uncharges a
         * process (pids controller and RLIMIT_NPROC alike) in release_task() before it leaves
         * /proc, so one being reaped on each CPU may still be listed beside a new one that took
         * its place (34 seen on 2 CPUs under load). The limit holds for what is charged. */
        if (t.res->status == RUN_STATUS_SUCCEEDED) {
                ck_assert_int_gt(probe_value(t.res, "procs"), 4);
                ck_assert_int_le(probe_value(t.res, "procs"), 32 + sysconf(_SC_NPROCESSORS_ONLN));
        }
        /* Nothing of it is left, and the host can still fork. */
        ck_assert(!host_process_with_uid(t.res->uid));
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(7);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_int_eq(WEXITSTATUS(status), 7);
}
END_TEST

/* The memory rlimit is the skill's, not the engine's: the child that becomes the skill is a copy
 * of its caller, and RLIMIT_DATA counts all of that copy's writable memory. A caller holding more
 * than memory_max (an untouched reservation here: it costs nothing, but counts), whose heap has
 * no room left (trimmed, no padding), must still get the skill started. */
START_TEST(test_memory_rlimit_spares_the_engine) {
        _cleanup_test_run_ TestRun t = test_run_new("echo ran");
        size_t size = 1024ULL * 1024 * 1024;
        void *p;

        t.req.backend = &sandbox_backend_rlimit;
        t.req.limits.memory_max = 64ULL * 1024 * 1024;
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        ck_assert(p != MAP_FAILED);
        (void) mallopt(M_TOP_PAD, 0);
        (void) mallopt(M_TRIM_THRESHOLD, 0);
        (void) malloc_trim(0);
        test_run_go(&t);
        ck_assert_int_eq(munmap(p, size), 0);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert(stdout_has_line(t.res, "ran"));
}
END_TEST

START_TEST(test_busy_loop_timeout) {
        _cleanup_test_run_ TestRun t = test_run_new("while :; do :; done");

        t.req.limits.timeout_usec = 1000 * 1000;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_TIMEOUT);
        ck_assert_int_eq(run_result_exit_code(t.res), 124);
        ck_assert_uint_ge(t.res->usage.wall_usec, 1000 * 1000);
        ck_assert(!host_process_with_uid(t.res->uid));
}
END_TEST

START_TEST(test_daemon_is_killed_at_end) {
        _cleanup_free_ char *marker = random_marker(), *body = NULL;
        _cleanup_test_run_ TestRun t = {};

        /* Double fork, new session, stdio detached: the classic daemon, escaping its parent. */
        /* "[s]killd-test-..." matches the daemon's command line but not grep's own. */
        body = strdup_printf("( setsid bash -c '(exec -a %s sleep 600) </dev/null >/dev/null 2>&1 &' & )\n"
                             "for i in $(seq 1 200); do\n"
                             "  n=$(grep -l '[s]%s' /proc/[0-9]*/cmdline 2>/dev/null | wc -l)\n"
                             "  [ \"$n\" -gt 0 ] && break\n"
                             "  sleep 0.05\n"
                             "done\n"
                             "echo \"running=$n\"\n", marker, marker + 1);
        t = test_run_new(body);
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* It was alive inside while the script ran... */
        ck_assert_ptr_null(strstr(t.res->stdout_stream.data, "running=0"));
        /* ...and is gone now, without the run waiting for it. */
        ck_assert(!host_process_with(marker));
        ck_assert(!host_process_with_uid(t.res->uid));
        ck_assert_uint_lt(t.res->usage.wall_usec, 30ULL * 1000 * 1000);
}
END_TEST

START_TEST(test_stdout_truncated_at_cap) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "head -c 100000000 /dev/zero | tr '\\0' a; echo end >&2");
        _cleanup_free_ char *log = NULL;
        size_t size;

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_uint_eq(t.res->stdout_stream.total, 100000000);
        ck_assert(t.res->stdout_stream.truncated);
        ck_assert_uint_gt(t.res->stdout_stream.size, t.req.limits.stdout_max);
        ck_assert_uint_lt(t.res->stdout_stream.size, t.req.limits.stdout_max + 128);
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data + t.req.limits.stdout_max, "truncated"));
        ck_assert_str_eq(t.res->stderr_stream.data, "end\n");
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/stdout.log", 64 << 20, true, &log, &size), 0);
        ck_assert_uint_eq(size, t.res->stdout_stream.size);
}
END_TEST

START_TEST(test_out_limit) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "head -c 3000000 /dev/zero > /out/files/big; echo \"rc=$?\"");

        t.req.limits.out_max = 1024 * 1024;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_OUTPUT_LIMIT);
        ck_assert(t.res->out_full);
        ck_assert_ptr_nonnull(strstr(t.res->stdout_stream.data, "rc=1"));
}
END_TEST

START_TEST(test_artifacts_not_followed) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "cd /out/files && ln -s /etc/passwd link && mkfifo fifo && mkdir d && "
                "ln -s /etc d/dirlink && "
                "echo data > d/real && ln d/real hard && echo ok");
        struct stat st;

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        /* Copied: d, d/real, hard (a second name of the same file in /out, harmless). */
        ck_assert_uint_eq(t.res->n_artifacts, 3);
        ck_assert_str_eq(t.res->artifacts[0].path, "d");
        ck_assert_str_eq(t.res->artifacts[1].path, "d/real");
        ck_assert_str_eq(t.res->artifacts[2].path, "hard");
        ck_assert_uint_eq(t.res->n_skipped, 3);
        ck_assert_str_eq(t.res->skipped[0].path, "d/dirlink");
        ck_assert_str_eq(t.res->skipped[0].reason, "symlink");
        ck_assert_str_eq(t.res->skipped[1].path, "fifo");
        ck_assert_str_eq(t.res->skipped[1].reason, "fifo");
        ck_assert_str_eq(t.res->skipped[2].path, "link");
        ck_assert_int_eq(fstatat(t.out.fd, "run/files/link", &st, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(fstatat(t.out.fd, "run/files/fifo", &st, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(fstatat(t.out.fd, "run/files/d/real", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISREG(st.st_mode));
}
END_TEST

START_TEST(test_artifact_cap) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "cd /out/files && for i in $(seq 1 20); do : > f$i; done; echo ok");

        t.req.limits.artifacts_max = 5;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_OUTPUT_LIMIT);
        ck_assert(t.res->artifacts_truncated || t.res->out_full);
        ck_assert_uint_le(t.res->n_artifacts, 5);
}
END_TEST

START_TEST(test_output_json_symlink_refused) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "ln -s /etc/passwd /out/output.json; echo '{\"fallback\": 1}'");

        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_SUCCEEDED);
        ck_assert_ptr_null(t.res->output);
        ck_assert_ptr_nonnull(strstr(t.res->output_error, "symlink"));
}
END_TEST

static void *cancel_later(void *p) {
        int fd = *(int *) p;

        (void) usleep(300 * 1000);
        (void) eventfd_write(fd, 1);
        return NULL;
}

START_TEST(test_cancel) {
        _cleanup_test_run_ TestRun t = test_run_new("sleep 60");
        _cleanup_close_ int efd = eventfd(0, EFD_CLOEXEC);
        pid_t pid;

        ck_assert_int_ge(efd, 0);
        /* A forked helper writes the eventfd (the engine expects a single-threaded caller). */
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void) cancel_later(&efd);
                _exit(0);
        }
        t.req.cancel_fd = efd;
        test_run_go(&t);
        assert_status(t.res, RUN_STATUS_CANCELED);
        ck_assert_uint_lt(t.res->usage.wall_usec, 30ULL * 1000 * 1000);
        ck_assert(!host_process_with_uid(t.res->uid));
        (void) waitpid(pid, NULL, 0);
}
END_TEST

START_TEST(test_uids_differ_between_concurrent_runs) {
        _cleanup_close_ int a = -EBADF, b = -EBADF;
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_free_ char *lock = strdup_printf("%s/uids.lock", d.path);
        uid_t ua, ub, uc;
        int c = -EBADF;

        ck_assert_int_eq(sandbox_identity_allocate(lock, &ua, &a, NULL), 0);
        ck_assert_int_eq(sandbox_identity_allocate(lock, &ub, &b, NULL), 0);
        ck_assert_uint_ne(ua, ub);
        ck_assert_uint_ge(ua, SANDBOX_UID_BASE);
        /* A freed uid can be taken again; a held one never. */
        b = safe_close(b);
        ck_assert_int_eq(sandbox_identity_allocate(lock, &uc, &c, NULL), 0);
        ck_assert_uint_ne(uc, ua);
        safe_close(c);
}
END_TEST

/* The uid is locked before the clone and checked against the user database after the init's
 * release: one that an account has after all costs the run its first init, which was released
 * and waits for the verdict at its uid change, before it starts its skill process as the uid,
 * and the run goes on with another uid. In a mount namespace of the test's own: a private uid lock file, all of
 * whose uids but two are held here, and a passwd that names the first of the two, after enough
 * other entries that the lookup takes the first attempt's skill process long enough to run its
 * script, were it not held: its line in /env/seen would show it. */
#define TAKEN_SLOT 100U
#define FILLER_ACCOUNTS 200000U

START_TEST(test_uid_named_by_user_database) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "id -u >> /env/seen; id -u; id -un; readlink /proc/self/ns/net");
        _cleanup_test_dir_ TestDir d = test_dir_new();
        _cleanup_test_dir_ TestDir env = test_dir_new();
        _cleanup_free_ char *result = NULL, *seen = NULL, *passwd = NULL, *expected = NULL,
                            *ours = netns_link(getpid());
        _cleanup_fclose_ FILE *f = NULL;
        int status;
        pid_t pid;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, "/etc/passwd", 1024 * 1024, false, &passwd, NULL), 0);
        {
                _cleanup_close_ int fd = openat(d.fd, "passwd", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                                0644);

                ck_assert_int_ge(fd, 0);
                f = fdopen(TAKE_FD(fd), "we");
                ck_assert_ptr_nonnull(f);
                ck_assert_int_ge(fputs(passwd, f), 0);
                /* Below the sandbox range, above any account of a test machine. */
                for (unsigned i = 0; i < FILLER_ACCOUNTS; i++)
                        ck_assert_int_ge(fprintf(f, "filler%u:x:%u:%u::/nonexistent:/bin/false\n", i,
                                                 1000000U + i, 1000000U + i), 0);
                ck_assert_int_ge(fprintf(f, "taken:x:%u:%u::/nonexistent:/bin/false\n",
                                         SANDBOX_UID_BASE + TAKEN_SLOT, SANDBOX_UID_BASE + TAKEN_SLOT), 0);
                ck_assert_int_eq(fflush(f), 0);
        }
        /* The sandbox user writes its line through the environment bound read-write. */
        ck_assert_int_eq(fchmod(env.fd, 0777), 0);
        t.req.env_dir_fd = env.fd;
        t.req.env_writable = true;
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                _cleanup_free_ char *path = strdup_printf("%s/passwd", d.path);
                RunResult *res = NULL;
                struct flock below = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = TAKEN_SLOT };
                struct flock above = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = TAKEN_SLOT + 2,
                                       .l_len = SANDBOX_UID_COUNT - TAKEN_SLOT - 2 };
                size_t fds_before;
                int fd;

                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mkdir_p_at(AT_FDCWD, "/run/skilld", 0755) < 0 ||
                    mount("tmpfs", "/run/skilld", "tmpfs", 0, "mode=0755") < 0 ||
                    mount(path, "/etc/passwd", NULL, MS_BIND, NULL) < 0)
                        _exit(10);
                /* The user database answers from the file above. */
                if (getpwuid(SANDBOX_UID_BASE + TAKEN_SLOT) == NULL)
                        _exit(77);
                fd = open("/run/skilld/sandbox-uids.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (fd < 0 || fcntl(fd, F_OFD_SETLK, &below) < 0 || fcntl(fd, F_OFD_SETLK, &above) < 0)
                        _exit(10);
                fds_before = test_count_entries("/proc/self/fd");
                /* The namespace made ahead goes to the first init, which is killed: the second
                 * gets one of its own with the clone. */
                if (sandbox_ahead_start(&t.req.ahead) < 0 || !t.req.ahead)
                        _exit(10);
                if (sandbox_run(&t.req, &res, NULL) < 0)
                        _exit(11);
                if (res->status != RUN_STATUS_SUCCEEDED)
                        _exit(12);
                if (res->uid != SANDBOX_UID_BASE + TAKEN_SLOT + 1)
                        _exit(13);
                res = run_result_free(res);
                /* Nothing of either init is left with the engine: no fd (a channel, a namespace),
                 * no thread, no child. */
                if (test_count_entries("/proc/self/fd") != fds_before)
                        _exit(14);
                if (test_count_entries("/proc/self/task") != 1)
                        _exit(15);
                if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
                        _exit(16);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                return; /* a user database that does not read /etc/passwd */
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/stdout.log", 4096, true, &result, NULL), 0);
        expected = strdup_printf("%u\nskill\n", SANDBOX_UID_BASE + TAKEN_SLOT + 1);
        /* The run's network namespace is its own. */
        ck_assert_ptr_nonnull(strstr(result, "net:["));
        ck_assert_ptr_null(strstr(result, ours));
        *strstr(result, "net:[") = '\0';
        ck_assert_str_eq(result, expected);
        /* The first attempt's skill process never ran the script, as the named uid or any. */
        ck_assert_int_eq(read_full_file_at(env.fd, "seen", 4096, true, &seen, NULL), 0);
        *strchr(expected, '\n') = '\0';
        ck_assert_int_eq(strncmp(seen, expected, strlen(expected)), 0);
        ck_assert_str_eq(seen + strlen(expected), "\n");
        /* Nothing of the first init is left. */
        ck_assert(!host_process_with_uid(SANDBOX_UID_BASE + TAKEN_SLOT));
        ck_assert(!host_process_with_uid(SANDBOX_UID_BASE + TAKEN_SLOT + 1));
}
END_TEST

/* Unprivileged: the same engine through a user namespace, run as nobody. */
START_TEST(test_unprivileged_user_namespace) {
        _cleanup_test_run_ TestRun t = test_run_new(
                "id -u; cat /proc/self/uid_map; echo '{\"ok\": true}' > /out/output.json");
        _cleanup_free_ char *result = NULL;
        int status;
        pid_t pid;

        ck_assert_int_eq(chmod(t.out.path, 0777), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                RunResult *res = NULL;

                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(10);
                /* Changing uids made us non-dumpable, which a user who logged in as nobody would not
                 * be; the engine needs its /proc/<child>/uid_map writable. */
                if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
                        _exit(10);
                if (sandbox_run(&t.req, &res, NULL) < 0)
                        _exit(11);
                if (res->status == RUN_STATUS_ERROR &&
                    strstr(strempty(res->error), "user namespaces are not available"))
                        _exit(77);
                _exit(res->status == RUN_STATUS_SUCCEEDED ? 0 : 12);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                return; /* user namespaces disabled here: the engine said so clearly */
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        ck_assert_int_eq(read_full_file_at(t.out.fd, "run/stdout.log", 4096, true, &result, NULL), 0);
        /* Inside: the sandbox id, mapped onto nobody outside. */
        ck_assert_ptr_nonnull(strstr(result, "1000\n"));
        ck_assert_ptr_nonnull(strstr(result, "65534"));
}
END_TEST

static Suite *sandbox_suite(void) {
        Suite *s = suite_create("sandbox");
        TCase *tc;

        tc = tcase_create("contract");
        tcase_add_test(tc, test_input_channels_output_artifacts);
        tcase_add_test(tc, test_output_from_stdout);
        tcase_add_test(tc, test_output_dir_reused);
        tcase_add_test(tc, test_record_written_as_it_comes);
        tcase_add_test(tc, test_record_log_name_taken);
        tcase_add_test(tc, test_output_exact);
        tcase_add_test(tc, test_output_json_invalid);
        tcase_add_test(tc, test_input_files_in_work);
        tcase_add_test(tc, test_exit_code_and_signal);
        tcase_add_test(tc, test_init_forwards_signals);
        tcase_add_test(tc, test_signals_reset);
        tcase_add_test(tc, test_cpus_kept);
        tcase_add_test(tc, test_rlimits_under_caller_hard_limits);
        tcase_add_test(tc, test_etc_readable_under_umask_077);
        tcase_add_test(tc, test_exec_failures);
        tcase_add_test(tc, test_setup_failure_is_error);
        tcase_add_test(tc, test_cgroup_failure_after_clone);
        tcase_add_test(tc, test_cgroup_stale_swept);
        tcase_add_test(tc, test_affinity_kept);
        suite_add_tcase(s, tc);

        tc = tcase_create("isolation");
        tcase_add_test(tc, test_tmp_and_home_private);
        tcase_add_test(tc, test_host_secrets_absent);
        tcase_add_test(tc, test_proc_shows_only_the_run);
        tcase_add_test(tc, test_proc_kernel_parts_hidden);
        tcase_add_test(tc, test_kill_reaches_no_host_process);
        tcase_add_test(tc, test_environment_from_scratch);
        tcase_add_loop_test(tc, test_no_network, 0, _NETNS_WAYS);
        tcase_add_test(tc, test_network);
        tcase_add_loop_test(tc, test_network_namespace_own, 0, _NETNS_WAYS);
        tcase_add_loop_test(tc, test_network_namespace_failure, 0, _NETNS_WAYS);
        /* Each with the helper forked (as skilld's worker makes it) and sharing our memory (skillctl). */
        tcase_add_loop_test(tc, test_ahead_spent, 0, 2);
        tcase_add_loop_test(tc, test_ahead_late_helper, 0, 2);
        tcase_add_loop_test(tc, test_host_sockets_unreachable, 0, _NETNS_WAYS);
        tcase_add_test(tc, test_identity_unprivileged);
        tcase_add_test(tc, test_read_only_skill_and_system);
        tcase_add_test(tc, test_read_only_dirs);
        tcase_add_test(tc, test_uids_differ_between_concurrent_runs);
        tcase_add_test(tc, test_uid_named_by_user_database);
        tcase_add_test(tc, test_unprivileged_user_namespace);
        suite_add_tcase(s, tc);

        tc = tcase_create("seccomp");
        tcase_add_test(tc, test_seccomp_refusals);
        tcase_add_test(tc, test_seccomp_refusals_recorded);
        tcase_add_loop_test(tc, test_seccomp_refusals_bounded, 0, ELEMENTSOF(test_backends));
        tcase_add_test(tc, test_seccomp_tiocsti);
        tcase_add_test(tc, test_seccomp_foreign_abi_killed);
        suite_add_tcase(s, tc);

        tc = tcase_create("limits");
        tcase_add_loop_test(tc, test_memory_limit, 0, ELEMENTSOF(test_backends));
        tcase_add_loop_test(tc, test_fork_bomb_contained, 0, ELEMENTSOF(test_backends));
        tcase_add_test(tc, test_memory_rlimit_spares_the_engine);
        tcase_add_test(tc, test_busy_loop_timeout);
        tcase_add_test(tc, test_daemon_is_killed_at_end);
        tcase_add_test(tc, test_stdout_truncated_at_cap);
        tcase_add_test(tc, test_out_limit);
        tcase_add_test(tc, test_artifacts_not_followed);
        tcase_add_test(tc, test_artifact_cap);
        tcase_add_test(tc, test_output_json_symlink_refused);
        tcase_add_test(tc, test_cancel);
        suite_add_tcase(s, tc);

        return s;
}

int main(void) {
        return test_run_suite_as_root(sandbox_suite, "sandbox tests");
}
