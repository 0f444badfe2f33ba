/* Tests for skilld/daemon/caller-uids: on a private dbus-daemon, a service connection with the
 * filter and a client connection in the same process. Asserted: a new sender's calls reach their
 * handler with its uid already known (no synchronous question in the handler), in the order they
 * were sent, even pipelined; the calls of a sender that left before the bus answered are dropped;
 * freeing the filter with calls held leaves nothing behind. */
#include "caller-uids.h"
#include "test-bus.h"

#define TEST_NAME "io.skilld.Test"
#define TEST_PATH "/io/skilld/Test"
#define N_CALLS 5U

static TestBus test_bus;
static sd_event *event;
static sd_bus *service;
static CallerUids *uids;

static unsigned n_dispatch;
static uint32_t order[N_CALLS];
static bool remembered[N_CALLS];
static unsigned n_replies;

static int method_echo(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t i;
        uid_t uid;
        int r;

        r = sd_bus_message_read(m, "u", &i);
        if (r < 0)
                return r;
        if (n_dispatch < N_CALLS) {
                order[n_dispatch] = i;
                remembered[n_dispatch] = bus_caller_uid_remembered(m);
        }
        n_dispatch++;
        r = bus_caller_uid(m, &uid, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "u", (uint32_t) uid);
}

static const sd_bus_vtable vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Echo", "u", "u", method_echo, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static void setup(void) {
        ck_assert_int_eq(sd_event_new(&event), 0);
        test_bus_start(&test_bus);
        service = test_bus_connect(&test_bus, event);
        ck_assert_int_eq(sd_bus_add_object_vtable(service, NULL, TEST_PATH, TEST_NAME, vtable, NULL), 0);
        ck_assert_int_ge(sd_bus_request_name(service, TEST_NAME, 0), 0);
        ck_assert_int_eq(caller_uids_new(service, &uids), 0);
        n_dispatch = n_replies = 0;
}

static void teardown(void) {
        uids = caller_uids_free(uids);
        bus_caller_cache_flush(service);
        service = sd_bus_flush_close_unref(service);
        event = sd_event_unref(event);
        test_bus_stop(&test_bus);
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t uid;

        ck_assert_msg(!sd_bus_message_is_method_error(m, NULL), "%s", sd_bus_message_get_error(m)->message);
        ck_assert_int_gt(sd_bus_message_read(m, "u", &uid), 0);
        ck_assert_uint_eq(uid, getuid());
        n_replies++;
        return 0;
}

/* Echo(i), sent at once; on_reply, or no callback (the reply ignored). */
static void send_echo(sd_bus *client, uint32_t i, sd_bus_message_handler_t callback) {
        ck_assert_int_ge(sd_bus_call_method_async(client, NULL, TEST_NAME, TEST_PATH, TEST_NAME, "Echo",
                                                  callback, NULL, "u", i), 0);
        ck_assert_int_ge(sd_bus_flush(client), 0);
}

static bool all_replied(void *userdata) {
        return n_replies == N_CALLS;
}

static bool none_held(void *userdata) {
        return caller_uids_pending(uids) == 0;
}

static bool some_held(void *userdata) {
        return caller_uids_pending(uids) > 0;
}

/* Sent all at once, before the service reads any: the first is held for the uid, the others wait
 * behind it, and all reach the handler in order with the uid remembered. */
START_TEST(test_pipelined_calls_in_order) {
        sd_bus *client = test_bus_connect(&test_bus, event);

        for (uint32_t i = 0; i < N_CALLS; i++)
                send_echo(client, i, on_reply);

        test_event_run_until(event, all_replied, NULL);
        ck_assert_uint_eq(n_dispatch, N_CALLS);
        for (unsigned i = 0; i < N_CALLS; i++) {
                ck_assert_uint_eq(order[i], i);
                ck_assert_msg(remembered[i], "call %u reached its handler with the uid unknown", i);
        }
        ck_assert_uint_eq(caller_uids_pending(uids), 0);
        sd_bus_flush_close_unref(client);
}
END_TEST

/* A sender that is gone when the bus is asked: its call is dropped, never dispatched. */
START_TEST(test_gone_sender_dropped) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *client = test_bus_connect(&test_bus, event);
        _cleanup_free_ char *name = NULL;
        const char *unique;

        ck_assert_int_ge(sd_bus_get_unique_name(client, &unique), 0);
        name = strdup(unique);
        send_echo(client, 0, NULL);
        client = sd_bus_flush_close_unref(client);

        /* Until the bus has seen it leave. The service's own call reads the waiting Echo into its
         * queue without dispatching it. */
        for (;;) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                sd_bus_error_free(&e);
                if (sd_bus_call_method(service, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetNameOwner", &e, &reply, "s", name) < 0)
                        break;
                ck_assert_int_eq(usleep(1000), 0);
        }
        ck_assert_str_eq(e.name, "org.freedesktop.DBus.Error.NameHasNoOwner");

        test_event_run_until(event, some_held, NULL);
        test_event_run_until(event, none_held, NULL);
        test_event_settle(event);
        ck_assert_uint_eq(n_dispatch, 0);
}
END_TEST

/* Freed with a call held: nothing is dispatched afterwards, nothing leaks (the sanitizer runs). */
START_TEST(test_freed_while_held) {
        sd_bus *client = test_bus_connect(&test_bus, event);

        send_echo(client, 0, NULL);
        test_event_run_until(event, some_held, NULL);
        uids = caller_uids_free(uids);
        test_event_settle(event);
        ck_assert_uint_eq(n_dispatch, 0);
        sd_bus_flush_close_unref(client);
}
END_TEST

/* A caller the service already knows is not held. */
START_TEST(test_known_caller_not_held) {
        sd_bus *client = test_bus_connect(&test_bus, event);

        send_echo(client, 0, on_reply);
        test_event_run_until(event, some_held, NULL);
        test_event_run_until(event, none_held, NULL);
        while (n_replies < 1)
                ck_assert_int_ge(sd_event_run(event, TEST_BUS_TIMEOUT_USEC), 0);

        send_echo(client, 1, on_reply);
        while (n_replies < 2) {
                ck_assert_int_ge(sd_event_run(event, TEST_BUS_TIMEOUT_USEC), 0);
                ck_assert_uint_eq(caller_uids_pending(uids), 0);
        }
        ck_assert(remembered[1]);
        sd_bus_flush_close_unref(client);
}
END_TEST

static Suite *caller_uids_suite(void) {
        Suite *s = suite_create("caller-uids");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_pipelined_calls_in_order);
        tcase_add_test(tc, test_gone_sender_dropped);
        tcase_add_test(tc, test_freed_while_held);
        tcase_add_test(tc, test_known_caller_not_held);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_bus_suite(caller_uids_suite);
}
