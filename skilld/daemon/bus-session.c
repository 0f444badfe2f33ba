/* Sessions through the service: the Manager's CreateSession, RemoveSession and ListSessions, and
 * the Session objects, /io/skilld/Skilld1/session/<id> (a fallback vtable over the store in
 * skilld/session/). The sessions live under the state directory (/var/lib/skilld/sessions), so
 * they outlast a restart of the service; expired ones are removed by the service's GC.
 *
 * SECURITY: a session is its creator's. Only the owner may run in it (the Run option "session",
 * bus-manager.c), read its object or remove it; root may too. Anyone else is refused with
 * AccessDenied, except that io.skilld.manage-runs lets admins list everyone's sessions and
 * remove them, never run in them or read what they hold. */
#include "bus-errors.h"
#include "bus-session.h"
#include "error.h"
#include "lint.h"
#include "log.h"
#include "manager.h"
#include "run-options.h"

#define SKILLD_SESSION_PATH_PREFIX "/io/skilld/Skilld1/session"
#define SKILLD_SESSION_INTERFACE "io.skilld.Skilld1.Session"

static uint64_t now_usec_realtime(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int bus_session_path(const char *id, char **ret) {
        char *p = strdup_printf(SKILLD_SESSION_PATH_PREFIX "/%s", id);

        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

static int access_denied(sd_bus_error *error, const char *id) {
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Session %s is not yours.", id);
}

static int no_such_session(sd_bus_error *error, const char *id) {
        _cleanup_free_ char *shown = cescape(strempty(id));

        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SESSION, "No session %s.", strna(shown));
}

int manager_session_for_run(Manager *m, const char *id, uid_t uid, const char *skill, Session **ret,
                            sd_bus_error *error) {
        _cleanup_(session_freep) Session *s = NULL;
        int r;

        if (!m->sessions)
                return sd_bus_error_set(error, SKILLD_ERROR_NO_SUCH_SESSION, "Sessions are not available.");
        r = session_load(m->sessions, id, &s);
        if (r == -ENOENT || r == -EINVAL)
                return no_such_session(error, id);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to read session %s: %s", id, strerror(-r));
        /* Only the owner runs in a session: its /work may hold anything of theirs. */
        if (s->owner != uid)
                return access_denied(error, id);
        if (session_expired(s, now_usec_realtime())) {
                (void) session_remove(m->sessions, s->id);
                return no_such_session(error, id);
        }
        if (!streq(s->skill, skill))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Session %s is for the skill %s, not %s.", id, s->skill, skill);
        *ret = TAKE_PTR(s);
        return 0;
}

void manager_session_gc(Manager *m) {
        int r;

        if (!m->sessions)
                return;
        r = session_gc(m->sessions, now_usec_realtime());
        if (r > 0)
                log_info("Removed %d expired session%s.", r, r == 1 ? "" : "s");
}

static int method_create_session(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_free_ char *path = NULL, *why = NULL;
        Manager *m = userdata;
        const Policy *p = m->policy;
        uint64_t ttl = 0;
        const char *skill;
        uid_t uid;
        int r;

        /* 1. Validate. */
        r = sd_bus_message_read(msg, "s", &skill);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                if (!streq(key, "ttl"))
                        return bus_invalid_args(error, "Unknown option '%s'.", bus_text_ok(key, 64) ? key : "?");
                r = sd_bus_message_read(msg, "v", "t", &ttl);
                if (r < 0)
                        return bus_invalid_args(error, "The option ttl must be of type t.");
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        if (!skill_name_is_valid(skill))
                return bus_invalid_args(error, "'%s' is not a valid skill name.", bus_text_ok(skill, 64) ? skill : "?");
        if (!p)
                return sd_bus_error_set(error, SKILLD_ERROR_POLICY_INVALID, m->policy_error);
        if (ttl != 0 && (ttl < 1000000 || ttl > p->session_ttl_max_usec))
                return sd_bus_error_setf(error, SKILLD_ERROR_LIMIT_EXCEEDED,
                                         "The idle TTL must be between 1s and the policy's maximum of %" PRIu64 "s.",
                                         p->session_ttl_max_usec / 1000000);
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        if (!m->sessions)
                return sd_bus_error_set(error, SD_BUS_ERROR_NOT_SUPPORTED, "Sessions are not available.");

        /* 2. No authorization beyond being a caller: a session is an empty folder of the caller's
         * within a per-user cap; running in it needs what any run needs. 3. Act. */
        manager_session_gc(m);
        r = session_create(m->sessions, uid, skill, ttl ?: p->session_ttl_default_usec, p->session_quota_default,
                           (unsigned) MIN(p->max_sessions_per_user, (uint64_t) UINT_MAX), &s, &why);
        if (r == -EUSERS)
                return sd_bus_error_set(error, SKILLD_ERROR_QUOTA_EXCEEDED, why);
        if (r < 0)
                return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
        log_info("Session %s created for uid %u, skill %s.", s->id, uid, skill);
        r = bus_session_path(s->id, &path);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "so", s->id, path);
}

static int method_remove_session(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error auth_error = SD_BUS_ERROR_NULL;
        _cleanup_(session_freep) Session *s = NULL;
        Manager *m = userdata;
        const char *id;
        uid_t uid;
        int r;

        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        if (!session_id_valid(id))
                return no_such_session(error, id);
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        if (!m->sessions)
                return no_such_session(error, id);
        r = session_load(m->sessions, id, &s);
        if (r < 0)
                return no_such_session(error, id);
        if (uid != 0 && s->owner != uid) {
                char *details[] = { (char *) "session", (char *) id, NULL };

                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", details, UID_INVALID, &auth_error);
                if (r == 0)
                        return 1;
                if (r < 0)
                        return access_denied(error, id);
        }
        r = session_remove(m->sessions, id);
        if (r == -EBUSY)
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_ACTIVE, "Session %s is in use by a run.", id);
        if (r == -ENOENT)
                return no_such_session(error, id);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to remove session %s: %s", id, strerror(-r));
        log_info("Session %s removed.", id);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_list_sessions(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        Session **v = NULL;
        size_t n = 0;
        int all, r;
        uid_t uid;

        r = sd_bus_message_read(msg, "b", &all);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        if (all && uid != 0) {
                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", NULL, UID_INVALID, error);
                if (r <= 0)
                        return r == 0 ? 1 : r;
        }
        manager_session_gc(m);
        if (m->sessions) {
                r = session_list(m->sessions, &v, &n);
                if (r < 0)
                        return bus_error_set_errnof(error, r, "Failed to list sessions: %s", strerror(-r));
        }
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sosuttt)");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *path = NULL;
                uint64_t usage = 0;

                if (!all && v[i]->owner != uid)
                        continue;
                (void) session_usage(m->sessions, v[i]->id, &usage);
                r = bus_session_path(v[i]->id, &path);
                if (r >= 0)
                        r = sd_bus_message_append(reply, "(sosuttt)", v[i]->id, path, v[i]->skill, v[i]->owner,
                                                  v[i]->used_usec + v[i]->ttl_usec, usage, v[i]->quota_bytes);
        }
        session_freev(v, n);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_send(reply);
}

/* The session of an object path, if the caller may see it (its owner, or root). */
static int session_of(Manager *m, sd_bus_message *call, const char *path, Session **ret, sd_bus_error *error) {
        _cleanup_(session_freep) Session *s = NULL;
        const char *id = startswith(path, SKILLD_SESSION_PATH_PREFIX "/");
        uid_t uid;

        if (!id || !m->sessions || session_load(m->sessions, id, &s) < 0)
                return no_such_session(error, id);
        if (!call || bus_message_get_caller_uid(call, &uid) < 0 || (uid != 0 && uid != s->owner))
                return access_denied(error, id);
        *ret = TAKE_PTR(s);
        return 0;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        _cleanup_(session_freep) Session *s = NULL;
        Manager *m = userdata;
        uint64_t usage = 0;
        int r;

        r = session_of(m, sd_bus_get_current_message(bus), path, &s, error);
        if (r < 0)
                return r;
        if (!s) /* not reached: the errors above are negative */
                return -ENOENT;
        if (streq(property, "Id"))
                return sd_bus_message_append(reply, "s", s->id);
        if (streq(property, "Skill"))
                return sd_bus_message_append(reply, "s", s->skill);
        if (streq(property, "Owner"))
                return sd_bus_message_append(reply, "u", (uint32_t) s->owner);
        if (streq(property, "CreatedTimestamp"))
                return sd_bus_message_append(reply, "t", s->created_usec);
        if (streq(property, "LastUsedTimestamp"))
                return sd_bus_message_append(reply, "t", s->used_usec);
        if (streq(property, "IdleTTL"))
                return sd_bus_message_append(reply, "t", s->ttl_usec);
        if (streq(property, "ExpiresTimestamp"))
                return sd_bus_message_append(reply, "t", s->used_usec + s->ttl_usec);
        if (streq(property, "Quota"))
                return sd_bus_message_append(reply, "t", s->quota_bytes);
        (void) session_usage(m->sessions, s->id, &usage);
        return sd_bus_message_append(reply, "t", usage);
}

static int session_object_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                               void **found, sd_bus_error *error) {
        _cleanup_(session_freep) Session *s = NULL;
        int r;

        if (!startswith(path, SKILLD_SESSION_PATH_PREFIX "/"))
                return 0;
        r = session_of(userdata, sd_bus_get_current_message(bus), path, &s, error);
        if (r < 0)
                return r;
        *found = userdata;
        return 1;
}

static const sd_bus_vtable session_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Id", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Skill", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Owner", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CreatedTimestamp", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("LastUsedTimestamp", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("IdleTTL", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ExpiresTimestamp", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("Quota", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Usage", "t", property_get, 0, 0),
        SD_BUS_VTABLE_END
};

/* Added to the Manager's interface beside its own vtable (sd-bus merges them). */
static const sd_bus_vtable manager_session_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS("CreateSession",
                                SD_BUS_ARGS("s", skill, "a{sv}", options),
                                SD_BUS_RESULT("s", id, "o", session),
                                method_create_session,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveSession",
                                SD_BUS_ARGS("s", id),
                                SD_BUS_NO_RESULT,
                                method_remove_session,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSessions",
                                SD_BUS_ARGS("b", all),
                                SD_BUS_RESULT("a(sosuttt)", sessions),
                                method_list_sessions,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

int bus_session_add_objects(Manager *m, sd_bus *bus) {
        int r;

        r = sd_bus_add_object_vtable(bus, NULL, SKILLD_OBJECT_PATH, SKILLD_MANAGER_INTERFACE,
                                     manager_session_vtable, m);
        if (r < 0)
                return r;
        return sd_bus_add_fallback_vtable(bus, NULL, SKILLD_SESSION_PATH_PREFIX, SKILLD_SESSION_INTERFACE,
                                          session_vtable, session_object_find, m);
}
