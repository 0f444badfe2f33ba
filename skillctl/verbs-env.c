/* "skillctl env": the environments skills' third-party packages live in (skilld/env). build
 * resolves and installs what a skill needs, in the sandbox with network (--system: the service
 * does, through BuildEnvironment, which polkit authorizes); list, show, rm and gc
 * look after the cache. And what `skillctl run` asks before an embedded run: which environment to
 * mount, or why the run cannot start. */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "bus-client.h"
#include "bus-errors.h"
#include "env.h"
#include "fileio.h"
#include "log.h"
#include "output.h"
#include "parse-util.h"
#include "policy.h"
#include "run.h"
#include "skill-fd.h"
#include "verbs.h"
#include "verbs-env.h"

static int env_usage(void) {
        printf("Usage: skillctl env COMMAND ...\n"
               "\n"
               "Build and manage the environments that hold skills' third-party packages.\n"
               "\n"
               "Commands:\n"
               "  build [--local|--system] [--index-url URL] [--find-links DIR|URL]... [--resolvers LIST]\n"
               "        [--rebuild] [--json] SKILL\n"
               "                        Resolve and install what SKILL needs, in the sandbox\n"
               "                        (--system: by the skilld service, as polkit allows)\n"
               "  list [--json]         List the built environments\n"
               "  show ID|SKILL [--json] Show an environment's manifest\n"
               "  rm ID...              Remove environments\n"
               "  gc [--max-count N] [--max-size SIZE] [--json]\n"
               "                        Remove the least recently used beyond the caps\n"
               "\n"
               "Options of every command:\n"
               "  --system              The service's environments (/var/cache/skilld/envs)\n"
               "\n"
               "See skillctl(1).\n");
        return 0;
}

/* The spec of what the skill at dir needs, with the options of this host: the pip index is
 * pip's own setting (PIP_INDEX_URL) unless given, the npm registry npm's. */
static int skill_env_spec(const LocalSkill *skill, const EnvOptions *o, EnvSpec **ret, SkillDeps **ret_deps,
                          char **error) {
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        SkillDepsOptions dopts = SKILL_DEPS_OPTIONS_INIT;
        int r;

        dopts.infer = true;
        dopts.skill_dir = skill->source->path;
        dopts.allow_missing = SANDBOX_LAYER_CGROUP;
        r = skill_deps_discover(skill->source->dir_fd, skill->skill, &dopts, &deps, error);
        if (r == -EOPNOTSUPP && dopts.infer) {
                /* Inference is not available here: what the skill declares is all we know. */
                free(*error);
                *error = NULL;
                dopts.infer = false;
                r = skill_deps_discover(skill->source->dir_fd, skill->skill, &dopts, &deps, error);
        }
        if (r < 0)
                return r;
        r = env_spec_new(deps, skill->source->dir_fd, o, ret, error);
        if (r < 0)
                return r;
        if (ret_deps)
                *ret_deps = TAKE_PTR(deps);
        return 0;
}

/* The host's policy (/etc/skilld/policy.yaml over the shipped one) sets the resolver order and
 * the caps for embedded use too; a policy that does not load leaves the compiled defaults. */
static Policy *host_policy(void) {
        static Policy *cached = NULL;
        _cleanup_free_ char *error = NULL;

        if (cached)
                return cached;
        if (policy_load(NULL, &cached, &error) < 0) {
                log_debug("Using the default policy: %s", strna(error));
                if (policy_new_default(&cached) < 0)
                        return NULL;
        }
        return cached;
}

/* A wheelhouse as pip takes it (a path, relative to the working directory, a file: URL, or an
 * http(s) URL) as a build takes it: an absolute path of an existing directory, or the URL. */
static int find_links_normalize(const char *l, char **ret) {
        const char *path = startswith(l, "file://") ?: l;
        struct stat st;
        char *abs;

        if (startswith(l, "http://") || startswith(l, "https://")) {
                *ret = strdup(l);
                return *ret ? 0 : -ENOMEM;
        }
        abs = realpath(path, NULL);
        if (!abs)
                return -errno;
        if (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(abs);
                return -ENOTDIR;
        }
        *ret = abs;
        return 0;
}

/* Where the pip resolver gets packages for an embedded build: what the command line gives, else
 * pip's own configuration (its files and PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX: what `pip
 * install` would use, which the build's `pip --isolated` does not read itself), else the policy's.
 * The strings o points to live until the next call. */
static int env_options_for_host(EnvOptions *o, const char *index_url, char **find_links) {
        static char *pip_index = NULL;
        static char **links = NULL;
        _cleanup_(env_pip_config_done) EnvPipConfig pc = {};
        Policy *p = host_policy();
        int r;

        free(pip_index);
        pip_index = NULL;
        links = strv_free(links);
        *o = ENV_OPTIONS_INIT;
        if (p) {
                int order[3];

                o->n_resolvers = policy_env_resolvers(p, order);
                for (size_t i = 0; i < o->n_resolvers; i++)
                        o->resolvers[i] = (EnvResolver) order[i];
        }
        r = env_pip_config(&pc);
        if (r < 0)
                log_debug_errno(r, "Cannot read pip's configuration, ignoring: %m");

        if (index_url)
                o->pip_index_url = index_url;
        else if (pc.index_url || pc.no_index)
                o->pip_index_url = pip_index = TAKE_PTR(pc.index_url);
        else
                o->pip_index_url = p ? p->env_pip_index_url : NULL;

        STRV_FOREACH(l, find_links ?: pc.find_links) {
                _cleanup_free_ char *n = NULL;

                r = find_links_normalize(*l, &n);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !env_find_links_is_valid(n)) {
                        /* The command line's were checked; pip's own configuration may name what
                         * pip would skip too. */
                        log_debug("Ignoring pip's find-links '%s': %s", *l, r < 0 ? strerror(-r) : "not usable");
                        continue;
                }
                if (!strv_contains(links, n) && (r = strv_push(&links, TAKE_PTR(n))) < 0)
                        return r;
        }
        o->pip_find_links = links ?: (find_links || pc.find_links ? NULL : p ? p->env_pip_find_links : NULL);
        return 0;
}

int env_prepare_run(const LocalSkill *skill, const char *skill_arg, const char *hash, int *ret_fd) {
        _cleanup_(env_spec_freep) EnvSpec *spec = NULL;
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        _cleanup_free_ char *cache = NULL, *error = NULL;
        EnvOptions o;
        char id[65];
        int r;

        r = env_cache_dir(false, &cache);
        if (r < 0) {
                *ret_fd = -EBADF;
                return 0; /* no cache, no environments: the skill runs as it is */
        }
        /* The fast path: this very content was resolved before. */
        r = env_binding_get(cache, hash, id);
        if (r > 0) {
                if (streq(id, "-")) {
                        *ret_fd = -EBADF;
                        return 0;
                }
                r = env_open_id(cache, id);
                if (r >= 0) {
                        *ret_fd = r;
                        return 0;
                }
        }

        (void) env_options_for_host(&o, NULL, NULL);
        r = skill_env_spec(skill, &o, &spec, &deps, &error);
        if (r < 0)
                return run_fail("%s: cannot tell what this skill needs: %s", skill_arg, error ?: strerror(-r));
        if (!spec)
                /* Needing nothing follows from the content alone (what it declares, what its
                 * scripts import): the next run of this content skips the walks, the reading of
                 * pip's configuration and, where it ran, inference's sandbox. */
                (void) env_binding_set(cache, hash, "-");
        r = env_open_for_run(cache, hash, spec, ret_fd, &error);
        if (r == -ENOENT) {
                run_error("%s: %s. Build it with: skillctl env build --local %s", skill_arg, error, skill_arg);
                return RUN_EXIT_ENVIRONMENT;
        }
        if (r < 0)
                return run_fail("%s: %s", skill_arg, error ?: strerror(-r));
        if (r == 0)
                *ret_fd = -EBADF;
        return 0;
}

/* What a build says it did, the same whoever built. manifest may be NULL (the service's build:
 * `env show --system ID` reads it). */
static int print_build(const char *id, bool cached, char **missing, const cJSON *manifest, bool json,
                       double secs) {
        if (json) {
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateObject();
                cJSON *m = cJSON_CreateArray();

                STRV_FOREACH(x, missing)
                        (void) cJSON_AddItemToArray(m, cJSON_CreateString(*x));
                if (!j || !cJSON_AddStringToObject(j, "id", id) || !cJSON_AddBoolToObject(j, "cached", cached) ||
                    !cJSON_AddItemToObject(j, "missing", m) ||
                    (manifest && !cJSON_AddItemToObject(j, "manifest", cJSON_Duplicate(manifest, true))))
                        return log_oom(), EXIT_INVALID;
                (void) json_print(j);
        } else {
                cJSON *m = cJSON_GetObjectItemCaseSensitive(manifest, "missing");

                printf("Environment %s %s in %.2fs.\n", id, cached ? "is built already" : "built", secs);
                STRV_FOREACH(x, missing) {
                        const char *reason = NULL;
                        cJSON *i;

                        /* The manifest says why, "ecosystem:name" names the entry. */
                        cJSON_ArrayForEach(i, m) {
                                cJSON *e = cJSON_GetObjectItemCaseSensitive(i, "ecosystem"),
                                      *n = cJSON_GetObjectItemCaseSensitive(i, "name"),
                                      *why = cJSON_GetObjectItemCaseSensitive(i, "reason");
                                const char *rest = cJSON_IsString(e) ? startswith(*x, e->valuestring) : NULL;

                                if (rest && rest[0] == ':' && cJSON_IsString(n) && streq(rest + 1, n->valuestring) &&
                                    cJSON_IsString(why))
                                        reason = why->valuestring;
                        }
                        printf("  missing: %s (%s)\n", *x, reason ?: "no source provided it");
                }
        }
        return strv_length(missing) > 0 ? ENV_EXIT_PARTIAL : 0;
}

/* Copies the build log from the service's end of a pipe to our stderr, live, in a child of our
 * own (the call itself blocks). */
static int log_copier_spawn(int read_fd, pid_t *ret) {
        pid_t parent = getpid(), pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                char buf[4096];
                ssize_t n;

                (void) prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
                if (getppid() != parent)
                        _exit(EXIT_FAILURE);
                while ((n = read(read_fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                        if (n > 0 && loop_write(STDERR_FILENO, buf, (size_t) n) < 0)
                                break;
                _exit(EXIT_SUCCESS);
        }
        *ret = pid;
        return 0;
}

/* The copier ends when the service closes its end, just after it replied; one that does not
 * within a few seconds is not waited for. */
static void log_copier_finish(pid_t pid) {
        for (int i = 0; i < 50; i++) {
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        return;
                (void) poll(NULL, 0, 100);
        }
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, NULL, 0);
}

#define BUILD_CALL_TIMEOUT_USEC (60ULL * 60 * 1000000)

/* env build --system through the service: BuildEnvironment, which polkit authorizes. Returns 1
 * with *ret_status set when a service answered, 0 when none did (*ret_reason says why). */
static int env_build_service(const LocalSkill *skill, const char *path, const char *index_url, char **resolvers,
                             bool rebuild, bool json, int *ret_status, char **ret_reason) {
        _cleanup_(client_freep) Client *c = NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_close_pair_ int pipe_fds[2] = { -EBADF, -EBADF };
        _cleanup_strv_free_ char **missing = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *error = NULL;
        struct timespec t0, t1;
        const char *id;
        pid_t copier = 0;
        int cached, r;

        r = client_open(&c, ret_reason);
        if (r <= 0) {
                if (r < 0) {
                        log_error("%s: %s", path, strna(*ret_reason));
                        *ret_status = EXIT_FAILURE;
                        return 1;
                }
                return 0;
        }
        if (!c->can_pass_fds) {
                log_error("%s: %s cannot pass file descriptors over SSH; build on the host", path, c->where);
                *ret_status = EXIT_FAILURE;
                return 1;
        }
        r = local_skill_to_fd(skill, &fd, &error);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                *ret_status = EXIT_INVALID;
                return 1;
        }
        if (pipe2(pipe_fds, O_CLOEXEC) < 0 || log_copier_spawn(pipe_fds[0], &copier) < 0) {
                log_error_errno(errno, "Failed to set up the build log: %m");
                *ret_status = EXIT_FAILURE;
                return 1;
        }
        pipe_fds[0] = safe_close(pipe_fds[0]);

        client_polkit_agent_open(c);
        r = client_new_call(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, "BuildEnvironment", &m);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "h", fd);
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "{sv}", "log", "h", pipe_fds[1]);
        if (r >= 0 && index_url)
                r = sym_sd_bus_message_append(m, "{sv}", "index-url", "s", index_url);
        if (r >= 0 && rebuild)
                r = sym_sd_bus_message_append(m, "{sv}", "rebuild", "b", 1);
        if (r >= 0 && resolvers) {
                r = sym_sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sym_sd_bus_message_append(m, "s", "resolvers");
                if (r >= 0)
                        r = sym_sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sym_sd_bus_message_append_strv(m, resolvers);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sym_sd_bus_message_close_container(m);
        }
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        /* The message holds copies: ours would keep the log open after the service's end. */
        pipe_fds[1] = safe_close(pipe_fds[1]);
        fd = safe_close(fd);
        (void) clock_gettime(CLOCK_MONOTONIC, &t0);
        if (r >= 0)
                r = sym_sd_bus_call(c->bus, m, BUILD_CALL_TIMEOUT_USEC, &e, &reply);
        (void) clock_gettime(CLOCK_MONOTONIC, &t1);
        m = sym_sd_bus_message_unref(m);
        log_copier_finish(copier);
        if (r < 0) {
                r = client_log_error(path, &e, r);
                *ret_status = sym_sd_bus_error_has_name(&e, SKILLD_ERROR_INVALID_SKILL) ? EXIT_INVALID : EXIT_FAILURE;
                return 1;
        }
        r = sym_sd_bus_message_read(reply, "sb", &id, &cached);
        if (r >= 0)
                r = sym_sd_bus_message_read_strv(reply, &missing);
        if (r < 0) {
                log_error_errno(r, "Failed to parse the reply of BuildEnvironment: %m");
                *ret_status = EXIT_FAILURE;
                return 1;
        }
        if (isempty(id)) {
                if (json)
                        puts("{\"id\": null, \"cached\": false, \"missing\": []}");
                else
                        printf("%s needs no environment: it declares no third-party packages, and its code imports none.\n",
                               path);
                *ret_status = 0;
                return 1;
        }
        *ret_status = print_build(id, cached, missing, NULL, json,
                                  (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
        return 1;
}

static int verb_env_build(int argc, char *argv[]) {
        enum { ARG_INDEX_URL = 0x100, ARG_FIND_LINKS, ARG_RESOLVERS, ARG_REBUILD, ARG_JSON, ARG_LOCAL, ARG_SYSTEM };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h' },
                { "index-url", required_argument, NULL, ARG_INDEX_URL },
                { "find-links", required_argument, NULL, ARG_FIND_LINKS },
                { "resolvers", required_argument, NULL, ARG_RESOLVERS },
                { "rebuild",   no_argument,       NULL, ARG_REBUILD },
                { "json",      no_argument,       NULL, ARG_JSON },
                { "local",     no_argument,       NULL, ARG_LOCAL },
                { "system",    no_argument,       NULL, ARG_SYSTEM },
                {}
        };
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(env_spec_freep) EnvSpec *spec = NULL;
        _cleanup_(env_build_result_done) EnvBuildResult res = {};
        _cleanup_free_ char *error = NULL, *cache = NULL, *needs = NULL;
        EnvBuildOptions bo = ENV_BUILD_OPTIONS_INIT;
        _cleanup_strv_free_ char **resolver_names = NULL, **find_links = NULL;
        const char *index_url = NULL, *resolvers = NULL;
        bool rebuild = false, json = false, system = false;
        struct timespec t0, t1;
        char hash[65];
        EnvOptions o;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        return env_usage();
                case ARG_INDEX_URL:
                        index_url = optarg;
                        break;
                case ARG_FIND_LINKS: {
                        _cleanup_free_ char *n = NULL;

                        r = find_links_normalize(optarg, &n);
                        if (r == -ENOMEM)
                                return log_oom(), EXIT_INVALID;
                        if (r < 0 || !env_find_links_is_valid(n)) {
                                fprintf(stderr, "skillctl: --find-links %s: %s; give a folder of wheels, or an http:// "
                                        "or https:// URL of a page that links to them, without spaces, quotes or "
                                        "backslashes\n", optarg,
                                        r == -ENOTDIR ? "not a folder" : r < 0 ? strerror(-r) : "not usable");
                                return EXIT_USAGE;
                        }
                        if (strv_push(&find_links, TAKE_PTR(n)) < 0)
                                return log_oom(), EXIT_INVALID;
                        break;
                }
                case ARG_RESOLVERS:
                        resolvers = optarg;
                        break;
                case ARG_REBUILD:
                        rebuild = true;
                        break;
                case ARG_JSON:
                        json = true;
                        break;
                case ARG_LOCAL:
                        break;
                case ARG_SYSTEM:
                        system = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind + 1 != argc)
                return usage_error("env build", "exactly one SKILL is needed");

        if (system && find_links)
                return usage_error("--find-links", "is for --local builds; the service takes its wheelhouses from "
                                   "its policy (environments.pip-find-links)");
        r = env_options_for_host(&o, index_url, find_links);
        if (r < 0)
                return log_oom(), EXIT_INVALID;
        if (resolvers) {
                _cleanup_free_ char *copy = strdup(resolvers);
                char *save = NULL;

                if (!copy)
                        return log_oom(), EXIT_INVALID;
                o.n_resolvers = 0;
                for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                        EnvResolver e = env_resolver_from_string(t);

                        if (strv_extend(&resolver_names, t) < 0)
                                return log_oom(), EXIT_INVALID;

                        if (e < 0)
                                return usage_error("--resolvers", "a comma-separated list of debian, pip, npm");
                        for (size_t i = 0; i < o.n_resolvers; i++)
                                if (o.resolvers[i] == e)
                                        return usage_error("--resolvers", "a resolver is named twice");
                        o.resolvers[o.n_resolvers++] = e;
                }
        }

        r = local_skill_open(argv[optind], &skill, &error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s\n", error ?: strerror(-r));
                return EXIT_INVALID;
        }
        if (system) {
                /* The service builds, when there is one: polkit decides who may. Without one,
                 * root fills the cache itself, the way the service would. */
                _cleanup_free_ char *reason = NULL;
                int status;

                r = env_build_service(&skill, argv[optind], index_url, resolver_names, rebuild, json, &status,
                                      &reason);
                if (r > 0)
                        return status;
                if (geteuid() != 0) {
                        fprintf(stderr, "skillctl: env build --system: no skilld service answered (%s); only the "
                                "service, or root without one, builds the service's environments\n", strna(reason));
                        return EXIT_FAILURE;
                }
                fprintf(stderr, "skillctl: no skilld service answered (%s): building into the service's cache "
                        "directly, as root\n", strna(reason));
        }
        r = skill_source_hash(skill.source, hash, &error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: %s\n", argv[optind], error ?: strerror(-r));
                return EXIT_INVALID;
        }
        r = skill_env_spec(&skill, &o, &spec, NULL, &error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: %s\n", argv[optind], error ?: strerror(-r));
                return EXIT_INVALID;
        }
        r = env_cache_dir(system, &cache);
        if (r < 0) {
                fprintf(stderr, "skillctl: cannot find a cache directory (set XDG_CACHE_HOME or HOME)\n");
                return EXIT_INVALID;
        }
        if (!spec) {
                (void) env_binding_set(cache, hash, "-");
                if (json)
                        puts("{\"id\": null, \"cached\": false, \"missing\": []}");
                else
                        printf("%s needs no environment: it declares no third-party packages, and its code imports none.\n",
                               argv[optind]);
                return 0;
        }
        if (spec->package_json && !spec->npm_registry)
                (void) env_npm_registry(&spec->npm_registry);
        r = env_describe_needs(spec, &needs);
        if (r < 0)
                return log_oom(), EXIT_INVALID;
        fprintf(stderr, "skillctl: %s needs %s\n", argv[optind], needs);

        bo.cache_dir = cache;
        bo.skill_hash = hash;
        bo.rebuild = rebuild;
        bo.log_fd = STDERR_FILENO;
        bo.allow_missing = SANDBOX_LAYER_CGROUP;
        (void) clock_gettime(CLOCK_MONOTONIC, &t0);
        r = env_build(spec, &bo, &res, &error);
        if (r < 0) {
                fprintf(stderr, "skillctl: %s: building the environment failed: %s\n", argv[optind],
                        error ?: strerror(-r));
                return EXIT_INVALID;
        }
        (void) clock_gettime(CLOCK_MONOTONIC, &t1);
        /* The service's environments are the admin's business: one journal entry each. Best effort,
         * as the service's own entries: without libsystemd there is no journal to write to either. */
        if (system && !res.cached && dlopen_libsystemd("the journal entry", NULL) >= 0)
                (void) sym_sd_journal_send("MESSAGE=Environment %s built for skill %s (%s): "
                                           "%d packages resolved, %zu missing",
                                           res.id, skill.skill->name, hash,
                                           cJSON_GetArraySize(cJSON_GetObjectItem(res.manifest, "resolved")),
                                           strv_length(res.missing),
                                           "PRIORITY=%d",
                                           strv_length(res.missing) > 0 ? LOG_WARNING : LOG_INFO,
                                           "SKILLD_ENVIRONMENT=%s", res.id, "SKILLD_SKILL_HASH=%s", hash,
                                           "SYSLOG_IDENTIFIER=skillctl", NULL);
        if (!res.cached && host_policy()) {
                /* Within the policy's caps; the environment just built is the most recent. */
                _cleanup_strv_free_ char **removed = NULL;

                (void) env_gc(cache, MAX(host_policy()->env_max_count, 1U), host_policy()->env_max_bytes, &removed);
                STRV_FOREACH(id, removed)
                        fprintf(stderr, "skillctl: removed the least recently used environment %.12s\n", *id);
        }

        return print_build(res.id, res.cached, res.missing, res.manifest, json,
                           (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static int cache_for(bool system, char **ret) {
        int r = env_cache_dir(system, ret);

        if (r < 0)
                fprintf(stderr, "skillctl: cannot find the environment cache (set XDG_CACHE_HOME or HOME)\n");
        return r;
}

/* The common options of list, show, rm and gc. */
static int parse_common(int argc, char *argv[], bool *json, bool *system, uint64_t *max_count, uint64_t *max_size) {
        enum { ARG_JSON = 0x100, ARG_SYSTEM, ARG_LOCAL, ARG_MAX_COUNT, ARG_MAX_SIZE };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h' },
                { "json",      no_argument,       NULL, ARG_JSON },
                { "system",    no_argument,       NULL, ARG_SYSTEM },
                { "local",     no_argument,       NULL, ARG_LOCAL },
                { "max-count", required_argument, NULL, ARG_MAX_COUNT },
                { "max-size",  required_argument, NULL, ARG_MAX_SIZE },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        (void) env_usage();
                        return 0;
                case ARG_JSON:
                        *json = true;
                        break;
                case ARG_SYSTEM:
                        *system = true;
                        break;
                case ARG_LOCAL:
                        break;
                case ARG_MAX_COUNT:
                case ARG_MAX_SIZE:
                        if (!max_count)
                                return usage_error(argv[0], "--max-count and --max-size are options of gc"), -EINVAL;
                        r = c == ARG_MAX_COUNT ? safe_atou64(optarg, max_count) : parse_size(optarg, max_size);
                        if (r < 0)
                                return usage_error(c == ARG_MAX_COUNT ? "--max-count" : "--max-size",
                                                   "not a number (sizes take K, M, G)"), -EINVAL;
                        break;
                default:
                        return -EINVAL;
                }
        return 1;
}

static int verb_env_list(int argc, char *argv[]) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *cache = NULL;
        EnvInfo *a = NULL;
        size_t n = 0;
        bool json = false, system = false;
        int r;

        r = parse_common(argc, argv, &json, &system, NULL, NULL);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (cache_for(system, &cache) < 0)
                return EXIT_INVALID;
        r = env_list(cache, &a, &n);
        if (r < 0) {
                fprintf(stderr, "skillctl: cannot list %s: %s\n", cache, strerror(-r));
                return EXIT_INVALID;
        }
        if (json) {
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateArray();

                for (size_t i = 0; j && i < n; i++) {
                        cJSON *o = cJSON_CreateObject();

                        if (!o || !cJSON_AddItemToArray(j, o) || !cJSON_AddStringToObject(o, "id", a[i].id) ||
                            !cJSON_AddItemToObject(o, "size", json_u64(a[i].size)) ||
                            !cJSON_AddItemToObject(o, "last_used_usec", json_u64(a[i].last_used_usec)) ||
                            !cJSON_AddItemToObject(o, "created_usec", json_u64(a[i].created_usec)) ||
                            !cJSON_AddItemToObject(o, "missing", cJSON_Duplicate(cJSON_GetObjectItem(a[i].manifest, "missing"), true)))
                                r = -ENOMEM;
                }
                if (!j || r < 0 || json_print(j) < 0)
                        r = -ENOMEM;
        } else {
                t = table_new(5, "ID", "SIZE", "LAST USED", "PACKAGES", "MISSING");
                for (size_t i = 0; t && i < n; i++) {
                        char size[32], when[FORMAT_TIMESTAMP_MAX];

                        if (table_addf(t, "%.12s", a[i].id) < 0 ||
                            table_add(t, format_bytes(size, sizeof(size), a[i].size)) < 0 ||
                            table_add(t, format_timestamp_short(when, sizeof(when), a[i].last_used_usec)) < 0 ||
                            table_addf(t, "%d", cJSON_GetArraySize(cJSON_GetObjectItem(a[i].manifest, "resolved"))) < 0 ||
                            table_addf(t, "%d", cJSON_GetArraySize(cJSON_GetObjectItem(a[i].manifest, "missing"))) < 0)
                                r = -ENOMEM;
                }
                if (!t)
                        r = -ENOMEM;
                else if (r >= 0) {
                        if (n == 0)
                                printf("No environments in %s.\n", cache);
                        else
                                table_print(t, stdout);
                }
        }
        env_info_array_free(a, n);
        return r < 0 ? (log_oom(), EXIT_INVALID) : 0;
}

static int verb_env_show(int argc, char *argv[]) {
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(env_spec_freep) EnvSpec *spec = NULL;
        _cleanup_free_ char *cache = NULL, *error = NULL, *path = NULL, *text = NULL;
        _cleanup_(cJSON_Deletep) cJSON *m = NULL;
        bool json = false, system = false;
        char id[65];
        cJSON *x;
        int r;

        r = parse_common(argc, argv, &json, &system, NULL, NULL);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (optind + 1 != argc)
                return usage_error("env show", "exactly one ID or SKILL is needed");
        if (cache_for(system, &cache) < 0)
                return EXIT_INVALID;

        if (access(argv[optind], F_OK) >= 0) {
                EnvOptions o;

                /* A skill: the environment it would use. */
                r = local_skill_open(argv[optind], &skill, &error);
                if (r >= 0) {
                        (void) env_options_for_host(&o, NULL, NULL);
                        r = skill_env_spec(&skill, &o, &spec, NULL, &error);
                }
                if (r < 0) {
                        fprintf(stderr, "skillctl: %s\n", error ?: strerror(-r));
                        return EXIT_INVALID;
                }
                if (!spec) {
                        printf("%s needs no environment.\n", argv[optind]);
                        return 0;
                }
                if (env_find(cache, spec, id) <= 0)
                        memcpy(id, spec->id, sizeof(id));
        } else {
                r = env_resolve_id(cache, argv[optind], id, &error);
                if (r < 0) {
                        fprintf(stderr, "skillctl: %s\n", error);
                        return EXIT_INVALID;
                }
        }
        path = strdup_printf("%s/%s/manifest.json", cache, id);
        if (!path)
                return log_oom(), EXIT_INVALID;
        r = read_full_file_at(AT_FDCWD, path, 64U * 1024U * 1024U, true, &text, NULL);
        if (r == -ENOENT) {
                fprintf(stderr, "skillctl: environment %.12s is not built (skillctl env build %s)\n", id,
                        spec ? argv[optind] : "SKILL");
                return EXIT_INVALID;
        }
        if (r < 0 || !(m = cJSON_Parse(text))) {
                fprintf(stderr, "skillctl: cannot read %s: %s\n", path, r < 0 ? strerror(-r) : "not JSON");
                return EXIT_INVALID;
        }
        if (json)
                return json_print(m) < 0 ? EXIT_INVALID : 0;

        printf("Environment %s\n", id);
        x = cJSON_GetObjectItem(m, "digest");
        printf("  Digest: %s\n", cJSON_IsString(x) ? x->valuestring : "-");
        x = cJSON_GetObjectItem(m, "size");
        if (cJSON_IsNumber(x)) {
                char size[32];
                printf("  Size: %s\n", format_bytes(size, sizeof(size), (uint64_t) x->valuedouble));
        }
        printf("  Resolved:\n");
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(m, "resolved")) {
                cJSON *e = cJSON_GetObjectItem(x, "ecosystem"), *n = cJSON_GetObjectItem(x, "name"),
                      *s = cJSON_GetObjectItem(x, "source"), *p = cJSON_GetObjectItem(x, "package"),
                      *v = cJSON_GetObjectItem(x, "version");
                _cleanup_free_ char *en = cescape(cJSON_GetStringValue(n) ?: ""), *ep = cescape(cJSON_GetStringValue(p) ?: ""),
                                    *ev = cescape(cJSON_GetStringValue(v) ?: "");

                printf("    %s %s %s%s%s %s\n", strna(cJSON_GetStringValue(e)), strna(en), strna(cJSON_GetStringValue(s)),
                       p ? " " : "", p ? strna(ep) : "", strna(ev));
        }
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(m, "missing")) {
                _cleanup_free_ char *en = cescape(cJSON_GetStringValue(cJSON_GetObjectItem(x, "name")) ?: ""),
                                    *er = cescape(cJSON_GetStringValue(cJSON_GetObjectItem(x, "reason")) ?: "");

                printf("  Missing: %s %s: %s\n", strna(cJSON_GetStringValue(cJSON_GetObjectItem(x, "ecosystem"))),
                       strna(en), strna(er));
        }
        return 0;
}

static int verb_env_rm(int argc, char *argv[]) {
        _cleanup_free_ char *cache = NULL;
        bool json = false, system = false;
        int r, ret = 0;

        r = parse_common(argc, argv, &json, &system, NULL, NULL);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (optind >= argc)
                return usage_error("env rm", "at least one ID is needed");
        if (cache_for(system, &cache) < 0)
                return EXIT_INVALID;
        for (int i = optind; i < argc; i++) {
                _cleanup_free_ char *error = NULL;
                char id[65];

                r = env_resolve_id(cache, argv[i], id, &error);
                if (r >= 0) {
                        r = env_remove(cache, id);
                        if (r < 0)
                                error = strdup_printf("cannot remove %s: %s", id, strerror(-r));
                }
                if (r < 0) {
                        fprintf(stderr, "skillctl: %s\n", strna(error));
                        ret = EXIT_INVALID;
                }
        }
        return ret;
}

static int verb_env_gc(int argc, char *argv[]) {
        _cleanup_free_ char *cache = NULL;
        _cleanup_strv_free_ char **removed = NULL;
        bool json = false, system = false;
        uint64_t max_count = host_policy() ? host_policy()->env_max_count : 32,
                 max_size = host_policy() ? host_policy()->env_max_bytes : 8ULL << 30;
        int r;

        r = parse_common(argc, argv, &json, &system, &max_count, &max_size);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (optind != argc)
                return usage_error("env gc", "takes no arguments");
        if (cache_for(system, &cache) < 0)
                return EXIT_INVALID;
        r = env_gc(cache, max_count, max_size, &removed);
        if (r < 0) {
                fprintf(stderr, "skillctl: cannot collect %s: %s\n", cache, strerror(-r));
                return EXIT_INVALID;
        }
        if (json) {
                _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateArray();

                STRV_FOREACH(id, removed)
                        (void) cJSON_AddItemToArray(j, cJSON_CreateString(*id));
                return json_print(j) < 0 ? EXIT_INVALID : 0;
        }
        STRV_FOREACH(id, removed)
                printf("Removed %s\n", *id);
        if (!removed)
                printf("Nothing to remove.\n");
        return 0;
}

int verb_env(int argc, char *argv[]) {
        static const Verb verbs[] = {
                { "build", verb_env_build },
                { "list",  verb_env_list },
                { "show",  verb_env_show },
                { "rm",    verb_env_rm },
                { "gc",    verb_env_gc },
        };

        if (argc < 2)
                return usage_error("env", "missing command (try 'skillctl env --help')");
        if (streq(argv[1], "--help") || streq(argv[1], "-h"))
                return env_usage();
        return dispatch_verb(verbs, ELEMENTSOF(verbs), argc - 1, argv + 1, "env command");
}
