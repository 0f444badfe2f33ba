/* Tests for worker.c: a run's worker, forked as the service forks it (without systemd scopes),
 * stores a result only for a run that really ended. A Cancel (a byte in the cancel pipe) stores
 * "canceled"; the end of the service (its end of the pipe closed with nothing in it, which is how
 * the pipe looks when the service was killed, before the kernel sends the worker its
 * PR_SET_PDEATHSIG) stores nothing, so that the next start records the run as interrupted. Needs
 * root (the sandbox). */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "test-util.h"
#include "worker.h"

typedef struct WorkerRun {
        TestDir skill;
        TestDir record;
        int skill_fd;
        int result_fd;
        int cancel[2];
        pid_t pid;
} WorkerRun;

static void worker_run_done(WorkerRun *w) {
        if (w->pid > 0) {
                (void) kill(w->pid, SIGKILL);
                (void) waitpid(w->pid, NULL, 0);
        }
        w->skill_fd = safe_close(w->skill_fd);
        w->result_fd = safe_close(w->result_fd);
        w->cancel[0] = safe_close(w->cancel[0]);
        w->cancel[1] = safe_close(w->cancel[1]);
        test_dir_done(&w->record);
        test_dir_done(&w->skill);
}

/* A run of a skill that says it started and then sleeps far longer than the test waits. */
static void worker_run_start(WorkerRun *w) {
        RunRequest req = RUN_REQUEST_INIT;
        WorkerArgs args;

        *w = (WorkerRun) { .skill = test_dir_new(), .record = test_dir_new(), .skill_fd = -EBADF,
                           .result_fd = -EBADF, .cancel = { -EBADF, -EBADF } };
        /* The run's uid reads the skill. */
        ck_assert_int_eq(chmod(w->skill.path, 0755), 0);
        test_write_file(w->skill.fd, "scripts/main.sh", "#!/bin/sh\necho started\nexec sleep 120\n", 0755);
        ck_assert_int_eq(fchmodat(w->skill.fd, "scripts", 0755, 0), 0);
        w->skill_fd = open(w->skill.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(w->skill_fd, 0);
        w->result_fd = memfd_create("result", MFD_CLOEXEC);
        ck_assert_int_ge(w->result_fd, 0);
        /* As the manager makes it. */
        ck_assert_int_eq(pipe2(w->cancel, O_CLOEXEC | O_NONBLOCK), 0);

        req.run_id = "00000000000000000000000000000001";
        req.skill_dir = w->skill.path;
        req.skill_dir_fd = w->skill_fd;
        req.skill_name = "sleeper";
        req.script = "scripts/main.sh";
        req.cancel_fd = w->cancel[0];
        req.allow_missing = SANDBOX_LAYER_CGROUP;
        req.limits.timeout_usec = 120ULL * 1000 * 1000;
        args = (WorkerArgs) {
                .request = req,
                .run_dir = w->record.path,
                .client_stdout_fd = -EBADF,
                .client_stderr_fd = -EBADF,
                .result_fd = w->result_fd,
        };
        ck_assert_int_eq(worker_spawn(&args, &w->pid), 0);
}

/* Until the skill said it started: the sandbox is up and the engine waits on it. */
static void wait_started(WorkerRun *w) {
        for (unsigned i = 0; i < 6000; i++) {
                _cleanup_free_ char *text = NULL;

                if (read_full_file_at(w->record.fd, "stdout.log", 4096, false, &text, NULL) >= 0 &&
                    strstr(text, "started"))
                        return;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        ck_abort_msg("the skill did not start within 60 s");
}

static int wait_worker(WorkerRun *w) {
        int status;

        ck_assert_int_eq(waitpid(w->pid, &status, 0), w->pid);
        w->pid = 0;
        ck_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

START_TEST(test_cancel_stores_canceled) {
        _cleanup_(worker_run_done) WorkerRun w;
        _cleanup_free_ char *result = NULL, *sent = NULL;

        worker_run_start(&w);
        wait_started(&w);
        ck_assert_int_eq(write(w.cancel[1], "c", 1), 1);
        w.cancel[1] = safe_close(w.cancel[1]);
        ck_assert_int_eq(wait_worker(&w), EXIT_SUCCESS);

        ck_assert_int_eq(read_full_file_at(w.record.fd, "result.json", 65536, false, &result, NULL), 0);
        ck_assert_msg(strstr(result, "\"status\":\"canceled\""), "%s", result);
        /* The service's copy says the same. */
        ck_assert_int_eq(lseek(w.result_fd, 0, SEEK_SET), 0);
        ck_assert_int_eq(read_full_fd(w.result_fd, 65536, &sent, NULL), 0);
        ck_assert_str_eq(sent, result);
}
END_TEST

START_TEST(test_service_end_stores_nothing) {
        _cleanup_(worker_run_done) WorkerRun w;
        struct stat st;

        worker_run_start(&w);
        wait_started(&w);
        /* The service's fds closed, no byte: what a SIGKILLed service leaves. */
        w.cancel[1] = safe_close(w.cancel[1]);
        ck_assert_int_eq(wait_worker(&w), EXIT_FAILURE);

        ck_assert_int_eq(fstatat(w.record.fd, "result.json", &st, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(fstat(w.result_fd, &st), 0);
        ck_assert_int_eq(st.st_size, 0);
}
END_TEST

static Suite *worker_suite(void) {
        Suite *s = suite_create("worker");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_cancel_stores_canceled);
        tcase_add_test(tc, test_service_end_stores_nothing);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite_as_root(worker_suite, "the worker's tests (the sandbox)");
}
