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
int verb_env(int argc, char *argv[]);

/* The runs the skilld service keeps (verbs-runs.c). */
int verb_list(int argc, char *argv[]);
int verb_status(int argc, char *argv[]);
int verb_logs(int argc, char *argv[]);
int verb_result(int argc, char *argv[]);
int verb_artifacts(int argc, char *argv[]);
int verb_cancel(int argc, char *argv[]);
int verb_wait(int argc, char *argv[]);
int verb_rm(int argc, char *argv[]);

/* The skills installed on the host, through the service (verbs-skill-admin.c). */
int verb_skill_list(int argc, char *argv[]);
int verb_skill_install(int argc, char *argv[]);
int verb_skill_remove(int argc, char *argv[]);

/* Runs the verb named by argv[0], resetting getopt so the verb parses its own options. */
int dispatch_verb(const Verb *verbs, size_t n, int argc, char *argv[], const char *what);

/* Prints "skillctl: what: why" and returns EXIT_USAGE: the one way verbs report usage errors. */
int usage_error(const char *what, const char *why);
