/* Printing for the service verbs: aligned tables for people, JSON for programs, and the few
 * formats both share (times, sizes, durations). Everything the service reports about a run came
 * from a user at some point, so text columns are escaped before they reach a terminal. */
#pragma once

#include <cjson/cJSON.h>

#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* Prints j, indented, on stdout. Returns 0 or -ENOMEM. */
int json_print(const cJSON *j);
/* An exact integer (cJSON's numbers are doubles), or null for UINT64_MAX. */
cJSON *json_u64(uint64_t v);

#define FORMAT_TIMESTAMP_MAX 64
/* CLOCK_REALTIME microseconds as local time "Thu 2024-01-04 10:00:00 CET"; "-" for 0. */
char *format_timestamp(char *buf, size_t l, uint64_t usec);
/* The same in the short form of tables: "2024-01-04 10:00:00". */
char *format_timestamp_short(char *buf, size_t l, uint64_t usec);
#define FORMAT_TIMESPAN_MAX 32
/* Microseconds as "0.42s", "1min 30s", "2h 5min". */
char *format_timespan(char *buf, size_t l, uint64_t usec);

/* A table of text cells, printed with each column as wide as its widest cell. */
typedef struct Table {
        size_t n_columns;
        char **cells;                   /* row-major, the header row first */
        size_t n_cells;
        size_t n_allocated;             /* room in cells: it grows by half again, not by one */
} Table;

Table *table_new(size_t n_columns, ...);        /* the header's names */
Table *table_free(Table *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Table *, table_free);
/* Adds one cell, escaped; rows fill left to right. */
int table_add(Table *t, const char *text);
int table_addf(Table *t, const char *fmt, ...) _printf_(2, 3);
size_t table_rows(const Table *t);              /* without the header */
void table_print(const Table *t, FILE *f);

/* How every listing verb ends: the JSON array with --json, else the table (if it has rows) and a
 * count line, "3 runs listed." ("NOUN" singular, "s" added, then "what"). Returns the exit status. */
int listing_print(const Table *t, const cJSON *json_array, bool json, const char *noun, const char *what);
