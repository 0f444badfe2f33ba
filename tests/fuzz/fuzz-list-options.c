/* Fuzz target "list-options": the a{sv} options of the service's ListRunsFiltered() call, decoded
 * by the very code the service runs (skilld/daemon/list-options.c, which needs no bus), and the
 * paging cursor it takes back from clients (store_cursor_parse() and store_cursor_format() of
 * skilld/daemon/store.c).
 *
 * The input is a recipe, not a message, as for run-options: a first byte chooses the mode. Odd,
 * the rest of the input (up to a NUL) is one cursor. Even, each entry is a key (one of the known
 * ones, a wrong one, or bytes of the input), a D-Bus type (the right one for the key or another)
 * and the value bytes: numbers picked among special values or raw, strings picked among words
 * that lead somewhere (cursors, states, skill names, id prefixes) or length-prefixed bytes. The
 * target appends that to a method call on an unconnected bus, seals it and hands it to
 * list_options_parse().
 *
 * Promises checked, against oracles written here rather than the code's own helpers where that
 * is possible: a cursor is accepted exactly when it reads "<created_usec>-<id>", a decimal
 * number without sign, blank or leading zero that fits 64 bits and a 32-digit lowercase
 * hexadecimal id, and an accepted cursor formats back to the same text. A call is refused
 * exactly when it holds an unknown key, a key given twice, a wrong variant type or a bad value
 * (limit 0, a before that is not a cursor, an invalid skill name, a state other than queued,
 * running, finished or interrupted, a prefix that is not 1 to 32 lowercase hexadecimal digits);
 * every refusal is InvalidArgs (or -ENOMEM) with a message fit for a terminal that names a
 * known key it is about; an accepted call holds exactly the values given, and defaults (no
 * limit, no cursor, not everyone's, any skill, state and id) for the rest; no fd stays open. */
#include <sys/socket.h>

#include "fuzz.h"
#include "lint.h"
#include "list-options.h"
#include "run-options.h"
#include "store.h"

#define N_KNOWN 6

typedef struct Recipe {
        FuzzReader in;
        bool bad;               /* a key, type or value that must be refused */
        const char *bad_key;    /* the known key of the first bad entry (NULL: an unknown key) */
        unsigned seen;
        /* The values given for the known keys, in keys[] order. */
        uint32_t limit;
        bool all;
        char *strings[N_KNOWN];
} Recipe;

static sd_bus *bus;
static int bus_fds[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        /* sd-bus makes messages only on a started bus: one over a socketpair nobody answers. */
        fuzz_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bus_fds) >= 0);
        fuzz_assert(sd_bus_new(&bus) >= 0);
        fuzz_assert(sd_bus_set_fd(bus, bus_fds[0], bus_fds[0]) >= 0);
        fuzz_assert(sd_bus_start(bus) >= 0);
        return 0;
}

#define ID "0123456789abcdef0123456789abcdef"

/* Values that lead somewhere: cursors (good, near misses), states, skill names, prefixes. */
static const char *const words[] = {
        "1700000000000000-" ID, "0-" ID, "18446744073709551615-" ID, "18446744073709551616-" ID,
        "99999999999999999999-" ID, "007-" ID, "00-" ID, "+1-" ID, " 1-" ID, "-" ID, "1-", "1--" ID,
        "1-" ID "0", "1-0123456789ABCDEF0123456789abcdef", "1-" ID "\n", "1x-" ID,
        "queued", "running", "finished", "interrupted", "Running", "succeeded",
        "fuzz-skill", "a", "Bad Name", "../x", "x\033[31m",
        "0", "abc", ID, ID "0", "ABC", "0x1", "",
};

static char *word_or_string(Recipe *r) {
        return fuzz_word_or_string(&r->in, words, ELEMENTSOF(words));
}

static uint64_t number(Recipe *r) {
        static const uint64_t special[] = { 0, 1, 2, 50, 1000, UINT32_MAX, 1ULL << 32, UINT64_MAX };

        return fuzz_number(&r->in, special, ELEMENTSOF(special));
}

/* The cursor grammar, independently of store.c. */
static bool cursor_ok(const char *s) {
        const char *dash = strchr(s, '-');
        size_t n;

        if (!dash)
                return false;
        n = dash - s;
        if (n == 0 || n > 20 || strspn(s, "0123456789") != n || (s[0] == '0' && n > 1))
                return false;
        /* 20 digits fit 64 bits up to 18446744073709551615. */
        if (n == 20 && strncmp(s, "18446744073709551615", 20) > 0)
                return false;
        return strlen(dash + 1) == 32 && strspn(dash + 1, "0123456789abcdef") == 32;
}

static bool state_ok(const char *s) {
        return streq(s, "queued") || streq(s, "running") || streq(s, "finished") || streq(s, "interrupted");
}

static bool prefix_ok(const char *s) {
        size_t n = strlen(s);

        return n >= 1 && n <= 32 && strspn(s, "0123456789abcdef") == n;
}

static void check_cursor(const char *s) {
        char buf[STORE_CURSOR_MAX];
        StoreCursor c;
        StoreRun run = {};
        int q;

        q = store_cursor_parse(s, &c);
        fuzz_assert((q >= 0) == cursor_ok(s), "cursor '%s': %d", s, q);
        if (q < 0) {
                fuzz_assert(q == -EINVAL, "code %d", q);
                return;
        }
        run.created_usec = c.created_usec;
        memcpy(run.id, c.id, sizeof(run.id));
        store_cursor_format(&run, buf);
        fuzz_assert(streq(buf, s), "cursor '%s' formats back as '%s'", s, buf);
}

static const char *const keys[] = {
        "limit", "before", "all", "skill", "state", "prefix",
        "Limit", "", "limit\033[31m", "all\n", "owner",
};
static const char *const key_types[N_KNOWN] = { "u", "s", "b", "s", "s", "s" };
static const char *const types[] = { "u", "s", "b", "t", "i", "as", "a{sv}" };

static bool value_ok(size_t k, const Recipe *r) {
        const char *s = r->strings[k];

        switch (k) {
        case 0:
                return r->limit > 0;
        case 1:
                return cursor_ok(s);
        case 2:
                return true;
        case 3:
                return skill_name_is_valid(s);
        case 4:
                return state_ok(s);
        default:
                return prefix_ok(s);
        }
}

/* Appends a value of type types[t], noting it in the recipe when k is its known key's index. */
static int append_value(sd_bus_message *m, Recipe *r, size_t t, int k) {
        unsigned n;
        int q;

        switch (t) {
        case 0: {
                uint32_t v = (uint32_t) number(r);
                if (k == 0)
                        r->limit = v;
                return sd_bus_message_append(m, "u", v);
        }
        case 1: {
                _cleanup_free_ char *s = word_or_string(r);
                q = sd_bus_message_append(m, "s", s);
                if (k >= 0 && streq(key_types[k], "s"))
                        r->strings[k] = TAKE_PTR(s);
                return q;
        }
        case 2: {
                bool b = fuzz_byte(&r->in) & 1;
                if (k == 2)
                        r->all = b;
                return sd_bus_message_append(m, "b", b);
        }
        case 3:
                return sd_bus_message_append(m, "t", number(r));
        case 4:
                return sd_bus_message_append(m, "i", (int32_t) number(r));
        default:
                n = fuzz_byte(&r->in) % 4;
                q = sd_bus_message_open_container(m, 'a', types[t] + 1);
                for (unsigned i = 0; q >= 0 && i < n; i++) {
                        _cleanup_free_ char *s = word_or_string(r);

                        if (t == 5)
                                q = sd_bus_message_append(m, "s", s);
                        else
                                q = sd_bus_message_append(m, "{sv}", s, "u", (uint32_t) number(r));
                }
                return q < 0 ? q : sd_bus_message_close_container(m);
        }
}

static int append_options(sd_bus_message *m, Recipe *r) {
        int q;

        q = sd_bus_message_open_container(m, 'a', "{sv}");
        while (q >= 0 && r->in.size > 0) {
                _cleanup_free_ char *own = NULL;
                uint8_t kb = fuzz_byte(&r->in), tb = fuzz_byte(&r->in);
                const char *key;
                size_t k = kb % 16, t;
                int ki = -1;
                bool bad;

                if (k < ELEMENTSOF(keys))
                        key = keys[k];
                else
                        key = own = fuzz_string(&r->in);
                for (size_t i = 0; i < N_KNOWN; i++)
                        if (streq(key, keys[i]))
                                ki = (int) i;
                /* Mostly the right type, so that the values get decoded too. */
                if (ki >= 0 && tb < 0xc0)
                        t = ki == 0 ? 0 : ki == 2 ? 2 : 1;
                else
                        t = tb % ELEMENTSOF(types);

                bad = ki < 0 || (r->seen & (1U << ki)) || !streq(types[t], key_types[ki]);
                if (ki >= 0)
                        r->seen |= 1U << ki;

                q = sd_bus_message_open_container(m, 'e', "sv");
                if (q >= 0)
                        q = sd_bus_message_append(m, "s", key);
                if (q >= 0)
                        q = sd_bus_message_open_container(m, 'v', types[t]);
                /* A value of the wrong type (or a key's second) is never decoded: not noted. */
                if (q >= 0)
                        q = append_value(m, r, t, bad ? -1 : ki);
                if (q >= 0)
                        q = sd_bus_message_close_container(m);
                if (q >= 0)
                        q = sd_bus_message_close_container(m);

                if (!bad)
                        bad = !value_ok(ki, r);
                if (bad && !r->bad) {
                        r->bad = true;
                        r->bad_key = ki >= 0 ? keys[ki] : NULL;
                }
        }
        return q < 0 ? q : sd_bus_message_close_container(m);
}

static void check_refusal(int q, const sd_bus_error *error, const Recipe *r) {
        if (!sd_bus_error_is_set(error)) {
                fuzz_assert(q == -ENOMEM, "refused with %d and no D-Bus error", q);
                return;
        }
        fuzz_assert(r->bad, "a good call was refused: %s", strna(error->message));
        fuzz_assert(streq(error->name, SD_BUS_ERROR_INVALID_ARGS), "error %s", error->name);
        fuzz_assert(fuzz_text_is_safe(error->message), "unsafe message: %s", strna(error->message));
        if (r->bad_key)
                fuzz_assert(strstr(error->message, r->bad_key), "'%s' does not name %s", error->message,
                            r->bad_key);
}

static void check_accepted(const ListOptions *o, const Recipe *r) {
        char buf[STORE_CURSOR_MAX];
        StoreRun run = {};

        fuzz_assert(!r->bad, "a bad option was accepted");
        fuzz_assert(o->limit == ((r->seen & 1) ? r->limit : 0), "limit %" PRIu32, o->limit);
        fuzz_assert(o->has_before == !!(r->seen & 2));
        if (o->has_before) {
                run.created_usec = o->before.created_usec;
                memcpy(run.id, o->before.id, sizeof(run.id));
                store_cursor_format(&run, buf);
                fuzz_assert(streq(buf, r->strings[1]), "before '%s' read as '%s'", r->strings[1], buf);
        }
        fuzz_assert(o->all == ((r->seen & 4) && r->all));
        fuzz_assert((r->seen & 8) ? streq_ptr(o->skill, r->strings[3]) : !o->skill);
        if (r->seen & 16)
                fuzz_assert(o->state >= 0 && streq(run_state_to_string(o->state), r->strings[4]));
        else
                fuzz_assert(o->state == _RUN_STATE_INVALID);
        fuzz_assert((r->seen & 32) ? streq_ptr(o->prefix, r->strings[5]) : !o->prefix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Recipe recipe = { .in = { .data = data, .size = size } };
        int fd_before = fuzz_lowest_free_fd();
        int q;

        if (fuzz_byte(&recipe.in) & 1) {
                _cleanup_free_ char *s = strndup((const char *) recipe.in.data, recipe.in.size);

                fuzz_assert(s);
                check_cursor(s);
                return 0;
        }

        fuzz_assert(sd_bus_message_new_method_call(bus, &m, "io.skilld.Skilld1", "/io/skilld/Skilld1",
                                                   "io.skilld.Skilld1.Manager", "ListRunsFiltered") >= 0);
        q = append_options(m, &recipe);
        /* sd-bus refuses to build some messages (invalid UTF-8, ...): nothing to decode then. */
        if (q >= 0 && sd_bus_message_seal(m, 1, 0) >= 0) {
                ListOptions o;

                fuzz_assert(sd_bus_message_rewind(m, true) >= 0);
                q = list_options_parse(m, &o, &error);
                if (q < 0)
                        check_refusal(q, &error, &recipe);
                else
                        check_accepted(&o, &recipe);
        }
        m = sd_bus_message_unref(m);
        for (size_t i = 0; i < N_KNOWN; i++)
                free(recipe.strings[i]);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
