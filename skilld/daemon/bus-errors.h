/* The named D-Bus errors of io.skilld.Skilld1, and their errno values.
 *
 * The service and its clients agree on one table. The service turns a negative errno from the
 * domain code into a named error with bus_error_set_errnof() (the errnos listed below, sd-bus's
 * generic mapping for everything else); a client registers the table with
 * bus_errors_register() (skillctl, which loads libsystemd only to talk to the service, passes
 * skilld_bus_error_map to sd_bus_error_add_map() itself) and gets the errno back from
 * sd_bus_error_get_errno(), for its exit status and messages. Errors without a distinctive errno
 * (NoSuchArtifact, NetworkNotAllowed) are only ever set by name. Authorization failures use the
 * standard org.freedesktop.DBus.Error.AccessDenied and ...InteractiveAuthorizationRequired, which
 * every D-Bus tool already understands. The messages are sentences for a person. */
#pragma once

#include <systemd/sd-bus.h>

#define SKILLD_ERROR_PREFIX "io.skilld.Skilld1.Error."

#define SKILLD_ERROR_NO_SUCH_RUN           SKILLD_ERROR_PREFIX "NoSuchRun"              /* ESRCH */
#define SKILLD_ERROR_NO_SUCH_SESSION       SKILLD_ERROR_PREFIX "NoSuchSession"          /* by name */
#define SKILLD_ERROR_NO_SUCH_SKILL         SKILLD_ERROR_PREFIX "NoSuchSkill"            /* ENOPKG */
#define SKILLD_ERROR_NO_SUCH_ARTIFACT      SKILLD_ERROR_PREFIX "NoSuchArtifact"         /* ENOENT, by name */
#define SKILLD_ERROR_INVALID_SKILL         SKILLD_ERROR_PREFIX "InvalidSkill"           /* EBADMSG */
#define SKILLD_ERROR_SKILL_EXISTS          SKILLD_ERROR_PREFIX "SkillExists"            /* EEXIST */
#define SKILLD_ERROR_LIMIT_EXCEEDED        SKILLD_ERROR_PREFIX "LimitExceeded"          /* E2BIG */
#define SKILLD_ERROR_QUOTA_EXCEEDED        SKILLD_ERROR_PREFIX "QuotaExceeded"          /* EUSERS, EDQUOT */
#define SKILLD_ERROR_NO_SPACE              SKILLD_ERROR_PREFIX "NoSpace"                /* ENOSPC */
#define SKILLD_ERROR_NETWORK_NOT_ALLOWED   SKILLD_ERROR_PREFIX "NetworkNotAllowed"      /* EPERM, by name */
#define SKILLD_ERROR_RUN_ACTIVE            SKILLD_ERROR_PREFIX "RunActive"              /* EBUSY */
#define SKILLD_ERROR_RUN_FINISHED          SKILLD_ERROR_PREFIX "RunFinished"            /* EALREADY */
#define SKILLD_ERROR_NO_RESULT             SKILLD_ERROR_PREFIX "NoResult"               /* ENODATA */
#define SKILLD_ERROR_POLICY_INVALID        SKILLD_ERROR_PREFIX "PolicyInvalid"          /* ENOTRECOVERABLE */
#define SKILLD_ERROR_ISOLATION_UNAVAILABLE SKILLD_ERROR_PREFIX "IsolationUnavailable"   /* ENOSYS */
#define SKILLD_ERROR_ENVIRONMENT_MISSING   SKILLD_ERROR_PREFIX "EnvironmentMissing"     /* ENOMEDIUM */
#define SKILLD_ERROR_ENVIRONMENT_BUILD_FAILED SKILLD_ERROR_PREFIX "EnvironmentBuildFailed" /* EIO, by name */

/* Name to errno, for sd_bus_error_add_map(). Ends with SD_BUS_ERROR_MAP_END. */
extern const sd_bus_error_map skilld_bus_error_map[];

/* Makes sd_bus_error_get_errno() and friends know our names. Idempotent. */
int bus_errors_register(void);

/* Our error name for a (negative or positive) errno, or NULL when it has none of its own. */
const char *bus_error_name_from_errno(int error);

/* Sets error to the name for r (see above), with a formatted message, and returns -abs(r). */
int bus_error_set_errnof(sd_bus_error *error, int r, const char *format, ...) _sd_printf_(3, 4);

/* Why a skill's inspection refused it, from its errno: the skill (InvalidSkill), the disk it is
 * unpacked on (NoSpace), or the inspection itself (EIO, sd-bus's IOError). Only the first is for
 * the caller to fix. Returns a negative errno. */
int bus_error_set_inspection(sd_bus_error *error, int error_errno, const char *message);
