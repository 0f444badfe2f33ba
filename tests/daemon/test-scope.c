/* Tests for scope.c against a fake org.freedesktop.systemd1 on a private bus: the properties of
 * StartTransientUnit (names and types as systemd 252 exports them), waiting for the job's
 * JobRemoved whether it comes after the reply or, on a connection that does not order them,
 * before it; refusals; and stopping the leftovers of a killed service. */
#include <signal.h>

#include "scope.h"
#include "test-bus.h"

typedef struct FakeSystemd {
        sd_bus *bus;
        char **properties;              /* "Name=value" as received */
        char *unit;
        char *mode;
        const char *result;             /* the job result to announce */
        bool early;                     /* JobRemoved before the reply */
        bool refuse;
        char **stopped;
        unsigned jobs;
} FakeSystemd;

static TestBus test_bus;
static sd_event *event;
static FakeSystemd fake;

static int record_property(sd_bus_message *m) {
        const char *name, *contents;
        char type;
        char *entry = NULL;
        int r;

        r = sd_bus_message_read(m, "s", &name);
        if (r <= 0)
                return r;
        r = sd_bus_message_peek_type(m, &type, &contents);
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', contents), 0);
        if (streq(contents, "s")) {
                const char *v;

                ck_assert_int_ge(sd_bus_message_read(m, "s", &v), 0);
                entry = strdup_printf("%s=%s", name, v);
        } else if (streq(contents, "t")) {
                uint64_t v;

                ck_assert_int_ge(sd_bus_message_read(m, "t", &v), 0);
                entry = strdup_printf("%s=%" PRIu64, name, v);
        } else if (streq(contents, "b")) {
                int v;

                ck_assert_int_ge(sd_bus_message_read(m, "b", &v), 0);
                entry = strdup_printf("%s=%s", name, v ? "yes" : "no");
        } else if (streq(contents, "i")) {
                int32_t v;

                ck_assert_int_ge(sd_bus_message_read(m, "i", &v), 0);
                entry = strdup_printf("%s=%" PRIi32, name, v);
        } else if (streq(contents, "au")) {
                uint32_t pid;
                char *list = strdup_printf("%s=", name);

                ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "u"), 0);
                while (sd_bus_message_read(m, "u", &pid) > 0) {
                        char *n = strdup_printf("%s%s%" PRIu32, list,
                                                list[strlen(list) - 1] == '=' ? "" : " ", pid);

                        free(list);
                        list = n;
                }
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                entry = list;
        } else
                ck_abort_msg("unexpected property type %s of %s", contents, name);
        ck_assert_ptr_nonnull(entry);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        ck_assert_int_ge(strv_push(&fake.properties, entry), 0);
        return 1;
}

static int fake_start_transient_unit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *job = NULL;
        const char *unit, *mode;
        int r;

        ck_assert_int_ge(sd_bus_message_read(m, "ss", &unit, &mode), 0);
        fake.unit = strdup(unit);
        fake.mode = strdup(mode);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(sv)"), 0);
        while ((r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                ck_assert_int_eq(record_property(m), 1);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);

        if (fake.refuse)
                return sd_bus_error_setf(error, "org.freedesktop.systemd1.UnitExists",
                                         "Unit %s already exists.", unit);

        job = strdup_printf("/org/freedesktop/systemd1/job/%u", ++fake.jobs);
        if (fake.early)
                ck_assert_int_ge(sd_bus_emit_signal(fake.bus, "/org/freedesktop/systemd1",
                                                    "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss",
                                                    fake.jobs, job, unit, fake.result), 0);
        /* Another job's end first: it must not be taken for ours. */
        ck_assert_int_ge(sd_bus_emit_signal(fake.bus, "/org/freedesktop/systemd1",
                                            "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss", 999U,
                                            "/org/freedesktop/systemd1/job/999", "other.service", "failed"),
                         0);
        ck_assert_int_ge(sd_bus_reply_method_return(m, "o", job), 0);
        if (!fake.early)
                ck_assert_int_ge(sd_bus_emit_signal(fake.bus, "/org/freedesktop/systemd1",
                                                    "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss",
                                                    fake.jobs, job, unit, fake.result), 0);
        return 1;
}

static int fake_list_units(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_strv_free_ char **states = NULL, **patterns = NULL;

        ck_assert_int_ge(sd_bus_message_read_strv(m, &states), 0);
        ck_assert_int_ge(sd_bus_message_read_strv(m, &patterns), 0);
        ck_assert_uint_eq(strv_length(states), 0);
        ck_assert_uint_eq(strv_length(patterns), 1);
        ck_assert_str_eq(patterns[0], SCOPE_UNIT_PATTERN);

        ck_assert_int_ge(sd_bus_message_new_method_return(m, &reply), 0);
        ck_assert_int_ge(sd_bus_message_append(reply, "a(ssssssouso)", 2,
                                               "skilld-run-1.scope", "", "loaded", "active", "running", "",
                                               "/x/1", 0U, "", "/",
                                               "skilld-run-2.scope", "", "loaded", "failed", "failed", "",
                                               "/x/2", 0U, "", "/"), 0);
        return sd_bus_send(NULL, reply, NULL);
}

static int fake_stop_unit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *unit, *mode;

        ck_assert_int_ge(sd_bus_message_read(m, "ss", &unit, &mode), 0);
        ck_assert_str_eq(mode, "replace");
        ck_assert_int_ge(strv_extend(&fake.stopped, unit), 0);
        return sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/1");
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", fake_start_transient_unit, 0),
        SD_BUS_METHOD("ListUnitsByPatterns", "asas", "a(ssssssouso)", fake_list_units, 0),
        SD_BUS_METHOD("StopUnit", "ss", "o", fake_stop_unit, 0),
        SD_BUS_VTABLE_END
};

static void setup(void) {
        test_bus_start(&test_bus);
        ck_assert_int_ge(sd_event_new(&event), 0);
        fake = (FakeSystemd) { .result = "done" };
        fake.bus = test_bus_connect(&test_bus, event);
        ck_assert_int_ge(sd_bus_add_object_vtable(fake.bus, NULL, "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", fake_vtable, NULL), 0);
        ck_assert_int_ge(sd_bus_request_name(fake.bus, "org.freedesktop.systemd1", 0), 0);
}

static void teardown(void) {
        fake.bus = sd_bus_flush_close_unref(fake.bus);
        strv_free(fake.properties);
        strv_free(fake.stopped);
        free(fake.unit);
        free(fake.mode);
        event = sd_event_unref(event);
        test_bus_stop(&test_bus);
}

typedef struct Outcome {
        bool done;
        int r;
        char *result;
        char *message;
} Outcome;

static void on_job(ScopeJob *job, int r, const char *result, const char *message, void *userdata) {
        Outcome *o = userdata;

        ck_assert(!o->done);
        o->done = true;
        o->r = r;
        o->result = result ? strdup(result) : NULL;
        o->message = message ? strdup(message) : NULL;
}

static bool outcome_done(void *userdata) {
        return ((Outcome *) userdata)->done;
}

static const ScopeParams params = {
        .unit = "skilld-run-0123456789abcdef0123456789abcdef.scope",
        .slice = SCOPE_SLICE,
        .description = "skilld run 0123 of skill demo (uid 1000)",
        .pids = (const pid_t[]) { 4242, 4243 },
        .n_pids = 2,
        .memory_max = 64ULL << 20,
        .tasks_max = 33,
        .cpu_quota_per_sec_usec = 500000,
        .runtime_max_usec = 120000000,
};

static void start_and_wait(Outcome *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, event);
        _cleanup_(scope_job_freep) ScopeJob *job = NULL;

        ck_assert_int_eq(scope_start(bus, &params, on_job, o, &job), 0);
        test_event_run_until(event, outcome_done, o);
        /* Nothing more arrives for a finished job. */
        test_event_settle(event);
}

static void outcome_done_free(Outcome *o) {
        free(o->result);
        free(o->message);
}

START_TEST(test_properties_and_done) {
        Outcome o = {};

        start_and_wait(&o);
        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "done");
        ck_assert_str_eq(fake.unit, params.unit);
        ck_assert_str_eq(fake.mode, "fail");

        {
                const char *expected[] = {
                        "Description=skilld run 0123 of skill demo (uid 1000)",
                        "Slice=skilld.slice",
                        "PIDs=4242 4243",
                        "MemoryAccounting=yes",
                        "TasksAccounting=yes",
                        "CPUAccounting=yes",
                        "MemoryMax=67108864",
                        "MemorySwapMax=0",
                        "TasksMax=33",
                        "CPUQuotaPerSecUSec=500000",
                        "RuntimeMaxUSec=120000000",
                        "KillSignal=9",
                        "OOMPolicy=continue",
                        "CollectMode=inactive-or-failed",
                };

                ck_assert_uint_eq(strv_length(fake.properties), ELEMENTSOF(expected));
                for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                        ck_assert_str_eq(fake.properties[i], expected[i]);
        }
        outcome_done_free(&o);
}
END_TEST

START_TEST(test_signal_before_reply) {
        Outcome o = {};

        fake.early = true;
        start_and_wait(&o);
        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "done");
        outcome_done_free(&o);
}
END_TEST

START_TEST(test_job_failed) {
        Outcome o = {};

        fake.result = "failed";
        start_and_wait(&o);
        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "failed");
        outcome_done_free(&o);
}
END_TEST

START_TEST(test_refused) {
        Outcome o = {};

        fake.refuse = true;
        start_and_wait(&o);
        ck_assert_int_lt(o.r, 0);
        ck_assert_ptr_null(o.result);
        ck_assert_ptr_nonnull(strstr(o.message, "already exists"));
        outcome_done_free(&o);
}
END_TEST

static bool two_stopped(void *userdata) {
        return strv_length(fake.stopped) == 2;
}

START_TEST(test_stop_leftovers) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = test_bus_connect(&test_bus, event);

        ck_assert_int_eq(scope_stop_matching(bus, SCOPE_UNIT_PATTERN), 0);
        test_event_run_until(event, two_stopped, NULL);
        ck_assert_str_eq(fake.stopped[0], "skilld-run-1.scope");
        ck_assert_str_eq(fake.stopped[1], "skilld-run-2.scope");
        test_event_settle(event);
}
END_TEST

START_TEST(test_unit_name) {
        _cleanup_free_ char *n = scope_unit_name("0123456789abcdef0123456789abcdef");

        ck_assert_str_eq(n, "skilld-run-0123456789abcdef0123456789abcdef.scope");
}
END_TEST

int main(void) {
        Suite *s = suite_create("scope");
        TCase *tc = tcase_create("core");

        if (!test_bus_available()) {
                fprintf(stderr, "no dbus-daemon: skipped\n");
                return 77;
        }
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_properties_and_done);
        tcase_add_test(tc, test_signal_before_reply);
        tcase_add_test(tc, test_job_failed);
        tcase_add_test(tc, test_refused);
        tcase_add_test(tc, test_stop_leftovers);
        tcase_add_test(tc, test_unit_name);
        suite_add_tcase(s, tc);
        return test_run_suite(s);
}
