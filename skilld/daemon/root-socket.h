/* skilld's root socket: where root's clients reach the running service directly, the way
 * systemctl reaches PID 1 on /run/systemd/private. A call there takes one hop instead of two
 * through the bus daemon, and a client's connection costs no Hello and no NameOwnerChanged
 * broadcast to every subscriber of the bus at its start and its exit.
 *
 * It exists only while this instance holds the bus name (so there is one, and the bus still
 * activates the service when it is not there: clients then go through the bus), is root's alone
 * (mode 0600, and the peer's uid checked at accept()), and a client connected to it keeps the
 * service from its idle exit: at the idle exit the socket is unlinked first and what already
 * connected is accepted, so a client whose authentication went through is always served. The
 * private socket of skilld.socket (for hosts without a system bus) is another thing: everyone's,
 * and systemd's to hold. */
#pragma once

#include <sys/types.h>

/* Beside the private socket, in the runtime directory. */
#define ROOT_SOCKET_NAME "private"
/* Where it is made before it is renamed to its name, listening. */
#define ROOT_SOCKET_TEMP_SUFFIX ".new"

/* Makes a listening socket at path (a stale one of a killed instance is replaced), mode 0600;
 * path appears only once it listens, and nothing is left behind on failure. */
int root_socket_listen(const char *path, int *ret_fd);

/* Accepts one connection of listen_fd, a non-blocking AF_UNIX socket (this one, or the private
 * socket of skilld.socket): 1 and the fd and its peer's uid (SO_PEERCRED), 0 when none is
 * waiting, or a negative errno. */
int socket_accept_peer(int listen_fd, int *ret_fd, uid_t *ret_uid);
