/* See polkit.h. The registry is a plain list: the number of calls waiting for polkit at one time
 * is small (bounded by the callers' own patience), and a list keeps the code obvious. */
#include <inttypes.h>
#include <systemd/sd-event.h>

#include "bus-held.h"
#include "fileio.h"
#include "list.h"
#include "log.h"
#include "parse-util.h"
#include "peer-names.h"
#include "polkit.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
/* CheckAuthorization flag: polkit may ask the user for a password through an agent. */
#define POLKIT_FLAG_ALLOW_USER_INTERACTION 1U
/* With interaction allowed a person may be typing a password. Without it polkit answers in
 * milliseconds, but one at a time: fifty callers at once on a busy machine waited up to 18 s in
 * the VM, past 25 s in CI, sd-bus's default, which turned a slow yes into a denial. A caller
 * would rather wait: 90 s, within skillctl's own patience (2 min), so that it still hears why. */
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (5ULL * 60 * 1000000)
#define POLKIT_TIMEOUT_USEC (90ULL * 1000000)
#define POLKIT_DETAILS_MAX 32U

typedef struct PolkitVerdict PolkitVerdict;
struct PolkitVerdict {
        char *action;
        int result;                     /* 1, or -EACCES with error set */
        sd_bus_error error;
        PolkitVerdict *next;
};

typedef struct PolkitQuery PolkitQuery;
struct PolkitQuery {
        PolkitRegistry *registry;
        sd_bus_message *request;        /* the method call, referenced; the key of the query */
        sd_bus_slot *slot;              /* CheckAuthorization in flight, or NULL */
        char *action;                   /* the action of the call in flight */
        sd_event_source *defer;         /* frees the query after the re-dispatch */
        char *caller;                   /* the sender, watched in registry->callers while held */
        PolkitVerdict *verdicts;
        PolkitQuery *prev, *next;
};

struct PolkitRegistry {
        sd_bus *polkit_bus;
        PeerNames *callers;
        PolkitQuery *queries;
        size_t n_queries;
};

static PolkitVerdict *verdict_free(PolkitVerdict *v) {
        if (!v)
                return NULL;
        free(v->action);
        sd_bus_error_free(&v->error);
        free(v);
        return NULL;
}

static PolkitQuery *query_free(PolkitQuery *q) {
        if (!q)
                return NULL;

        if (q->registry) {
                LIST_REMOVE(q->registry->queries, q);
                q->registry->n_queries--;
                if (q->caller)
                        peer_names_remove(q->registry->callers, q->caller);
        }
        free(q->caller);
        /* Unref'ing the slot cancels the pending call: its callback will not run. */
        sd_bus_slot_unref(q->slot);
        if (q->defer) {
                (void) sd_event_source_set_enabled(q->defer, SD_EVENT_OFF);
                sd_event_source_unref(q->defer);
        }
        sd_bus_message_unref(q->request);
        free(q->action);
        while (q->verdicts) {
                PolkitVerdict *v = q->verdicts;
                q->verdicts = v->next;
                verdict_free(v);
        }
        free(q);
        return NULL;
}

int polkit_registry_new(sd_bus *polkit_bus, PeerNames *callers, PolkitRegistry **ret) {
        PolkitRegistry *reg;

        reg = calloc(1, sizeof(PolkitRegistry));
        if (!reg)
                return -ENOMEM;
        reg->polkit_bus = polkit_bus ? sd_bus_ref(polkit_bus) : NULL;
        reg->callers = polkit_bus ? callers : NULL;
        *ret = reg;
        return 0;
}

PolkitRegistry *polkit_registry_free(PolkitRegistry *reg) {
        if (!reg)
                return NULL;
        while (reg->queries)
                query_free(reg->queries);
        sd_bus_unref(reg->polkit_bus);
        free(reg);
        return NULL;
}

size_t polkit_registry_pending(const PolkitRegistry *reg) {
        return reg ? reg->n_queries : 0;
}

static PolkitQuery *registry_find(PolkitRegistry *reg, sd_bus_message *call) {
        for (PolkitQuery *q = reg->queries; q; q = q->next)
                if (q->request == call)
                        return q;
        return NULL;
}

static const PolkitVerdict *query_verdict(const PolkitQuery *q, const char *action) {
        for (const PolkitVerdict *v = q->verdicts; v; v = v->next)
                if (streq(v->action, action))
                        return v;
        return NULL;
}

/* The start time of a process (field 22 of /proc/PID/stat, in clock ticks since boot), which
 * polkit compares to tell a process from a later one that reused its pid. */
static int process_start_time(pid_t pid, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *stat = NULL;
        char *p, *save = NULL;
        int r;

        path = strdup_printf("/proc/%d/stat", (int) pid);
        if (!path)
                return -ENOMEM;
        r = read_full_file_at(AT_FDCWD, path, 4096, true, &stat, NULL);
        if (r < 0)
                return r;

        /* The command name (field 2) may hold spaces and parentheses; it ends at the last ')'. */
        p = strrchr(stat, ')');
        if (!p)
                return -EBADMSG;
        p++;
        for (unsigned field = 3; (p = strtok_r(p, " ", &save)); p = NULL, field++)
                if (field == 22)
                        return safe_atou64(p, ret);
        return -EBADMSG;
}

static int append_subject(sd_bus_message *m, sd_bus_message *call) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uint64_t start_time;
        const char *sender;
        pid_t pid;
        uid_t uid;
        int r;

        if (sd_bus_is_bus_client(sd_bus_message_get_bus(call)) > 0) {
                sender = sd_bus_message_get_sender(call);
                if (!sender)
                        return -EBADMSG;
                return sd_bus_message_append(m, "(sa{sv})", "system-bus-name", 1, "name", "s", sender);
        }

        /* A direct connection: the peer is whoever connected, as SO_PEERCRED saw it. The uid in
         * the subject makes polkit refuse if the pid has meanwhile been reused by another user's
         * process; reuse by the same user grants nothing that user does not have. */
        r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_PID, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_pid(creds, &pid);
        if (r < 0)
                return r;
        r = bus_message_get_caller_uid(call, &uid);
        if (r < 0)
                return r;
        r = process_start_time(pid, &start_time);
        if (r < 0)
                return r;
        return sd_bus_message_append(m, "(sa{sv})", "unix-process", 3,
                                     "pid", "u", (uint32_t) pid,
                                     "start-time", "t", start_time,
                                     "uid", "i", (int32_t) uid);
}

static int verdict_add(PolkitQuery *q, const char *action, int result, const sd_bus_error *error) {
        PolkitVerdict *v;
        int r;

        v = calloc(1, sizeof(PolkitVerdict));
        if (!v)
                return -ENOMEM;
        v->error = SD_BUS_ERROR_NULL;
        v->action = strdup(action);
        if (!v->action) {
                free(v);
                return -ENOMEM;
        }
        v->result = result;
        if (error && sd_bus_error_is_set(error)) {
                r = sd_bus_error_copy(&v->error, error);
                if (r < 0 && !sd_bus_error_is_set(&v->error)) {
                        verdict_free(v);
                        return -ENOMEM;
                }
        }
        v->next = q->verdicts;
        q->verdicts = v;
        return 0;
}

/* Turns polkit's reply into a verdict. Anything but a clear "yes" is a no. */
static int reply_to_verdict(sd_bus_message *reply, const char *action, sd_bus_error *error) {
        const sd_bus_error *e;
        int authorized, challenge, r;

        e = sd_bus_message_get_error(reply);
        if (e) {
                /* SECURITY: polkit unreachable, timed out or failing means denied. */
                if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                           SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT,
                                           SD_BUS_ERROR_DISCONNECTED))
                        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "Authorization for %s is not available (polkit does not answer): "
                                          "access denied.", action);
                else
                        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "Authorization for %s failed (%s: %s): access denied.",
                                          action, e->name, strna(e->message));
                return -EACCES;
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0) {
                sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Authorization for %s failed (unexpected reply from polkit): "
                                  "access denied.", action);
                return -EACCES;
        }

        if (authorized)
                return 1;
        if (challenge) {
                sd_bus_error_setf(error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                  "Authentication is required for %s; retry allowing interactive "
                                  "authorization.", action);
                return -EACCES;
        }
        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Not authorized to perform %s.", action);
        return -EACCES;
}

static int on_defer(sd_event_source *s, void *userdata) {
        PolkitQuery *q = userdata;

        /* The handler ran again and asked about another action: keep the query for that answer. */
        if (q->slot)
                return 0;
        query_free(q);
        return 0;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        PolkitQuery *q = userdata;
        sd_bus *bus;
        int result, r;

        q->slot = sd_bus_slot_unref(q->slot);

        result = reply_to_verdict(reply, q->action, &error);
        r = verdict_add(q, q->action, result, &error);
        if (r < 0)
                goto fail;
        free(q->action);
        q->action = NULL;

        /* Arm the clean-up first: once the call is queued again, failing would leave a query
         * nobody frees, or worse, none at all, and the handler would ask polkit forever. */
        bus = sd_bus_message_get_bus(q->request);
        if (q->defer)
                r = sd_event_source_set_enabled(q->defer, SD_EVENT_ONESHOT);
        else {
                r = sd_event_add_defer(sd_bus_get_event(bus), &q->defer, on_defer, q);
                if (r >= 0)
                        r = sd_event_source_set_priority(q->defer, SD_EVENT_PRIORITY_IDLE);
                if (r >= 0)
                        (void) sd_event_source_set_description(q->defer, "polkit-query-free");
        }
        if (r < 0)
                goto fail;

        /* Dispatch the original call once more: the handler now finds the verdict. */
        r = bus_message_redispatch(q->request);
        if (r < 0)
                goto fail;
        return 0;

fail:
        /* The caller went away (the bus is closed) or memory ran out: nobody is left to answer. */
        log_debug_errno(r, "Dropping a polkit query: %m");
        query_free(q);
        return 0;
}

static int query_start(PolkitQuery *q, sd_bus_message *call, const char *action, char * const *details) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        bool interactive = sd_bus_message_get_allow_interactive_authorization(call) > 0;
        int r;

        r = sd_bus_message_new_method_call(q->registry->polkit_bus, &m, POLKIT_BUS_NAME, POLKIT_PATH,
                                           POLKIT_INTERFACE, "CheckAuthorization");
        if (r < 0)
                return r;
        r = append_subject(m, call);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", action);
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(m, 'a', "{ss}");
        if (r < 0)
                return r;
        for (char * const *d = details; d && d[0] && d[1]; d += 2) {
                r = sd_bus_message_append(m, "{ss}", d[0], d[1]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        r = sd_bus_message_append(m, "us", interactive ? POLKIT_FLAG_ALLOW_USER_INTERACTION : 0U, "");
        if (r < 0)
                return r;

        q->action = strdup(action);
        if (!q->action)
                return -ENOMEM;
        r = sd_bus_call_async(q->registry->polkit_bus, &q->slot, m, on_polkit_reply, q,
                              interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                free(q->action);
                q->action = NULL;
                return r;
        }
        return 0;
}

bool polkit_caller_left(PolkitRegistry *reg, sd_bus_message *call) {
        PolkitQuery *q = reg && call ? registry_find(reg, call) : NULL;

        return q && q->caller && !peer_names_present(reg->callers, q->caller);
}

/* Watched before polkit is asked, on the connection polkit's answer comes back on: the bus
 * handles one connection's messages in order, so a departure it saw before it passed polkit's
 * answer on is told to us before that answer (peer-names.h). A call from elsewhere (the private
 * socket) has no name to watch: its connection's end is its departure. */
static int query_watch_caller(PolkitQuery *q, sd_bus_message *call) {
        const char *sender = sd_bus_message_get_sender(call);
        int r;

        if (!q->registry->callers || sd_bus_message_get_bus(call) != q->registry->polkit_bus || !sender)
                return 0;
        q->caller = strdup(sender);
        if (!q->caller)
                return -ENOMEM;
        r = peer_names_add(q->registry->callers, sender);
        if (r < 0) {
                free(q->caller);
                q->caller = NULL;
        }
        return r;
}

int polkit_check_async(PolkitRegistry *reg, sd_bus_message *call, const char *action,
                       char * const *details, uid_t good_uid, sd_bus_error *ret_error) {
        const PolkitVerdict *v;
        PolkitQuery *q;
        uid_t uid;
        int r;

        if (!reg || !call || isempty(action))
                return -EINVAL;
        if (strv_length(details) % 2 != 0 || strv_length(details) > 2 * POLKIT_DETAILS_MAX)
                return -EINVAL;

        /* 1. The second (or later) dispatch: the answer is here. */
        q = registry_find(reg, call);
        if (q) {
                v = query_verdict(q, action);
                if (v) {
                        if (v->result < 0 && ret_error)
                                (void) sd_bus_error_copy(ret_error, &v->error);
                        return v->result;
                }
                if (q->slot)
                        return -EBUSY; /* asked twice before the first answer: a handler bug */
        }

        /* 2. Callers who need no authorization. SECURITY: root only, see polkit.h. */
        r = bus_caller_uid(call, &uid, ret_error);
        if (r < 0)
                return r;
        if (uid == 0 || (good_uid != UID_INVALID && uid == good_uid))
                return 1;

        /* 3. SECURITY: no polkit means no authorization. */
        if (!reg->polkit_bus)
                return sd_bus_error_setf(ret_error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Authorization for %s is not available (no polkit): access denied.",
                                         action);

        /* 4. Ask, and let the handler return without a reply for now. */
        if (!q) {
                q = calloc(1, sizeof(PolkitQuery));
                if (!q)
                        return -ENOMEM;
                q->request = sd_bus_message_ref(call);
                q->registry = reg;
                LIST_PREPEND(reg->queries, q);
                reg->n_queries++;
                r = query_watch_caller(q, call);
                if (r < 0) {
                        query_free(q);
                        return sd_bus_error_set_errnof(ret_error, r, "Cannot ask polkit about %s: %s",
                                                       action, strerror(-r));
                }
        }
        r = query_start(q, call, action, details);
        if (r < 0) {
                if (!q->verdicts)
                        query_free(q);
                return sd_bus_error_set_errnof(ret_error, r, "Cannot ask polkit about %s: %s", action,
                                               strerror(-r));
        }
        return 0;
}
