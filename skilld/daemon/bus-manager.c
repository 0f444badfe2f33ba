/* The Manager object, /io/skilld/Skilld1: running skills, listing runs, managing installed
 * skills. Each handler goes the same way (timedated's order):
 *
 *   1. parse and validate the arguments: cheap, deterministic, and before anything else, since a
 *      handler runs again after each asynchronous step (inspection, polkit);
 *   2. inspect the skill where there is one (pending.c): its name, hash and script are what the
 *      caller is authorized for;
 *   3. authorize with polkit;
 *   4. act, and reply.
 * Nothing changes before step 4. */
#include "bus-env.h"
#include "bus-errors.h"
#include "bus-session.h"
#include "engine.h"
#include "error.h"
#include "lint.h"
#include "list-options.h"
#include "log.h"
#include "manager.h"
#include "run-options.h"

static int handle_run(Manager *m, sd_bus_message *msg, bool installed, sd_bus_error *error) {
        _cleanup_(run_options_done) RunOptions c = {};
        _cleanup_(sd_bus_error_free) sd_bus_error auth_error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *why = NULL, *skill_dir = NULL, *command_line = NULL;
        _cleanup_(session_freep) Session *session = NULL;
        PolicyLimits limits;
        const Inspection *skill;
        bool raised = false;
        unsigned limits_from_skill;
        Pending *p;
        uid_t uid;
        int r;

        /* 1. Validate. */
        r = run_options_parse(msg, installed, &c, error);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        if (!m->policy)
                return sd_bus_error_set(error, SKILLD_ERROR_POLICY_INVALID, m->policy_error);
        r = policy_resolve_limits(m->policy, &c.asked, &limits, &raised, &why);
        if (r == -E2BIG)
                return sd_bus_error_set(error, SKILLD_ERROR_LIMIT_EXCEEDED, why);
        if (r < 0)
                return bus_invalid_args(error, "%s", why ?: strerror(-r));
        {
                SandboxLimits sl = manager_sandbox_limits(&limits);

                /* The engine has floors of its own (an init and a shell need a few tasks). */
                r = sandbox_limits_check(&sl, &why);
                if (r < 0)
                        return bus_invalid_args(error, "%s.", why ?: strerror(-r));
        }

        /* 2. Inspect: the first time round start it; it calls us again when done. */
        p = pending_find(m, msg);
        if (!p) {
                _cleanup_close_ int dir_fd = -EBADF;
                SkillOrigin origin = _SKILL_ORIGIN_INVALID;

                if (installed) {
                        r = skills_open(&m->skill_dirs, c.name, &dir_fd, &origin);
                        if (r == -ENOPKG)
                                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SKILL,
                                                         "No skill %s is installed.", c.name);
                        if (r < 0)
                                return bus_error_set_errnof(error, r, "Cannot open the skill %s: %s", c.name,
                                                            strerror(-r));
                }
                /* Only the service writes the folders of SKILL_ORIGIN_INSTALLED, and only by
                 * renaming whole folders into place: their inspection is kept (manager.h). An
                 * admin's or a package's folder may be edited in place, and is inspected each
                 * time. */
                r = pending_start(m, msg, installed ? PENDING_RUN_INSTALLED : PENDING_RUN, uid, c.skill_fd,
                                  TAKE_FD(dir_fd), c.name, c.script, c.command,
                                  origin == SKILL_ORIGIN_INSTALLED, &why);
                if (r < 0)
                        return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
                if (r == 0)
                        return 1;
                p = pending_find(m, msg);
                if (!p)
                        return -EIO;
        }
        if (!p->done)
                return 1;
        skill = &p->inspection;
        if (skill->error_errno != 0) {
                r = bus_error_set_inspection(error, skill->error_errno, skill->error);
                pending_free(p);
                return r;
        }
        if (installed && !streq(skill->name, c.name)) {
                r = sd_bus_error_setf(error, SKILLD_ERROR_INVALID_SKILL,
                                      "The installed skill %s holds a skill named %s.", c.name, skill->name);
                pending_free(p);
                return r;
        }

        /* The session, if one is named: the caller's, alive, for this skill. */
        if (c.session && !session) {
                r = manager_session_for_run(m, c.session, uid, skill->name, &session, error);
                if (r < 0) {
                        pending_free(p);
                        return r;
                }
        }

        /* 3. Authorize, with what the skill really is as details for admins' rules; a command
         * run has a "command" detail (the argv, quoted) instead of "script", so that rules can
         * tell the two forms apart. */
        if (c.command && !command_line) {
                command_line = run_command_line(c.args);
                if (!command_line)
                        return -ENOMEM;
        }
        {
                char *details[] = {
                        (char *) "skill", skill->name,
                        (char *) "skill_hash", skill->hash,
                        (char *) (c.command ? "command" : "script"), c.command ? command_line : skill->script,
                        (char *) "cwd", (char *) (c.cwd ?: "/work"),
                        NULL,
                };

                r = polkit_check_async(m->polkit, msg,
                                       installed ? "io.skilld.run" : "io.skilld.run-unlisted", details,
                                       UID_INVALID, &auth_error);
                if (r > 0 && raised)
                        r = polkit_check_async(m->polkit, msg, "io.skilld.raise-limits", details,
                                               UID_INVALID, &auth_error);
                if (r > 0 && c.network)
                        r = polkit_check_async(m->polkit, msg, "io.skilld.network", details,
                                               UID_INVALID, &auth_error);
        }
        if (r == 0)
                return 1;
        if (r < 0) {
                pending_free(p);
                return sd_bus_error_copy(error, &auth_error);
        }

        /* The admin policy has the last word on network, whoever asks: polkit says who may have
         * a network run, the policy which skills may get one at all. */
        if (c.network && !policy_network_allowed(m->policy, skill->name, skill->hash, installed)) {
                r = sd_bus_error_setf(error, SKILLD_ERROR_NETWORK_NOT_ALLOWED,
                                      "The admin policy does not allow the skill %s network access.",
                                      skill->name);
                pending_free(p);
                return r;
        }

        /* 4. Act. What the skill declares for itself can only lower what the caller and the
         * policy gave (skill-limits.h). */
        {
                SandboxLimits sl = manager_sandbox_limits(&limits);

                limits_from_skill = skill_declared_limits_apply(&skill->limits, &sl);
                limits.value[POLICY_LIMIT_TIMEOUT] = sl.timeout_usec;
                limits.value[POLICY_LIMIT_MEMORY] = sl.memory_max;
                limits.value[POLICY_LIMIT_CPU] = sl.cpu_percent;
        }
        skill_dir = installed ? strdup_printf("installed skill %s", skill->name) : strdup(p->dir);
        if (!skill_dir)
                return -ENOMEM;
        r = manager_submit_run(m, &(RunSubmission) {
                .owner = uid,
                .skill = skill,
                .installed = installed,
                .skill_dir_fd = p->dir_fd,
                .skill_dir = skill_dir,
                .work_dir = installed ? NULL : p->dir,
                .args = c.args,
                .input_json = c.input_json,
                .env = c.env,
                .file_names = c.file_names,
                .file_fds = c.file_fds,
                .file_folders = c.file_folders,
                .n_files = c.n_files,
                .stdout_fd = c.stdout_fd,
                .stderr_fd = c.stderr_fd,
                .limits = &limits,
                .limits_from_skill = limits_from_skill,
                .command = c.command,
                .cwd = c.cwd,
                .session = session,
                .network = c.network,
                .call = msg,
        }, &why);
        if (r < 0) {
                pending_free(p);
                return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
        }
        /* The run deletes the unpacked tree from now on, and answers the call once its record is
         * durable. */
        free(p->dir);
        p->dir = NULL;
        pending_free(p);
        return 1;
}

static int method_run(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return handle_run(userdata, msg, false, error);
}

static int method_run_installed(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return handle_run(userdata, msg, true, error);
}

static int append_runs(sd_bus_message *reply, StoreRun * const *runs, size_t n) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sossussitt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                const StoreRun *run = runs[i];

                r = bus_run_object_path(run->id, &path);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(sossussitt)", run->id, path, run->skill_name, run->script,
                                          (uint32_t) run->owner, run_state_to_string(run->state),
                                          run->state == RUN_FINISHED ? strempty(run->status) : "",
                                          (int32_t) (run->state == RUN_FINISHED ? run->exit_code : -1),
                                          run->created_usec, run->finished_usec);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int reply_runs(Manager *m, sd_bus_message *msg, uid_t owner) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ StoreRun **runs = NULL;
        size_t n = 0;
        int r;

        r = store_list_runs(m->store, owner, &runs, &n);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = append_runs(reply, runs, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_list_runs(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        uid_t uid;
        int r;

        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        return reply_runs(userdata, msg, uid == 0 ? UID_INVALID : uid);
}

static int method_list_all_runs(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", NULL, UID_INVALID, error);
        if (r <= 0)
                return r == 0 ? 1 : r;
        return reply_runs(m, msg, UID_INVALID);
}

/* A page of the listing: a store of 100 000 runs sent whole is 20 MB through dbus-daemon. */
static int method_list_runs_filtered(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ StoreRun **runs = NULL;
        StoreRunFilter filter = STORE_RUN_FILTER_ANY;
        char next[STORE_CURSOR_MAX] = "";
        Manager *m = userdata;
        ListOptions o;
        size_t n = 0, older = 0;
        uid_t uid;
        int r;

        /* 1. Validate. */
        r = list_options_parse(msg, &o, error);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;

        /* 2. Authorize: everyone's runs exactly as ListAllRuns(); root sees them all as in
         * ListRuns(). */
        if (o.all) {
                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", NULL, UID_INVALID, error);
                if (r <= 0)
                        return r == 0 ? 1 : r;
        }

        /* 3. Act. */
        filter.owner = o.all || uid == 0 ? UID_INVALID : uid;
        filter.skill_name = o.skill;
        filter.state = o.state;
        filter.id_prefix = o.prefix;
        r = store_list_page(m->store, &filter, o.has_before ? &o.before : NULL, o.limit > 0 ? o.limit : SIZE_MAX,
                            &runs, &n, &older);
        if (r < 0)
                return r;
        if (older > 0 && n > 0)
                store_cursor_format(runs[0], next);
        /* The count and the cursor first: a client can ask for the next page before it parses
         * this one. */
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "ts", (uint64_t) older, next);
        if (r < 0)
                return r;
        r = append_runs(reply, runs, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_run(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error auth_error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *path = NULL;
        Manager *m = userdata;
        StoreRun *record;
        const char *id;
        uid_t uid;
        int r;

        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        if (!store_run_id_is_valid(id))
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_RUN,
                                         "No run has that id (run ids are 32 lowercase hex digits).");
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;

        record = store_get_run(m->store, id);
        if (!(record && (uid == 0 || record->owner == uid))) {
                /* SECURITY: others' runs exist only for admins; polkit is asked whether the run
                 * exists or not, so the answer says nothing to anyone else. */
                char *details[] = { (char *) "run", (char *) id, NULL };

                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", details, UID_INVALID,
                                       &auth_error);
                if (r == 0)
                        return 1;
                if (r < 0 || !record)
                        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_RUN, "No run %s.", id);
        }
        r = bus_run_object_path(id, &path);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", path);
}

static int method_list_skills(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        SkillInfo *l = NULL;
        size_t n = 0;
        int r;

        r = skills_list(&m->skill_dirs, &l, &n);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to list the installed skills: %s",
                                            strerror(-r));
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(reply, "(ssss)", l[i].name, l[i].description, l[i].hash,
                                          skill_origin_to_string(l[i].origin));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        skill_infos_free(l, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_install_skill(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error auth_error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *why = NULL, *name = NULL, *hash = NULL;
        Manager *m = userdata;
        Pending *p;
        int fd, replace;
        uid_t uid;
        int r;

        /* 1. Validate. */
        r = sd_bus_message_read(msg, "hb", &fd, &replace);
        if (r < 0)
                return r;
        r = bus_check_archive_fd(fd, error);
        if (r < 0)
                return r;
        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;

        /* 2. Unpack and check it where it would be installed. */
        p = pending_find(m, msg);
        if (!p) {
                r = pending_start(m, msg, PENDING_INSTALL, uid, fd, -EBADF, NULL, NULL, false, false, &why);
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

        /* 3. Authorize. */
        {
                char *details[] = {
                        (char *) "skill", p->inspection.name,
                        (char *) "skill_hash", p->inspection.hash,
                        NULL,
                };

                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-skills", details, UID_INVALID,
                                       &auth_error);
        }
        if (r == 0)
                return 1;
        if (r < 0) {
                pending_free(p);
                return sd_bus_error_copy(error, &auth_error);
        }

        /* 4. Move it into place. */
        name = strdup(p->inspection.name);
        hash = strdup(p->inspection.hash);
        if (!name || !hash) {
                pending_free(p);
                return -ENOMEM;
        }
        r = skills_install(&m->skill_dirs, p->dir, name, replace, &why);
        pending_free(p);
        if (r == -EEXIST)
                return sd_bus_error_set(error, SKILLD_ERROR_SKILL_EXISTS, why);
        if (r < 0)
                return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
        log_info("Skill %s (%s) installed by uid %u.", name, hash, (unsigned) uid);
        return sd_bus_reply_method_return(msg, "ss", name, hash);
}

static int method_remove_skill(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        Manager *m = userdata;
        const char *name;
        SkillOrigin origin;
        int fd = -EBADF, r;

        /* 1. Validate: there must be an installed skill of that name to remove. */
        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        if (!skill_name_is_valid(name))
                return bus_invalid_args(error, "'%s' is not a valid skill name.",
                                        bus_text_ok(name, 64) ? name : "?");
        r = skills_open(&m->skill_dirs, name, &fd, &origin);
        safe_close(fd);
        if (r == -ENOPKG)
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SKILL, "No skill %s is installed.",
                                         name);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Cannot open the skill %s: %s", name, strerror(-r));
        if (origin != SKILL_ORIGIN_INSTALLED)
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SKILL,
                                         "The skill %s is part of the host (%s), not installed through "
                                         "skilld; remove it there.", name, m->skill_dirs.path[origin]);

        /* 2. Authorize. */
        {
                char *details[] = { (char *) "skill", (char *) name, NULL };

                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-skills", details, UID_INVALID,
                                       error);
                if (r <= 0)
                        return r == 0 ? 1 : r;
        }

        /* 3. Act. Runs of it keep their tree open; it is deleted once none is active. */
        r = skills_remove(&m->skill_dirs, name, &why);
        if (r == -ENOPKG || r == -EROFS)
                return sd_bus_error_set(error, SKILLD_ERROR_NO_SUCH_SKILL, why);
        if (r < 0)
                return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
        if (!m->runs && !m->recording)
                skills_purge(&m->skill_dirs, false);
        log_info("Skill %s removed.", name);
        return sd_bus_reply_method_return(msg, NULL);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PROJECT_VERSION);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),

        SD_BUS_METHOD_WITH_ARGS("Run",
                                SD_BUS_ARGS("h", skill, "s", script, "as", args, "s", input_json,
                                            "a{sv}", options),
                                SD_BUS_RESULT("s", id, "o", run),
                                method_run,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RunInstalled",
                                SD_BUS_ARGS("s", name, "s", script, "as", args, "s", input_json,
                                            "a{sv}", options),
                                SD_BUS_RESULT("s", id, "o", run),
                                method_run_installed,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListRuns",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(sossussitt)", runs),
                                method_list_runs,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListAllRuns",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(sossussitt)", runs),
                                method_list_all_runs,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListRunsFiltered",
                                SD_BUS_ARGS("a{sv}", options),
                                SD_BUS_RESULT("t", older, "s", next, "a(sossussitt)", runs),
                                method_list_runs_filtered,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetRun",
                                SD_BUS_ARGS("s", id),
                                SD_BUS_RESULT("o", run),
                                method_get_run,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSkills",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(ssss)", skills),
                                method_list_skills,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("InstallSkill",
                                SD_BUS_ARGS("h", skill, "b", replace),
                                SD_BUS_RESULT("s", name, "s", hash),
                                method_install_skill,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveSkill",
                                SD_BUS_ARGS("s", name),
                                SD_BUS_NO_RESULT,
                                method_remove_skill,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_METHOD_WITH_ARGS("BuildEnvironment",
                                SD_BUS_ARGS("h", skill, "a{sv}", options),
                                SD_BUS_RESULT("s", id, "b", cached, "as", missing),
                                method_build_environment,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("RunStarted",
                                SD_BUS_ARGS("s", id, "o", run),
                                0),
        SD_BUS_SIGNAL_WITH_ARGS("RunFinished",
                                SD_BUS_ARGS("s", id, "o", run, "s", status, "i", exit_code),
                                0),

        SD_BUS_VTABLE_END
};

int manager_add_objects(Manager *m, sd_bus *bus) {
        int r;

        r = sd_bus_add_object_vtable(bus, NULL, SKILLD_OBJECT_PATH, SKILLD_MANAGER_INTERFACE, manager_vtable,
                                     m);
        if (r < 0)
                return r;
        r = bus_run_add_objects(m, bus);
        if (r < 0)
                return r;
        return bus_session_add_objects(m, bus);
}
