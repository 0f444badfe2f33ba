/* Failures a person must understand. Library calls return a negative errno and, where the caller
 * passes a "char **error", also a sentence naming what was wrong ("scripts/x: symlinks are not
 * allowed"). The first message set wins: the innermost call knows best what happened. */
#pragma once

#include "util.h"

int error_setf(char **error, int r, const char *fmt, ...) _printf_(3, 4);
int error_setv(char **error, int r, const char *fmt, va_list ap) _printf_(3, 0);
