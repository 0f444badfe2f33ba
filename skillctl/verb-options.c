/* How skillctl's verbs are told they were called wrong: getopt_long() errors worded like every
 * other skillctl message ("skillctl: run: unknown option '--bogus'") and pointing to the verb's
 * --help, and "did you mean" for a mistyped verb.
 *
 * verbs.h maps getopt_long() to verb_getopt_long() for every verb, so a new verb gets this without
 * doing anything; dispatch_verb() keeps the path of verbs ("skill lint") for the pointer. */
#include <stdio.h>

#include "verbs.h"

#undef getopt_long

static char verb_path[64];

void verb_path_push(const char *verb) {
        size_t l = strlen(verb_path);

        (void) snprintf(verb_path + l, sizeof(verb_path) - l, "%s%s", l > 0 ? " " : "", verb);
}

const char *verb_path_get(void) {
        static char buf[sizeof(verb_path) + 1];

        (void) snprintf(buf, sizeof(buf), "%s%s", *verb_path ? " " : "", verb_path);
        return buf;
}

static void option_error(char *const argv[], const char *optstring, const struct option *longopts) {
        const char *word = optind > 0 ? argv[optind - 1] : "?";
        const char *name_end;
        char what[128];

        if (startswith(word, "--")) {
                const struct option *o = NULL;

                name_end = strchrnul(word, '=');
                for (const struct option *p = longopts; p && p->name; p++)
                        if (strlen(p->name) == (size_t) (name_end - word - 2) &&
                            strncmp(p->name, word + 2, name_end - word - 2) == 0)
                                o = p;
                if (!o)
                        (void) snprintf(what, sizeof(what), "unknown option '%.*s'", (int) (name_end - word), word);
                else if (o->has_arg == no_argument)
                        (void) snprintf(what, sizeof(what), "option '--%s' takes no value", o->name);
                else
                        (void) snprintf(what, sizeof(what), "option '--%s' needs a value", o->name);
        } else {
                const char *p = optopt > 0 && optopt < 128 ? strchr(optstring, optopt) : NULL;

                if (p && p[1] == ':')
                        (void) snprintf(what, sizeof(what), "option '-%c' needs a value", optopt);
                else
                        (void) snprintf(what, sizeof(what), "unknown option '-%c'", optopt > 0 ? optopt : '?');
        }
        fprintf(stderr, "skillctl: %s%s%s (see 'skillctl%s%s --help')\n", verb_path, *verb_path ? ": " : "",
                what, *verb_path ? " " : "", verb_path);
}

int verb_getopt_long(int argc, char *const argv[], const char *optstring, const struct option *longopts,
                     int *longindex) {
        int c;

        opterr = 0;
        c = getopt_long(argc, argv, optstring, longopts, longindex);
        if (c == '?' || c == ':')
                option_error(argv, optstring, longopts);
        return c;
}

/* Damerau-Levenshtein (optimal string alignment) distance, for names of a few letters. */
static size_t distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b), d[33][33];

        if (la > 32 || lb > 32)
                return SIZE_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];

                        d[i][j] = MIN(MIN(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                                d[i][j] = MIN(d[i][j], d[i - 2][j - 2] + 1);
                }
        return d[la][lb];
}

const char *verb_suggest(const Verb *table, size_t n, const char *name) {
        const char *best = NULL;
        size_t best_d = SIZE_MAX;

        for (size_t i = 0; i < n; i++) {
                size_t d = distance(name, table[i].name);

                /* A prefix of at least 2 letters is as good as one typo. */
                if (strlen(name) >= 2 && startswith(table[i].name, name))
                        d = MIN(d, 1U);
                if (d < best_d) {
                        best_d = d;
                        best = table[i].name;
                }
        }
        /* Two edits for longer names, one for short ones, where two would match anything. */
        return best && best_d <= (strlen(name) > 4 ? 2U : 1U) ? best : NULL;
}
