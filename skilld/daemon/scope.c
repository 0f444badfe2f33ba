/* See scope.h. */
#include <fcntl.h>
#include <signal.h>

#include "error.h"
#include "fileio.h"
#include "log.h"
#include "scope.h"

#define SYSTEMD_BUS_NAME "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
#define SYSTEMD_PRIVATE_ADDRESS "unix:path=/run/systemd/private"

struct ScopeJob {
        sd_bus *bus;
        sd_bus_slot *match_slot;
        sd_bus_slot *call_slot;
        char *unit;
        char *job_path;                 /* known once the call returned */
        char *early_result;             /* JobRemoved for our unit before the reply */
        scope_job_handler_t handler;
        void *userdata;
        bool done;
};

char *scope_unit_name(const char *run_id) {
        return strdup_printf(SCOPE_UNIT_PREFIX "%s.scope", run_id);
}

ScopeJob *scope_job_free(ScopeJob *j) {
        if (!j)
                return NULL;
        sd_bus_slot_unref(j->match_slot);
        sd_bus_slot_unref(j->call_slot);
        sd_bus_unref(j->bus);
        free(j->unit);
        free(j->job_path);
        free(j->early_result);
        free(j);
        return NULL;
}

int scope_append_properties(sd_bus_message *m, const ScopeParams *p) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;

        r = sd_bus_message_append(m, "(sv)(sv)", "Description", "s", p->description, "Slice", "s", p->slice);
        if (r < 0)
                return r;

        /* The processes to move in: the held sandbox child (and the service's pin, see
         * worker.c). They are in place once the job is done. */
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", "PIDs");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'v', "au");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "u");
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->n_pids; i++) {
                r = sd_bus_message_append(m, "u", (uint32_t) p->pids[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        /* Limits. Accounting is switched on explicitly: the outcome is read from the scope's
         * memory.events, pids.events, memory.peak and cpu.stat. */
        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)",
                                  "MemoryAccounting", "b", 1,
                                  "TasksAccounting", "b", 1,
                                  "CPUAccounting", "b", 1,
                                  "MemoryMax", "t", p->memory_max,
                                  "MemorySwapMax", "t", (uint64_t) 0,
                                  "TasksMax", "t", p->tasks_max,
                                  "CPUQuotaPerSecUSec", "t", p->cpu_quota_per_sec_usec);
        if (r < 0)
                return r;

        /* Lifetime. RuntimeMaxUSec is the backstop should the engine's own timer never fire;
         * stopping a scope then means SIGKILL at once, a run has nothing to shut down cleanly.
         * OOMPolicy=continue: an OOM kill is an outcome of the run for the engine to report, not
         * a reason for systemd to tear the scope (and its cgroup files) down under it. The scope
         * is garbage-collected as soon as it is empty, failed or not. */
        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)",
                                  "RuntimeMaxUSec", "t", p->runtime_max_usec,
                                  "KillSignal", "i", (int32_t) SIGKILL,
                                  "OOMPolicy", "s", "continue",
                                  "CollectMode", "s", "inactive-or-failed");
        if (r < 0)
                return r;

        /* A scope started ahead takes its run's sandbox later, by AttachProcessesToUnit, which
         * systemd grants only for a delegated unit. What is delegated is the scope's own cgroup
         * tree, root's: the run's processes (another uid, no capabilities, in a cgroup namespace
         * of their own) can write none of it. */
        if (p->delegate)
                r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1);
        if (r < 0)
                return r;

        return sd_bus_message_close_container(m);
}

static void job_deliver(ScopeJob *j, int r, const char *result, const char *message) {
        if (j->done)
                return;
        j->done = true;
        j->match_slot = sd_bus_slot_unref(j->match_slot);
        j->handler(j, r, result, message, j->userdata);
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ScopeJob *j = userdata;
        const char *path, *unit, *result;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "uoss", &id, &path, &unit, &result);
        if (r < 0)
                return 0;
        if (j->done || !streq(unit, j->unit))
                return 0;
        if (!j->job_path) {
                /* The signal overtook the reply (not on an ordered bus, but a direct connection to
                 * systemd makes no promise): keep it for when the job path is known. */
                free(j->early_result);
                j->early_result = strdup(result);
                if (!j->early_result)
                        job_deliver(j, -ENOMEM, NULL, "Out of memory");
                return 0;
        }
        if (streq(path, j->job_path))
                job_deliver(j, 0, result, NULL);
        return 0;
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        ScopeJob *j = userdata;
        const sd_bus_error *e;
        const char *path;
        int r;

        j->call_slot = sd_bus_slot_unref(j->call_slot);

        e = sd_bus_message_get_error(reply);
        if (e) {
                job_deliver(j, -sd_bus_error_get_errno(e) ?: -EIO, NULL, e->message ?: e->name);
                return 0;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0) {
                job_deliver(j, r, NULL, "Unexpected reply to StartTransientUnit");
                return 0;
        }
        j->job_path = strdup(path);
        if (!j->job_path) {
                job_deliver(j, -ENOMEM, NULL, "Out of memory");
                return 0;
        }
        if (j->early_result)
                job_deliver(j, 0, j->early_result, NULL);
        return 0;
}

int scope_start(sd_bus *bus, const ScopeParams *p, scope_job_handler_t handler, void *userdata,
                ScopeJob **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(scope_job_freep) ScopeJob *j = NULL;
        int r;

        if (!bus || !p || isempty(p->unit) || !handler || p->n_pids == 0)
                return -EINVAL;

        j = calloc(1, sizeof(ScopeJob));
        if (!j)
                return -ENOMEM;
        j->bus = sd_bus_ref(bus);
        j->handler = handler;
        j->userdata = userdata;
        j->unit = strdup(p->unit);
        if (!j->unit)
                return -ENOMEM;

        /* 1. The match before the call: on a bus, AddMatch is processed before systemd even sees
         *    our call, so the job's end cannot slip by. A direct connection to systemd gets every
         *    JobRemoved unasked, and its messages carry no sender to match. */
        r = sd_bus_match_signal_async(bus, &j->match_slot,
                                      sd_bus_is_bus_client(bus) > 0 ? SYSTEMD_BUS_NAME : NULL, SYSTEMD_PATH,
                                      SYSTEMD_MANAGER, "JobRemoved", on_job_removed, NULL, j);
        if (r < 0)
                return r;

        /* 2. StartTransientUnit(name, mode, properties, aux units). "fail": never replace a job
         *    of a unit by that name; there is none, the id is random. */
        r = sd_bus_message_new_method_call(bus, &m, SYSTEMD_BUS_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", p->unit, "fail");
        if (r < 0)
                return r;
        r = scope_append_properties(m, p);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;

        r = sd_bus_call_async(bus, &j->call_slot, m, on_start_reply, j, 0);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(j);
        return 0;
}

static int on_stop_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        char *unit = userdata;

        if (e && !sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit"))
                log_warning("Failed to stop the leftover scope %s: %s", unit, e->message ?: e->name);
        else if (!e)
                log_info("Stopped %s, left behind by an earlier instance of the service.", unit);
        free(unit);
        return 0;
}

static int on_list_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        sd_bus *bus = sd_bus_message_get_bus(reply);
        const sd_bus_error *e;
        const char *name;
        int r;

        e = sd_bus_message_get_error(reply);
        if (e) {
                log_warning("Failed to list leftover run scopes: %s", e->message ?: e->name);
                return 0;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        if (r < 0)
                goto fail;
        while ((r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, NULL, NULL, NULL, NULL,
                                        NULL, NULL, NULL)) > 0) {
                char *unit = strdup(name);

                if (!unit)
                        return log_oom(), 0;
                /* "replace": whatever was queued for it, it must go. The scope's processes are
                 * SIGKILLed (KillSignal of our scopes). Floating slot: the bus owns the call. */
                r = sd_bus_call_method_async(bus, NULL, SYSTEMD_BUS_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                             "StopUnit", on_stop_reply, unit, "ss", unit, "replace");
                if (r < 0) {
                        log_warning_errno(r, "Failed to stop the leftover scope %s: %m", unit);
                        free(unit);
                }
        }
        if (r < 0)
                goto fail;
        return 0;

fail:
        log_warning_errno(r, "Failed to parse the list of leftover run scopes: %m");
        return 0;
}

int scope_stop_matching(sd_bus *bus, const char *pattern) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SYSTEMD_BUS_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "ListUnitsByPatterns");
        if (r < 0)
                return r;
        /* Every state: a scope of ours is a leftover whatever it is doing. */
        r = sd_bus_message_append(m, "as", 0);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "as", 1, pattern);
        if (r < 0)
                return r;
        r = sd_bus_call_async(bus, NULL, m, on_list_reply, NULL, 0);
        return r < 0 ? r : 0;
}

static int connect_address(const char *address, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, !streq(address, SYSTEMD_PRIVATE_ADDRESS));
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int scope_connect_systemd(const char *address, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (address)
                return connect_address(address, ret);
        /* As root, systemd's own socket: one connection straight to PID 1 per run, without the
         * bus daemon relaying every message and without Hello and AddMatch round trips. */
        if (geteuid() == 0 && connect_address(SYSTEMD_PRIVATE_ADDRESS, ret) >= 0)
                return 0;
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int scope_open_cgroup(pid_t pid, const char *unit, int *ret_fd, char **error) {
        static const char *const mounts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *line, *end;
        int r;

        path = strdup_printf("/proc/%d/cgroup", (int) pid);
        if (!path)
                return -ENOMEM;
        r = read_full_file_at(AT_FDCWD, path, 64 * 1024, true, &text, NULL);
        if (r < 0)
                return error_setf(error, r, "Failed to read %s: %s", path, strerror(-r));
        line = startswith(text, "0::");
        if (!line && (line = strstr(text, "\n0::")))
                line += strlen("\n0::");
        if (!line)
                return error_setf(error, -EOPNOTSUPP, "The sandbox is in no cgroup v2 cgroup");
        end = line + strcspn(line, "\n");
        free(path);
        path = strndup(line, end - line);
        if (!path)
                return -ENOMEM;
        /* SECURITY: the limits are only where systemd said; anything else is a failure. */
        end = strrchr(path, '/');
        if (!end || !streq(end + 1, unit))
                return error_setf(error, -EIO, "The sandbox is in %s, not in its scope %s", path, unit);

        for (size_t i = 0; i < ELEMENTSOF(mounts); i++) {
                _cleanup_free_ char *dir = strjoin_path(mounts[i], path + 1);
                int fd;

                if (!dir)
                        return -ENOMEM;
                fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 0;
                }
        }
        return error_setf(error, -ENOENT, "The cgroup of %s is not found under /sys/fs/cgroup", unit);
}
