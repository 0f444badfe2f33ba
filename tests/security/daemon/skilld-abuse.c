/* skilld-abuse: a hostile client of io.skilld.Skilld1 for the daemon's adversarial VM cases
 * (tests/vm/tests.d/7*-security-daemon-*.sh), sending what neither busctl nor skilld-call can:
 *
 *   skilld-abuse [--address ADDR] huge-input BYTES SKILL     Run with an input string of BYTES
 *   skilld-abuse [--address ADDR] deep-variant DEPTH SKILL   Run whose "limits" option is a
 *                                                            variant nested DEPTH levels deep
 *   skilld-abuse [--address ADDR] socket-skill               Run with a socket fd as the skill
 *   skilld-abuse [--address ADDR] flood COUNT BYTES          COUNT GetRun calls with a BYTES long
 *                                                            id, never reading a reply, then
 *                                                            sleeping until killed
 *
 * The calls print the error the daemon answered as "ERROR.NAME: message" on stdout (exit 0), or
 * "accepted ID" (exit 2): the tests decide what is right. --address: a direct connection (the
 * private socket); default the system bus. */
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "fileio.h"
#include "parse-util.h"
#include "test-client.h"

/* Run(h skill, s script, as args, s input, a{sv} options), the caller filling input and options. */
static int new_run(const TestClient *c, int skill_fd, const char *input, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = test_client_new_call(c, NULL, "Run", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "hsass", skill_fd, "", 0, input);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int call_and_print(const TestClient *c, sd_bus_message *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *id;
        int r;

        r = sd_bus_call(c->bus, m, 300 * 1000000ULL, &error, &reply);
        if (r < 0) {
                test_client_print_error(stdout, &error, r);
                return EXIT_SUCCESS;
        }
        if (sd_bus_message_read(reply, "s", &id) < 0)
                id = "?";
        printf("accepted %s\n", id);
        return 2;
}

static int open_skill(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return fd;
}

static int verb_huge_input(const TestClient *c, uint64_t bytes, const char *skill) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open_skill(skill);
        _cleanup_free_ char *input = NULL;
        int r;

        if (fd < 0)
                return EXIT_FAILURE;
        /* A JSON string: valid all along, only too long. */
        input = malloc(bytes + 1);
        if (!input)
                return EXIT_FAILURE;
        memset(input, 'a', bytes);
        input[0] = '"';
        input[bytes - 1] = '"';
        input[bytes] = '\0';
        r = new_run(c, fd, input, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0) {
                fprintf(stderr, "building the message: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        return call_and_print(c, m);
}

static int verb_deep_variant(const TestClient *c, unsigned depth, const char *skill) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open_skill(skill);
        unsigned opened = 0;
        int r;

        if (fd < 0)
                return EXIT_FAILURE;
        r = new_run(c, fd, "", &m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "limits");
        for (; r >= 0 && opened + 1 < depth; opened++)
                r = sd_bus_message_open_container(m, 'v', "v");
        if (r >= 0)
                r = sd_bus_message_append(m, "v", "t", UINT64_C(1));
        for (; r >= 0 && opened > 0; opened--)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0) {
                /* sd-bus itself refused to build it: say so, the test decides. */
                printf("unbuildable: %s\n", strerror(-r));
                return EXIT_SUCCESS;
        }
        return call_and_print(c, m);
}

static int verb_socket_skill(const TestClient *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_pair_ int pair[2] = { -EBADF, -EBADF };
        int r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return EXIT_FAILURE;
        /* What a zip reader would look for first, should the daemon read it anyway. */
        (void) loop_write(pair[1], "PK\003\004", 4);
        r = new_run(c, pair[0], "", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0)
                return EXIT_FAILURE;
        return call_and_print(c, m);
}

static int verb_flood(const TestClient *c, uint64_t count, uint64_t bytes) {
        _cleanup_free_ char *id = NULL;
        uint64_t sent = 0;

        id = malloc(bytes + 1);
        if (!id)
                return EXIT_FAILURE;
        memset(id, 'f', bytes);
        id[bytes] = '\0';
        for (; sent < count; sent++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                int r;

                r = test_client_new_call(c, NULL, "GetRun", &m);
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", id);
                if (r >= 0)
                        r = sd_bus_send(c->bus, m, NULL);
                if (r < 0) {
                        printf("stopped after %" PRIu64 ": %s\n", sent, strerror(-r));
                        break;
                }
                /* Write what we can, never read: the replies pile up on the daemon's side. */
                (void) sd_bus_flush(c->bus);
        }
        if (sent == count)
                printf("sent %" PRIu64 "\n", sent);
        fflush(stdout);
        for (;;)
                pause();
}

int main(int argc, char *argv[]) {
        _cleanup_(test_client_done) TestClient client = {};
        const char *arg_address = NULL;
        uint64_t a = 0, b = 0;
        int r;

        if (argc > 2 && streq(argv[1], "--address")) {
                arg_address = argv[2];
                argc -= 2;
                argv += 2;
        }
        if (argc < 2) {
                fprintf(stderr, "usage: skilld-abuse [--address ADDR] "
                                "huge-input|deep-variant|socket-skill|flood ...\n");
                return EXIT_FAILURE;
        }
        r = test_client_connect(&client, arg_address);
        if (r < 0) {
                fprintf(stderr, "connecting: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (streq(argv[1], "huge-input") && argc == 4 && safe_atou64(argv[2], &a) >= 0 && a >= 2)
                return verb_huge_input(&client, a, argv[3]);
        if (streq(argv[1], "deep-variant") && argc == 4 && safe_atou64(argv[2], &a) >= 0 && a >= 1 &&
            a <= 1024)
                return verb_deep_variant(&client, (unsigned) a, argv[3]);
        if (streq(argv[1], "socket-skill") && argc == 2)
                return verb_socket_skill(&client);
        if (streq(argv[1], "flood") && argc == 4 && safe_atou64(argv[2], &a) >= 0 &&
            safe_atou64(argv[3], &b) >= 0 && b >= 1)
                return verb_flood(&client, a, b);
        fprintf(stderr, "unknown command\n");
        return EXIT_FAILURE;
}
