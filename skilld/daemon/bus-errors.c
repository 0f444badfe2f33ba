/* See bus-errors.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-errors.h"

int bus_errors_register(void) {
        int r;

        r = sd_bus_error_add_map(skilld_bus_error_map);
        return r < 0 ? r : 0;
}

const char *bus_error_name_from_errno(int error) {
        /* ENOENT and EPERM are deliberately absent: they arise everywhere, and a stray one must
         * not claim that an artifact is missing or that the policy refused network. */
        switch (abs(error)) {
        case ESRCH:
                return SKILLD_ERROR_NO_SUCH_RUN;
        case ENOPKG:
                return SKILLD_ERROR_NO_SUCH_SKILL;
        case EBADMSG:
                return SKILLD_ERROR_INVALID_SKILL;
        case EEXIST:
                return SKILLD_ERROR_SKILL_EXISTS;
        case E2BIG:
                return SKILLD_ERROR_LIMIT_EXCEEDED;
        case EUSERS:
        case EDQUOT:
                return SKILLD_ERROR_QUOTA_EXCEEDED;
        case ENOSPC:
                return SKILLD_ERROR_NO_SPACE;
        case EBUSY:
                return SKILLD_ERROR_RUN_ACTIVE;
        case EALREADY:
                return SKILLD_ERROR_RUN_FINISHED;
        case ENODATA:
                return SKILLD_ERROR_NO_RESULT;
        case ENOTRECOVERABLE:
                return SKILLD_ERROR_POLICY_INVALID;
        case ENOSYS:
                return SKILLD_ERROR_ISOLATION_UNAVAILABLE;
        case ENOMEDIUM:
                return SKILLD_ERROR_ENVIRONMENT_MISSING;
        default:
                return NULL;
        }
}

int bus_error_set_errnof(sd_bus_error *error, int r, const char *format, ...) {
        const char *name = bus_error_name_from_errno(r);
        char *message = NULL;
        va_list ap;
        int k;

        r = -abs(r);
        if (!format)
                return name ? sd_bus_error_set(error, name, NULL) : sd_bus_error_set_errno(error, r);

        va_start(ap, format);
        k = vasprintf(&message, format, ap);
        va_end(ap);
        if (k < 0)
                return sd_bus_error_set_errno(error, -ENOMEM);

        if (name)
                (void) sd_bus_error_set(error, name, message);
        else
                (void) sd_bus_error_set_errnof(error, r, "%s", message);
        free(message);
        return r;
}

int bus_error_set_inspection(sd_bus_error *error, int error_errno, const char *message) {
        if (error_errno == ENOSPC || error_errno == EDQUOT)
                return sd_bus_error_set(error, SKILLD_ERROR_NO_SPACE, message);
        if (error_errno == EIO)
                return bus_error_set_errnof(error, -EIO, "%s", message);
        return sd_bus_error_set(error, SKILLD_ERROR_INVALID_SKILL, message);
}
