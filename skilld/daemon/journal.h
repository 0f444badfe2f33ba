/* The journal record of runs: one structured entry per run when it ends, so admins can audit
 * who ran what (journalctl SKILLD_RUN_ID=..., MESSAGE_ID=...) without the service keeping logs
 * of its own.
 *
 * Fields: SKILLD_RUN_ID, SKILL_NAME, SKILL_HASH, SKILLD_CALLER_UID, SKILLD_STATUS (the status
 * of a finished run, or "interrupted"), SKILLD_EXIT_CODE, SKILLD_SIGNAL, and SKILLD_REFUSED_SYSCALLS
 * ("socket(AF_PACKET), mount x2", only when the filter refused any). Names are escaped (a
 * skill's name comes from its author), and nothing of the skill's output is ever copied here:
 * output is the owner's, the journal is readable by admins. */
#pragma once

#include <sys/types.h>

#include "util.h"

#define SKILLD_MESSAGE_RUN_FINISHED "7bf39efccf71417b96c57cdfcf31c58d"
#define SKILLD_MESSAGE_RUN_STARTED  "c871a814389e4cdaa7427a87e16c8d1e"
/* One entry per BuildEnvironment() that got past authorization (bus-env.c): SKILLD_ENVIRONMENT,
 * SKILL_NAME, SKILL_HASH, SKILLD_CALLER_UID, SKILLD_STATUS (built, partial, cached, failed). */
#define SKILLD_MESSAGE_ENV_BUILT    "4d0f6c2a9b8e4f71a3c5d2e8b6f19a07"

typedef struct JournalRun {
        const char *id;
        const char *skill_name;
        const char *skill_hash;
        uid_t owner;
        const char *status;             /* "succeeded", ..., "interrupted" */
        int exit_code;                  /* -1: none */
        int signal;                     /* 0: none */
        const char *reason;             /* why interrupted, or NULL */
        const char *refused;            /* the refused system calls, escaped, or NULL: none */
} JournalRun;

/* Best effort: a journal that is not there (tests, containers) loses the entry, nothing else. */
void journal_run_started(const JournalRun *j);
void journal_run_finished(const JournalRun *j);
