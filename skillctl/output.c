/* See output.h. */
#include <inttypes.h>
#include <time.h>

#include "json-format.h"
#include "output.h"

int json_print(const cJSON *j) {
        _cleanup_free_ char *s = json_format(j);

        if (!s)
                return -ENOMEM;
        (void) fputs(s, stdout);
        return 0;
}

cJSON *json_u64(uint64_t v) {
        char buf[24];

        if (v == UINT64_MAX)
                return cJSON_CreateNull();
        (void) snprintf(buf, sizeof(buf), "%" PRIu64, v);
        return cJSON_CreateRaw(buf);
}

/* Local time, or "-" for "not yet". */
static char *format_time(char *buf, size_t l, uint64_t usec, bool with_weekday_and_zone) {
        struct tm tm;
        time_t t;
        size_t k = 0;

        if (usec == 0 || usec == UINT64_MAX) {
                (void) snprintf(buf, l, "-");
                return buf;
        }
        t = (time_t) (usec / 1000000ULL);
        if (localtime_r(&t, &tm))
                k = with_weekday_and_zone ? strftime(buf, l, "%a %Y-%m-%d %H:%M:%S %Z", &tm)
                                          : strftime(buf, l, "%Y-%m-%d %H:%M:%S", &tm);
        if (k == 0)
                (void) snprintf(buf, l, "@%" PRIu64, (uint64_t) t);
        return buf;
}

char *format_timestamp(char *buf, size_t l, uint64_t usec) {
        return format_time(buf, l, usec, true);
}

char *format_timestamp_short(char *buf, size_t l, uint64_t usec) {
        return format_time(buf, l, usec, false);
}

char *format_timespan(char *buf, size_t l, uint64_t usec) {
        uint64_t s = usec / 1000000ULL;

        if (usec < 60ULL * 1000000ULL)
                (void) snprintf(buf, l, "%.2fs", (double) usec / 1e6);
        else if (s < 3600)
                (void) snprintf(buf, l, "%" PRIu64 "min %" PRIu64 "s", s / 60, s % 60);
        else
                (void) snprintf(buf, l, "%" PRIu64 "h %" PRIu64 "min", s / 3600, s % 3600 / 60);
        return buf;
}

Table *table_new(size_t n_columns, ...) {
        _cleanup_(table_freep) Table *t = NULL;
        va_list ap;

        t = calloc(1, sizeof(Table));
        if (!t)
                return NULL;
        t->n_columns = n_columns;
        va_start(ap, n_columns);
        for (size_t i = 0; i < n_columns; i++)
                if (table_add(t, va_arg(ap, const char *)) < 0) {
                        va_end(ap);
                        return NULL;
                }
        va_end(ap);
        return TAKE_PTR(t);
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
        return NULL;
}

int table_add(Table *t, const char *text) {
        char **c, *s;

        s = cescape(strempty(text));
        if (!s)
                return -ENOMEM;
        if (t->n_cells == t->n_allocated) {
                /* A listing of many thousand runs adds ten cells a row: no copy per cell. */
                size_t n = MAX(t->n_allocated + t->n_allocated / 2, (size_t) 64);

                c = reallocarray(t->cells, n, sizeof(char *));
                if (!c) {
                        free(s);
                        return -ENOMEM;
                }
                t->cells = c;
                t->n_allocated = n;
        }
        t->cells[t->n_cells++] = s;
        return 0;
}

int table_addf(Table *t, const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        return table_add(t, s);
}

size_t table_rows(const Table *t) {
        return t->n_cells / t->n_columns - 1;
}

/* Display width of escaped text: ASCII, plus UTF-8 sequences counted as one column each. */
static size_t text_width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        w++;
        return w;
}

void table_print(const Table *t, FILE *f) {
        _cleanup_free_ size_t *width = calloc(t->n_columns, sizeof(size_t));

        if (!width)
                return;
        for (size_t i = 0; i < t->n_cells; i++)
                width[i % t->n_columns] = MAX(width[i % t->n_columns], text_width(t->cells[i]));

        for (size_t i = 0; i < t->n_cells; i++) {
                size_t col = i % t->n_columns;
                bool last = col == t->n_columns - 1;

                (void) fputs(t->cells[i], f);
                if (last)
                        (void) fputc('\n', f);
                else
                        (void) fprintf(f, "%*s", (int) (width[col] - text_width(t->cells[i]) + 1), "");
        }
}

int listing_print(const Table *t, const cJSON *json_array, bool json, const char *noun, const char *what) {
        size_t n;

        if (json)
                return json_print(json_array) < 0 ? EXIT_FAILURE : 0;
        n = table_rows(t);
        if (n > 0)
                table_print(t, stdout);
        printf("%s%zu %s%s%s%s.\n", n > 0 ? "\n" : "", n, noun, n == 1 ? "" : "s",
               what ? " " : "", strempty(what));
        return 0;
}
