/* "skillctl session" through the skilld service: its sessions, kept under /var/lib/skilld/sessions
 * and used by its runs (CreateSession, ListSessions, RemoveSession and the Session objects of
 * io.skilld.Skilld1(5)). The output is that of skillctl's own sessions (session.c). */
#include "log.h"
#include "output.h"
#include "run.h"
#include "session-service.h"
#include "verbs.h"

#define SKILLD_BUS_SESSION SKILLD_BUS_NAME ".Session"

int session_service_create(Client *c, const char *skill_arg, uint64_t ttl_usec, Session **ret) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        const char *name = skill_arg, *id, *path;
        int r;

        /* A skill given as a folder or file is the skill its SKILL.md names; the service's runs
         * check the name of what they are given against it. */
        if (!run_skill_is_installed_name(skill_arg)) {
                RunArgs ra = { .skill = skill_arg, .exec = true };

                r = run_load_skill(&ra, &skill, NULL);
                if (r != 0)
                        return -EINVAL;
                name = skill.skill->name;
        }
        r = client_new_call(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "CreateSession", &m);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", name);
        if (r >= 0)
                r = ttl_usec > 0 ? sym_sd_bus_message_append(m, "a{sv}", 1, "ttl", "t", ttl_usec)
                                 : sym_sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0)
                return log_error_errno(r, "Failed to build the request: %m");
        r = client_call(c, m, &e, &reply);
        if (r < 0)
                return client_log_error("session create", &e, r);
        r = sym_sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_error_errno(r, "Failed to parse the reply: %m");
        return session_service_get(c, id, ret);
}

int session_service_get(Client *c, const char *id, Session **ret) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_free_ char *path = NULL;
        uint32_t owner = 0;
        int r;

        if (!session_id_valid(id)) {
                _cleanup_free_ char *shown = cescape(id);

                log_error("no such session: %s", strna(shown));
                return -ENOENT;
        }
        path = strdup_printf(SKILLD_BUS_PATH "/session/%s", id);
        s = calloc(1, sizeof(Session));
        if (!path || !s)
                return log_oom();
        memcpy(s->id, id, SESSION_ID_LEN + 1);
        r = sym_sd_bus_get_property_string(c->bus, c->destination, path, SKILLD_BUS_SESSION, "Skill", &e, &s->skill);
        if (r >= 0)
                r = sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION, "Owner", &e, 'u',
                                                    &owner);
        if (r >= 0)
                r = sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION,
                                                    "CreatedTimestamp", &e, 't', &s->created_usec);
        if (r >= 0)
                r = sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION,
                                                    "LastUsedTimestamp", &e, 't', &s->used_usec);
        if (r >= 0)
                r = sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION, "IdleTTL", &e,
                                                    't', &s->ttl_usec);
        if (r >= 0)
                r = sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION, "Quota", &e,
                                                    't', &s->quota_bytes);
        if (r < 0)
                return client_log_error(id, &e, r);
        s->owner = owner;
        *ret = TAKE_PTR(s);
        return 0;
}

int session_service_usage(Client *c, const char *id, uint64_t *ret) {
        _cleanup_free_ char *path = strdup_printf(SKILLD_BUS_PATH "/session/%s", id);

        if (!path)
                return -ENOMEM;
        return sym_sd_bus_get_property_trivial(c->bus, c->destination, path, SKILLD_BUS_SESSION, "Usage", NULL, 't',
                                               ret);
}

int session_service_list(Client *c, bool all, Session ***ret, uint64_t **ret_usage, size_t *ret_n) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Session **v = NULL;
        uint64_t *usage = NULL;
        size_t n = 0;
        const char *id, *path, *skill;
        uint32_t owner;
        uint64_t expires, used, quota;
        int r;

        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "ListSessions", &e, &reply, "b", all);
        if (r < 0)
                return client_log_error("session list", &e, r);
        r = sym_sd_bus_message_enter_container(reply, 'a', "(sosuttt)");
        while (r >= 0 && (r = sym_sd_bus_message_read(reply, "(sosuttt)", &id, &path, &skill, &owner, &expires, &used,
                                                      &quota)) > 0) {
                Session *s = calloc(1, sizeof(Session)), **nv = reallocarray(v, n + 1, sizeof(Session *));
                uint64_t *nu = nv ? reallocarray(usage, n + 1, sizeof(uint64_t)) : NULL;

                if (nv)
                        v = nv;
                if (nu)
                        usage = nu;
                if (!s || !nv || !nu || !session_id_valid(id) || !(s->skill = strdup(skill))) {
                        session_free(s);
                        r = -ENOMEM;
                        break;
                }
                memcpy(s->id, id, SESSION_ID_LEN + 1);
                s->owner = owner;
                s->quota_bytes = quota;
                /* The list says when it expires; the object has the rest. */
                s->used_usec = expires;
                usage[n] = used;
                v[n++] = s;
        }
        if (r < 0) {
                session_freev(v, n);
                free(usage);
                return log_error_errno(r, "Failed to parse the list of sessions: %m");
        }
        *ret = v;
        *ret_usage = usage;
        *ret_n = n;
        return 0;
}

int session_service_remove(Client *c, const char *id) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        r = client_call_method(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "RemoveSession", &e, NULL, "s", id);
        if (r < 0)
                return client_log_error(id, &e, r);
        return 0;
}
