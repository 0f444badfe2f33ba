/* "skillctl run" through the skilld service.
 *
 * 1. The skill goes over as a file descriptor (skill-fd.h), or by name for an installed one; the
 *    --file inputs as fds too, the limits asked for (only those: the rest are the policy's),
 *    environment and network in the options.
 * 2. The skill's stdout and stderr come back live through pipes whose write ends we pass: the
 *    service writes to a pipe of ours rather than to our terminal, so nothing it does to the fd
 *    (O_NONBLOCK on a shared terminal) reaches us, and the summary comes after the output. Over
 *    SSH no fd passes: the stored logs are polled with ReadLog while the run goes, and read to
 *    their end once it ended.
 * 3. RunFinished is matched before Run is called, so the end of a quick run cannot be missed. The
 *    signal only wakes us: whether the run ended is read back from the run object, since anyone
 *    on the bus may send a signal. The matches are added without waiting for the bus's answers:
 *    the bus handles a connection's messages in order, so they are in place before Run arrives.
 * 4. The end is reported as an embedded run's is (run-result.h), from the Result JSON. One
 *    GetOutcome call brings the state, the result, the logs' fds and the artifact list, which
 *    is also how we learn that the run really ended; a service without it is asked for each. */
#include <signal.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "fetch.h"
#include "fileio.h"
#include "json-format.h"
#include "log.h"
#include "output.h"
#include "run-result.h"
#include "run.h"
#include "term-escape.h"

/* How long to wait, after the run finished, for the service to close our pipes. */
#define OUTPUT_GRACE_USEC (3ULL * 1000000)
/* How often the logs are polled over SSH while the run goes. */
#define LOG_POLL_USEC (500ULL * 1000)

typedef struct ServiceRun ServiceRun;

typedef struct OutputCopy {
        ServiceRun *run;
        int fd;                         /* our read end, -EBADF at EOF */
        int dest;                       /* STDOUT_FILENO or STDERR_FILENO */
        bool dest_broken;               /* the reader went away: drain, do not write */
        TermEscape esc;                 /* escaping when dest is a terminal */
        sd_event_source *source;
} OutputCopy;

struct ServiceRun {
        Client *client;
        RunArgs *args;
        sd_event *event;
        char *id;
        char *path;
        OutputCopy out, err;
        sd_event_source *grace;
        /* Over SSH: the logs polled with ReadLog, how far each was read, and whether that broke
         * (a service without ReadLog: the output kept in the result is shown instead). */
        sd_event_source *log_poll;
        uint64_t log_offset[2];
        bool log_broken[2];
        bool log_failed;
        bool show_progress;
        bool progress;                  /* a progress line is on the terminal */
        bool finished;
        bool gone;                      /* the service went away */
        bool abandoned;                 /* interrupted twice: we stop waiting */
        bool done;                      /* leave the loop (not sd_event_exit(): that closes the bus) */
        unsigned n_signals;
        /* GetOutcome's reply once the run ended; NULL where the service has no GetOutcome
         * (no_outcome) or no fd can pass (over SSH): then each part is asked for on its own. */
        sd_bus_message *outcome;
        bool no_outcome;
        /* Why Run found no service, when it was the first call of an unconfirmed client. */
        char *no_service;
};

static void output_copy_close(OutputCopy *c) {
        c->source = sym_sd_event_source_disable_unref(c->source);
        c->fd = safe_close(c->fd);
}

static void service_run_done(ServiceRun *s) {
        output_copy_close(&s->out);
        output_copy_close(&s->err);
        s->grace = sym_sd_event_source_disable_unref(s->grace);
        s->log_poll = sym_sd_event_source_disable_unref(s->log_poll);
        s->event = sym_sd_event_unref(s->event);
        s->outcome = sym_sd_bus_message_unref(s->outcome);
        free(s->id);
        free(s->path);
        free(s->no_service);
}

_printf_(2, 3)
static void progress_show(ServiceRun *s, const char *fmt, ...) {
        va_list ap;

        if (!s->show_progress)
                return;
        /* Best effort, like any terminal decoration: a failed write loses a progress line. */
        (void) fputs("\r\033[Kskillctl: ", stderr);
        va_start(ap, fmt);
        (void) vfprintf(stderr, fmt, ap);
        va_end(ap);
        (void) fflush(stderr);
        s->progress = true;
}

static void progress_clear(ServiceRun *s) {
        if (!s->progress)
                return;
        (void) fputs("\r\033[K", stderr);
        (void) fflush(stderr);
        s->progress = false;
}

/* Done when the run ended and its output was all copied. */
static void maybe_exit(ServiceRun *s) {
        if (s->finished && s->out.fd < 0 && s->err.fd < 0)
                s->done = true;
}

static int on_output(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        OutputCopy *c = userdata;
        char buf[64 * 1024];
        ssize_t k;

        k = read(fd, buf, sizeof(buf));
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0) {
                if (!c->dest_broken)
                        (void) term_escape_flush(&c->esc, c->dest);
                output_copy_close(c);
                maybe_exit(c->run);
                return 0;
        }
        progress_clear(c->run);
        if (!c->dest_broken && term_escape_write(&c->esc, c->dest, buf, k) < 0)
                c->dest_broken = true;
        return 0;
}

/* Writes what the stored logs gained since the last look (over SSH). */
static void copy_logs(ServiceRun *s) {
        static const char *const streams[] = { "stdout", "stderr" };

        for (size_t k = 0; k < ELEMENTSOF(streams) && !s->log_failed; k++) {
                uint64_t before = s->log_offset[k];
                int r;

                r = client_copy_log(s->client, s->id, s->path, streams[k], &s->log_offset[k],
                                    k == 0 ? STDOUT_FILENO : STDERR_FILENO, &s->log_broken[k]);
                if (r < 0)
                        s->log_failed = true;
                else if (s->log_offset[k] != before)
                        progress_clear(s);
        }
}

static int on_log_poll(sd_event_source *source, uint64_t usec, void *userdata) {
        ServiceRun *s = userdata;

        /* The logs exist from submission on: a queued run's are empty. */
        copy_logs(s);
        if (s->log_failed || s->finished)
                return sym_sd_event_source_set_enabled(source, SD_EVENT_OFF);
        (void) sym_sd_event_source_set_time_relative(source, LOG_POLL_USEC);
        return sym_sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

static int on_grace(sd_event_source *source, uint64_t usec, void *userdata) {
        ServiceRun *s = userdata;

        /* The service kept our pipes open after the end: what it wrote is read, stop waiting. */
        log_debug("The service did not close the output pipes of run %s.", s->id);
        s->done = true;
        return 0;
}

/* The run object is the truth about whether the run ended; signals only say when to look. */
/* The run is over when its State says so (RunFinished may have come before the reply to Run). */
static void finished_by_state(ServiceRun *s, const char *state) {
        int r;

        if (s->finished || !(streq_ptr(state, "finished") || streq_ptr(state, "interrupted")))
                return;

        s->finished = true;
        progress_clear(s);
        r = sym_sd_event_add_time_relative(s->event, &s->grace, CLOCK_MONOTONIC, OUTPUT_GRACE_USEC, 0,
                                           on_grace, s);
        if (r < 0)
                s->done = true;
        maybe_exit(s);
}

/* GetOutcome: 1 when it answered (the outcome kept), 0 when the run still goes, < 0 when the
 * service cannot tell us that way. */
static int get_outcome(ServiceRun *s) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *state;
        int r;

        r = client_call_method(s->client, s->path, SKILLD_BUS_RUN, "GetOutcome", &e, &reply, NULL);
        if (r < 0)
                return sym_sd_bus_error_has_name(&e, SKILLD_ERROR_RUN_ACTIVE) ? 0 : r;
        r = sym_sd_bus_message_read(reply, "s", &state);
        if (r < 0)
                return r;
        if (!streq(state, "finished") && !streq(state, "interrupted"))
                return 0;
        s->outcome = TAKE_PTR(reply);
        finished_by_state(s, state);
        return 1;
}

static void check_finished(ServiceRun *s) {
        _cleanup_free_ char *state = NULL;

        if (s->finished || !s->path)
                return;
        if (!s->no_outcome && s->client->can_pass_fds) {
                if (get_outcome(s) >= 0)
                        return;
                /* An older service: from now on, the parts one by one. */
                s->no_outcome = true;
        }
        if (sym_sd_bus_get_property_string(s->client->bus, s->client->destination, s->path, SKILLD_BUS_RUN,
                                           "State", NULL, &state) < 0)
                return;
        finished_by_state(s, state);
}

static int on_run_started(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ServiceRun *s = userdata;
        const char *id;

        if (sym_sd_bus_message_read(m, "s", &id) >= 0 && streq_ptr(id, s->id))
                progress_clear(s);
        return 0;
}

static int on_run_finished(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ServiceRun *s = userdata;
        const char *id;

        if (sym_sd_bus_message_read(m, "s", &id) >= 0 && streq_ptr(id, s->id))
                check_finished(s);
        return 0;
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ServiceRun *s = userdata;
        const char *name, *old_owner, *new_owner;

        if (sym_sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || !isempty(new_owner))
                return 0;
        s->gone = true;
        s->done = true;
        return 0;
}

/* The local Disconnected signal sd-bus synthesizes when the connection breaks. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        ServiceRun *s = userdata;

        if (!sym_sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected"))
                return 0;
        s->gone = true;
        s->done = true;
        return 0;
}

static int on_cancel_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ServiceRun *s = userdata;
        const sd_bus_error *e = sym_sd_bus_message_get_error(m);
        _cleanup_free_ char *what = NULL;

        /* Ended meanwhile: RunFinished is on its way, nothing to say. */
        if (!e || sym_sd_bus_error_has_name(e, SKILLD_ERROR_RUN_FINISHED))
                return 0;
        what = strdup_printf("cancel run %s", s->id);
        (void) client_log_error(what ?: "cancel", e, -EIO);
        return 0;
}

static int on_signal(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL;
        ServiceRun *s = userdata;
        int r;

        progress_clear(s);
        if (++s->n_signals > 1) {
                s->abandoned = true;
                s->done = true;
                return 0;
        }

        /* As embedded: the first interrupt cancels the run and we report how it ended. */
        fprintf(stderr, "skillctl: canceling run %s (again to stop waiting)\n", s->id);
        r = client_new_call(s->client, s->path, SKILLD_BUS_RUN, "Cancel", &m);
        if (r >= 0)
                r = sym_sd_bus_call_async(s->client->bus, NULL, m, on_cancel_reply, s, 0);
        if (r < 0)
                log_error_errno(r, "Failed to cancel run %s: %m", s->id);
        return 0;
}

static int output_pipe(ServiceRun *s, OutputCopy *c, int dest, int *ret_write_fd) {
        _cleanup_close_ int write_fd = -EBADF;
        int fds[2], r;

        /* The write end stays blocking: the engine writes with plain blocking writes and would
         * stop copying on EAGAIN. Only our read end, a file description of its own, is not. */
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        write_fd = fds[1];
        c->run = s;
        c->fd = fds[0];         /* closed by output_copy_close() from here on */
        c->dest = dest;
        term_escape_init(&c->esc, dest);
        if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        r = sym_sd_event_add_io(s->event, &c->source, c->fd, EPOLLIN, on_output, c);
        if (r < 0)
                return r;
        *ret_write_fd = TAKE_FD(write_fd);
        return 0;
}

static int append_limits(sd_bus_message *m, const RunArgs *a) {
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {
                { SANDBOX_LIMIT_MEMORY,  "memory" },
                { SANDBOX_LIMIT_TASKS,   "tasks" },
                { SANDBOX_LIMIT_CPU,     "cpu" },
                { SANDBOX_LIMIT_TIMEOUT, "timeout" },
        };
        const uint64_t values[] = {
                a->limits.memory_max, a->limits.tasks_max, a->limits.cpu_percent, a->limits.timeout_usec,
        };
        int r;

        /* Only what was asked for: the service's defaults are its policy's, not ours, and
         * sending ours could even need io.skilld.raise-limits. */
        if (a->limits_set == 0)
                return 0;
        r = sym_sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", "limits");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'v', "a{st}");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{st}");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(names); i++)
                if (a->limits_set & names[i].bit)
                        r = sym_sd_bus_message_append(m, "{st}", names[i].name, values[i]);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        return r;
}

static int append_env(sd_bus_message *m, char **env) {
        int r;

        if (strv_length(env) == 0)
                return 0;
        r = sym_sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", "env");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'v', "a{ss}");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{ss}");
        STRV_FOREACH(e, env) {
                /* Checked by sandbox_env_check() when parsed: NAME=VALUE with a valid name. */
                _cleanup_free_ char *name = strndup(*e, strcspn(*e, "="));

                if (r < 0)
                        break;
                r = name ? sym_sd_bus_message_append(m, "{ss}", name, *e + strlen(name) + 1) : -ENOMEM;
        }
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        return r;
}

/* The "files" option (folders: the "folders" option, zips of folders) of those inputs. */
static int append_files(sd_bus_message *m, const RunFile *files, size_t n, bool folders) {
        size_t count = 0;
        int r;

        for (size_t i = 0; i < n; i++)
                count += files[i].folder == folders;
        if (count == 0)
                return 0;
        r = sym_sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", folders ? "folders" : "files");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'v', "a{sh}");
        if (r >= 0)
                r = sym_sd_bus_message_open_container(m, 'a', "{sh}");
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (files[i].folder == folders)
                        r = sym_sd_bus_message_append(m, "{sh}", files[i].name, files[i].fd);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        return r;
}

static int append_options(sd_bus_message *m, const RunArgs *a, const RunFile *files, size_t n_files,
                          int stdout_fd, int stderr_fd) {
        int r;

        r = sym_sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_limits(m, a);
        if (r >= 0)
                r = append_env(m, a->env);
        if (r >= 0)
                r = append_files(m, files, n_files, false);
        if (r >= 0)
                r = append_files(m, files, n_files, true);
        if (r >= 0 && a->network)
                r = sym_sd_bus_message_append(m, "{sv}", "network", "b", 1);
        /* exec: the arguments are the whole command, and no script is named. */
        if (r >= 0 && a->exec)
                r = sym_sd_bus_message_append(m, "{sv}", "command", "b", 1);
        if (r >= 0 && a->cwd)
                r = sym_sd_bus_message_append(m, "{sv}", "cwd", "s", a->cwd);
        if (r >= 0 && a->session)
                r = sym_sd_bus_message_append(m, "{sv}", "session", "s", a->session);
        if (r >= 0 && stdout_fd >= 0)
                r = sym_sd_bus_message_append(m, "{sv}", "stdout", "h", stdout_fd);
        if (r >= 0 && stderr_fd >= 0)
                r = sym_sd_bus_message_append(m, "{sv}", "stderr", "h", stderr_fd);
        if (r >= 0)
                r = sym_sd_bus_message_close_container(m);
        return r;
}

/* The output a run kept, from its Result, where no pipe could carry it live (over SSH). */
static void print_kept_output(const cJSON *j) {
        static const struct {
                const char *key;
                int fd;
        } streams[] = { { "stdout", STDOUT_FILENO }, { "stderr", STDERR_FILENO } };

        for (size_t i = 0; i < ELEMENTSOF(streams); i++) {
                const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, streams[i].key);
                const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "text");

                if (cJSON_IsString(text)) {
                        TermEscape esc;

                        term_escape_init(&esc, streams[i].fd);
                        (void) term_escape_write(&esc, streams[i].fd, text->valuestring,
                                                 strlen(text->valuestring));
                        (void) term_escape_flush(&esc, streams[i].fd);
                }
                else if (cJSON_IsObject(o))
                        fprintf(stderr, "skillctl: the %s of the run is too large or not text to "
                                "show here\n", streams[i].key);
        }
}

/* What GetOutcome brought beyond the state and the result. */
typedef struct Outcome {
        int log_fd[2];                  /* stdout, stderr; -EBADF when the service keeps none */
        ArtifactInfo *artifacts;
        size_t n_artifacts;
} Outcome;

static void outcome_done(Outcome *o) {
        for (size_t i = 0; i < ELEMENTSOF(o->log_fd); i++)
                o->log_fd[i] = safe_close(o->log_fd[i]);
        artifact_info_free_many(o->artifacts, o->n_artifacts);
        o->artifacts = NULL;
        o->n_artifacts = 0;
}

/* Reads GetOutcome's reply m: its state and result (pointing into m), its logs (duplicated) and
 * its artifacts. */
static int outcome_read(sd_bus_message *m, const char **ret_state, const char **ret_result, Outcome *o) {
        const char *name;
        int fd, r;

        r = sym_sd_bus_message_rewind(m, true);
        if (r >= 0)
                r = sym_sd_bus_message_read(m, "ss", ret_state, ret_result);
        if (r >= 0)
                r = sym_sd_bus_message_enter_container(m, 'a', "{sh}");
        while (r >= 0 && (r = sym_sd_bus_message_read(m, "{sh}", &name, &fd)) > 0) {
                int i = streq(name, "stdout") ? 0 : streq(name, "stderr") ? 1 : -1;

                if (i < 0 || o->log_fd[i] >= 0)
                        continue;
                o->log_fd[i] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (o->log_fd[i] < 0)
                        return -errno;
        }
        if (r >= 0)
                r = sym_sd_bus_message_exit_container(m);
        if (r >= 0)
                r = artifact_list_read(m, &o->artifacts, &o->n_artifacts);
        return r;
}

/* Lays out what the service kept as an embedded run lays out its output directory: from the
 * outcome o where GetOutcome brought it, else asked for part by part. */
static int fetch_output_dir(ServiceRun *s, const char *dir, const char *result_json, const cJSON *result_tree,
                            const Outcome *o) {
        _cleanup_free_ char *formatted = NULL;
        _cleanup_close_ int dir_fd = -EBADF, files_fd = -EBADF, out_fd = -EBADF, err_fd = -EBADF;
        _cleanup_(atomic_file_done) AtomicFile result = ATOMIC_FILE_NULL;
        static const char *const streams[] = { "stdout", "stderr" };
        int *log_fds[] = { &out_fd, &err_fd };
        const char *text;
        int k[2] = {}, r, ret = 0;

        r = mkdir_p_at(AT_FDCWD, dir, 0755);
        if (r >= 0) {
                dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = dir_fd < 0 ? -errno : 0;
        }
        if (r >= 0)
                r = open_dir_beneath(dir_fd, "files", true, &files_fd);
        if (r < 0)
                return log_error_errno(r, "%s: cannot create: %m", dir);

        r = o ? fetch_artifacts_listed(s->client, s->id, s->path, files_fd, o->artifacts, o->n_artifacts, NULL)
              : fetch_artifacts(s->client, s->id, s->path, files_fd, NULL);
        if (r < 0)
                ret = r;
        /* One an earlier run left in a reused directory must not stand beside these logs while
         * they are not yet synced. */
        if (unlinkat(dir_fd, "result.json", 0) < 0 && errno != ENOENT)
                return log_error_errno(errno, "%s/result.json: cannot remove the earlier one: %m", dir);
        for (size_t i = 0; i < ELEMENTSOF(streams); i++) {
                _cleanup_free_ char *name = strdup_printf("%s.log", streams[i]);
                _cleanup_close_ int fd = -EBADF;

                if (!name)
                        return log_oom();
                if (!o)
                        r = client_open_log(s->client, s->id, s->path, streams[i], &fd);
                else if (o->log_fd[i] < 0)
                        r = log_error_errno(-ENOENT, "run %s: the service keeps no %s log", s->id, streams[i]);
                else {
                        fd = fcntl(o->log_fd[i], F_DUPFD_CLOEXEC, 3);
                        r = fd < 0 ? -errno : 0;
                }
                if (r >= 0)
                        r = copy_fd_to_file_atomic(fd, dir_fd, name, NULL, NULL, log_fds[i]);
                if (r < 0 && ret == 0)
                        ret = log_error_errno(r, "%s/%s: cannot write: %m", dir, name);
        }
        /* Laid out as an embedded run's result.json is, whatever the service's text looks like:
         * from the tree report() parsed, which keeps the skill's output exact as the engine does. */
        formatted = json_format(result_tree);
        text = formatted ?: result_json;
        /* Committed as the engine commits an output directory (the logs already under their
         * names): a result.json found after a crash has its complete logs beside it. */
        r = atomic_file_write_at(dir_fd, "result.json", text, strlen(text), 0644, &result);
        if (r >= 0)
                r = atomic_file_commit_after(&result, (const int[]) { out_fd, err_fd }, 2, k);
        for (size_t i = 0; r < 0 && i < 2; i++)
                if (k[i] < 0)
                        /* No result.json beside a log that may not be whole. */
                        return log_error_errno(k[i], "%s/%s.log: cannot write: %m", dir, streams[i]);
        if (r < 0 && ret == 0)
                ret = log_error_errno(r, "%s/result.json: cannot write: %m", dir);
        return ret;
}

/* After the run ended: the summary, the JSON, the exit status, as embedded. */
static int report(ServiceRun *s) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_(run_result_freep) RunResult *res = NULL;
        _cleanup_(outcome_done) Outcome o = { .log_fd = { -EBADF, -EBADF } };
        _cleanup_free_ char *result_owned = NULL, *state_owned = NULL, *where = NULL;
        const char *result, *state = NULL;
        int r;

        if (s->outcome) {
                r = outcome_read(s->outcome, &state, &result, &o);
                if (r < 0)
                        return run_fail("run %s: cannot read the service's outcome: %s", s->id, strerror(-r));
        } else {
                r = client_get_run_string(s->client, s->id, s->path, "Result", &result_owned);
                if (r < 0)
                        return EXIT_RUN_FAILED;
                result = result_owned;
        }
        if (isempty(result)) {
                if (!state) {
                        (void) client_get_run_string(s->client, s->id, s->path, "State", &state_owned);
                        state = state_owned;
                }
                return run_fail("run %s was %s: the service stopped before it finished", s->id,
                                streq_ptr(state, "interrupted") ? "interrupted" : "left without a result");
        }
        r = run_result_from_json(result, &j, &res);
        if (r < 0)
                return run_fail("run %s: the service's result is not one skillctl understands", s->id);

        /* Over SSH, the output that came since the last poll; the output the result kept
         * where the service has no ReadLog. */
        if (s->log_poll) {
                copy_logs(s);
                if (s->log_failed && s->log_offset[0] == 0 && s->log_offset[1] == 0 && !s->args->json)
                        print_kept_output(j);
        }

        /* As embedded, the artifacts, logs and result.json land in --output-dir, by default
         * ./skill-out/ID; the service keeps its own copy. Over SSH (fetched in chunks, which is
         * slow) only with --output-dir; else they stay there. */
        if (s->args->output_dir)
                where = strdup(s->args->output_dir);
        else if (s->client->can_pass_fds)
                where = strdup_printf("skill-out/%s", s->id);
        else
                where = strdup_printf("run %s", s->id);
        if (!where)
                return log_oom(), EXIT_RUN_FAILED;
        if ((s->client->can_pass_fds || s->args->output_dir) && fetch_output_dir(s, where, result, j, s->outcome ? &o : NULL) < 0) {
                /* Like a failed store of an embedded run: the run's outcome stands. */
                fprintf(stderr, "skillctl: warning: not everything of run %s reached %s; the service "
                        "keeps it all\n", s->id, where);
                free(where);
                where = strdup_printf("run %s", s->id);
                if (!where)
                        return log_oom(), EXIT_RUN_FAILED;
        }

        if (s->args->json) {
                if (json_print(j) < 0)
                        return log_oom(), EXIT_RUN_FAILED;
        } else {
                if (!s->args->quiet || res->status == RUN_STATUS_ERROR)
                        run_summary_print(res, where);
        }
        if (res->store_error)
                fprintf(stderr, "skillctl: warning: %s\n", res->store_error);
        return run_result_exit_code(res);
}

/* 0 when the run was submitted; 1 when Run found no service on the system bus (an unconfirmed
 * client's, s->no_service says why); negative after printing the error. */
static int submit(ServiceRun *s, bool installed, int skill_fd, const char *script, const RunFile *files,
                  size_t n_files) {
        _cleanup_(sym_sd_bus_error_freep) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sym_sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int out_w = -EBADF, err_w = -EBADF;
        _cleanup_free_ char *state = NULL;
        Client *c = s->client;
        const char *id, *path;
        int r;

        if (!s->args->json && c->can_pass_fds) {
                r = output_pipe(s, &s->out, STDOUT_FILENO, &out_w);
                if (r >= 0)
                        r = output_pipe(s, &s->err, STDERR_FILENO, &err_w);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the output pipes: %m");
        }

        r = client_new_call(c, SKILLD_BUS_PATH, SKILLD_BUS_MANAGER, installed ? "RunInstalled" : "Run", &m);
        if (r >= 0)
                r = installed ? sym_sd_bus_message_append(m, "s", s->args->skill)
                              : sym_sd_bus_message_append(m, "h", skill_fd);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", strempty(script));
        if (r >= 0)
                r = sym_sd_bus_message_append_strv(m, s->args->args);
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "s", strempty(s->args->input));
        if (r >= 0)
                r = append_options(m, s->args, files, n_files, out_w, err_w);
        if (r < 0)
                return log_error_errno(r, "Failed to build the request: %m");

        progress_clear(s);
        r = client_call(c, m, &e, &reply);
        if (r < 0) {
                _cleanup_free_ char *reason = NULL;
                int k;

                /* Run is the first call of an unconfirmed client: its answer may say that no
                 * service is there, as the Ping it replaces would have. */
                k = client_unconfirmed_error(c, &e, &reason);
                if (k > 0) {
                        s->no_service = TAKE_PTR(reason);
                        return 1;
                }
                if (k < 0) {
                        run_error("%s (--local runs without the service)", reason ?: strerror(-k));
                        return k;
                }
                return client_log_error(s->args->skill, &e, r);
        }
        c->unconfirmed = false;
        r = sym_sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_error_errno(r, "Failed to parse the reply of Run: %m");
        s->id = strdup(id);
        s->path = strdup(path);
        if (!s->id || !s->path)
                return log_oom();

        /* The service holds its copies now; ours must go, or our read ends never see EOF. */
        m = sym_sd_bus_message_unref(m);
        out_w = safe_close(out_w);
        err_w = safe_close(err_w);

        /* A run that is queued says so on a terminal. Nothing else needs the state now: the run
         * cannot have ended before Run's reply was sent, and RunFinished, which comes after it,
         * waits in our queue if it came while we waited for the reply. */
        if (!s->show_progress)
                return 0;
        r = sym_sd_bus_get_property_string(c->bus, c->destination, s->path, SKILLD_BUS_RUN, "State", NULL,
                                           &state);
        if (r >= 0 && streq(state, "queued"))
                progress_show(s, "run %s is queued, waiting for a free slot...", s->id);
        if (r >= 0 && (streq(state, "finished") || streq(state, "interrupted")))
                check_finished(s);
        return 0;
}

int run_via_service(Client *c, RunArgs *a, char **ret_no_service) {
        _cleanup_(service_run_done) ServiceRun s = {
                .client = c,
                .args = a,
                .out.fd = -EBADF,
                .err.fd = -EBADF,
                .show_progress = !a->quiet && isatty(STDERR_FILENO) > 0,
        };
        _cleanup_(local_skill_done) LocalSkill skill = LOCAL_SKILL_NULL;
        _cleanup_(skill_entry_done) SkillEntry entry = {};
        _cleanup_(sym_sd_bus_slot_unrefp) sd_bus_slot *slot_finished = NULL, *slot_started = NULL,
                                                  *slot_owner = NULL, *slot_filter = NULL;
        _cleanup_free_ RunFile *files = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int skill_fd = -EBADF;
        bool installed = run_skill_is_installed_name(a->skill);
        int *fds = NULL;
        size_t n_files = 0;
        sigset_t mask;
        int r;

        if (!c->can_pass_fds && (!installed || a->files))
                return run_fail("%s: %s cannot pass file descriptors over SSH: only installed skills run "
                                "there (by name), without --file", a->skill, c->where);

        if (!installed) {
                r = run_load_skill(a, &skill, &entry);
                if (r != 0)
                        return r;
                if (skill.archive_fd < 0)
                        progress_show(&s, "packing %s...", a->skill);
                r = local_skill_to_fd(&skill, &skill_fd, &error);
                if (r < 0) {
                        progress_clear(&s);
                        return run_fail("%s: %s", a->skill, error ?: strerror(-r));
                }
        }

        r = run_open_files(a->files, &files, &fds, &n_files);
        if (r != 0) {
                progress_clear(&s);
                return EXIT_RUN_FAILED;
        }

        r = sym_sd_event_new(&s.event);
        if (r >= 0)
                r = sym_sd_bus_attach_event(c->bus, s.event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                run_close_files(fds, n_files);
                return run_fail("Failed to set up the event loop: %s", strerror(-r));
        }

        /* From here on an interrupt must cancel the run rather than leave it running unwatched:
         * the signals wait, blocked, until the loop turns them into a Cancel(). */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);      /* Ctrl-\: the same, not a core dump of skillctl */
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) signal(SIGPIPE, SIG_IGN);
        r = 0;
        for (int sig = 1; r >= 0 && sig < _NSIG; sig++)
                if (sigismember(&mask, sig) > 0)
                        r = sym_sd_event_add_signal(s.event, NULL, sig, on_signal, &s);

        /* Before Run: a run may end before its reply is read. Not waiting for the bus to confirm
         * each match saves three round trips: it handles our AddMatch calls before our Run, and a
         * match it refuses fails the connection (sd-bus does so when no install callback is
         * given), which we notice as the service gone. */
        if (r >= 0)
                r = sym_sd_bus_match_signal_async(c->bus, &slot_finished, c->destination, SKILLD_BUS_PATH,
                                                  SKILLD_BUS_MANAGER, "RunFinished", on_run_finished, NULL,
                                                  &s);
        /* RunStarted only clears the line that says the run is queued: without progress lines, no
         * match for it (one message fewer through the bus, and one rule fewer for it to test). */
        if (r >= 0 && s.show_progress)
                r = sym_sd_bus_match_signal_async(c->bus, &slot_started, c->destination, SKILLD_BUS_PATH,
                                                  SKILLD_BUS_MANAGER, "RunStarted", on_run_started, NULL,
                                                  &s);
        if (r >= 0 && c->destination)
                r = sym_sd_bus_add_match_async(c->bus, &slot_owner,
                                               "type='signal',sender='org.freedesktop.DBus',"
                                               "path='/org/freedesktop/DBus',"
                                               "interface='org.freedesktop.DBus',"
                                               "member='NameOwnerChanged',arg0='" SKILLD_BUS_NAME "'",
                                               on_name_owner_changed, NULL, &s);
        if (r >= 0)
                r = sym_sd_bus_add_filter(c->bus, &slot_filter, on_message, &s);
        if (r < 0) {
                run_close_files(fds, n_files);
                return run_fail("Failed to watch the run: %s", strerror(-r));
        }

        client_polkit_agent_open(c);
        r = submit(&s, installed, skill_fd, a->exec ? NULL : installed ? a->script : entry.script, files,
                   n_files);
        run_close_files(fds, n_files);
        skill_fd = safe_close(skill_fd);
        if (r > 0) {
                if (ret_no_service)
                        *ret_no_service = TAKE_PTR(s.no_service);
                return RUN_NO_SERVICE;
        }
        if (r < 0)
                /* The service's message named what the environment lacks and how to build it. */
                return r == -ENOMEDIUM ? RUN_EXIT_ENVIRONMENT : EXIT_RUN_FAILED;

        if (!c->can_pass_fds && !a->json) {
                r = sym_sd_event_add_time_relative(s.event, &s.log_poll, CLOCK_MONOTONIC, LOG_POLL_USEC, 0,
                                                   on_log_poll, &s);
                if (r < 0)
                        return run_fail("run %s: cannot watch its output: %s", s.id, strerror(-r));
        }

        maybe_exit(&s);
        while (!s.done) {
                r = sym_sd_event_run(s.event, UINT64_MAX);
                if (r < 0)
                        return run_fail("run %s: event loop failed: %s", s.id, strerror(-r));
        }
        progress_clear(&s);

        if (s.abandoned) {
                fprintf(stderr, "skillctl: not waiting for run %s any more; see 'skillctl status %s'\n",
                        s.id, s.id);
                r = 128 + SIGINT;
        } else if (s.gone && !s.finished)
                r = run_fail("run %s: the skilld service went away before the run finished", s.id);
        else
                r = report(&s);

        /* Nothing talks to the service after the run: the connection is flushed and closed before
         * the slots go, and the bus drops its matches with it, instead of a RemoveMatch for each. */
        c->bus = sym_sd_bus_flush_close_unref(c->bus);
        return r;
}
