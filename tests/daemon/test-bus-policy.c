/* Tests dbus/io.skilld.Skilld1.conf in a real dbus-daemon: a bus with the defaults of Debian's
 * system.conf (deny own and method calls, allow replies and signals) that includes our file. Root
 * owns the name and serves the two interfaces plus one outside the whitelist; an ordinary user
 * may call the two interfaces, read properties, introspect and ping, and nothing else: not own the
 * name, not set a property, not reach the other interface. Needs root (to be root and nobody on
 * one bus); skipped otherwise. */
#include <grp.h>

#include "test-bus.h"

#define NOBODY 65534
#define NAME "io.skilld.Skilld1"
#define PATH "/io/skilld/Skilld1"
#define MANAGER NAME ".Manager"
#define PROPERTIES "org.freedesktop.DBus.Properties"

static TestBus test_bus;
static sd_event *event;
static sd_bus *service;

static int method_ping(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "s", "pong");
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", "0.1.0");
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Ping", "", "s", method_ping, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

/* An interface the bus policy does not list: the bus must keep callers away from it. */
static const sd_bus_vtable debug_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Ping", "", "s", method_ping, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static void setup(void) {
        _cleanup_free_ char *conf = test_source_path("dbus/io.skilld.Skilld1.conf");
        _cleanup_free_ char *policy = strdup_printf(
                "  <policy context=\"default\">\n"
                "    <allow user=\"*\"/>\n"
                "    <deny own=\"*\"/>\n"
                "    <deny send_type=\"method_call\"/>\n"
                "    <allow send_type=\"signal\"/>\n"
                "    <allow send_requested_reply=\"true\" send_type=\"method_return\"/>\n"
                "    <allow send_requested_reply=\"true\" send_type=\"error\"/>\n"
                "    <allow receive_type=\"method_call\"/>\n"
                "    <allow receive_type=\"method_return\"/>\n"
                "    <allow receive_type=\"error\"/>\n"
                "    <allow receive_type=\"signal\"/>\n"
                "    <allow send_destination=\"org.freedesktop.DBus\"\n"
                "           send_interface=\"org.freedesktop.DBus\"/>\n"
                "  </policy>\n"
                "  <include ignore_missing=\"no\">%s</include>\n", conf);

        ck_assert_ptr_nonnull(policy);
        ck_assert_int_eq(sd_event_new(&event), 0);
        test_bus_start_with(&test_bus, policy);

        service = test_bus_connect(&test_bus, event);
        ck_assert_int_ge(sd_bus_add_object_vtable(service, NULL, PATH, NAME ".Manager", manager_vtable,
                                                  NULL), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(service, NULL, PATH, NAME ".Debug", debug_vtable, NULL),
                         0);
        ck_assert_int_ge(sd_bus_request_name(service, NAME, 0), 0);
}

static void teardown(void) {
        service = sd_bus_flush_close_unref(service);
        event = sd_event_unref(event);
        test_bus_stop(&test_bus);
}

/* In a child, as nobody: each probe prints "what=ok" or "what=ERROR.NAME". */
_noreturn_ static void prober(int out_fd) {
        sd_bus *bus = NULL;

        if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
            setresuid(NOBODY, NOBODY, NOBODY) < 0)
                _exit(2);
        if (sd_bus_new(&bus) < 0 || sd_bus_set_address(bus, test_bus.address) < 0 ||
            sd_bus_set_bus_client(bus, true) < 0 || sd_bus_start(bus) < 0)
                _exit(3);

#define PROBE(what, call)                                                               \
        do {                                                                            \
                sd_bus_error _e = SD_BUS_ERROR_NULL;                                    \
                sd_bus_message *_reply = NULL;                                          \
                int _r = (call);                                                        \
                dprintf(out_fd, "%s=%s\n", what, _r >= 0 ? "ok" : strna(_e.name));     \
                sd_bus_error_free(&_e);                                                 \
                sd_bus_message_unref(_reply);                                           \
        } while (0)

        PROBE("manager", sd_bus_call_method(bus, NAME, PATH, MANAGER, "Ping", &_e, &_reply, ""));
        PROBE("get", sd_bus_call_method(bus, NAME, PATH, PROPERTIES, "Get", &_e, &_reply,
                                        "ss", MANAGER, "Version"));
        PROBE("getall", sd_bus_call_method(bus, NAME, PATH, PROPERTIES, "GetAll", &_e, &_reply,
                                           "s", MANAGER));
        PROBE("set", sd_bus_call_method(bus, NAME, PATH, PROPERTIES, "Set", &_e, &_reply,
                                        "ssv", MANAGER, "Version", "s", "9"));
        PROBE("introspect", sd_bus_call_method(bus, NAME, PATH, "org.freedesktop.DBus.Introspectable",
                                               "Introspect", &_e, &_reply, ""));
        PROBE("peer", sd_bus_call_method(bus, NAME, PATH, "org.freedesktop.DBus.Peer", "Ping", &_e, &_reply,
                                         ""));
        PROBE("debug", sd_bus_call_method(bus, NAME, PATH, NAME ".Debug", "Ping", &_e, &_reply, ""));
        /* Asked directly: sd_bus_request_name() would not tell a refusal from a queued request. */
        PROBE("own", sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus", "RequestName", &_e, &_reply,
                                        "su", NAME, 4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */));
        _exit(0);
}

static bool child_done;

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char *buf = userdata;
        size_t n = strlen(buf);
        ssize_t k;

        k = read(fd, buf + n, 4095 - n);
        if (k <= 0) {
                child_done = true;
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        }
        buf[n + k] = 0;
        return 0;
}

static bool is_done(void *userdata) {
        return child_done;
}

START_TEST(test_bus_policy) {
        _cleanup_(sd_event_source_unrefp) sd_event_source *source = NULL;
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        char out[4096] = {};
        int status;
        pid_t pid;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                prober(p[1]);
        p[1] = safe_close(p[1]);

        ck_assert_int_eq(sd_event_add_io(event, &source, p[0], EPOLLIN, on_output, out), 0);
        test_event_run_until(event, is_done, NULL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "prober failed: %d", status);

        ck_assert_msg(strstr(out, "manager=ok\n"), "%s", out);
        ck_assert_msg(strstr(out, "get=ok\n"), "%s", out);
        ck_assert_msg(strstr(out, "getall=ok\n"), "%s", out);
        ck_assert_msg(strstr(out, "set=org.freedesktop.DBus.Error.AccessDenied\n"), "%s", out);
        ck_assert_msg(strstr(out, "introspect=ok\n"), "%s", out);
        ck_assert_msg(strstr(out, "peer=ok\n"), "%s", out);
        ck_assert_msg(strstr(out, "debug=org.freedesktop.DBus.Error.AccessDenied\n"), "%s", out);
        ck_assert_msg(strstr(out, "own=org.freedesktop.DBus.Error.AccessDenied\n"), "%s", out);
}
END_TEST

/* Root, by contrast, reaches everything of the service. */
static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);

        *(char **) userdata = strdup(e ? e->name : "ok");
        return 0;
}

static bool have_reply(void *userdata) {
        return *(char **) userdata != NULL;
}

START_TEST(test_root_unrestricted) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_free_ char *result = NULL;
        sd_bus *client = test_bus_connect(&test_bus, event);

        ck_assert_int_ge(sd_bus_call_method_async(client, &slot, NAME, PATH, NAME ".Debug", "Ping", on_reply,
                                                  &result, ""), 0);
        test_event_run_until(event, have_reply, &result);
        ck_assert_str_eq(result, "ok");
        slot = sd_bus_slot_unref(slot);
        client = sd_bus_flush_close_unref(client);
}
END_TEST

static Suite *bus_policy_suite(void) {
        Suite *s = suite_create("bus-policy");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_bus_policy);
        tcase_add_test(tc, test_root_unrestricted);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        if (geteuid() != 0) {
                fprintf(stderr, "needs root to put root and nobody on one bus, skipping\n");
                return 77;
        }
        return test_run_bus_suite(bus_policy_suite);
}
