/* The bus names that hear of runs (bus-run.c), each counted, each watched for its departure. A
 * unique name leaves the bus once and is never reused, so a name is watched by a match on its
 * NameOwnerChanged, sent before a GetNameOwner that tells whether it left before the match was in
 * place: the bus answers one connection's calls in order. Neither is waited for: the service goes
 * on serving, and learns of a departure when the bus says so. (sd_bus_track does the same with a
 * synchronous GetNameOwner per new name, a round trip of the event loop for every skillctl.) */
#pragma once

#include <systemd/sd-bus.h>

#include "util.h"

typedef struct PeerNames PeerNames;

int peer_names_new(sd_bus *bus, PeerNames **ret);
PeerNames *peer_names_free(PeerNames *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(PeerNames *, peer_names_free);

/* Counted: a name stays until removed as often as it was added. */
int peer_names_add(PeerNames *s, const char *name);
void peer_names_remove(PeerNames *s, const char *name);
/* Added and not known to have left the bus. */
bool peer_names_present(const PeerNames *s, const char *name);
/* Names added and not known to have left. */
size_t peer_names_count(const PeerNames *s);
