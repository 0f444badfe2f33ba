/* See parse-util.h. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#include "parse-util.h"

int safe_atou64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (isempty(s) || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0)
                return -errno;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}

int safe_atou(const char *s, unsigned *ret) {
        uint64_t v;
        int r;

        r = safe_atou64(s, &v);
        if (r < 0)
                return r;
        /* v is set: clang 14's analyzer does not know errno is positive, so it takes
         * safe_atou64()'s "return -errno" for a possible success. */
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

int safe_atoi(const char *s, int *ret) {
        long v;
        char *end;

        if (isempty(s) || isspace((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0)
                return -errno;
        if (*end != '\0')
                return -EINVAL;
        if (v < INT_MIN || v > INT_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

/* Splits "1.5G" into a decimal number and a unit, both validated. */
static int parse_number_unit(const char *s, double *ret_value, const char **ret_unit) {
        const char *p = s;
        char *end;
        double v;

        if (isempty(s) || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        for (; *p; p++)
                if (!isdigit((unsigned char) *p) && *p != '.')
                        break;
        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end != p || !isfinite(v) || v < 0)
                return -EINVAL;
        *ret_value = v;
        *ret_unit = p;
        return 0;
}

int parse_size(const char *s, uint64_t *ret) {
        static const struct {
                const char *suffix;
                uint64_t factor;
        } table[] = {
                { "",  1ULL },
                { "B", 1ULL },
                { "K", 1ULL << 10 }, { "KB", 1ULL << 10 }, { "KiB", 1ULL << 10 },
                { "M", 1ULL << 20 }, { "MB", 1ULL << 20 }, { "MiB", 1ULL << 20 },
                { "G", 1ULL << 30 }, { "GB", 1ULL << 30 }, { "GiB", 1ULL << 30 },
                { "T", 1ULL << 40 }, { "TB", 1ULL << 40 }, { "TiB", 1ULL << 40 },
        };
        const char *unit;
        double v;
        int r;

        r = parse_number_unit(s, &v, &unit);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                long double t;

                if (strcasecmp(unit, table[i].suffix) != 0)
                        continue;
                t = (long double) v * table[i].factor;
                if (t >= (long double) UINT64_MAX)
                        return -ERANGE;
                *ret = (uint64_t) t;
                return 0;
        }
        return -EINVAL;
}

int parse_sec(const char *s, uint64_t *ret_usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } table[] = {
                { "",    1000000ULL },
                { "s",   1000000ULL },
                { "sec", 1000000ULL },
                { "ms",  1000ULL },
                { "us",  1ULL },
                { "m",   60000000ULL },
                { "min", 60000000ULL },
                { "h",   3600000000ULL },
        };
        const char *unit;
        double v;
        int r;

        r = parse_number_unit(s, &v, &unit);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                long double t;

                if (!streq(unit, table[i].suffix))
                        continue;
                t = (long double) v * table[i].usec;
                if (t >= (long double) UINT64_MAX)
                        return -ERANGE;
                *ret_usec = (uint64_t) t;
                return 0;
        }
        return -EINVAL;
}

int parse_percent_unbounded(const char *s, unsigned *ret) {
        _cleanup_free_ char *c = NULL;
        const char *e;

        e = endswith(s, "%");
        if (e) {
                c = strndup(s, e - s);
                if (!c)
                        return -ENOMEM;
                s = c;
        }
        return safe_atou(s, ret);
}

char *format_bytes(char *buf, size_t l, uint64_t bytes) {
        static const char units[] = "KMGT";

        if (bytes < 1024) {
                snprintf(buf, l, "%" PRIu64 "B", bytes);
                return buf;
        }
        for (int i = (int) strlen(units) - 1; i >= 0; i--) {
                uint64_t f = 1ULL << (10 * (i + 1));
                if (bytes >= f) {
                        snprintf(buf, l, "%.1f%c", (double) bytes / (double) f, units[i]);
                        return buf;
                }
        }
        return buf;
}
