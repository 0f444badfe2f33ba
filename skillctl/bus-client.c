/* See bus-client.h. */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "bus-client.h"
#include "bus-errors.h"
#include "log.h"

#define PKTTYAGENT "/usr/bin/pkttyagent"

/* Run and InstallSkill take a whole skill (up to 256M) and may wait for polkit, which may wait
 * for a person typing a password: far beyond sd-bus's 25 s default. */
#define CALL_TIMEOUT_USEC (2ULL * 60 * 1000000)
#define CALL_TIMEOUT_INTERACTIVE_USEC (10ULL * 60 * 1000000)

const char *arg_host = NULL;
bool arg_ask_password = true;

Client *client_free(Client *c) {
        if (!c)
                return NULL;
        if (c->agent_pid > 0) {
                (void) kill(c->agent_pid, SIGTERM);
                (void) waitpid(c->agent_pid, NULL, 0);
        }
        sym_sd_bus_flush_close_unref(c->bus);
        free(c->where);
        free(c);
        return NULL;
}

static bool may_ask_password(void) {
        return arg_ask_password && isatty(STDIN_FILENO) > 0;
}

/* Whether an error of a call to the name means that nothing provides it, as opposed to a
 * service that exists and failed. */
static bool error_is_no_service(const sd_bus_error *e) {
        return sym_sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER);
}

/* 1: the service answered; 0: nothing provides it there; < 0: it exists and failed. */
static int ping(sd_bus *bus, const char *destination, char **ret_reason, const char *where) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        /* Any message to the name activates it; Ping is answered by sd-bus itself, so this proves
         * the service runs without asking it for anything. */
        r = sym_sd_bus_call_method(bus, destination, SKILLD_BUS_PATH, "org.freedesktop.DBus.Peer", "Ping",
                                   &e, NULL, "");
        if (r >= 0)
                return 1;
        if (error_is_no_service(&e)) {
                *ret_reason = strdup_printf("nothing on %s provides or activates %s", where,
                                            SKILLD_BUS_NAME);
                return *ret_reason ? 0 : -ENOMEM;
        }
        if (r == -ENOTCONN || r == -ECONNRESET || r == -ECONNREFUSED)
                /* No reply at all: the connection itself failed (ssh could not reach the host). */
                *ret_reason = strdup_printf("cannot reach %s: %s", where, strerror(-r));
        else
                *ret_reason = strdup_printf("the skilld service on %s does not answer: %s", where,
                                            e.message ?: strerror(-r));
        return *ret_reason ? r : -ENOMEM;
}

/* Takes the connection on success. */
static int client_new(sd_bus **bus, const char *destination, const char *where, Client **ret) {
        Client *c;

        c = calloc(1, sizeof(Client));
        if (!c)
                return -ENOMEM;
        c->where = strdup(where);
        if (!c->where) {
                free(c);
                return -ENOMEM;
        }
        c->bus = TAKE_PTR(*bus);
        c->destination = destination;
        c->can_pass_fds = sym_sd_bus_can_send(c->bus, SD_BUS_TYPE_UNIX_FD) > 0;
        log_debug("Talking to skilld on %s.", c->where);
        *ret = c;
        return 0;
}

static int open_remote(Client **ret, char **ret_reason) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        /* ssh to the host, where systemd-stdio-bridge connects to its system bus. */
        r = sym_sd_bus_open_system_remote(&bus, arg_host);
        if (r < 0) {
                *ret_reason = strdup_printf("cannot connect to %s: %s", arg_host, strerror(-r));
                return *ret_reason ? r : -ENOMEM;
        }
        (void) sym_sd_bus_set_allow_interactive_authorization(bus, may_ask_password());
        r = ping(bus, SKILLD_BUS_NAME, ret_reason, arg_host);
        if (r <= 0)
                return r;
        r = client_new(&bus, SKILLD_BUS_NAME, arg_host, ret);
        return r < 0 ? r : 1;
}

static int open_system_bus(Client **ret, char **ret_reason) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sym_sd_bus_open_system(&bus);
        if (r < 0) {
                *ret_reason = strdup_printf("no system bus (%s)", strerror(-r));
                return *ret_reason ? 0 : -ENOMEM;
        }
        (void) sym_sd_bus_set_allow_interactive_authorization(bus, may_ask_password());
        r = ping(bus, SKILLD_BUS_NAME, ret_reason, "the system bus");
        if (r <= 0)
                return r;
        r = client_new(&bus, SKILLD_BUS_NAME, "the system bus", ret);
        return r < 0 ? r : 1;
}

/* The private socket speaks the same API as a direct (peer-to-peer) connection: no bus, no
 * names, no Hello. $SKILLD_BUS_ADDRESS names another one, for containers that mount it elsewhere
 * (and for tests). */
static int open_private_bus(Client **ret, char **ret_reason) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *address = secure_getenv("SKILLD_BUS_ADDRESS") ?: SKILLD_PRIVATE_BUS_ADDRESS;
        const char *where = startswith(address, "unix:path=") ?: address;
        int r;

        r = sym_sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sym_sd_bus_set_address(bus, address);
        if (r < 0) {
                *ret_reason = strdup_printf("$SKILLD_BUS_ADDRESS %s: %s", address, strerror(-r));
                return *ret_reason ? r : -ENOMEM;
        }
        (void) sym_sd_bus_set_allow_interactive_authorization(bus, may_ask_password());
        r = sym_sd_bus_start(bus);
        if (r == -ENOENT || r == -ECONNREFUSED) {
                *ret_reason = strdup_printf("%s: %s", where, strerror(-r));
                return *ret_reason ? 0 : -ENOMEM;
        }
        if (r < 0) {
                *ret_reason = strdup_printf("cannot connect to %s: %s", where, strerror(-r));
                return *ret_reason ? r : -ENOMEM;
        }
        r = ping(bus, NULL, ret_reason, where);
        if (r <= 0)
                return r;
        r = client_new(&bus, NULL, where, ret);
        return r < 0 ? r : 1;
}

/* The running service's root socket, for root: 1 with a client, 0 when it is not there (the
 * service is not running, or this is not root), quietly: the system bus is asked next, and
 * activates the service. The authentication is waited for before anything is sent: once skilld
 * answered it, it holds this connection as a reason not to exit, so a call sent then is served,
 * and a connection that failed before had sent nothing that could have been. It is the system
 * bus's service: a caller that named another system bus ($DBUS_SYSTEM_BUS_ADDRESS) does not get
 * it, unless it names this socket too ($SKILLD_ROOT_BUS_ADDRESS, for tests). */
static int open_root_socket(Client **ret) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *address = secure_getenv("SKILLD_ROOT_BUS_ADDRESS");
        int r;

        if (geteuid() != 0)
                return 0;
        if (!address) {
                if (secure_getenv("DBUS_SYSTEM_BUS_ADDRESS"))
                        return 0;
                address = SKILLD_ROOT_BUS_ADDRESS;
        }
        r = sym_sd_bus_new(&bus);
        if (r < 0)
                return r;
        if (sym_sd_bus_set_address(bus, address) < 0 || sym_sd_bus_start(bus) < 0)
                return 0;
        for (;;) {
                r = sym_sd_bus_is_ready(bus);
                if (r > 0)
                        break;
                if (r < 0)
                        return 0;
                r = sym_sd_bus_process(bus, NULL);
                if (r < 0)
                        return 0;
                /* A service that does not answer its authentication in that time would not
                 * answer a call either: the bus then. */
                if (r == 0 && sym_sd_bus_wait(bus, CALL_TIMEOUT_USEC) <= 0)
                        return 0;
        }
        r = client_new(&bus, NULL, startswith(address, "unix:path=") ?: address, ret);
        return r < 0 ? r : 1;
}

/* What client_open() does once the system bus has no service (reason_bus says why): the private
 * socket, and the two reasons together when that has none either. */
static int open_after_bus(Client **ret, char *reason_bus, char **ret_reason) {
        _cleanup_free_ char *reason_socket = NULL;
        int r;

        r = open_private_bus(ret, &reason_socket);
        if (r != 0) {
                if (r < 0)
                        *ret_reason = TAKE_PTR(reason_socket);
                return r;
        }
        *ret_reason = strdup_printf("%s, and %s", strna(reason_bus), strna(reason_socket));
        return *ret_reason ? 0 : -ENOMEM;
}

static int client_open_full(Client **ret, bool confirm, bool lasting, char **ret_reason) {
        _cleanup_(sym_sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *reason_bus = NULL;
        int r;

        /* An error, not "no service answered" (0): a system that may run the service has the
         * library (the service links it), so its absence is a broken install, to be said. */
        r = dlopen_libsystemd("talking to skilld", ret_reason);
        if (r < 0)
                return r;
        r = sym_sd_bus_error_add_map(skilld_bus_error_map);
        if (r < 0)
                return r;

        if (arg_host)
                return open_remote(ret, ret_reason);
        if (!lasting) {
                r = open_root_socket(ret);
                if (r != 0)
                        return r;
        }

        if (!confirm) {
                /* Connected, not asked: the first call says whether the service is there. */
                r = sym_sd_bus_open_system(&bus);
                if (r >= 0) {
                        (void) sym_sd_bus_set_allow_interactive_authorization(bus, may_ask_password());
                        r = client_new(&bus, SKILLD_BUS_NAME, "the system bus", ret);
                        if (r < 0)
                                return r;
                        (*ret)->unconfirmed = true;
                        return 1;
                }
                reason_bus = strdup_printf("no system bus (%s)", strerror(-r));
                if (!reason_bus)
                        return -ENOMEM;
        } else {
                r = open_system_bus(ret, &reason_bus);
                if (r != 0) {
                        if (r < 0)
                                *ret_reason = TAKE_PTR(reason_bus);
                        return r;
                }
        }
        return open_after_bus(ret, reason_bus, ret_reason);
}

int client_open(Client **ret, char **ret_reason) {
        return client_open_full(ret, true, false, ret_reason);
}

int client_open_unconfirmed(Client **ret, char **ret_reason) {
        return client_open_full(ret, false, false, ret_reason);
}

int client_open_lasting(Client **ret, char **ret_reason) {
        return client_open_full(ret, true, true, ret_reason);
}

int client_unconfirmed_error(const Client *c, const sd_bus_error *error, char **ret_reason) {
        if (!c->unconfirmed)
                return 0;
        /* The answers a Ping could have had (ping()); any other came from the service itself. */
        if (error_is_no_service(error)) {
                *ret_reason = strdup_printf("nothing on %s provides or activates %s", c->where, SKILLD_BUS_NAME);
                return *ret_reason ? 1 : -ENOMEM;
        }
        /* Activation failed: the bus's own errors for it, and those systemd reports through it
         * (a masked or missing unit). */
        if (sym_sd_bus_error_is_set(error) &&
            (startswith(error->name, "org.freedesktop.DBus.Error.Spawn.") ||
             startswith(error->name, "org.freedesktop.systemd1.") ||
             streq(error->name, "org.freedesktop.DBus.Error.TimedOut"))) {
                *ret_reason = strdup_printf("the skilld service on %s does not answer: %s", c->where,
                                            error->message ?: error->name);
                return *ret_reason ? -EIO : -ENOMEM;
        }
        return 0;
}

int client_open_after_bus(Client **ret, char **reason) {
        _cleanup_free_ char *reason_bus = TAKE_PTR(*reason);

        return open_after_bus(ret, reason_bus, reason);
}

int client_open_or_fail(Client **ret) {
        _cleanup_free_ char *reason = NULL;
        int r;

        r = client_open(ret, &reason);
        if (r < 0) {
                log_error("%s", reason ?: strerror(-r));
                return EXIT_FAILURE;
        }
        if (r == 0) {
                log_error("no skilld service answered: %s", strna(reason));
                return EXIT_FAILURE;
        }
        return 0;
}

void client_polkit_agent_open(Client *c) {
        _cleanup_close_pair_ int pipe_fds[2] = { -EBADF, -EBADF };
        struct pollfd pfd;
        pid_t pid;

        /* A remote host's polkit cannot reach an agent here; a desktop session has its own. */
        if (c->agent_pid > 0 || arg_host || !may_ask_password() || isatty(STDERR_FILENO) <= 0)
                return;
        if (access(PKTTYAGENT, X_OK) < 0)
                return;
        if (pipe2(pipe_fds, O_CLOEXEC) < 0)
                return;

        pid = fork();
        if (pid < 0)
                return;
        if (pid == 0) {
                /* fd 3 tells us when the agent is registered; dup2() leaves it open across exec.
                 * --fallback: a desktop agent of the session, if any, keeps priority. It prompts
                 * on the terminal itself; its stderr only says why it could not register (no
                 * polkit on this bus), which is no news to the caller. */
                int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

                if (null_fd < 0 || dup2(null_fd, STDERR_FILENO) < 0 || dup2(pipe_fds[1], 3) < 0)
                        _exit(EXIT_FAILURE);
                (void) close_all_fds_except((const int[]) { 3 }, 1);
                execl(PKTTYAGENT, PKTTYAGENT, "--notify-fd", "3", "--fallback", (char *) NULL);
                _exit(EXIT_FAILURE);
        }
        c->agent_pid = pid;
        pipe_fds[1] = safe_close(pipe_fds[1]);

        /* Wait until it registered (it writes to fd 3) or gave up (it closes it), not forever. */
        pfd = (struct pollfd) { .fd = pipe_fds[0], .events = POLLIN };
        (void) poll(&pfd, 1, 10000);
}

int client_new_call(Client *c, const char *path, const char *interface, const char *member,
                    sd_bus_message **ret) {
        return sym_sd_bus_message_new_method_call(c->bus, ret, c->destination, path, interface, member);
}

int client_call(Client *c, sd_bus_message *m, sd_bus_error *error, sd_bus_message **ret_reply) {
        return sym_sd_bus_call(c->bus, m,
                               may_ask_password() ? CALL_TIMEOUT_INTERACTIVE_USEC : CALL_TIMEOUT_USEC,
                               error, ret_reply);
}

int client_call_method(Client *c, const char *path, const char *interface, const char *member,
                       sd_bus_error *error, sd_bus_message **ret_reply, const char *types, ...) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = client_new_call(c, path, interface, member, &m);
        if (r < 0)
                return r;
        if (!isempty(types)) {
                va_start(ap, types);
                r = sym_sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        return client_call(c, m, error, ret_reply);
}

/* How our named errors read. detail: append the service's message, which says what exactly. */
static const struct {
        const char *name;
        const char *text;
        bool detail;
} error_texts[] = {
        { SKILLD_ERROR_NO_SUCH_RUN,           "no such run",                                  false },
        { SKILLD_ERROR_NO_SUCH_SKILL,         "no such skill is installed",                   false },
        { SKILLD_ERROR_NO_SUCH_ARTIFACT,      "no such artifact",                             false },
        { SKILLD_ERROR_INVALID_SKILL,         "invalid skill",                                true },
        { SKILLD_ERROR_SKILL_EXISTS,          "a skill of that name is installed already "
                                              "(--replace replaces it)",                      false },
        { SKILLD_ERROR_LIMIT_EXCEEDED,        "a limit is above the policy's maximum",        true },
        /* Runs queued, sessions, builds going: the message names the cap. */
        { SKILLD_ERROR_QUOTA_EXCEEDED,        "a cap of the policy is reached",               true },
        { SKILLD_ERROR_NO_SPACE,              "the service's results store is full",          true },
        { SKILLD_ERROR_NETWORK_NOT_ALLOWED,   "the policy does not allow this skill network", true },
        { SKILLD_ERROR_RUN_ACTIVE,            "the run is still queued or running "
                                              "(cancel it first)",                            false },
        { SKILLD_ERROR_RUN_FINISHED,          "the run has already finished",                 false },
        { SKILLD_ERROR_NO_RESULT,             "the run has no result",                        true },
        { SKILLD_ERROR_POLICY_INVALID,        "the service's policy is invalid; it runs nothing "
                                              "until an administrator fixes it",              true },
        { SKILLD_ERROR_ISOLATION_UNAVAILABLE, "the service's host lacks a sandbox layer",     true },
        { SKILLD_ERROR_ENVIRONMENT_BUILD_FAILED,
                                              "building the environment failed",              true },
        { SD_BUS_ERROR_ACCESS_DENIED,         "not authorized",                               true },
        { SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                              "authentication is required; run skillctl on a "
                                              "terminal without --no-ask-password",           false },
        { SD_BUS_ERROR_SERVICE_UNKNOWN,       "the skilld service went away",                 false },
        { SD_BUS_ERROR_NAME_HAS_NO_OWNER,     "the skilld service went away",                 false },
        { SD_BUS_ERROR_NO_REPLY,              "the skilld service did not answer in time",    false },
        { SD_BUS_ERROR_TIMEOUT,               "the skilld service did not answer in time",    false },
};

int client_log_error(const char *what, const sd_bus_error *error, int r) {
        _cleanup_free_ char *message = NULL;

        if (sym_sd_bus_error_is_set(error)) {
                r = -abs(sym_sd_bus_error_get_errno(error) ?: EIO);
                /* The service is trusted, a remote one less so, and messages quote what callers
                 * named: never let them write escape sequences. */
                if (!isempty(error->message))
                        message = cescape(error->message);

                /* No agent of ours can answer for a call that comes from the host itself. */
                if (arg_host &&
                    sym_sd_bus_error_has_name(error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED)) {
                        log_error("%s: authentication is required, and skillctl cannot ask for it over "
                                  "SSH: run skillctl on %s, or ask its administrator for a polkit rule",
                                  what, arg_host);
                        return r;
                }
                for (size_t i = 0; i < ELEMENTSOF(error_texts); i++) {
                        if (!sym_sd_bus_error_has_name(error, error_texts[i].name))
                                continue;
                        if (error_texts[i].detail && message)
                                log_error("%s: %s: %s", what, error_texts[i].text, message);
                        else
                                log_error("%s: %s", what, error_texts[i].text);
                        return r;
                }
                log_error("%s: %s", what, message ?: error->name);
                return r;
        }
        if (r == -ECONNRESET || r == -ENOTCONN)
                log_error("%s: the connection to the skilld service broke", what);
        else
                log_error("%s: %s", what, strerror(-r));
        return r;
}

int client_exit_status(int r) {
        switch (-r) {
        case ESRCH:     /* NoSuchRun */
        case ENOPKG:    /* NoSuchSkill */
        case ENOENT:    /* NoSuchArtifact */
                return EXIT_NO_SUCH;
        case EINVAL:
                return 2;
        default:
                return EXIT_FAILURE;
        }
}

bool run_id_is_valid(const char *s, bool allow_prefix) {
        size_t n = strspn(s, "0123456789abcdef");

        if (s[n] != '\0')
                return false;
        return n == 32 || (allow_prefix && n >= 4 && n < 32);
}

/* The runs whose ids start with prefix, through ListRunsFiltered() with that filter: the first
 * one's id (NULL for none) and how many there are. -EOPNOTSUPP from a service older than the
 * method. */
static int find_prefix(Client *c, const char *prefix, char **ret_id, uint64_t *ret_n) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *found = NULL;
        const char *id, *next;
        uint64_t older, n = 0;
        int r;

        /* Two are enough to know the prefix is ambiguous; the count of the others comes along. */
        r = client_new_call(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListRunsFiltered", &m);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "a{sv}", 2, "prefix", "s", prefix, "limit", "u", 2);
        if (r < 0)
                return log_error_errno(r, "Failed to build the call: %m");
        r = client_call(c, m, &e, &reply);
        if (r < 0 && sym_sd_bus_error_has_name(&e, SD_BUS_ERROR_UNKNOWN_METHOD))
                return -EOPNOTSUPP;
        if (r < 0)
                return client_log_error("list runs", &e, r);
        r = sym_sd_bus_message_read(reply, "ts", &older, &next);
        if (r >= 0)
                r = sym_sd_bus_message_enter_container(reply, 'a', "(sossussitt)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(sossussitt)", &id, NULL, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, NULL, NULL)) > 0)
                if (n++ == 0 && !(found = strdup(id)))
                        return log_oom();
        if (r < 0)
                return log_error_errno(r, "Failed to parse the run list: %m");
        *ret_id = TAKE_PTR(found);
        *ret_n = n + older;
        return 0;
}

/* The same among every run ListRuns() returns, for a service older than ListRunsFiltered(). */
static int find_prefix_compat(Client *c, const char *prefix, char **ret_id, uint64_t *ret_n) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *found = NULL;
        const char *id;
        uint64_t n = 0;
        int r;

        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListRuns", &e, &reply, NULL);
        if (r < 0)
                return client_log_error("list runs", &e, r);
        r = sym_sd_bus_message_enter_container(reply, 'a', "(sossussitt)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(sossussitt)", &id, NULL, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, NULL, NULL)) > 0)
                if (startswith(id, prefix) && n++ == 0 && !(found = strdup(id)))
                        return log_oom();
        if (r < 0)
                return log_error_errno(r, "Failed to parse the run list: %m");
        *ret_id = TAKE_PTR(found);
        *ret_n = n;
        return 0;
}

/* The one run the caller may see whose id starts with prefix. */
static int resolve_prefix(Client *c, const char *prefix, char **ret_id) {
        _cleanup_free_ char *found = NULL;
        uint64_t n = 0;
        int r;

        r = find_prefix(c, prefix, &found, &n);
        if (r == -EOPNOTSUPP)
                r = find_prefix_compat(c, prefix, &found, &n);
        if (r < 0)
                return r;
        if (n == 0) {
                log_error("run %s: no such run", prefix);
                return -ESRCH;
        }
        if (n > 1) {
                log_error("run %s: the prefix matches %" PRIu64 " runs; give more of the id", prefix, n);
                return -EINVAL;
        }
        *ret_id = TAKE_PTR(found);
        return 0;
}

int client_get_run(Client *c, const char *id, char **ret_id, char **ret_path) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *full = NULL, *path = NULL, *what = NULL;
        const char *p;
        int r;

        if (!run_id_is_valid(id, true)) {
                _cleanup_free_ char *escaped = cescape(id);

                log_error("run %s: not a run id (32 hexadecimal digits, or at least the first 4)",
                          strna(escaped));
                return -EINVAL;
        }
        if (strlen(id) < 32) {
                r = resolve_prefix(c, id, &full);
                if (r < 0)
                        return r;
        } else if (!(full = strdup(id)))
                return log_oom();

        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "GetRun", &e, &reply, "s", full);
        if (r < 0) {
                what = strdup_printf("run %s", full);
                return client_log_error(what ?: "run", &e, r);
        }
        r = sym_sd_bus_message_read(reply, "o", &p);
        if (r < 0)
                return log_error_errno(r, "Failed to parse the reply of GetRun: %m");
        path = strdup(p);
        if (!path)
                return log_oom();

        *ret_id = TAKE_PTR(full);
        *ret_path = TAKE_PTR(path);
        return 0;
}

int client_get_run_string(Client *c, const char *id, const char *path, const char *property, char **ret) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *what = NULL;
        int r;

        r = sym_sd_bus_get_property_string(c->bus, c->destination, path, SKILLD_BUS_RUN, property, &e, ret);
        if (r < 0) {
                what = strdup_printf("run %s", id);
                return client_log_error(what ?: "run", &e, r);
        }
        return 0;
}
