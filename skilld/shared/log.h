/* Logging for the programs, not for the library: library code logs at debug level only and
 * reports failures through return values. log_*_errno() return -abs(error) and set errno, so
 * "return log_error_errno(r, "Failed to ...: %m");" logs and fails in one step. */
#pragma once

#include <syslog.h>

#include "util.h"

void log_set_max_level(int level);
int log_get_max_level(void);
/* Program name shown in front of messages on a terminal ("skillctl: ..."). */
void log_set_program(const char *name);
/* When stderr goes to the journal, prefix lines with <N> so journald keeps the priority. */
void log_set_prefix_level(bool b);

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *fmt, ...) _printf_(6, 7);

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)

/* Out-of-memory is reported the same way everywhere. */
#define log_oom() log_full_errno(LOG_ERR, ENOMEM, "Out of memory.")

/* Marks an errno that was made up by us rather than returned by a call, so %m is not printed
 * from a stale errno by mistake; the value is the errno itself. */
#define SYNTHETIC_ERRNO(e) (e)
