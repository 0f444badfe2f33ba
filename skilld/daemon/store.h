/* The results store: every run the service accepted, from the moment it is queued until retention
 * removes it, survives crashes of the service.
 *
 *   ROOT/runs/<id>/request.json   what was asked: owner, skill name and hash, script, the request
 *                  state.json     queued | running | finished | interrupted, timestamps, reason
 *                  result.json    the engine's result; its presence is what "finished" means
 *                  stdout.log, stderr.log, artifacts/
 *   ROOT/quarantine/              records found corrupted, moved aside for an admin to inspect
 *   ROOT/index                    a cache of the final runs' summaries (store.c), for a quick start
 *
 * Crash safety rests on two rules. A record appears whole: it is built in ".#new-<id>" and renamed
 * into place. Every file is written atomically (temporary file, fsync, rename), and result.json is
 * written last: a run is finished if and only if a complete result.json exists. (state.json is
 * not synced where a crash that loses it changes nothing store_load() concludes: see
 * write_state() in store.c.) When the service starts, store_load() therefore knows the truth of
 * every run: a result means finished (state.json is repaired if the service died between the two
 * writes), no result and a state of queued or running means the service died under it, and the
 * run becomes interrupted. Temporary files of
 * interrupted writes are deleted; a record that cannot be read is quarantined, never fatal.
 *
 * request.json and state.json carry "format_version" (STORE_FORMAT_VERSION). store_load() brings
 * older records up to it, step by step, rewriting their files atomically; a record of a newer
 * format (written by a later skilld, before a downgrade) is left as it is and not loaded.
 *
 * Everything is root-only (directories 0700, files 0600): owners read their runs through the
 * service, which checks ownership and passes file descriptors. Nothing here knows about D-Bus. */
#pragma once

#include <sys/types.h>

#include "policy.h"
#include "util.h"

#ifndef UID_INVALID
#define UID_INVALID ((uid_t) -1)
#endif

#define STORE_DEFAULT_ROOT LOCALSTATEDIR "/lib/skilld"
/* The format of the records written now. 0 is that of skilld before formats were numbered (the
 * same keys, no "format_version"); 1 numbers them. A change of format raises this and adds a step
 * to the migration in store.c. */
#define STORE_FORMAT_VERSION 1
/* A run id is a 128-bit random id in lowercase hex, the form sd_id128_to_string() gives. */
#define STORE_RUN_ID_LEN 32
#define STORE_REQUEST_MAX (1024U * 1024U)
/* The result holds the run's summary and artifact list; logs stay in their own files. */
#define STORE_RESULT_MAX (64U * 1024U * 1024U)

typedef enum RunState {
        RUN_QUEUED,
        RUN_RUNNING,
        RUN_FINISHED,           /* result.json exists: the run's own outcome, whatever its status */
        RUN_INTERRUPTED,        /* no result will ever come: the service died, or could not store it */
        _RUN_STATE_MAX,
        _RUN_STATE_INVALID = -EINVAL,
} RunState;

const char *run_state_to_string(RunState s) _pure_;
RunState run_state_from_string(const char *s) _pure_;

static inline bool run_state_is_final(RunState s) {
        return s == RUN_FINISHED || s == RUN_INTERRUPTED;
}

/* One record as the store knows it. Owned by the Store; read-only to callers, valid until the
 * run is removed (store_run_remove(), store_gc()) or the store freed. Times are CLOCK_REALTIME
 * microseconds, 0 when not reached. */
typedef struct StoreRun {
        char id[STORE_RUN_ID_LEN + 1];
        uid_t owner;
        char *skill_name;
        char *skill_hash;
        char *script;
        RunState state;
        char *status;           /* result.json "status" when finished: "succeeded", "oom", ... */
        int exit_code;          /* result.json "exit_code", or -1 */
        /* result.json "signal" (0 when it names none), known for a run that finished in this
         * service: its end's signals need not read result.json again. Else read on demand. */
        int signal;
        bool signal_known;
        char *reason;           /* why the run was interrupted */
        uint64_t created_usec;
        uint64_t started_usec;
        uint64_t finished_usec; /* when finished or interrupted */
        uint64_t disk_bytes;    /* disk space of the record, see store_run_update_usage() */
        uint64_t index_key;     /* the store's own: what its index knows the files by, 0: none */
        unsigned state_writes;  /* the store's own: lazy state.json writes under way (its lock) */
} StoreRun;

/* What a new record holds. request_json, when given, must be a JSON object (arguments, limits,
 * options as the service accepted them); it is kept verbatim under "request". */
typedef struct StoreRunInfo {
        const char *id;
        uid_t owner;
        const char *skill_name;
        const char *skill_hash;
        const char *script;
        const char *request_json;
        /* The run's input, when it has one: written into the record as input.json for the worker,
         * which reads and deletes it. Not synced: a run whose record a crash leaves is
         * interrupted at the next start, and its input is of no use then. */
        const char *input_json;
} StoreRunInfo;

typedef struct StoreLoadStats {
        unsigned loaded;
        unsigned interrupted;   /* left queued or running by a service that died */
        unsigned repaired;      /* result written, state.json not yet updated */
        unsigned quarantined;
        unsigned leftovers;     /* temporary files and half-created or half-removed records */
        unsigned migrated;      /* records of an older format, brought up to STORE_FORMAT_VERSION */
        unsigned newer;         /* records of a newer format, left alone and not loaded */
        unsigned indexed;       /* of the loaded, taken from the index without reading them */
} StoreLoadStats;

typedef struct Store Store;
typedef struct StoreNewRun StoreNewRun;

bool store_run_id_is_valid(const char *id) _pure_;

/* Opens ROOT, ROOT/runs and ROOT/quarantine, creating them 0700 where missing (the parent of
 * ROOT must exist). root NULL means STORE_DEFAULT_ROOT. The store is empty until store_load(). */
int store_open(const char *root, Store **ret);
Store *store_free(Store *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Store *, store_free);

/* Scans every record, settles the ones a dead service left behind (see above), quarantines the
 * unreadable ones. Called once when the service starts: it replaces the index, so earlier
 * StoreRun pointers are invalid afterwards. now_usec: the time recorded for interruptions, 0 for
 * now. Returns the first I/O error met, after loading every record it could. */
int store_load(Store *s, uint64_t now_usec, StoreLoadStats *ret_stats);
/* Writes ROOT/index, the summaries of the final runs that the next store_load() takes instead of
 * reading their records, if it is out of date. A cache: failing to write it loses nothing. */
int store_save_index(Store *s);

StoreRun *store_get_run(Store *s, const char *id);
/* The runs of owner (UID_INVALID: everyone's), oldest first, as an array of borrowed pointers
 * (free only the array). */
int store_list_runs(Store *s, uid_t owner, StoreRun ***ret, size_t *ret_n);
/* Runs of owner (UID_INVALID: everyone) in state. */
size_t store_count_runs(Store *s, uid_t owner, RunState state);

/* A listing a page at a time, newest first, for stores too large to send whole (ListRunsFiltered).
 * A position in the index is the key it is sorted by, (created_usec, id): a cursor stays valid
 * when runs are added (they come after it) or removed (the key still orders), so paging back from
 * one never shows a run twice or skips one that existed when the first page was taken. */
typedef struct StoreCursor {
        uint64_t created_usec;
        char id[STORE_RUN_ID_LEN + 1];
} StoreCursor;

/* "<created_usec>-<id>": the text a client gets and gives back, opaque to it. */
#define STORE_CURSOR_MAX (20 + 1 + STORE_RUN_ID_LEN + 1)
void store_cursor_format(const StoreRun *run, char buf[static STORE_CURSOR_MAX]);
/* -EINVAL unless s is what store_cursor_format() writes. */
int store_cursor_parse(const char *s, StoreCursor *ret);

typedef struct StoreRunFilter {
        uid_t owner;                    /* UID_INVALID: everyone's */
        const char *skill_name;         /* NULL: any skill */
        RunState state;                 /* _RUN_STATE_INVALID: any state */
        const char *id_prefix;          /* NULL: any id */
} StoreRunFilter;

#define STORE_RUN_FILTER_ANY ((StoreRunFilter) { .owner = UID_INVALID, .state = _RUN_STATE_INVALID })

bool store_run_matches(const StoreRun *run, const StoreRunFilter *filter) _pure_;

/* The newest limit runs that match filter and were created before the cursor (NULL: all of
 * them), oldest first like store_list_runs(), as borrowed pointers (free only the array).
 * *ret_older: how many more match, older than the page. The cursor is found by bisection and the
 * page collected walking back from it, so the cost is the page's, plus one pass over the older
 * runs to count them when a filter is given (none without: their number is their position). */
int store_list_page(Store *s, const StoreRunFilter *filter, const StoreCursor *before, size_t limit,
                    StoreRun ***ret, size_t *ret_n, size_t *ret_older);

/* Creates the record of a new run, in state queued, with its empty logs: built under a
 * temporary name, its files and directory synced, renamed into place, the runs directory synced;
 * only then is it in the index. -EEXIST if the id is taken. */
int store_create_run(Store *s, const StoreRunInfo *info, uint64_t now_usec, StoreRun **ret, char **error);

/* The same, with the disk flushes off the caller's thread: the record is built at once, and a
 * flusher thread syncs it, renames it into place and syncs the runs directory, one fsync() of
 * the directory for every record renamed in the same round (a group commit). Once that is done,
 * store_dispatch_created() (called when store_created_fd() is readable) adds it to the index and
 * calls callback with it, or with NULL, a negative errno and a message when it could not be made
 * durable (then nothing of it is left). Until then it is not in the index, and it is under its
 * name only once its own files and directory are synced. Returns 0 when under way (callback will be called, exactly once), or a negative errno with
 * a message (callback will not be). */
typedef void (*store_created_func_t)(Store *s, StoreRun *run, int error, const char *message, void *userdata);
int store_create_run_async(Store *s, const StoreRunInfo *info, uint64_t now_usec, store_created_func_t callback,
                           void *userdata, char **error);
/* Readable when store_dispatch_created() has records to report. */
int store_created_fd(Store *s);
void store_dispatch_created(Store *s);
/* Waits for every record under way and reports them all (a service stopping). */
void store_wait_created(Store *s);
/* Records under way (not reported yet). */
size_t store_n_creating(Store *s);
int store_run_set_running(Store *s, StoreRun *run, uint64_t now_usec);
/* Stores the result (a JSON object) and makes the run finished. When the result cannot be
 * written (a full disk), the run becomes interrupted with the reason, and the error is returned:
 * a partial result is never taken for a complete one. */
int store_run_finish(Store *s, StoreRun *run, const char *result_json, uint64_t now_usec, char **error);
/* The same, for a result_json that result.json holds already, byte for byte and durable (the
 * worker's commit, which its successful exit vouches for): not read back to be compared. The
 * parsed result goes to *ret_result when that is not NULL (on success only). */
int store_run_finish_committed(Store *s, StoreRun *run, const char *result_json, uint64_t now_usec,
                               struct cJSON **ret_result, char **error);
/* Ends a run that will have no result. */
int store_run_interrupt(Store *s, StoreRun *run, const char *reason, uint64_t now_usec);
/* Deletes a final run and its files; -EBUSY for a run still queued or running. On success run is
 * freed. */
int store_run_remove(Store *s, StoreRun *run);

int store_run_read_request(Store *s, const StoreRun *run, char **ret);
/* -ENODATA when the run has no result (yet). */
int store_run_read_result(Store *s, const StoreRun *run, char **ret);
/* "stdout" or "stderr". for_writing opens for appending (creating it), else read-only. */
int store_run_open_log(Store *s, const StoreRun *run, const char *stream, bool for_writing, int *ret_fd);
/* The artifacts directory of a run (created when missing), for the engine to copy into. */
int store_run_open_artifacts_dir(Store *s, const StoreRun *run, int *ret_fd);
/* Opens one artifact read-only for a client: path is relative to artifacts/, without "..",
 * without symlinks anywhere on the way, and must name a regular file. */
int store_run_open_artifact(Store *s, const StoreRun *run, const char *path, int *ret_fd, char **error);
/* Recomputes disk_bytes (allocated blocks, links not followed, mounts not crossed). */
int store_run_update_usage(Store *s, StoreRun *run);

/* Removes final runs beyond the retention: older than max_age, then the oldest of each owner
 * beyond the per-user caps, then the oldest of all beyond the global caps. Queued and running
 * runs are never removed (but count towards the caps). The ids removed are returned in
 * *ret_removed (optional), so the service can drop their objects. */
int store_gc(Store *s, const PolicyRetention *retention, uint64_t now_usec, char ***ret_removed);

/* Refuses (-ENOSPC, with a message) when the store's file system has less than min_free_bytes
 * or min_free_percent free, or no free inodes. */
int store_check_space(Store *s, uint64_t min_free_bytes, uint64_t min_free_percent, char **error);
