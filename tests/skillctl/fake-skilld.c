/* A fake io.skilld.Skilld1 for testing skillctl as a client: the API of dbus/io.skilld.Skilld1.xml,
 * implemented minimally over canned runs, on the bus DBUS_SYSTEM_BUS_ADDRESS names or, with
 * --socket, as a private socket like /run/skilld/bus. It records what clients passed (what kind of
 * fd the skill came as, whether it was sealed and a zip the loader accepts, the options) in the
 * --report file, one line per call, for the test to check.
 *
 * Canned runs, owned by the uid of this process unless said otherwise:
 *   aaaa...  finished, succeeded: logs, and artifacts report.txt and data/table.csv
 *   bbbb...  running until canceled
 *   cccc...  someone else's (uid + 1): invisible, as the API says
 *   dddd...  finished: an artifact whose path climbs out ("../escape.txt") and one whose
 *            listed hash is wrong
 *   eeee...  running: once its log is opened, it prints "tick N" five times, then finishes
 * Runs from Run/RunInstalled behave by their first argument: "exit=N" fails with N, "sleep" runs
 * until canceled; otherwise they succeed at once, writing to the passed stdout and stderr.
 * ListAllRuns and any run asking for network are refused as polkit would (AccessDenied).
 * It has no ListRunsFiltered, as a service older than that method: skillctl's listing and its run
 * id prefixes then go through ListRuns (the real service's pages: tests/daemon, the VM).
 * With --no-fds the private socket does not negotiate fd passing, as a connection over SSH does
 * not; ReadLog and ReadArtifact then serve what OpenLog and OpenArtifact would, 5 bytes per
 * call (the real service: 4 MiB), so that clients are seen reading in a loop. */
#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-errors.h"
#include "engine.h"
#include "fileio.h"
#include "hash.h"
#include "json-exact.h"
#include "loader.h"
#include "parse-util.h"
#include "skill.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

#define NAME "io.skilld.Skilld1"
#define PATH "/io/skilld/Skilld1"
#define RUN_PREFIX PATH "/run"
#define MANAGER NAME ".Manager"
#define RUN NAME ".Run"
#define MAX_BUSES 32
#define MAX_RUNS 64
#define MAX_ARTIFACTS 4
#define MAX_SKILLS 8

typedef struct Artifact {
        const char *path;
        const char *content;
        const char *sha256;             /* NULL: the real one */
} Artifact;

typedef struct Run {
        char id[33];
        char path[sizeof(RUN_PREFIX) + 40];
        uid_t owner;
        char *skill, *script, *state, *status;
        int exit_code;
        bool network;
        uint64_t created, started, finished;
        int log_fd[2];                  /* memfds holding stdout and stderr */
        int live_fd[2];                 /* the client's, while the run goes */
        Artifact artifacts[MAX_ARTIFACTS];
        size_t n_artifacts;
        unsigned ticks;                 /* eeee: lines printed so far */
        sd_event_source *timer;
        bool removed;
} Run;

typedef struct InstalledSkill {
        char name[65];
        char hash[65];
        const char *origin;
} InstalledSkill;

static sd_event *event;
static sd_bus *buses[MAX_BUSES];
static size_t n_buses;
static Run runs[MAX_RUNS];
static size_t n_runs;
static InstalledSkill skills[MAX_SKILLS];
static size_t n_skills;
static FILE *report;
static bool arg_no_fds;
static unsigned next_id = 1;

_printf_(1, 2)
static void record(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vfprintf(report, fmt, ap);
        va_end(ap);
        (void) fputc('\n', report);
        (void) fflush(report);
}

static uint64_t now(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void append_log(Run *r, int stream, const char *text) {
        (void) lseek(r->log_fd[stream], 0, SEEK_END);
        (void) loop_write(r->log_fd[stream], text, strlen(text));
        if (r->live_fd[stream] >= 0)
                (void) loop_write(r->live_fd[stream], text, strlen(text));
}

static void run_set_id(Run *r, const char *id) {
        char copy[sizeof(r->id)];

        (void) snprintf(copy, sizeof(copy), "%s", id);
        memcpy(r->id, copy, sizeof(copy));
        (void) snprintf(r->path, sizeof(r->path), RUN_PREFIX "/%s", copy);
}

/* Canned runs have ids of one repeated digit. */
static void run_set_canned_id(Run *r, char digit) {
        char id[33];

        memset(id, digit, 32);
        id[32] = '\0';
        run_set_id(r, id);
}

static Run *run_new(uid_t owner, const char *skill, const char *script, const char *state) {
        Run *r = &runs[n_runs++];
        char id[33];

        *r = (Run) {
                .owner = owner,
                .skill = strdup(skill),
                .script = strdup(script),
                .state = strdup(state),
                .status = strdup(""),
                .exit_code = -1,
                .created = now(),
                .log_fd = { memfd_create("stdout", MFD_CLOEXEC), memfd_create("stderr", MFD_CLOEXEC) },
                .live_fd = { -EBADF, -EBADF },
        };
        (void) snprintf(id, sizeof(id), "%032x", next_id++);
        run_set_id(r, id);
        return r;
}

static Run *run_find(const char *id) {
        for (size_t i = 0; i < n_runs; i++)
                if (!runs[i].removed && streq(runs[i].id, id))
                        return &runs[i];
        return NULL;
}

static uid_t caller_uid(sd_bus_message *m) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid = (uid_t) -1;

        if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds) >= 0)
                (void) sd_bus_creds_get_euid(creds, &uid);
        return uid;
}

/* The owner only: the fake knows no administrators. */
static bool visible(sd_bus_message *m, const Run *r) {
        return r && !r->removed && r->owner == caller_uid(m);
}

/* The result JSON through the engine's own encoder: the client reads the real format. */
static char *result_json(const Run *r) {
        static const char output_text[] = "{\"big\": 12345678901234567890, \"f\": 1.0}";
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *output = NULL;
        RunArtifact artifacts[MAX_ARTIFACTS] = {};
        RunResult res = {
                .run_id = (char *) r->id,
                .skill_name = r->skill,
                .skill_hash = (char *) "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                .script = r->script,
                .status = run_status_from_string(r->status),
                .exit_code = r->exit_code,
                .artifacts = artifacts,
                .n_artifacts = r->n_artifacts,
                .usage = { .wall_usec = 420000, .memory_peak = 3 * 1024 * 1024, .tasks_peak = 2 },
                .limits = SANDBOX_LIMITS_DEFAULT,
                .backend = "fake",
                .uid = (uid_t) -1,
                .started_at = r->started,
                .ended_at = r->finished,
        };

        /* An output as a skill may write it, which the client must pass on exactly. */
        if (json_parse_exact(output_text, strlen(output_text), &output, NULL) < 0)
                return NULL;
        res.output = output;
        for (size_t i = 0; i < r->n_artifacts; i++)
                artifacts[i] = (RunArtifact) {
                        .path = (char *) r->artifacts[i].path,
                        .size = strlen(r->artifacts[i].content),
                };
        if (run_result_to_json(&res, &j) < 0)
                return NULL;
        return cJSON_Print(j);
}

static void emit_all(const char *member, const Run *r) {
        for (size_t i = 0; i < n_buses; i++) {
                if (streq(member, "RunStarted"))
                        (void) sd_bus_emit_signal(buses[i], PATH, MANAGER, member, "so", r->id, r->path);
                else {
                        (void) sd_bus_emit_properties_changed(buses[i], r->path, RUN, "State", "Status",
                                                              "ExitCode", "Result", NULL);
                        (void) sd_bus_emit_signal(buses[i], PATH, MANAGER, member, "sosi", r->id, r->path,
                                                  r->status, r->exit_code);
                }
        }
}

static void run_finish(Run *r, const char *status, int exit_code) {
        free(r->state);
        free(r->status);
        r->state = strdup("finished");
        r->status = strdup(status);
        r->exit_code = exit_code;
        r->finished = now();
        r->timer = sd_event_source_disable_unref(r->timer);
        /* The output is all written before RunFinished, and the client's pipes close. */
        for (int k = 0; k < 2; k++)
                r->live_fd[k] = safe_close(r->live_fd[k]);
        emit_all("RunFinished", r);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Run *r = userdata;
        char line[32];

        (void) snprintf(line, sizeof(line), "tick %u\n", ++r->ticks);
        append_log(r, 0, line);
        if (r->ticks >= 5) {
                run_finish(r, "succeeded", 0);
                return 0;
        }
        (void) sd_event_source_set_time_relative(s, 100000);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void strextend(char *buf, size_t l, const char *s) {
        size_t n = strlen(buf);

        (void) snprintf(buf + n, l - n, "%s", s);
}

/* Describes an fd for the report: what kind, sealed or not. */
static void describe_fd(int fd, char *buf, size_t l) {
        char proc[64], target[256] = {};
        struct stat st;
        int seals;

        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (readlink(proc, target, sizeof(target) - 1) < 0)
                target[0] = '\0';
        seals = fcntl(fd, F_GET_SEALS);
        if (fstat(fd, &st) < 0)
                (void) snprintf(buf, l, "unreadable");
        else
                (void) snprintf(buf, l, "%s sealed=%s",
                                startswith(target, "/memfd:") ? "memfd" : S_ISREG(st.st_mode) ? "file" :
                                S_ISFIFO(st.st_mode) ? "fifo" : "other",
                                seals > 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL) ? "yes" : "no");
}

/* Reads the skill from fd as the daemon would: a zip the loader accepts, with a SKILL.md. */
static int load_skill(int fd, char **ret_name, sd_bus_error *error) {
        _cleanup_(skill_source_freep) SkillSource *source = NULL;
        _cleanup_(skill_freep) Skill *skill = NULL;
        _cleanup_free_ char *msg = NULL;
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        char magic[4] = {};
        int r;

        /* The errors set here go out as the reply; the handler returns the errno. */
        if (pread(fd, magic, sizeof(magic), 0) != sizeof(magic) || memcmp(magic, "PK\3\4", 4) != 0) {
                (void) sd_bus_error_set(error, SKILLD_ERROR_INVALID_SKILL,
                                        "The skill is not a zip archive.");
                return -EBADMSG;
        }
        r = skill_source_open_fd(fd, "skill", &limits, &source, &msg);
        if (r >= 0)
                r = skill_load_at(source->dir_fd, &skill, &msg);
        if (r < 0) {
                (void) sd_bus_error_setf(error, SKILLD_ERROR_INVALID_SKILL, "%s", msg ?: strerror(-r));
                return -EBADMSG;
        }
        *ret_name = strdup(strempty(skill->name));
        return *ret_name ? 0 : -ENOMEM;
}

static int read_options(sd_bus_message *m, Run *r, char **ret_desc, bool *ret_network) {
        _cleanup_free_ char *desc = strdup("");
        const char *key;
        int k;

        k = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (k >= 0 && (k = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                char *n = NULL;

                k = sd_bus_message_read(m, "s", &key);
                if (k < 0)
                        return k;
                if (streq(key, "limits") || streq(key, "env") || streq(key, "files")) {
                        const char *type = streq(key, "limits") ? "t" : streq(key, "env") ? "s" : "h";
                        char v_sig[8], a_sig[8], e_sig[8];

                        (void) snprintf(v_sig, sizeof(v_sig), "a{s%s}", type);
                        (void) snprintf(a_sig, sizeof(a_sig), "{s%s}", type);
                        (void) snprintf(e_sig, sizeof(e_sig), "s%s", type);
                        k = sd_bus_message_enter_container(m, 'v', v_sig);
                        if (k >= 0)
                                k = sd_bus_message_enter_container(m, 'a', a_sig);
                        while (k >= 0 && (k = sd_bus_message_enter_container(m, 'e', e_sig)) > 0) {
                                const char *name, *s;
                                uint64_t v;
                                int fd;
                                char *item = NULL;

                                k = sd_bus_message_read(m, "s", &name);
                                if (k < 0)
                                        return k;
                                if (streq(key, "limits")) {
                                        k = sd_bus_message_read(m, "t", &v);
                                        item = strdup_printf("%s=%" PRIu64, name, v);
                                } else if (streq(key, "env")) {
                                        k = sd_bus_message_read(m, "s", &s);
                                        item = strdup_printf("%s=%s", name, s);
                                } else {
                                        _cleanup_free_ char *data = NULL;
                                        char what[64];

                                        k = sd_bus_message_read(m, "h", &fd);
                                        if (k < 0)
                                                return k;
                                        describe_fd(fd, what, sizeof(what));
                                        if (read_full_fd(fd, 4096, &data, NULL) < 0)
                                                data = strdup("<unreadable>");
                                        if (!data)
                                                return -ENOMEM;
                                        data[strcspn(data, "\n")] = 0;
                                        item = strdup_printf("%s:%s:%s", name, what, data);
                                }
                                if (k < 0 || !item)
                                        return -EINVAL;
                                n = strdup_printf("%s %s.%s", desc, key, item);
                                free(item);
                                free(desc);
                                desc = n;
                                k = sd_bus_message_exit_container(m);
                        }
                        if (k >= 0)
                                k = sd_bus_message_exit_container(m);
                        if (k >= 0)
                                k = sd_bus_message_exit_container(m);
                } else if (streq(key, "network")) {
                        int b;

                        k = sd_bus_message_read(m, "v", "b", &b);
                        *ret_network = b;
                        n = strdup_printf("%s network=%d", desc, b);
                        free(desc);
                        desc = n;
                } else if (streq(key, "stdout") || streq(key, "stderr")) {
                        int fd, stream = streq(key, "stderr");
                        char what[64];

                        k = sd_bus_message_read(m, "v", "h", &fd);
                        if (k < 0)
                                return k;
                        describe_fd(fd, what, sizeof(what));
                        r->live_fd[stream] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                        n = strdup_printf("%s %s=%s", desc, key, what);
                        free(desc);
                        desc = n;
                } else
                        k = sd_bus_message_skip(m, "v");
                if (k >= 0)
                        k = sd_bus_message_exit_container(m);
                if (!desc)
                        return -ENOMEM;
        }
        if (k >= 0)
                k = sd_bus_message_exit_container(m);
        if (k < 0)
                return k;
        *ret_desc = TAKE_PTR(desc);
        return 0;
}

static int start_run(sd_bus_message *m, const char *skill, const char *what, sd_bus_error *error) {
        _cleanup_strv_free_ char **args = NULL;
        _cleanup_free_ char *desc = NULL, *joined = strdup("");
        const char *script, *input;
        bool network = false;
        Run *r;
        int k;

        k = sd_bus_message_read(m, "s", &script);
        if (k >= 0)
                k = sd_bus_message_read_strv(m, &args);
        if (k >= 0)
                k = sd_bus_message_read(m, "s", &input);
        if (k < 0)
                return k;
        if (n_runs >= MAX_RUNS)
                return sd_bus_error_set(error, SKILLD_ERROR_QUOTA_EXCEEDED, "Too many runs queued.");

        r = run_new(caller_uid(m), skill, script, "running");
        k = read_options(m, r, &desc, &network);
        if (k < 0)
                return k;
        STRV_FOREACH(a, args) {
                char *n = strdup_printf("%s%s%s", joined, isempty(joined) ? "" : ",", *a);
                free(joined);
                joined = n;
                if (!joined)
                        return -ENOMEM;
        }
        record("run %s skill=%s %s script=%s args=%s input=%s%s", r->id, skill, what, script, joined,
               input, desc);
        if (network) {
                r->removed = true;
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Not authorized to run skills with network (io.skilld.network).");
        }

        r->started = now();
        emit_all("RunStarted", r);
        if (args && startswith(args[0], "exit=")) {
                int code = 1;

                (void) safe_atoi(args[0] + 5, &code);
                append_log(r, 1, "failing on purpose\n");
                run_finish(r, "failed", code);
        } else if (!(args && streq(args[0], "sleep"))) {
                char line[128];

                (void) snprintf(line, sizeof(line), "fake output of %s\n", skill);
                append_log(r, 0, line);
                append_log(r, 1, "fake diagnostics\n");
                run_finish(r, "succeeded", 0);
        }
        return sd_bus_reply_method_return(m, "so", r->id, r->path);
}

static int method_run(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        char what[64];
        int fd, k;

        k = sd_bus_message_read(m, "h", &fd);
        if (k < 0)
                return k;
        describe_fd(fd, what, sizeof(what));
        k = load_skill(fd, &name, error);
        if (k < 0) {
                record("run-refused %s %s", what, error->message);
                return k;
        }
        /* The loader took it: a zip holding a skill. */
        strextend(what, sizeof(what), " zip=ok");
        return start_run(m, name, what, error);
}

static int method_run_installed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name;
        int k;

        k = sd_bus_message_read(m, "s", &name);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n_skills; i++)
                if (streq(skills[i].name, name))
                        return start_run(m, name, "installed", error);
        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SKILL, "No skill '%s' is installed.", name);
}

static int reply_runs(sd_bus_message *m, bool all) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int k;

        k = sd_bus_message_new_method_return(m, &reply);
        if (k >= 0)
                k = sd_bus_message_open_container(reply, 'a', "(sossussitt)");
        for (size_t i = 0; k >= 0 && i < n_runs; i++) {
                const Run *r = &runs[i];

                if (!r->removed && (all || visible(m, r)))
                        k = sd_bus_message_append(reply, "(sossussitt)", r->id, r->path, r->skill, r->script,
                                                  r->owner, r->state, r->status, r->exit_code, r->created,
                                                  r->finished);
        }
        if (k >= 0)
                k = sd_bus_message_close_container(reply);
        if (k < 0)
                return k;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_list_runs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return reply_runs(m, false);
}

static int method_list_all_runs(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        record("list-all-refused");
        return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                "Not authorized to see other users' runs (io.skilld.manage-runs).");
}

static int method_get_run(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *id;
        Run *r;
        int k;

        k = sd_bus_message_read(m, "s", &id);
        if (k < 0)
                return k;
        r = run_find(id);
        if (!visible(m, r))
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_RUN, "No run %s.", id);
        return sd_bus_reply_method_return(m, "o", r->path);
}

static int method_list_skills(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int k;

        k = sd_bus_message_new_method_return(m, &reply);
        if (k >= 0)
                k = sd_bus_message_open_container(reply, 'a', "(ssss)");
        for (size_t i = 0; k >= 0 && i < n_skills; i++)
                k = sd_bus_message_append(reply, "(ssss)", skills[i].name, "A canned skill.", skills[i].hash,
                                          skills[i].origin);
        if (k >= 0)
                k = sd_bus_message_close_container(reply);
        if (k < 0)
                return k;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_install_skill(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        char what[64];
        int fd, replace, k;
        size_t i;

        k = sd_bus_message_read(m, "hb", &fd, &replace);
        if (k < 0)
                return k;
        describe_fd(fd, what, sizeof(what));
        k = load_skill(fd, &name, error);
        if (k < 0)
                return k;
        record("install name=%s %s zip=ok replace=%d", name, what, replace);
        for (i = 0; i < n_skills; i++)
                if (streq(skills[i].name, name))
                        break;
        if (i < n_skills && !replace)
                return sd_bus_error_setf(error, SKILLD_ERROR_SKILL_EXISTS, "A skill '%s' is installed.",
                                         name);
        if (i == n_skills) {
                if (n_skills >= MAX_SKILLS)
                        return -ENOSPC;
                n_skills++;
        }
        skills[i].origin = "installed";
        (void) snprintf(skills[i].name, sizeof(skills[i].name), "%s", name);
        memset(skills[i].hash, 'f', 64);
        return sd_bus_reply_method_return(m, "ss", name, skills[i].hash);
}

static int method_remove_skill(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *name;
        int k;

        k = sd_bus_message_read(m, "s", &name);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n_skills; i++)
                if (streq(skills[i].name, name) && streq(skills[i].origin, "installed")) {
                        skills[i] = skills[--n_skills];
                        record("remove name=%s", name);
                        return sd_bus_reply_method_return(m, NULL);
                }
        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_SKILL, "No skill '%s' was installed.", name);
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", "fake");
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Run", "hsassa{sv}", "so", method_run, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("RunInstalled", "ssassa{sv}", "so", method_run_installed, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListRuns", "", "a(sossussitt)", method_list_runs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListAllRuns", "", "a(sossussitt)", method_list_all_runs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("GetRun", "s", "o", method_get_run, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListSkills", "", "a(ssss)", method_list_skills, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("InstallSkill", "hb", "ss", method_install_skill, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("RemoveSkill", "s", "", method_remove_skill, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("RunStarted", "so", 0),
        SD_BUS_SIGNAL("RunFinished", "sosi", 0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END,
};

/* Run objects: the object is found for any id, every member checks that the caller may see it. */
static int find_run(sd_bus *bus, const char *path, const char *interface, void *userdata, void **ret_found,
                    sd_bus_error *error) {
        const char *id = startswith(path, RUN_PREFIX "/");
        Run *r = id ? run_find(id) : NULL;

        if (!r)
                return 0;
        *ret_found = r;
        return 1;
}

#define CHECK_VISIBLE(m, r, error)                                                              \
        do {                                                                                    \
                if (!visible((m), (r)))                                                         \
                        return sd_bus_error_setf((error), SKILLD_ERROR_NO_SUCH_RUN, "No run %s.", \
                                                 (r)->id);                                      \
        } while (false)

static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Run *r = userdata;

        CHECK_VISIBLE(m, r, error);
        if (!streq(r->state, "running") && !streq(r->state, "queued"))
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_FINISHED, "Run %s has ended.", r->id);
        record("cancel %s", r->id);
        run_finish(r, "canceled", -1);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_list_artifacts(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Run *r = userdata;
        int k;

        CHECK_VISIBLE(m, r, error);
        k = sd_bus_message_new_method_return(m, &reply);
        if (k >= 0)
                k = sd_bus_message_open_container(reply, 'a', "(sts)");
        for (size_t i = 0; k >= 0 && i < r->n_artifacts; i++) {
                const Artifact *a = &r->artifacts[i];
                char hex[65];
                int fd = memfd_create("a", MFD_CLOEXEC);

                (void) loop_write(fd, a->content, strlen(a->content));
                (void) lseek(fd, 0, SEEK_SET);
                (void) sha256_fd(fd, hex, NULL);
                safe_close(fd);
                k = sd_bus_message_append(reply, "(sts)", a->path, (uint64_t) strlen(a->content),
                                          a->sha256 ?: hex);
        }
        if (k >= 0)
                k = sd_bus_message_close_container(reply);
        if (k < 0)
                return k;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_open_artifact(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        Run *r = userdata;
        const char *path;
        int k;

        CHECK_VISIBLE(m, r, error);
        k = sd_bus_message_read(m, "s", &path);
        if (k < 0)
                return k;
        for (size_t i = 0; i < r->n_artifacts; i++)
                if (streq(r->artifacts[i].path, path)) {
                        fd = memfd_create("artifact", MFD_CLOEXEC);
                        (void) loop_write(fd, r->artifacts[i].content, strlen(r->artifacts[i].content));
                        (void) lseek(fd, 0, SEEK_SET);
                        record("open-artifact %s %s", r->id, path);
                        return sd_bus_reply_method_return(m, "h", fd);
                }
        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_ARTIFACT, "Run %s has no artifact %s.", r->id,
                                 path);
}

static int method_open_log(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        char proc[64];
        Run *r = userdata;
        const char *stream;
        int k;

        CHECK_VISIBLE(m, r, error);
        k = sd_bus_message_read(m, "s", &stream);
        if (k < 0)
                return k;
        if (!streq(stream, "stdout") && !streq(stream, "stderr"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No stream '%s'.", stream);
        /* A new open file description: each reader has its own offset. */
        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", r->log_fd[streq(stream, "stderr")]);
        fd = open(proc, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (r->id[0] == 'e' && !r->timer && streq(r->state, "running"))
                (void) sd_event_add_time_relative(event, &r->timer, CLOCK_MONOTONIC, 100000, 0, on_tick, r);
        return sd_bus_reply_method_return(m, "h", fd);
}

#define READ_CAP 5

static int reply_bytes(sd_bus_message *m, const void *data, size_t size, uint64_t offset, uint64_t max) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        size_t n = 0;
        int k;

        if (offset < size)
                n = MIN(MIN(max, (uint64_t) READ_CAP), (uint64_t) (size - offset));
        k = sd_bus_message_new_method_return(m, &reply);
        if (k >= 0)
                k = sd_bus_message_append_array(reply, 'y', (const uint8_t *) data + (n ? offset : 0), n);
        if (k < 0)
                return k;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_read_artifact(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Run *r = userdata;
        uint64_t offset, max;
        const char *path;
        int k;

        CHECK_VISIBLE(m, r, error);
        k = sd_bus_message_read(m, "stt", &path, &offset, &max);
        if (k < 0)
                return k;
        for (size_t i = 0; i < r->n_artifacts; i++)
                if (streq(r->artifacts[i].path, path)) {
                        if (offset == 0)
                                record("read-artifact %s %s", r->id, path);
                        return reply_bytes(m, r->artifacts[i].content, strlen(r->artifacts[i].content),
                                           offset, max);
                }
        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_ARTIFACT, "Run %s has no artifact %s.", r->id,
                                 path);
}

static int method_read_log(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        char buf[4096];
        Run *r = userdata;
        uint64_t offset, max;
        const char *stream;
        ssize_t n;
        int k;

        CHECK_VISIBLE(m, r, error);
        k = sd_bus_message_read(m, "stt", &stream, &offset, &max);
        if (k < 0)
                return k;
        if (!streq(stream, "stdout") && !streq(stream, "stderr"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No stream '%s'.", stream);
        n = pread(r->log_fd[streq(stream, "stderr")], buf, sizeof(buf), 0);
        if (n < 0)
                return -errno;
        if (r->id[0] == 'e' && !r->timer && streq(r->state, "running"))
                (void) sd_event_add_time_relative(event, &r->timer, CLOCK_MONOTONIC, 100000, 0, on_tick, r);
        return reply_bytes(m, buf, n, offset, max);
}

static int method_remove(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Run *r = userdata;

        CHECK_VISIBLE(m, r, error);
        if (streq(r->state, "running") || streq(r->state, "queued"))
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_ACTIVE, "Run %s is still running.", r->id);
        record("remove-run %s", r->id);
        r->removed = true;
        return sd_bus_reply_method_return(m, NULL);
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        sd_bus_message *m = sd_bus_get_current_message(bus);
        Run *r = userdata;

        CHECK_VISIBLE(m, r, error);
        if (streq(property, "Id"))
                return sd_bus_message_append(reply, "s", r->id);
        if (streq(property, "Skill"))
                return sd_bus_message_append(reply, "s", r->skill);
        if (streq(property, "SkillHash"))
                return sd_bus_message_append(reply, "s", "0123456789abcdef0123456789abcdef"
                                                         "0123456789abcdef0123456789abcdef");
        if (streq(property, "Script"))
                return sd_bus_message_append(reply, "s", r->script);
        if (streq(property, "Args"))
                return sd_bus_message_append(reply, "as", 1, "--flag");
        if (streq(property, "Owner"))
                return sd_bus_message_append(reply, "u", r->owner);
        if (streq(property, "State"))
                return sd_bus_message_append(reply, "s", r->state);
        if (streq(property, "Status"))
                return sd_bus_message_append(reply, "s", r->status);
        if (streq(property, "ExitCode"))
                return sd_bus_message_append(reply, "i", r->exit_code);
        if (streq(property, "Signal"))
                return sd_bus_message_append(reply, "i", 0);
        if (streq(property, "Result")) {
                _cleanup_free_ char *j = streq(r->state, "finished") ? result_json(r) : NULL;

                return sd_bus_message_append(reply, "s", strempty(j));
        }
        if (streq(property, "Unit"))
                return sd_bus_message_append(reply, "s",
                                             streq(r->state, "running") ? "skilld-run-x.scope" : "");
        if (streq(property, "Limits"))
                return sd_bus_message_append(reply, "a{st}", 2, "memory", (uint64_t) 512 << 20, "timeout",
                                             (uint64_t) 60000000);
        if (streq(property, "Network"))
                return sd_bus_message_append(reply, "b", r->network);
        if (streq(property, "CreatedTimestamp"))
                return sd_bus_message_append(reply, "t", r->created);
        if (streq(property, "StartedTimestamp"))
                return sd_bus_message_append(reply, "t", r->started);
        if (streq(property, "FinishedTimestamp"))
                return sd_bus_message_append(reply, "t", r->finished);
        if (streq(property, "Usage"))
                return sd_bus_message_append(reply, "a{st}", 2, "wall-usec", (uint64_t) 420000,
                                             "memory-peak", (uint64_t) 3 << 20);
        return -EINVAL;
}

#define RUN_PROPERTY(name, sig, flags) SD_BUS_PROPERTY(name, sig, property_get, 0, flags)

static const sd_bus_vtable run_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Cancel", "", "", method_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListArtifacts", "", "a(sts)", method_list_artifacts, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("OpenArtifact", "s", "h", method_open_artifact, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("OpenLog", "s", "h", method_open_log, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ReadArtifact", "stt", "ay", method_read_artifact, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ReadLog", "stt", "ay", method_read_log, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Remove", "", "", method_remove, SD_BUS_VTABLE_UNPRIVILEGED),
        RUN_PROPERTY("Id", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("Skill", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("SkillHash", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("Script", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("Args", "as", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("Owner", "u", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("State", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("Status", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("ExitCode", "i", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("Signal", "i", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("Result", "s", SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        RUN_PROPERTY("Unit", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("Limits", "a{st}", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("Network", "b", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("CreatedTimestamp", "t", SD_BUS_VTABLE_PROPERTY_CONST),
        RUN_PROPERTY("StartedTimestamp", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("FinishedTimestamp", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        RUN_PROPERTY("Usage", "a{st}", SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        SD_BUS_VTABLE_END,
};

static int serve(sd_bus *bus) {
        int k;

        if (n_buses >= MAX_BUSES)
                return -ENOSPC;
        k = sd_bus_add_object_vtable(bus, NULL, PATH, MANAGER, manager_vtable, NULL);
        if (k >= 0)
                k = sd_bus_add_fallback_vtable(bus, NULL, RUN_PREFIX, RUN, run_vtable, find_run, NULL);
        if (k >= 0)
                k = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (k < 0)
                return k;
        buses[n_buses++] = sd_bus_ref(bus);
        return 0;
}

static int on_connection(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        sd_id128_t id;
        int cfd, k;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0)
                return 0;
        k = sd_bus_new(&bus);
        if (k >= 0)
                k = sd_bus_set_fd(bus, cfd, cfd);
        if (k >= 0)
                k = sd_id128_randomize(&id);
        if (k >= 0)
                k = sd_bus_set_server(bus, true, id);
        if (k >= 0)
                k = sd_bus_negotiate_fds(bus, !arg_no_fds);
        if (k >= 0)
                k = sd_bus_start(bus);
        if (k >= 0)
                k = serve(bus);
        if (k < 0)
                fprintf(stderr, "fake-skilld: connection: %s\n", strerror(-k));
        return 0;
}

static void canned_runs(uid_t uid) {
        Run *r;

        r = run_new(uid, "shell-report", "scripts/main.sh", "running");
        run_set_canned_id(r, 'a');
        r->started = r->created;
        r->artifacts[0] = (Artifact) { "report.txt", "hello report\n", NULL };
        r->artifacts[1] = (Artifact) { "data/table.csv", "a,b\n1,2\n", NULL };
        r->n_artifacts = 2;
        append_log(r, 0, "line one\nline two\n");
        append_log(r, 1, "a warning\n");
        free(r->state);
        free(r->status);
        r->state = strdup("finished");
        r->status = strdup("succeeded");
        r->exit_code = 0;
        r->finished = r->created + 420000;

        r = run_new(uid, "slow", "scripts/main.py", "running");
        run_set_canned_id(r, 'b');
        r->started = r->created;

        r = run_new(uid + 1, "secret", "scripts/main.sh", "finished");
        run_set_canned_id(r, 'c');

        r = run_new(uid, "evil", "scripts/main.sh", "finished");
        run_set_canned_id(r, 'd');
        free(r->status);
        r->status = strdup("succeeded");
        r->exit_code = 0;
        r->artifacts[0] = (Artifact) { "../escape.txt", "escaped\n", NULL };
        r->artifacts[1] = (Artifact) {
                "wrong-hash.txt", "content\n",
                "0000000000000000000000000000000000000000000000000000000000000000",
        };
        r->n_artifacts = 2;

        r = run_new(uid, "ticker", "scripts/main.sh", "running");
        run_set_canned_id(r, 'e');
        r->started = r->created;

        skills[n_skills++] = (InstalledSkill) { .name = "shell-report", .origin = "vendor" };
        memset(skills[0].hash, 'a', 64);
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(event, 0);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "report", required_argument, NULL, 'r' },
                { "socket", required_argument, NULL, 's' },
                { "ready",  required_argument, NULL, 'R' },
                { "no-fds", no_argument,       NULL, 'N' },
                {}
        };
        const char *report_path = NULL, *socket_path = NULL, *ready_path = NULL;
        _cleanup_close_ int listen_fd = -EBADF;
        sigset_t mask;
        int c, k;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        report_path = optarg;
                        break;
                case 's':
                        socket_path = optarg;
                        break;
                case 'R':
                        ready_path = optarg;
                        break;
                case 'N':
                        arg_no_fds = true;
                        break;
                default:
                        return EXIT_FAILURE;
                }
        if (!report_path || !ready_path)
                return fprintf(stderr, "fake-skilld: --report and --ready are required\n"), EXIT_FAILURE;
        report = fopen(report_path, "ae");
        if (!report)
                return EXIT_FAILURE;

        k = bus_errors_register();
        if (k >= 0)
                k = sd_event_default(&event);
        if (k < 0)
                return EXIT_FAILURE;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) sd_event_add_signal(event, NULL, SIGTERM, on_term, NULL);
        (void) sd_event_add_signal(event, NULL, SIGINT, on_term, NULL);
        (void) signal(SIGPIPE, SIG_IGN);
        canned_runs(getuid());

        if (socket_path) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };

                listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (listen_fd < 0 || strlen(socket_path) >= sizeof(sa.sun_path))
                        return EXIT_FAILURE;
                strcpy(sa.sun_path, socket_path);
                (void) unlink(socket_path);
                if (bind(listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(listen_fd, 16) < 0 ||
                    sd_event_add_io(event, NULL, listen_fd, EPOLLIN, on_connection, NULL) < 0)
                        return EXIT_FAILURE;
        } else {
                _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;

                k = sd_bus_open_system(&bus);
                if (k >= 0)
                        k = serve(bus);
                if (k >= 0)
                        k = sd_bus_request_name(bus, NAME, 0);
                if (k < 0) {
                        fprintf(stderr, "fake-skilld: %s\n", strerror(-k));
                        return EXIT_FAILURE;
                }
        }

        if (write_file_atomic_at(AT_FDCWD, ready_path, "ready\n", 6, 0644) < 0)
                return EXIT_FAILURE;
        k = sd_event_loop(event);

        for (size_t i = 0; i < n_buses; i++)
                sd_bus_flush_close_unref(buses[i]);
        (void) fclose(report);
        return k < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
