/* Failures a person must understand. Library calls return a negative errno and, where the caller
 * passes a "char **error", also a sentence naming what was wrong ("scripts/x: symlinks are not
 * allowed"). The first message set wins: the innermost call knows best what happened. */
#pragma once

#include "util.h"

int error_setf(char **error, int r, const char *fmt, ...) _printf_(3, 4);
int error_setv(char **error, int r, const char *fmt, va_list ap) _printf_(3, 0);

#ifdef __clang_analyzer__
/* The static analyzer reads one file at a time and cannot see that these return a negative
 * errno; without this, every "return error_setf(...)" starts a path on which a failure passes
 * for success and ret_* are read unset. Builds never see it. */
#define error_setf(error, r, ...)                                                       \
        ({                                                                              \
                int _q_ = (error_setf)((error), (r), __VA_ARGS__);                      \
                __builtin_assume(_q_ < 0);                                              \
                _q_;                                                                    \
        })
#endif
