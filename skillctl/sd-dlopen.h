/* libsystemd, loaded by skillctl when it first talks to skilld (or runs the MCP server's event
 * loop), not linked: an embedded run and every verb that stays local never map it and its chain
 * (liblzma, libzstd, liblz4, libcap, ...), about 0.4 ms of each start. The headers give the types,
 * constants and macros; the functions are reached through the sym_* pointers below, all resolved
 * together by dlopen_libsystemd(), or none. The service links libsystemd as usual.
 *
 * Beware sd-bus.h's and sd-event.h's own cleanup helpers (sd_bus_message_unrefp(), ...): they call
 * the real symbols, which skillctl does not link (the link fails). The sym_*p helpers below are
 * their twins through the pointers. */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <systemd/sd-journal.h>

#include "util.h"

/* Every function skillctl calls, by name: the destructors apart (see below). */
#define SD_DLOPEN_SYMBOLS(X)                            \
        X(sd_bus_add_filter)                            \
        X(sd_bus_add_match_async)                       \
        X(sd_bus_attach_event)                          \
        X(sd_bus_call)                                  \
        X(sd_bus_call_async)                            \
        X(sd_bus_call_method)                           \
        X(sd_bus_can_send)                              \
        X(sd_bus_error_add_map)                         \
        X(sd_bus_error_get_errno)                       \
        X(sd_bus_error_has_name)                        \
        X(sd_bus_error_has_names_sentinel)              \
        X(sd_bus_error_is_set)                          \
        X(sd_bus_get_property_string)                   \
        X(sd_bus_get_property_trivial)                  \
        X(sd_bus_match_signal)                          \
        X(sd_bus_match_signal_async)                    \
        X(sd_bus_message_append)                        \
        X(sd_bus_message_append_strv)                   \
        X(sd_bus_message_appendv)                       \
        X(sd_bus_message_close_container)               \
        X(sd_bus_message_enter_container)               \
        X(sd_bus_message_exit_container)                \
        X(sd_bus_message_get_error)                     \
        X(sd_bus_message_is_signal)                     \
        X(sd_bus_message_new_method_call)               \
        X(sd_bus_message_open_container)                \
        X(sd_bus_message_peek_type)                     \
        X(sd_bus_message_read)                          \
        X(sd_bus_message_read_array)                    \
        X(sd_bus_message_read_basic)                    \
        X(sd_bus_message_read_strv)                     \
        X(sd_bus_message_rewind)                        \
        X(sd_bus_message_skip)                          \
        X(sd_bus_is_ready)                              \
        X(sd_bus_new)                                   \
        X(sd_bus_open_system)                           \
        X(sd_bus_open_system_remote)                    \
        X(sd_bus_process)                               \
        X(sd_bus_set_address)                           \
        X(sd_bus_set_allow_interactive_authorization)   \
        X(sd_bus_start)                                 \
        X(sd_bus_wait)                                  \
        X(sd_event_add_child)                           \
        X(sd_event_add_defer)                           \
        X(sd_event_add_io)                              \
        X(sd_event_add_signal)                          \
        X(sd_event_add_time_relative)                   \
        X(sd_event_exit)                                \
        X(sd_event_loop)                                \
        X(sd_event_new)                                 \
        X(sd_event_now)                                 \
        X(sd_event_run)                                 \
        X(sd_event_source_set_enabled)                  \
        X(sd_event_source_set_time_relative)            \
        X(sd_journal_send)

/* The destructors. Until the library is loaded no object exists, so they can only be asked to
 * free NULL: their pointers start at stand-ins that do nothing, and cleanup paths that ran before
 * the load (a failure early in a verb that would have talked to the service) need no test of their
 * own. As the library's, they accept NULL and return NULL. */
#define SD_DLOPEN_DESTRUCTORS(X)                        \
        X(sd_bus_error_free)                            \
        X(sd_bus_flush_close_unref)                     \
        X(sd_bus_message_unref)                         \
        X(sd_bus_slot_unref)                            \
        X(sd_event_source_disable_unref)                \
        X(sd_event_unref)

#define SD_DLSYM_DECLARE(name) extern typeof(name) *sym_##name;
SD_DLOPEN_SYMBOLS(SD_DLSYM_DECLARE)
SD_DLOPEN_DESTRUCTORS(SD_DLSYM_DECLARE)
#undef SD_DLSYM_DECLARE

/* sd-bus.h's macro, through the pointer. */
#define sym_sd_bus_error_has_names(e, ...) sym_sd_bus_error_has_names_sentinel(e, __VA_ARGS__, NULL)

/* Loads libsystemd and resolves every sym_* above, once per process (skillctl is single-threaded).
 * Returns 0, or -EOPNOTSUPP with a sentence in *error (when error is not NULL) saying what is
 * missing, that `why` needs it ("talking to skilld") and which package brings it; a failed load is
 * retried on the next call. Call it before the first sd_* object is made: every other call
 * follows from one (a bus, a message, an event loop), so it finds the pointers set. */
int dlopen_libsystemd(const char *why, char **error);

/* The cleanup helpers, through the pointers. */
DEFINE_TRIVIAL_CLEANUP_FUNC(sd_bus *, sym_sd_bus_flush_close_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(sd_bus_message *, sym_sd_bus_message_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(sd_bus_slot *, sym_sd_bus_slot_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(sd_event *, sym_sd_event_unref);
DEFINE_TRIVIAL_CLEANUP_FUNC(sd_event_source *, sym_sd_event_source_disable_unref);

/* For _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL. */
static inline void sym_sd_bus_error_freep(sd_bus_error *e) {
        sym_sd_bus_error_free(e);
}
