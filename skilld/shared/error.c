/* See error.h. */
#include "error.h"

/* error.h's model for the static analyzer wraps the calls, not this definition. */
#undef error_setf

int error_setv(char **error, int r, const char *fmt, va_list ap) {
        r = -abs(r);
        if (!error || *error)
                return r;

        errno = -r;
        if (vasprintf(error, fmt, ap) < 0)
                *error = NULL;
        return r;
}

int error_setf(char **error, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = error_setv(error, r, fmt, ap);
        va_end(ap);
        return r;
}
