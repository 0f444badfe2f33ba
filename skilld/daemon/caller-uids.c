/* See caller-uids.h. */
#include "bus-held.h"
#include "caller-uids.h"
#include "list.h"
#include "log.h"

#define CALLER_CACHE_SIZE 128U
/* Senders asked about at once: beyond, new senders' calls go through and their handlers ask the
 * bus themselves, as they would without the filter. (A sender's held calls are bounded by what
 * the bus lets one connection have in flight.) */
#define ASKING_MAX 256U

static struct {
        sd_bus *bus;                    /* not referenced: only compared */
        char *sender;
        uid_t uid;
} caller_cache[CALLER_CACHE_SIZE];
static unsigned caller_cache_next;

static bool caller_cache_find(sd_bus *bus, const char *sender, uid_t *ret) {
        for (unsigned i = 0; i < CALLER_CACHE_SIZE; i++)
                if (caller_cache[i].sender && caller_cache[i].bus == bus &&
                    streq(caller_cache[i].sender, sender)) {
                        if (ret)
                                *ret = caller_cache[i].uid;
                        return true;
                }
        return false;
}

static void caller_cache_add(sd_bus *bus, const char *sender, uid_t uid) {
        char *copy = strdup(sender);

        if (!copy)
                return;         /* only a cache */
        free(caller_cache[caller_cache_next].sender);
        caller_cache[caller_cache_next].bus = bus;
        caller_cache[caller_cache_next].sender = copy;
        caller_cache[caller_cache_next].uid = uid;
        caller_cache_next = (caller_cache_next + 1) % CALLER_CACHE_SIZE;
}

void bus_caller_cache_flush(sd_bus *bus) {
        for (unsigned i = 0; i < CALLER_CACHE_SIZE; i++)
                if (!bus || caller_cache[i].bus == bus) {
                        free(caller_cache[i].sender);
                        caller_cache[i].sender = NULL;
                        caller_cache[i].bus = NULL;
                }
}

static bool cacheable(sd_bus *bus, const char *sender) {
        return sender && sender[0] == ':' && sd_bus_is_bus_client(bus) > 0;
}

int bus_message_get_caller_uid(sd_bus_message *call, uid_t *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        sd_bus *bus = sd_bus_message_get_bus(call);
        const char *sender = sd_bus_message_get_sender(call);
        uid_t uid;
        int r;

        if (cacheable(bus, sender) && caller_cache_find(bus, sender, ret))
                return 0;

        /* No SD_BUS_CREDS_AUGMENT: only what the bus or the kernel vouches for, nothing read from
         * /proc after the fact. A bus reports the uid as EUID, SO_PEERCRED as either. */
        r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r == -ENODATA)
                r = sd_bus_creds_get_uid(creds, &uid);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_augmented_mask(creds) & (SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID))
                return -EPERM;
        if (uid == UID_INVALID)
                return -ENODATA;
        if (cacheable(bus, sender))
                caller_cache_add(bus, sender, uid);
        *ret = uid;
        return 0;
}

bool bus_caller_uid_remembered(sd_bus_message *call) {
        sd_bus *bus = sd_bus_message_get_bus(call);
        const char *sender = sd_bus_message_get_sender(call);

        return cacheable(bus, sender) && caller_cache_find(bus, sender, NULL);
}

int bus_caller_uid(sd_bus_message *call, uid_t *ret, sd_bus_error *error) {
        int r;

        r = bus_message_get_caller_uid(call, ret);
        if (r < 0) {
                (void) sd_bus_error_set_errnof(error, r, "Cannot determine the caller's identity: %s",
                                               strerror(-r));
                return r;
        }
        return 0;
}

/* One sender whose uid is asked, with its calls held in arrival order. Once the answer is in,
 * the first is put back into the read queue; when it comes through the filter, the next is, so
 * that a call of this sender read meanwhile cannot overtake them. */
typedef struct Asking {
        CallerUids *owner;
        char *sender;
        sd_bus_slot *slot;              /* GetConnectionUnixUser in flight, or NULL once answered */
        sd_bus_message **held;
        size_t n_held, allocated;
        struct Asking *prev, *next;
} Asking;

struct CallerUids {
        sd_bus *bus;
        sd_bus_slot *filter;
        Asking *asking;
        size_t n_asking, n_held;
};

static Asking *asking_free(Asking *a) {
        if (!a)
                return NULL;
        if (a->owner) {
                LIST_REMOVE(a->owner->asking, a);
                a->owner->n_asking--;
                a->owner->n_held -= a->n_held;
        }
        sd_bus_slot_unref(a->slot);
        for (size_t i = 0; i < a->n_held; i++)
                sd_bus_message_unref(a->held[i]);
        free(a->held);
        free(a->sender);
        free(a);
        return NULL;
}

static Asking *asking_find(CallerUids *c, const char *sender) {
        for (Asking *a = c->asking; a; a = a->next)
                if (streq(a->sender, sender))
                        return a;
        return NULL;
}

static int asking_hold(Asking *a, sd_bus_message *m) {
        if (a->n_held == a->allocated) {
                sd_bus_message **h = reallocarray(a->held, a->allocated * 2 + 2, sizeof(sd_bus_message *));

                if (!h)
                        return -ENOMEM;
                a->held = h;
                a->allocated = a->allocated * 2 + 2;
        }
        a->held[a->n_held++] = sd_bus_message_ref(m);
        a->owner->n_held++;
        return 0;
}

/* The first held call leaves the queue; the caller owns the reference returned. */
static sd_bus_message *asking_pop(Asking *a) {
        sd_bus_message *m = a->held[0];

        memmove(a->held, a->held + 1, --a->n_held * sizeof(sd_bus_message *));
        a->owner->n_held--;
        return m;
}

/* The next held call goes back into the read queue; with none left, the sender is done. */
static void asking_release_next(Asking *a) {
        while (a->n_held > 0) {
                int r = bus_message_redispatch(a->held[0]);

                if (r >= 0)
                        return;
                /* Not put back (no memory): its handler is never reached; the caller hears so. */
                log_debug_errno(r, "Dropping a call of %s: %m", a->sender);
                (void) sd_bus_reply_method_errorf(a->held[0], SD_BUS_ERROR_NO_MEMORY,
                                                  "The service could not take the call: %s", strerror(-r));
                sd_bus_message_unref(asking_pop(a));
        }
        asking_free(a);
}

static int on_unix_user(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Asking *a = userdata;
        uint32_t uid;

        a->slot = sd_bus_slot_unref(a->slot);
        /* Gone: nobody to act for or to answer. */
        if (sd_bus_message_is_method_error(reply, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
                asking_free(a);
                return 0;
        }
        /* Remembered only from a clear answer. On another error the calls go on anyway: their
         * handlers ask the bus themselves and answer accordingly. */
        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "u", &uid) > 0 &&
            uid != UID_INVALID)
                caller_cache_add(a->owner->bus, a->sender, (uid_t) uid);
        asking_release_next(a);
        return 0;
}

static int asking_start(CallerUids *c, const char *sender, sd_bus_message *m) {
        Asking *a;
        int r;

        a = calloc(1, sizeof(Asking));
        if (!a)
                return -ENOMEM;
        a->sender = strdup(sender);
        if (!a->sender) {
                free(a);
                return -ENOMEM;
        }
        r = sd_bus_call_method_async(c->bus, &a->slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionUnixUser", on_unix_user, a, "s",
                                     sender);
        if (r < 0) {
                asking_free(a);
                return r;
        }
        a->owner = c;
        LIST_PREPEND(c->asking, a);
        c->n_asking++;
        r = asking_hold(a, m);
        if (r < 0) {
                asking_free(a);
                return r;
        }
        return 0;
}

static int caller_filter(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        CallerUids *c = userdata;
        const char *sender;
        Asking *a;

        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        sender = sd_bus_message_get_sender(m);
        if (!cacheable(c->bus, sender))
                return 0;

        a = asking_find(c, sender);
        if (a) {
                if (!a->slot && a->n_held > 0 && a->held[0] == m) {
                        /* Its turn: through to its handler, the next one after it. */
                        sd_bus_message_unref(asking_pop(a));
                        asking_release_next(a);
                        return 0;
                }
                /* Behind the ones held, in order. */
                return asking_hold(a, m) < 0 ? 0 : 1;
        }
        if (caller_cache_find(c->bus, sender, NULL) || c->n_asking >= ASKING_MAX)
                return 0;
        return asking_start(c, sender, m) < 0 ? 0 : 1;
}

int caller_uids_new(sd_bus *bus, CallerUids **ret) {
        _cleanup_(caller_uids_freep) CallerUids *c = NULL;
        int r;

        c = calloc(1, sizeof(CallerUids));
        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        r = sd_bus_add_filter(bus, &c->filter, caller_filter, c);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

CallerUids *caller_uids_free(CallerUids *c) {
        if (!c)
                return NULL;
        sd_bus_slot_unref(c->filter);
        while (c->asking)
                asking_free(c->asking);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

size_t caller_uids_pending(const CallerUids *c) {
        return c ? c->n_held : 0;
}
