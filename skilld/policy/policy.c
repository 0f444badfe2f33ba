/* See policy.h. The parser walks libyaml's event stream against a table of known keys: a mapping
 * is entered only when its path is a prefix of some known key, so nesting is bounded by the table
 * and no document can make us recurse deeper than the policy's own shape. */
#include <ctype.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <yaml.h>

#include "env.h"
#include "error.h"
#include "fileio.h"
#include "lint.h"
#include "parse-util.h"
#include "policy.h"
#include "string-table.h"

#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define USEC_PER_MIN (60ULL * USEC_PER_SEC)
#define USEC_PER_HOUR (60ULL * USEC_PER_MIN)
#define USEC_PER_DAY (24ULL * USEC_PER_HOUR)
#define USEC_PER_WEEK (7ULL * USEC_PER_DAY)

/* A policy with more problems than this is reported in part; the rest would only be noise. */
#define POLICY_ERRORS_MAX 64U
/* Deeper than any key in the table; reached only while skipping an unknown key's value. */
#define POLICY_DEPTH_MAX 8U
#define POLICY_VALUE_MAX 4096U
/* 100000% is a thousand CPUs; more is a typo, and the product with the period must not overflow. */
#define POLICY_CPU_PERCENT_MAX 100000ULL
#define POLICY_LIST_MAX 1024U

static const char * const limit_names[_POLICY_LIMIT_MAX] = {
        [POLICY_LIMIT_MEMORY] = "memory",
        [POLICY_LIMIT_TASKS] = "tasks",
        [POLICY_LIMIT_CPU] = "cpu",
        [POLICY_LIMIT_TIMEOUT] = "timeout",
        [POLICY_LIMIT_STDOUT] = "stdout",
        [POLICY_LIMIT_STDERR] = "stderr",
        [POLICY_LIMIT_OUTPUT] = "output",
        [POLICY_LIMIT_TMPFS] = "tmpfs",
};

/* The smallest sensible value of each limit. Zero memory or tasks cannot run anything, and a
 * tmpfs of size 0 means "unlimited" to the kernel, the opposite of what a 0 would suggest. Zero
 * output caps are fine: the run's output is simply not kept. */
static const uint64_t limit_floor[_POLICY_LIMIT_MAX] = {
        [POLICY_LIMIT_MEMORY] = 1ULL << 20,
        [POLICY_LIMIT_TASKS] = 1,
        [POLICY_LIMIT_CPU] = 1,
        [POLICY_LIMIT_TIMEOUT] = USEC_PER_MSEC,
        [POLICY_LIMIT_STDOUT] = 0,
        [POLICY_LIMIT_STDERR] = 0,
        [POLICY_LIMIT_OUTPUT] = 0,
        [POLICY_LIMIT_TMPFS] = 1ULL << 20,
};


DEFINE_STRING_TABLE_LOOKUP(policy_limit, PolicyLimit, limit_names);

typedef enum ValueType {
        VALUE_SIZE,             /* "512M" */
        VALUE_COUNT,            /* "256" */
        VALUE_PERCENT,          /* "150%" or "150" */
        VALUE_DURATION,         /* "60s", "2min", "30d" */
        VALUE_BOOL,
        VALUE_UID,
        VALUE_UID_COUNT,
        VALUE_LAYERS,           /* list of isolation layer names */
        VALUE_NETWORK,          /* list of skill names and sha256:HEX hashes */
        VALUE_RESOLVERS,        /* list of environment resolvers: debian, pip, npm */
        VALUE_URL,              /* an http:// or https:// URL, or "none" */
        VALUE_FIND_LINKS,       /* list of absolute paths of wheelhouses and http(s) URLs */
} ValueType;

typedef struct PolicyKey {
        const char *path;
        ValueType type;
        size_t offset;
        bool infinity_ok;
        PolicyLimit limit;      /* for limits.*: which one, to apply its floor while parsing */
} PolicyKey;

#define KEY(path, type, field, infinity_ok) \
        { path, type, offsetof(Policy, field), infinity_ok, _POLICY_LIMIT_INVALID }
#define LIMIT_KEYS(name, l, type)                                                       \
        { "limits." name ".default", type, offsetof(Policy, defaults.value[l]), false, l }, \
        { "limits." name ".max", type, offsetof(Policy, maximums.value[l]), false, l }

static const PolicyKey policy_keys[] = {
        LIMIT_KEYS("memory", POLICY_LIMIT_MEMORY, VALUE_SIZE),
        LIMIT_KEYS("tasks", POLICY_LIMIT_TASKS, VALUE_COUNT),
        LIMIT_KEYS("cpu", POLICY_LIMIT_CPU, VALUE_PERCENT),
        LIMIT_KEYS("timeout", POLICY_LIMIT_TIMEOUT, VALUE_DURATION),
        LIMIT_KEYS("stdout", POLICY_LIMIT_STDOUT, VALUE_SIZE),
        LIMIT_KEYS("stderr", POLICY_LIMIT_STDERR, VALUE_SIZE),
        LIMIT_KEYS("output", POLICY_LIMIT_OUTPUT, VALUE_SIZE),
        LIMIT_KEYS("tmpfs", POLICY_LIMIT_TMPFS, VALUE_SIZE),
        KEY("uids.first", VALUE_UID, uid_first, false),
        KEY("uids.count", VALUE_UID_COUNT, uid_count, false),
        KEY("uids.allow-low", VALUE_BOOL, uid_allow_low, false),
        KEY("concurrency.per-user", VALUE_COUNT, max_active_per_user, false),
        KEY("concurrency.global", VALUE_COUNT, max_active, false),
        KEY("queue.per-user", VALUE_COUNT, max_queued_per_user, false),
        KEY("queue.global", VALUE_COUNT, max_queued, false),
        KEY("retention.max-runs", VALUE_COUNT, retention.max_runs, true),
        KEY("retention.max-bytes", VALUE_SIZE, retention.max_bytes, true),
        KEY("retention.max-age", VALUE_DURATION, retention.max_age_usec, true),
        KEY("retention.per-user.max-runs", VALUE_COUNT, retention.max_runs_per_user, true),
        KEY("retention.per-user.max-bytes", VALUE_SIZE, retention.max_bytes_per_user, true),
        KEY("store.min-free", VALUE_SIZE, min_free_bytes, false),
        KEY("store.min-free-percent", VALUE_PERCENT, min_free_percent, false),
        KEY("isolation.may-be-missing", VALUE_LAYERS, isolation_may_be_missing, false),
        KEY("network.allowed-skills", VALUE_NETWORK, network_skills, false), /* both lists */
        KEY("service.idle-timeout", VALUE_DURATION, idle_timeout_usec, false),
        KEY("environments.resolvers", VALUE_RESOLVERS, env_resolvers, false),
        KEY("environments.pip-index-url", VALUE_URL, env_pip_index_url, false),
        KEY("environments.pip-find-links", VALUE_FIND_LINKS, env_pip_find_links, false),
        KEY("environments.max-count", VALUE_COUNT, env_max_count, true),
        KEY("environments.max-size", VALUE_SIZE, env_max_bytes, true),
        KEY("environments.builds.per-user", VALUE_COUNT, env_max_builds_per_user, false),
        KEY("environments.builds.global", VALUE_COUNT, env_max_builds, false),
        KEY("sessions.idle-ttl.default", VALUE_DURATION, session_ttl_default_usec, false),
        KEY("sessions.idle-ttl.max", VALUE_DURATION, session_ttl_max_usec, false),
        KEY("sessions.quota.default", VALUE_SIZE, session_quota_default, false),
        KEY("sessions.quota.max", VALUE_SIZE, session_quota_max, false),
        KEY("sessions.per-user", VALUE_COUNT, max_sessions_per_user, false),
};

#define N_POLICY_KEYS ELEMENTSOF(policy_keys)

/* Which layer set a key (index into Policy.sources, or SOURCE_BUILTIN) and on which line. */
#define SOURCE_BUILTIN UINT_MAX
struct PolicyOrigin {
        unsigned source;
        unsigned line;
};

static const PolicyKey *key_lookup(const char *path) {
        for (size_t i = 0; i < N_POLICY_KEYS; i++)
                if (streq(policy_keys[i].path, path))
                        return policy_keys + i;
        return NULL;
}

/* A section is a path that prefixes some key: "limits", "limits.memory", "retention.per-user". */
static bool section_exists(const char *path) {
        size_t n = strlen(path);

        for (size_t i = 0; i < N_POLICY_KEYS; i++)
                if (strncmp(policy_keys[i].path, path, n) == 0 && policy_keys[i].path[n] == '.')
                        return true;
        return false;
}

static void *field_ptr(Policy *p, const PolicyKey *k) {
        return (uint8_t *) p + k->offset;
}

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;
        strv_free(p->network_skills);
        strv_free(p->network_hashes);
        strv_free(p->env_resolvers);
        free(p->env_pip_index_url);
        strv_free(p->env_pip_find_links);
        strv_free(p->sources);
        free(p->origins);
        free(p);
        return NULL;
}

int policy_new_default(Policy **ret) {
        _cleanup_(policy_freep) Policy *p = NULL;

        p = calloc(1, sizeof(Policy));
        if (!p)
                return -ENOMEM;
        p->origins = calloc(N_POLICY_KEYS, sizeof(PolicyOrigin));
        if (!p->origins)
                return -ENOMEM;
        for (size_t i = 0; i < N_POLICY_KEYS; i++)
                p->origins[i] = (PolicyOrigin) { .source = SOURCE_BUILTIN };

        /* Keep these in sync with policy/policy.yaml: test-policy checks that the shipped file
         * parses to exactly these values. */
        p->defaults.value[POLICY_LIMIT_MEMORY] = 512ULL << 20;
        p->maximums.value[POLICY_LIMIT_MEMORY] = 4ULL << 30;
        p->defaults.value[POLICY_LIMIT_TASKS] = 256;
        p->maximums.value[POLICY_LIMIT_TASKS] = 4096;
        p->defaults.value[POLICY_LIMIT_CPU] = 100;
        p->maximums.value[POLICY_LIMIT_CPU] = 400;
        p->defaults.value[POLICY_LIMIT_TIMEOUT] = 60 * USEC_PER_SEC;
        p->maximums.value[POLICY_LIMIT_TIMEOUT] = USEC_PER_HOUR;
        p->defaults.value[POLICY_LIMIT_STDOUT] = 16ULL << 20;
        p->maximums.value[POLICY_LIMIT_STDOUT] = 256ULL << 20;
        p->defaults.value[POLICY_LIMIT_STDERR] = 16ULL << 20;
        p->maximums.value[POLICY_LIMIT_STDERR] = 256ULL << 20;
        p->defaults.value[POLICY_LIMIT_OUTPUT] = 256ULL << 20;
        p->maximums.value[POLICY_LIMIT_OUTPUT] = 4ULL << 30;
        p->defaults.value[POLICY_LIMIT_TMPFS] = 128ULL << 20;
        p->maximums.value[POLICY_LIMIT_TMPFS] = 1ULL << 30;

        /* Above systemd-nspawn's container range (524288..1879048191) and far above the system,
         * human and DynamicUser= ranges, so a run's uid never owns anything else on the host. */
        p->uid_first = 1879048192;
        p->uid_count = 65536;
        p->uid_allow_low = false;

        p->max_active_per_user = 4;
        p->max_active = 16;
        p->max_queued_per_user = 16;
        p->max_queued = 64;

        p->retention.max_runs = 5000;
        p->retention.max_bytes = 4ULL << 30;
        p->retention.max_age_usec = 30 * USEC_PER_DAY;
        p->retention.max_runs_per_user = 500;
        p->retention.max_bytes_per_user = 1ULL << 30;

        p->min_free_bytes = 256ULL << 20;
        p->min_free_percent = 2;

        p->isolation_may_be_missing = 0;
        p->idle_timeout_usec = 30 * USEC_PER_SEC;

        if (strv_extend(&p->env_resolvers, "debian") < 0 || strv_extend(&p->env_resolvers, "pip") < 0 ||
            strv_extend(&p->env_resolvers, "npm") < 0)
                return -ENOMEM;
        p->env_max_count = 32;
        p->env_max_bytes = 8ULL << 30;
        p->env_max_builds_per_user = 2;
        p->env_max_builds = 4;
        p->session_ttl_default_usec = USEC_PER_DAY;
        p->session_ttl_max_usec = 30 * USEC_PER_DAY;
        p->session_quota_default = 256ULL << 20;
        p->session_quota_max = 4ULL << 30;
        p->max_sessions_per_user = 16;

        *ret = TAKE_PTR(p);
        return 0;
}

/* Appends one message to a list of problems, stopping with a note once there are too many. */
_printf_(2, 3)
static int errors_add(char ***errors, const char *fmt, ...) {
        size_t n = strv_length(*errors);
        va_list ap;
        char *m;
        int r;

        if (n > POLICY_ERRORS_MAX)
                return 0;
        if (n == POLICY_ERRORS_MAX)
                return strv_extend(errors, "too many problems, the rest are not listed");

        va_start(ap, fmt);
        r = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return strv_push(errors, m);
}

static char *format_duration(uint64_t usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "w", USEC_PER_WEEK },
                { "d", USEC_PER_DAY },
                { "h", USEC_PER_HOUR },
                { "min", USEC_PER_MIN },
                { "s", USEC_PER_SEC },
                { "ms", USEC_PER_MSEC },
        };

        if (usec == POLICY_INFINITY)
                return strdup("infinity");
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (usec >= units[i].usec && usec % units[i].usec == 0)
                        return strdup_printf("%" PRIu64 "%s", usec / units[i].usec, units[i].suffix);
        return strdup_printf("%" PRIu64 "us", usec);
}

static char *format_value(ValueType type, uint64_t v) {
        char buf[FORMAT_BYTES_MAX];

        if (v == POLICY_INFINITY)
                return strdup("infinity");
        switch (type) {
        case VALUE_SIZE:
                return strdup(format_bytes(buf, sizeof(buf), v));
        case VALUE_PERCENT:
                return strdup_printf("%" PRIu64 "%%", v);
        case VALUE_DURATION:
                return format_duration(v);
        case VALUE_COUNT:
        case VALUE_BOOL:
        case VALUE_UID:
        case VALUE_UID_COUNT:
        case VALUE_LAYERS:
        case VALUE_NETWORK:
        case VALUE_RESOLVERS:
        case VALUE_URL:
        case VALUE_FIND_LINKS:
        default:
                return strdup_printf("%" PRIu64, v);
        }
}

static ValueType limit_type(PolicyLimit l) {
        switch (l) {
        case POLICY_LIMIT_TASKS:
                return VALUE_COUNT;
        case POLICY_LIMIT_CPU:
                return VALUE_PERCENT;
        case POLICY_LIMIT_TIMEOUT:
                return VALUE_DURATION;
        case POLICY_LIMIT_MEMORY:
        case POLICY_LIMIT_STDOUT:
        case POLICY_LIMIT_STDERR:
        case POLICY_LIMIT_OUTPUT:
        case POLICY_LIMIT_TMPFS:
        case _POLICY_LIMIT_MAX:
        case _POLICY_LIMIT_INVALID:
        default:
                return VALUE_SIZE;
        }
}

char *policy_limit_format(PolicyLimit l, uint64_t v) {
        return format_value(limit_type(l), v);
}

static int parse_bool(const char *s, bool *ret) {
        static const char * const yes[] = { "yes", "true", "on", "y" };
        static const char * const no[] = { "no", "false", "off", "n" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

static bool is_hex(const char *s, size_t n) {
        if (strlen(s) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdefABCDEF", s[i]))
                        return false;
        return true;
}

static const char *hash_strip(const char *h) {
        const char *e = startswith(h, "sha256:");
        return e ?: h;
}

/* One pass over one file. Value errors are recorded and parsing goes on, so that
 * --check-policy lists every problem at once; syntax errors and hostile YAML constructs stop it
 * (-EBADMSG). */
typedef struct Parser {
        yaml_parser_t yaml;
        const char *filename;
        const char *data;
        size_t size;
        Policy *policy;
        unsigned source;
        char ***errors;
        bool failed;
} Parser;

/* The last line a mark may be on: one more than the line breaks YAML knows (LF, CR, CR LF, NEL,
 * LS, PS), the end of a file after its final newline being on that line. */
static size_t count_lines(const char *data, size_t size) {
        const unsigned char *d = (const unsigned char *) data;
        size_t lines = 1;

        for (size_t i = 0; i < size; i++)
                if (d[i] == '\n' || (d[i] == '\r' && !(i + 1 < size && d[i + 1] == '\n')) ||
                    (i + 1 < size && d[i] == 0xc2 && d[i + 1] == 0x85) ||
                    (i + 2 < size && d[i] == 0xe2 && d[i + 1] == 0x80 &&
                     (d[i + 2] == 0xa8 || d[i + 2] == 0xa9)))
                        lines++;
        return lines;
}

_printf_(4, 5)
static int parser_error(Parser *p, size_t line, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *m = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        /* At the end of a file whose last line has no newline, libyaml ends that line itself and
         * puts its marks (of a syntax error, or of the event a value is missing from) on the line
         * after it, which the file does not have. */
        line = MIN(line, count_lines(p->data, p->size));
        p->failed = true;
        if (key)
                r = errors_add(p->errors, "%s:%zu: %s: %s", p->filename, line, key, m);
        else
                r = errors_add(p->errors, "%s:%zu: %s", p->filename, line, m);
        return r < 0 ? r : 0;
}

static size_t event_line(const yaml_event_t *ev) {
        return ev->start_mark.line + 1;
}

/* Fetches the next event. Anchors, aliases and tags have no use in a flat policy and are the
 * tools of YAML bombs, so they end the parse. */
static int parser_next(Parser *p, yaml_event_t *ev) {
        const yaml_char_t *anchor = NULL, *tag = NULL;
        int r;

        if (!yaml_parser_parse(&p->yaml, ev)) {
                size_t line = p->yaml.problem_mark.line + 1;

                if (p->yaml.error == YAML_MEMORY_ERROR)
                        return -ENOMEM;
                /* The reader (encoding errors) reports a byte offset, not a mark. */
                if (p->yaml.error == YAML_READER_ERROR) {
                        line = 1;
                        for (size_t i = 0; i < p->yaml.problem_offset && i < p->size; i++)
                                if (p->data[i] == '\n')
                                        line++;
                }
                if (p->yaml.context)
                        r = parser_error(p, line, NULL, "syntax error: %s (%s from line %zu)",
                                         strna(p->yaml.problem), p->yaml.context,
                                         p->yaml.context_mark.line + 1);
                else
                        r = parser_error(p, line, NULL, "syntax error: %s", strna(p->yaml.problem));
                return r < 0 ? r : -EBADMSG;
        }

        switch (ev->type) {
        case YAML_ALIAS_EVENT:
                r = parser_error(p, event_line(ev), NULL, "YAML aliases are not allowed");
                return r < 0 ? r : -EBADMSG;
        case YAML_SCALAR_EVENT:
                anchor = ev->data.scalar.anchor;
                tag = ev->data.scalar.tag;
                break;
        case YAML_SEQUENCE_START_EVENT:
                anchor = ev->data.sequence_start.anchor;
                tag = ev->data.sequence_start.tag;
                break;
        case YAML_MAPPING_START_EVENT:
                anchor = ev->data.mapping_start.anchor;
                tag = ev->data.mapping_start.tag;
                break;
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
        default:
                break;
        }
        if (anchor) {
                r = parser_error(p, event_line(ev), NULL, "YAML anchors are not allowed");
                return r < 0 ? r : -EBADMSG;
        }
        if (tag) {
                r = parser_error(p, event_line(ev), NULL, "YAML tags are not allowed ('%s')",
                                 (const char *) tag);
                return r < 0 ? r : -EBADMSG;
        }
        return 0;
}

static bool is_start_event(yaml_event_type_t t) {
        return t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT;
}

/* Consumes the rest of a value whose first event was start (after an error about it). */
static int parser_skip(Parser *p, const yaml_event_t *start, unsigned depth) {
        unsigned level = 0;
        int r;

        if (!is_start_event(start->type))
                return 0;
        level = 1;
        while (level > 0) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (is_start_event(ev.type)) {
                        if (depth + ++level > POLICY_DEPTH_MAX) {
                                r = parser_error(p, event_line(&ev), NULL, "nesting too deep");
                                return r < 0 ? r : -EBADMSG;
                        }
                } else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT)
                        level--;
        }
        return 0;
}

static const char *event_kind(const yaml_event_t *ev) {
        switch (ev->type) {
        case YAML_MAPPING_START_EVENT:
                return "a mapping";
        case YAML_SEQUENCE_START_EVENT:
                return "a list";
        case YAML_SCALAR_EVENT:
                return "a single value";
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_ALIAS_EVENT:
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
        default:
                return "something else";
        }
}

/* An empty plain value ("key:" alone, "~", "null"), as opposed to "" written out. */
static bool is_null_event(const yaml_event_t *ev) {
        const char *v = (const char *) ev->data.scalar.value;

        return ev->type == YAML_SCALAR_EVENT && ev->data.scalar.plain_implicit &&
                (ev->data.scalar.length == 0 || streq(v, "~") || streq(v, "null"));
}

/* The text of a scalar event, or NULL (after recording why) when it cannot be a value. */
static int scalar_text(Parser *p, const yaml_event_t *ev, const char *key, const char **ret) {
        const char *v = (const char *) ev->data.scalar.value;
        size_t n = ev->data.scalar.length;

        if (n == 0 || is_null_event(ev)) {
                *ret = NULL;
                return parser_error(p, event_line(ev), key, "no value given");
        }
        if (strlen(v) != n || n > POLICY_VALUE_MAX || string_has_cc(v, n)) {
                *ret = NULL;
                return parser_error(p, event_line(ev), key, "value is too long or holds control characters");
        }
        *ret = v;
        return 0;
}

/* The smallest value a key accepts; the largest where one is needed for sanity. */
static uint64_t key_min(const PolicyKey *k) {
        if (k->limit >= 0)
                return limit_floor[k->limit];
        if (streq(k->path, "service.idle-timeout") || startswith(k->path, "sessions.idle-ttl."))
                return USEC_PER_SEC;
        if (startswith(k->path, "sessions.quota."))
                return 64 * 1024;
        if (startswith(k->path, "queue.") || startswith(k->path, "store."))
                return 0;
        return 1; /* concurrency, retention, uids */
}

static void *mfree_ptr(void *p) {
        free(p);
        return NULL;
}

static bool str_in_set3(const char *v, const char *a, const char *b, const char *c) {
        return streq(v, a) || streq(v, b) || streq(v, c);
}

static uint64_t key_max(const PolicyKey *k) {
        if (k->limit == POLICY_LIMIT_CPU)
                return POLICY_CPU_PERCENT_MAX;
        if (streq(k->path, "store.min-free-percent"))
                return 99;
        if (k->type == VALUE_UID)
                return UINT32_MAX - 2;  /* (uid_t) -1 and -2 are "invalid" and "overflow" */
        if (k->type == VALUE_UID_COUNT)
                return UINT32_MAX;
        return UINT64_MAX - 1;          /* UINT64_MAX is POLICY_INFINITY */
}

/* Parses one scalar into the field of key k. */
static int parser_scalar(Parser *p, const PolicyKey *k, const yaml_event_t *ev) {
        _cleanup_free_ char *shown = NULL, *bound = NULL;
        size_t line = event_line(ev);
        void *field = field_ptr(p->policy, k);
        const char *what, *hint = "", *v;
        uint64_t u = 0;
        unsigned pct;
        bool b;
        int r;

        r = scalar_text(p, ev, k->path, &v);
        if (r < 0 || !v)
                return r;
        shown = cescape(v);
        if (!shown)
                return -ENOMEM;

        if (k->infinity_ok && streq(v, "infinity")) {
                *(uint64_t *) field = POLICY_INFINITY;
                return 0;
        }

        switch (k->type) {
        case VALUE_SIZE:
                r = parse_size(v, &u);
                what = "a size";
                hint = " (like 512M or 4G)";
                break;
        case VALUE_PERCENT:
                r = parse_percent_unbounded(v, &pct);
                u = pct;
                what = "a percentage";
                hint = " (like 50%)";
                break;
        case VALUE_DURATION:
                r = parse_sec(v, &u);
                what = "a duration";
                hint = " (like 60s, 5min, 2h or 30d)";
                break;
        case VALUE_BOOL:
                r = parse_bool(v, &b);
                if (r < 0)
                        return parser_error(p, line, k->path, "not a boolean (yes or no): '%s'", shown);
                *(bool *) field = b;
                return 0;
        case VALUE_COUNT:
        case VALUE_UID:
        case VALUE_UID_COUNT:
                r = safe_atou64(v, &u);
                what = "a number";
                break;
        case VALUE_URL: {
                char **url = field;

                if (streq(v, "none")) {
                        *url = mfree_ptr(*url);
                        return 0;
                }
                if ((!startswith(v, "http://") && !startswith(v, "https://")) || strlen(v) > 2048 ||
                    strpbrk(v, " \t\n\"'\\"))
                        return parser_error(p, line, k->path, "not an http:// or https:// URL (or none): '%s'", shown);
                free(*url);
                *url = strdup(v);
                return *url ? 0 : -ENOMEM;
        }
        case VALUE_LAYERS:
        case VALUE_NETWORK:
        case VALUE_RESOLVERS:
        case VALUE_FIND_LINKS:
        default:
                return parser_error(p, line, k->path, "expected a list, got a single value");
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return parser_error(p, line, k->path, "not %s: '%s'%s", what, shown, hint);

        if (k->type == VALUE_UID && u == 0)
                return parser_error(p, line, k->path, "0 is root; runs must never execute as root");
        if (u < key_min(k)) {
                bound = format_value(k->type, key_min(k));
                if (!bound)
                        return -ENOMEM;
                return parser_error(p, line, k->path, "'%s' is below the minimum of %s", shown, bound);
        }
        if (u > key_max(k)) {
                bound = format_value(k->type, key_max(k));
                if (!bound)
                        return -ENOMEM;
                return parser_error(p, line, k->path, "'%s' is above the maximum of %s", shown, bound);
        }

        switch (k->type) {
        case VALUE_UID:
                *(uid_t *) field = (uid_t) u;
                break;
        case VALUE_UID_COUNT:
                *(uint32_t *) field = (uint32_t) u;
                break;
        case VALUE_SIZE:
        case VALUE_PERCENT:
        case VALUE_DURATION:
        case VALUE_COUNT:
        case VALUE_BOOL:
        case VALUE_LAYERS:
        case VALUE_NETWORK:
        case VALUE_RESOLVERS:
        case VALUE_URL:
        case VALUE_FIND_LINKS:
        default:
                *(uint64_t *) field = u;
                break;
        }
        return 0;
}

/* Parses a list value. The list replaces the one of the layer below as a whole, and only when
 * every item in it is valid. */
static int parser_list(Parser *p, const PolicyKey *k, const yaml_event_t *start, unsigned depth) {
        _cleanup_strv_free_ char **names = NULL, **hashes = NULL;
        SandboxLayer mask = 0;
        bool bad = false;
        size_t n = 0;
        int r;

        for (;;) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {};
                _cleanup_free_ char *shown = NULL;
                const char *v;

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_SEQUENCE_END_EVENT)
                        break;
                if (ev.type != YAML_SCALAR_EVENT) {
                        bad = true;
                        r = parser_error(p, event_line(&ev), k->path,
                                         "list items must be single values, not %s", event_kind(&ev));
                        if (r >= 0)
                                r = parser_skip(p, &ev, depth + 1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (++n > POLICY_LIST_MAX) {
                        bad = true;
                        r = parser_error(p, event_line(&ev), k->path, "more than %u items", POLICY_LIST_MAX);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = scalar_text(p, &ev, k->path, &v);
                if (r < 0)
                        return r;
                if (!v) {
                        bad = true;
                        continue;
                }
                shown = cescape(v);
                if (!shown)
                        return -ENOMEM;

                if (k->type == VALUE_FIND_LINKS) {
                        /* Each becomes a line of a pip requirements file in the build: nothing
                         * that could end it or start another option. */
                        if (!env_find_links_is_valid(v)) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "not an absolute path of a wheelhouse or an http:// or https:// "
                                                 "URL: '%s'", shown);
                        } else if (strv_contains(names, v)) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path, "'%s' is listed twice", shown);
                        } else
                                r = strv_extend(&names, v);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k->type == VALUE_RESOLVERS) {
                        if (!str_in_set3(v, "debian", "pip", "npm")) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "unknown resolver '%s' (known: debian, pip, npm)", shown);
                        } else if (strv_contains(names, v)) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path, "resolver '%s' is listed twice", shown);
                        } else
                                r = strv_extend(&names, v);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k->type == VALUE_LAYERS) {
                        int l = sandbox_layer_from_string(v);

                        /* The mount and PID namespaces are the sandbox itself (its file system
                         * view; the init whose death ends every process of a run), and an
                         * unprivileged run has no other namespace without a user namespace. */
                        if (l < 0 && (streq(v, "mountns") || streq(v, "pidns") || streq(v, "userns")))
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "isolation layer '%s' can never be missing", shown);
                        else if (l < 0)
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "unknown isolation layer '%s' (known: netns, ipcns, "
                                                 "utsns, cgroupns, seccomp, cgroup)", shown);
                        if (l < 0) {
                                bad = true;
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        mask |= (SandboxLayer) l;
                } else if (startswith(v, "sha256:")) {
                        _cleanup_free_ char *h = strdup(hash_strip(v));

                        if (!h)
                                return -ENOMEM;
                        if (!is_hex(h, 64)) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "not a SHA-256 hash (sha256: and 64 hex digits): '%s'",
                                                 shown);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        for (char *c = h; *c; c++)
                                *c = (char) tolower((unsigned char) *c);
                        r = strv_push(&hashes, TAKE_PTR(h));
                        if (r < 0)
                                return r;
                } else {
                        if (!skill_name_is_valid(v)) {
                                bad = true;
                                r = parser_error(p, event_line(&ev), k->path,
                                                 "not a skill name (a-z, 0-9 and inner hyphens, at most 64) "
                                                 "or sha256:HASH: '%s'", shown);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        r = strv_extend(&names, v);
                        if (r < 0)
                                return r;
                }
        }

        if (bad)
                return 0;
        if (k->type == VALUE_RESOLVERS) {
                strv_free(p->policy->env_resolvers);
                p->policy->env_resolvers = TAKE_PTR(names);
        } else if (k->type == VALUE_FIND_LINKS) {
                strv_free(p->policy->env_pip_find_links);
                p->policy->env_pip_find_links = TAKE_PTR(names);
        } else if (k->type == VALUE_LAYERS)
                p->policy->isolation_may_be_missing = mask;
        else {
                strv_free(p->policy->network_skills);
                p->policy->network_skills = TAKE_PTR(names);
                strv_free(p->policy->network_hashes);
                p->policy->network_hashes = TAKE_PTR(hashes);
        }
        return 0;
}

static int parser_empty_list(Parser *p, const PolicyKey *k) {
        if (k->type == VALUE_RESOLVERS)
                p->policy->env_resolvers = strv_free(p->policy->env_resolvers);
        else if (k->type == VALUE_FIND_LINKS)
                p->policy->env_pip_find_links = strv_free(p->policy->env_pip_find_links);
        else if (k->type == VALUE_LAYERS)
                p->policy->isolation_may_be_missing = 0;
        else {
                p->policy->network_skills = strv_free(p->policy->network_skills);
                p->policy->network_hashes = strv_free(p->policy->network_hashes);
        }
        return 0;
}

static int parser_value(Parser *p, const PolicyKey *k, const yaml_event_t *ev, unsigned depth) {
        bool is_list = k->type == VALUE_LAYERS || k->type == VALUE_NETWORK || k->type == VALUE_RESOLVERS ||
                       k->type == VALUE_FIND_LINKS;
        size_t errors_before = strv_length(*p->errors);
        int r;

        if (ev->type == YAML_SEQUENCE_START_EVENT && is_list)
                r = parser_list(p, k, ev, depth);
        else if (is_list && is_null_event(ev))
                r = parser_empty_list(p, k); /* "may-be-missing:" alone: nothing listed */
        else if (ev->type == YAML_SCALAR_EVENT)
                r = parser_scalar(p, k, ev);
        else {
                r = parser_error(p, event_line(ev), k->path, "expected %s, got %s",
                                 is_list ? "a list" : "a single value", event_kind(ev));
                if (r >= 0)
                        r = parser_skip(p, ev, depth);
        }
        if (r < 0)
                return r;

        if (strv_length(*p->errors) == errors_before)
                p->policy->origins[k - policy_keys] = (PolicyOrigin) {
                        .source = p->source,
                        .line = event_line(ev),
                };
        return 0;
}

static int parser_mapping(Parser *p, const char *prefix, unsigned depth) {
        _cleanup_strv_free_ char **seen = NULL;
        int r;

        for (;;) {
                _cleanup_(yaml_event_delete) yaml_event_t kev = {}, vev = {};
                _cleanup_free_ char *path = NULL, *shown = NULL;
                const PolicyKey *k;
                const char *key;

                r = parser_next(p, &kev);
                if (r < 0)
                        return r;
                if (kev.type == YAML_MAPPING_END_EVENT)
                        return 0;
                if (kev.type != YAML_SCALAR_EVENT) {
                        r = parser_error(p, event_line(&kev), prefix, "keys must be plain names, not %s",
                                         event_kind(&kev));
                        return r < 0 ? r : -EBADMSG;
                }
                r = scalar_text(p, &kev, prefix, &key);
                if (r < 0)
                        return r;
                if (!key)
                        return -EBADMSG;

                path = prefix ? strdup_printf("%s.%s", prefix, key) : strdup(key);
                shown = cescape(path);
                if (!path || !shown)
                        return -ENOMEM;

                r = parser_next(p, &vev);
                if (r < 0)
                        return r;

                if (strv_contains(seen, key)) {
                        r = parser_error(p, event_line(&kev), shown, "duplicate key");
                        if (r >= 0)
                                r = parser_skip(p, &vev, depth);
                } else if ((r = strv_extend(&seen, key)) < 0)
                        return r;
                else if ((k = key_lookup(path)))
                        r = parser_value(p, k, &vev, depth);
                else if (section_exists(path)) {
                        if (vev.type == YAML_MAPPING_START_EVENT)
                                r = parser_mapping(p, path, depth + 1);
                        else if (is_null_event(&vev))
                                r = 0; /* "limits:" with every key below commented out */
                        else {
                                r = parser_error(p, event_line(&vev), shown,
                                                 "expected a mapping of further keys, got %s",
                                                 event_kind(&vev));
                                if (r >= 0)
                                        r = parser_skip(p, &vev, depth);
                        }
                } else {
                        r = parser_error(p, event_line(&kev), shown, "unknown key");
                        if (r >= 0)
                                r = parser_skip(p, &vev, depth);
                }
                if (r < 0)
                        return r;
        }
}

static int parser_expect(Parser *p, yaml_event_type_t type) {
        _cleanup_(yaml_event_delete) yaml_event_t ev = {};
        int r;

        r = parser_next(p, &ev);
        if (r < 0)
                return r;
        if (ev.type != type) {
                r = parser_error(p, event_line(&ev), NULL, "unexpected YAML structure");
                return r < 0 ? r : -EBADMSG;
        }
        return 0;
}

static int parser_stream(Parser *p) {
        int r;

        r = parser_expect(p, YAML_STREAM_START_EVENT);
        if (r < 0)
                return r;

        for (unsigned n_docs = 0;; n_docs++) {
                _cleanup_(yaml_event_delete) yaml_event_t ev = {}, root = {};

                r = parser_next(p, &ev);
                if (r < 0)
                        return r;
                if (ev.type == YAML_STREAM_END_EVENT)
                        return 0;
                if (n_docs > 0) {
                        r = parser_error(p, event_line(&ev), NULL, "only one YAML document is allowed");
                        return r < 0 ? r : -EBADMSG;
                }

                r = parser_next(p, &root);
                if (r < 0)
                        return r;
                if (root.type == YAML_MAPPING_START_EVENT)
                        r = parser_mapping(p, NULL, 1);
                else if (root.type == YAML_SCALAR_EVENT && root.data.scalar.length == 0)
                        r = 0; /* "---" alone: an empty policy */
                else {
                        r = parser_error(p, event_line(&root), NULL,
                                         "the policy must be a mapping of sections (limits:, uids:, ...), "
                                         "not %s", event_kind(&root));
                        return r < 0 ? r : -EBADMSG;
                }
                if (r < 0)
                        return r;

                r = parser_expect(p, YAML_DOCUMENT_END_EVENT);
                if (r < 0)
                        return r;
        }
}

static int merge_file(Policy *p, const char *path, PolicyLoadFlags flags, char ***errors) {
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        Parser parser = {
                .filename = path,
                .policy = p,
                .errors = errors,
        };
        struct stat st;
        size_t size;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                r = -errno;
                return errors_add(errors, "%s: cannot open: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                return errors_add(errors, "%s: cannot stat: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
        }
        if (!S_ISREG(st.st_mode))
                return errors_add(errors, "%s: not a regular file", path) < 0 ? -ENOMEM : -EBADFD;
        /* SECURITY: whoever can write the policy decides what the root service allows. */
        if ((flags & POLICY_LOAD_TRUSTED) && (st.st_uid != 0 || (st.st_mode & 0022)))
                return errors_add(errors, "%s: refusing a policy not owned by root or writable by group or "
                                  "others", path) < 0 ? -ENOMEM : -EPERM;

        r = read_full_fd(fd, POLICY_FILE_MAX, &data, &size);
        if (r == -EFBIG)
                return errors_add(errors, "%s: larger than %u KiB", path,
                                  POLICY_FILE_MAX / 1024) < 0 ? -ENOMEM : r;
        if (r < 0)
                return errors_add(errors, "%s: cannot read: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
        if (memchr(data, 0, size))
                return errors_add(errors, "%s: holds a NUL byte, not a text file",
                                  path) < 0 ? -ENOMEM : -EBADMSG;

        r = strv_extend(&p->sources, path);
        if (r < 0)
                return r;
        parser.source = strv_length(p->sources) - 1;
        parser.data = data;
        parser.size = size;

        if (!yaml_parser_initialize(&parser.yaml))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser.yaml, (const unsigned char *) data, size);
        r = parser_stream(&parser);
        yaml_parser_delete(&parser.yaml);
        if (r < 0)
                return r;
        return parser.failed ? -EINVAL : 0;
}

int policy_merge_file(Policy *p, const char *path, char ***errors) {
        _cleanup_strv_free_ char **local = NULL;

        return merge_file(p, path, 0, errors ?: &local);
}

/* Validation messages point at the file and line that set the key, so that an admin who changed
 * one value in /etc is sent to that line even when the conflict is with a shipped value. */
_printf_(4, 5)
static int validate_error(const Policy *p, char ***errors, const char *path, const char *fmt, ...) {
        const PolicyKey *k = key_lookup(path);
        const PolicyOrigin *o = k ? &p->origins[k - policy_keys] : NULL;
        _cleanup_free_ char *m = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;

        if (o && o->source != SOURCE_BUILTIN && o->source < strv_length(p->sources))
                r = errors_add(errors, "%s:%u: %s: %s", p->sources[o->source], o->line, path, m);
        else
                r = errors_add(errors, "built-in default: %s: %s", path, m);
        return r < 0 ? r : -EINVAL;
}

static bool key_from_file(const Policy *p, const char *path) {
        const PolicyKey *k = key_lookup(path);
        return k && p->origins[k - policy_keys].source != SOURCE_BUILTIN;
}

static int validate_limits(const Policy *p, char ***errors) {
        int ret = 0;

        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++) {
                _cleanup_free_ char *def = NULL, *max = NULL, *def_key = NULL, *max_key = NULL;
                uint64_t d = p->defaults.value[l], m = p->maximums.value[l];
                int r;

                if (d <= m)
                        continue;
                def = policy_limit_format(l, d);
                max = policy_limit_format(l, m);
                def_key = strdup_printf("limits.%s.default", limit_names[l]);
                max_key = strdup_printf("limits.%s.max", limit_names[l]);
                if (!def || !max || !def_key || !max_key)
                        return -ENOMEM;

                /* Blame whichever of the two the files set, preferring the default. */
                if (!key_from_file(p, def_key) && key_from_file(p, max_key))
                        r = validate_error(p, errors, max_key, "%s is below %s (%s)", max, def_key, def);
                else
                        r = validate_error(p, errors, def_key, "%s is above %s (%s)", def, max_key, max);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        return ret;
}

static int validate_uids(const Policy *p, char ***errors) {
        uint64_t first = p->uid_first, last = first + p->uid_count - 1;
        int ret = 0, r;

        /* uids.first > 0 and uids.count > 0 are enforced while parsing. */
        if (last > UINT32_MAX - 2) {
                r = validate_error(p, errors, "uids.count",
                                   "the range %" PRIu64 "..%" PRIu64 " reaches past the largest usable "
                                   "uid %" PRIu32, first, last, UINT32_MAX - 2);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        /* SECURITY: 65534 is nobody and owns files on many hosts; 65535 is the 16-bit "-1". */
        if (first <= 65535 && last >= 65534) {
                r = validate_error(p, errors, "uids.first",
                                   "the range %" PRIu64 "..%" PRIu64 " contains 65534 (nobody) or 65535, "
                                   "which runs must never use", first, last);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        } else if (first < 65536 && !p->uid_allow_low) {
                /* SECURITY: below 65536 live system users, regular users and DynamicUser= services.
                 * A run under such a uid could read or signal what that user owns. */
                r = validate_error(p, errors, "uids.first",
                                   "the range %" PRIu64 "..%" PRIu64 " overlaps the uids of system and "
                                   "regular users (below 65536); set uids.allow-low: yes if those uids "
                                   "are truly unused", first, last);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        /* Each active run holds its own uid; a uid is not reused while a run still holds it. */
        if (p->uid_count < p->max_active) {
                r = validate_error(p, errors, "uids.count",
                                   "%" PRIu32 " uids cannot serve concurrency.global (%" PRIu64 ") runs "
                                   "at once", p->uid_count, p->max_active);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        return ret;
}

static int validate_caps(const Policy *p, char ***errors) {
        int ret = 0, r;

        if (p->max_active_per_user > p->max_active) {
                r = validate_error(p, errors, "concurrency.per-user",
                                   "%" PRIu64 " is above concurrency.global (%" PRIu64 ")",
                                   p->max_active_per_user, p->max_active);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->max_active > POLICY_RUNS_IN_FLIGHT_MAX ||
            p->max_queued > POLICY_RUNS_IN_FLIGHT_MAX - p->max_active) {
                /* Sent to the one an admin set, the queue's if both. */
                bool queue = key_from_file(p, "queue.global") || !key_from_file(p, "concurrency.global");

                r = validate_error(p, errors, queue ? "queue.global" : "concurrency.global",
                                   "concurrency.global (%" PRIu64 ") and queue.global (%" PRIu64 ") "
                                   "together allow more than %u runs in flight, the most the service "
                                   "can follow on the bus", p->max_active, p->max_queued,
                                   POLICY_RUNS_IN_FLIGHT_MAX);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->env_max_builds_per_user > p->env_max_builds) {
                r = validate_error(p, errors, "environments.builds.per-user",
                                   "%" PRIu64 " is above environments.builds.global (%" PRIu64 ")",
                                   p->env_max_builds_per_user, p->env_max_builds);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->session_ttl_default_usec > p->session_ttl_max_usec) {
                r = validate_error(p, errors, "sessions.idle-ttl.default", "is above sessions.idle-ttl.max");
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->session_quota_default > p->session_quota_max) {
                r = validate_error(p, errors, "sessions.quota.default", "is above sessions.quota.max");
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->max_queued_per_user > p->max_queued) {
                r = validate_error(p, errors, "queue.per-user",
                                   "%" PRIu64 " is above queue.global (%" PRIu64 ")",
                                   p->max_queued_per_user, p->max_queued);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->retention.max_runs_per_user != POLICY_INFINITY &&
            p->retention.max_runs != POLICY_INFINITY &&
            p->retention.max_runs_per_user > p->retention.max_runs) {
                r = validate_error(p, errors, "retention.per-user.max-runs", "%" PRIu64 " is above "
                                   "retention.max-runs (%" PRIu64 ")",
                                   p->retention.max_runs_per_user, p->retention.max_runs);
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        if (p->retention.max_bytes_per_user != POLICY_INFINITY &&
            p->retention.max_bytes != POLICY_INFINITY &&
            p->retention.max_bytes_per_user > p->retention.max_bytes) {
                char a[FORMAT_BYTES_MAX], b[FORMAT_BYTES_MAX];

                r = validate_error(p, errors, "retention.per-user.max-bytes",
                                   "%s is above retention.max-bytes (%s)",
                                   format_bytes(a, sizeof(a), p->retention.max_bytes_per_user),
                                   format_bytes(b, sizeof(b), p->retention.max_bytes));
                if (r == -ENOMEM)
                        return r;
                ret = r;
        }
        return ret;
}

int policy_validate(const Policy *p, char ***errors) {
        _cleanup_strv_free_ char **local = NULL;
        int ret = 0, r;

        if (!errors)
                errors = &local;

        r = validate_limits(p, errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;
        r = validate_uids(p, errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;
        r = validate_caps(p, errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                ret = r;
        return ret;
}

int policy_load_files(char * const *paths, PolicyLoadFlags flags, Policy **ret, char ***ret_errors) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_strv_free_ char **errors = NULL;
        int ret_r = 0, r;

        r = policy_new_default(&p);
        if (r < 0)
                return r;

        STRV_FOREACH(path, paths) {
                r = merge_file(p, *path, flags, &errors);
                if (r == -ENOENT) {
                        if (flags & POLICY_LOAD_MISSING_OK)
                                continue;
                        if (errors_add(&errors, "%s: no such file", *path) < 0)
                                return -ENOMEM;
                }
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && ret_r == 0)
                        ret_r = r;
        }

        /* After a syntax error part of a file was never read; judging the rest would mislead. */
        if (ret_r != -EBADMSG) {
                r = policy_validate(p, &errors);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && ret_r == 0)
                        ret_r = r;
        }

        if (ret_r < 0) {
                if (ret_errors)
                        *ret_errors = TAKE_PTR(errors);
                return ret_r;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int policy_load(const char *path, Policy **ret, char **error) {
        char * const system_paths[] = { (char *) POLICY_VENDOR_PATH, (char *) POLICY_SYSTEM_PATH, NULL };
        char * const one_path[] = { (char *) path, NULL };
        _cleanup_strv_free_ char **errors = NULL;
        size_t n;
        int r;

        r = policy_load_files(path ? one_path : system_paths,
                              path ? 0 : POLICY_LOAD_MISSING_OK | POLICY_LOAD_TRUSTED,
                              ret, &errors);
        if (r >= 0)
                return r;

        n = strv_length(errors);
        if (!errors || n == 0)
                return error_setf(error, r, "Failed to load the policy: %s", strerror(-r));
        if (n == 1)
                return error_setf(error, r, "%s", errors[0]);
        return error_setf(error, r, "%s (and %zu more problems)", errors[0], n - 1);
}

int policy_check_file(const char *path, char ***ret_errors) {
        _cleanup_(policy_freep) Policy *p = NULL;
        char * const paths[] = { (char *) path, NULL };

        return policy_load_files(paths, 0, &p, ret_errors);
}

bool policy_layer_may_be_missing(const Policy *p, SandboxLayer l) {
        return l != 0 && (p->isolation_may_be_missing & l) == l;
}

bool policy_network_allowed(const Policy *p, const char *name, const char *hash, bool installed) {
        /* SECURITY: the name of a skill passed by fd is chosen by its author, so it proves nothing. */
        if (installed && name && strv_contains(p->network_skills, name))
                return true;
        if (!isempty(hash)) {
                const char *h = hash_strip(hash);

                STRV_FOREACH(i, p->network_hashes)
                        if (strcasecmp(*i, h) == 0)
                                return true;
        }
        return false;
}

int policy_resolve_limits(const Policy *p, const PolicyLimits *asked, PolicyLimits *ret,
                          bool *ret_raised, char **error) {
        PolicyLimits out;
        bool raised = false;

        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++) {
                bool is_asked = asked && asked->value[l] != POLICY_LIMIT_UNSET;
                uint64_t v = is_asked ? asked->value[l] : p->defaults.value[l];
                _cleanup_free_ char *shown = NULL, *bound = NULL;

                if (v < limit_floor[l] || v > p->maximums.value[l]) {
                        bool low = v < limit_floor[l];

                        shown = policy_limit_format(l, v);
                        bound = policy_limit_format(l, low ? limit_floor[l] : p->maximums.value[l]);
                        if (!shown || !bound)
                                return -ENOMEM;
                        if (low)
                                return error_setf(error, -EINVAL,
                                                  "The %s limit %s is below the minimum of %s.",
                                                  limit_names[l], shown, bound);
                        return error_setf(error, -E2BIG,
                                          "The %s limit %s is above the maximum the policy allows (%s).",
                                          limit_names[l], shown, bound);
                }
                if (v > p->defaults.value[l])
                        raised = true;
                out.value[l] = v;
        }

        *ret = out;
        if (ret_raised)
                *ret_raised = raised;
        return 0;
}

size_t policy_env_resolvers(const Policy *p, int ret[static 3]) {
        static const char *const names[] = { "debian", "pip", "npm" }; /* EnvResolver's order */
        size_t n = 0;

        STRV_FOREACH(r, p->env_resolvers)
                for (size_t i = 0; i < ELEMENTSOF(names) && n < 3; i++)
                        if (streq(*r, names[i]))
                                ret[n++] = (int) i;
        return n;
}
