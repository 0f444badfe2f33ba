/* The admin policy: what the skilld service allows on this host. Limits (defaults a run gets and
 * maximums nobody may exceed), the uid range runs execute under, caps on concurrency, queueing and
 * stored results, the isolation layers a host may lack, the skills that may have network.
 *
 * The policy is layered like systemd configuration: compiled-in defaults (identical to the shipped
 * PKGDATADIR/policy.yaml, a test keeps them in sync), then the shipped file, then
 * /etc/skilld/policy.yaml. Each file overrides key by key: an admin file holding only
 * "limits: {memory: {max: 8G}}" changes that one value and keeps every other one. A list replaces
 * the list of the layer below as a whole. Validation (defaults within maximums and the like) runs
 * once on the merged result, and its errors name the file and line that set the offending value.
 *
 * The parser is strict, because a typo in a security policy must not silently mean "default":
 * unknown keys, duplicate keys, anchors, aliases, tags and multiple documents are errors, each
 * reported as "FILE:LINE: KEY: what is wrong". Nothing here knows about D-Bus. */
#pragma once

#include <sys/types.h>

#include "engine.h"
#include "util.h"

/* Larger policy files are refused before parsing. */
#define POLICY_FILE_MAX (1024U * 1024U)

#define POLICY_SYSTEM_PATH SYSCONFDIR "/skilld/policy.yaml"
#define POLICY_VENDOR_PATH PKGDATADIR "/policy.yaml"

/* "No limit" for the retention values that accept "infinity". */
#define POLICY_INFINITY UINT64_MAX

/* Runs active and queued at once, at most: the submitter of each hears of it through a match rule
 * the service holds on the bus, and dbus-daemon grants a connection 512 by default. */
#define POLICY_RUNS_IN_FLIGHT_MAX 256U

typedef enum PolicyLimit {
        POLICY_LIMIT_MEMORY,    /* bytes: memory.max (swap is always 0) */
        POLICY_LIMIT_TASKS,     /* pids.max */
        POLICY_LIMIT_CPU,       /* percent of one CPU: cpu.max */
        POLICY_LIMIT_TIMEOUT,   /* microseconds of wall-clock time */
        POLICY_LIMIT_STDOUT,    /* bytes of stdout kept, the rest is cut with a marker */
        POLICY_LIMIT_STDERR,    /* bytes of stderr kept */
        POLICY_LIMIT_OUTPUT,    /* bytes in /out altogether (output.json and artifacts) */
        POLICY_LIMIT_TMPFS,     /* bytes of each private tmpfs (/tmp and HOME) */
        _POLICY_LIMIT_MAX,
        _POLICY_LIMIT_INVALID = -EINVAL,
} PolicyLimit;

/* "memory", "tasks", "cpu", "timeout", "stdout", "stderr", "output", "tmpfs": the names used in
 * policy.yaml and in the options of the D-Bus Run() call. */
const char *policy_limit_to_string(PolicyLimit l) _pure_;
PolicyLimit policy_limit_from_string(const char *s) _pure_;

/* Marks a limit a caller did not ask for in policy_resolve_limits(). */
#define POLICY_LIMIT_UNSET UINT64_MAX

typedef struct PolicyLimits {
        uint64_t value[_POLICY_LIMIT_MAX];
} PolicyLimits;

typedef struct PolicyRetention {
        uint64_t max_runs;              /* records kept in the store, all users together */
        uint64_t max_bytes;             /* disk usage of the store */
        uint64_t max_age_usec;          /* since a run finished */
        uint64_t max_runs_per_user;
        uint64_t max_bytes_per_user;
} PolicyRetention;

typedef struct PolicyOrigin PolicyOrigin;

typedef struct Policy {
        PolicyLimits defaults;          /* what a run gets when it does not ask */
        PolicyLimits maximums;          /* the most a caller authorized for raise-limits may ask */

        uid_t uid_first;                /* runs execute under uids uid_first .. uid_first+uid_count-1 */
        uint32_t uid_count;
        bool uid_allow_low;             /* the admin insists on a range below 65536 */

        uint64_t max_active_per_user;   /* runs executing at once */
        uint64_t max_active;
        uint64_t max_queued_per_user;   /* runs waiting for a slot; beyond that, refused */
        uint64_t max_queued;

        PolicyRetention retention;

        uint64_t min_free_bytes;        /* the store's file system must keep this much free ... */
        uint64_t min_free_percent;      /* ... and this share, or new runs are refused */

        SandboxLayer isolation_may_be_missing;  /* the engine's optional layers a host may lack */

        char **network_skills;          /* installed skill names that may ask for network */
        char **network_hashes;          /* content hashes (hex SHA-256) of skills that may */

        uint64_t idle_timeout_usec;     /* the service exits after this long with nothing to do */

        /* Skill environments (skilld/env). The resolvers as "debian", "pip", "npm", in the order
         * they are tried; NULL: none at all. */
        char **env_resolvers;
        char *env_pip_index_url;        /* the service's PEP 503 index; NULL: pip has no source */
        char **env_pip_find_links;      /* pip --find-links: absolute paths of wheelhouses (bound
                                         * read-only into the build) and http(s) URLs */
        uint64_t env_max_count;         /* environments kept; gc removes the least recently used */
        uint64_t env_max_bytes;
        uint64_t env_max_builds_per_user;       /* BuildEnvironment() builds one caller may have going */
        uint64_t env_max_builds;                /* ... and all callers together (each holds a uid) */
        uint64_t session_ttl_default_usec;      /* a session's idle TTL when none is asked for */
        uint64_t session_ttl_max_usec;          /* the longest one may ask for */
        uint64_t session_quota_default;         /* bytes of a session's /work */
        uint64_t session_quota_max;
        uint64_t max_sessions_per_user;

        /* Where each value came from, for validation messages. Private to policy.c. */
        char **sources;
        PolicyOrigin *origins;
} Policy;

Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);

/* The compiled-in defaults. */
int policy_new_default(Policy **ret);

/* Merges one YAML file into p, key by key. A missing file returns -ENOENT and records nothing.
 * Every problem found is appended to *errors as "FILE:LINE: KEY: message"; the return value is
 * then -EINVAL (-EBADMSG for YAML syntax errors, where parsing had to stop). */
int policy_merge_file(Policy *p, const char *path, char ***errors);

/* Checks the merged policy for consistency; problems are appended to *errors (-EINVAL). */
int policy_validate(const Policy *p, char ***errors);

typedef enum PolicyLoadFlags {
        /* Missing files are skipped instead of being an error. */
        POLICY_LOAD_MISSING_OK = 1 << 0,
        /* Refuse files not owned by root or writable by group or others: whoever can write the
         * policy controls what the root service lets users do. */
        POLICY_LOAD_TRUSTED = 1 << 1,
} PolicyLoadFlags;

/* Compiled defaults, then each file of paths merged in order, then validation. On failure every
 * problem is in *ret_errors (when given) and nothing is returned in *ret. */
int policy_load_files(char * const *paths, PolicyLoadFlags flags, Policy **ret, char ***ret_errors);

/* The service's entry point. path == NULL: the system layers (POLICY_VENDOR_PATH, then
 * POLICY_SYSTEM_PATH, both optional, both required to be root-owned). path != NULL: that file
 * alone over the compiled defaults. *error gets the first problem, prefixed with how many more
 * there are. */
int policy_load(const char *path, Policy **ret, char **error);

/* For "skilld --check-policy FILE": FILE over the compiled defaults (which equal the shipped
 * file), validated. Returns 0 when clean, else -EINVAL (or the read error) with every problem,
 * one per line with its line number, in *ret_errors. */
int policy_check_file(const char *path, char ***ret_errors);

/* Whether the policy tolerates the absence of an isolation layer. */
bool policy_layer_may_be_missing(const Policy *p, SandboxLayer l);

/* Whether a skill may run with network. Names count only for installed skills: the name of a
 * skill passed by fd is whatever its author wrote into SKILL.md. Hashes count for every skill.
 * A "sha256:" prefix on hash is accepted. The caller also needs io.skilld.network. */
bool policy_network_allowed(const Policy *p, const char *name, const char *hash, bool installed);

/* The limits for one run: each value of asked that is not POLICY_LIMIT_UNSET replaces the
 * default. A value above the maximum fails with -E2BIG and a message naming the limit; zero or a
 * value below the floor of that limit fails with -EINVAL. *ret_raised is set when any value is
 * above its default (the caller then needs io.skilld.raise-limits). asked may be NULL. */
int policy_resolve_limits(const Policy *p, const PolicyLimits *asked, PolicyLimits *ret,
                          bool *ret_raised, char **error);

/* The resolver order of the policy, as skilld/env takes it: ret holds EnvResolver values. */
size_t policy_env_resolvers(const Policy *p, int ret[static 3]);

/* Formats a limit value for messages: "512.0M", "256", "150%", "60s". */
char *policy_limit_format(PolicyLimit l, uint64_t v);
