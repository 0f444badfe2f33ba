/* What the tests' own clients of io.skilld.Skilld1 share (tests/daemon/skilld-call.c and the
 * hostile tests/security/daemon/skilld-abuse.c): reaching the service as skillctl does, over the
 * system bus or straight on its private socket, where there are no bus names and passing fds must
 * be negotiated; building calls; the entries of Run()'s a{sv} options; and printing a D-Bus error
 * as the VM tests read it, "ERROR.NAME: message". Header-only and without check: the clients are
 * plain programs. */
#pragma once

#include <stdio.h>
#include <systemd/sd-bus.h>

#include "util.h"

#define TEST_CLIENT_PATH "/io/skilld/Skilld1"
#define TEST_CLIENT_MANAGER "io.skilld.Skilld1.Manager"
#define TEST_CLIENT_RUN "io.skilld.Skilld1.Run"

typedef struct TestClient {
        sd_bus *bus;
        const char *destination;        /* NULL on a direct connection */
} TestClient;

/* address NULL: the system bus (DBUS_SYSTEM_BUS_ADDRESS), else a direct connection to it, as to
 * unix:path=/run/skilld/bus. */
static inline int test_client_connect(TestClient *c, const char *address) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (!address) {
                r = sd_bus_open_system(&bus);
                if (r < 0)
                        return r;
                c->bus = TAKE_PTR(bus);
                c->destination = "io.skilld.Skilld1";
                return 0;
        }
        r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, address);
        if (r >= 0)
                r = sd_bus_negotiate_fds(bus, 1);
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r < 0)
                return r;
        c->bus = TAKE_PTR(bus);
        c->destination = NULL;
        return 0;
}

static inline void test_client_done(TestClient *c) {
        c->bus = sd_bus_flush_close_unref(c->bus);
}

/* A method call on the Manager (path NULL) or on the object at path. */
static inline int test_client_new_call(const TestClient *c, const char *path, const char *member,
                                       sd_bus_message **ret) {
        return sd_bus_message_new_method_call(c->bus, ret, c->destination, path ?: TEST_CLIENT_PATH,
                                              path ? TEST_CLIENT_RUN : TEST_CLIENT_MANAGER, member);
}

static inline char *test_client_run_path(const char *id) {
        return strdup_printf(TEST_CLIENT_PATH "/run/%s", id);
}

/* "ERROR.NAME: message" when the service answered with an error, else "error: " and errno's. */
static inline void test_client_print_error(FILE *f, const sd_bus_error *e, int r) {
        if (e && sd_bus_error_is_set(e))
                fprintf(f, "%s: %s\n", e->name, strna(e->message));
        else
                fprintf(f, "error: %s\n", strerror(-r));
}

/* Opens the options entry key, holding a variant of the given signature, and when that is an
 * array the array itself: what follows appends its elements. */
static inline int test_client_open_option(sd_bus_message *m, const char *key, const char *signature) {
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', signature);
        if (r >= 0 && signature[0] == 'a')
                r = sd_bus_message_open_container(m, 'a', signature + 1);
        return r;
}

static inline int test_client_close_option(sd_bus_message *m, const char *signature) {
        int r = 0;

        for (int i = signature[0] == 'a' ? 3 : 2; r >= 0 && i > 0; i--)
                r = sd_bus_message_close_container(m);
        return r;
}
