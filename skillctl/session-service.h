/* skillctl session through the service (session-service.c). Each prints its errors and returns a
 * negative errno. */
#pragma once

#include "bus-client.h"
#include "session.h"

int session_service_create(Client *c, const char *skill_arg, uint64_t ttl_usec, Session **ret);
int session_service_get(Client *c, const char *id, Session **ret);
int session_service_usage(Client *c, const char *id, uint64_t *ret);
/* Sessions listed: each with its id, skill, owner, quota; used_usec holds when it expires. */
int session_service_list(Client *c, bool all, Session ***ret, uint64_t **ret_usage, size_t *ret_n);
int session_service_remove(Client *c, const char *id);
