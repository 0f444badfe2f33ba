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

typedef struct UnitFactor {
        const char *suffix;
        uint64_t factor;
} UnitFactor;

/* A decimal number followed by one of the table's units, scaled and checked for overflow. */
static int parse_scaled(const char *s, const UnitFactor *table, size_t n, bool ignore_case, uint64_t *ret) {
        const char *unit;
        double v;
        int r;

        r = parse_number_unit(s, &v, &unit);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                long double t;

                if ((ignore_case ? strcasecmp(unit, table[i].suffix) : strcmp(unit, table[i].suffix)) != 0)
                        continue;
                t = (long double) v * table[i].factor;
                if (t >= (long double) UINT64_MAX)
                        return -ERANGE;
                *ret = (uint64_t) t;
                return 0;
        }
        return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret) {
        static const UnitFactor table[] = {
                { "",  1ULL },
                { "B", 1ULL },
                { "K", 1ULL << 10 }, { "KB", 1ULL << 10 }, { "KiB", 1ULL << 10 },
                { "M", 1ULL << 20 }, { "MB", 1ULL << 20 }, { "MiB", 1ULL << 20 },
                { "G", 1ULL << 30 }, { "GB", 1ULL << 30 }, { "GiB", 1ULL << 30 },
                { "T", 1ULL << 40 }, { "TB", 1ULL << 40 }, { "TiB", 1ULL << 40 },
        };

        /* Sizes are binary whatever the case: "256m" is what people mean by 256M. */
        return parse_scaled(s, table, ELEMENTSOF(table), true, ret);
}

int parse_sec(const char *s, uint64_t *ret_usec) {
        static const UnitFactor table[] = {
                { "",    1000000ULL },
                { "s",   1000000ULL },
                { "sec", 1000000ULL },
                { "ms",  1000ULL },
                { "us",  1ULL },
                { "m",   60000000ULL },
                { "min", 60000000ULL },
                { "h",   3600000000ULL },
                { "d",    86400000000ULL }, { "day",  86400000000ULL }, { "days",  86400000000ULL },
                { "w",   604800000000ULL }, { "week", 604800000000ULL }, { "weeks", 604800000000ULL },
        };

        /* Case matters here: "m" is minutes, and "M" would be a typo, not months. */
        return parse_scaled(s, table, ELEMENTSOF(table), false, ret_usec);
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
