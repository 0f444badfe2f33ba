/* Skill environments: the third-party packages a skill needs (skilld/deps names them), resolved
 * from Debian's archive, a Python index or the npm registry, built once in the sandbox with
 * network, and then mounted read-only at /env into every run of a skill that needs them, which
 * stays offline.
 *
 * An environment is content-addressed: its id hashes what decides its contents (the resolvers and
 * their order, the requirements, package.json and lockfile bytes, the pip index, the interpreters'
 * versions and ABI, the architecture, ENV_BUILDER_VERSION) and nothing else, so editing a script
 * keeps it and two skills with the same needs share one. A cache directory holds:
 *
 *   <id>/                  the tree, read-only: debian/ (unpacked .debs), python/ (pip --target),
 *                          node/node_modules (npm ci), skilld/sitecustomize.py, manifest.json
 *   .lock-<id>             flock()ed by the one build of <id> in progress
 *   .build-<id>-XXXXXX/    a build in progress (the next build or gc removes what a killed one left)
 *   bindings/<skill-hash>  the id a skill's content resolved to, so a run need not infer again
 *   needs/<needs-id>       the id last built for these needs, whatever sources built it
 *
 * Everything a build downloads and unpacks runs in the sandbox engine as a throwaway uid, except
 * `apt-get download` (see env-debian.c for why). */
#pragma once

#include <cjson/cJSON.h>
#include <sys/types.h>

#include "deps.h"
#include "engine.h"

/* Raised whenever a change to the builder changes what a build produces. */
#define ENV_BUILDER_VERSION "2"

/* Where a run sees its environment. */
#define ENV_MOUNT "/env"

/* The exit statuses of a build (skillctl env build): 0 complete, ENV_EXIT_PARTIAL when some
 * packages were provided by no source (the environment holds the others). */
#define ENV_EXIT_PARTIAL 3

typedef enum EnvResolver {
        ENV_RESOLVER_DEBIAN,    /* Python distributions and system packages from the host's apt sources */
        ENV_RESOLVER_PIP,       /* Python distributions from an index (binary wheels only) */
        ENV_RESOLVER_NPM,       /* npm ci from package-lock.json */
        _ENV_RESOLVER_MAX,
        _ENV_RESOLVER_INVALID = -EINVAL,
} EnvResolver;

const char *env_resolver_to_string(EnvResolver r);     /* "debian", "pip", "npm" */
EnvResolver env_resolver_from_string(const char *s);

typedef struct EnvOptions {
        /* The resolvers in the order they are tried; a resolver left out is never used. */
        EnvResolver resolvers[_ENV_RESOLVER_MAX];
        size_t n_resolvers;
        const char *pip_index_url;      /* PEP 503 index; NULL: none (then pip --no-index) */
        char **pip_find_links;          /* pip --find-links: absolute paths of wheelhouses (bound
                                         * read-only into the build at /mnt/N) and http(s) URLs;
                                         * the pip resolver has no source without these or an index */
        const char *npm_registry;       /* NULL: npm's own default */
        const char *python;             /* NULL: /usr/bin/python3 */
        const char *node;               /* NULL: /usr/bin/node */
} EnvOptions;

#define ENV_OPTIONS_INIT                                                                \
        (EnvOptions) {                                                                  \
                .resolvers = { ENV_RESOLVER_DEBIAN, ENV_RESOLVER_PIP, ENV_RESOLVER_NPM }, \
                .n_resolvers = 3,                                                       \
        }

/* What an environment must provide, in a canonical form, and its id. */
typedef struct EnvSpec {
        char **python;                  /* requirement lines "name[extras]spec; marker", sorted */
        char **python_names;            /* the normalized names, same order */
        char **system;                  /* Debian packages the skill names itself, sorted */
        char **node;                    /* npm packages of package.json, for messages */
        char *requirements;             /* the requirements file, when it pins hashes (pip only) */
        char *package_json;             /* bytes of package.json and package-lock.json */
        char *package_lock;
        bool node_without_lock;         /* package.json without a lockfile: refused */
        bool required;                  /* something is needed that is not an optional import
                                         * (guarded by try/except ImportError): without it built,
                                         * runs do not start */
        char *python_tag;               /* "python3.11 cpython-311", or NULL if no Python is needed */
        char *node_tag;                 /* "node v20", or NULL */
        char *arch;                     /* "x86_64" */
        EnvOptions options;
        char *pip_index_url;
        char **pip_find_links;
        char *npm_registry;
        char id[65];
        /* The same without the sources (resolvers, index): a run does not know which options the
         * build had, and takes the environment last built for these needs. */
        char needs_id[65];
} EnvSpec;

EnvSpec *env_spec_free(EnvSpec *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(EnvSpec *, env_spec_free);

/* The spec for what deps says a skill needs. dir_fd is the skill tree (package.json and its lock
 * are read through it). Returns 0 with NULL in *ret when the skill needs nothing. */
int env_spec_new(const SkillDeps *deps, int dir_fd, const EnvOptions *o, EnvSpec **ret, char **error);
/* Whether s is a find-links entry a build takes: an absolute path or an http(s) URL, of at most 2048
 * bytes, with no whitespace, quotes or backslashes (it becomes a line of a pip requirements file). */
bool env_find_links_is_valid(const char *s);
/* The canonical text the id hashes (exposed for tests and `env show`). */
int env_spec_canonical(const EnvSpec *s, char **ret);
/* Whether the spec needs anything at all. */
bool env_spec_is_empty(const EnvSpec *s);

/* The Debian packages that may provide a Python distribution (normalized name), best first:
 * Debian's own mapping (dh-python's table when installed), then python3-<name>, and for names
 * starting with "python-" python3-<rest>. NULL-terminated, to free with strv_free(). */
int env_debian_candidates(const char *distribution, const char *fallback_table, char ***ret);
/* PEP 440 (env-version.c). Whether version satisfies the comma-separated specifiers ("==1.2.*",
 * ">=4,<6", "~=2.2", "===1.0-x"; empty: anything), as pip decides: 1 or 0, -EINVAL when either
 * does not parse. A pre-release satisfies only specifiers that name one. */
int env_pep440_satisfies(const char *version, const char *specifiers);
/* The order of two versions (<0, 0, >0 in *ret), or -EINVAL. */
int env_pep440_compare(const char *a, const char *b, int *ret);
bool env_pep440_is_valid(const char *version);
/* The upstream version a Debian version packages, as PEP 440 ("1:1.24.2-1+deb12u1" -> "1.24.2",
 * "3.0~rc1-1" -> "3.0rc1"), or -EINVAL. */
int env_debian_upstream_version(const char *debian, char **ret);

/* dh-python's table of distribution names to Debian packages. */
#define ENV_DH_PYTHON_TABLE "/usr/share/dh-python/dist/cpython3_fallback"

/* pip's configuration of its sources, as `pip install` run by this user reads it (env-pip.c):
 * config files and PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX. For embedded builds. */
typedef struct EnvPipConfig {
        char *index_url;                /* NULL: none, or no-index is set */
        char **find_links;              /* as configured: paths (maybe relative) and URLs */
        bool no_index;
} EnvPipConfig;

void env_pip_config_done(EnvPipConfig *c);
int env_pip_config(EnvPipConfig *ret);

/* The cache directory: $XDG_CACHE_HOME/skilld/envs (or ~/.cache/...) for a user; with system set,
 * the service's: /var/cache/skilld/envs, or $SKILLD_ENV_CACHE_DIR (tests). */
int env_cache_dir(bool system, char **ret);

typedef struct EnvBuildOptions {
        const char *cache_dir;
        const char *skill_hash;         /* recorded in bindings/, may be NULL */
        bool rebuild;                   /* build again even if the id exists */
        int log_fd;                     /* live build log (resolver output), or -1 */
        uid_t uid;                      /* root: the sandbox uid; (uid_t) -1: the engine's */
        unsigned allow_missing;         /* SandboxLayer bits the build may lack */
        const SandboxBackendOps *backend;
        void *backend_userdata;
        uint64_t timeout_usec;          /* 0: 30 minutes */
} EnvBuildOptions;

#define ENV_BUILD_OPTIONS_INIT                                  \
        (EnvBuildOptions) {                                     \
                .log_fd = -EBADF,                               \
                .uid = (uid_t) -1,                              \
        }

typedef struct EnvBuildResult {
        char id[65];
        bool cached;                    /* it existed: nothing was built */
        char **missing;                 /* "python:pdfplumber" ... what no source provided */
        cJSON *manifest;
} EnvBuildResult;

void env_build_result_done(EnvBuildResult *r);

/* Builds the environment of spec into cache_dir unless it is there already. Two builds of one id
 * build once (the second waits and finds it). On failure nothing is left in the cache. -ENOMEDIUM
 * with a message: nothing at all could be resolved. */
int env_build(const EnvSpec *spec, const EnvBuildOptions *o, EnvBuildResult *ret, char **error);

/* "Python packages pypdf, defusedxml; npm packages docx": what spec needs, for messages. */
int env_describe_needs(const EnvSpec *spec, char **ret);

/* The registry the caller's npm is configured with (npm config get registry), or -ENOENT. */
int env_npm_registry(char **ret);

/* The NAME=VALUE entries a run over an environment gets (RunRequest.env_search). */
int env_search_paths(char ***ret);

/* For a run: the environment for the skill of hash skill_hash whose needs are deps (may be NULL
 * when the binding is known). Returns 1 with an O_PATH fd of the environment in *ret_fd, 0 when the
 * skill needs no environment, -ENOENT when it needs one that is not built (*error names what is
 * missing and the command that builds it). The environment's last use is recorded. */
int env_open_for_run(const char *cache_dir, const char *skill_hash, const EnvSpec *spec, int *ret_fd,
                     char **error);
/* Looks up the binding of a skill hash: 1 with the id, 0 unknown, or the environment no longer
 * exists. "-" is the id of "needs nothing". */
int env_binding_get(const char *cache_dir, const char *skill_hash, char ret_id[static 65]);
int env_binding_set(const char *cache_dir, const char *skill_hash, const char *id);

/* Opens (O_PATH) the environment id of cache_dir for a run and records the use, by which gc goes. */
int env_open_id(const char *cache_dir, const char *id);

/* The built environment for spec: its own id, else the one last built for the same needs.
 * Returns 1 with the id, 0 when none is built. */
int env_find(const char *cache_dir, const EnvSpec *spec, char ret_id[static 65]);

/* Lifecycle. */
typedef struct EnvInfo {
        char id[65];
        uint64_t size;                  /* bytes on disk */
        uint64_t last_used_usec;        /* CLOCK_REALTIME */
        uint64_t created_usec;
        cJSON *manifest;
} EnvInfo;

void env_info_done(EnvInfo *i);
int env_list(const char *cache_dir, EnvInfo **ret, size_t *ret_n);
void env_info_array_free(EnvInfo *a, size_t n);
/* id may be a unique prefix (at least 8 digits). */
int env_resolve_id(const char *cache_dir, const char *prefix, char ret_id[static 65], char **error);
int env_remove(const char *cache_dir, const char *id);
/* Removes what is least recently used until at most max_count environments of at most max_bytes
 * together are left, plus leftovers of killed builds. Returns how many were removed. */
int env_gc(const char *cache_dir, uint64_t max_count, uint64_t max_bytes, char ***ret_removed);

/* The digest of a tree: every path, type, mode bits and contents (or link target), in order. */
int env_tree_digest(int dir_fd, const char *skip, char ret[static 65], uint64_t *ret_size);
