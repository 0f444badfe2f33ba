/* Unit tests of the engine's pure parts: request checks (environment denylist, file names,
 * limits), status names, the exit-status mapping, the result JSON and the seccomp filter's
 * construction. No namespaces, any user. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "engine.h"
#include "sandbox-internal.h"
#include "test-util.h"

START_TEST(test_env_check) {
        static const char *const ok[] = { "FOO=bar", "_x=", "a1=2=3", "LANG=de_DE.UTF-8", "TERM=xterm",
                                          "MY_SKILL_DIR=x", "NODE_ENV=production", "PYTHONUNBUFFERED=1" };
        static const char *const denied[] = {
                "LD_PRELOAD=/x.so", "LD_LIBRARY_PATH=/x", "LD_=1", "PYTHONPATH=/x", "PYTHONHOME=/x",
                "NODE_OPTIONS=--require=/x", "NODE_PATH=/x", "PATH=/x", "HOME=/x", "SKILL_DIR=/x",
                "SKILL_=1", "SANDBOX_OUTPUT=/etc/passwd", "SANDBOX_INPUT={}",
        };
        static const char *const invalid[] = { "=x", "1A=x", "A-B=x", "A B=x", "NOEQUALS", "É=1", "A.B=1" };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++)
                ck_assert_msg(sandbox_env_check(ok[i], NULL) == 0, "%s refused", ok[i]);
        for (size_t i = 0; i < ELEMENTSOF(denied); i++) {
                _cleanup_free_ char *error = NULL;

                ck_assert_int_eq(sandbox_env_check(denied[i], &error), -EPERM);
                ck_assert_ptr_nonnull(strstr(error, "may not be set"));
        }
        for (size_t i = 0; i < ELEMENTSOF(invalid); i++)
                ck_assert_msg(sandbox_env_check(invalid[i], NULL) == -EINVAL, "%s accepted", invalid[i]);
}
END_TEST

START_TEST(test_env_build) {
        char *extra[] = { (char *) "TERM=xterm", (char *) "GREETING=hi", NULL };
        char *dup[] = { (char *) "A=1", (char *) "A=2", NULL };
        _cleanup_strv_free_ char **env = NULL, **env2 = NULL;
        _cleanup_free_ char *big = NULL;

        ck_assert_int_eq(sandbox_env_check_all(extra, NULL), 0);
        ck_assert_int_eq(sandbox_env_check_all(dup, NULL), -EINVAL);

        ck_assert_int_eq(sandbox_env_build(extra, NULL, "{\"a\":1}", &env), 0);
        ck_assert(strv_contains(env, "TERM=xterm"));
        ck_assert(!strv_contains(env, "TERM=dumb"));
        ck_assert(strv_contains(env, "GREETING=hi"));
        ck_assert(strv_contains(env, "HOME=/home/skill"));
        ck_assert(strv_contains(env, "LANG=C.UTF-8"));
        ck_assert(strv_contains(env, "SANDBOX_INPUT={\"a\":1}"));
        ck_assert(strv_contains(env, "SKILL_INPUT_FILE=" SANDBOX_INPUT_PATH));
        ck_assert(strv_contains(env, "SANDBOX_OUTPUT=/out/output.json"));
        ck_assert(strv_contains(env, "SANDBOX_FILES_DIR=/out/files/"));
        ck_assert(strv_contains(env, "SKILL_DIR=/skill"));
        ck_assert(strv_contains(env, "SKILL_ASSETS_DIR=/skill/assets"));
        /* The skill root, for skills' own imports (from scripts.helper import ...). */
        ck_assert(strv_contains(env, "PYTHONPATH=/skill"));
        ck_assert(strv_contains(env, "NODE_PATH=/skill"));
        ck_assert_uint_eq(strv_length(env), 13);

        /* 128 KiB and more: the input is in the file and on stdin only. */
        big = malloc(SANDBOX_INPUT_ENV_MAX + 1);
        ck_assert_ptr_nonnull(big);
        memset(big, ' ', SANDBOX_INPUT_ENV_MAX);
        big[0] = '1';
        big[SANDBOX_INPUT_ENV_MAX] = '\0';
        ck_assert_int_eq(sandbox_env_build(NULL, NULL, big, &env2), 0);
        STRV_FOREACH(e, env2)
                ck_assert(!startswith(*e, "SANDBOX_INPUT="));
        ck_assert(strv_contains(env2, "SKILL_INPUT_FILE=" SANDBOX_INPUT_PATH));
}
END_TEST

START_TEST(test_command_check) {
        char *ok[] = { (char *) "python3", (char *) "-m", (char *) "scripts.tool", NULL };
        char *empty_name[] = { (char *) "", NULL };
        char *none[] = { NULL };
        _cleanup_free_ char *error = NULL;

        ck_assert_int_eq(sandbox_command_check(ok, NULL, NULL), 0);
        ck_assert_int_eq(sandbox_command_check(ok, "/work", NULL), 0);
        ck_assert_int_eq(sandbox_command_check(ok, "/skill", NULL), 0);
        ck_assert_int_eq(sandbox_command_check(ok, "/etc", &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "/work or /skill"));
        ck_assert_int_eq(sandbox_command_check(ok, "/skill/..", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_command_check(none, NULL, NULL), -EINVAL);
        ck_assert_int_eq(sandbox_command_check(NULL, NULL, NULL), -EINVAL);
        ck_assert_int_eq(sandbox_command_check(empty_name, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(test_file_names) {
        ck_assert_int_eq(sandbox_file_name_check("data.csv", NULL), 0);
        ck_assert_int_eq(sandbox_file_name_check("A_b-1.txt", NULL), 0);
        ck_assert_int_eq(sandbox_file_name_check("", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_file_name_check(".hidden", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_file_name_check("..", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_file_name_check("a/b", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_file_name_check("-rf", NULL), -EINVAL);
        ck_assert_int_eq(sandbox_file_name_check("a b", NULL), -EINVAL);
}
END_TEST

START_TEST(test_limits_check) {
        SandboxLimits l = SANDBOX_LIMITS_DEFAULT;

        ck_assert_int_eq(sandbox_limits_check(&l, NULL), 0);
        l.memory_max = 1024;
        ck_assert_int_eq(sandbox_limits_check(&l, NULL), -EINVAL);
        l = SANDBOX_LIMITS_DEFAULT;
        l.tasks_max = 1;
        ck_assert_int_eq(sandbox_limits_check(&l, NULL), -EINVAL);
        l = SANDBOX_LIMITS_DEFAULT;
        l.cpu_percent = 0;
        ck_assert_int_eq(sandbox_limits_check(&l, NULL), -EINVAL);
        l = SANDBOX_LIMITS_DEFAULT;
        l.tmpfs_size = 0; /* tmpfs would read this as "unlimited" */
        ck_assert_int_eq(sandbox_limits_check(&l, NULL), -EINVAL);
        l = SANDBOX_LIMITS_DEFAULT;
        l.timeout_usec = 0;
        ck_assert_int_eq(sandbox_limits_check(&l, NULL), -EINVAL);
}
END_TEST

START_TEST(test_request_refused) {
        RunRequest req = RUN_REQUEST_INIT;
        RunResult *res = NULL;
        _cleanup_free_ char *error = NULL;
        char *env[] = { (char *) "LD_PRELOAD=/x.so", NULL };

        req.skill_dir = "/nonexistent";
        req.output_dir = "/nonexistent/out";
        req.script = "../etc/passwd";
        ck_assert_int_eq(sandbox_run(&req, &res, &error), -EINVAL);
        ck_assert_ptr_null(res);
        ck_assert_ptr_nonnull(strstr(error, "stay inside the skill"));

        req.script = "scripts/main.py";
        req.env = env;
        free(error);
        error = NULL;
        ck_assert_int_eq(sandbox_run(&req, &res, &error), -EPERM);
        ck_assert_ptr_nonnull(strstr(error, "LD_PRELOAD"));

        /* The sandbox uid may never be root's. */
        req.env = NULL;
        req.uid = 0;
        free(error);
        error = NULL;
        ck_assert_int_eq(sandbox_run(&req, &res, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "neither root nor the caller"));
        req.uid = (uid_t) -1;

        req.input_json = "{not json";
        free(error);
        error = NULL;
        ck_assert_int_eq(sandbox_run(&req, &res, &error), -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "not valid JSON"));
        ck_assert_ptr_null(res);
}
END_TEST

START_TEST(test_status_names) {
        for (RunStatus s = 0; s < _RUN_STATUS_MAX; s++) {
                ck_assert_ptr_nonnull(run_status_to_string(s));
                ck_assert_int_eq(run_status_from_string(run_status_to_string(s)), s);
        }
        ck_assert_str_eq(run_status_to_string(RUN_STATUS_OUTPUT_LIMIT), "output-limit");
        ck_assert_int_eq(run_status_from_string("bogus"), _RUN_STATUS_INVALID);
        ck_assert_ptr_null(run_status_to_string(_RUN_STATUS_MAX));
}
END_TEST

START_TEST(test_layer_names) {
        ck_assert_str_eq(sandbox_layer_to_string(SANDBOX_LAYER_CGROUP), "cgroup");
        ck_assert_str_eq(sandbox_layer_to_string(SANDBOX_LAYER_NETNS), "netns");
        ck_assert_ptr_null(sandbox_layer_to_string(SANDBOX_LAYER_CGROUP | SANDBOX_LAYER_NETNS));
        for (unsigned bit = 1; bit & _SANDBOX_LAYER_ALL; bit <<= 1)
                ck_assert_ptr_nonnull(sandbox_layer_to_string(bit));
}
END_TEST

START_TEST(test_exit_codes) {
        RunResult r = { .exit_code = -1 };

        r.status = RUN_STATUS_SUCCEEDED;
        r.exit_code = 0;
        ck_assert_int_eq(run_result_exit_code(&r), 0);
        r.status = RUN_STATUS_FAILED;
        r.exit_code = 42;
        ck_assert_int_eq(run_result_exit_code(&r), 42);
        r.status = RUN_STATUS_TIMEOUT;
        ck_assert_int_eq(run_result_exit_code(&r), 124);
        r.status = RUN_STATUS_OOM;
        ck_assert_int_eq(run_result_exit_code(&r), 137);
        r.status = RUN_STATUS_SIGNAL;
        r.exit_code = -1;
        r.signal = SIGTERM;
        ck_assert_int_eq(run_result_exit_code(&r), 128 + SIGTERM);
        r.status = RUN_STATUS_ERROR;
        r.signal = 0;
        ck_assert_int_eq(run_result_exit_code(&r), 125);
        r.exec_failed = true;
        r.error_errno = ENOENT;
        ck_assert_int_eq(run_result_exit_code(&r), 127);
        r.error_errno = EACCES;
        ck_assert_int_eq(run_result_exit_code(&r), 126);
        /* output-limit after exit 0 must not look like success */
        r = (RunResult) { .status = RUN_STATUS_OUTPUT_LIMIT, .exit_code = 0 };
        ck_assert_int_ne(run_result_exit_code(&r), 0);
}
END_TEST

START_TEST(test_result_json) {
        _cleanup_(run_result_freep) RunResult *r = calloc(1, sizeof(RunResult));
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *reparsed = NULL;
        _cleanup_free_ char *text = NULL;
        char *argv[] = { (char *) "/skill/run.sh", (char *) "x", NULL };

        ck_assert_ptr_nonnull(r);
        r->run_id = strdup("0123456789abcdef0123456789abcdef");
        r->argv = strv_copy(argv);
        r->status = RUN_STATUS_SIGNAL;
        r->exit_code = -1;
        r->signal = SIGKILL;
        r->uid = 2146435073;
        r->limits = SANDBOX_LIMITS_DEFAULT;
        r->backend = "rlimit";
        r->limits_enforced = SANDBOX_LIMIT_MEMORY | SANDBOX_LIMIT_TIMEOUT;
        r->layers_missing = SANDBOX_LAYER_CGROUP | SANDBOX_LAYER_UTSNS;
        r->usage = (RunUsage) { 1, 2, 3, RUN_USAGE_UNKNOWN, RUN_USAGE_UNKNOWN };
        r->started_at = 1795306353116213ULL;
        r->stdout_stream.data = strdup("bad \xff utf-8");
        r->stdout_stream.size = strlen(r->stdout_stream.data);
        r->stdout_stream.total = 1000;
        r->stdout_stream.truncated = true;

        ck_assert_int_eq(run_result_to_json(r, &j), 0);
        text = cJSON_PrintUnformatted(j);
        ck_assert_ptr_nonnull(text);
        /* Exact integers, not 15-digit doubles. */
        ck_assert_ptr_nonnull(strstr(text, "\"started_at_usec\":1795306353116213"));
        ck_assert_ptr_nonnull(strstr(text, "\"status\":\"signal\""));
        ck_assert_ptr_nonnull(strstr(text, "\"signal_name\":\"KILL\""));
        ck_assert_ptr_nonnull(strstr(text, "\"memory_peak\":null"));
        ck_assert_ptr_nonnull(strstr(text, "\"enforced\":[\"memory\",\"timeout\"]"));
        ck_assert_ptr_nonnull(strstr(text, "\"layers_missing\":[\"cgroup\",\"utsns\"]"));
        ck_assert_ptr_nonnull(strstr(text, "\"started_at\":\"2026-11-22T00:12:33.116213Z\""));
        /* Invalid UTF-8 never goes into the JSON text. */
        ck_assert_ptr_nonnull(strstr(text,
                                     "\"bytes\":1000,\"kept\":11,\"truncated\":true,"
                                     "\"path\":null,\"text\":null"));
        reparsed = cJSON_Parse(text);
        ck_assert_ptr_nonnull(reparsed);
}
END_TEST

START_TEST(test_seccomp_filter_builds) {
        /* Within the kernel's limit of 4096 BPF instructions, which the socket allowlist's many
         * rules must not approach; both variants (refusals as errno, refusals notified). */
        if (!sandbox_seccomp_available())
                return;
        for (int notify = 0; notify <= (int) sandbox_seccomp_notify_available(); notify++) {
                _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
                _cleanup_close_ int fd = -EBADF;
                struct stat st;

                ck_assert_int_eq(sandbox_seccomp_new(notify, &ctx, NULL), 0);
                ck_assert_ptr_nonnull(ctx);
                fd = memfd_create("bpf", MFD_CLOEXEC);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
                ck_assert_int_eq(fstat(fd, &st), 0);
                ck_assert_int_gt(st.st_size, 0);
                ck_assert_int_le(st.st_size / 8, 2048);
        }
}
END_TEST

static Suite *unit_suite(void) {
        Suite *s = suite_create("sandbox-unit");
        TCase *tc = tcase_create("request");

        tcase_add_test(tc, test_env_check);
        tcase_add_test(tc, test_env_build);
        tcase_add_test(tc, test_file_names);
        tcase_add_test(tc, test_command_check);
        tcase_add_test(tc, test_limits_check);
        tcase_add_test(tc, test_request_refused);
        suite_add_tcase(s, tc);

        tc = tcase_create("result");
        tcase_add_test(tc, test_status_names);
        tcase_add_test(tc, test_layer_names);
        tcase_add_test(tc, test_exit_codes);
        tcase_add_test(tc, test_result_json);
        tcase_add_test(tc, test_seccomp_filter_builds);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(unit_suite());
}
