/* Enum <-> string tables. Every enum that travels as text (statuses, states, layers, limits,
 * interpreters) keeps one array of names indexed by value and gets its _to_string() and
 * _from_string() from here, so lookups behave alike everywhere: NULL for an out-of-range value,
 * -EINVAL (the enums' _INVALID member) for an unknown or NULL name. */
#pragma once

#include "util.h"

static inline const char *string_table_to_string(const char * const *table, size_t n, long i) {
        if (i < 0 || (size_t) i >= n)
                return NULL;
        return table[i];
}

static inline long string_table_from_string(const char * const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (long) i;
        return -EINVAL;
}

#define DEFINE_STRING_TABLE_TO_STRING(name, type, table)                                        \
        const char *name##_to_string(type i) {                                                  \
                return string_table_to_string(table, ELEMENTSOF(table), (long) i);              \
        }

#define DEFINE_STRING_TABLE_FROM_STRING(name, type, table)                                      \
        type name##_from_string(const char *s) {                                                \
                return (type) string_table_from_string(table, ELEMENTSOF(table), s);            \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type, table)                                           \
        DEFINE_STRING_TABLE_TO_STRING(name, type, table)                                        \
        DEFINE_STRING_TABLE_FROM_STRING(name, type, table)
