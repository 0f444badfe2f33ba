/* skillctl's verbs. Each takes the arguments after its own name (argv[0] is the verb) and
 * returns the process exit status; messages go to stderr as "skillctl: <what>: <why>". */
#pragma once

#include <getopt.h>

#include "util.h"

/* Exit statuses shared by the verbs (lint's 0/1/2 and run's 124..127 follow common tools). */
#define EXIT_INVALID 1
#define EXIT_USAGE 2

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[]);
} Verb;

int verb_skill(int argc, char *argv[]);
int verb_run(int argc, char *argv[]);
/* The MCP server on stdin/stdout (mcp/server.c). */
int verb_mcp(int argc, char *argv[]);
int verb_exec(int argc, char *argv[]);
int verb_session(int argc, char *argv[]);
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

/* The retention of runs' output folders in ./skill-out (runs-prune.c). */
int verb_runs(int argc, char *argv[]);

/* Scaffolds a new skill folder (skill-init.c). */
int skill_init_main(int argc, char *argv[]);

/* Prints a lint diagnostic as "PREFIX PATH/FILE:LINE: severity: key: message" (verbs-skill.c). */
struct LintDiag;
void lint_diag_print(FILE *f, const char *prefix, const char *path, const struct LintDiag *d);

/* Tool definitions of skills for model APIs (tools/verb-tools.c). */
int verb_skill_tools(int argc, char *argv[]);

/* Runs the verb named by argv[0], resetting getopt so the verb parses its own options. */
int dispatch_verb(const Verb *verbs, size_t n, int argc, char *argv[], const char *what);

/* Prints "skillctl: what: why" and returns EXIT_USAGE: the one way verbs report usage errors. */
int usage_error(const char *what, const char *why);

/* getopt_long() for verbs (verb-options.c): the same, but an option it refuses is reported as
 * "skillctl: VERB: unknown option '--x' (see 'skillctl VERB --help')". Every file including this
 * header gets it. */
int verb_getopt_long(int argc, char *const argv[], const char *optstring, const struct option *longopts,
                     int *longindex);
#define getopt_long verb_getopt_long

/* Appends VERB to the verb path the messages above name ("skill", then "skill lint"). */
void verb_path_push(const char *verb);
/* The verb path so far with a leading space ("", " skill"), to append to "skillctl". */
const char *verb_path_get(void);

/* The name in table closest to a mistyped one, or NULL when none is close. */
const char *verb_suggest(const Verb *table, size_t n, const char *name);
