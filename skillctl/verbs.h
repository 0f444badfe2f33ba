/* skillctl's verbs. Each takes the arguments after its own name (argv[0] is the verb) and
 * returns the process exit status; messages go to stderr as "skillctl: <what>: <why>". */
#pragma once

/* Exit statuses shared by the verbs (lint's 0/1/2 and run's 124..127 follow common tools). */
#define EXIT_INVALID 1
#define EXIT_USAGE 2

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[]);
} Verb;

int verb_skill(int argc, char *argv[]);
int verb_run(int argc, char *argv[]);

/* Runs the verb named by argv[0], resetting getopt so the verb parses its own options. */
int dispatch_verb(const Verb *verbs, size_t n, int argc, char *argv[], const char *what);

/* Prints "skillctl: what: why" and returns EXIT_USAGE: the one way verbs report usage errors. */
int usage_error(const char *what, const char *why);
