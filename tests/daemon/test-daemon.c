/* The skilld service end to end on a private bus, without systemd: the real skilld binary, a fake
 * polkit in a process of its own (yes to io.skilld.run and io.skilld.run-unlisted, no to everything
 * else), and clients as root and as nobody. Runs go through the real sandbox engine (the service
 * uses systemd scopes only where systemd runs, as in the VM), so this needs root: suite 'sandbox'.
 * The VM suite (tests/vm/tests.d/5*-daemon-*.sh) proves the rest against systemd and polkitd.
 *
 * Two cases: "service" asserts what the service decides (who may run, see and list what, the
 * signals, the records runs leave, validation, idle exit) whatever the runs' outcome, and "runs"
 * that runs really succeed, what the service maps, and what it does without libarchive.
 * SKILLD_TEST_WRAPPER, words split at spaces, goes before the skilld command line: the suite
 * 'memcheck' runs the "service" case with skilld under Valgrind (tests/valgrind/README.md says why
 * not the "runs" case). Every instance must exit 0 on SIGTERM, and Valgrind's log of it, in the
 * file named by SKILLD_TEST_MEMCHECK_LOG (set for each instance), must count no error. */
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "loader.h"
#include "test-bus.h"

#define NOBODY 65534
/* The size of the artifact the test skill writes: more than the 4 MiB ReadArtifact() returns per
 * call. */
#define BIG_ARTIFACT_SIZE 4500000
#define READ_CAP (4U * 1024 * 1024)

static TestBus test_bus;
static TestDir dir;
static pid_t polkit_pid, daemon_pid;
static char *skill_path;
/* When set, daemon_spawn() starts skilld in a mount namespace of its own with /dev/null bound over
 * this file: a host where the library is missing. */
static const char *hidden_library;
/* The log the wrapper may write of the running instance (its --log-file=%q{...}). */
static char *daemon_log;

/* ---- The fake polkit, in its own process ---- */

static int fake_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *kind, *action;
        bool yes;
        int r;

        r = sd_bus_message_enter_container(m, 'r', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &kind);
        if (r >= 0)
                r = sd_bus_message_skip(m, "a{sv}");
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_read(m, "s", &action);
        if (r < 0)
                return r;
        yes = streq(action, "io.skilld.run") || streq(action, "io.skilld.run-unlisted");
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "(bba{ss})", yes, false, 0);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", fake_check, 0),
        SD_BUS_VTABLE_END
};

_noreturn_ static void fake_polkit_main(void) {
        sd_event *e = NULL;
        sd_bus *bus;

        if (sd_event_new(&e) < 0)
                _exit(1);
        bus = test_bus_connect(&test_bus, e);
        if (sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                     "org.freedesktop.PolicyKit1.Authority", fake_vtable, NULL) < 0 ||
            sd_bus_request_name(bus, "org.freedesktop.PolicyKit1", 0) < 0)
                _exit(1);
        (void) sd_event_loop(e);
        _exit(0);
}

/* ---- The service ---- */

static bool name_owned(sd_bus *bus, const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        return sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s", name) >= 0;
}

static void wait_for_name(const char *name) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;

        while (!name_owned(bus, name)) {
                ck_assert_msg(test_now_usec() < deadline, "%s never appeared on the bus", name);
                (void) usleep(20000);
        }
}

static pid_t daemon_spawn(const char *policy, bool idle_exit) {
        _cleanup_free_ char *exe = NULL, *addr = NULL, *state = NULL, *runtime = NULL, *pol = NULL;
        static unsigned spawned;
        pid_t pid;

        exe = strdup_printf("%s/skilld/skilld", getenv("SKILLD_BUILD_ROOT"));
        addr = strdup_printf("--bus-address=%s", test_bus.address);
        state = strdup_printf("--state-dir=%s/state", dir.path);
        runtime = strdup_printf("--runtime-dir=%s/run", dir.path);
        pol = strdup_printf("--policy=%s/policy.yaml", dir.path);
        test_write_file(dir.fd, "policy.yaml", policy, 0644);
        free(daemon_log);
        daemon_log = strdup_printf("%s/wrapper-%u.log", dir.path, ++spawned);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char *argv[64], *wrapper = strdup(getenv("SKILLD_TEST_WRAPPER") ?: ""), *p = NULL;
                size_t n = 0;

                if (!wrapper || setenv("SKILLD_TEST_MEMCHECK_LOG", daemon_log, 1) < 0)
                        _exit(127);
                for (char *w = strtok_r(wrapper, " ", &p); w && n < ELEMENTSOF(argv) - 7;
                     w = strtok_r(NULL, " ", &p))
                        argv[n++] = w;
                if (hidden_library &&
                    (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                     mount("/dev/null", hidden_library, NULL, MS_BIND, NULL) < 0))
                        _exit(126);
                argv[n++] = exe;
                argv[n++] = addr;
                argv[n++] = state;
                argv[n++] = runtime;
                argv[n++] = pol;
                argv[n++] = (char *) (idle_exit ? "--verbose" : "--no-idle-exit");
                argv[n] = NULL;
                execv(argv[0], argv);
                _exit(127);
        }
        wait_for_name("io.skilld.Skilld1");
        return pid;
}

/* An instance that ended must have exited 0, and Valgrind, if it ran the instance, must have
 * found no error in it. Valgrind's verdict is read from its log of the service, not from an exit
 * code: --error-exitcode would also change the exit status of every process the service forks
 * without exec (they run on under Valgrind), and the service rightly takes an inspection that
 * exited 99 for one that failed. Such a child sees the service's memory as it was at the fork, a
 * block in the hands of another thread that the fork did not copy included, and a leak check at
 * its _exit() counts that block as lost. */
static void daemon_ended(pid_t pid) {
        _cleanup_free_ char *log = NULL;
        _cleanup_close_ int fd = -EBADF;
        int status = 0;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "skilld ended with status 0x%x",
                      (unsigned) status);
        fd = open(daemon_log, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return;
        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(read_full_fd(fd, 64U * 1024 * 1024, &log, NULL), 0);
        if (!strstr(log, "ERROR SUMMARY: 0 errors")) {
                /* In full: the check's message is cut short. */
                fprintf(stderr, "%s\n", log);
                ck_abort_msg("the wrapper found errors in skilld: its log is above");
        }
}

static void daemon_stop(pid_t pid) {
        (void) kill(pid, SIGTERM);
        daemon_ended(pid);
}

/* Packs a one-script skill called name into DIR/name.skill. */
static char *write_skill(const char *name, const char *script) {
        _cleanup_free_ char *src_name = strdup_printf("src-%s", name), *md = NULL, *main_sh = NULL,
                            *out_name = strdup_printf("%s.skill", name);
        _cleanup_close_ int src = -EBADF, out = -EBADF;

        md = strdup_printf("%s/SKILL.md", src_name);
        main_sh = strdup_printf("%s/scripts/main.sh", src_name);
        ck_assert_ptr_nonnull(md);
        ck_assert_ptr_nonnull(main_sh);
        {
                _cleanup_free_ char *text = strdup_printf("---\nname: %s\ndescription: A test skill.\n"
                                                          "---\n\n# %s\n", name, name);

                test_write_file(dir.fd, md, text, 0644);
        }
        test_write_file(dir.fd, main_sh, script, 0755);
        src = openat(dir.fd, src_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        out = openat(dir.fd, out_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_int_ge(src, 0);
        ck_assert_int_ge(out, 0);
        ck_assert_int_eq(skill_package(src, name, out, NULL), 0);
        return strdup_printf("%s/%s", dir.path, out_name);
}

static void setup(void) {
        dir = test_dir_new();
        ck_assert_int_eq(chmod(dir.path, 0755), 0);
        /* With an artifact larger than one ReadArtifact() call returns. */
        skill_path = write_skill("greeter",
                                 "echo \"hello $1\"\n"
                                 "mkdir -p /out/files/sub\n"
                                 "head -c 4500000 /dev/zero | tr '\\0' a >/out/files/sub/big.txt\n");
        test_bus_start(&test_bus);
        polkit_pid = fork();
        ck_assert_int_ge(polkit_pid, 0);
        if (polkit_pid == 0)
                fake_polkit_main();
        wait_for_name("org.freedesktop.PolicyKit1");
        daemon_pid = daemon_spawn("service:\n  idle-timeout: 60s\n", false);
}

static void teardown(void) {
        if (daemon_pid > 0)
                daemon_stop(daemon_pid);
        (void) kill(polkit_pid, SIGKILL);
        (void) waitpid(polkit_pid, NULL, 0);
        test_bus_stop(&test_bus);
        free(skill_path);
        test_dir_done(&dir);
        free(daemon_log);
        daemon_log = NULL;
}

/* ---- Clients ---- */

/* Run(): returns the id, or the D-Bus error name (prefixed "!"). */
static char *call_run(sd_bus *bus, const char *skill, const char *input, const char *limit, uint64_t value,
                      const char *option) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int fd = open(skill, O_RDONLY | O_CLOEXEC);
        const char *id, *path;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                                        "io.skilld.Skilld1.Manager", "Run"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "hsass", fd, "", 1, "world", input), 0);
        ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
        if (limit) {
                ck_assert_int_ge(sd_bus_message_open_container(m, 'e', "sv"), 0);
                ck_assert_int_ge(sd_bus_message_append(m, "s", "limits"), 0);
                ck_assert_int_ge(sd_bus_message_append(m, "v", "a{st}", 1, limit, value), 0);
                ck_assert_int_ge(sd_bus_message_close_container(m), 0);
        }
        if (option)
                ck_assert_int_ge(sd_bus_message_append(m, "{sv}", option, "b", 1), 0);
        ck_assert_int_ge(sd_bus_message_close_container(m), 0);
        if (sd_bus_call(bus, m, 0, &e, &reply) < 0)
                return strdup_printf("!%s", e.name);
        ck_assert_int_ge(sd_bus_message_read(reply, "so", &id, &path), 0);
        ck_assert_ptr_nonnull(strstr(path, id));
        return strdup(id);
}

static char *run_property(sd_bus *bus, const char *id, const char *property) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        char *v = NULL;

        if (sd_bus_get_property_string(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run", property, &e,
                                       &v) < 0)
                return strdup_printf("!%s", e.name);
        return v;
}

static char *wait_final(sd_bus *bus, const char *id) {
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC * 4;

        for (;;) {
                _cleanup_free_ char *state = run_property(bus, id, "State");

                if (streq(state, "finished") || streq(state, "interrupted"))
                        return run_property(bus, id, "Status");
                ck_assert_msg(!startswith(state, "!"), "State of %s: %s", id, state);
                ck_assert_msg(test_now_usec() < deadline, "run %s never ended", id);
                (void) usleep(50000);
        }
}

/* Runs f as nobody in a child; its answer comes back as a line. */
static char *as_nobody(char *(*f)(sd_bus *bus, const char *arg), const char *arg) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        char buf[256] = {};
        pid_t pid;
        ssize_t n;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                _cleanup_free_ char *answer = NULL;
                sd_bus *bus;

                if (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(1);
                bus = test_bus_connect(&test_bus, NULL);
                answer = f(bus, arg);
                (void) loop_write(p[1], answer, strlen(answer));
                _exit(0);
        }
        p[1] = safe_close(p[1]);
        n = loop_read(p[0], buf, sizeof(buf) - 1);
        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        return strdup(buf);
}

static char *nobody_run(sd_bus *bus, const char *arg) {
        return call_run(bus, arg, "", NULL, 0, NULL);
}

static char *nobody_state(sd_bus *bus, const char *id) {
        return run_property(bus, id, "State");
}

static char *nobody_get_run(sd_bus *bus, const char *id) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        if (sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1", "io.skilld.Skilld1.Manager",
                               "GetRun", &e, &reply, "s", id) < 0)
                return strdup_printf("!%s", e.name);
        return strdup("found");
}

static char *nobody_list_all(sd_bus *bus, const char *unused) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        if (sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1", "io.skilld.Skilld1.Manager",
                               "ListAllRuns", &e, &reply, NULL) < 0)
                return strdup_printf("!%s", e.name);
        return strdup("listed");
}

/* ListRunsFiltered() with the options appended as sd_bus_message_appendv() takes them (types
 * NULL: none): the ids listed, separated by spaces, or "!" and the error's name and message.
 * ret_older and ret_next (optional) get the rest of the answer. */
static char *list_filtered(sd_bus *bus, uint64_t *ret_older, char **ret_next, const char *types, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *ids = strdup("");
        const char *id, *next;
        uint64_t older;
        va_list ap;
        int r;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                                        "io.skilld.Skilld1.Manager", "ListRunsFiltered"), 0);
        ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                ck_assert_int_ge(r, 0);
        }
        ck_assert_int_ge(sd_bus_message_close_container(m), 0);
        if (sd_bus_call(bus, m, 0, &e, &reply) < 0)
                return strdup_printf("!%s %s", e.name, e.message);
        ck_assert_int_ge(sd_bus_message_read(reply, "ts", &older, &next), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(sossussitt)"), 0);
        while ((r = sd_bus_message_enter_container(reply, 'r', "sossussitt")) > 0) {
                char *t;

                ck_assert_int_ge(sd_bus_message_read(reply, "s", &id), 0);
                t = strdup_printf("%s%s%s", ids, isempty(ids) ? "" : " ", id);
                free(ids);
                ids = t;
                ck_assert_int_ge(sd_bus_message_skip(reply, "ossussitt"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        /* A cursor exactly when something was left out. */
        ck_assert_int_eq(older > 0, !isempty(next));
        if (ret_older)
                *ret_older = older;
        if (ret_next)
                *ret_next = strdup(next);
        return TAKE_PTR(ids);
}

/* nobody's listing: arg "all" asks for everyone's, "bad-all" too with an unknown option, anything
 * else for their own. */
static char *nobody_list_filtered(sd_bus *bus, const char *arg) {
        _cleanup_free_ char *ids = NULL;
        uint64_t older = 0;

        if (streq(arg, "all"))
                ids = list_filtered(bus, &older, NULL, "{sv}", "all", "b", 1);
        else if (streq(arg, "bad-all"))
                ids = list_filtered(bus, &older, NULL, "{sv}{sv}", "all", "b", 1, "colour", "b", 1);
        else
                ids = list_filtered(bus, &older, NULL, NULL);
        if (startswith(ids, "!"))
                return strndup(ids, strcspn(ids, " "));
        return strdup_printf("listed %zu, %" PRIu64 " older", isempty(ids) ? 0 : (strlen(ids) + 1) / 33, older);
}

/* ReadLog() or ReadArtifact(): the bytes as a string (the test's data is text), or "!" and the
 * error name. */
static char *call_read(sd_bus *bus, const char *id, const char *member, const char *arg, uint64_t offset,
                       uint64_t max_bytes, size_t *ret_size) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        const void *data;
        size_t n;

        if (sd_bus_call_method(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run", member, &e, &reply,
                               "stt", arg, offset, max_bytes) < 0)
                return strdup_printf("!%s", e.name);
        ck_assert_int_ge(sd_bus_message_read_array(reply, 'y', &data, &n), 0);
        if (ret_size)
                *ret_size = n;
        return strndup(data ?: "", n);
}

static char *nobody_read_log(sd_bus *bus, const char *id) {
        return call_read(bus, id, "ReadLog", "stdout", 0, 100, NULL);
}

/* ---- Tests ---- */

typedef struct Seen {
        char *finished_status;          /* RunFinished */
        char *changed_state;            /* the last State in PropertiesChanged */
} Seen;

static int on_run_finished(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Seen *seen = userdata;
        const char *id, *path, *status;
        int32_t code;

        ck_assert_int_ge(sd_bus_message_read(m, "sosi", &id, &path, &status, &code), 0);
        free(seen->finished_status);
        seen->finished_status = strdup_printf("%s %s %" PRIi32, id, status, code);
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Seen *seen = userdata;
        const char *iface, *name, *state;

        ck_assert_int_ge(sd_bus_message_read(m, "s", &iface), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                if (streq(name, "State")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "s", &state), 0);
                        free(seen->changed_state);
                        seen->changed_state = strdup(state);
                } else
                        ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        return 0;
}

/* Processes what the bus has until the signals of a run have come. */
static void wait_signals(sd_bus *bus, Seen *seen) {
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;

        while (!seen->finished_status || !streq_ptr(seen->changed_state, "finished")) {
                ck_assert_msg(test_now_usec() < deadline, "no RunFinished or PropertiesChanged");
                if (sd_bus_process(bus, NULL) == 0)
                        ck_assert_int_ge(sd_bus_wait(bus, 100000), 0);
        }
}

/* Checks an answer and frees it. */
static void expect(char *got, const char *want) {
        _cleanup_free_ char *g = got;

        ck_assert_str_eq(g, want);
}

/* Runs the skill as root until its end has been announced, and checks that the signals agree with
 * the run's properties; returns the id, and in *ret_outcome its Status and ExitCode. */
static char *run_to_end(sd_bus *bus, char **ret_outcome) {
        _cleanup_free_ char *id = NULL, *status = NULL, *path = NULL, *want = NULL, *result = NULL;
        _cleanup_free_ char *result_status = NULL;
        Seen seen = {};
        int32_t code;

        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                             "io.skilld.Skilld1.Manager", "RunFinished", on_run_finished,
                                             &seen), 0);
        ck_assert_int_ge(sd_bus_match_signal(bus, NULL, "io.skilld.Skilld1", NULL,
                                             "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                             on_properties_changed, &seen), 0);
        id = call_run(bus, skill_path, "{\"x\": 1}", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        status = wait_final(bus, id);
        wait_signals(bus, &seen);

        path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        ck_assert_int_ge(sd_bus_get_property_trivial(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run",
                                                     "ExitCode", NULL, 'i', &code), 0);
        want = strdup_printf("%s %s %" PRIi32, id, status, code);
        ck_assert_str_eq(seen.finished_status, want);
        result = run_property(bus, id, "Result");
        result_status = strdup_printf("\"status\":\"%s\"", status);
        ck_assert_ptr_nonnull(strstr(result, result_status));
        free(seen.finished_status);
        free(seen.changed_state);
        *ret_outcome = strdup_printf("%s %" PRIi32, status, code);
        return TAKE_PTR(id);
}

START_TEST(test_ownership) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *id = NULL, *outcome = NULL, *theirs = NULL, *path = NULL;
        uint32_t owner;

        /* root's run: no polkit; its end is announced, and what is announced is what it shows. */
        id = run_to_end(bus, &outcome);

        /* nobody cannot see it, whichever way it asks: the same answer as for no run at all. */
        expect(as_nobody(nobody_state, id), "!io.skilld.Skilld1.Error.NoSuchRun");
        expect(as_nobody(nobody_get_run, id), "!io.skilld.Skilld1.Error.NoSuchRun");
        expect(as_nobody(nobody_get_run, "0123456789abcdef0123456789abcdef"),
               "!io.skilld.Skilld1.Error.NoSuchRun");
        expect(as_nobody(nobody_list_all, NULL), "!org.freedesktop.DBus.Error.AccessDenied");

        /* nobody's own run, authorized by (fake) polkit: theirs, and root sees it. */
        theirs = as_nobody(nobody_run, skill_path);
        ck_assert_msg(!startswith(theirs, "!"), "nobody's Run failed: %s", theirs);
        free(wait_final(bus, theirs));
        expect(as_nobody(nobody_state, theirs), "finished");
        path = strdup_printf("/io/skilld/Skilld1/run/%s", theirs);
        ck_assert_int_ge(sd_bus_get_property_trivial(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run",
                                                     "Owner", NULL, 'u', &owner), 0);
        ck_assert_uint_eq(owner, NOBODY);
}
END_TEST

/* Calls method on the run id with at most one string argument; returns "ok", "fd" when the reply
 * is a regular file's descriptor, or the D-Bus error name (prefixed "!"). */
static char *run_method(sd_bus *bus, const char *id, const char *method, const char *arg) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        struct stat st;
        int fd;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", path,
                                                        "io.skilld.Skilld1.Run", method), 0);
        if (arg)
                ck_assert_int_ge(sd_bus_message_append(m, "s", arg), 0);
        if (sd_bus_call(bus, m, 0, &e, &reply) < 0)
                return strdup_printf("!%s", e.name);
        if (sd_bus_message_read(reply, "h", &fd) <= 0)
                return strdup("ok");
        ck_assert_int_eq(fstat(fd, &st), 0);
        return strdup(S_ISREG(st.st_mode) ? "fd" : "not a file");
}

/* Whether ListRuns has the run id. */
static bool listed(sd_bus *bus, const char *id) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *listed_id;
        bool found = false;
        int r;

        ck_assert_int_ge(sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                            "io.skilld.Skilld1.Manager", "ListRuns", NULL, &reply, NULL), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(sossussitt)"), 0);
        while ((r = sd_bus_message_enter_container(reply, 'r', "sossussitt")) > 0) {
                ck_assert_int_ge(sd_bus_message_read(reply, "s", &listed_id), 0);
                found = found || streq(listed_id, id);
                ck_assert_int_ge(sd_bus_message_skip(reply, "ossussitt"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        }
        ck_assert_int_ge(r, 0);
        return found;
}

/* GetOutcome(): "STATE RESULT-STATUS LOGS N-ARTIFACTS" (the logs by name, each a regular file),
 * or the D-Bus error name (prefixed "!"). */
static char *get_outcome(sd_bus *bus, const char *id) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", id), *logs = strdup("");
        const char *state, *result, *name, *p, *sha, *status;
        uint64_t size;
        unsigned n = 0;
        int fd, r;

        if (sd_bus_call_method(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run", "GetOutcome", &e, &reply,
                               NULL) < 0)
                return strdup_printf("!%s", e.name);
        ck_assert_int_ge(sd_bus_message_read(reply, "ss", &state, &result), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{sh}"), 0);
        while ((r = sd_bus_message_read(reply, "{sh}", &name, &fd)) > 0) {
                struct stat st;
                char *t;

                ck_assert_int_eq(fstat(fd, &st), 0);
                ck_assert(S_ISREG(st.st_mode));
                t = strdup_printf("%s%s%s", logs, *logs ? "," : "", name);
                free(logs);
                logs = t;
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(sts)"), 0);
        while ((r = sd_bus_message_read(reply, "(sts)", &p, &size, &sha)) > 0)
                n++;
        ck_assert_int_ge(r, 0);
        status = strstr(result, "\"status\":\"");
        if (status)
                status += strlen("\"status\":\"");
        return strdup_printf("%s %.*s %s %u", state, status ? (int) strcspn(status, "\"") : 4,
                             status ?: "none", logs, n);
}

/* What an ended run leaves, whatever its outcome: listed, its logs readable, its artifacts
 * asked for by name, no cancelling it any more; then removed, and gone. */
START_TEST(test_run_records) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *id = NULL, *outcome = NULL;

        id = run_to_end(bus, &outcome);
        ck_assert(listed(bus, id));
        expect(run_method(bus, id, "OpenLog", "stdout"), "fd");
        expect(run_method(bus, id, "OpenLog", "stderr"), "fd");
        expect(run_method(bus, id, "OpenLog", "journal"), "!org.freedesktop.DBus.Error.InvalidArgs");
        expect(run_method(bus, id, "ListArtifacts", NULL), "ok");
        /* All of that in one reply; a greeter that succeeded left one artifact, sub/big.txt
         * (under Valgrind a run may end otherwise, and with its own outcome). */
        {
                _cleanup_free_ char *want = NULL, *got = NULL;

                want = strdup_printf("finished %.*s stdout,stderr%s", (int) strcspn(outcome, " "), outcome,
                                     startswith(outcome, "succeeded ") ? " 1" : "");
                got = get_outcome(bus, id);
                ck_assert_msg(startswith(got, want), "GetOutcome: %s, not %s", got, want);
        }
        expect(run_method(bus, id, "OpenArtifact", "nope"), "!io.skilld.Skilld1.Error.NoSuchArtifact");
        expect(run_method(bus, id, "OpenArtifact", "../result.json"),
               "!org.freedesktop.DBus.Error.InvalidArgs");
        expect(run_method(bus, id, "Cancel", NULL), "!io.skilld.Skilld1.Error.RunFinished");
        expect(run_method(bus, id, "Remove", NULL), "ok");
        ck_assert(!listed(bus, id));
        expect(run_method(bus, id, "OpenLog", "stdout"), "!io.skilld.Skilld1.Error.NoSuchRun");
        expect(get_outcome(bus, id), "!io.skilld.Skilld1.Error.NoSuchRun");
}
END_TEST

/* Puts the skill name, printing what, in place as InstallSkill does: a whole new folder renamed
 * into the installed directory, the one it replaces renamed away first. */
static void install_folder(const char *name, const char *what) {
        _cleanup_free_ char *staging = strdup_printf("state/skills/.#install-%s", what),
                            *md = strdup_printf("%s/SKILL.md", staging),
                            *main_sh = strdup_printf("%s/scripts/main.sh", staging),
                            *script = strdup_printf("echo %s\n", what),
                            *text = strdup_printf("---\nname: %s\ndescription: A test skill.\n---\n", name),
                            *target = strdup_printf("state/skills/%s", name),
                            *trash = strdup_printf("state/skills/.#trash-%s", what);

        test_write_file(dir.fd, md, text, 0644);
        test_write_file(dir.fd, main_sh, script, 0755);
        if (renameat(dir.fd, target, dir.fd, trash) < 0)
                ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(renameat(dir.fd, staging, dir.fd, target), 0);
}

/* RunInstalled() of name as root, to its end: "HASH OUTPUT" from its result. */
static char *run_installed(sd_bus *bus, const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *id = NULL, *status = NULL, *hash = NULL, *result = NULL;
        const char *rid, *path, *text;

        ck_assert_int_ge(sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                            "io.skilld.Skilld1.Manager", "RunInstalled", &e, &reply, "ssassa{sv}",
                                            name, "", 0, "", 0), 0);
        ck_assert_int_ge(sd_bus_message_read(reply, "so", &rid, &path), 0);
        id = strdup(rid);
        /* Answered once the record is in place, whole (synced before: test-store). */
        {
                _cleanup_free_ char *request = strdup_printf("state/runs/%s/request.json", id),
                                    *state = strdup_printf("state/runs/%s/state.json", id),
                                    *building = strdup_printf("state/runs/.#new-%s", id);
                struct stat st;

                ck_assert_int_eq(fstatat(dir.fd, request, &st, AT_SYMLINK_NOFOLLOW), 0);
                ck_assert_int_gt(st.st_size, 0);
                ck_assert_int_eq(fstatat(dir.fd, state, &st, AT_SYMLINK_NOFOLLOW), 0);
                ck_assert_int_lt(fstatat(dir.fd, building, &st, AT_SYMLINK_NOFOLLOW), 0);
        }
        status = wait_final(bus, id);
        ck_assert_str_eq(status, "succeeded");
        hash = run_property(bus, id, "SkillHash");
        result = run_property(bus, id, "Result");
        text = strstr(result, "\"text\":\"");
        ck_assert_ptr_nonnull(text);
        text += strlen("\"text\":\"");
        return strdup_printf("%s %.*s", hash, (int) strcspn(text, "\\\""), text);
}

/* The inspection of an installed folder is kept for the next run of it, and a folder renamed into
 * its place is inspected anew: each run records the hash of what it ran. */
START_TEST(test_installed_kept) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *first = NULL, *again = NULL, *replaced = NULL, *back = NULL;
        size_t n;

        install_folder("kept", "one");
        first = run_installed(bus, "kept");
        n = strcspn(first, " ");
        ck_assert_str_eq(first + n, " one");
        again = run_installed(bus, "kept");
        ck_assert_str_eq(again, first);

        install_folder("kept", "two");
        replaced = run_installed(bus, "kept");
        ck_assert_str_eq(replaced + strcspn(replaced, " "), " two");
        ck_assert(strncmp(replaced, first, n) != 0);

        /* The same contents as the first again, in a folder of its own: the first's hash. */
        install_folder("kept", "one");
        back = run_installed(bus, "kept");
        ck_assert_str_eq(back, first);
}
END_TEST

START_TEST(test_runs_succeed) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *id = NULL, *outcome = NULL, *result = NULL, *theirs = NULL;

        /* The real sandbox, for root and for nobody. */
        id = run_to_end(bus, &outcome);
        ck_assert_str_eq(outcome, "succeeded 0");
        result = run_property(bus, id, "Result");
        ck_assert_ptr_nonnull(strstr(result, "hello world"));
        theirs = as_nobody(nobody_run, skill_path);
        ck_assert_msg(!startswith(theirs, "!"), "nobody's Run failed: %s", theirs);
        expect(wait_final(bus, theirs), "succeeded");
}
END_TEST

/* The skill's output over D-Bus as it wrote it: numbers a double cannot hold, and 1.0. */
START_TEST(test_output_exact) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *exact = write_skill(
                "exact", "printf '{\"big\": 12345678901234567890, \"id\": 9007199254740993, \"f\": 1.0}'\n");
        _cleanup_free_ char *id = NULL, *result = NULL;

        id = call_run(bus, exact, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        expect(wait_final(bus, id), "succeeded");
        result = run_property(bus, id, "Result");
        ck_assert_msg(strstr(result, "\"output\":{\"big\":12345678901234567890,\"id\":9007199254740993,\"f\":1.0}"),
                      "Result: %s", result);
}
END_TEST

/* A run killed by a signal: the Signal property says which, as its Result does, whether the
 * service kept it when the run ended (here) or reads it from result.json. */
START_TEST(test_signal_property) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *selfkill = write_skill("selfkill", "kill -TERM $$\n");
        _cleanup_free_ char *id = NULL, *path = NULL, *result = NULL, *status = NULL;
        int32_t sig = -1;

        id = call_run(bus, selfkill, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        status = wait_final(bus, id);
        path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        ck_assert_int_ge(sd_bus_get_property_trivial(bus, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run",
                                                     "Signal", NULL, 'i', &sig), 0);
        ck_assert_int_eq(sig, SIGTERM);
        result = run_property(bus, id, "Result");
        ck_assert_msg(strstr(result, "\"signal\":15"), "Result: %s", result);
}
END_TEST

START_TEST(test_read_chunks) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *id = NULL, *first = NULL, *rest = NULL, *artifacts = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n1 = 0, n2 = 0;

        id = call_run(bus, skill_path, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        expect(wait_final(bus, id), "succeeded");

        /* The log, whole, in part, and past its end. */
        expect(call_read(bus, id, "ReadLog", "stdout", 0, UINT64_MAX, NULL), "hello world\n");
        expect(call_read(bus, id, "ReadLog", "stdout", 6, 3, NULL), "wor");
        expect(call_read(bus, id, "ReadLog", "stdout", 12, 10, NULL), "");
        expect(call_read(bus, id, "ReadLog", "stdout", 1000, 10, NULL), "");
        expect(call_read(bus, id, "ReadLog", "stdout", UINT64_MAX, 10, NULL),
               "!org.freedesktop.DBus.Error.InvalidArgs");
        expect(call_read(bus, id, "ReadLog", "journal", 0, 10, NULL),
               "!org.freedesktop.DBus.Error.InvalidArgs");

        /* An artifact larger than one call returns: capped, then the rest. */
        first = call_read(bus, id, "ReadArtifact", "sub/big.txt", 0, UINT64_MAX, &n1);
        ck_assert_msg(!startswith(first, "!"), "ReadArtifact failed: %s", first);
        ck_assert_uint_eq(n1, READ_CAP);
        rest = call_read(bus, id, "ReadArtifact", "sub/big.txt", n1, UINT64_MAX, &n2);
        ck_assert_uint_eq(n1 + n2, BIG_ARTIFACT_SIZE);
        ck_assert_msg(strspn(first, "a") == n1 && strspn(rest, "a") == n2, "artifact bytes differ");
        expect(call_read(bus, id, "ReadArtifact", "sub/big.txt", BIG_ARTIFACT_SIZE, 1, NULL), "");
        expect(call_read(bus, id, "ReadArtifact", "sub/none.txt", 0, 1, NULL),
               "!io.skilld.Skilld1.Error.NoSuchArtifact");
        expect(call_read(bus, id, "ReadArtifact", "sub", 0, 1, NULL),
               "!io.skilld.Skilld1.Error.NoSuchArtifact");
        expect(call_read(bus, id, "ReadArtifact", "../result.json", 0, 1, NULL),
               "!org.freedesktop.DBus.Error.InvalidArgs");

        /* A symlink in the store (none gets there from a run: planted here) is never followed, as
         * by OpenArtifact. */
        artifacts = strdup_printf("%s/state/runs/%s/artifacts", dir.path, id);
        fd = open(artifacts, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "%s: %m", artifacts);
        ck_assert_int_eq(symlinkat("sub/big.txt", fd, "link"), 0);
        ck_assert_int_eq(symlinkat(".", fd, "dirlink"), 0);
        expect(call_read(bus, id, "ReadArtifact", "link", 0, 1, NULL),
               "!io.skilld.Skilld1.Error.NoSuchArtifact");
        expect(call_read(bus, id, "ReadArtifact", "dirlink/sub/big.txt", 0, 1, NULL),
               "!io.skilld.Skilld1.Error.NoSuchArtifact");

        /* Someone else's run reads as no run at all. */
        expect(as_nobody(nobody_read_log, id), "!io.skilld.Skilld1.Error.NoSuchRun");
}
END_TEST

START_TEST(test_validation) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *junk = strdup_printf("%s/policy.yaml", dir.path);

        expect(call_run(bus, junk, "", NULL, 0, NULL), "!io.skilld.Skilld1.Error.InvalidSkill");
        expect(call_run(bus, skill_path, "{not json", NULL, 0, NULL),
               "!org.freedesktop.DBus.Error.InvalidArgs");
        expect(call_run(bus, skill_path, "", "bogus", 1, NULL), "!org.freedesktop.DBus.Error.InvalidArgs");
        expect(call_run(bus, skill_path, "", "memory", 1ULL << 40, NULL),
               "!io.skilld.Skilld1.Error.LimitExceeded");
        expect(call_run(bus, skill_path, "", NULL, 0, "network"),
               "!io.skilld.Skilld1.Error.NetworkNotAllowed");
        expect(call_run(bus, skill_path, "", NULL, 0, "colour"), "!org.freedesktop.DBus.Error.InvalidArgs");
}
END_TEST

/* Checks that a ListRunsFiltered() answer is InvalidArgs naming key, and frees it. */
static void expect_invalid(char *got, const char *key) {
        _cleanup_free_ char *g = got;

        ck_assert_msg(startswith(g, "!org.freedesktop.DBus.Error.InvalidArgs ") && strstr(g, key),
                      "not InvalidArgs about %s: %s", key, g);
}

START_TEST(test_list_filtered) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL, *next = NULL, *next2 = NULL;
        _cleanup_free_ char *want = NULL, *want_all = NULL;
        uint64_t older;

        /* 1. Validation, each refusal naming the option; before any authorization. */
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "colour", "b", 1), "colour");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "limit", "s", "ten"), "limit");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "limit", "u", 0), "limit");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}{sv}", "limit", "u", 1, "limit", "u", 2), "limit");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "before", "s", "nope"), "before");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "all", "s", "yes"), "all");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "state", "s", "done"), "state");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "skill", "s", "../x"), "skill");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "prefix", "s", "ABCD"), "prefix");
        expect_invalid(list_filtered(bus, NULL, NULL, "{sv}", "prefix", "s", ""), "prefix");
        expect(as_nobody(nobody_list_filtered, "bad-all"), "!org.freedesktop.DBus.Error.InvalidArgs");

        /* 2. Authorization: everyone's needs io.skilld.manage-runs (the fake polkit says no), one's
         * own nothing; root's runs are not nobody's. */
        expect(as_nobody(nobody_list_filtered, "all"), "!org.freedesktop.DBus.Error.AccessDenied");
        expect(list_filtered(bus, &older, NULL, NULL), "");
        ck_assert_uint_eq(older, 0);

        /* 3. Paging back through everything while runs are added: no run twice, none missed. */
        r1 = call_run(bus, skill_path, "", NULL, 0, NULL);
        r2 = call_run(bus, skill_path, "", NULL, 0, NULL);
        r3 = call_run(bus, skill_path, "", NULL, 0, NULL);
        want = strdup_printf("%s %s", r2, r3);
        expect(list_filtered(bus, &older, &next, "{sv}", "limit", "u", 2), want);
        ck_assert_uint_eq(older, 1);
        r4 = call_run(bus, skill_path, "", NULL, 0, NULL);
        expect(list_filtered(bus, &older, &next2, "{sv}{sv}", "limit", "u", 2, "before", "s", next), r1);
        ck_assert_uint_eq(older, 0);
        ck_assert_str_eq(next2, "");
        expect(as_nobody(nobody_list_filtered, "own"), "listed 0, 0 older");

        /* Everything, as ListRuns orders it; root's "all" needs no polkit; filters. */
        want_all = strdup_printf("%s %s %s %s", r1, r2, r3, r4);
        expect(list_filtered(bus, &older, NULL, NULL), want_all);
        expect(list_filtered(bus, &older, NULL, "{sv}", "all", "b", 1), want_all);
        expect(list_filtered(bus, &older, NULL, "{sv}{sv}", "limit", "u", 1, "skill", "s", "greeter"), r4);
        ck_assert_uint_eq(older, 3);
        expect(list_filtered(bus, &older, NULL, "{sv}", "skill", "s", "other"), "");
        ck_assert_uint_eq(older, 0);
        expect(list_filtered(bus, &older, NULL, "{sv}", "prefix", "s", r3), r3);
        ck_assert_uint_eq(older, 0);
        ck_assert(listed(bus, r1) && listed(bus, r4));

        free(wait_final(bus, r1));
        free(wait_final(bus, r2));
        free(wait_final(bus, r3));
        free(wait_final(bus, r4));
        expect(list_filtered(bus, &older, NULL, "{sv}", "state", "s", "queued"), "");
        expect(list_filtered(bus, &older, NULL, "{sv}{sv}", "state", "s", "finished", "limit", "u", 3),
               strchr(want_all, ' ') + 1);
        ck_assert_uint_eq(older, 1);
}
END_TEST

/* What a connection heard from the service about runs: every signal of the Manager interface and
 * every PropertiesChanged below its path, whoever they were meant for. */
typedef struct Heard {
        unsigned started, finished, changed;
        char *finished_status;
} Heard;

static int on_heard(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Heard *h = userdata;
        const char *id, *path, *status;
        int32_t code;

        if (sd_bus_message_is_signal(m, "io.skilld.Skilld1.Manager", "RunStarted"))
                h->started++;
        else if (sd_bus_message_is_signal(m, "io.skilld.Skilld1.Manager", "RunFinished")) {
                h->finished++;
                ck_assert_int_ge(sd_bus_message_read(m, "sosi", &id, &path, &status, &code), 0);
                free(h->finished_status);
                h->finished_status = strdup_printf("%s %s", id, status);
        } else if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged"))
                h->changed++;
        return 0;
}

static void listen_all(sd_bus *bus, Heard *h) {
        ck_assert_int_ge(sd_bus_add_match(bus, NULL, "type='signal',interface='io.skilld.Skilld1.Manager'",
                                          on_heard, h), 0);
        ck_assert_int_ge(sd_bus_add_match(bus, NULL,
                                          "type='signal',interface='org.freedesktop.DBus.Properties',"
                                          "member='PropertiesChanged',path_namespace='/io/skilld/Skilld1'",
                                          on_heard, h), 0);
}

/* Takes in what the service sent this connection so far: the bus keeps one sender's messages to
 * one receiver in order, so a signal sent before the service answered a Ping is read before the
 * answer. */
static void drain(sd_bus *bus) {
        ck_assert_int_ge(sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                            "org.freedesktop.DBus.Peer", "Ping", NULL, NULL, NULL), 0);
        while (sd_bus_process(bus, NULL) > 0)
                ;
}

static void process_until(sd_bus *bus, const unsigned *counter, unsigned want) {
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;

        while (*counter < want) {
                ck_assert_msg(test_now_usec() < deadline, "a signal never came");
                if (sd_bus_process(bus, NULL) == 0)
                        ck_assert_int_ge(sd_bus_wait(bus, 100000), 0);
        }
}

START_TEST(test_signals_unicast) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *owner = test_bus_connect(&test_bus, NULL),
                                                  *bystander = test_bus_connect(&test_bus, NULL),
                                                  *asker = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *sleeper = write_skill("sleeper", "sleep 600\n"), *id = NULL, *want = NULL,
                            *path = NULL, *state = NULL;
        bool wrapped = !isempty(getenv("SKILLD_TEST_WRAPPER")), running;
        _cleanup_close_pair_ int ready[2] = { -EBADF, -EBADF }, stop[2] = { -EBADF, -EBADF };
        Heard by_owner = {}, by_bystander = {}, by_asker = {};
        char buf[64] = {};
        pid_t pid;

        /* nobody listens from the start to the end, in a process of its own. */
        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(stop, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                _cleanup_free_ char *line = NULL;
                Heard h = {};
                sd_bus *bus;

                /* Our copy of the write end would keep the stop from ever coming. */
                stop[1] = safe_close(stop[1]);
                if (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(1);
                bus = test_bus_connect(&test_bus, NULL);
                listen_all(bus, &h);
                drain(bus);
                (void) loop_write(ready[1], "r", 1);
                for (;;) {
                        struct pollfd p = { .fd = stop[0], .events = POLLIN };

                        while (sd_bus_process(bus, NULL) > 0)
                                ;
                        if (poll(&p, 1, 0) > 0)
                                break;
                        (void) sd_bus_wait(bus, 100000);
                }
                drain(bus);
                line = strdup_printf("%u %u %u", h.started, h.finished, h.changed);
                (void) loop_write(ready[1], line, strlen(line));
                _exit(0);
        }
        ready[1] = safe_close(ready[1]);
        stop[0] = safe_close(stop[0]);
        ck_assert_int_eq(loop_read(ready[0], buf, 1), 1);

        listen_all(owner, &by_owner);
        listen_all(bystander, &by_bystander);
        listen_all(asker, &by_asker);
        drain(bystander);
        drain(asker);

        /* root's run: its submitter hears it start. */
        id = call_run(owner, sleeper, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        process_until(owner, &by_owner.started, 1);

        /* Another connection that asks about the run hears of it from then on. Under a wrapper
         * such as Valgrind runs fail at once (tests/valgrind/README.md), so the run may be over
         * by then: what is asserted of the signals holds whatever the run's outcome. */
        path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        state = run_property(asker, id, "State");
        running = streq(state, "running");
        if (!wrapped)
                ck_assert_str_eq(state, "running");

        (void) sd_bus_call_method(owner, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run", "Cancel",
                                  NULL, NULL, NULL);
        process_until(owner, &by_owner.finished, 1);
        ck_assert_ptr_nonnull(startswith(by_owner.finished_status, id));
        if (!wrapped) {
                want = strdup_printf("%s canceled", id);
                ck_assert_str_eq(by_owner.finished_status, want);
        }
        ck_assert_uint_ge(by_owner.changed, 2);
        if (running) {
                process_until(asker, &by_asker.finished, 1);
                ck_assert_str_eq(by_asker.finished_status, by_owner.finished_status);
                ck_assert_uint_ge(by_asker.changed, 1);
        }
        /* It asked after the start: RunStarted was not for it. */
        ck_assert_uint_eq(by_asker.started, 0);

        /* Whoever only listened heard nothing, root or not. */
        drain(bystander);
        ck_assert_uint_eq(by_bystander.started + by_bystander.finished + by_bystander.changed, 0);
        stop[1] = safe_close(stop[1]);
        memset(buf, 0, sizeof(buf));
        ck_assert_int_gt(loop_read(ready[0], buf, sizeof(buf) - 1), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ck_assert_str_eq(buf, "0 0 0");

        free(by_owner.finished_status);
        free(by_asker.finished_status);
}
END_TEST

/* Connections that asked about runs and left drop out of the peers told of runs (the service
 * watches each name for its departure without waiting for the bus): after more of them than the
 * cap on peers (128; 15 a run besides the submitter) came and went, a new one is still told. */
START_TEST(test_peers_that_left_drop_out) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *owner = test_bus_connect(&test_bus, NULL),
                                                  *last = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *sleeper = write_skill("sleeper", "sleep 600\n");
        char *ids[9] = {};
        Heard by_owner = {}, by_last = {};
        uint64_t deadline;

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                ids[i] = call_run(owner, sleeper, "", NULL, 0, NULL);
                ck_assert_msg(!startswith(ids[i], "!"), "Run failed: %s", ids[i]);
        }
        /* 9 runs x 15 askers: 135 names, each gone once it asked. */
        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                for (unsigned k = 0; k < 15; k++) {
                        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *asker = test_bus_connect(&test_bus, NULL);

                        free(run_property(asker, ids[i], "State"));
                }

        /* Tried with a new run until the service heard of the departures (the bus tells it in
         * its own time); never told if the names that left still counted. */
        listen_all(owner, &by_owner);
        listen_all(last, &by_last);
        deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;
        for (unsigned tries = 1;; tries++) {
                _cleanup_free_ char *id = call_run(owner, sleeper, "", NULL, 0, NULL), *path = NULL;

                ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
                path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
                free(run_property(last, id, "State"));
                ck_assert_int_ge(sd_bus_call_method(owner, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run",
                                                    "Cancel", NULL, NULL, NULL), 0);
                /* The submitter is always told; what the service sent the last asker before
                 * that is read by the drain. */
                process_until(owner, &by_owner.finished, tries);
                drain(last);
                if (by_last.finished > 0)
                        break;
                ck_assert_msg(test_now_usec() < deadline, "the last asker was never told");
                (void) usleep(100000);
        }
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                _cleanup_free_ char *path = strdup_printf("/io/skilld/Skilld1/run/%s", ids[i]);

                (void) sd_bus_call_method(owner, "io.skilld.Skilld1", path, "io.skilld.Skilld1.Run", "Cancel",
                                          NULL, NULL, NULL);
                free(ids[i]);
        }
        free(by_owner.finished_status);
        free(by_last.finished_status);
}
END_TEST

START_TEST(test_idle_exit) {
        /* The fixture's instance goes; one that may exit when idle replaces it. */
        daemon_stop(daemon_pid);
        daemon_pid = daemon_spawn("service:\n  idle-timeout: 1s\n", true);
        daemon_ended(daemon_pid);
        daemon_pid = 0;
}
END_TEST

/* ---- The root socket ---- */

/* Whether the instance has ended; seen, not reaped: daemon_ended() checks how it ended. */
static bool daemon_has_ended(pid_t pid) {
        siginfo_t si = {};

        ck_assert_int_eq(waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
        return si.si_pid != 0;
}

/* The path of the instance's root socket, once it is there (the instance makes it when the bus
 * name is its own, which the bus may tell others first), or once the instance has ended. */
static char *root_socket_wait(void) {
        char *path = strdup_printf("%s/run/private", dir.path);
        uint64_t deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC;
        struct stat st;

        while (lstat(path, &st) < 0) {
                ck_assert_int_eq(errno, ENOENT);
                if (daemon_has_ended(daemon_pid))
                        break;
                ck_assert_msg(test_now_usec() < deadline, "%s never appeared", path);
                (void) usleep(20000);
        }
        return path;
}

/* A direct connection to it, authenticated: the service holds it from then on. NULL when the
 * connection was refused, with allow_refused (the instance may have left before it). */
static sd_bus *root_socket_connect_full(const char *path, bool allow_refused) {
        _cleanup_free_ char *address = strdup_printf("unix:path=%s", path);
        sd_bus *bus = NULL;
        int r;

        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_address(bus, address), 0);
        ck_assert_int_ge(sd_bus_negotiate_fds(bus, 1), 0);
        r = sd_bus_start(bus);
        if (allow_refused && (r == -ENOENT || r == -ECONNREFUSED))
                return sd_bus_unref(bus);
        ck_assert_int_ge(r, 0);
        /* Once connected it is served, even where the instance was on its way out: the idle exit
         * takes what connected before it. */
        ck_assert_int_ge(sd_bus_call_method(bus, NULL, "/io/skilld/Skilld1", "org.freedesktop.DBus.Peer", "Ping",
                                            NULL, NULL, ""), 0);
        return bus;
}

static sd_bus *root_socket_connect(const char *path) {
        return root_socket_connect_full(path, false);
}

/* An instance that exits when idle for 1 s, and root connected to it. A slow machine (the VM's
 * emulation, Valgrind) may let that second pass between the socket's appearance and the connect:
 * the instance is then gone, as it should be, and another is started. */
static sd_bus *root_socket_idle_instance(const char *path) {
        for (unsigned tries = 1;; tries++) {
                sd_bus *bus;

                daemon_pid = daemon_spawn("service:\n  idle-timeout: 1s\n", true);
                free(root_socket_wait());
                bus = root_socket_connect_full(path, true);
                if (bus)
                        return bus;
                daemon_ended(daemon_pid);
                daemon_pid = 0;
                ck_assert_msg(tries < 5, "every idle instance of 5 had left before root connected");
        }
}

/* The root socket's peers, by the system bus's rule: a connection hears of the runs it submitted
 * and of those it asked about, not of every run root may see (each of root's clients would pay for
 * all the others' runs). Checked on direct connections of root's, where no bus daemon filters. */
START_TEST(test_root_socket_signals) {
        _cleanup_free_ char *path = root_socket_wait(), *sleeper = write_skill("sleeper", "sleep 600\n"),
                            *id = NULL, *run_path = NULL, *state = NULL, *other = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *owner = root_socket_connect(path),
                                                  *bystander = root_socket_connect(path),
                                                  *asker = root_socket_connect(path),
                                                  *on_bus = test_bus_connect(&test_bus, NULL);
        bool wrapped = !isempty(getenv("SKILLD_TEST_WRAPPER"));
        Heard by_owner = {}, by_bystander = {}, by_asker = {};

        listen_all(owner, &by_owner);
        listen_all(bystander, &by_bystander);
        listen_all(asker, &by_asker);

        id = call_run(owner, sleeper, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(id, "!"), "Run failed: %s", id);
        process_until(owner, &by_owner.started, 1);
        state = run_property(asker, id, "State");
        if (!wrapped)
                ck_assert_str_eq(state, "running");
        run_path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        (void) sd_bus_call_method(owner, NULL, run_path, "io.skilld.Skilld1.Run", "Cancel", NULL, NULL, NULL);
        process_until(owner, &by_owner.finished, 1);
        if (streq(state, "running")) {
                process_until(asker, &by_asker.finished, 1);
                ck_assert_str_eq(by_asker.finished_status, by_owner.finished_status);
        }
        ck_assert_uint_eq(by_asker.started, 0);

        /* A run submitted on the system bus is no business of theirs either. */
        other = call_run(on_bus, skill_path, "", NULL, 0, NULL);
        ck_assert_msg(!startswith(other, "!"), "Run failed: %s", other);
        free(wait_final(on_bus, other));

        /* Read after the Pings' answers: whatever was sent before them has been taken in. */
        drain(bystander);
        drain(owner);
        ck_assert_uint_eq(by_bystander.started + by_bystander.finished + by_bystander.changed, 0);
        ck_assert_uint_eq(by_owner.started, 1);
        ck_assert_uint_eq(by_owner.finished, 1);

        free(by_owner.finished_status);
        free(by_asker.finished_status);
}
END_TEST

/* Root's way to the running service without the bus: root's alone, a whole API (a run goes from
 * Run to its result on it), and a client on it keeps the service from its idle exit; the socket
 * is gone when the service is. */
START_TEST(test_root_socket) {
        _cleanup_free_ char *path = root_socket_wait(), *id = NULL, *run_path = NULL, *state = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *root = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int fd = open(skill_path, O_RDONLY | O_CLOEXEC);
        uint64_t deadline;
        const char *p;
        struct stat st;
        int status;
        pid_t pid;

        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_uint_eq(st.st_uid, 0);

        /* nobody cannot even connect. */
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int s;

                strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
                if (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(2);
                s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                _exit(s >= 0 && connect(s, (struct sockaddr *) &sa, sizeof(sa)) < 0 && errno == EACCES ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody connected to %s", path);

        /* A run from Run to its end, no destination: there are no names on it. */
        root = root_socket_connect(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(sd_bus_message_new_method_call(root, &m, NULL, "/io/skilld/Skilld1",
                                                        "io.skilld.Skilld1.Manager", "Run"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "hsassa{sv}", fd, "", 1, "world", "", 0), 0);
        ck_assert_int_ge(sd_bus_call(root, m, 0, NULL, &reply), 0);
        ck_assert_int_ge(sd_bus_message_read(reply, "so", &p, NULL), 0);
        id = strdup(p);
        run_path = strdup_printf("/io/skilld/Skilld1/run/%s", id);
        deadline = test_now_usec() + TEST_BUS_TIMEOUT_USEC * 4;
        for (;;) {
                free(state);
                state = NULL;
                ck_assert_int_ge(sd_bus_get_property_string(root, NULL, run_path, "io.skilld.Skilld1.Run", "State",
                                                            NULL, &state), 0);
                if (streq(state, "finished"))
                        break;
                ck_assert_msg(test_now_usec() < deadline, "run %s never ended (%s)", id, state);
                (void) usleep(50000);
        }
        root = sd_bus_flush_close_unref(root);

        /* An instance that exits when idle (1 s) stays while root is connected, and goes, socket
         * and all, once it left. */
        daemon_stop(daemon_pid);
        ck_assert_int_eq(lstat(path, &st), -1);
        root = root_socket_idle_instance(path);
        (void) usleep(3000000);
        ck_assert_int_eq(waitpid(daemon_pid, &status, WNOHANG), 0);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert_int_ge(sd_bus_call_method(root, NULL, "/io/skilld/Skilld1", "org.freedesktop.DBus.Peer", "Ping",
                                            NULL, NULL, ""), 0);
        root = sd_bus_flush_close_unref(root);
        daemon_ended(daemon_pid);
        daemon_pid = 0;
        ck_assert_int_eq(lstat(path, &st), -1);
        ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* Calls method (Run with the archive, or InstallSkill) and returns the error message, or "ok". */
static char *archive_call(sd_bus *bus, const char *method, const char *archive) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int fd = open(archive, O_RDONLY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                                        "io.skilld.Skilld1.Manager", method), 0);
        if (streq(method, "Run"))
                ck_assert_int_ge(sd_bus_message_append(m, "hsassa{sv}", fd, "", 0, "", 0), 0);
        else
                ck_assert_int_ge(sd_bus_message_append(m, "hb", fd, 0), 0);
        if (sd_bus_call(bus, m, 0, &e, &reply) < 0)
                return strdup_printf("%s: %s", e.name, strna(e.message));
        return strdup("ok");
}

/* RunInstalled of name without arguments: the run's id. */
static char *run_installed_id(sd_bus *bus, const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id, *path;

        ck_assert_msg(sd_bus_call_method(bus, "io.skilld.Skilld1", "/io/skilld/Skilld1", "io.skilld.Skilld1.Manager",
                                         "RunInstalled", &e, &reply, "ssassa{sv}", name, "", 0, "", 0) >= 0,
                      "RunInstalled %s: %s", name, e.message);
        ck_assert_int_ge(sd_bus_message_read(reply, "so", &id, &path), 0);
        return strdup(id);
}

/* What the service keeps mapped once a run of an archive is over: libarchive is loaded only by the
 * child that unpacks it, the user database's modules only by the helper that asks it. */
START_TEST(test_mapped_libraries) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *id = NULL, *outcome = NULL, *maps_path = NULL, *maps = NULL;
        _cleanup_close_ int fd = -EBADF;

        id = run_to_end(bus, &outcome);
        ck_assert_str_eq(outcome, "succeeded 0");
        maps_path = strdup_printf("/proc/%d/maps", (int) daemon_pid);
        fd = open(maps_path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(read_full_fd(fd, 16U * 1024 * 1024, &maps, NULL), 0);
        ck_assert_msg(!strstr(maps, "libarchive"), "skilld maps libarchive:\n%s", maps);
        ck_assert_msg(!strstr(maps, "libnss_"), "skilld maps an NSS module:\n%s", maps);
        ck_assert_msg(strstr(maps, "libsystemd"), "no libsystemd in skilld's maps:\n%s", maps);
}
END_TEST

/* Without libarchive on the host (the package missing, made by /dev/null bound over the library
 * in skilld's mount namespace): calls that carry an archive fail with a message naming the library
 * and its package, and the service goes on running installed skills. */
START_TEST(test_without_libarchive) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, NULL);
        _cleanup_free_ char *answer = NULL, *id = NULL, *lib = NULL;
        struct link_map *map = NULL;
        void *dl;

        /* The library as the dynamic loader finds it (write_skill() loaded it into this test). */
        dl = dlopen("libarchive.so.13", RTLD_NOW | RTLD_NOLOAD);
        ck_assert_ptr_nonnull(dl);
        ck_assert_int_eq(dlinfo(dl, RTLD_DI_LINKMAP, &map), 0);
        lib = realpath(map->l_name, NULL);
        ck_assert_ptr_nonnull(lib);
        (void) dlclose(dl);

        /* Installed while the library was there. */
        answer = archive_call(bus, "InstallSkill", skill_path);
        ck_assert_str_eq(answer, "ok");
        free(answer);

        daemon_stop(daemon_pid);
        hidden_library = lib;
        daemon_pid = daemon_spawn("service:\n  idle-timeout: 60s\n", false);
        hidden_library = NULL;

        answer = archive_call(bus, "Run", skill_path);
        ck_assert_msg(strstr(answer, "libarchive.so.13") && strstr(answer, "install libarchive13"),
                      "Run of an archive without libarchive: %s", answer);
        free(answer);
        answer = archive_call(bus, "InstallSkill", skill_path);
        ck_assert_msg(strstr(answer, "libarchive.so.13") && strstr(answer, "install libarchive13"),
                      "InstallSkill without libarchive: %s", answer);

        id = run_installed_id(bus, "greeter");
        expect(wait_final(bus, id), "succeeded");
}
END_TEST

int main(void) {
        Suite *s = suite_create("daemon");
        TCase *tc = tcase_create("service");

        if (!test_bus_available() || geteuid() != 0) {
                fprintf(stderr, "needs root and dbus-daemon: skipped\n");
                return getenv("SKILLD_VM") ? EXIT_FAILURE : 77;
        }
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_ownership);
        tcase_add_test(tc, test_run_records);
        tcase_add_test(tc, test_validation);
        tcase_add_test(tc, test_list_filtered);
        tcase_add_test(tc, test_signals_unicast);
        tcase_add_test(tc, test_peers_that_left_drop_out);
        tcase_add_test(tc, test_idle_exit);
        tcase_add_test(tc, test_root_socket_signals);
        tcase_add_test(tc, test_root_socket);
        suite_add_tcase(s, tc);
        tc = tcase_create("runs");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_runs_succeed);
        tcase_add_test(tc, test_read_chunks);
        tcase_add_test(tc, test_output_exact);
        tcase_add_test(tc, test_signal_property);
        tcase_add_test(tc, test_mapped_libraries);
        tcase_add_test(tc, test_without_libarchive);
        tcase_add_test(tc, test_installed_kept);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
