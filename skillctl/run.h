/* "skillctl run": what run.c (arguments, embedded runs) and run-service.c (runs through the skilld
 * service) share. */
#pragma once

#include "bus-client.h"
#include "engine.h"
#include "run-result.h"
#include "entry.h"
#include "skill-fd.h"

#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

typedef struct RunArgs {
        bool exec;                      /* "skillctl exec": args is a command, not a script's args */
        const char *cwd;                /* exec --cwd: "/work" or "/skill"; NULL: /work */
        const char *session;            /* --session ID: /work kept in that session */
        const char *skill;
        const char *script;
        char *input;
        char **files;                   /* NAME=PATH, as given */
        char **env;
        const char *output_dir;
        SandboxLimits limits;
        unsigned limits_set;            /* SandboxLimit bits given on the command line */
        char **args;
        bool network;
        bool json;
        bool quiet;
        bool local;
        bool system;
} RunArgs;

/* Prints "skillctl: ...". */
void run_error(const char *fmt, ...) _printf_(1, 2);
/* Prints "skillctl: ..." and evaluates to EXIT_RUN_FAILED (a macro, so that the value is visible
 * to the static analyzer, which does not follow variadic functions). */
#define run_fail(...) (run_error(__VA_ARGS__), EXIT_RUN_FAILED)

/* Loads and validates the skill at a->skill and resolves the script to run, as both modes do, so
 * that a bad skill fails alike either way. Returns 0, or the exit status after printing why. */
int run_load_skill(const RunArgs *a, LocalSkill *ret, SkillEntry *ret_entry);

/* Opens the --file inputs (NAME=PATH, split in place) as the caller: the engine and the service
 * are handed fds, never paths. On failure nothing stays open and the outputs are untouched.
 * Returns 0, or the exit status after printing why. */
int run_open_files(char **specs, RunFile **ret, int **ret_fds, size_t *ret_n);
void run_close_files(int *fds, size_t n);

/* Whether SKILL names an installed skill: no such file exists, and it could be a skill's name. */
bool run_skill_is_installed_name(const char *skill);

/* Runs through the service; returns the exit status. When c is unconfirmed
 * (client_open_unconfirmed()) and Run finds no service on the system bus: RUN_NO_SERVICE, nothing
 * printed, *ret_no_service saying why (for client_open_after_bus()). */
#define RUN_NO_SERVICE (-1)
int run_via_service(Client *c, RunArgs *a, char **ret_no_service);
