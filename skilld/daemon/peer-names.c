/* See peer-names.h. */
#include "log.h"
#include "peer-names.h"

typedef struct PeerName {
        char *name;
        unsigned n_ref;
        bool gone;
        sd_bus_slot *match;             /* its NameOwnerChanged */
        sd_bus_slot *check;             /* the GetNameOwner under way */
} PeerName;

struct PeerNames {
        sd_bus *bus;
        PeerName **names;
        size_t n, allocated;
};

static PeerName *peer_name_free(PeerName *p) {
        if (!p)
                return NULL;
        sd_bus_slot_unref(p->match);
        sd_bus_slot_unref(p->check);
        free(p->name);
        free(p);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(PeerName *, peer_name_free);

int peer_names_new(sd_bus *bus, PeerNames **ret) {
        PeerNames *s = calloc(1, sizeof(PeerNames));

        if (!s)
                return -ENOMEM;
        s->bus = sd_bus_ref(bus);
        *ret = s;
        return 0;
}

PeerNames *peer_names_free(PeerNames *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                peer_name_free(s->names[i]);
        free(s->names);
        sd_bus_unref(s->bus);
        free(s);
        return NULL;
}

static PeerName *find(const PeerNames *s, const char *name, size_t *ret_index) {
        for (size_t i = 0; s && i < s->n; i++)
                if (streq(s->names[i]->name, name)) {
                        if (ret_index)
                                *ret_index = i;
                        return s->names[i];
                }
        return NULL;
}

/* Gone for good: a unique name is never given to another connection while the bus runs. The
 * match goes now (it costs the bus a rule); the entry stays until its last reference. */
static void mark_gone(PeerName *p) {
        p->gone = true;
        p->match = sd_bus_slot_unref(p->match);
        p->check = sd_bus_slot_unref(p->check);
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        PeerName *p = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (streq(name, p->name) && isempty(new_owner))
                mark_gone(p);
        return 0;
}

static int on_match_installed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        PeerName *p = userdata;

        /* Refused (the bus's cap on match rules): the name is not watched, and is told until its
         * runs end; a signal to a name that left is dropped by the bus. The connection stays. */
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_debug("Not watching %s for its departure: %s", p->name,
                          strna(sd_bus_message_get_error(m)->message));
                p->match = sd_bus_slot_unref(p->match);
        }
        return 0;
}

static int on_name_checked(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        PeerName *p = userdata;

        p->check = sd_bus_slot_unref(p->check);
        /* Asked after the match was sent, answered in order: if it is there now, its departure
         * will be heard; if it is not, it left before the match was in place. */
        if (sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                mark_gone(p);
        return 0;
}

static int peer_name_watch(PeerNames *s, PeerName *p) {
        _cleanup_free_ char *match = NULL;
        int r;

        /* Unique names are ":1.42" and the like: nothing in them needs quoting in a match. */
        if (strchr(p->name, '\'') || strchr(p->name, '\\'))
                return -EINVAL;
        match = strdup_printf("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                              "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
                              p->name);
        if (!match)
                return -ENOMEM;
        r = sd_bus_add_match_async(s->bus, &p->match, match, on_name_owner_changed, on_match_installed, p);
        if (r < 0)
                return r;
        return sd_bus_call_method_async(s->bus, &p->check, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus", "GetNameOwner", on_name_checked, p, "s",
                                        p->name);
}

int peer_names_add(PeerNames *s, const char *name) {
        _cleanup_(peer_name_freep) PeerName *p = NULL;
        PeerName *found = find(s, name, NULL);
        int r;

        if (found) {
                found->n_ref++;
                return 0;
        }
        if (s->n == s->allocated) {
                PeerName **a = reallocarray(s->names, s->allocated * 2 + 8, sizeof(PeerName *));

                if (!a)
                        return -ENOMEM;
                s->names = a;
                s->allocated = s->allocated * 2 + 8;
        }
        p = calloc(1, sizeof(PeerName));
        if (!p)
                return -ENOMEM;
        p->name = strdup(name);
        if (!p->name)
                return -ENOMEM;
        p->n_ref = 1;
        r = peer_name_watch(s, p);
        if (r < 0)
                return r;
        s->names[s->n++] = TAKE_PTR(p);
        return 0;
}

void peer_names_remove(PeerNames *s, const char *name) {
        PeerName *p;
        size_t i;

        p = find(s, name, &i);
        if (!p || --p->n_ref > 0)
                return;
        peer_name_free(p);
        s->names[i] = s->names[--s->n];
}

bool peer_names_present(const PeerNames *s, const char *name) {
        const PeerName *p = find(s, name, NULL);

        return p && !p->gone;
}

size_t peer_names_count(const PeerNames *s) {
        size_t n = 0;

        for (size_t i = 0; s && i < s->n; i++)
                n += !s->names[i]->gone;
        return n;
}
