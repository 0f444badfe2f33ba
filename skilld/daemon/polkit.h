/* Asking polkit whether the caller of a D-Bus method may do something, without ever blocking the
 * event loop: an authorization dialog can take minutes, and the service must go on serving
 * everyone else meanwhile.
 *
 * The pattern (the one systemd's daemons use, written here on public sd-bus API only): a method
 * handler calls polkit_check_async() before changing anything. The first time, it sends
 * CheckAuthorization to polkit, remembers the request message in the registry and returns 0; the
 * handler then returns 1 without replying. When polkit answers, the verdict is stored, the request
 * message is rewound and put back into its bus's read queue, so sd-bus dispatches it to the same
 * handler once more. This time polkit_check_async() finds the verdict and returns 1 (authorized)
 * or a negative errno with a D-Bus error set. An idle-priority event source frees the record after
 * that second run. A handler may check several actions for one call (run-unlisted, then network,
 * then raise-limits): each missing verdict costs one more round trip and one more dispatch.
 *
 * Who is asked about: on a bus (dbus-daemon, dbus-broker) the caller is the subject
 * "system-bus-name" with its unique name, which polkit resolves itself, race-free. On a direct
 * connection (the private socket /run/skilld/bus) there is no bus name, so the subject is
 * "unix-process" with the peer's pid, start time and uid from SO_PEERCRED.
 *
 * Policy decisions encoded here, each a SECURITY choice:
 *   - uid 0 needs no authorization. Only uid 0: a caller with the daemon's own uid is not exempt,
 *     so tests running the daemon as an ordinary user still exercise polkit.
 *   - polkit unreachable (not installed, not running, crashed, timed out) means denied.
 *   - a "challenge" answer (authentication would be needed but the caller did not allow
 *     interaction) is reported as org.freedesktop.DBus.Error.InteractiveAuthorizationRequired,
 *     so clients can retry interactively. */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "caller-uids.h"
#include "peer-names.h"
#include "util.h"

#ifndef UID_INVALID
#define UID_INVALID ((uid_t) -1)
#endif

typedef struct PolkitRegistry PolkitRegistry;

/* polkit_bus: where org.freedesktop.PolicyKit1 is reached (the system bus), or NULL when there is
 * none, in which case every caller but root is denied. The registry keeps a reference. polkit_bus
 * and every bus whose calls are checked must be attached to an sd-event loop.
 * callers: NULL, or names watched on polkit_bus, where each held call's sender is added while it
 * waits (polkit_caller_left()); the registry must be freed before it. */
int polkit_registry_new(sd_bus *polkit_bus, PeerNames *callers, PolkitRegistry **ret);
/* Drops every pending query; the calls waiting on them are never answered by us. */
PolkitRegistry *polkit_registry_free(PolkitRegistry *reg);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolkitRegistry *, polkit_registry_free);

/* Method calls waiting for polkit or for their second dispatch. The service is not idle while
 * this is non-zero. */
size_t polkit_registry_pending(const PolkitRegistry *reg);

/* Checks whether the sender of call may perform action.
 *   details: NULL or a NULL-terminated list "key", "value", ... passed to polkit, so admins can
 *            write rules about them (skill name, hash, script).
 *   good_uid: a uid allowed without asking (the owner of the run acted on), or UID_INVALID.
 * Returns 1 when authorized, 0 when the answer is pending (the handler must return 1 and not
 * reply; it will be called again), or a negative errno with ret_error set: -EACCES when denied
 * (org.freedesktop.DBus.Error.AccessDenied, or ...InteractiveAuthorizationRequired). Must be
 * called before the handler changes any state, since the handler may run several times. */
int polkit_check_async(PolkitRegistry *reg, sd_bus_message *call, const char *action,
                       char * const *details, uid_t good_uid, sd_bus_error *ret_error);

/* Whether call was held for polkit's answer, is being dispatched again, and its caller is known to
 * have left the bus meanwhile (seconds may pass while polkit decides). Known without a round trip:
 * the caller was watched from before polkit was asked, so a departure before polkit's answer was
 * told before that answer. Only for calls on the bus with the registry's callers. */
bool polkit_caller_left(PolkitRegistry *reg, sd_bus_message *call);

