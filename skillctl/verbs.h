/* skillctl's verbs. Each takes the arguments after its own name (argv[0] is the verb) and
 * returns the process exit status; messages go to stderr as "skillctl: <what>: <why>". */
#pragma once

/* Exit statuses shared by the verbs (lint's 0/1/2 and run's 124..127 follow common tools). */
#define EXIT_INVALID 1
#define EXIT_USAGE 2

int verb_skill(int argc, char *argv[]);

/* Prints "skillctl: what: why" and returns EXIT_USAGE: the one way verbs report usage errors. */
int usage_error(const char *what, const char *why);
