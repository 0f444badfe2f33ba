/* See session-local.h. */
#include <time.h>

#include "log.h"
#include "run.h"
#include "session-local.h"

#define EXIT_NO_SUCH_SESSION 4

uint64_t now_realtime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

int session_local_store(SessionStore **ret) {
        _cleanup_free_ char *path = NULL, *error = NULL;
        int r;

        r = session_store_user_path(&path);
        if (r < 0)
                return log_error_errno(r, "Cannot find where sessions go: set XDG_STATE_HOME or HOME"), 1;
        r = session_store_open(path, ret, &error);
        if (r < 0)
                return log_error_errno(r, "%s", error ?: strerror(-r)), 1;
        return 0;
}

int session_local_find(SessionStore *st, const char *id, Session **ret) {
        _cleanup_free_ char *shown = NULL;
        int r;

        r = session_load(st, id, ret);
        if (r >= 0)
                return 0;
        shown = cescape(id);
        if (r == -ENOENT || r == -EINVAL)
                return log_error("no such session: %s (see 'skillctl session list')", strna(shown)),
                       EXIT_NO_SUCH_SESSION;
        return log_error_errno(r, "Failed to read session %s: %m", strna(shown)), 1;
}

int session_local_attach(SessionStore *st, const char *id, const char *skill_name, RunRequest *req,
                         Session **ret, int *ret_fd) {
        _cleanup_(session_freep) Session *s = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = session_local_find(st, id, &s);
        if (r != 0)
                return EXIT_RUN_FAILED;
        if (session_expired(s, now_realtime_usec())) {
                (void) session_remove(st, s->id);
                return run_fail("session %s expired (its idle TTL passed) and is removed", s->id);
        }
        if (!streq(s->skill, skill_name)) {
                _cleanup_free_ char *a = cescape(s->skill), *b = cescape(skill_name);

                return run_fail("session %s is for the skill %s, not %s", s->id, strna(a), strna(b));
        }
        r = session_open_locked(st, s->id, &fd);
        if (r == -EBUSY)
                return run_fail("session %s is in use by another run; try again when it has ended", s->id);
        if (r < 0)
                return run_fail("session %s: %s", s->id, strerror(-r));
        req->workspace_fd = fd;
        req->workspace_quota = s->quota_bytes;
        *ret = TAKE_PTR(s);
        *ret_fd = TAKE_FD(fd);
        return 0;
}
