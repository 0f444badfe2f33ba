/* See journal.h. */
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "journal.h"
#include "log.h"

void journal_run_started(const JournalRun *j) {
        _cleanup_free_ char *name = cescape(strempty(j->skill_name));
        int r;

        if (!name)
                return;
        r = sd_journal_send("MESSAGE=Run %s of skill %s started for uid %u.",
                            j->id, name, (unsigned) j->owner,
                            "MESSAGE_ID=" SKILLD_MESSAGE_RUN_STARTED,
                            "PRIORITY=%i", LOG_INFO,
                            "SKILLD_RUN_ID=%s", j->id,
                            "SKILL_NAME=%s", name,
                            "SKILL_HASH=%s", strempty(j->skill_hash),
                            "SKILLD_CALLER_UID=%u", (unsigned) j->owner,
                            NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to write the journal entry of run %s: %m", j->id);
}

void journal_run_finished(const JournalRun *j) {
        _cleanup_free_ char *name = cescape(strempty(j->skill_name));
        _cleanup_free_ char *reason = j->reason ? cescape(j->reason) : NULL;
        int r;

        if (!name || (j->reason && !reason))
                return;
        /* The status decides the priority: a run that failed is the skill's business, one that
         * the service lost is the admin's. */
        /* A refused call is what an admin looks for when a skill "fails for no reason", so the
         * message names them too. */
        r = sd_journal_send("MESSAGE=Run %s of skill %s for uid %u ended: %s%s%s%s%s.",
                            j->id, name, (unsigned) j->owner, strempty(j->status), reason ? ", " : "",
                            strempty(reason), j->refused ? "; the sandbox refused " : "",
                            strempty(j->refused),
                            "MESSAGE_ID=" SKILLD_MESSAGE_RUN_FINISHED,
                            "PRIORITY=%i", streq_ptr(j->status, "interrupted") ? LOG_WARNING : LOG_INFO,
                            "SKILLD_RUN_ID=%s", j->id,
                            "SKILL_NAME=%s", name,
                            "SKILL_HASH=%s", strempty(j->skill_hash),
                            "SKILLD_CALLER_UID=%u", (unsigned) j->owner,
                            "SKILLD_STATUS=%s", strempty(j->status),
                            "SKILLD_EXIT_CODE=%i", j->exit_code,
                            "SKILLD_SIGNAL=%i", j->signal,
                            j->refused ? "SKILLD_REFUSED_SYSCALLS=%s" : NULL, strempty(j->refused),
                            NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to write the journal entry of run %s: %m", j->id);
}
