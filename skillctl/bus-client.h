/* skillctl's side of the io.skilld.Skilld1 API: finding a service that answers, calling it, and
 * turning its named errors into messages and exit statuses.
 *
 * A service is looked for on the system bus first (where it is D-Bus activated), then on its
 * private socket /run/skilld/bus (hosts and containers without a system bus), or with -H on a
 * remote host's system bus over SSH. Root first tries the service's root socket
 * /run/skilld/private, there while the service runs: a direct connection, no bus daemon in
 * between (skilld's root-socket.h). "No service answered" is a normal outcome, not an error:
 * `skillctl run` then runs embedded. */
#pragma once

#include "sd-dlopen.h"
#include "util.h"

#define SKILLD_BUS_NAME "io.skilld.Skilld1"
#define SKILLD_BUS_PATH "/io/skilld/Skilld1"
#define SKILLD_BUS_MANAGER SKILLD_BUS_NAME ".Manager"
#define SKILLD_BUS_RUN SKILLD_BUS_NAME ".Run"
#define SKILLD_BUS_RUN_PATH_PREFIX SKILLD_BUS_PATH "/run/"
#define SKILLD_PRIVATE_BUS_ADDRESS "unix:path=/run/skilld/bus"
#define SKILLD_ROOT_BUS_ADDRESS "unix:path=/run/skilld/private"

/* Exit status of the service verbs when what was named does not exist (as systemctl's 4). */
#define EXIT_NO_SUCH 4

/* Global options, set by main.c. */
extern const char *arg_host;            /* -H [USER@]HOST: the system bus of that host, over SSH */
extern bool arg_ask_password;           /* false with --no-ask-password */

typedef struct Client {
        sd_bus *bus;
        const char *destination;        /* SKILLD_BUS_NAME on a bus, NULL on the private socket */
        char *where;                    /* "the system bus", "/run/skilld/bus", "HOST", for messages */
        bool can_pass_fds;              /* false over SSH: no Run with a skill fd, no logs, no artifacts */
        bool unconfirmed;               /* not asked yet whether the service is there (client_open_unconfirmed()) */
        pid_t agent_pid;                /* the polkit agent we started, or 0 */
} Client;

Client *client_free(Client *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Client *, client_free);

/* Connects to the first service that answers (it is activated on the way). Returns 1 with a
 * client, 0 when none answered (*ret_reason says why: no bus, nothing owns or activates the
 * name, no private socket), negative errno with *ret_reason set when one was found but failed
 * (it could not be started, or the connection broke). */
int client_open(Client **ret, char **ret_reason);

/* As client_open(), but on the system bus the service is not pinged first: the first call's
 * answer tells whether it is there (client_unconfirmed_error()). One round trip through the bus
 * and the service less, for a caller whose first call loses nothing by going out to no one
 * (skillctl run of an installed skill: nothing packed, no embedded fallback). The private socket
 * and -H are asked as client_open() asks them. */
int client_open_unconfirmed(Client **ret, char **ret_reason);

/* As client_open(), for a process that keeps its connection for its whole life (skillctl mcp):
 * never the root socket, whose connection would hold the service from its idle exit for as long,
 * and would die with the service where a bus connection reaches the next one by its name. */
int client_open_lasting(Client **ret, char **ret_reason);

/* For the failed first call of client c, what a Ping with that answer would have told
 * client_open(): 1 when nothing on the system bus provides the service (*ret_reason says so; go
 * on with client_open_after_bus()); negative with *ret_reason when the service exists but could
 * not be started; 0 when the service answered, or c was asked before: an error to report as any
 * other. */
int client_unconfirmed_error(const Client *c, const sd_bus_error *error, char **ret_reason);

/* What client_open() does after a system bus without the service (*reason, taken, said why):
 * the private socket. Returns as client_open(), *reason holding both reasons when nothing
 * answered. */
int client_open_after_bus(Client **ret, char **reason);

/* As client_open(), for verbs that need the service: prints the reason and returns the exit
 * status (1) when none answered, 0 with a client otherwise. */
int client_open_or_fail(Client **ret);

/* Starts a text polkit agent for this terminal when we may ask for a password and nothing else
 * will (stdin and stderr are terminals, the service is local). Best effort: without an agent the
 * call fails with an authorization error that says what to do. Before calls that may need an
 * administrator's password. */
void client_polkit_agent_open(Client *c);

/* sd_bus_message_new_method_call() with our destination, and interactive authorization as
 * allowed. */
int client_new_call(Client *c, const char *path, const char *interface, const char *member,
                    sd_bus_message **ret);
/* Calls m with the method timeout we use (long when a password may be asked). */
int client_call(Client *c, sd_bus_message *m, sd_bus_error *error, sd_bus_message **ret_reply);
/* client_new_call() plus appending types/... plus client_call(). */
int client_call_method(Client *c, const char *path, const char *interface, const char *member,
                       sd_bus_error *error, sd_bus_message **ret_reply, const char *types, ...);

/* Prints "skillctl: WHAT: WHY" for a failed call: our named errors and authorization failures
 * as sentences, anything else with the bus's message. Returns the negative errno of the error. */
int client_log_error(const char *what, const sd_bus_error *error, int r);
/* The exit status of a service verb for an error client_log_error() returned: EXIT_NO_SUCH for
 * a missing run, skill or artifact, else 1. */
int client_exit_status(int r);

/* Whether s is a run id (32 lowercase hex digits) or the start of one (at least 4). */
bool run_id_is_valid(const char *s, bool allow_prefix);

/* The object of the run named id (or a unique prefix of the id of a run the caller may see), through
 * GetRun. Prints the error. On success *ret_id holds the full id. */
int client_get_run(Client *c, const char *id, char **ret_id, char **ret_path);

/* Reads one string property of the run object id at path; prints the error. */
int client_get_run_string(Client *c, const char *id, const char *path, const char *property, char **ret);
