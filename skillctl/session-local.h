/* skillctl's own sessions (session.c): finding the store and a session in it, and what an
 * embedded run --session needs. */
#pragma once

#include "engine.h"
#include "session.h"

/* The user's store, opened (and created); prints why not and returns 1 on failure. */
int session_local_store(SessionStore **ret);
/* A session of the store by id; prints why not (4: no such session) and returns the exit status. */
int session_local_find(SessionStore *st, const char *id, Session **ret);

/* For a run in a session: the session, checked to be the skill's and alive, its directory locked
 * into req (workspace_fd, workspace_quota). Prints why not and returns the exit status; 0 and
 * *ret_fd (to close after the run) on success. */
int session_local_attach(SessionStore *st, const char *id, const char *skill_name, RunRequest *req,
                         Session **ret, int *ret_fd);

uint64_t now_realtime_usec(void);
