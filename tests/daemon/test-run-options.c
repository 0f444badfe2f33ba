/* Tests for skilld/daemon/run-options: a complete Run() and RunInstalled() call decodes into what
 * the handler needs; each thing a caller can get wrong is refused with its D-Bus error and a
 * message naming it, quoting the caller's text only when it is printable; and a refused call
 * leaves the output untouched. The messages are built on a bus over a socketpair nobody answers
 * (sd-bus makes messages only on a started bus), as the fuzz target "run-options" does. */
#include <sys/mman.h>
#include <sys/socket.h>

#include "bus-errors.h"
#include "run-options.h"
#include "test-client.h"
#include "test-util.h"

static sd_bus *bus;
static int bus_fds[2] = { -EBADF, -EBADF };
static TestDir dir;

static void setup(void) {
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bus_fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, bus_fds[0], bus_fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        dir = test_dir_new();
        test_write_file(dir.fd, "data.txt", "{}", 0644);
}

static void teardown(void) {
        bus = sd_bus_close_unref(bus);
        bus_fds[1] = safe_close(bus_fds[1]);
        test_dir_done(&dir);
}

/* A memfd holding what a .skill archive starts with. */
static int archive_fd(const char *contents) {
        int fd = memfd_create("skill", MFD_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(loop_write(fd, contents, strlen(contents)), 0);
        return fd;
}

/* Run(fd, script, [a, b], input, { ... }) up to its options, which the caller appends. */
static sd_bus_message *run_start(int fd, const char *script, const char *input) {
        sd_bus_message *m = NULL;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", TEST_CLIENT_PATH,
                                                        TEST_CLIENT_MANAGER, "Run"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "hsass", fd, script, 2, "a", "b", input), 0);
        ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
        return m;
}

static void run_finish(sd_bus_message *m) {
        ck_assert_int_ge(sd_bus_message_close_container(m), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
}

/* Decodes m, which must be refused with error name and exactly message; frees m. */
static void expect_refused(sd_bus_message *m, bool installed, const char *name, const char *message) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        RunOptions o = { .n_files = 4242 };

        ck_assert_int_lt(run_options_parse(m, installed, &o, &error), 0);
        ck_assert_str_eq(error.name, name);
        ck_assert_str_eq(error.message, message);
        /* Untouched on failure. */
        ck_assert_uint_eq(o.n_files, 4242);
        ck_assert_ptr_null(o.args);
        sd_bus_message_unref(m);
}

START_TEST(test_everything) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(run_options_done) RunOptions o = {};
        _cleanup_close_ int skill = archive_fd("PK\003\004rest"), data = -EBADF;
        _cleanup_close_pair_ int out[2] = { -EBADF, -EBADF };

        data = openat(dir.fd, "data.txt", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(data, 0);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        m = run_start(skill, "scripts/main.py", "{\"n\": [1, 2]}");
        ck_assert_int_ge(test_client_open_option(m, "limits", "a{st}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{st}{st}", "memory", UINT64_C(1) << 30, "timeout",
                                               UINT64_C(5000000)), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{st}"), 0);
        ck_assert_int_ge(test_client_open_option(m, "env", "a{ss}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{ss}{ss}", "LANG", "C.UTF-8", "MY_VAR", "a=b"), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{ss}"), 0);
        ck_assert_int_ge(test_client_open_option(m, "files", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "data.txt", data), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sv}{sv}", "network", "b", 1, "stdout", "h", out[1]), 0);
        run_finish(m);

        ck_assert_int_eq(run_options_parse(m, false, &o, &error), 0);
        ck_assert(!sd_bus_error_is_set(&error));
        ck_assert_int_ge(o.skill_fd, 0);
        ck_assert_ptr_null(o.name);
        ck_assert_str_eq(o.script, "scripts/main.py");
        ck_assert_uint_eq(strv_length(o.args), 2);
        ck_assert_str_eq(o.args[1], "b");
        ck_assert_str_eq(o.input_json, "{\"n\": [1, 2]}");
        ck_assert_uint_eq(o.asked.value[POLICY_LIMIT_MEMORY], UINT64_C(1) << 30);
        ck_assert_uint_eq(o.asked.value[POLICY_LIMIT_TIMEOUT], 5000000);
        ck_assert_uint_eq(o.asked.value[POLICY_LIMIT_TASKS], POLICY_LIMIT_UNSET);
        ck_assert_uint_eq(strv_length(o.env), 2);
        ck_assert_str_eq(o.env[0], "LANG=C.UTF-8");
        ck_assert_str_eq(o.env[1], "MY_VAR=a=b");
        ck_assert_uint_eq(o.n_files, 1);
        ck_assert_str_eq(o.file_names[0], "data.txt");
        ck_assert_int_ge(o.file_fds[0], 0);
        ck_assert(o.network);
        ck_assert_int_ge(o.stdout_fd, 0);
        ck_assert_int_lt(o.stderr_fd, 0);
}
END_TEST

/* The command form (skillctl exec): args is the argv, no script, and the working directory. */
START_TEST(test_command) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(run_options_done) RunOptions o = {};
        _cleanup_close_ int skill = archive_fd("PK\003\004rest");
        _cleanup_free_ char *line = NULL;
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) "echo 'x' y", (char *) "", NULL };

        m = run_start(skill, "", "");
        ck_assert_int_ge(sd_bus_message_append(m, "{sv}{sv}", "command", "b", 1, "cwd", "s", "/skill"), 0);
        run_finish(m);
        ck_assert_int_eq(run_options_parse(m, false, &o, &error), 0);
        ck_assert(o.command);
        ck_assert_ptr_null(o.script);
        ck_assert_str_eq(o.cwd, "/skill");
        ck_assert_str_eq(o.args[0], "a");

        line = run_command_line(argv);
        ck_assert_str_eq(line, "sh -c 'echo \\'x\\' y' ''");

        skill = safe_close(skill);
        skill = archive_fd("PK\003\004rest");
        m = sd_bus_message_unref(m);
        m = run_start(skill, "scripts/main.py", "");
        ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "command", "b", 1), 0);
        run_finish(m);
        expect_refused(TAKE_PTR(m), false, SD_BUS_ERROR_INVALID_ARGS, "A command run names no script.");

        m = run_start(skill, "", "");
        ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "cwd", "s", "/etc"), 0);
        run_finish(m);
        expect_refused(TAKE_PTR(m), false, SD_BUS_ERROR_INVALID_ARGS, "The option cwd must be /work or /skill.");
}
END_TEST

/* Folder inputs: zips of folders in sealed memfds, beside plain files, one name space. */
START_TEST(test_folders) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(run_options_done) RunOptions o = {};
        _cleanup_close_ int skill = archive_fd("PK\003\004rest"), sealed = archive_fd("PK\005\006"),
                           open_memfd = archive_fd("PK\005\006"), data = -EBADF;

        ck_assert_int_eq(fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW), -1);
        safe_close(sealed);
        sealed = memfd_create("folder", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        ck_assert_int_ge(sealed, 0);
        ck_assert_int_eq(loop_write(sealed, "PK\005\006", 4), 0);
        ck_assert_int_eq(fcntl(sealed, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW), 0);
        data = openat(dir.fd, "data.txt", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(data, 0);

        m = run_start(skill, "", "");
        ck_assert_int_ge(test_client_open_option(m, "files", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "data.txt", data), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        ck_assert_int_ge(test_client_open_option(m, "folders", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "tree", sealed), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        run_finish(m);
        ck_assert_int_eq(run_options_parse(m, false, &o, &error), 0);
        ck_assert_uint_eq(o.n_files, 2);
        ck_assert_str_eq(o.file_names[1], "tree");
        ck_assert(!o.file_folders[0]);
        ck_assert(o.file_folders[1]);

        m = sd_bus_message_unref(m);
        m = run_start(skill, "", "");
        ck_assert_int_ge(test_client_open_option(m, "folders", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "tree", open_memfd), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        run_finish(m);
        expect_refused(TAKE_PTR(m), false, SD_BUS_ERROR_INVALID_ARGS,
                       "The input folder tree is not a memfd sealed against writes, shrinking and growing.");

        m = run_start(skill, "", "");
        ck_assert_int_ge(test_client_open_option(m, "files", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "tree", data), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        ck_assert_int_ge(test_client_open_option(m, "folders", "a{sh}"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "{sh}", "tree", sealed), 0);
        ck_assert_int_ge(test_client_close_option(m, "a{sh}"), 0);
        run_finish(m);
        expect_refused(TAKE_PTR(m), false, SD_BUS_ERROR_INVALID_ARGS, "The input file tree is given twice.");
}
END_TEST

START_TEST(test_installed) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(run_options_done) RunOptions o = {};

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", TEST_CLIENT_PATH,
                                                        TEST_CLIENT_MANAGER, "RunInstalled"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "ssass", "greeter", "", 0, ""), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "a{sv}", 0), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);

        /* Empty script and input: the default entry point, no input; nothing asked. */
        ck_assert_int_eq(run_options_parse(m, true, &o, &error), 0);
        ck_assert_str_eq(o.name, "greeter");
        ck_assert_int_lt(o.skill_fd, 0);
        ck_assert_ptr_null(o.script);
        ck_assert_ptr_null(o.input_json);
        ck_assert_uint_eq(strv_length(o.args), 0);
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                ck_assert_uint_eq(o.asked.value[l], POLICY_LIMIT_UNSET);
        ck_assert(!o.network);
        ck_assert_uint_eq(o.n_files, 0);

        m = sd_bus_message_unref(m);
        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", TEST_CLIENT_PATH,
                                                        TEST_CLIENT_MANAGER, "RunInstalled"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "ssassa{sv}", "../greeter", "", 0, "", 0), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        expect_refused(sd_bus_message_ref(m), true, SD_BUS_ERROR_INVALID_ARGS,
                       "'../greeter' is not a valid skill name.");
}
END_TEST

/* Run() whose options are the entries given as to sd_bus_message_append(): refused with
 * InvalidArgs and exactly message. */
static void expect_options_refused(int skill, const char *message, const char *types, ...) {
        sd_bus_message *m = run_start(skill, "", "");
        va_list ap;
        int r;

        va_start(ap, types);
        r = sd_bus_message_appendv(m, types, ap);
        va_end(ap);
        ck_assert_int_ge(r, 0);
        run_finish(m);
        expect_refused(m, false, SD_BUS_ERROR_INVALID_ARGS, message);
}

START_TEST(test_options_refused) {
        _cleanup_close_ int skill = archive_fd("PK\003\004rest"), dir_fd = -EBADF;
        _cleanup_close_pair_ int out[2] = { -EBADF, -EBADF };

        dir_fd = openat(dir.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dir_fd, 0);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);

        expect_options_refused(skill, "Unknown option 'colour'.", "{sv}", "colour", "b", 1);
        /* The caller's text is not repeated when it could drive a terminal. */
        expect_options_refused(skill, "Unknown option '?'.", "{sv}", "limits\033[2J", "b", 1);
        expect_options_refused(skill, "The option network is given twice.", "{sv}{sv}",
                               "network", "b", 1, "network", "b", 0);
        expect_options_refused(skill, "The option network must be of type b.", "{sv}",
                               "network", "s", "yes");
        expect_options_refused(skill,
                               "Unknown limit 'colour'; known are memory, tasks, cpu, timeout, stdout, "
                               "stderr, output and tmpfs.",
                               "{sv}", "limits", "a{st}", 1, "colour", UINT64_C(1));
        expect_options_refused(skill, "The limit memory is given twice.", "{sv}",
                               "limits", "a{st}", 2, "memory", UINT64_C(1), "memory", UINT64_C(2));
        expect_options_refused(skill, "The limit tasks is out of range.", "{sv}",
                               "limits", "a{st}", 1, "tasks", POLICY_LIMIT_UNSET);
        expect_options_refused(skill, "Environment names may not contain '='.", "{sv}",
                               "env", "a{ss}", 1, "A=B", "c");
        expect_options_refused(skill, "The environment variable X is given twice.", "{sv}",
                               "env", "a{ss}", 2, "X", "1", "X", "2");
        expect_options_refused(skill, "The input file dir is not a regular file open for reading.", "{sv}",
                               "files", "a{sh}", 1, "dir", dir_fd);
        expect_options_refused(skill, "The stderr file descriptor is not open for writing.", "{sv}",
                               "stderr", "h", out[0]);
}
END_TEST

/* Run(fd, script, [a, b], input, {}): refused with error name and exactly message. */
static void expect_call_refused(int fd, const char *script, const char *input, const char *name,
                                const char *message) {
        sd_bus_message *m = run_start(fd, script, input);

        run_finish(m);
        expect_refused(m, false, name, message);
}

START_TEST(test_call_refused) {
        _cleanup_close_ int skill = archive_fd("PK\003\004rest"), empty = archive_fd(""),
                            text = archive_fd("hello"), dir_fd = -EBADF;

        dir_fd = openat(dir.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dir_fd, 0);

        expect_call_refused(skill, "", "{not json", SD_BUS_ERROR_INVALID_ARGS,
                            "The input is not valid JSON.");
        expect_call_refused(skill, "scripts/\033]0;x\a.sh", "", SD_BUS_ERROR_INVALID_ARGS,
                            "The script path is not a valid path of the skill.");
        expect_call_refused(empty, "", "", SKILLD_ERROR_INVALID_SKILL, "The skill archive is empty.");
        expect_call_refused(text, "", "", SKILLD_ERROR_INVALID_SKILL,
                            "The skill is not a .skill (zip) archive.");
        expect_call_refused(dir_fd, "", "", SD_BUS_ERROR_INVALID_ARGS,
                            "The skill must be passed as a .skill archive in a regular file or memfd "
                            "(skillctl packs folders that way).");
}
END_TEST

int main(void) {
        Suite *s = suite_create("run-options");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_everything);
        tcase_add_test(tc, test_installed);
        tcase_add_test(tc, test_command);
        tcase_add_test(tc, test_folders);
        tcase_add_test(tc, test_options_refused);
        tcase_add_test(tc, test_call_refused);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
