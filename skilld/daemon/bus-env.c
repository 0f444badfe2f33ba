/* BuildEnvironment(): building a skill's environment (skilld/env) into the service's cache, so
 * that runs through the service, offline, find it. The one call of the API that fills a cache
 * other users' runs mount, so it is an admin's decision (io.skilld.build-environment).
 *
 * The call goes the way Run() does: validate the options, inspect the skill (pending.c unpacks
 * the archive into the work directory), authorize with the skill's name and hash as details, then
 * act. Acting is a forked build process, like a run's worker: the sandbox engine must be called
 * from a single-threaded process that may block for minutes, and the service must go on serving.
 * The build takes a uid of the run range for its sandbox (the env module hands the tree back to
 * root before it is renamed into place), writes its live log to the caller's fd and its outcome
 * as JSON into a memfd; the service reaps it, replies, and writes the journal entry. Two builds
 * of one id build once: the env module's lock makes the second wait and find the first's tree. */
#include <inttypes.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-journal.h>

#include "bus-env.h"
#include "bus-errors.h"
#include "env.h"
#include "error.h"
#include "fileio.h"
#include "journal.h"
#include "log.h"
#include "manager.h"
#include "run-options.h"
#include "scope.h"
#include "worker.h"

/* The backstop of a build's scope: the engine's own timeout of the sandbox stage (30 minutes)
 * plus the downloads before it. */
#define BUILD_SCOPE_MAX_USEC (2ULL * 3600 * 1000000)

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* Options of the call, validated. */
typedef struct BuildOptions {
        char **resolvers;               /* NULL: the policy's order */
        const char *index_url;          /* NULL: the policy's */
        bool rebuild;
        int log_fd;                     /* the caller's, owned by the message */
} BuildOptions;

typedef struct Build {
        Manager *manager;               /* set once the build is going and in manager->builds */
        struct Build *next;
        sd_bus_message *call;           /* answered when the build process is reaped */
        uid_t caller;
        char *skill_name;
        char *skill_hash;
        char *dir;                      /* the unpacked skill, deleted afterwards */
        pid_t pid;
        sd_event_source *child_source;
        int result_fd;
        int uid_lock_fd;
} Build;

static Build *build_free(Build *b) {
        if (!b)
                return NULL;
        sd_event_source_disable_unref(b->child_source);
        if (b->pid > 0) {
                (void) kill(b->pid, SIGKILL);
                (void) waitpid(b->pid, NULL, 0);
        }
        if (b->dir)
                (void) rm_rf_at(AT_FDCWD, b->dir);
        if (b->manager) {
                b->manager->n_builds--;
                for (Build **i = &b->manager->builds; *i; i = &(*i)->next)
                        if (*i == b) {
                                *i = b->next;
                                break;
                        }
        }
        sd_bus_message_unref(b->call);
        safe_close(b->result_fd);
        safe_close(b->uid_lock_fd);
        free(b->skill_name);
        free(b->skill_hash);
        free(b->dir);
        free(b);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Build *, build_free);

static int parse_build_options(sd_bus_message *msg, BuildOptions *o, sd_bus_error *error) {
        const char *key;
        int r;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                r = sd_bus_message_read(msg, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "resolvers")) {
                        if (o->resolvers)
                                return bus_invalid_args(error, "The option resolvers is given twice.");
                        r = sd_bus_message_enter_container(msg, 'v', "as");
                        if (r < 0)
                                return bus_invalid_args(error, "The option resolvers takes an array of strings.");
                        r = sd_bus_message_read_strv(msg, &o->resolvers);
                        if (r < 0)
                                return r;
                        if (strv_length(o->resolvers) == 0)
                                return bus_invalid_args(error, "The option resolvers names no resolver.");
                        for (size_t i = 0; o->resolvers[i]; i++) {
                                if (env_resolver_from_string(o->resolvers[i]) < 0)
                                        return bus_invalid_args(error, "Unknown resolver '%s'; known are debian, pip and npm.",
                                                                bus_text_ok(o->resolvers[i], 64) ? o->resolvers[i] : "?");
                                for (size_t j = 0; j < i; j++)
                                        if (streq(o->resolvers[i], o->resolvers[j]))
                                                return bus_invalid_args(error, "The resolver %s is named twice.",
                                                                        o->resolvers[i]);
                        }
                } else if (streq(key, "index-url")) {
                        r = sd_bus_message_enter_container(msg, 'v', "s");
                        if (r < 0)
                                return bus_invalid_args(error, "The option index-url takes a string.");
                        r = sd_bus_message_read(msg, "s", &o->index_url);
                        if (r < 0)
                                return r;
                        if (!bus_text_ok(o->index_url, 4096) ||
                            !(startswith(o->index_url, "http://") || startswith(o->index_url, "https://") ||
                              startswith(o->index_url, "file:///")))
                                return bus_invalid_args(error, "The option index-url must be an http://, https:// or "
                                                        "file:/// URL.");
                } else if (streq(key, "rebuild")) {
                        int b;

                        r = sd_bus_message_enter_container(msg, 'v', "b");
                        if (r < 0)
                                return bus_invalid_args(error, "The option rebuild takes a boolean.");
                        r = sd_bus_message_read(msg, "b", &b);
                        if (r < 0)
                                return r;
                        o->rebuild = b;
                } else if (streq(key, "log")) {
                        int fd;

                        r = sd_bus_message_enter_container(msg, 'v', "h");
                        if (r < 0)
                                return bus_invalid_args(error, "The option log takes a file descriptor.");
                        r = sd_bus_message_read(msg, "h", &fd);
                        if (r >= 0)
                                r = bus_check_output_fd(fd, "log", error);
                        if (r < 0)
                                return r;
                        o->log_fd = fd;
                } else
                        return bus_invalid_args(error, "Unknown option '%s'; known are resolvers, index-url, "
                                                "rebuild and log.", bus_text_ok(key, 64) ? key : "?");
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(msg);
}

/* ---- The build process ---- */

static int build_result_json(cJSON *j, const char *error, int error_errno, int fd) {
        _cleanup_free_ char *text = NULL;

        if (error && (!cJSON_AddStringToObject(j, "error", error) ||
                      !cJSON_AddNumberToObject(j, "errno", error_errno)))
                return -ENOMEM;
        text = cJSON_PrintUnformatted(j);
        if (!text)
                return -ENOMEM;
        return loop_write(fd, text, strlen(text));
}

static int build_execute(const Manager *m, const BuildOptions *bo, const char *dir, int dir_fd,
                         const char *skill_hash, const char *cache, uid_t uid, int log_fd, int result_fd) {
        _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateObject();
        _cleanup_(skill_deps_freep) SkillDeps *deps = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_(env_spec_freep) EnvSpec *spec = NULL;
        _cleanup_(env_build_result_done) EnvBuildResult res = {};
        _cleanup_free_ char *error = NULL;
        SkillDepsOptions dopts = SKILL_DEPS_OPTIONS_INIT;
        EnvBuildOptions o = ENV_BUILD_OPTIONS_INIT;
        EnvOptions eo = ENV_OPTIONS_INIT;
        const Policy *p = m->policy;
        ScopeConfig scope = {
                .systemd_address = m->systemd_address,
                .description = "skilld environment build sandbox",
        };
        /* Each sandbox of the build in a scope of its own with its limits, as runs are; without
         * systemd (tests) the engine's own limits, or rlimits. */
        const SandboxBackendOps *backend = m->use_scopes ? &worker_scope_backend : NULL;
        unsigned allow_missing = p->isolation_may_be_missing | (m->use_scopes ? 0 : SANDBOX_LAYER_CGROUP);
        cJSON *missing;
        int r;

        if (!j)
                return -ENOMEM;
        if (bo->resolvers) {
                eo.n_resolvers = 0;
                STRV_FOREACH(s, bo->resolvers)
                        eo.resolvers[eo.n_resolvers++] = env_resolver_from_string(*s);
        } else {
                int order[3];

                eo.n_resolvers = policy_env_resolvers(p, order);
                for (size_t i = 0; i < eo.n_resolvers; i++)
                        eo.resolvers[i] = (EnvResolver) order[i];
        }
        eo.pip_index_url = bo->index_url ?: p->env_pip_index_url;
        eo.pip_find_links = p->env_pip_find_links;

        r = skill_load_at(dir_fd, &skill, &error);
        if (r < 0)
                return build_result_json(j, error ?: strerror(-r), -r, result_fd);
        /* What the skill needs: its declarations, and what its code imports (the scan runs in the
         * sandbox, as the build's uid, without network). */
        dopts.infer = true;
        dopts.skill_dir = dir;
        dopts.uid = uid;
        dopts.allow_missing = allow_missing;
        dopts.backend = backend;
        dopts.backend_userdata = &scope;
        r = skill_deps_discover(dir_fd, skill, &dopts, &deps, &error);
        if (r < 0)
                return build_result_json(j, error ?: strerror(-r), -r, result_fd);
        r = env_spec_new(deps, dir_fd, &eo, &spec, &error);
        if (r < 0)
                return build_result_json(j, error ?: strerror(-r), -r, result_fd);
        if (!spec) {
                (void) env_binding_set(cache, skill_hash, "-");
                if (!cJSON_AddNullToObject(j, "id") || !cJSON_AddBoolToObject(j, "cached", false) ||
                    !cJSON_AddItemToObject(j, "missing", cJSON_CreateArray()))
                        return -ENOMEM;
                return build_result_json(j, NULL, 0, result_fd);
        }
        if (spec->package_json && !spec->npm_registry)
                (void) env_npm_registry(&spec->npm_registry);

        o.cache_dir = cache;
        o.skill_hash = skill_hash;
        o.rebuild = bo->rebuild;
        o.log_fd = log_fd;
        o.uid = uid;
        o.allow_missing = allow_missing;
        o.backend = backend;
        o.backend_userdata = &scope;
        r = env_build(spec, &o, &res, &error);
        if (r < 0)
                return build_result_json(j, error ?: strerror(-r), -r, result_fd);
        missing = cJSON_CreateArray();
        if (!missing || !cJSON_AddItemToObject(j, "missing", missing) || !cJSON_AddStringToObject(j, "id", res.id) ||
            !cJSON_AddBoolToObject(j, "cached", res.cached) ||
            !cJSON_AddNumberToObject(j, "resolved", cJSON_GetArraySize(cJSON_GetObjectItem(res.manifest, "resolved"))))
                return -ENOMEM;
        STRV_FOREACH(x, res.missing)
                if (!cJSON_AddItemToArray(missing, cJSON_CreateString(*x)))
                        return -ENOMEM;
        return build_result_json(j, NULL, 0, result_fd);
}

_noreturn_ static void build_main(const Manager *m, const BuildOptions *bo, const char *dir, int dir_fd,
                                  const char *skill_hash, const char *cache, uid_t uid, int result_fd) {
        int keep[] = { dir_fd, bo->log_fd, result_fd };

        /* As a run's worker: only our fds, a clean signal slate. */
        worker_reset_process(keep, ELEMENTSOF(keep), "skilld-envbuild");
        /* The service's umask keeps its own files private; an environment is for every run's uid
         * to read, and the build's sandbox uid must reach its context. */
        (void) umask(0022);
        if (m->use_scopes) {
                /* Out of the service's cgroup, whose IPAddressDeny= would cut the downloads off,
                 * into a scope of its own (the name the service's crash recovery sweeps). */
                _cleanup_free_ char *error = NULL;
                char unit[128];
                uint64_t rnd = 0;
                int r;

                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) < 0)
                        rnd = 0; /* the pid alone is unique enough while we live */
                (void) snprintf(unit, sizeof(unit), SCOPE_UNIT_PREFIX "envbuild-%016" PRIx64 ".scope", rnd ^ getpid());
                r = worker_enter_scope(m->systemd_address, unit, "skilld environment build", BUILD_SCOPE_MAX_USEC,
                                       &error);
                if (r < 0) {
                        _cleanup_(cJSON_Deletep) cJSON *j = cJSON_CreateObject();

                        if (j)
                                (void) build_result_json(j, error ?: strerror(-r), -r, result_fd);
                        _exit(EXIT_FAILURE);
                }
        }
        _exit(build_execute(m, bo, dir, dir_fd, skill_hash, cache, uid, bo->log_fd, result_fd) < 0
                      ? EXIT_FAILURE
                      : EXIT_SUCCESS);
}

/* ---- The end of a build ---- */

static void journal_build(const Build *b, const char *id, bool cached, int n_resolved, int n_missing,
                          const char *error) {
        _cleanup_free_ char *name = cescape(strempty(b->skill_name)), *why = error ? cescape(error) : NULL;
        int r;

        if (!name || (error && !why))
                return;
        if (error)
                r = sd_journal_send("MESSAGE=Environment build for skill %s (%s) by uid %u failed: %s",
                                    name, b->skill_hash, (unsigned) b->caller, why,
                                    "MESSAGE_ID=" SKILLD_MESSAGE_ENV_BUILT, "PRIORITY=%i", LOG_WARNING,
                                    "SKILL_NAME=%s", name, "SKILL_HASH=%s", b->skill_hash,
                                    "SKILLD_CALLER_UID=%u", (unsigned) b->caller, "SKILLD_STATUS=failed", NULL);
        else
                r = sd_journal_send("MESSAGE=Environment %s %s for skill %s (%s) by uid %u: %i packages resolved, "
                                    "%i missing.",
                                    strempty(id), cached ? "was built already" : "built", name, b->skill_hash,
                                    (unsigned) b->caller, n_resolved, n_missing,
                                    "MESSAGE_ID=" SKILLD_MESSAGE_ENV_BUILT,
                                    "PRIORITY=%i", n_missing > 0 ? LOG_WARNING : LOG_INFO,
                                    "SKILL_NAME=%s", name, "SKILL_HASH=%s", b->skill_hash,
                                    "SKILLD_CALLER_UID=%u", (unsigned) b->caller,
                                    "SKILLD_ENVIRONMENT=%s", strempty(id),
                                    "SKILLD_STATUS=%s", cached ? "cached" : n_missing > 0 ? "partial" : "built",
                                    NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to write the journal entry of a build: %m");
}

static int build_reply(Build *b, int code, int status) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *text = NULL;
        const cJSON *id, *missing, *e;
        int r = -ENODATA;

        if (lseek(b->result_fd, 0, SEEK_SET) >= 0)
                r = read_full_fd(b->result_fd, 1024U * 1024U, &text, NULL);
        if (r < 0 || isempty(text) || !(j = cJSON_Parse(text))) {
                _cleanup_free_ char *why = code == CLD_EXITED
                        ? strdup_printf("the build process failed (exit status %i)", status)
                        : strdup_printf("the build process was killed by signal %s", strna(sigabbrev_np(status)));

                journal_build(b, NULL, false, 0, 0, why ?: "the build process failed");
                return sd_bus_reply_method_errorf(b->call, SKILLD_ERROR_ENVIRONMENT_BUILD_FAILED, "%s.",
                                                  strna(why));
        }
        e = cJSON_GetObjectItemCaseSensitive(j, "error");
        if (cJSON_IsString(e)) {
                const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "errno");
                int err = cJSON_IsNumber(n) ? (int) n->valuedouble : EIO;

                journal_build(b, NULL, false, 0, 0, e->valuestring);
                /* The skill's own faults are InvalidSkill, as for Run(); a full disk NoSpace;
                 * anything else is the build's. */
                if (err == EBADMSG || err == EOPNOTSUPP || err == EEXIST || err == EFBIG || err == E2BIG || err == ELOOP)
                        (void) sd_bus_error_set(&error, SKILLD_ERROR_INVALID_SKILL, e->valuestring);
                else if (err == ENOSPC || err == EDQUOT)
                        (void) sd_bus_error_set(&error, SKILLD_ERROR_NO_SPACE, e->valuestring);
                else
                        (void) sd_bus_error_set(&error, SKILLD_ERROR_ENVIRONMENT_BUILD_FAILED, e->valuestring);
                return sd_bus_reply_method_error(b->call, &error);
        }

        id = cJSON_GetObjectItemCaseSensitive(j, "id");
        missing = cJSON_GetObjectItemCaseSensitive(j, "missing");
        journal_build(b, cJSON_GetStringValue(id), cJSON_IsTrue(cJSON_GetObjectItem(j, "cached")),
                      (int) cJSON_GetNumberValue(cJSON_GetObjectItem(j, "resolved")), cJSON_GetArraySize(missing),
                      NULL);
        r = sd_bus_message_new_method_return(b->call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "sb", strempty(cJSON_GetStringValue(id)),
                                          cJSON_IsTrue(cJSON_GetObjectItem(j, "cached")));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (const cJSON *m = missing ? missing->child : NULL; r >= 0 && m; m = m->next)
                if (cJSON_IsString(m))
                        r = sd_bus_message_append(reply, "s", m->valuestring);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int on_build_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        _cleanup_(build_freep) Build *b = userdata;
        Manager *m = b->manager;
        int r;

        b->pid = 0;
        r = build_reply(b, si->si_code, si->si_status);
        if (r < 0)
                log_warning_errno(r, "Failed to answer a BuildEnvironment call: %m");
        if (m->policy) {
                /* Within the policy's caps; the environment just built is the most recent. */
                _cleanup_strv_free_ char **removed = NULL;
                _cleanup_free_ char *cache = NULL;

                if (env_cache_dir(true, &cache) >= 0 &&
                    env_gc(cache, MAX(m->policy->env_max_count, 1U), m->policy->env_max_bytes, &removed) > 0)
                        log_info("Removed %zu least recently used environments.", strv_length(removed));
        }
        return 0;
}

/* ---- The call ---- */

static size_t builds_count(const Manager *m, uid_t caller) {
        size_t n = 0;

        for (const Build *b = m->builds; b; b = b->next)
                if (caller == UID_INVALID || b->caller == caller)
                        n++;
        return n;
}

/* The policy's caps on builds going at once (environments.builds.*): each holds a uid of the
 * runs' range, a scope, network and minutes of CPU, so one caller (an admin whose
 * auth_admin_keep is fresh, or a script a rule allows) may not start them without end. Checked
 * when the call comes, to refuse before unpacking anything, and again before the build starts,
 * since calls unpack and are authorized concurrently. */
static int builds_check_room(const Manager *m, uid_t caller, sd_bus_error *error) {
        const Policy *p = m->policy;
        size_t mine = builds_count(m, caller), all = builds_count(m, UID_INVALID);

        if (mine >= p->env_max_builds_per_user)
                return sd_bus_error_setf(error, SKILLD_ERROR_QUOTA_EXCEEDED,
                                         "You have %zu environment builds going, the most the policy allows "
                                         "(environments.builds.per-user: %" PRIu64 "); call again when %s "
                                         "finished, or ask the admin to raise environments.builds.per-user "
                                         "in skilld-policy(5).",
                                         mine, p->env_max_builds_per_user, mine == 1 ? "it has" : "one has");
        if (all >= p->env_max_builds)
                return sd_bus_error_setf(error, SKILLD_ERROR_QUOTA_EXCEEDED,
                                         "The service has %zu environment builds going, the most the policy "
                                         "allows (environments.builds.global: %" PRIu64 "); call again when "
                                         "one has finished, or ask the admin to raise "
                                         "environments.builds.global in skilld-policy(5).",
                                         all, p->env_max_builds);
        return 0;
}

static int build_start(Manager *m, sd_bus_message *msg, const BuildOptions *o, Pending *p, uid_t caller,
                       sd_bus_error *error) {
        _cleanup_(build_freep) Build *b = NULL;
        _cleanup_free_ char *cache = NULL, *why = NULL;
        uid_t uid = (uid_t) -1;
        pid_t parent = getpid(), pid;
        int r;

        r = env_cache_dir(true, &cache);
        if (r < 0)
                return bus_error_set_errnof(error, r, "The service has no environment cache: %s", strerror(-r));
        r = mkdir_p_at(AT_FDCWD, cache, 0755);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Cannot create %s: %s", cache, strerror(-r));

        b = calloc(1, sizeof(Build));
        if (!b)
                return -ENOMEM;
        b->result_fd = b->uid_lock_fd = -EBADF;
        b->caller = caller;
        b->skill_name = strdup(p->inspection.name);
        b->skill_hash = strdup(p->inspection.hash);
        if (!b->skill_name || !b->skill_hash)
                return -ENOMEM;
        /* A throwaway uid of the runs' range (uid-alloc.h), held until the build is reaped. */
        if (geteuid() == 0) {
                r = uid_allocator_take(m->uids, &uid, &b->uid_lock_fd, &why);
                if (r < 0)
                        return bus_error_set_errnof(error, r, "No uid is free for the build: %s", strna(why));
        }
        b->result_fd = memfd_create("skilld-env-build", MFD_CLOEXEC);
        if (b->result_fd < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                build_main(m, o, p->dir, p->dir_fd, b->skill_hash, cache, uid, b->result_fd);
        }
        b->pid = pid;
        r = sd_event_add_child(m->event, &b->child_source, pid, WEXITED, on_build_exit, b);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Cannot watch the build process: %s", strerror(-r));

        /* The build owns the unpacked tree from now on, and answers the call. */
        b->dir = TAKE_PTR(p->dir);
        b->call = sd_bus_message_ref(msg);
        b->manager = m;
        b->next = m->builds;
        m->builds = b;
        m->n_builds++;
        log_debug("Building the environment of %s (%s) for uid %u, as uid %u.", b->skill_name, b->skill_hash,
                  (unsigned) caller, (unsigned) uid);
        TAKE_PTR(b);
        return 0;
}

int method_build_environment(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error auth_error = SD_BUS_ERROR_NULL;
        _cleanup_strv_free_ char **resolvers = NULL;
        _cleanup_free_ char *why = NULL;
        BuildOptions o = { .log_fd = -EBADF };
        Manager *m = userdata;
        Pending *p;
        uid_t uid;
        int fd, r;

        /* 1. Validate. */
        r = sd_bus_message_read(msg, "h", &fd);
        if (r < 0)
                return r;
        r = parse_build_options(msg, &o, error);
        resolvers = o.resolvers;
        if (r < 0)
                return r;
        r = bus_check_archive_fd(fd, error);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        if (!m->policy)
                return sd_bus_error_set(error, SKILLD_ERROR_POLICY_INVALID, m->policy_error);

        /* 2. Unpack and check it, as for Run(): a command-form inspection, since a build runs
         * no entry point. */
        p = pending_find(m, msg);
        if (!p) {
                r = builds_check_room(m, uid, error);
                if (r < 0)
                        return r;
                r = pending_start(m, msg, PENDING_RUN, uid, fd, -EBADF, NULL, NULL, true, false, &why);
                if (r < 0)
                        return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
                return 1;
        }
        if (!p->done)
                return 1;
        if (p->inspection.error_errno != 0) {
                r = bus_error_set_inspection(error, p->inspection.error_errno, p->inspection.error);
                pending_free(p);
                return r;
        }

        /* 3. Authorize: the cache it fills is every user's. */
        {
                char *details[] = {
                        (char *) "skill", p->inspection.name,
                        (char *) "skill_hash", p->inspection.hash,
                        (char *) "index_url", (char *) strempty(o.index_url ?: m->policy->env_pip_index_url),
                        NULL,
                };

                r = polkit_check_async(m->polkit, msg, "io.skilld.build-environment", details, UID_INVALID,
                                       &auth_error);
        }
        if (r == 0)
                return 1;
        if (r < 0) {
                pending_free(p);
                return sd_bus_error_copy(error, &auth_error);
        }

        /* 4. Act: the reply comes when the build is done. */
        r = builds_check_room(m, uid, error);
        if (r >= 0)
                r = build_start(m, msg, &o, p, uid, error);
        pending_free(p);
        return r < 0 ? r : 1;
}
