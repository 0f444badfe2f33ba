/* Tests for skilld/daemon/polkit: a private dbus-daemon carries three parties. This process plays
 * the daemon (a method that asks polkit) and a fake org.freedesktop.PolicyKit1 answering with
 * configured verdicts; a forked child plays the caller, as nobody when the tests run as root, so
 * that the polkit path is taken. Asserted: what polkit was asked (subject, action, details, flags)
 * and what the caller got back, for yes, no, challenge, polkit absent, a caller that disconnects
 * while polkit decides, and several actions for one call. */
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fileio.h"
#include "polkit.h"
#include "test-bus.h"

#define TEST_NAME "io.skilld.Test"
#define TEST_PATH "/io/skilld/Test"
#define NOBODY 65534

/* The fake polkit: verdicts per action, and a record of the last question. */
typedef enum Verdict {
        VERDICT_NO,
        VERDICT_YES,
        VERDICT_CHALLENGE,      /* yes only when the caller allowed interaction */
} Verdict;

typedef struct FakePolkit {
        sd_bus *bus;
        const char *actions[4];
        Verdict verdicts[4];
        bool hold;              /* keep the question unanswered until released */
        sd_bus_message *held;

        unsigned n_calls;
        char *kind, *name, *action;
        uint32_t pid;
        uint64_t start_time, expected_start_time;
        int32_t uid;
        uint32_t flags;
        char **details;
} FakePolkit;

/* The daemon side: one method asking about one action, one asking about two. */
typedef struct TestDaemon {
        sd_bus *bus;
        sd_bus *direct;         /* a peer-to-peer server connection, for the private socket */
        int listen_fd;
        PolkitRegistry *registry;
        uid_t good_uid;
        PeerNames *callers;
        unsigned n_dispatch;
        uid_t caller_uid;
        bool caller_left;       /* what the last dispatch was told */
} TestDaemon;

static TestBus test_bus;
static sd_event *event;
static FakePolkit fake;
static TestDaemon daemon_;

static uid_t client_uid(bool stay_root) {
        return geteuid() == 0 && !stay_root ? NOBODY : geteuid();
}

static uint64_t read_start_time(pid_t pid) {
        _cleanup_free_ char *path = strdup_printf("/proc/%d/stat", (int) pid), *stat = NULL;
        unsigned long long v = 0;
        char *p;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, path, 4096, true, &stat, NULL), 0);
        p = strrchr(stat, ')');
        ck_assert_ptr_nonnull(p);
        /* field 3 is the first after ") "; skip to field 22 */
        ck_assert_int_eq(sscanf(p + 2,
                                "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                                "%*s %llu", &v), 1);
        return v;
}

static int fake_reply(FakePolkit *f, sd_bus_message *m) {
        Verdict v = VERDICT_NO;
        bool yes, challenge;

        for (size_t i = 0; i < ELEMENTSOF(f->actions) && f->actions[i]; i++)
                if (streq(f->actions[i], f->action))
                        v = f->verdicts[i];
        yes = v == VERDICT_YES || (v == VERDICT_CHALLENGE && (f->flags & 1));
        challenge = v == VERDICT_CHALLENGE && !yes;
        return sd_bus_reply_method_return(m, "(bba{ss})", yes, challenge, 0);
}

static int fake_check_authorization(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        FakePolkit *f = userdata;
        const char *kind, *action, *cancel, *k, *v;
        int r;

        ck_assert_int_ge(sd_bus_message_enter_container(m, 'r', "sa{sv}"), 0);
        ck_assert_int_ge(sd_bus_message_read(m, "s", &kind), 0);
        free(f->kind);
        f->kind = strdup(kind);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                ck_assert_int_ge(sd_bus_message_read(m, "s", &k), 0);
                if (streq(k, "name")) {
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "s", &v), 0);
                        free(f->name);
                        f->name = strdup(v);
                } else if (streq(k, "pid"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "u", &f->pid), 0);
                else if (streq(k, "start-time"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "t", &f->start_time), 0);
                else if (streq(k, "uid"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "i", &f->uid), 0);
                else
                        ck_abort_msg("unexpected subject key %s", k);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);

        ck_assert_int_ge(sd_bus_message_read(m, "s", &action), 0);
        free(f->action);
        f->action = strdup(action);

        f->details = strv_free(f->details);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{ss}"), 0);
        while ((r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0) {
                ck_assert_int_eq(strv_extend(&f->details, k), 0);
                ck_assert_int_eq(strv_extend(&f->details, v), 0);
        }
        ck_assert_int_ge(r, 0);
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        ck_assert_int_ge(sd_bus_message_read(m, "us", &f->flags, &cancel), 0);

        /* While the caller waits for its reply it is alive: its start time is what polkit sees. */
        if (streq(kind, "unix-process"))
                f->expected_start_time = read_start_time(f->pid);

        f->n_calls++;
        if (f->hold) {
                f->held = sd_bus_message_ref(m);
                return 1;
        }
        return fake_reply(f, m);
}

static const sd_bus_vtable fake_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})", fake_check_authorization,
                      SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static void fake_start(void) {
        fake.bus = test_bus_connect(&test_bus, event);
        ck_assert_int_eq(sd_bus_add_object_vtable(fake.bus, NULL, "/org/freedesktop/PolicyKit1/Authority",
                                                  "org.freedesktop.PolicyKit1.Authority", fake_vtable,
                                                  &fake), 0);
        ck_assert_int_ge(sd_bus_request_name(fake.bus, "org.freedesktop.PolicyKit1", 0), 0);
}

static void fake_release(void) {
        ck_assert_ptr_nonnull(fake.held);
        ck_assert_int_ge(fake_reply(&fake, fake.held), 0);
        fake.held = sd_bus_message_unref(fake.held);
}

static int method_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        char * const details[] = { (char *) "skill", (char *) "demo", (char *) "script", (char *) "main.sh",
                                  NULL };
        TestDaemon *d = userdata;
        const char *action;
        int r;

        d->n_dispatch++;
        r = sd_bus_message_read(m, "s", &action);
        if (r < 0)
                return r;
        r = bus_message_get_caller_uid(m, &d->caller_uid);
        if (r < 0)
                return r;

        r = polkit_check_async(d->registry, m, action, details, d->good_uid, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1; /* polkit decides; we are called again */
        d->caller_left = polkit_caller_left(d->registry, m);
        return sd_bus_reply_method_return(m, "s", "authorized");
}

static int method_check_two(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        TestDaemon *d = userdata;
        const char *a, *b;
        int r;

        d->n_dispatch++;
        r = sd_bus_message_read(m, "ss", &a, &b);
        if (r < 0)
                return r;
        r = polkit_check_async(d->registry, m, a, NULL, UID_INVALID, error);
        if (r <= 0)
                return r < 0 ? r : 1;
        r = polkit_check_async(d->registry, m, b, NULL, UID_INVALID, error);
        if (r <= 0)
                return r < 0 ? r : 1;
        return sd_bus_reply_method_return(m, "s", "authorized");
}

static const sd_bus_vtable daemon_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Check", "s", "s", method_check, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("CheckTwo", "ss", "s", method_check_two, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static void daemon_start(bool with_polkit_bus) {
        daemon_.bus = test_bus_connect(&test_bus, event);
        daemon_.good_uid = UID_INVALID;
        daemon_.caller_uid = UID_INVALID;
        daemon_.listen_fd = -EBADF;
        ck_assert_int_eq(sd_bus_add_object_vtable(daemon_.bus, NULL, TEST_PATH, TEST_NAME, daemon_vtable,
                                                  &daemon_), 0);
        ck_assert_int_ge(sd_bus_request_name(daemon_.bus, TEST_NAME, 0), 0);
        ck_assert_int_eq(peer_names_new(daemon_.bus, &daemon_.callers), 0);
        ck_assert_int_eq(polkit_registry_new(with_polkit_bus ? daemon_.bus : NULL, daemon_.callers,
                                             &daemon_.registry), 0);
}

static void setup(void) {
        ck_assert_int_eq(sd_event_new(&event), 0);
        test_bus_start(&test_bus);
}

static void teardown(void) {
        daemon_.registry = polkit_registry_free(daemon_.registry);
        if (daemon_.callers)
                /* every held caller's watch went with its query */
                ck_assert_uint_eq(peer_names_count(daemon_.callers), 0);
        daemon_.callers = peer_names_free(daemon_.callers);
        daemon_.direct = sd_bus_flush_close_unref(daemon_.direct);
        daemon_.bus = sd_bus_flush_close_unref(daemon_.bus);
        daemon_.listen_fd = safe_close(daemon_.listen_fd);
        fake.held = sd_bus_message_unref(fake.held);
        fake.bus = sd_bus_flush_close_unref(fake.bus);
        free(fake.kind);
        free(fake.name);
        free(fake.action);
        strv_free(fake.details);
        fake = (FakePolkit) {};
        daemon_ = (TestDaemon) {};
        event = sd_event_unref(event);
        test_bus_stop(&test_bus);
}

/* The caller, in a child process. It reports its unique name and the outcome on a pipe. */
typedef struct Client {
        pid_t pid;
        int result_fd;          /* read end: "NAME\nok:VALUE" or "NAME\nerror:ERROR-NAME:MESSAGE" */
        int release_fd;         /* write end: in send-only mode, a byte lets the child exit */
        char result[1024];
        size_t n;
        bool done;
        sd_event_source *source;
} Client;

typedef struct ClientOptions {
        const char *method;
        const char *arg1, *arg2;
        bool stay_root;
        bool interactive;
        bool send_only;         /* send the call, then wait for release and exit without a reply */
        const char *direct_path;
} ClientOptions;

_noreturn_ static void client_main(const ClientOptions *o, int result_fd, int release_fd) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        const char *unique = "direct", *value;
        sd_bus *bus = NULL;
        char c;
        int r;

        if (geteuid() == 0 && !o->stay_root)
                if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(2);

        if (sd_bus_new(&bus) < 0)
                _exit(3);
        if (o->direct_path) {
                _cleanup_free_ char *a = strdup_printf("unix:path=%s", o->direct_path);
                r = sd_bus_set_address(bus, a);
        } else {
                r = sd_bus_set_address(bus, test_bus.address);
                if (r >= 0)
                        r = sd_bus_set_bus_client(bus, true);
        }
        if (r < 0 || sd_bus_start(bus) < 0)
                _exit(4);
        if (!o->direct_path && sd_bus_get_unique_name(bus, &unique) < 0)
                _exit(5);

        if (sd_bus_message_new_method_call(bus, &m, o->direct_path ? NULL : TEST_NAME, TEST_PATH, TEST_NAME,
                                           o->method) < 0)
                _exit(6);
        if (o->arg2)
                r = sd_bus_message_append(m, "ss", o->arg1, o->arg2);
        else
                r = sd_bus_message_append(m, "s", o->arg1);
        if (r < 0 || sd_bus_message_set_allow_interactive_authorization(m, o->interactive) < 0)
                _exit(7);

        if (o->send_only) {
                if (sd_bus_send(bus, m, NULL) < 0 || sd_bus_flush(bus) < 0)
                        _exit(8);
                (void) dprintf(result_fd, "%s\nsent", unique);
                if (read(release_fd, &c, 1) < 0)
                        _exit(9);
                _exit(0); /* disconnects with the call unanswered */
        }

        r = sd_bus_call(bus, m, 25 * 1000000ULL, &error, &reply);
        if (r < 0)
                (void) dprintf(result_fd, "%s\nerror:%s:%s", unique, error.name, strna(error.message));
        else if (sd_bus_message_read(reply, "s", &value) >= 0)
                (void) dprintf(result_fd, "%s\nok:%s", unique, value);
        _exit(0);
}

static int client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Client *c = userdata;
        ssize_t k;

        k = read(fd, c->result + c->n, sizeof(c->result) - 1 - c->n);
        if (k > 0) {
                c->n += k;
                /* send-only clients report "sent" and keep the pipe open */
                if (endswith(c->result, "\nsent"))
                        c->done = true;
                return 0;
        }
        c->done = true;
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

static void client_spawn(Client *c, const ClientOptions *o) {
        int result_pipe[2], release_pipe[2];

        *c = (Client) {};
        ck_assert_int_eq(pipe2(result_pipe, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(release_pipe, O_CLOEXEC), 0);
        c->pid = fork();
        ck_assert_int_ge(c->pid, 0);
        if (c->pid == 0) {
                safe_close(result_pipe[0]);
                safe_close(release_pipe[1]);
                client_main(o, result_pipe[1], release_pipe[0]);
        }
        safe_close(result_pipe[1]);
        safe_close(release_pipe[0]);
        c->result_fd = result_pipe[0];
        c->release_fd = release_pipe[1];
        ck_assert_int_eq(sd_event_add_io(event, &c->source, c->result_fd, EPOLLIN, client_io, c), 0);
}

static bool client_done(void *userdata) {
        return ((Client *) userdata)->done;
}

/* Waits for the outcome; returns the line after the unique name. */
static const char *client_wait(Client *c) {
        int status;

        test_event_run_until(event, client_done, c);
        if (!endswith(c->result, "\nsent")) {
                ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
                ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client failed: status %d",
                              status);
        }
        c->result[c->n] = 0;
        ck_assert_ptr_nonnull(strchr(c->result, '\n'));
        return strchr(c->result, '\n') + 1;
}

static void client_done_free(Client *c) {
        c->source = sd_event_source_disable_unref(c->source);
        c->result_fd = safe_close(c->result_fd);
        c->release_fd = safe_close(c->release_fd);
}

static const char *run_client(Client *c, const ClientOptions *o) {
        client_spawn(c, o);
        return client_wait(c);
}

static bool registry_empty(void *userdata) {
        return polkit_registry_pending(daemon_.registry) == 0;
}

static bool fake_asked(void *userdata) {
        return fake.n_calls > 0;
}

static void set_verdict(size_t i, const char *action, Verdict v) {
        fake.actions[i] = action;
        fake.verdicts[i] = v;
}

START_TEST(test_authorized) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run" };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run", VERDICT_YES);

        ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
        ck_assert(!daemon_.caller_left);
        ck_assert_uint_eq(fake.n_calls, 1);
        ck_assert_str_eq(fake.kind, "system-bus-name");
        ck_assert_msg(strncmp(c.result, fake.name, strlen(fake.name)) == 0 &&
                      c.result[strlen(fake.name)] == '\n',
                      "subject %s is not the caller (%s)", fake.name, c.result);
        ck_assert_str_eq(fake.action, "io.skilld.run");
        ck_assert_uint_eq(fake.flags, 0);
        /* details passed through, in order */
        ck_assert_uint_eq(strv_length(fake.details), 4);
        ck_assert_str_eq(fake.details[0], "skill");
        ck_assert_str_eq(fake.details[1], "demo");
        ck_assert_str_eq(fake.details[2], "script");
        ck_assert_str_eq(fake.details[3], "main.sh");
        /* the handler ran twice: once to ask, once to act on the answer */
        ck_assert_uint_eq(daemon_.n_dispatch, 2);
        ck_assert_uint_eq(daemon_.caller_uid, client_uid(false));

        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_denied) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run-unlisted" };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run", VERDICT_YES);

        ck_assert_str_eq(run_client(&c, &o),
                         "error:org.freedesktop.DBus.Error.AccessDenied:"
                         "Not authorized to perform io.skilld.run-unlisted.");
        ck_assert_uint_eq(fake.n_calls, 1);
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_challenge) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.network" };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.network", VERDICT_CHALLENGE);

        ck_assert(startswith(run_client(&c, &o),
                             "error:org.freedesktop.DBus.Error.InteractiveAuthorizationRequired:"
                             "Authentication is required for io.skilld.network"));
        ck_assert_uint_eq(fake.flags, 0);
        client_done_free(&c);

        /* The same call allowing interaction carries the flag; our fake then says yes, as polkit
         * does after the user authenticated through an agent. */
        o.interactive = true;
        ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
        ck_assert_uint_eq(fake.flags, 1);
        ck_assert_uint_eq(fake.n_calls, 2);
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_polkit_absent) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run" };
        Client c;

        daemon_start(true); /* nobody owns org.freedesktop.PolicyKit1 */
        ck_assert_str_eq(run_client(&c, &o),
                         "error:org.freedesktop.DBus.Error.AccessDenied:"
                         "Authorization for io.skilld.run is not "
                         "available (polkit does not answer): access denied.");
        ck_assert_uint_eq(daemon_.n_dispatch, 2);
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_no_polkit_bus) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run" };
        Client c;

        fake_start();
        daemon_start(false);
        set_verdict(0, "io.skilld.run", VERDICT_YES);
        ck_assert_str_eq(run_client(&c, &o),
                         "error:org.freedesktop.DBus.Error.AccessDenied:"
                         "Authorization for io.skilld.run is not "
                         "available (no polkit): access denied.");
        ck_assert_uint_eq(fake.n_calls, 0);
        ck_assert_uint_eq(daemon_.n_dispatch, 1);
        ck_assert_uint_eq(polkit_registry_pending(daemon_.registry), 0);
        client_done_free(&c);
}
END_TEST

/* The caller hangs up while polkit is deciding: the answer still re-dispatches the call, which
 * knows its caller left, the reply goes nowhere, and the query is freed. */
START_TEST(test_disconnect_while_deciding) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run", .send_only = true };
        int status;
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run", VERDICT_YES);
        fake.hold = true;

        client_spawn(&c, &o);
        (void) client_wait(&c);
        test_event_run_until(event, fake_asked, NULL);
        ck_assert_uint_eq(polkit_registry_pending(daemon_.registry), 1);

        ck_assert_int_eq(loop_write(c.release_fd, "x", 1), 0);
        ck_assert_int_eq(waitpid(c.pid, &status, 0), c.pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        test_event_settle(event);

        fake_release();
        test_event_run_until(event, registry_empty, NULL);
        ck_assert_uint_eq(daemon_.n_dispatch, 2);
        /* told without asking the bus again: the caller was watched from before polkit */
        ck_assert(daemon_.caller_left);
        test_event_settle(event);
        client_done_free(&c);
}
END_TEST

/* The daemon shuts down (frees the registry) while a question is out: nothing runs afterwards. */
START_TEST(test_registry_freed_while_deciding) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run", .send_only = true };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run", VERDICT_YES);
        fake.hold = true;

        client_spawn(&c, &o);
        (void) client_wait(&c);
        test_event_run_until(event, fake_asked, NULL);
        daemon_.registry = polkit_registry_free(daemon_.registry);

        fake_release();
        test_event_settle(event);
        ck_assert_uint_eq(daemon_.n_dispatch, 1);

        ck_assert_int_eq(loop_write(c.release_fd, "x", 1), 0);
        ck_assert_int_eq(waitpid(c.pid, NULL, 0), c.pid);
        client_done_free(&c);
}
END_TEST

START_TEST(test_two_actions) {
        ClientOptions o = { .method = "CheckTwo", .arg1 = "io.skilld.run-unlisted",
                           .arg2 = "io.skilld.network" };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run-unlisted", VERDICT_YES);
        set_verdict(1, "io.skilld.network", VERDICT_YES);

        ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
        ck_assert_uint_eq(fake.n_calls, 2);
        ck_assert_uint_eq(daemon_.n_dispatch, 3);
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);

        set_verdict(1, "io.skilld.network", VERDICT_NO);
        ck_assert_str_eq(run_client(&c, &o),
                         "error:org.freedesktop.DBus.Error.AccessDenied:"
                         "Not authorized to perform io.skilld.network.");
        ck_assert_uint_eq(fake.n_calls, 4);
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_root_and_good_uid_skip_polkit) {
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.manage-runs" };
        Client c;

        fake_start();
        daemon_start(true);

        /* The owner of the object acted on needs no authorization. */
        daemon_.good_uid = client_uid(false);
        ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
        ck_assert_uint_eq(fake.n_calls, 0);
        ck_assert_uint_eq(daemon_.n_dispatch, 1);
        client_done_free(&c);

        /* Anyone else is asked about (and denied here). */
        daemon_.good_uid = client_uid(false) + 1;
        ck_assert(startswith(run_client(&c, &o), "error:org.freedesktop.DBus.Error.AccessDenied:"));
        ck_assert_uint_eq(fake.n_calls, 1);
        client_done_free(&c);

        /* Root needs none. Only checkable when the tests run as root. */
        if (geteuid() == 0) {
                o.stay_root = true;
                daemon_.good_uid = UID_INVALID;
                ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
                ck_assert_uint_eq(fake.n_calls, 1);
                ck_assert_uint_eq(daemon_.caller_uid, 0);
                client_done_free(&c);
        }
}
END_TEST

static int on_direct_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        sd_id128_t id;
        int cfd;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        ck_assert_int_ge(cfd, 0);
        ck_assert_ptr_null(daemon_.direct);
        ck_assert_int_eq(sd_bus_new(&daemon_.direct), 0);
        ck_assert_int_eq(sd_bus_set_fd(daemon_.direct, cfd, cfd), 0);
        ck_assert_int_eq(sd_id128_randomize(&id), 0);
        ck_assert_int_eq(sd_bus_set_server(daemon_.direct, true, id), 0);
        ck_assert_int_eq(sd_bus_add_object_vtable(daemon_.direct, NULL, TEST_PATH, TEST_NAME, daemon_vtable,
                                                  &daemon_), 0);
        ck_assert_int_eq(sd_bus_attach_event(daemon_.direct, event, SD_EVENT_PRIORITY_NORMAL), 0);
        ck_assert_int_ge(sd_bus_start(daemon_.direct), 0);
        return 0;
}

/* The private socket: no bus names, so polkit is told about the process behind the connection. */
START_TEST(test_unix_process_subject) {
        _cleanup_(sd_event_source_unrefp) sd_event_source *listen_source = NULL;
        _cleanup_free_ char *path = strdup_printf("%s/private.sock", test_bus.dir.path);
        ClientOptions o = { .method = "Check", .arg1 = "io.skilld.run", .direct_path = path };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        Client c;

        fake_start();
        daemon_start(true);
        set_verdict(0, "io.skilld.run", VERDICT_YES);

        daemon_.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(daemon_.listen_fd, 0);
        strcpy(sa.sun_path, path);
        ck_assert_int_eq(bind(daemon_.listen_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(chmod(path, 0666), 0);
        ck_assert_int_eq(listen(daemon_.listen_fd, 4), 0);
        ck_assert_int_eq(sd_event_add_io(event, &listen_source, daemon_.listen_fd, EPOLLIN,
                                         on_direct_connection, NULL), 0);

        ck_assert_str_eq(run_client(&c, &o), "ok:authorized");
        ck_assert_str_eq(fake.kind, "unix-process");
        ck_assert_int_eq(fake.pid, c.pid);
        ck_assert_int_eq(fake.uid, (int32_t) client_uid(false));
        ck_assert_uint_gt(fake.start_time, 0);
        ck_assert_uint_eq(fake.start_time, fake.expected_start_time);
        ck_assert_ptr_null(fake.name);
        ck_assert_uint_eq(daemon_.caller_uid, client_uid(false));
        test_event_run_until(event, registry_empty, NULL);
        client_done_free(&c);
}
END_TEST

START_TEST(test_invalid_arguments) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char * const odd[] = { (char *) "key-without-value", NULL };

        daemon_start(true);
        ck_assert_int_eq(sd_bus_message_new_method_call(daemon_.bus, &m, TEST_NAME, TEST_PATH, TEST_NAME,
                                                        "Check"), 0);
        ck_assert_int_eq(polkit_check_async(daemon_.registry, m, NULL, NULL, UID_INVALID, NULL), -EINVAL);
        ck_assert_int_eq(polkit_check_async(daemon_.registry, m, "io.skilld.run", odd, UID_INVALID, NULL),
                         -EINVAL);
        ck_assert_int_eq(polkit_check_async(NULL, m, "io.skilld.run", NULL, UID_INVALID, NULL), -EINVAL);
        ck_assert_uint_eq(polkit_registry_pending(NULL), 0);
}
END_TEST

static Suite *polkit_suite(void) {
        Suite *s = suite_create("polkit");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_authorized);
        tcase_add_test(tc, test_denied);
        tcase_add_test(tc, test_challenge);
        tcase_add_test(tc, test_polkit_absent);
        tcase_add_test(tc, test_no_polkit_bus);
        tcase_add_test(tc, test_disconnect_while_deciding);
        tcase_add_test(tc, test_registry_freed_while_deciding);
        tcase_add_test(tc, test_two_actions);
        tcase_add_test(tc, test_root_and_good_uid_skip_polkit);
        tcase_add_test(tc, test_unix_process_subject);
        tcase_add_test(tc, test_invalid_arguments);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_bus_suite(polkit_suite);
}
