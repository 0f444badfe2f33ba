/* skilld-call: a tiny client of io.skilld.Skilld1 for the tests, for what busctl cannot do: pass
 * and receive file descriptors (the skill archive, input files, live output, artifacts, logs).
 * It is not skillctl (the real client); it prints what the tests check and nothing else.
 *
 *   skilld-call [--address ADDR] run [OPTIONS] SKILL.skill [ARGS...]
 *   skilld-call [--address ADDR] run-installed [OPTIONS] NAME [ARGS...]
 *       --script S  --input JSON  --limit NAME=VALUE  --env NAME=VALUE  --file NAME=PATH
 *       --stdout --stderr (stream live output to ours)  --wait (until the run ends)
 *     prints the run id; with --wait then "STATUS EXIT_CODE" (exit status 0 whatever the run did)
 *   skilld-call wait ID                  "STATE STATUS EXIT_CODE" once the run is final
 *   skilld-call artifact ID PATH         the artifact's contents on stdout
 *   skilld-call log ID stdout|stderr     the stored log on stdout
 *   skilld-call install SKILL.skill [--replace]
 *
 * --address: a direct connection (the private socket, unix:path=/run/skilld/bus); default the
 * system bus (DBUS_SYSTEM_BUS_ADDRESS). Errors go to stderr as "ERROR.NAME: message", exit 1. */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "fileio.h"
#include "parse-util.h"
#include "test-client.h"

static const char *arg_address = NULL;

static int fail_error(const sd_bus_error *e, int r) {
        test_client_print_error(stderr, e, r);
        return EXIT_FAILURE;
}

static int get_string(const TestClient *c, const char *path, const char *property, char **ret,
                      sd_bus_error *error) {
        return sd_bus_get_property_string(c->bus, c->destination, path, TEST_CLIENT_RUN, property, error,
                                          ret);
}

/* Polls until the run is final; prints "STATE STATUS EXIT_CODE". */
static int wait_run(const TestClient *c, const char *id, bool print_state) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *path = test_client_run_path(id);
        int r;

        if (!path)
                return fail_error(NULL, -ENOMEM);
        for (;;) {
                _cleanup_free_ char *state = NULL, *status = NULL;
                int32_t code = -1;

                r = get_string(c, path, "State", &state, &error);
                if (r < 0)
                        return fail_error(&error, r);
                if (streq(state, "finished") || streq(state, "interrupted")) {
                        r = get_string(c, path, "Status", &status, &error);
                        if (r >= 0)
                                r = sd_bus_get_property_trivial(c->bus, c->destination, path,
                                                                TEST_CLIENT_RUN, "ExitCode", &error, 'i',
                                                                &code);
                        if (r < 0)
                                return fail_error(&error, r);
                        if (print_state)
                                printf("%s ", state);
                        printf("%s %d\n", isempty(status) ? "-" : status, code);
                        return EXIT_SUCCESS;
                }
                (void) usleep(100 * 1000);
        }
}

static int append_options(sd_bus_message *m, char **limits, char **env, char **files, int out_fd,
                          int err_fd) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        if (limits) {
                r = test_client_open_option(m, "limits", "a{st}");
                STRV_FOREACH(l, limits) {
                        char *eq = strchr(*l, '=');
                        uint64_t v;

                        if (!eq)
                                return -EINVAL;
                        *eq = '\0';
                        if (safe_atou64(eq + 1, &v) < 0)
                                return -EINVAL;
                        if (r >= 0)
                                r = sd_bus_message_append(m, "{st}", *l, v);
                }
                if (r >= 0)
                        r = test_client_close_option(m, "a{st}");
                if (r < 0)
                        return r;
        }
        if (env) {
                r = test_client_open_option(m, "env", "a{ss}");
                STRV_FOREACH(e, env) {
                        char *eq = strchr(*e, '=');

                        if (!eq)
                                return -EINVAL;
                        *eq = '\0';
                        if (r >= 0)
                                r = sd_bus_message_append(m, "{ss}", *e, eq + 1);
                }
                if (r >= 0)
                        r = test_client_close_option(m, "a{ss}");
                if (r < 0)
                        return r;
        }
        if (files) {
                r = test_client_open_option(m, "files", "a{sh}");
                STRV_FOREACH(f, files) {
                        char *eq = strchr(*f, '=');
                        _cleanup_close_ int fd = -EBADF;

                        if (!eq)
                                return -EINVAL;
                        *eq = '\0';
                        fd = open(eq + 1, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                return -errno;
                        if (r >= 0)
                                r = sd_bus_message_append(m, "{sh}", *f, fd);
                }
                if (r >= 0)
                        r = test_client_close_option(m, "a{sh}");
                if (r < 0)
                        return r;
        }
        if (out_fd >= 0) {
                r = sd_bus_message_append(m, "{sv}", "stdout", "h", out_fd);
                if (r < 0)
                        return r;
        }
        if (err_fd >= 0) {
                r = sd_bus_message_append(m, "{sv}", "stderr", "h", err_fd);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

/* Copies both pipes to our stdout/stderr until both are at EOF. */
static void relay(int out_fd, int err_fd) {
        while (out_fd >= 0 || err_fd >= 0) {
                struct pollfd p[2] = { { .fd = out_fd, .events = POLLIN },
                                       { .fd = err_fd, .events = POLLIN } };

                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return;
                for (size_t i = 0; i < 2; i++) {
                        char buf[4096];
                        ssize_t n;

                        if (!p[i].revents)
                                continue;
                        n = read(p[i].fd, buf, sizeof(buf));
                        if (n <= 0) {
                                if (i == 0)
                                        out_fd = safe_close(out_fd);
                                else
                                        err_fd = safe_close(err_fd);
                                continue;
                        }
                        (void) loop_write(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, (size_t) n);
                }
        }
}

static int verb_run(int argc, char *argv[], bool installed) {
        static const struct option options[] = {
                { "script", required_argument, NULL, 's' },
                { "input",  required_argument, NULL, 'i' },
                { "limit",  required_argument, NULL, 'l' },
                { "env",    required_argument, NULL, 'e' },
                { "file",   required_argument, NULL, 'f' },
                { "stdout", no_argument,       NULL, 'o' },
                { "stderr", no_argument,       NULL, 'E' },
                { "wait",   no_argument,       NULL, 'w' },
                {}
        };
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(test_client_done) TestClient client = {};
        _cleanup_strv_free_ char **limits = NULL, **env = NULL, **files = NULL;
        _cleanup_close_pair_ int out[2] = { -EBADF, -EBADF }, err[2] = { -EBADF, -EBADF };
        _cleanup_close_ int skill_fd = -EBADF;
        const char *script = "", *input = "", *id, *path;
        bool want_out = false, want_err = false, wait = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        script = optarg;
                        break;
                case 'i':
                        input = optarg;
                        break;
                case 'l':
                        if (strv_extend(&limits, optarg) < 0)
                                return EXIT_FAILURE;
                        break;
                case 'e':
                        if (strv_extend(&env, optarg) < 0)
                                return EXIT_FAILURE;
                        break;
                case 'f':
                        if (strv_extend(&files, optarg) < 0)
                                return EXIT_FAILURE;
                        break;
                case 'o':
                        want_out = true;
                        break;
                case 'E':
                        want_err = true;
                        break;
                case 'w':
                        wait = true;
                        break;
                default:
                        return EXIT_FAILURE;
                }
        if (optind >= argc) {
                fprintf(stderr, "missing skill\n");
                return EXIT_FAILURE;
        }

        r = test_client_connect(&client, arg_address);
        if (r < 0)
                return fail_error(NULL, r);
        r = test_client_new_call(&client, NULL, installed ? "RunInstalled" : "Run", &m);
        if (r < 0)
                return fail_error(NULL, r);
        if (installed)
                r = sd_bus_message_append(m, "ss", argv[optind], script);
        else {
                skill_fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
                if (skill_fd < 0)
                        return fail_error(NULL, -errno);
                r = sd_bus_message_append(m, "hs", skill_fd, script);
        }
        if (r >= 0)
                r = sd_bus_message_append_strv(m, argv + optind + 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", input);
        if (r >= 0 && want_out && pipe2(out, O_CLOEXEC) < 0)
                r = -errno;
        if (r >= 0 && want_err && pipe2(err, O_CLOEXEC) < 0)
                r = -errno;
        if (r >= 0)
                r = append_options(m, limits, env, files, out[1], err[1]);
        if (r < 0)
                return fail_error(NULL, r);

        r = sd_bus_call(client.bus, m, 120 * 1000000ULL, &error, &reply);
        /* The message holds copies of the fds passed: ours must be gone for EOF to come. */
        m = sd_bus_message_unref(m);
        if (r < 0)
                return fail_error(&error, r);
        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return fail_error(NULL, r);
        printf("%s\n", id);
        fflush(stdout);

        /* Only the service's copies of the write ends remain: EOF means the output is complete. */
        out[1] = safe_close(out[1]);
        err[1] = safe_close(err[1]);
        if (want_out || want_err)
                relay(TAKE_FD(out[0]), TAKE_FD(err[0]));
        if (wait)
                return wait_run(&client, id, false);
        return EXIT_SUCCESS;
}

static int call_fd(const char *method, const char *id, const char *arg) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(test_client_done) TestClient client = {};
        _cleanup_free_ char *path = test_client_run_path(id), *data = NULL;
        size_t size = 0;
        int fd, r;

        r = path ? test_client_connect(&client, arg_address) : -ENOMEM;
        if (r < 0)
                return fail_error(NULL, r);
        r = sd_bus_call_method(client.bus, client.destination, path, TEST_CLIENT_RUN, method, &error, &reply,
                               "s", arg);
        if (r < 0)
                return fail_error(&error, r);
        r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0)
                r = read_full_fd(fd, 64 * 1024 * 1024, &data, &size);
        if (r < 0)
                return fail_error(NULL, r);
        (void) loop_write(STDOUT_FILENO, data, size);
        return EXIT_SUCCESS;
}

static int verb_install(int argc, char *argv[]) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(test_client_done) TestClient client = {};
        _cleanup_close_ int fd = -EBADF;
        const char *name, *hash;
        int r;

        if (argc < 2)
                return EXIT_FAILURE;
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail_error(NULL, -errno);
        r = test_client_connect(&client, arg_address);
        if (r < 0)
                return fail_error(NULL, r);
        r = sd_bus_call_method(client.bus, client.destination, TEST_CLIENT_PATH, TEST_CLIENT_MANAGER,
                               "InstallSkill", &error, &reply, "hb", fd,
                               argc > 2 && streq(argv[2], "--replace"));
        if (r < 0)
                return fail_error(&error, r);
        r = sd_bus_message_read(reply, "ss", &name, &hash);
        if (r < 0)
                return fail_error(NULL, r);
        printf("%s %s\n", name, hash);
        return EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        (void) signal(SIGPIPE, SIG_IGN);

        if (argc > 2 && streq(argv[1], "--address")) {
                arg_address = argv[2];
                argc -= 2;
                argv += 2;
        }
        if (argc < 2) {
                fprintf(stderr, "usage: skilld-call [--address ADDR] "
                                "run|run-installed|wait|artifact|log|install ...\n");
                return EXIT_FAILURE;
        }
        if (streq(argv[1], "run"))
                return verb_run(argc - 1, argv + 1, false);
        if (streq(argv[1], "run-installed"))
                return verb_run(argc - 1, argv + 1, true);
        if (streq(argv[1], "install"))
                return verb_install(argc - 1, argv + 1);
        if (streq(argv[1], "wait") && argc == 3) {
                _cleanup_(test_client_done) TestClient client = {};
                int r = test_client_connect(&client, arg_address);

                return r < 0 ? fail_error(NULL, r) : wait_run(&client, argv[2], true);
        }
        if (streq(argv[1], "artifact") && argc == 4)
                return call_fd("OpenArtifact", argv[2], argv[3]);
        if (streq(argv[1], "log") && argc == 4)
                return call_fd("OpenLog", argv[2], argv[3]);
        fprintf(stderr, "unknown command\n");
        return EXIT_FAILURE;
}
