/* Calls waiting for the inspection of their skill (see inspect.h), keyed by the call message, the
 * way polkit.c keys its queries: the handler starts the inspection and returns without replying;
 * when the inspecting child is reaped, the call is put back into its bus's read queue and the
 * handler runs again, finds the inspection, and goes on to polkit and to act.
 *
 * A call that never comes back (its caller left, polkit dropped it) is forgotten after a timeout,
 * with whatever it unpacked. */
#include <inttypes.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bus-held.h"
#include "error.h"
#include "fileio.h"
#include "list.h"
#include "log.h"
#include "manager.h"

/* Longer than polkit may take with a person typing a password (polkit.c), plus unpacking. */
#define PENDING_TIMEOUT_USEC (10ULL * 60 * 1000000)
/* Inspections at once: each one is a process unpacking an archive of up to 256M. More wait for
 * their turn, up to the caps on calls waiting (each holds a message and an fd). */
#define INSPECTIONS_MAX 4U
#define PENDING_MAX 256U
#define PENDING_PER_UID_MAX 32U

Pending *pending_find(Manager *m, sd_bus_message *call) {
        for (Pending *p = m->pending; p; p = p->next)
                if (p->call == call)
                        return p;
        return NULL;
}

static void pending_unlink(Pending *p) {
        Manager *m = p->manager;

        if (!m)
                return;
        LIST_REMOVE(m->pending, p);
        m->n_pending--;
        p->manager = NULL;
}

static void pending_delete_dir(Manager *m, Pending *p) {
        if (!p->dir)
                return;
        if (p->kind == PENDING_RUN)
                (void) rm_rf_at(AT_FDCWD, p->dir);
        else if (p->kind == PENDING_INSTALL)
                skills_drop_staging(&m->skill_dirs, p->dir);
}

static void pending_start_waiting(Manager *m);

Pending *pending_free(Pending *p) {
        bool was_running = false;
        Manager *m;

        if (!p)
                return NULL;
        m = p->manager;
        pending_unlink(p);
        if (p->pid > 0) {
                /* An inspection still going: it is of no use to anyone now. */
                (void) kill(p->pid, SIGKILL);
                (void) waitpid(p->pid, NULL, 0);
                was_running = true;
        }
        sd_event_source_disable_unref(p->child_source);
        sd_event_source_disable_unref(p->timeout_source);
        safe_close(p->archive_fd);
        free(p->dir_name);
        free(p->script);
        safe_close(p->result_fd);
        safe_close(p->dir_fd);
        if (m)
                pending_delete_dir(m, p);
        free(p->dir);
        inspection_done(&p->inspection);
        sd_bus_message_unref(p->call);
        free(p);
        /* Its slot is free for the next one waiting. */
        if (m && was_running)
                pending_start_waiting(m);
        return NULL;
}

void pending_release(Pending *p) {
        /* What it unpacked belongs to someone else now. */
        free(p->dir);
        p->dir = NULL;
        p->dir_fd = safe_close(p->dir_fd);
        pending_free(p);
}

static bool inspected_matches(const InspectedSkill *c, const Pending *p) {
        return c->valid && c->dev == p->dir_stat.st_dev && c->ino == p->dir_stat.st_ino &&
               c->ctime.tv_sec == p->dir_stat.st_ctim.tv_sec && c->ctime.tv_nsec == p->dir_stat.st_ctim.tv_nsec &&
               c->command == p->command && streq_ptr(c->script, p->script);
}

static void inspected_clear(InspectedSkill *c) {
        inspection_done(&c->inspection);
        free(c->script);
        *c = (InspectedSkill) {};
}

/* A deep copy, through the JSON the inspecting child writes anyway. */
static int inspection_copy(const Inspection *from, Inspection *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = inspection_to_json(from, &text);
        if (r < 0)
                return r;
        return inspection_from_json(text, ret);
}

static void inspected_keep(Manager *m, const Pending *p) {
        InspectedSkill *c = NULL;

        if (!p->keep || p->inspection.error_errno != 0)
                return;
        for (size_t i = 0; i < INSPECTED_SKILLS_MAX && !c; i++)
                if (inspected_matches(&m->inspected[i], p))
                        c = &m->inspected[i];
        if (!c) {
                c = &m->inspected[m->inspected_next];
                m->inspected_next = (m->inspected_next + 1) % INSPECTED_SKILLS_MAX;
        }
        inspected_clear(c);
        /* Only a cache: what cannot be copied is inspected again next time. */
        if (p->script && !(c->script = strdup(p->script)))
                return;
        if (inspection_copy(&p->inspection, &c->inspection) < 0) {
                inspected_clear(c);
                return;
        }
        c->dev = p->dir_stat.st_dev;
        c->ino = p->dir_stat.st_ino;
        c->ctime = p->dir_stat.st_ctim;
        c->command = p->command;
        c->valid = true;
}

/* 1 when p's folder was inspected before, as it is now: p is done with that inspection. */
static int inspected_reuse(Manager *m, Pending *p) {
        for (size_t i = 0; i < INSPECTED_SKILLS_MAX; i++)
                if (inspected_matches(&m->inspected[i], p)) {
                        int r = inspection_copy(&m->inspected[i].inspection, &p->inspection);

                        if (r < 0)
                                return r;
                        p->started = p->done = true;
                        return 1;
                }
        return 0;
}

void pending_forget_inspected(Manager *m) {
        for (size_t i = 0; i < INSPECTED_SKILLS_MAX; i++)
                inspected_clear(&m->inspected[i]);
        m->inspected_next = 0;
}

static int on_inspected(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Pending *p = userdata;
        Manager *m = p->manager;
        int r;

        p->pid = 0;
        p->child_source = sd_event_source_disable_unref(p->child_source);
        r = inspection_read(p->result_fd, &p->inspection);
        if (r < 0 || (p->inspection.error_errno == 0 && (si->si_code != CLD_EXITED || si->si_status != 0))) {
                /* Not the skill's fault, nor the caller's: the admin's to look into. */
                if (si->si_code == CLD_EXITED && si->si_status == 0)
                        log_warning_errno(r, "The inspection of a skill left no answer that could be read: %m");
                else if (si->si_code == CLD_EXITED)
                        log_warning("The inspection of a skill exited with status %i.", si->si_status);
                else
                        log_warning("The inspection of a skill was killed by signal SIG%s.",
                                    strna(sigabbrev_np(si->si_status)));
                inspection_done(&p->inspection);
                p->inspection.error_errno = EIO;
                p->inspection.error = strdup("Inspecting the skill failed unexpectedly; the service's log says "
                                             "why");
        }
        p->result_fd = safe_close(p->result_fd);
        p->done = true;
        inspected_keep(m, p);

        /* Dispatch the call once more: the handler finds the inspection now. */
        r = bus_message_redispatch(p->call);
        if (r < 0) {
                log_debug_errno(r, "Dropping a call whose skill was inspected: %m");
                pending_free(p);
        }
        pending_start_waiting(m);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        log_debug("Forgetting a call that did not come back.");
        pending_free(userdata);
        return 0;
}

/* A fresh directory of ours for an archive to be unpacked into, 0755 so that the run's uid may
 * read the tree once it is bind-mounted into the sandbox. */
static int new_work_dir(Manager *m, char **ret_path, int *ret_fd) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t v[2];

        if (getrandom(v, sizeof(v), 0) != sizeof(v))
                return -EIO;
        path = strdup_printf("%s/%016" PRIx64 "%016" PRIx64, m->work_dir, v[0], v[1]);
        if (!path)
                return -ENOMEM;
        if (mkdir(path, 0755) < 0)
                return -errno;
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchmod(fd, 0755) < 0) {
                int saved = errno;

                (void) rm_rf_at(AT_FDCWD, path);
                return -saved;
        }
        *ret_path = TAKE_PTR(path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static size_t inspections_running(Manager *m) {
        size_t n = 0;

        for (Pending *p = m->pending; p; p = p->next)
                if (p->pid > 0)
                        n++;
        return n;
}

static int pending_spawn(Pending *p) {
        Manager *m = p->manager;
        int r;

        p->started = true;
        r = inspect_spawn(p->kind == PENDING_RUN_INSTALLED ? -EBADF : p->archive_fd, p->dir_fd, p->dir_name,
                          p->script,
                          p->kind == PENDING_INSTALL ? INSPECT_LINT : p->command ? 0 : INSPECT_ENTRY, &p->pid,
                          &p->result_fd);
        if (r < 0)
                return r;
        p->archive_fd = safe_close(p->archive_fd);
        return sd_event_add_child(m->event, &p->child_source, p->pid, WEXITED, on_inspected, p);
}

/* Oldest first: the list is newest first, so the last waiting one. */
static void pending_start_waiting(Manager *m) {
        if (m->stopping)
                return;
        while (inspections_running(m) < INSPECTIONS_MAX) {
                Pending *next = NULL;
                int r;

                for (Pending *p = m->pending; p; p = p->next)
                        if (!p->started)
                                next = p;
                if (!next)
                        return;
                r = pending_spawn(next);
                if (r < 0) {
                        /* Answered with an error when it comes back. */
                        log_warning_errno(r, "Failed to start inspecting a skill: %m");
                        next->done = true;
                        next->inspection.error_errno = -r;
                        next->inspection.error = strdup("The service could not check the skill");
                        if (bus_message_redispatch(next->call) < 0)
                                pending_free(next);
                }
        }
}

int pending_start(Manager *m, sd_bus_message *call, PendingKind kind, uid_t uid, int archive_fd, int dir_fd,
                  const char *dir_name, const char *script, bool command, bool keep, char **error) {
        _cleanup_close_ int owned_dir_fd = dir_fd;
        size_t same = 0;
        Pending *p;
        int r;

        for (Pending *i = m->pending; i; i = i->next)
                if (i->uid == uid)
                        same++;
        if (m->n_pending >= PENDING_MAX || (uid != 0 && same >= PENDING_PER_UID_MAX))
                return error_setf(error, -EUSERS,
                                  "Too many calls are waiting for their skill to be checked; try "
                                  "again in a moment.");

        p = calloc(1, sizeof(Pending));
        if (!p)
                return -ENOMEM;
        p->kind = kind;
        p->command = command;
        p->uid = uid;
        p->result_fd = p->dir_fd = p->archive_fd = -EBADF;
        p->call = sd_bus_message_ref(call);
        p->manager = m;
        LIST_PREPEND(m->pending, p);
        m->n_pending++;

        p->dir_name = dir_name ? strdup(dir_name) : NULL;
        p->script = script ? strdup(script) : NULL;
        if ((dir_name && !p->dir_name) || (script && !p->script)) {
                pending_free(p);
                return -ENOMEM;
        }
        if (archive_fd >= 0) {
                p->archive_fd = fcntl(archive_fd, F_DUPFD_CLOEXEC, 3);
                if (p->archive_fd < 0) {
                        r = -errno;
                        pending_free(p);
                        return error_setf(error, r, "Failed to take the skill: %s", strerror(-r));
                }
        }

        switch (kind) {
        case PENDING_RUN:
                r = new_work_dir(m, &p->dir, &p->dir_fd);
                break;
        case PENDING_INSTALL:
                r = skills_new_staging(&m->skill_dirs, &p->dir, &p->dir_fd);
                break;
        case PENDING_RUN_INSTALLED:
                p->dir_fd = TAKE_FD(owned_dir_fd);
                p->keep = keep && fstat(p->dir_fd, &p->dir_stat) >= 0;
                r = p->keep ? inspected_reuse(m, p) : 0;
                break;
        default:
                r = -EINVAL;
        }
        /* Done or not, it may wait for polkit next: the timeout bounds that too. */
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &p->timeout_source, CLOCK_MONOTONIC,
                                               PENDING_TIMEOUT_USEC, 0, on_timeout, p);
        if (r >= 0 && p->done)
                return 1;
        if (r >= 0 && inspections_running(m) < INSPECTIONS_MAX)
                r = pending_spawn(p);
        if (r < 0) {
                pending_free(p);
                return error_setf(error, r, "Failed to check the skill: %s", strerror(-r));
        }
        return 0;
}
