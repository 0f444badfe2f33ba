/* Who is calling: the uid the bus (or the kernel, on a direct connection) vouches for, never
 * /proc, which would race with the caller exec'ing something else.
 *
 * On a bus the uid is a question to the bus daemon. Asked in the handler, it is a synchronous
 * round trip during which the service serves no one (up to 0.2 s each under load in the VM, fifty
 * new callers at once). So a filter in front of the handlers asks ahead: the first call of a new
 * sender is held, its uid asked without waiting, and the call put back into the read queue when
 * the answer is in; the handler then finds it remembered. A sender's later calls wait behind its
 * first, in order. What the bus answered stays true: a unique name is never given to another
 * connection while the bus runs, and the bus fixed its uid when it connected. */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "util.h"

#ifndef UID_INVALID
#define UID_INVALID ((uid_t) -1)
#endif

/* The effective uid of the caller of call: remembered, or asked (synchronously) and remembered. */
int bus_message_get_caller_uid(sd_bus_message *call, uid_t *ret);
/* The same for a method handler: a failure also sets error, the reply the caller gets. */
int bus_caller_uid(sd_bus_message *call, uid_t *ret, sd_bus_error *error);
/* Whether the uid of call's sender on a bus is remembered: asking for it would not wait. */
bool bus_caller_uid_remembered(sd_bus_message *call);
/* Forget what bus (NULL: every bus) said of its senders, when that connection goes away, before
 * another could be allocated at the same address. */
void bus_caller_cache_flush(sd_bus *bus);

typedef struct CallerUids CallerUids;

/* Installs the filter on bus (attached to an event loop), which must be a bus client. */
int caller_uids_new(sd_bus *bus, CallerUids **ret);
/* Held calls are dropped unanswered; freed before the bus. */
CallerUids *caller_uids_free(CallerUids *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(CallerUids *, caller_uids_free);
/* Calls held for their sender's uid: the service is not idle while there are any. */
size_t caller_uids_pending(const CallerUids *c);
