/* The Run objects: /io/skilld/Skilld1/run/<id>, one per run in the store, made on demand by a
 * fallback vtable (a store may hold thousands of runs; none costs anything until asked about).
 *
 * Visibility, a SECURITY rule: a run is its owner's. A bus filter looks at every call to a run
 * object before sd-bus dispatches it: the owner and root pass; anyone else passes only if polkit
 * grants io.skilld.manage-runs (asked asynchronously: the call is held and dispatched again), and
 * otherwise gets NoSuchRun, exactly as for a run that does not exist. polkit is asked whether or
 * not the run exists, so not even the time the answer takes tells a run apart from no run. The
 * object's find function then admits only what the filter let through, so properties
 * (org.freedesktop.DBus.Properties, served by sd-bus itself) are covered as well as methods.
 *
 * Signals, the same rule: RunStarted, RunFinished and the run's PropertiesChanged are never
 * broadcast on the system bus, where anyone may add a match for them. Each goes, unicast, to the
 * run's peers: the connection that submitted it and those the filter let through to it since
 * (tracked in peer-names.c, so they drop out when they disconnect). A client that wants to hear
 * of a run it did not submit asks about it first (a Get of its State), which also tells it the
 * state it might otherwise have missed. Direct connections (the private and root sockets) by the
 * same rule: a connection hears of the runs it submitted and of those it asked about, not of
 * every run its uid may see (root's would hear of every run of the system, each of its clients
 * paying for all the others' runs). */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "bus-errors.h"
#include "error.h"
#include "log.h"
#include "manager.h"

/* Peers told about one run (RUN_PEERS_MAX, in manager.h, which direct connections share), and
 * distinct peers over all active runs (PEERS_MAX), submitters aside: each name
 * tracked costs a match rule on the bus, of which dbus-daemon grants a connection 512 by default,
 * and a match the bus refuses closes our connection (sd-bus fails it). One connection hearing of
 * many runs costs one. Beyond these, a caller is only not told: it can still ask. Submitters are
 * always told (skillctl run waits for RunFinished): the policy bounds them to
 * POLICY_RUNS_IN_FLIGHT_MAX, and the two together leave room for the service's own matches. */
#define PEERS_MAX 128U

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* The most ReadLog and ReadArtifact return per call, whatever is asked: the reply is built in
 * memory and the bus caps messages; clients read in a loop until a call returns nothing. */
#define RUN_READ_MAX_BYTES (4U * 1024 * 1024)

int bus_run_object_path(const char *id, char **ret) {
        char *p;

        /* Run ids are lowercase hex: valid object path elements as they are. */
        if (!store_run_id_is_valid(id))
                return -EINVAL;
        p = strdup_printf(SKILLD_RUN_PATH_PREFIX "/%s", id);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

const char *bus_run_path_id(const char *path) {
        const char *id;

        if (!path)
                return NULL;
        id = startswith(path, SKILLD_RUN_PATH_PREFIX "/");
        return id && store_run_id_is_valid(id) ? id : NULL;
}

static StoreRun *record_of(Manager *m, const char *path) {
        const char *id = bus_run_path_id(path);

        return id ? store_get_run(m->store, id) : NULL;
}

static int no_such_run(sd_bus_error *error, const char *path) {
        const char *id = startswith(strempty(path), SKILLD_RUN_PATH_PREFIX "/");
        _cleanup_free_ char *shown = cescape(strempty(id));

        return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_RUN, "No run %s.", strna(shown));
}

static int add_direct_peer(Run *run, const Connection *c) {
        for (size_t i = 0; i < run->n_direct_peers; i++)
                if (run->direct_peers[i] == c->serial)
                        return 0;
        /* The submitter comes first, into an empty list: it always has its place. */
        if (run->n_direct_peers >= ELEMENTSOF(run->direct_peers))
                return -EUSERS;
        run->direct_peers[run->n_direct_peers++] = c->serial;
        return 0;
}

int bus_run_add_peer(Manager *m, Run *run, sd_bus_message *call, bool submitter) {
        sd_bus *bus = sd_bus_message_get_bus(call);
        const char *sender;
        Connection *c;
        int r;

        if (!m->bus || bus != m->bus) {
                c = manager_connection_of(m, bus);
                return c ? add_direct_peer(run, c) : 0;
        }
        sender = sd_bus_message_get_sender(call);
        if (!sender || strv_contains(run->peers, sender))
                return 0;
        if (!submitter && (strv_length(run->peers) >= RUN_PEERS_MAX ||
                           (peer_names_count(m->peers) >= PEERS_MAX && !peer_names_present(m->peers, sender))))
                return -EUSERS;
        /* A submitter whose call waited for polkit may have left meanwhile: its run would be
         * recorded and started for nobody. Watched since before polkit was asked, so known now
         * without waiting (polkit.h). */
        if (submitter && polkit_caller_left(m->polkit, call))
                return -ENXIO;
        /* Counted: a name stays tracked while any run still has it. */
        r = peer_names_add(m->peers, sender);
        if (r < 0)
                return r;
        r = strv_extend(&run->peers, sender);
        if (r < 0) {
                peer_names_remove(m->peers, sender);
                return r;
        }
        return 0;
}

/* A caller let through to an active run hears about it from now on. */
static void track_caller(Manager *m, const char *id, sd_bus_message *msg) {
        Run *run = manager_find_active(m, id);
        int r;

        if (!run)
                return;
        r = bus_run_add_peer(m, run, msg, false);
        if (r < 0)
                log_debug_errno(r, "Not telling %s about run %s: %m", strna(sd_bus_message_get_sender(msg)),
                                run->record->id);
}

static int run_filter(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_error_free) sd_bus_error polkit_error = SD_BUS_ERROR_NULL;
        Manager *m = userdata;
        const char *path, *id;
        StoreRun *record;
        uid_t uid;
        int r;

        m->authorized_call = NULL;
        if (sd_bus_message_is_method_call(msg, NULL, NULL) <= 0)
                return 0;
        path = sd_bus_message_get_path(msg);
        id = path ? startswith(path, SKILLD_RUN_PATH_PREFIX "/") : NULL;
        if (isempty(id))
                return 0;

        r = bus_caller_uid(msg, &uid, error);
        if (r < 0)
                return r;
        record = store_run_id_is_valid(id) ? store_get_run(m->store, id) : NULL;
        if (uid == 0 || (record && record->owner == uid)) {
                track_caller(m, id, msg);
                return 0;
        }

        {
                char *details[] = { (char *) "run", (char *) id, NULL };

                r = polkit_check_async(m->polkit, msg, "io.skilld.manage-runs", details, UID_INVALID,
                                       &polkit_error);
        }
        if (r == 0)
                return 1;       /* held until polkit answers; the call comes back through here */
        if (r < 0)
                return no_such_run(error, path);
        m->authorized_call = msg;
        track_caller(m, id, msg);
        return 0;
}

static int run_object_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                           void **found, sd_bus_error *error) {
        Manager *m = userdata;
        sd_bus_message *call = sd_bus_get_current_message(bus);
        StoreRun *record;
        uid_t uid;

        /* The fallback covers its own path too: that is only a parent node, no run. */
        if (!startswith(path, SKILLD_RUN_PATH_PREFIX "/"))
                return 0;
        record = record_of(m, path);
        if (!record)
                return no_such_run(error, path);
        if (call && call != m->authorized_call) {
                if (bus_message_get_caller_uid(call, &uid) < 0 || (uid != 0 && uid != record->owner))
                        return no_such_run(error, path);
        }
        *found = m;
        return 1;
}

static int run_node_enumerator(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                               sd_bus_error *error) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_free_ StoreRun **runs = NULL;
        sd_bus_message *call = sd_bus_get_current_message(bus);
        Manager *m = userdata;
        size_t n = 0;
        uid_t uid;
        int r;

        /* Introspection lists the caller's own runs only (everyone's for root). */
        if (!call || bus_message_get_caller_uid(call, &uid) < 0) {
                *nodes = NULL;
                return 0;
        }
        r = store_list_runs(m->store, uid == 0 ? UID_INVALID : uid, &runs, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char *p;

                r = bus_run_object_path(runs[i]->id, &p);
                if (r >= 0)
                        r = strv_push(&l, p);
                if (r < 0)
                        return r;
        }
        *nodes = TAKE_PTR(l);
        return 0;
}

/* ---- Properties ---- */

#define GETTER(name) \
        static int name(sd_bus *bus, const char *path, const char *interface, const char *property, \
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)

GETTER(property_get_string) {
        StoreRun *record = record_of(userdata, path);
        const char *v = NULL;

        if (!record)
                return no_such_run(error, path);
        if (streq(property, "Id"))
                v = record->id;
        else if (streq(property, "Skill"))
                v = record->skill_name;
        else if (streq(property, "SkillHash"))
                v = record->skill_hash;
        else if (streq(property, "Script"))
                v = record->script;
        else if (streq(property, "State"))
                v = run_state_to_string(record->state);
        else if (streq(property, "Status"))
                v = record->state == RUN_FINISHED ? record->status : NULL;
        else if (streq(property, "Unit")) {
                Run *run = manager_find_active(userdata, record->id);

                v = run && run->running ? run->unit : NULL;
        }
        return sd_bus_message_append(reply, "s", strempty(v));
}

GETTER(property_get_owner) {
        StoreRun *record = record_of(userdata, path);

        if (!record)
                return no_such_run(error, path);
        return sd_bus_message_append(reply, "u", (uint32_t) record->owner);
}

GETTER(property_get_exit_code) {
        StoreRun *record = record_of(userdata, path);

        if (!record)
                return no_such_run(error, path);
        return sd_bus_message_append(reply, "i",
                                     (int32_t) (record->state == RUN_FINISHED ? record->exit_code : -1));
}

GETTER(property_get_timestamp) {
        StoreRun *record = record_of(userdata, path);
        uint64_t v;

        if (!record)
                return no_such_run(error, path);
        if (streq(property, "CreatedTimestamp"))
                v = record->created_usec;
        else if (streq(property, "StartedTimestamp"))
                v = record->started_usec;
        else
                v = record->finished_usec;
        return sd_bus_message_append(reply, "t", v);
}

/* The result JSON of a finished run, parsed; NULL when there is none (yet). */
static cJSON *read_result_json(Manager *m, const StoreRun *record) {
        _cleanup_free_ char *text = NULL;

        if (store_run_read_result(m->store, record, &text) < 0)
                return NULL;
        return cJSON_Parse(text);
}

static cJSON *read_request_json(Manager *m, const StoreRun *record) {
        _cleanup_free_ char *text = NULL;
        cJSON *j, *request;

        if (store_run_read_request(m->store, record, &text) < 0)
                return NULL;
        j = cJSON_Parse(text);
        if (!j)
                return NULL;
        /* The store wraps what we gave it under "request". */
        request = cJSON_DetachItemFromObjectCaseSensitive(j, "request");
        cJSON_Delete(j);
        return request;
}

GETTER(property_get_result) {
        StoreRun *record = record_of(userdata, path);
        _cleanup_free_ char *text = NULL;

        if (!record)
                return no_such_run(error, path);
        (void) store_run_read_result(((Manager *) userdata)->store, record, &text);
        return sd_bus_message_append(reply, "s", strempty(text));
}

GETTER(property_get_signal) {
        StoreRun *record = record_of(userdata, path);
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        const cJSON *v;

        if (!record)
                return no_such_run(error, path);
        /* Kept when the run finished here: its end's PropertiesChanged reads no file. */
        if (record->signal_known)
                return sd_bus_message_append(reply, "i", (int32_t) record->signal);
        j = read_result_json(userdata, record);
        v = cJSON_GetObjectItemCaseSensitive(j, "signal");
        return sd_bus_message_append(reply, "i", (int32_t) (cJSON_IsNumber(v) ? v->valuedouble : 0));
}

GETTER(property_get_usage) {
        static const char *const keys[][2] = {
                { "wall_usec", "wall-usec" },
                { "user_usec", "cpu-user-usec" },
                { "system_usec", "cpu-system-usec" },
                { "memory_peak", "memory-peak" },
                { "tasks_peak", "tasks-peak" },
        };
        StoreRun *record = record_of(userdata, path);
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        const cJSON *usage;
        int r;

        if (!record)
                return no_such_run(error, path);
        j = read_result_json(userdata, record);
        usage = cJSON_GetObjectItemCaseSensitive(j, "usage");

        r = sd_bus_message_open_container(reply, 'a', "{st}");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(keys) && usage; i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, keys[i][0]);

                /* Unknown figures are absent, not zero. */
                if (!cJSON_IsNumber(v) || v->valuedouble < 0)
                        continue;
                r = sd_bus_message_append(reply, "{st}", keys[i][1], (uint64_t) v->valuedouble);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

GETTER(property_get_args) {
        StoreRun *record = record_of(userdata, path);
        _cleanup_(cJSON_Deletep) cJSON *request = NULL;
        const cJSON *args, *a;
        int r;

        if (!record)
                return no_such_run(error, path);
        request = read_request_json(userdata, record);
        args = cJSON_GetObjectItemCaseSensitive(request, "args");
        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        cJSON_ArrayForEach(a, args)
                if (cJSON_IsString(a)) {
                        r = sd_bus_message_append(reply, "s", a->valuestring);
                        if (r < 0)
                                return r;
                }
        return sd_bus_message_close_container(reply);
}

GETTER(property_get_limits) {
        StoreRun *record = record_of(userdata, path);
        _cleanup_(cJSON_Deletep) cJSON *request = NULL;
        const cJSON *limits, *l;
        int r;

        if (!record)
                return no_such_run(error, path);
        request = read_request_json(userdata, record);
        limits = cJSON_GetObjectItemCaseSensitive(request, "limits");
        r = sd_bus_message_open_container(reply, 'a', "{st}");
        if (r < 0)
                return r;
        cJSON_ArrayForEach(l, limits)
                if (cJSON_IsNumber(l) && l->valuedouble >= 0) {
                        r = sd_bus_message_append(reply, "{st}", l->string, (uint64_t) l->valuedouble);
                        if (r < 0)
                                return r;
                }
        return sd_bus_message_close_container(reply);
}

GETTER(property_get_network) {
        StoreRun *record = record_of(userdata, path);
        _cleanup_(cJSON_Deletep) cJSON *request = NULL;

        if (!record)
                return no_such_run(error, path);
        request = read_request_json(userdata, record);
        return sd_bus_message_append(reply, "b",
                                     cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(request, "network")));
}

/* ---- Methods ---- */

static int method_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        int r;

        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));
        r = manager_cancel_run(m, record);
        if (r == -EALREADY)
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_FINISHED, "Run %s has ended already.",
                                         record->id);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to cancel run %s: %s", record->id,
                                            strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

/* The files among the artifacts of result j, as ListArtifacts lists them. */
static int append_artifacts(sd_bus_message *reply, const cJSON *j) {
        const cJSON *a;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sts)");
        if (r < 0)
                return r;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "artifacts")) {
                const cJSON *p = cJSON_GetObjectItemCaseSensitive(a, "path");
                const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, "type");
                const cJSON *size = cJSON_GetObjectItemCaseSensitive(a, "size");
                const cJSON *sha = cJSON_GetObjectItemCaseSensitive(a, "sha256");

                if (!cJSON_IsString(p) || !cJSON_IsString(t) || !streq(t->valuestring, "file"))
                        continue;
                r = sd_bus_message_append(reply, "(sts)", p->valuestring,
                                          (uint64_t) (cJSON_IsNumber(size) ? size->valuedouble : 0),
                                          cJSON_IsString(sha) ? sha->valuestring : "");
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int method_list_artifacts(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        Manager *m = userdata;
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        int r;

        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));
        j = read_result_json(m, record);
        if (!j)
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_RESULT, "Run %s has no result%s.",
                                         record->id, run_state_is_final(record->state) ? "" : " yet");

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = append_artifacts(reply, j);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Everything a client takes home from an ended run, in one reply rather than a State and a
 * Result read, ListArtifacts and two OpenLog calls (five round trips of the caller's, each
 * relayed by the bus). The artifacts are listed, not opened: there may be many, and a message
 * carries only so many fds. */
static int method_get_outcome(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        static const char *const streams[] = { "stdout", "stderr" };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        _cleanup_free_ char *text = NULL;
        Manager *m = userdata;
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        int r;

        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));
        if (!run_state_is_final(record->state))
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_ACTIVE, "Run %s is still %s.", record->id,
                                         run_state_to_string(record->state));
        /* An interrupted run has no result, and maybe some output. */
        (void) store_run_read_result(m->store, record, &text);
        j = text ? cJSON_Parse(text) : NULL;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "ss", run_state_to_string(record->state), strempty(text));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{sh}");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(streams); i++) {
                _cleanup_close_ int fd = -EBADF;

                if (store_run_open_log(m->store, record, streams[i], false, &fd) >= 0)
                        r = sd_bus_message_append(reply, "{sh}", streams[i], fd);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = append_artifacts(reply, j);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Opens the artifact path of the run the call is about as OpenArtifact hands it out, or sets the
 * error the caller should get. ReadArtifact shares it: both must refuse exactly the same. */
static int open_artifact(Manager *m, sd_bus_message *msg, const char *path, int *ret_fd,
                         sd_bus_error *error) {
        _cleanup_free_ char *why = NULL;
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        int r;

        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));

        r = store_run_open_artifact(m->store, record, path, ret_fd, &why);
        if (r == -ENOENT || r == -EPERM || r == -ENOTDIR)
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_SUCH_ARTIFACT, "%s",
                                         why ?: "No such artifact.");
        if (r == -EINVAL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "%s",
                                         why ?: "Invalid artifact path.");
        if (r < 0)
                return bus_error_set_errnof(error, r, "%s", why ?: strerror(-r));
        return 0;
}

/* As open_artifact(), for OpenLog and ReadLog. */
static int open_log(Manager *m, sd_bus_message *msg, const char *stream, int *ret_fd,
                    sd_bus_error *error) {
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        int r;

        if (!streq(stream, "stdout") && !streq(stream, "stderr"))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown stream; \"stdout\" or \"stderr\" are known.");
        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));

        r = store_run_open_log(m->store, record, stream, false, ret_fd);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, SKILLD_ERROR_NO_RESULT, "Run %s has no %s log.", record->id,
                                         stream);
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to open the %s log of run %s: %s", stream,
                                            record->id, strerror(-r));
        return 0;
}

static int method_open_artifact(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        const char *path;
        int r;

        r = sd_bus_message_read(msg, "s", &path);
        if (r < 0)
                return r;
        r = open_artifact(userdata, msg, path, &fd, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "h", fd);
}

static int method_open_log(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        const char *stream;
        int r;

        r = sd_bus_message_read(msg, "s", &stream);
        if (r < 0)
                return r;
        r = open_log(userdata, msg, stream, &fd, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "h", fd);
}

/* Replies with up to max_bytes (at most RUN_READ_MAX_BYTES) of fd from offset: fewer at the end
 * of the file, none past it. The file is read as it is now; a log still being written has more
 * for the next call. */
static int reply_read(sd_bus_message *msg, int fd, uint64_t offset, uint64_t max_bytes,
                      sd_bus_error *error) {
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t n = 0, want = 0;

        if (offset > (uint64_t) INT64_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Offset %" PRIu64 " is too large.", offset);
        if (fstat(fd, &st) < 0)
                return bus_error_set_errnof(error, -errno, "Failed to stat: %s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return bus_error_set_errnof(error, -EBADFD, "Not a regular file.");
        if ((uint64_t) st.st_size > offset)
                want = (size_t) MIN(MIN(max_bytes, (uint64_t) RUN_READ_MAX_BYTES),
                                   (uint64_t) st.st_size - offset);

        if (want > 0) {
                buf = malloc(want);
                if (!buf)
                        return -ENOMEM;
        }
        while (n < want) {
                ssize_t k = pread(fd, buf + n, want - n, (off_t) (offset + n));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return bus_error_set_errnof(error, -errno, "Failed to read: %s", strerror(errno));
                if (k == 0)
                        break;  /* truncated meanwhile */
                n += k;
        }

        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                int r;

                r = sd_bus_message_new_method_return(msg, &reply);
                if (r >= 0)
                        r = sd_bus_message_append_array(reply, 'y', buf, n);
                if (r < 0)
                        return r;
                return sd_bus_send(NULL, reply, NULL);
        }
}

static int method_read_artifact(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t offset, max_bytes;
        const char *path;
        int r;

        r = sd_bus_message_read(msg, "stt", &path, &offset, &max_bytes);
        if (r < 0)
                return r;
        r = open_artifact(userdata, msg, path, &fd, error);
        if (r < 0)
                return r;
        return reply_read(msg, fd, offset, max_bytes, error);
}

static int method_read_log(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t offset, max_bytes;
        const char *stream;
        int r;

        r = sd_bus_message_read(msg, "stt", &stream, &offset, &max_bytes);
        if (r < 0)
                return r;
        r = open_log(userdata, msg, stream, &fd, error);
        if (r < 0)
                return r;
        return reply_read(msg, fd, offset, max_bytes, error);
}

static int method_remove(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        StoreRun *record = record_of(m, sd_bus_message_get_path(msg));
        char id[STORE_RUN_ID_LEN + 1];
        int r;

        if (!record)
                return no_such_run(error, sd_bus_message_get_path(msg));
        memcpy(id, record->id, sizeof(id));
        r = manager_remove_run(m, record);
        if (r == -EBUSY)
                return sd_bus_error_setf(error, SKILLD_ERROR_RUN_ACTIVE,
                                         "Run %s is still %s; cancel it first.", id,
                                         run_state_to_string(record->state));
        if (r < 0)
                return bus_error_set_errnof(error, r, "Failed to remove run %s: %s", id, strerror(-r));
        log_info("Run %s removed.", id);
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable run_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("Id", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Skill", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SkillHash", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Script", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Args", "as", property_get_args, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Owner", "u", property_get_owner, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("State", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Status", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ExitCode", "i", property_get_exit_code, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Signal", "i", property_get_signal, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Result", "s", property_get_result, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        SD_BUS_PROPERTY("Unit", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Limits", "a{st}", property_get_limits, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Network", "b", property_get_network, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CreatedTimestamp", "t", property_get_timestamp, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("StartedTimestamp", "t", property_get_timestamp, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("FinishedTimestamp", "t", property_get_timestamp, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Usage", "a{st}", property_get_usage, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),

        SD_BUS_METHOD("Cancel", NULL, NULL, method_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListArtifacts",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a(sts)", artifacts),
                                method_list_artifacts,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetOutcome",
                                SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("s", state, "s", result, "a{sh}", logs, "a(sts)", artifacts),
                                method_get_outcome,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenArtifact",
                                SD_BUS_ARGS("s", path),
                                SD_BUS_RESULT("h", fd),
                                method_open_artifact,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("OpenLog",
                                SD_BUS_ARGS("s", stream),
                                SD_BUS_RESULT("h", fd),
                                method_open_log,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadArtifact",
                                SD_BUS_ARGS("s", path, "t", offset, "t", max_bytes),
                                SD_BUS_RESULT("ay", data),
                                method_read_artifact,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadLog",
                                SD_BUS_ARGS("s", stream, "t", offset, "t", max_bytes),
                                SD_BUS_RESULT("ay", data),
                                method_read_log,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Remove", NULL, NULL, method_remove, SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_VTABLE_END
};

int bus_run_add_objects(Manager *m, sd_bus *bus) {
        int r;

        r = sd_bus_add_filter(bus, NULL, run_filter, m);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(bus, NULL, SKILLD_RUN_PATH_PREFIX, SKILLD_RUN_INTERFACE, run_vtable,
                                       run_object_find, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(bus, NULL, SKILLD_RUN_PATH_PREFIX, run_node_enumerator, m);
}

/* ---- Telling those entitled ---- */

typedef struct Emission {
        Manager *manager;
        const StoreRun *record;
        const char *path;
        char **properties;              /* PropertiesChanged of these */
        const char *member;             /* else this signal of the Manager */
} Emission;

static const sd_bus_vtable *run_property(const char *name) {
        for (const sd_bus_vtable *v = run_vtable; v->type != _SD_BUS_VTABLE_END; v++)
                if (v->type == _SD_BUS_VTABLE_PROPERTY && streq(v->x.property.member, name))
                        return v;
        return NULL;
}

/* PropertiesChanged as sd-bus would send it: the values of the properties that emit changes,
 * the names of those that only invalidate (Result and Usage: large, and read on demand). */
static int append_changed(sd_bus *bus, sd_bus_message *msg, const Emission *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_append(msg, "s", SKILLD_RUN_INTERFACE);
        if (r >= 0)
                r = sd_bus_message_open_container(msg, 'a', "{sv}");
        STRV_FOREACH(p, e->properties) {
                const sd_bus_vtable *v = run_property(*p);

                if (r < 0)
                        return r;
                if (!v)
                        return -ENOENT;
                if (v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION)
                        continue;
                r = sd_bus_message_open_container(msg, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(msg, "s", *p);
                if (r >= 0)
                        r = sd_bus_message_open_container(msg, 'v', v->x.property.signature);
                if (r >= 0)
                        r = v->x.property.get(bus, e->path, SKILLD_RUN_INTERFACE, *p, msg, e->manager,
                                              &error);
                if (r >= 0)
                        r = sd_bus_message_close_container(msg);
                if (r >= 0)
                        r = sd_bus_message_close_container(msg);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(msg);
        if (r >= 0)
                r = sd_bus_message_open_container(msg, 'a', "s");
        STRV_FOREACH(p, e->properties) {
                const sd_bus_vtable *v = run_property(*p);

                if (r < 0)
                        return r;
                if (v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION)
                        r = sd_bus_message_append(msg, "s", *p);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(msg);
}

/* One message of e for one receiver: destination is a unique name on the bus, NULL on a direct
 * connection. */
static int emission_send(sd_bus *bus, const char *destination, const Emission *e) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        const StoreRun *record = e->record;
        bool finished = record->state == RUN_FINISHED;
        int r;

        if (e->properties) {
                r = sd_bus_message_new_signal(bus, &msg, e->path, "org.freedesktop.DBus.Properties",
                                              "PropertiesChanged");
                if (r >= 0)
                        r = append_changed(bus, msg, e);
        } else {
                r = sd_bus_message_new_signal(bus, &msg, SKILLD_OBJECT_PATH, SKILLD_MANAGER_INTERFACE,
                                              e->member);
                if (r >= 0)
                        r = sd_bus_message_append(msg, "so", record->id, e->path);
                if (r >= 0 && streq(e->member, "RunFinished"))
                        r = sd_bus_message_append(msg, "si",
                                                  finished ? strempty(record->status) : "interrupted",
                                                  (int32_t) (finished ? record->exit_code : -1));
        }
        if (r >= 0 && destination)
                r = sd_bus_message_set_destination(msg, destination);
        if (r >= 0)
                r = sd_bus_send(bus, msg, NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to send %s of run %s to %s: %m", e->member ?: "PropertiesChanged",
                                record->id, destination ?: "a peer");
        return 0;
}

static void emit(Manager *m, Emission *e) {
        _cleanup_free_ char *path = NULL;
        Run *run = manager_find_active(m, e->record->id);

        if (bus_run_object_path(e->record->id, &path) < 0)
                return;
        e->manager = m;
        e->path = path;
        /* A name no longer tracked is gone from the bus for good: unique names are never reused. */
        if (m->bus && run)
                STRV_FOREACH(n, run->peers)
                        if (peer_names_present(m->peers, *n))
                                (void) emission_send(m->bus, *n, e);
        if (run)
                for (Connection *c = m->connections; c; c = c->next)
                        for (size_t i = 0; i < run->n_direct_peers; i++)
                                if (run->direct_peers[i] == c->serial) {
                                        (void) emission_send(c->bus, NULL, e);
                                        break;
                                }
}

void bus_run_emit_changed(Manager *m, const StoreRun *record, ...) {
        _cleanup_strv_free_ char **props = NULL;
        const char *p;
        va_list ap;

        va_start(ap, record);
        while ((p = va_arg(ap, const char *)))
                if (strv_extend(&props, p) < 0) {
                        va_end(ap);
                        return;
                }
        va_end(ap);
        if (props)
                emit(m, &(Emission) { .record = record, .properties = props });
}

void bus_run_emit_started(Manager *m, const StoreRun *record) {
        emit(m, &(Emission) { .record = record, .member = "RunStarted" });
}

void bus_run_emit_finished(Manager *m, const StoreRun *record) {
        emit(m, &(Emission) { .record = record, .member = "RunFinished" });
}
