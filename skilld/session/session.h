/* Sessions: a /work kept between the runs of one skill, for skills whose instructions are several
 * steps over one folder (unpack, edit, pack). A session is a directory of its store holding
 * session.json (owner, skill, times, TTL, quota) and work/, which the engine copies into each run's
 * /work and back (sandbox/workspace.c). Nothing else of a run is kept.
 *
 * The store is a plain directory: $XDG_STATE_HOME/skilld/sessions for skillctl's own runs,
 * /var/lib/skilld/sessions for the service's. Everything is on disk, so sessions survive a restart
 * of whoever uses them; a session is removed whole (renamed away first, then deleted) by rm, by
 * expiry after its idle TTL, or by GC. A run holds the session's lock (flock) for its length, so two
 * runs never share one /work at once. Nothing here knows about D-Bus or who may do what. */
#pragma once

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "util.h"

#define SESSION_ID_LEN 32
/* Defaults of skillctl's own sessions; the service takes them from its policy. */
#define SESSION_TTL_DEFAULT_USEC (24ULL * 3600 * 1000000)
#define SESSION_TTL_MAX_USEC (30ULL * 24 * 3600 * 1000000)
#define SESSION_QUOTA_DEFAULT (256ULL * 1024 * 1024)
#define SESSION_QUOTA_MAX (4ULL * 1024 * 1024 * 1024)
/* Sessions one user may have in a store. */
#define SESSION_PER_USER_DEFAULT 32U

typedef struct Session {
        char id[SESSION_ID_LEN + 1];
        uid_t owner;
        char *skill;                    /* the name of the skill it was created for */
        uint64_t created_usec;          /* CLOCK_REALTIME */
        uint64_t used_usec;             /* the end of the last run, or creation */
        uint64_t ttl_usec;              /* idle time until it expires */
        uint64_t quota_bytes;           /* the size of its /work */
} Session;

Session *session_free(Session *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Session *, session_free);
void session_freev(Session **v, size_t n);

typedef struct SessionStore {
        int dir_fd;
        char *path;
} SessionStore;

SessionStore *session_store_free(SessionStore *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SessionStore *, session_store_free);

/* Opens (creating it, 0700) the store at path. */
int session_store_open(const char *path, SessionStore **ret, char **error);
/* skillctl's store: $XDG_STATE_HOME/skilld/sessions, else ~/.local/state/skilld/sessions. */
int session_store_user_path(char **ret);

/* Whether id is 32 lowercase hex digits. */
bool session_id_valid(const char *id);

/* A new session with a random id and an empty work/. -EUSERS when owner has max_per_user. */
int session_create(SessionStore *st, uid_t owner, const char *skill, uint64_t ttl_usec, uint64_t quota,
                   unsigned max_per_user, Session **ret, char **error);
/* -ENOENT when there is no such session (or it is being removed), -EINVAL for a bad id. */
int session_load(SessionStore *st, const char *id, Session **ret);
/* Every session of the store, oldest first. */
int session_list(SessionStore *st, Session ***ret, size_t *ret_n);
/* Removes it whole; -ENOENT if it is gone, -EBUSY while a run holds it. */
int session_remove(SessionStore *st, const char *id);
/* The session's directory (the engine's workspace_fd), locked for a run: -EBUSY when another run
 * holds it. The lock goes with the fd. */
int session_open_locked(SessionStore *st, const char *id, int *ret_fd);
/* Records a use at now (the idle TTL counts from here). */
int session_touch(SessionStore *st, Session *s, uint64_t now_usec);
bool session_expired(const Session *s, uint64_t now_usec);
/* Removes every expired session that no run holds; returns how many. */
int session_gc(SessionStore *st, uint64_t now_usec);
/* The bytes its work/ holds now (regular files). */
int session_usage(SessionStore *st, const char *id, uint64_t *ret);

/* {"id", "owner", "skill", "created_usec", "used_usec", "ttl_usec", "expires_usec", "quota_bytes"} */
int session_to_json(const Session *s, cJSON **ret);
