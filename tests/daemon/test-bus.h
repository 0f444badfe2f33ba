/* A private dbus-daemon per test, plus helpers to drive an sd-event loop until something happened.
 * The bus allows everything and everyone (an ordinary user connects too), so tests can play
 * daemon, fake polkit and unprivileged client on one bus. */
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "test-util.h"

#define TEST_BUS_TIMEOUT_USEC (30ULL * 1000000)

typedef struct TestBus {
        TestDir dir;
        pid_t pid;
        char *address;
} TestBus;

static inline bool test_bus_available(void) {
        return access("/usr/bin/dbus-daemon", X_OK) == 0 || access("/bin/dbus-daemon", X_OK) == 0;
}

static inline uint64_t test_now_usec(void) {
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* The allow-all policy most tests want. */
#define TEST_BUS_POLICY_ALLOW_ALL                                       \
        "  <policy context=\"default\">\n"                              \
        "    <allow user=\"*\"/>\n"                                     \
        "    <allow own=\"*\"/>\n"                                      \
        "    <allow send_destination=\"*\"/>\n"                         \
        "    <allow receive_sender=\"*\"/>\n"                           \
        "  </policy>\n"

/* Starts a bus whose configuration holds policy (policy and include elements). */
static inline void test_bus_start_with(TestBus *b, const char *policy) {
        _cleanup_free_ char *conf = NULL, *conf_path = NULL;
        _cleanup_close_pair_ int pipe_fds[2] = { -EBADF, -EBADF };
        char buf[512] = {};
        size_t n = 0;

        b->dir = test_dir_new();
        /* Ordinary users (the clients) must reach the socket. */
        ck_assert_int_eq(chmod(b->dir.path, 0755), 0);

        conf = strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig>\n"
                "  <type>session</type>\n"
                "  <listen>unix:tmpdir=%s</listen>\n"
                "  <auth>EXTERNAL</auth>\n"
                "%s"
                "</busconfig>\n", b->dir.path, policy);
        ck_assert_ptr_nonnull(conf);
        test_write_file(b->dir.fd, "bus.conf", conf, 0644);
        conf_path = strdup_printf("--config-file=%s/bus.conf", b->dir.path);

        ck_assert_int_eq(pipe2(pipe_fds, O_CLOEXEC), 0);
        b->pid = fork();
        ck_assert_int_ge(b->pid, 0);
        if (b->pid == 0) {
                /* dup2() clears O_CLOEXEC on the copy, so the daemon inherits exactly fd 3. Its
                 * stderr goes away: as root in a container it complains about rlimits. */
                int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null_fd < 0 || dup2(pipe_fds[1], 3) < 0 || dup2(null_fd, STDERR_FILENO) < 0)
                        _exit(127);
                execlp("dbus-daemon", "dbus-daemon", conf_path, "--nofork", "--nopidfile",
                       "--print-address=3", (char *) NULL);
                _exit(127);
        }
        pipe_fds[1] = safe_close(pipe_fds[1]);

        while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n)) {
                struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };
                ssize_t k;

                ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
                k = read(pipe_fds[0], buf + n, sizeof(buf) - 1 - n);
                ck_assert_int_gt(k, 0);
                n += k;
        }
        buf[strcspn(buf, "\n")] = 0;
        b->address = strdup(buf);
        ck_assert_ptr_nonnull(b->address);
}

static inline void test_bus_start(TestBus *b) {
        test_bus_start_with(b, TEST_BUS_POLICY_ALLOW_ALL);
}

static inline void test_bus_stop(TestBus *b) {
        if (b->pid > 0) {
                (void) kill(b->pid, SIGTERM);
                (void) waitpid(b->pid, NULL, 0);
                b->pid = 0;
        }
        free(b->address);
        b->address = NULL;
        test_dir_done(&b->dir);
}

/* A new connection to the test bus, optionally attached to an event loop. */
static inline sd_bus *test_bus_connect(const TestBus *b, sd_event *e) {
        sd_bus *bus = NULL;

        ck_assert_int_eq(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_address(bus, b->address), 0);
        ck_assert_int_eq(sd_bus_set_bus_client(bus, true), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        if (e)
                ck_assert_int_ge(sd_bus_attach_event(bus, e, SD_EVENT_PRIORITY_NORMAL), 0);
        return bus;
}

/* Runs the loop until cond(userdata) holds; a hang (not slowness) fails the test. */
static inline void test_event_run_until(sd_event *e, bool (*cond)(void *userdata), void *userdata) {
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;

        while (!cond(userdata)) {
                ck_assert_msg(test_now_usec() < deadline, "event loop condition never became true");
                ck_assert_int_ge(sd_event_run(e, 100000), 0);
        }
}

/* main() of a suite that needs only a dbus-daemon: skipped (77) without one. */
static inline int test_run_bus_suite(Suite *(*make_suite)(void)) {
        if (!test_bus_available()) {
                fprintf(stderr, "dbus-daemon not installed, skipping\n");
                return 77;
        }
        return test_run_suite(make_suite());
}

/* Runs a few loop iterations that have nothing left to wait for (idle sources included). */
static inline void test_event_settle(sd_event *e) {
        for (int i = 0; i < 20; i++)
                ck_assert_int_ge(sd_event_run(e, 10000), 0);
}
