/* See scope-spare.h. */
#include <sys/wait.h>
#include <systemd/sd-id128.h>

#include "log.h"
#include "sandbox-internal.h"
#include "scope-spare.h"
#include "scope.h"
#include "worker.h"

struct ScopeSpare {
        char id[SD_ID128_STRING_MAX];
        char *unit;
        SandboxLimits limits;
        uint64_t started_usec;          /* CLOCK_MONOTONIC of the request to systemd */
        pid_t pin;
        int pin_fd;
        int cgroup_fd;                  /* once in place */
        sd_bus *bus;                    /* to systemd, until its job is done */
        ScopeJob *job;
        sd_event_source *settle;        /* after the job: off the bus's dispatch */
        sd_event_source *expire;
        int job_r;
        bool ready, handed;
        scope_spare_gone_t gone;
        void *userdata;
};

static int on_pin_exit(sd_event_source *source, const siginfo_t *si, void *userdata) {
        /* The pin is ours to reap, whoever ended it (the worker closing its pipe, mostly): the
         * loop does once this returns. The source is floating, its one reference the loop's;
         * dropped here, the loop frees it after this dispatch. */
        sd_event_source_unref(source);
        return 0;
}

ScopeSpare *scope_spare_free(ScopeSpare *s) {
        if (!s)
                return NULL;
        /* Closing our end ends the pin (unless a worker holds the other), and the scope goes with
         * its last process. The pin's reaper is the event loop's own. */
        safe_close(s->pin_fd);
        safe_close(s->cgroup_fd);
        scope_job_free(s->job);
        sd_bus_flush_close_unref(s->bus);
        sd_event_source_disable_unref(s->settle);
        sd_event_source_disable_unref(s->expire);
        free(s->unit);
        free(s);
        return NULL;
}

static void spare_gone(ScopeSpare *s, const char *why) {
        log_debug("The spare scope %s goes: %s", s->unit, why);
        s->expire = sd_event_source_disable_unref(s->expire);
        s->gone(s, s->userdata);
}

static int on_settle(sd_event_source *source, void *userdata) {
        _cleanup_free_ char *error = NULL;
        ScopeSpare *s = userdata;
        int r;

        /* Whatever happened, systemd has nothing more to tell: the connection goes (it would be
         * the service's largest allocation while idle). */
        s->job = scope_job_free(s->job);
        s->bus = sd_bus_flush_close_unref(s->bus);
        if (s->job_r < 0) {
                spare_gone(s, strerror(-s->job_r));
                return 0;
        }
        r = scope_open_cgroup(s->pin, s->unit, &s->cgroup_fd, &error);
        if (r < 0) {
                spare_gone(s, error ?: strerror(-r));
                return 0;
        }
        s->ready = true;
        log_debug("The spare scope %s is in place.", s->unit);
        return 0;
}

static void on_job(ScopeJob *job, int r, const char *result, const char *message, void *userdata) {
        ScopeSpare *s = userdata;

        if (r >= 0 && !streq_ptr(result, "done"))
                r = -EIO;
        s->job_r = r;
        if (r < 0)
                log_debug("systemd did not start the spare scope %s: %s", s->unit,
                          message ?: strna(result));
        (void) sd_event_source_set_enabled(s->settle, SD_EVENT_ONESHOT);
}

static int on_expire(sd_event_source *source, uint64_t usec, void *userdata) {
        spare_gone(userdata, "not taken in time");
        return 0;
}

int scope_spare_start(sd_event *event, const char *systemd_address, const SandboxLimits *limits,
                      scope_spare_gone_t gone, void *userdata, ScopeSpare **ret) {
        _cleanup_(scope_spare_freep) ScopeSpare *s = NULL;
        _cleanup_free_ char *description = NULL;
        sd_id128_t rid;
        int r;

        s = calloc(1, sizeof(ScopeSpare));
        if (!s)
                return -ENOMEM;
        s->pin_fd = s->cgroup_fd = -EBADF;
        s->limits = *limits;
        s->gone = gone;
        s->userdata = userdata;

        r = sd_id128_randomize(&rid);
        if (r < 0)
                return r;
        sd_id128_to_string(rid, s->id);
        s->unit = scope_unit_name(s->id);
        description = strdup_printf("skilld run %s (its scope started ahead)", s->id);
        if (!s->unit || !description)
                return -ENOMEM;

        r = sd_event_add_defer(event, &s->settle, on_settle, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(s->settle, SD_EVENT_OFF);
        s->started_usec = now_usec(CLOCK_MONOTONIC);
        r = sd_event_add_time(event, &s->expire, CLOCK_MONOTONIC, s->started_usec + SCOPE_SPARE_MAX_AGE_USEC,
                              100 * 1000, on_expire, s);
        if (r < 0)
                return r;

        r = scope_connect_systemd(systemd_address, &s->bus);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(s->bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;

        r = worker_pin_spawn(&s->pin, &s->pin_fd);
        if (r < 0)
                return r;
        /* Floating: the loop reaps the pin whenever it ends, after the spare is long gone. */
        r = sd_event_add_child(event, NULL, s->pin, WEXITED, on_pin_exit, NULL);
        if (r < 0) {
                /* Then now: it ends as soon as its pipe is closed. */
                s->pin_fd = safe_close(s->pin_fd);
                (void) waitpid(s->pin, NULL, 0);
                return r;
        }

        ScopeParams p = {
                .unit = s->unit,
                .slice = SCOPE_SLICE,
                .description = description,
                .pids = &s->pin,
                .n_pids = 1,
                .memory_max = limits->memory_max,
                /* The pin is one task of the scope. */
                .tasks_max = limits->tasks_max + 1,
                .cpu_quota_per_sec_usec = (uint64_t) limits->cpu_percent * 10000U,
                .runtime_max_usec = limits->timeout_usec + WORKER_SCOPE_GRACE_USEC + SCOPE_SPARE_MAX_AGE_USEC,
                .delegate = true,
        };
        r = scope_start(s->bus, &p, on_job, s, &s->job);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

uint64_t scope_spare_age_usec(const ScopeSpare *s) {
        return now_usec(CLOCK_MONOTONIC) - s->started_usec;
}

bool scope_spare_fits(const ScopeSpare *s, const SandboxLimits *limits) {
        if (!s || !s->ready || s->handed || scope_spare_age_usec(s) >= SCOPE_SPARE_MAX_AGE_USEC)
                return false;
        return s->limits.memory_max == limits->memory_max && s->limits.tasks_max == limits->tasks_max &&
                s->limits.cpu_percent == limits->cpu_percent && s->limits.timeout_usec == limits->timeout_usec;
}

const char *scope_spare_id(const ScopeSpare *s) {
        return s->id;
}

void scope_spare_handout(const ScopeSpare *s, ScopeSpareHandout *ret) {
        *ret = (ScopeSpareHandout) {
                .unit = s->unit,
                .pin = s->pin,
                .pin_fd = s->pin_fd,
                .cgroup_fd = s->cgroup_fd,
        };
}

void scope_spare_handed(ScopeSpare *s) {
        s->handed = true;
        s->expire = sd_event_source_disable_unref(s->expire);
        s->pin_fd = safe_close(s->pin_fd);
        s->cgroup_fd = safe_close(s->cgroup_fd);
}
