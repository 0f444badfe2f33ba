/* See store.h. The in-memory index mirrors what is on disk and is rebuilt by store_load(); every
 * change is written to disk before the index is updated, so the index never claims more than the
 * disk holds. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "error.h"
#include "fileio.h"
#include "json-exact.h"
#include "log.h"
#include "parse-util.h"
#include "store.h"
#include "string-table.h"
#include "thread-util.h"

#define NEW_PREFIX ".#new-"
#define DEL_PREFIX ".#del-"
#define TEMP_PREFIX ".#"
#define STATE_MAX (64U * 1024U)
#define QUARANTINE_ATTEMPTS 100U
/* Deeper artifact trees are not counted further: the engine caps depth far below this. */
#define USAGE_DEPTH_MAX 64U

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

typedef struct StateJob StateJob;

struct Store {
        char *root;
        int root_fd;
        int runs_fd;
        int quarantine_fd;
        StoreRun **runs;                /* oldest first (created_usec, then id) */
        size_t n_runs;
        size_t n_allocated;
        bool index_dirty;               /* ROOT/index no longer lists every final run */

        /* New records made durable off the caller's thread (store_create_run_async()), and the
         * lazy state.json writes (STATE_LAZY), both by the flusher thread: on ext4, renaming a
         * new file over an old one starts its writeback and waits for the directory's lock, which
         * a flush of that directory holds, a few ms under load, where every caller would wait.
         * The lock guards the queues, the flusher's flag and StoreRun.state_writes; the rest is
         * the caller's alone. */
        pthread_mutex_t new_lock;
        pthread_cond_t state_written;   /* a StoreRun.state_writes went down */
        StateJob *state_queued, *state_queued_tail;
        size_t n_state_writes;          /* queued or being written */
        /* The store is on a tmpfs, where a flush or a rename returns at once: no flusher then,
         * the work is done in the caller, and the service starts no thread for it (a thread's
         * first start maps 60 KiB of the C library and a stack into skilld's idle RSS). */
        bool memory_fs;
        StoreNewRun *new_queued, *new_queued_tail;      /* waiting for the flusher */
        StoreNewRun *new_done, *new_done_tail;          /* synced (or failed), to be reported */
        bool flusher_running;           /* a flusher thread takes what is queued */
        bool flusher_joinable;          /* one was started and not joined yet */
        pthread_t flusher;
        int new_event_fd;               /* eventfd: something is in new_done */
        StoreNewRun *new_all;           /* every record in flight, the caller's list */
        size_t n_new;
};

/* A new run's record on its way: built under a temporary name by the caller, then synced,
 * renamed into place and its name synced by the flusher. */
struct StoreNewRun {
        StoreRun *run;
        char *tmp;                      /* its temporary name in runs/ */
        int dir_fd;
        int file_fds[2];                /* request.json, state.json */
        int result;                     /* 0, or a negative errno once failed */
        store_created_func_t callback;
        void *userdata;
        StoreNewRun *next;              /* in a queue */
        StoreNewRun *all_prev, *all_next;
};

/* A lazy state.json write: the text made by the caller, written by the flusher in the order
 * queued, so that a run's states land in the order they were reached. */
struct StateJob {
        StoreRun *run;                  /* kept alive: nothing frees a run with writes under way */
        char id[STORE_RUN_ID_LEN + 1];
        char *text;
        StateJob *next;
};

/* Appends item to a singly linked queue kept as head and tail (the flusher's queues). */
#define QUEUE_APPEND(head, tail, item)          \
        do {                                    \
                if (tail)                       \
                        (tail)->next = (item);  \
                else                            \
                        (head) = (item);        \
                (tail) = (item);                \
        } while (0)

static StoreNewRun *new_run_free(StoreNewRun *n);
static void flusher_join(Store *s);
static int state_write_lazy(Store *s, StoreRun *run);
static void state_writes_wait(Store *s, const StoreRun *run);

/* ROOT/index: a cache of the final runs' summaries, so that a start of the service over a large
 * store reads one file instead of every record. Not part of the records' format: the records stay
 * the truth, and a missing, unreadable or older index only means reading them all. A run is
 * taken from it only while its record's files are the very ones summarized: each line carries a
 * hash of the inode, size and change time (ctime, which no write, rename or chmod leaves alone) of
 * request.json, state.json and result.json; a record changed in any way is read again (and
 * quarantined if corrupted), as without an index. Only final runs are listed: their records no
 * longer change. Written atomically, and again when the service leaves. */
#define INDEX_NAME "index"
#define INDEX_MAGIC "skilld-store-index 1"
#define INDEX_MAX (1024U * 1024U * 1024U)

static const char * const state_names[_RUN_STATE_MAX] = {
        [RUN_QUEUED] = "queued",
        [RUN_RUNNING] = "running",
        [RUN_FINISHED] = "finished",
        [RUN_INTERRUPTED] = "interrupted",
};

DEFINE_STRING_TABLE_LOOKUP(run_state, RunState, state_names);

bool store_run_id_is_valid(const char *id) {
        if (!id || strlen(id) != STORE_RUN_ID_LEN)
                return false;
        for (size_t i = 0; i < STORE_RUN_ID_LEN; i++)
                if (!strchr("0123456789abcdef", id[i]))
                        return false;
        return true;
}

static uint64_t now_or(uint64_t now_usec) {
        struct timespec ts;

        if (now_usec > 0)
                return now_usec;
        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

static StoreRun *store_run_free(StoreRun *run) {
        if (!run)
                return NULL;
        free(run->skill_name);
        free(run->skill_hash);
        free(run->script);
        free(run->status);
        free(run->reason);
        free(run);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(StoreRun *, store_run_free);

Store *store_free(Store *s) {
        if (!s)
                return NULL;
        /* Records under way are finished on disk but reported to no one: the next start finds
         * them queued, and interrupts them. */
        flusher_join(s);
        while (s->new_all) {
                StoreNewRun *n = s->new_all;

                s->new_all = n->all_next;
                new_run_free(n);
        }
        pthread_mutex_destroy(&s->new_lock);
        pthread_cond_destroy(&s->state_written);
        safe_close(s->new_event_fd);
        for (size_t i = 0; i < s->n_runs; i++)
                store_run_free(s->runs[i]);
        free(s->runs);
        safe_close(s->root_fd);
        safe_close(s->runs_fd);
        safe_close(s->quarantine_fd);
        free(s->root);
        free(s);
        return NULL;
}

/* Opens a directory below dir_fd, creating it 0700, and tightens a looser mode: the store holds
 * every user's results and must never be readable by them directly. */
static int open_private_dir(int dir_fd, const char *name, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(dir_fd, name, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int store_open(const char *root, Store **ret) {
        _cleanup_(store_freep) Store *s = NULL;
        int r;

        s = calloc(1, sizeof(Store));
        if (!s)
                return -ENOMEM;
        s->root_fd = s->runs_fd = s->quarantine_fd = -EBADF;
        pthread_mutex_init(&s->new_lock, NULL);
        pthread_cond_init(&s->state_written, NULL);
        s->new_event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->new_event_fd < 0)
                return -errno;
        s->root = strdup(root ?: STORE_DEFAULT_ROOT);
        if (!s->root)
                return -ENOMEM;

        /* Only the last component: its parents (/var/lib) are the system's, not ours to create. */
        if (mkdir(s->root, 0700) < 0 && errno != EEXIST)
                return -errno;
        s->root_fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->root_fd < 0)
                return -errno;
        r = open_private_dir(s->root_fd, "runs", &s->runs_fd);
        if (r < 0)
                return r;
        s->memory_fs = fd_on_memory_fs(s->runs_fd);
        r = open_private_dir(s->root_fd, "quarantine", &s->quarantine_fd);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

static int cmp_created(const void *a, const void *b) {
        const StoreRun *x = *(StoreRun * const *) a, *y = *(StoreRun * const *) b;

        if (x->created_usec != y->created_usec)
                return x->created_usec < y->created_usec ? -1 : 1;
        return strcmp(x->id, y->id);
}

static int index_reserve(Store *s, size_t n) {
        StoreRun **l;
        size_t k;

        if (n <= s->n_allocated)
                return 0;
        k = MAX(n, s->n_allocated + s->n_allocated / 2);
        l = reallocarray(s->runs, k, sizeof(StoreRun *));
        if (!l)
                return -ENOMEM;
        s->runs = l;
        s->n_allocated = k;
        return 0;
}

/* The index stays in the order of creation, which listings show: a new run goes last, unless
 * the clock went back. */
static int index_add(Store *s, StoreRun *run) {
        size_t i;
        int r;

        r = index_reserve(s, s->n_runs + 1);
        if (r < 0)
                return r;
        for (i = s->n_runs; i > 0 && cmp_created(&s->runs[i - 1], &run) > 0; i--)
                ;
        memmove(s->runs + i + 1, s->runs + i, (s->n_runs - i) * sizeof(StoreRun *));
        s->runs[i] = run;
        s->n_runs++;
        return 0;
}

static void index_remove(Store *s, StoreRun *run) {
        for (size_t i = 0; i < s->n_runs; i++)
                if (s->runs[i] == run) {
                        memmove(s->runs + i, s->runs + i + 1, (s->n_runs - i - 1) * sizeof(StoreRun *));
                        s->n_runs--;
                        return;
                }
}

StoreRun *store_get_run(Store *s, const char *id) {
        if (!store_run_id_is_valid(id))
                return NULL;
        for (size_t i = 0; i < s->n_runs; i++)
                if (streq(s->runs[i]->id, id))
                        return s->runs[i];
        return NULL;
}

int store_list_runs(Store *s, uid_t owner, StoreRun ***ret, size_t *ret_n) {
        StoreRun **l;
        size_t n = 0;

        l = calloc(s->n_runs + 1, sizeof(StoreRun *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_runs; i++)
                if (owner == UID_INVALID || s->runs[i]->owner == owner)
                        l[n++] = s->runs[i];
        *ret = l;
        *ret_n = n;
        return 0;
}

size_t store_count_runs(Store *s, uid_t owner, RunState state) {
        size_t n = 0;

        for (size_t i = 0; i < s->n_runs; i++)
                if ((owner == UID_INVALID || s->runs[i]->owner == owner) && s->runs[i]->state == state)
                        n++;
        return n;
}

void store_cursor_format(const StoreRun *run, char buf[static STORE_CURSOR_MAX]) {
        (void) snprintf(buf, STORE_CURSOR_MAX, "%" PRIu64 "-%s", run->created_usec, run->id);
}

int store_cursor_parse(const char *s, StoreCursor *ret) {
        char num[21];
        const char *dash;
        uint64_t usec;

        if (!s)
                return -EINVAL;
        dash = strchr(s, '-');
        if (!dash || dash == s || (size_t) (dash - s) >= sizeof(num) || !store_run_id_is_valid(dash + 1))
                return -EINVAL;
        memcpy(num, s, dash - s);
        num[dash - s] = '\0';
        /* A leading zero would read as the same position but format back differently: refused,
         * so that a cursor has one spelling. */
        if ((num[0] == '0' && num[1] != '\0') || safe_atou64(num, &usec) < 0)
                return -EINVAL;
        ret->created_usec = usec;
        memcpy(ret->id, dash + 1, sizeof(ret->id));
        return 0;
}

bool store_run_matches(const StoreRun *run, const StoreRunFilter *filter) {
        return (filter->owner == UID_INVALID || run->owner == filter->owner) &&
                (filter->state < 0 || run->state == filter->state) &&
                (!filter->skill_name || streq(run->skill_name, filter->skill_name)) &&
                (!filter->id_prefix || startswith(run->id, filter->id_prefix));
}

static int cmp_cursor(const StoreRun *run, const StoreCursor *c) {
        if (run->created_usec != c->created_usec)
                return run->created_usec < c->created_usec ? -1 : 1;
        return strcmp(run->id, c->id);
}

/* The number of runs older than c: the index of the first run not before it. */
static size_t index_bisect(Store *s, const StoreCursor *c) {
        size_t lo = 0, hi = s->n_runs;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (cmp_cursor(s->runs[mid], c) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

int store_list_page(Store *s, const StoreRunFilter *filter, const StoreCursor *before, size_t limit,
                    StoreRun ***ret, size_t *ret_n, size_t *ret_older) {
        bool any = filter->owner == UID_INVALID && filter->state < 0 && !filter->skill_name && !filter->id_prefix;
        size_t end = before ? index_bisect(s, before) : s->n_runs, n = 0, i, older = 0;
        StoreRun **l;

        l = calloc(MIN(limit, end) + 1, sizeof(StoreRun *));
        if (!l)
                return -ENOMEM;
        /* Walking back from the cursor to where the page starts, then forward again collecting its
         * runs, oldest first. */
        for (i = end; i > 0 && n < limit; i--)
                if (any || store_run_matches(s->runs[i - 1], filter))
                        n++;
        for (size_t k = end, j = n; k > i; k--)
                if (any || store_run_matches(s->runs[k - 1], filter))
                        l[--j] = s->runs[k - 1];
        if (any)
                older = i;
        else
                for (; i > 0; i--)
                        if (store_run_matches(s->runs[i - 1], filter))
                                older++;
        *ret = l;
        *ret_n = n;
        *ret_older = older;
        return 0;
}

static int open_run_dir(Store *s, const char *id, int *ret_fd) {
        int fd;

        fd = openat(s->runs_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* Writes a new temporary file nobody reads yet, unsynced: replace_file_at() renames it into
 * place without waiting for the disk. */
static int write_new_file_at(int dir_fd, const char *name, const char *text) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        return loop_write(fd, text, strlen(text));
}

/* Replaces a file of a record atomically (a temporary file renamed over it) without waiting for
 * the disk: only for state.json where a crash that loses the write changes nothing store_load()
 * concludes (see write_state()). */
static int replace_file_at(int dir_fd, const char *name, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        int r;

        tmp = strdup_printf(TEMP_PREFIX "%s.new", name);
        if (!tmp)
                return -ENOMEM;
        (void) unlinkat(dir_fd, tmp, 0);
        r = write_new_file_at(dir_fd, tmp, text);
        if (r >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

static int json_write_at(int dir_fd, const char *name, const cJSON *j) {
        _cleanup_free_ char *text = NULL;

        text = cJSON_PrintUnformatted(j);
        if (!text)
                return -ENOMEM;
        return write_file_atomic_at(dir_fd, name, text, strlen(text), 0600);
}

/* JSON numbers are doubles: exact for integers below 2^53, which covers uids and microsecond
 * timestamps for the next few hundred years. */
static int json_get_u64(const cJSON *o, const char *key, bool optional, uint64_t *ret) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

        if (!v) {
                if (!optional)
                        return -EBADMSG;
                *ret = 0;
                return 0;
        }
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0 ||
            v->valuedouble != (double) (uint64_t) v->valuedouble)
                return -EBADMSG;
        *ret = (uint64_t) v->valuedouble;
        return 0;
}

static int json_get_str(const cJSON *o, const char *key, bool optional, char **ret) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        char *c;

        if (!v && optional) {
                *ret = NULL;
                return 0;
        }
        if (!v || !cJSON_IsString(v) || !v->valuestring)
                return -EBADMSG;
        c = strdup(v->valuestring);
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

/* How state.json is written:
 *   STATE_DURABLE  atomically and synced: the state is the only record of what happened (an
 *                  interruption and its reason, a settled record);
 *   STATE_LAZY     atomically, not synced: a crash that loses the write leaves the previous
 *                  state, and store_load() reaches the same verdict from it: running instead of
 *                  queued is interrupted all the same, and after result.json (the commit point,
 *                  synced) the result decides and state.json is repaired.
 * A new record's first state.json is written with it, and synced with it (new_run_build()). */
typedef enum StateWrite {
        STATE_DURABLE,
        STATE_LAZY,
} StateWrite;

static int state_text(const StoreRun *run, char **ret) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL;
        char *text;

        j = cJSON_CreateObject();
        if (!j ||
            !cJSON_AddNumberToObject(j, "format_version", STORE_FORMAT_VERSION) ||
            !cJSON_AddStringToObject(j, "state", run_state_to_string(run->state)) ||
            !json_add_uint64(j, "started_usec", run->started_usec) ||
            !json_add_uint64(j, "finished_usec", run->finished_usec) ||
            (run->reason && !cJSON_AddStringToObject(j, "reason", run->reason)))
                return -ENOMEM;
        text = cJSON_PrintUnformatted(j);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

static int write_state(int run_fd, const StoreRun *run, StateWrite how) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = state_text(run, &text);
        if (r < 0)
                return r;
        if (how == STATE_DURABLE)
                return write_file_atomic_at(run_fd, "state.json", text, strlen(text), 0600);
        return replace_file_at(run_fd, "state.json", text);
}

/* Reads a JSON object file of the record. -ENOENT when absent, -EBADMSG when not a JSON object. */
static int read_json_object(int run_fd, const char *name, size_t max, cJSON **ret) {
        _cleanup_free_ char *text = NULL;
        cJSON *j;
        size_t n;
        int r;

        r = read_full_file_at(run_fd, name, max, true, &text, &n);
        if (r < 0)
                return r == -ELOOP || r == -EBADFD || r == -EISDIR || r == -EFBIG ? -EBADMSG : r;
        j = cJSON_ParseWithLength(text, n);
        if (!j)
                return -EBADMSG;
        if (!cJSON_IsObject(j)) {
                cJSON_Delete(j);
                return -EBADMSG;
        }
        *ret = j;
        return 0;
}

/* Takes status and exit code out of a result for the index. Both are optional in the result;
 * their types are not. */
static int result_summary(const cJSON *result, char **ret_status, int *ret_exit_code) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(result, "exit_code");
        _cleanup_free_ char *status = NULL;
        int r;

        r = json_get_str(result, "status", true, &status);
        if (r < 0)
                return r;
        if (code && !cJSON_IsNull(code) && (!cJSON_IsNumber(code) || code->valuedouble < INT_MIN ||
                                            code->valuedouble > INT_MAX))
                return -EBADMSG;
        *ret_exit_code = code && cJSON_IsNumber(code) ? (int) code->valuedouble : -1;
        *ret_status = TAKE_PTR(status);
        return 0;
}

static int usage_at(int dir_fd, unsigned depth, uint64_t *bytes) {
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        struct stat st;
        DIR *d;

        if (depth > USAGE_DEPTH_MAX)
                return 0;
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);

        while ((de = readdir(d))) {
                struct stat cst;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &cst, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                *bytes += (uint64_t) cst.st_blocks * 512;
                if (S_ISDIR(cst.st_mode) && cst.st_dev == st.st_dev) {
                        _cleanup_close_ int cfd = openat(dirfd(d), de->d_name,
                                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (cfd >= 0)
                                (void) usage_at(cfd, depth + 1, bytes);
                }
        }
        closedir(d);
        return 0;
}

static int run_usage(int run_fd, uint64_t *ret) {
        uint64_t bytes = 0;
        struct stat st;
        int r;

        if (fstat(run_fd, &st) < 0)
                return -errno;
        bytes = (uint64_t) st.st_blocks * 512;
        r = usage_at(run_fd, 0, &bytes);
        if (r < 0)
                return r;
        *ret = bytes;
        return 0;
}

int store_run_update_usage(Store *s, StoreRun *run) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = open_run_dir(s, run->id, &fd);
        if (r < 0)
                return r;
        s->index_dirty = true;
        return run_usage(fd, &run->disk_bytes);
}

static StoreNewRun *new_run_free(StoreNewRun *n) {
        if (!n)
                return NULL;
        store_run_free(n->run);
        free(n->tmp);
        safe_close(n->dir_fd);
        safe_close(n->file_fds[0]);
        safe_close(n->file_fds[1]);
        free(n);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(StoreNewRun *, new_run_free);

/* Writes a new file of a record being built, unsynced, and keeps it open for the sync. */
static int write_new_file_keep(int dir_fd, const char *name, const char *text, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = loop_write(fd, text, strlen(text));
        if (r < 0)
                return r;
        /* The writeback starts now, while the caller goes on: the fsync() then waits less. */
        (void) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int new_run_error(const StoreRun *run, int r, char **error) {
        return error_setf(error, r, "Cannot create the record of run %s: %s", run->id, strerror(-r));
}

/* Builds a new run's record under a temporary name, its files written and not synced yet. */
static int new_run_build(Store *s, const StoreRunInfo *info, uint64_t now_usec, StoreNewRun **ret, char **error) {
        _cleanup_(cJSON_Deletep) cJSON *j = NULL, *request = NULL;
        _cleanup_(new_run_freep) StoreNewRun *n = NULL;
        _cleanup_free_ char *text = NULL;
        StoreRun *run;
        cJSON *skill;
        int r;

        if (!store_run_id_is_valid(info->id))
                return error_setf(error, -EINVAL, "Invalid run id.");
        if (info->owner == UID_INVALID || !info->skill_name || !info->skill_hash || !info->script)
                return error_setf(error, -EINVAL, "Incomplete run record.");
        if (store_get_run(s, info->id))
                return error_setf(error, -EEXIST, "Run %s exists already.", info->id);
        for (StoreNewRun *i = s->new_all; i; i = i->all_next)
                if (streq(i->run->id, info->id))
                        return error_setf(error, -EEXIST, "Run %s exists already.", info->id);
        if (info->request_json) {
                if (strlen(info->request_json) > STORE_REQUEST_MAX)
                        return error_setf(error, -E2BIG, "The request is too large to record.");
                request = cJSON_Parse(info->request_json);
                if (!request || !cJSON_IsObject(request))
                        return error_setf(error, -EINVAL, "The request to record is not a JSON object.");
        }

        n = calloc(1, sizeof(StoreNewRun));
        if (!n)
                return -ENOMEM;
        n->dir_fd = n->file_fds[0] = n->file_fds[1] = -EBADF;
        n->run = run = calloc(1, sizeof(StoreRun));
        if (!run)
                return -ENOMEM;
        memcpy(run->id, info->id, sizeof(run->id));
        run->owner = info->owner;
        run->skill_name = strdup(info->skill_name);
        run->skill_hash = strdup(info->skill_hash);
        run->script = strdup(info->script);
        if (!run->skill_name || !run->skill_hash || !run->script)
                return -ENOMEM;
        run->state = RUN_QUEUED;
        run->exit_code = -1;
        run->created_usec = now_or(now_usec);

        j = cJSON_CreateObject();
        if (!j ||
            !cJSON_AddNumberToObject(j, "format_version", STORE_FORMAT_VERSION) ||
            !cJSON_AddStringToObject(j, "id", run->id) ||
            !cJSON_AddNumberToObject(j, "owner", (double) run->owner) ||
            !(skill = cJSON_AddObjectToObject(j, "skill")) ||
            !cJSON_AddStringToObject(skill, "name", run->skill_name) ||
            !cJSON_AddStringToObject(skill, "hash", run->skill_hash) ||
            !cJSON_AddStringToObject(j, "script", run->script) ||
            !json_add_uint64(j, "created_usec", run->created_usec))
                return -ENOMEM;
        if (request)
                cJSON_AddItemToObject(j, "request", TAKE_PTR(request));
        text = cJSON_PrintUnformatted(j);
        if (!text)
                return -ENOMEM;

        n->tmp = strdup_printf(NEW_PREFIX "%s", run->id);
        if (!n->tmp)
                return -ENOMEM;
        (void) rm_rf_at(s->runs_fd, n->tmp);
        if (mkdirat(s->runs_fd, n->tmp, 0700) < 0)
                return new_run_error(run, -errno, error);
        n->dir_fd = openat(s->runs_fd, n->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (n->dir_fd < 0)
                r = -errno;
        else
                r = write_new_file_keep(n->dir_fd, "request.json", text, &n->file_fds[0]);
        if (r >= 0) {
                _cleanup_free_ char *state = NULL;

                r = state_text(run, &state);
                if (r >= 0)
                        r = write_new_file_keep(n->dir_fd, "state.json", state, &n->file_fds[1]);
        }
        /* The logs exist from the start, so that OpenLog() can follow a run still queued. Empty:
         * the directory's sync makes their names durable. */
        for (size_t i = 0; r >= 0 && i < 2; i++) {
                int fd = openat(n->dir_fd, i == 0 ? "stdout.log" : "stderr.log",
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        r = -errno;
                safe_close(fd);
        }
        if (r >= 0 && info->input_json) {
                _cleanup_close_ int fd = -EBADF;

                r = write_new_file_keep(n->dir_fd, "input.json", info->input_json, &fd);
        }
        if (r < 0) {
                (void) rm_rf_at(s->runs_fd, n->tmp);
                return new_run_error(run, r, error);
        }
        *ret = TAKE_PTR(n);
        return 0;
}

/* Makes the records of a batch durable and puts them in place: each one's files and directory
 * synced, all side by side (fsync_many(), a thread per flush); then each renamed into place, and
 * the runs directory synced once for all of them. A record whose sync or rename failed is
 * removed, its result set. Runs in the flusher thread, or in the caller for store_create_run(). */
static void new_runs_commit(Store *s, StoreNewRun *batch) {
        bool renamed = false;

        for (StoreNewRun *n = batch; n;) {
                StoreNewRun *first = n;
                int fds[8], results[8];
                size_t k = 0;

                /* fsync_many() takes eight at most: two records at a time (six flushes). */
                for (; n && k + 3 <= ELEMENTSOF(fds); n = n->next) {
                        fds[k++] = n->file_fds[0];
                        fds[k++] = n->file_fds[1];
                        fds[k++] = n->dir_fd;
                }
                (void) fsync_many(fds, k, results);
                k = 0;
                for (StoreNewRun *i = first; i != n; i = i->next, k += 3)
                        for (size_t j = 0; j < 3; j++)
                                if (results[k + j] < 0 && i->result == 0)
                                        i->result = results[k + j];
        }
        for (StoreNewRun *n = batch; n; n = n->next) {
                if (n->result == 0 &&
                    renameat2(s->runs_fd, n->tmp, s->runs_fd, n->run->id, RENAME_NOREPLACE) < 0)
                        n->result = -errno;
                if (n->result < 0)
                        (void) rm_rf_at(s->runs_fd, n->tmp);
                else
                        renamed = true;
        }
        /* The names: one flush of the directory for every record of the round. A flush that
         * failed leaves the names' durability unknown: nobody may be told of these records, so
         * they go again (a removal a crash undoes leaves a queued record nobody heard of, which
         * the next start interrupts, as after SIGKILL). */
        if (renamed && fsync(s->runs_fd) < 0) {
                int e = -errno;

                for (StoreNewRun *n = batch; n; n = n->next)
                        if (n->result == 0) {
                                n->result = e;
                                (void) rm_rf_at(s->runs_fd, n->run->id);
                        }
        }
}

/* The record is durable and in place: into the index. On failure the record stays on disk, where
 * the next store_load() finds it. */
static int new_run_finish(Store *s, StoreNewRun *n, StoreRun **ret) {
        int r;

        r = run_usage(n->dir_fd, &n->run->disk_bytes);
        if (r < 0)
                n->run->disk_bytes = 0;
        r = index_add(s, n->run);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(n->run);
        return 0;
}

int store_create_run(Store *s, const StoreRunInfo *info, uint64_t now_usec, StoreRun **ret, char **error) {
        _cleanup_(new_run_freep) StoreNewRun *n = NULL;
        int r;

        r = new_run_build(s, info, now_usec, &n, error);
        if (r < 0)
                return r;
        new_runs_commit(s, n);
        if (n->result < 0)
                return new_run_error(n->run, n->result, error);
        return new_run_finish(s, n, ret);
}

/* A committed batch (synced and in place, or failed) to be reported by the caller's loop
 * (store_dispatch_created()), woken through the eventfd. */
static void new_runs_done(Store *s, StoreNewRun *batch) {
        StoreNewRun *last = batch;

        while (last->next)
                last = last->next;
        pthread_mutex_lock(&s->new_lock);
        if (s->new_done_tail)
                s->new_done_tail->next = batch;
        else
                s->new_done = batch;
        s->new_done_tail = last;
        pthread_mutex_unlock(&s->new_lock);
        (void) eventfd_write(s->new_event_fd, 1);
}

/* The lazy state.json writes queued before this round, in order. */
static void state_jobs_write(Store *s, StateJob *jobs) {
        while (jobs) {
                StateJob *j = jobs;
                _cleanup_close_ int fd = -EBADF;
                int r;

                jobs = j->next;
                fd = openat(s->runs_fd, j->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = fd < 0 ? -errno : replace_file_at(fd, "state.json", j->text);
                /* Lost, it loses nothing: store_load() reaches the same verdict without it. */
                if (r < 0)
                        log_debug_errno(r, "Failed to write the state of run %s, leaving it: %m", j->id);
                pthread_mutex_lock(&s->new_lock);
                j->run->state_writes--;
                s->n_state_writes--;
                pthread_cond_broadcast(&s->state_written);
                pthread_mutex_unlock(&s->new_lock);
                free(j->text);
                free(j);
        }
}

static void *flusher_thread(void *arg) {
        Store *s = arg;

        for (;;) {
                StoreNewRun *batch;
                StateJob *states;

                pthread_mutex_lock(&s->new_lock);
                batch = s->new_queued;
                s->new_queued = s->new_queued_tail = NULL;
                states = s->state_queued;
                s->state_queued = s->state_queued_tail = NULL;
                if (!batch && !states)
                        s->flusher_running = false;
                pthread_mutex_unlock(&s->new_lock);
                if (!batch && !states)
                        return NULL;

                /* The states first: a caller may be waiting for them (state_writes_wait()). */
                state_jobs_write(s, states);
                if (!batch)
                        continue;

                /* What was queued meanwhile waits for the next round: a group commit. */
                new_runs_commit(s, batch);
                new_runs_done(s, batch);
        }
}

/* With the lock held: makes sure a flusher will take what is queued. */
static int flusher_wake_locked(Store *s) {
        int r;

        if (s->flusher_running)
                return 0;
        if (s->flusher_joinable) {
                /* The last one has said it is done, and is about to return. */
                (void) pthread_join(s->flusher, NULL);
                s->flusher_joinable = false;
        }
        r = thread_start_small(&s->flusher, flusher_thread, s, NULL);
        if (r < 0)
                return r;
        s->flusher_running = s->flusher_joinable = true;
        return 0;
}

static int state_write_lazy(Store *s, StoreRun *run) {
        _cleanup_free_ char *text = NULL;
        StateJob *j;
        int r;

        r = state_text(run, &text);
        if (r < 0)
                return r;
        j = calloc(1, sizeof(StateJob));
        if (!j)
                return -ENOMEM;
        j->run = run;
        memcpy(j->id, run->id, sizeof(j->id));
        j->text = TAKE_PTR(text);

        pthread_mutex_lock(&s->new_lock);
        r = s->memory_fs ? -EAGAIN : flusher_wake_locked(s);
        if (r >= 0) {
                QUEUE_APPEND(s->state_queued, s->state_queued_tail, j);
                run->state_writes++;
                s->n_state_writes++;
        }
        pthread_mutex_unlock(&s->new_lock);
        if (r < 0) {
                /* On a tmpfs, or no thread (out of tasks): here, then. */
                _cleanup_close_ int fd = -EBADF;

                free(j->text);
                free(j);
                r = open_run_dir(s, run->id, &fd);
                if (r >= 0)
                        r = write_state(fd, run, STATE_LAZY);
        }
        return r;
}

/* Waits until the lazy state writes of run (NULL: of every run) are on file: before anything
 * else touches its record (a durable state, its removal) or reads what they changed (the index). */
static void state_writes_wait(Store *s, const StoreRun *run) {
        pthread_mutex_lock(&s->new_lock);
        while (run ? run->state_writes > 0 : s->n_state_writes > 0)
                pthread_cond_wait(&s->state_written, &s->new_lock);
        pthread_mutex_unlock(&s->new_lock);
}

int store_create_run_async(Store *s, const StoreRunInfo *info, uint64_t now_usec, store_created_func_t callback,
                           void *userdata, char **error) {
        _cleanup_(new_run_freep) StoreNewRun *n = NULL;
        int r;

        if (!callback)
                return -EINVAL;
        r = new_run_build(s, info, now_usec, &n, error);
        if (r < 0)
                return r;
        n->callback = callback;
        n->userdata = userdata;

        if (s->memory_fs) {
                /* Done here, and reported all the same from the next turn of the caller's loop. */
                new_runs_commit(s, n);
                new_runs_done(s, n);
        } else {
                pthread_mutex_lock(&s->new_lock);
                r = flusher_wake_locked(s);
                if (r >= 0)
                        QUEUE_APPEND(s->new_queued, s->new_queued_tail, n);
                pthread_mutex_unlock(&s->new_lock);
                if (r < 0) {
                        (void) rm_rf_at(s->runs_fd, n->tmp);
                        return new_run_error(n->run, r, error);
                }
        }

        n->all_next = s->new_all;
        if (s->new_all)
                s->new_all->all_prev = n;
        s->new_all = n;
        s->n_new++;
        TAKE_PTR(n);
        return 0;
}

int store_created_fd(Store *s) {
        return s->new_event_fd;
}

size_t store_n_creating(Store *s) {
        return s->n_new;
}

static void new_run_unlink(Store *s, StoreNewRun *n) {
        if (n->all_prev)
                n->all_prev->all_next = n->all_next;
        else
                s->new_all = n->all_next;
        if (n->all_next)
                n->all_next->all_prev = n->all_prev;
        n->all_prev = n->all_next = NULL;
        s->n_new--;
}

void store_dispatch_created(Store *s) {
        StoreNewRun *done;
        eventfd_t v;

        (void) eventfd_read(s->new_event_fd, &v);
        pthread_mutex_lock(&s->new_lock);
        done = s->new_done;
        s->new_done = s->new_done_tail = NULL;
        pthread_mutex_unlock(&s->new_lock);

        while (done) {
                _cleanup_(new_run_freep) StoreNewRun *n = done;
                _cleanup_free_ char *message = NULL;
                StoreRun *run = NULL;
                int r;

                done = n->next;
                new_run_unlink(s, n);
                r = n->result;
                if (r >= 0)
                        r = new_run_finish(s, n, &run);
                if (r < 0)
                        (void) new_run_error(n->run, r, &message);
                n->callback(s, run, r < 0 ? r : 0, message, n->userdata);
        }
}

/* The flusher returns once nothing is queued, and nothing is queued meanwhile: the queue is
 * filled from this thread only. Once it is joined, every record is in new_done. */
static void flusher_join(Store *s) {
        bool joinable;

        pthread_mutex_lock(&s->new_lock);
        joinable = s->flusher_joinable;
        s->flusher_joinable = false;
        pthread_mutex_unlock(&s->new_lock);
        if (joinable)
                (void) pthread_join(s->flusher, NULL);
}

void store_wait_created(Store *s) {
        flusher_join(s);
        store_dispatch_created(s);
}

/* Writes the in-memory state of run to its state.json; on failure the previous state is restored
 * in memory so that index and disk agree. */
static int update_state(Store *s, StoreRun *run, const StoreRun *previous, StateWrite how) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (how == STATE_LAZY)
                return state_write_lazy(s, run);
        /* Not overtaken by an earlier, lazy one. */
        state_writes_wait(s, run);
        r = open_run_dir(s, run->id, &fd);
        if (r >= 0)
                r = write_state(fd, run, how);
        if (r < 0) {
                run->state = previous->state;
                run->started_usec = previous->started_usec;
                run->finished_usec = previous->finished_usec;
        }
        return r;
}

int store_run_set_running(Store *s, StoreRun *run, uint64_t now_usec) {
        StoreRun previous = *run;

        if (run->state != RUN_QUEUED)
                return -ESTALE;
        run->state = RUN_RUNNING;
        run->started_usec = now_or(now_usec);
        return update_state(s, run, &previous, STATE_LAZY);
}

int store_run_interrupt(Store *s, StoreRun *run, const char *reason, uint64_t now_usec) {
        StoreRun previous = *run;
        char *old_reason = run->reason;
        int r;

        if (run_state_is_final(run->state))
                return -ESTALE;
        run->reason = strdup(reason ?: "interrupted");
        if (!run->reason) {
                run->reason = old_reason;
                return -ENOMEM;
        }
        run->state = RUN_INTERRUPTED;
        run->finished_usec = now_or(now_usec);
        s->index_dirty = true;
        r = update_state(s, run, &previous, STATE_DURABLE);
        if (r < 0) {
                /* The run is over whatever the disk says (a full store, typically): it stays final
                 * here, or clients would wait for it forever. The record on disk says running and
                 * has no result.json, which the next start reads as interrupted too. */
                run->state = RUN_INTERRUPTED;
                run->finished_usec = now_or(now_usec);
        }
        free(old_reason);
        return r;
}

/* Whether the record's result.json holds exactly these bytes. */
static bool result_stored(int run_fd, const char *result_json, size_t n) {
        _cleanup_free_ char *text = NULL;
        size_t k;

        if (read_full_file_at(run_fd, "result.json", STORE_RESULT_MAX, true, &text, &k) < 0)
                return false;
        return k == n && memcmp(text, result_json, n) == 0;
}

static int run_finish(Store *s, StoreRun *run, const char *result_json, bool committed, uint64_t now_usec,
                      cJSON **ret_result, char **error) {
        _cleanup_(cJSON_Deletep) cJSON *result = NULL;
        _cleanup_free_ char *status = NULL, *reason = NULL;
        _cleanup_close_ int fd = -EBADF;
        int exit_code, r;
        size_t n;

        if (run_state_is_final(run->state))
                return error_setf(error, -ESTALE, "Run %s has ended already.", run->id);
        n = strlen(result_json);
        if (n > STORE_RESULT_MAX)
                return error_setf(error, -E2BIG, "The result of run %s is too large to store.", run->id);
        result = cJSON_ParseWithLength(result_json, n);
        if (!result || !cJSON_IsObject(result) || result_summary(result, &status, &exit_code) < 0)
                return error_setf(error, -EINVAL, "The result of run %s is not a valid result object.",
                                  run->id);

        r = open_run_dir(s, run->id, &fd);
        if (r < 0)
                return error_setf(error, r, "Cannot open the record of run %s: %s", run->id, strerror(-r));

        /* The commit point: once result.json is renamed into place, the run is finished. The
         * worker has normally written it already, synced: the same bytes need no second write. */
        if (committed || result_stored(fd, result_json, n))
                r = 0;
        else
                r = write_file_atomic_at(fd, "result.json", result_json, n, 0600);
        if (r < 0) {
                /* SECURITY: nothing partial was stored; say so instead of leaving it running. If
                 * even state.json cannot be written, the next store_load() reaches the same
                 * verdict from the missing result. */
                reason = strdup_printf("the result could not be stored: %s", strerror(-r));
                if (!reason || store_run_interrupt(s, run, reason, now_usec) < 0) {
                        run->state = RUN_INTERRUPTED;
                        run->finished_usec = now_or(now_usec);
                        if (reason) {
                                free(run->reason);
                                run->reason = TAKE_PTR(reason);
                        }
                }
                return error_setf(error, r, "Cannot store the result of run %s: %s", run->id, strerror(-r));
        }

        run->state = RUN_FINISHED;
        run->finished_usec = now_or(now_usec);
        s->index_dirty = true;
        free(run->status);
        run->status = TAKE_PTR(status);
        run->exit_code = exit_code;
        {
                const cJSON *sig = cJSON_GetObjectItemCaseSensitive(result, "signal");

                run->signal = cJSON_IsNumber(sig) ? (int) sig->valuedouble : 0;
                run->signal_known = true;
        }
        /* The result decides; should state.json lag behind, store_load() repairs it. */
        (void) state_write_lazy(s, run);
        (void) run_usage(fd, &run->disk_bytes);
        if (ret_result)
                *ret_result = TAKE_PTR(result);
        return 0;
}

int store_run_finish(Store *s, StoreRun *run, const char *result_json, uint64_t now_usec, char **error) {
        return run_finish(s, run, result_json, false, now_usec, NULL, error);
}

int store_run_finish_committed(Store *s, StoreRun *run, const char *result_json, uint64_t now_usec,
                               cJSON **ret_result, char **error) {
        return run_finish(s, run, result_json, true, now_usec, ret_result, error);
}

int store_run_remove(Store *s, StoreRun *run) {
        _cleanup_free_ char *tmp = NULL;
        int r;

        if (!run_state_is_final(run->state))
                return -EBUSY;
        state_writes_wait(s, run);
        /* Renamed first, so that a crash halfway leaves a leftover store_load() deletes, rather
         * than a half-deleted record it would quarantine. */
        tmp = strdup_printf(DEL_PREFIX "%s", run->id);
        if (!tmp)
                return -ENOMEM;
        (void) rm_rf_at(s->runs_fd, tmp);
        if (renameat(s->runs_fd, run->id, s->runs_fd, tmp) < 0)
                return -errno;
        /* From here on the run is gone; what rm_rf_at() leaves, store_load() deletes later. */
        r = rm_rf_at(s->runs_fd, tmp);
        if (r < 0)
                log_debug_errno(r, "Failed to delete %s, leaving it for the next start: %m", tmp);
        index_remove(s, run);
        store_run_free(run);
        s->index_dirty = true;
        return 0;
}

int store_run_read_request(Store *s, const StoreRun *run, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = open_run_dir(s, run->id, &fd);
        if (r < 0)
                return r;
        return read_full_file_at(fd, "request.json", STORE_REQUEST_MAX + 4096, true, ret, NULL);
}

int store_run_read_result(Store *s, const StoreRun *run, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (run->state != RUN_FINISHED)
                return -ENODATA;
        r = open_run_dir(s, run->id, &fd);
        if (r < 0)
                return r;
        r = read_full_file_at(fd, "result.json", STORE_RESULT_MAX, true, ret, NULL);
        return r == -ENOENT ? -ENODATA : r;
}

int store_run_open_log(Store *s, const StoreRun *run, const char *stream, bool for_writing, int *ret_fd) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        const char *name;
        struct stat st;
        int r;

        if (streq_ptr(stream, "stdout"))
                name = "stdout.log";
        else if (streq_ptr(stream, "stderr"))
                name = "stderr.log";
        else
                return -EINVAL;

        r = open_run_dir(s, run->id, &dfd);
        if (r < 0)
                return r;
        if (for_writing)
                fd = openat(dfd, name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                            0600);
        else
                fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int store_run_open_artifacts_dir(Store *s, const StoreRun *run, int *ret_fd) {
        _cleanup_close_ int dfd = -EBADF;
        int r;

        r = open_run_dir(s, run->id, &dfd);
        if (r < 0)
                return r;
        return open_private_dir(dfd, "artifacts", ret_fd);
}

int store_run_open_artifact(Store *s, const StoreRun *run, const char *path, int *ret_fd, char **error) {
        _cleanup_free_ char *copy = NULL, *shown = NULL;
        _cleanup_close_ int dfd = -EBADF, cur = -EBADF;
        char *component, *next, *save = NULL;
        struct stat st;
        int r;

        shown = cescape(strempty(path));
        if (!shown)
                return -ENOMEM;
        if (isempty(path) || path[0] == '/' || strlen(path) > PATH_MAX || string_has_cc(path, strlen(path)))
                return error_setf(error, -EINVAL, "Invalid artifact path '%s'.", shown);

        r = open_run_dir(s, run->id, &dfd);
        if (r < 0)
                return error_setf(error, r, "Cannot open the record of run %s.", run->id);
        cur = openat(dfd, "artifacts", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cur < 0)
                return error_setf(error, -ENOENT, "Run %s has no artifact '%s'.", run->id, shown);

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        /* SECURITY: one component at a time, never following a symlink, never going up: the
         * artifacts came out of an untrusted sandbox and the fd goes to a client. */
        component = strtok_r(copy, "/", &save);
        while (component) {
                int fd;

                next = strtok_r(NULL, "/", &save);
                if (streq(component, "..") || streq(component, "."))
                        return error_setf(error, -EINVAL, "Invalid artifact path '%s'.", shown);
                if (next)
                        fd = openat(cur, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else
                        fd = openat(cur, component,
                                    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0) {
                        r = -errno;
                        if (r == -ELOOP || r == -ENOTDIR)
                                return error_setf(error, -EPERM, "Artifact '%s' is not a regular file.",
                                                  shown);
                        return error_setf(error, r == -ENOENT ? -ENOENT : r, "Run %s has no artifact '%s'.",
                                          run->id, shown);
                }
                safe_close(cur);
                cur = fd;
                component = next;
        }
        if (fstat(cur, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return error_setf(error, -EPERM, "Artifact '%s' is not a regular file.", shown);
        /* O_NONBLOCK only kept a FIFO from blocking the open; reads of a file never block. */
        if (fcntl(cur, F_SETFL, 0) < 0)
                return -errno;
        *ret_fd = TAKE_FD(cur);
        return 0;
}

static int quarantine(Store *s, const char *name) {
        for (unsigned i = 0; i < QUARANTINE_ATTEMPTS; i++) {
                _cleanup_free_ char *target = i == 0 ? strdup(name) : strdup_printf("%s.%u", name, i);

                if (!target)
                        return -ENOMEM;
                if (renameat2(s->runs_fd, name, s->quarantine_fd, target, RENAME_NOREPLACE) >= 0)
                        return 0;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Deletes ".#..." temporary files of interrupted atomic writes inside a record. */
static int remove_temporaries(int run_fd, unsigned *n) {
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        DIR *d;

        fd = openat(run_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        while ((de = readdir(d)))
                if (startswith(de->d_name, TEMP_PREFIX) && rm_rf_at(dirfd(d), de->d_name) >= 0)
                        (*n)++;
        closedir(d);
        return 0;
}

/* Reads one record and settles it. -EBADMSG: corrupted, to be quarantined. */
/* Brings a record of format *version up to STORE_FORMAT_VERSION in memory, one step at a time;
 * the caller writes the files. Each step is the whole difference between two formats. */
static int migrate_record(cJSON *request, uint64_t *version) {
        cJSON *v;

        if (*version == 0) {
                /* 0 -> 1: the keys stayed; only the number is new (state.json gets it from
                 * write_state()). */
                *version = 1;
        }
        if (*version != STORE_FORMAT_VERSION)
                return -EBADMSG;        /* a format with no step up from it */

        v = cJSON_CreateNumber(STORE_FORMAT_VERSION);
        if (!v)
                return -ENOMEM;
        cJSON_DeleteItemFromObjectCaseSensitive(request, "format_version");
        cJSON_AddItemToObject(request, "format_version", v);
        return 0;
}

static int load_run(Store *s, const char *id, uint64_t now, StoreLoadStats *stats, StoreRun **ret) {
        _cleanup_(cJSON_Deletep) cJSON *request = NULL, *state = NULL, *result = NULL;
        _cleanup_(store_run_freep) StoreRun *run = NULL;
        _cleanup_free_ char *state_name = NULL, *request_id = NULL;
        _cleanup_close_ int fd = -EBADF;
        const cJSON *skill;
        uint64_t owner, version, state_version = STORE_FORMAT_VERSION;
        bool dirty = false;
        struct stat st;
        int r;

        r = open_run_dir(s, id, &fd);
        if (r < 0)
                return r == -ENOTDIR || r == -ELOOP ? -EBADMSG : r;
        r = remove_temporaries(fd, &stats->leftovers);
        if (r < 0)
                return r;

        run = calloc(1, sizeof(StoreRun));
        if (!run)
                return -ENOMEM;
        memcpy(run->id, id, sizeof(run->id));
        run->exit_code = -1;

        /* request.json: who and what. Without it the record means nothing. */
        r = read_json_object(fd, "request.json", STORE_REQUEST_MAX + 4096, &request);
        if (r < 0)
                return r == -ENOENT ? -EBADMSG : r;
        skill = cJSON_GetObjectItemCaseSensitive(request, "skill");
        if (json_get_str(request, "id", false, &request_id) < 0 || !streq(request_id, id) ||
            json_get_u64(request, "owner", false, &owner) < 0 || owner >= UID_INVALID ||
            !cJSON_IsObject(skill) ||
            json_get_str(skill, "name", false, &run->skill_name) < 0 ||
            json_get_str(skill, "hash", false, &run->skill_hash) < 0 ||
            json_get_str(request, "script", false, &run->script) < 0 ||
            json_get_u64(request, "created_usec", false, &run->created_usec) < 0 ||
            json_get_u64(request, "format_version", true, &version) < 0)
                return -EBADMSG;
        run->owner = (uid_t) owner;
        /* A later skilld's record: not ours to read or rewrite (nor to quarantine). */
        if (version > STORE_FORMAT_VERSION)
                return -EPROTONOSUPPORT;

        /* state.json: where it got to. Absent only if written by a tool other than us. */
        r = read_json_object(fd, "state.json", STATE_MAX, &state);
        if (r == -ENOENT) {
                run->state = RUN_QUEUED;
                dirty = true;
        } else if (r < 0)
                return r;
        else {
                if (json_get_str(state, "state", false, &state_name) < 0 ||
                    json_get_u64(state, "format_version", true, &state_version) < 0 ||
                    json_get_u64(state, "started_usec", true, &run->started_usec) < 0 ||
                    json_get_u64(state, "finished_usec", true, &run->finished_usec) < 0 ||
                    json_get_str(state, "reason", true, &run->reason) < 0)
                        return -EBADMSG;
                run->state = run_state_from_string(state_name);
                if (run->state < 0)
                        return -EBADMSG;
                if (state_version > STORE_FORMAT_VERSION)
                        return -EPROTONOSUPPORT;
                dirty = dirty || state_version < STORE_FORMAT_VERSION;
        }

        /* An older record: migrated in memory now, its files rewritten below (request.json here,
         * state.json with the other repairs). A crash in between leaves a record that loads and
         * migrates again. */
        if (version < STORE_FORMAT_VERSION) {
                r = migrate_record(request, &version);
                if (r < 0)
                        return r;
                r = json_write_at(fd, "request.json", request);
                if (r < 0)
                        return r;
                stats->migrated++;
                dirty = true;
        }

        /* result.json: the only proof that the run finished. */
        r = read_json_object(fd, "result.json", STORE_RESULT_MAX, &result);
        if (r >= 0) {
                r = result_summary(result, &run->status, &run->exit_code);
                if (r < 0)
                        return r;
                if (run->state != RUN_FINISHED) {
                        /* The service died between writing the result and the state. */
                        run->state = RUN_FINISHED;
                        if (fstatat(fd, "result.json", &st, AT_SYMLINK_NOFOLLOW) >= 0)
                                run->finished_usec = (uint64_t) st.st_mtim.tv_sec * 1000000ULL +
                                                     (uint64_t) st.st_mtim.tv_nsec / 1000ULL;
                        free(run->reason);
                        run->reason = NULL;
                        stats->repaired++;
                        dirty = true;
                }
        } else if (r == -ENOENT) {
                if (run->state != RUN_INTERRUPTED) {
                        free(run->reason);
                        run->reason = strdup(run->state == RUN_FINISHED
                                             ? "the result of the run was lost"
                                             : "the service stopped before the run finished");
                        if (!run->reason)
                                return -ENOMEM;
                        run->state = RUN_INTERRUPTED;
                        run->finished_usec = now;
                        stats->interrupted++;
                        dirty = true;
                }
        } else
                return r;

        if (dirty) {
                r = write_state(fd, run, STATE_DURABLE);
                if (r < 0)
                        return r;
        }
        (void) run_usage(fd, &run->disk_bytes);
        *ret = TAKE_PTR(run);
        return 0;
}

/* ---- The index (see INDEX_NAME above) ---- */

/* "ino:size:ctime" of each of the record's files, result.json only for a finished run. */
static int record_key(Store *s, const StoreRun *run, uint64_t *ret) {
        static const char *const files[] = { "request.json", "state.json", "result.json" };
        char buf[3 * 80] = "";
        size_t n = run->state == RUN_FINISHED ? 3 : 2;

        /* Paths below runs/, not an open of the record per file: a start over 100 000 records
         * makes these calls for each. The record itself is a directory (the caller saw so). */
        for (size_t i = 0; i < n; i++) {
                char path[STORE_RUN_ID_LEN + 1 + 16];
                struct stat st;
                size_t k = strlen(buf);

                (void) snprintf(path, sizeof(path), "%s/%s", run->id, files[i]);
                if (fstatat(s->runs_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode))
                        return -EBADMSG;
                (void) snprintf(buf + k, sizeof(buf) - k, "%s%ju:%jd:%jd.%09ld", i > 0 ? "," : "",
                                (uintmax_t) st.st_ino, (intmax_t) st.st_size, (intmax_t) st.st_ctim.tv_sec,
                                st.st_ctim.tv_nsec);
        }
        /* Kept as a 64-bit FNV-1a hash of that text: 8 bytes a run in memory, not 150. */
        uint64_t h = 14695981039346656037ULL;
        for (const char *p = buf; *p; p++)
                h = (h ^ (unsigned char) *p) * 1099511628211ULL;
        *ret = h ?: 1;
        return 0;
}

/* Strings in a line: absent as nothing, present as '=' and the text with \, tab and newline
 * escaped. */
static int index_put_str(FILE *f, const char *v) {
        (void) fputc('\t', f);
        if (!v)
                return 0;
        (void) fputc('=', f);
        for (; *v; v++)
                if (*v == '\\')
                        (void) fputs("\\\\", f);
                else if (*v == '\t')
                        (void) fputs("\\t", f);
                else if (*v == '\n')
                        (void) fputs("\\n", f);
                else
                        (void) fputc(*v, f);
        return 0;
}

static int index_get_str(char *field, char **ret) {
        char *out, *w;

        if (!field)
                return -EBADMSG;
        if (*field == '\0') {
                *ret = NULL;
                return 0;
        }
        if (*field != '=')
                return -EBADMSG;
        out = w = strdup(field + 1);
        if (!out)
                return -ENOMEM;
        for (const char *p = out; *p; p++) {
                if (*p != '\\') {
                        *w++ = *p;
                        continue;
                }
                p++;
                if (*p == '\\')
                        *w++ = '\\';
                else if (*p == 't')
                        *w++ = '\t';
                else if (*p == 'n')
                        *w++ = '\n';
                else {
                        free(out);
                        return -EBADMSG;
                }
        }
        *w = '\0';
        *ret = out;
        return 0;
}

int store_save_index(Store *s) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        if (!s->index_dirty)
                return 0;
        /* The index knows the files by their change times: those they will keep. */
        state_writes_wait(s, NULL);
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        (void) fputs(INDEX_MAGIC "\n", f);
        for (size_t i = 0; i < s->n_runs; i++) {
                StoreRun *run = s->runs[i];

                if (!run_state_is_final(run->state))
                        continue;
                if (run->index_key == 0 && record_key(s, run, &run->index_key) < 0)
                        continue;       /* read from the record next time */
                (void) fprintf(f, "%s\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%d\t%" PRIu64 "\t%" PRIu64, run->id,
                        (unsigned) run->owner, run->created_usec, run->started_usec, run->finished_usec,
                        run_state_to_string(run->state), run->exit_code, run->disk_bytes, run->index_key);
                index_put_str(f, run->skill_name);
                index_put_str(f, run->skill_hash);
                index_put_str(f, run->script);
                index_put_str(f, run->status);
                index_put_str(f, run->reason);
                (void) fputc('\n', f);
        }
        if (fclose(f) != 0 || !text)
                return -ENOMEM;
        r = write_file_atomic_at(s->root_fd, INDEX_NAME, text, size, 0600);
        if (r < 0)
                return r;
        s->index_dirty = false;
        return 0;
}

static int index_parse_line(char *line, StoreRun **ret) {
        _cleanup_(store_run_freep) StoreRun *run = NULL;
        char *f[14], *p = line;
        uint64_t owner, disk;
        size_t n = 0;
        int r;

        /* strsep(), not strtok_r(): empty fields count. */
        while (n < ELEMENTSOF(f) && p)
                f[n++] = strsep(&p, "\t");
        if (n != ELEMENTSOF(f) || p)
                return -EBADMSG;

        run = calloc(1, sizeof(StoreRun));
        if (!run)
                return -ENOMEM;
        if (!store_run_id_is_valid(f[0]))
                return -EBADMSG;
        memcpy(run->id, f[0], sizeof(run->id));
        run->state = run_state_from_string(f[5]);
        if (safe_atou64(f[1], &owner) < 0 || owner >= UID_INVALID ||
            safe_atou64(f[2], &run->created_usec) < 0 || safe_atou64(f[3], &run->started_usec) < 0 ||
            safe_atou64(f[4], &run->finished_usec) < 0 || !run_state_is_final(run->state) ||
            safe_atoi(f[6], &run->exit_code) < 0 || safe_atou64(f[7], &disk) < 0 ||
            safe_atou64(f[8], &run->index_key) < 0 || run->index_key == 0)
                return -EBADMSG;
        run->owner = (uid_t) owner;
        run->disk_bytes = disk;
        r = index_get_str(f[9], &run->skill_name);
        if (r >= 0)
                r = index_get_str(f[10], &run->skill_hash);
        if (r >= 0)
                r = index_get_str(f[11], &run->script);
        if (r >= 0)
                r = index_get_str(f[12], &run->status);
        if (r >= 0)
                r = index_get_str(f[13], &run->reason);
        if (r < 0)
                return r;
        if (!run->skill_name || !run->skill_hash || !run->script)
                return -EBADMSG;
        *ret = TAKE_PTR(run);
        return 0;
}

static int cmp_id(const void *a, const void *b) {
        return strcmp((*(StoreRun * const *) a)->id, (*(StoreRun * const *) b)->id);
}

/* The index's runs, sorted by id; none when there is no usable index. */
static int index_read(Store *s, StoreRun ***ret, size_t *ret_n) {
        _cleanup_free_ char *text = NULL;
        StoreRun **l = NULL;
        size_t n = 0, allocated = 0;
        char *line, *next;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = read_full_file_at(s->root_fd, INDEX_NAME, INDEX_MAX, true, &text, NULL);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        next = text;
        line = strsep(&next, "\n");
        if (!streq(line, INDEX_MAGIC))
                return 0;       /* another version: read every record, then write ours */
        while (next && *next) {
                StoreRun *run;

                line = strsep(&next, "\n");
                r = index_parse_line(line, &run);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        continue;       /* that run is read from its record */
                if (n == allocated) {
                        StoreRun **k;

                        allocated = MAX(allocated * 2, (size_t) 1024);
                        k = reallocarray(l, allocated, sizeof(StoreRun *));
                        if (!k) {
                                store_run_free(run);
                                r = -ENOMEM;
                                goto fail;
                        }
                        l = k;
                }
                l[n++] = run;
        }
        if (n > 1)
                qsort(l, n, sizeof(StoreRun *), cmp_id);
        *ret = l;
        *ret_n = n;
        return 0;

fail:
        for (size_t i = 0; i < n; i++)
                store_run_free(l[i]);
        free(l);
        return r;
}

/* The index's summary of run id when it still describes the record on disk (taken[] says it is
 * the caller's now), else NULL. */
static StoreRun *index_take(Store *s, StoreRun **l, bool *taken, size_t n, const char *id) {
        uint64_t key;
        StoreRun key_run = {}, *k = &key_run, **found;
        StoreRun *run;

        memcpy(key_run.id, id, sizeof(key_run.id));
        if (n == 0)
                return NULL;
        found = bsearch(&k, l, n, sizeof(StoreRun *), cmp_id);
        if (!found || taken[found - l])
                return NULL;
        run = *found;
        if (record_key(s, run, &key) < 0 || key != run->index_key)
                return NULL;
        taken[found - l] = true;
        return run;
}

int store_load(Store *s, uint64_t now_usec, StoreLoadStats *ret_stats) {
        _cleanup_free_ StoreRun **indexed = NULL;
        _cleanup_free_ bool *taken = NULL;
        size_t n_indexed = 0;
        StoreLoadStats stats = {};
        uint64_t now = now_or(now_usec);
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int r = 0;

        /* Nothing may be under way for the runs it frees. */
        store_wait_created(s);
        state_writes_wait(s, NULL);
        for (size_t i = 0; i < s->n_runs; i++)
                store_run_free(s->runs[i]);
        s->n_runs = 0;

        fd = openat(s->runs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);

        r = index_read(s, &indexed, &n_indexed);
        if (r < 0) {
                if (r == -ENOMEM) {
                        closedir(d);
                        return r;
                }
                r = 0;  /* unreadable: every record is read */
        }
        taken = calloc(n_indexed + 1, sizeof(bool));
        if (!taken) {
                for (size_t i = 0; i < n_indexed; i++)
                        store_run_free(indexed[i]);
                closedir(d);
                return -ENOMEM;
        }

        while ((de = readdir(d))) {
                StoreRun *run = NULL;
                int q;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                /* Half-created or half-removed records, and stray temporary files. */
                if (startswith(de->d_name, TEMP_PREFIX)) {
                        if (rm_rf_at(s->runs_fd, de->d_name) >= 0)
                                stats.leftovers++;
                        continue;
                }

                if (!store_run_id_is_valid(de->d_name))
                        q = -EBADMSG;
                else if (de->d_type == DT_DIR && (run = index_take(s, indexed, taken, n_indexed, de->d_name))) {
                        q = 0;
                        stats.indexed++;
                } else {
                        q = load_run(s, de->d_name, now, &stats, &run);
                        /* Final now, but not (or not so) in the index. */
                        if (q >= 0 && run_state_is_final(run->state))
                                s->index_dirty = true;
                }
                if (q == -EBADMSG) {
                        q = quarantine(s, de->d_name);
                        if (q >= 0)
                                stats.quarantined++;
                        else if (r == 0)
                                r = q;
                        continue;
                }
                if (q == -ENOMEM) {
                        r = q;
                        break;
                }
                if (q == -EPROTONOSUPPORT) {
                        stats.newer++;
                        continue;
                }
                if (q < 0) {
                        /* An I/O error: the record may be fine; leave it for the next start. */
                        if (r == 0)
                                r = q;
                        continue;
                }
                /* Appended as found; sorted once below. */
                q = index_reserve(s, s->n_runs + 1);
                if (q < 0) {
                        store_run_free(run);
                        r = q;
                        break;
                }
                s->runs[s->n_runs++] = run;
                stats.loaded++;
        }
        closedir(d);
        if (s->n_runs > 1)
                qsort(s->runs, s->n_runs, sizeof(StoreRun *), cmp_created);
        /* Runs of the index whose records are gone (removed by a crashed predecessor). */
        for (size_t i = 0; i < n_indexed; i++)
                if (!taken[i]) {
                        store_run_free(indexed[i]);
                        s->index_dirty = true;
                }
        /* Now rather than when leaving: a service that is killed would read them all again. */
        if (s->index_dirty && r >= 0)
                (void) store_save_index(s);

        if (ret_stats)
                *ret_stats = stats;
        return r;
}

static uint64_t run_end_usec(const StoreRun *run) {
        return run->finished_usec ?: run->created_usec;
}

static int cmp_end(const void *a, const void *b) {
        const StoreRun *x = *(StoreRun * const *) a, *y = *(StoreRun * const *) b;

        if (run_end_usec(x) != run_end_usec(y))
                return run_end_usec(x) < run_end_usec(y) ? -1 : 1;
        return strcmp(x->id, y->id);
}

/* Marks the oldest final runs of owner (UID_INVALID: everyone) for removal until the owner's
 * remaining records fit max_runs and max_bytes. */
static void mark_over_cap(StoreRun **sorted, bool *doomed, size_t n, uid_t owner,
                          uint64_t max_runs, uint64_t max_bytes) {
        uint64_t count = 0, bytes = 0;

        for (size_t i = 0; i < n; i++)
                if (!doomed[i] && (owner == UID_INVALID || sorted[i]->owner == owner)) {
                        count++;
                        bytes += sorted[i]->disk_bytes;
                }

        for (size_t i = 0; i < n && (count > max_runs || bytes > max_bytes); i++) {
                if (doomed[i] || !run_state_is_final(sorted[i]->state) ||
                    (owner != UID_INVALID && sorted[i]->owner != owner))
                        continue;
                doomed[i] = true;
                count--;
                bytes -= MIN(bytes, sorted[i]->disk_bytes);
        }
}

/* What each owner holds: a small open-addressing table, uid to runs and bytes. */
typedef struct OwnerUsage {
        uid_t owner;
        bool used;
        uint64_t runs;
        uint64_t bytes;
} OwnerUsage;

static OwnerUsage *owner_usage_slot(OwnerUsage *t, size_t size, uid_t owner) {
        size_t i = (size_t) owner * 2654435761U % size;

        while (t[i].used && t[i].owner != owner)
                i = (i + 1) % size;
        return &t[i];
}

/* Fills *ret (of *ret_size slots) with every owner's runs and bytes; true when one of them
 * exceeds the per-user caps. */
static int owners_usage(Store *s, const PolicyRetention *retention, OwnerUsage **ret, size_t *ret_size,
                        bool *ret_over) {
        _cleanup_free_ OwnerUsage *t = NULL;
        size_t size = 64, used = 0;
        bool over = false;

        t = calloc(size, sizeof(OwnerUsage));
        if (!t)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_runs; i++) {
                OwnerUsage *o = owner_usage_slot(t, size, s->runs[i]->owner);

                if (!o->used) {
                        if ((used + 1) * 2 > size) {
                                /* Half full: twice the room, every owner placed again. */
                                _cleanup_free_ OwnerUsage *old = TAKE_PTR(t);
                                size_t old_size = size;

                                size *= 2;
                                t = calloc(size, sizeof(OwnerUsage));
                                if (!t)
                                        return -ENOMEM;
                                for (size_t k = 0; k < old_size; k++)
                                        if (old[k].used)
                                                *owner_usage_slot(t, size, old[k].owner) = old[k];
                                o = owner_usage_slot(t, size, s->runs[i]->owner);
                        }
                        o->used = true;
                        o->owner = s->runs[i]->owner;
                        used++;
                }
                o->runs++;
                o->bytes += s->runs[i]->disk_bytes;
                if (o->runs > retention->max_runs_per_user || o->bytes > retention->max_bytes_per_user)
                        over = true;
        }
        *ret = TAKE_PTR(t);
        *ret_size = size;
        *ret_over = over;
        return 0;
}

int store_gc(Store *s, const PolicyRetention *retention, uint64_t now_usec, char ***ret_removed) {
        _cleanup_strv_free_ char **removed = NULL;
        _cleanup_free_ StoreRun **sorted = NULL;
        _cleanup_free_ bool *doomed = NULL;
        _cleanup_free_ OwnerUsage *owners = NULL;
        uint64_t now = now_or(now_usec), total_bytes = 0;
        size_t n = s->n_runs, n_owners = 0;
        bool aged = false, owner_over = false;
        int ret = 0, r;

        /* Called after every run: first, in one pass, whether any rule applies at all, so that
         * a store within its caps costs no sorting. */
        for (size_t i = 0; i < n; i++) {
                total_bytes += s->runs[i]->disk_bytes;
                if (retention->max_age_usec != POLICY_INFINITY && run_state_is_final(s->runs[i]->state) &&
                    run_end_usec(s->runs[i]) + retention->max_age_usec < now)
                        aged = true;
        }
        r = owners_usage(s, retention, &owners, &n_owners, &owner_over);
        if (r < 0)
                return r;
        if (!aged && !owner_over && n <= retention->max_runs && total_bytes <= retention->max_bytes) {
                if (ret_removed)
                        *ret_removed = NULL;
                return 0;
        }

        sorted = calloc(n + 1, sizeof(StoreRun *));
        doomed = calloc(n + 1, sizeof(bool));
        if (!sorted || !doomed)
                return -ENOMEM;
        if (n > 0) {
                memcpy(sorted, s->runs, n * sizeof(StoreRun *));
                qsort(sorted, n, sizeof(StoreRun *), cmp_end);
        }

        /* 1. Age. */
        if (retention->max_age_usec != POLICY_INFINITY)
                for (size_t i = 0; i < n; i++)
                        if (run_state_is_final(sorted[i]->state) &&
                            run_end_usec(sorted[i]) + retention->max_age_usec < now)
                                doomed[i] = true;

        /* 2. Each owner's share: the owners over it (counting every run; those aged out above
         *    are not counted again). */
        for (size_t k = 0; k < n_owners; k++)
                if (owners[k].used && (owners[k].runs > retention->max_runs_per_user ||
                                       owners[k].bytes > retention->max_bytes_per_user))
                        mark_over_cap(sorted, doomed, n, owners[k].owner,
                                      retention->max_runs_per_user, retention->max_bytes_per_user);

        /* 3. Everyone's. */
        mark_over_cap(sorted, doomed, n, UID_INVALID, retention->max_runs, retention->max_bytes);

        for (size_t i = 0; i < n; i++) {
                char id[STORE_RUN_ID_LEN + 1];

                if (!doomed[i])
                        continue;
                memcpy(id, sorted[i]->id, sizeof(id));
                r = store_run_remove(s, sorted[i]);
                if (r < 0) {
                        if (ret == 0)
                                ret = r;
                        continue;
                }
                r = strv_extend(&removed, id);
                if (r < 0)
                        return r;
        }

        if (ret_removed)
                *ret_removed = TAKE_PTR(removed);
        return ret;
}

int store_check_space(Store *s, uint64_t min_free_bytes, uint64_t min_free_percent, char **error) {
        char avail_s[FORMAT_BYTES_MAX], min_s[FORMAT_BYTES_MAX];
        uint64_t avail, total;
        struct statvfs sv;

        if (fstatvfs(s->root_fd, &sv) < 0)
                return error_setf(error, -errno, "Cannot tell the free space of %s: %m", s->root);

        /* f_bavail, not f_bfree: the blocks reserved for root are the system's last resort, not
         * room for results. */
        avail = u64_mul_sat(sv.f_bavail, sv.f_frsize);
        total = u64_mul_sat(sv.f_blocks, sv.f_frsize);
        if (avail < min_free_bytes || u64_mul_sat(avail, 100) < u64_mul_sat(total, min_free_percent))
                return error_setf(error, -ENOSPC,
                                  "Not enough free space to keep results in %s: %s available, "
                                  "the policy keeps %s and %" PRIu64 "%% free. Refusing new runs.",
                                  s->root, format_bytes(avail_s, sizeof(avail_s), avail),
                                  format_bytes(min_s, sizeof(min_s), min_free_bytes), min_free_percent);
        if (sv.f_files > 0 && sv.f_favail == 0)
                return error_setf(error, -ENOSPC,
                                  "No free inodes left to keep results in %s. Refusing new runs.",
                                  s->root);
        return 0;
}
