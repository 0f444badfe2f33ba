/* The arguments of the Manager's Run() and RunInstalled() calls, and above all their a{sv}
 * options dictionary, decoded and checked: the first step of their handlers (bus-manager.c).
 * Pure: a message in, a RunOptions or a D-Bus error out, nothing of the service's state, so that
 * the fuzz target "run-options" drives exactly the service's decoder. What needs the service
 * (the caller, the policy's limits, the skill itself) is checked by the handler afterwards.
 *
 * Also the argument checks the other Manager methods share with it. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "policy.h"
#include "util.h"

/* Each one is an fd the service holds while the run is queued. */
#define RUN_FILES_MAX 256U

typedef struct RunOptions {
        int skill_fd;                   /* Run(); borrowed from the message */
        const char *name;               /* RunInstalled() */
        const char *script;             /* NULL: the skill's default entry point */
        char **args;
        const char *input_json;         /* NULL: none */
        PolicyLimits asked;
        char **env;                     /* NAME=VALUE */
        char **file_names;
        int *file_fds;                  /* borrowed */
        bool *file_folders;             /* which inputs are folders (the "folders" option) */
        size_t n_files;
        bool network;
        bool command;                   /* args is an argv run as is, instead of a script's args */
        const char *cwd;                /* "/work" (NULL) or "/skill"; borrowed */
        const char *session;            /* a session's id: /work kept (bus-session.c); borrowed */
        int stdout_fd;                  /* borrowed */
        int stderr_fd;
} RunOptions;

/* Frees what the options own; the strings and fds borrowed from the message stay its own. */
void run_options_done(RunOptions *o);

/* Reads the whole call from msg (at its start): "hsassa{sv}" for Run(), "ssassa{sv}" for
 * RunInstalled(). Asked limits not given are POLICY_LIMIT_UNSET. Returns a negative errno, with
 * error set for anything the caller got wrong (InvalidArgs, InvalidSkill, LimitExceeded). */
int run_options_parse(sd_bus_message *msg, bool installed, RunOptions *ret, sd_bus_error *error);

/* A command run's argv as one line, for polkit's "command" detail and for people: each argument
 * escaped (cescape()), and in single quotes when empty or holding blanks or quotes. NULL: OOM. */
char *run_command_line(char * const *argv);

/* A string a person will see again (in errors, the journal): printable UTF-8, at most max bytes. */
bool bus_text_ok(const char *s, size_t max);
/* The skill archive of a call: a non-empty regular file (or memfd) open for reading, holding a
 * zip, at most INSPECT_ARCHIVE_MAX. Never a path. */
int bus_check_archive_fd(int fd, sd_bus_error *error);
/* InvalidArgs unless fd is open for writing ("The <which> file descriptor is not ..."). */
int bus_check_output_fd(int fd, const char *which, sd_bus_error *error);
/* Sets org.freedesktop.DBus.Error.InvalidArgs with a formatted message; returns -EINVAL. */
int bus_invalid_args(sd_bus_error *error, const char *fmt, ...) _printf_(2, 3);
