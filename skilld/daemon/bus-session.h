/* Sessions through the service (bus-session.c). */
#pragma once

#include <systemd/sd-bus.h>

#include "session.h"

typedef struct Manager Manager;

int bus_session_add_objects(Manager *m, sd_bus *bus);
int bus_session_path(const char *id, char **ret);
/* The session a Run names, checked: the caller's own, alive, for this skill. Sets a D-Bus error
 * (NoSuchSession, AccessDenied, InvalidArgs) otherwise. */
int manager_session_for_run(Manager *m, const char *id, uid_t uid, const char *skill, Session **ret,
                            sd_bus_error *error);
/* Removes the expired sessions. */
void manager_session_gc(Manager *m);
