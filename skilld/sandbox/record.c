/* The run's record in the output directory (stdout.log, stderr.log, result.json), prepared while
 * the skill runs and committed after it by a helper thread.
 *
 * What the store promises is unchanged: result.json is the commit point, so once it is found
 * (also after a crash) the logs beside it are this run's and whole; nothing is half-written. Its
 * order: the earlier run's result.json is removed before its logs; the logs' names, and every
 * byte written to them, are durable before result.json's rename; the rename is durable before
 * the run returns.
 *
 * What moves off the run's end: removing the earlier run's files, creating the logs under their
 * names and result.json's temporary file, and making those names durable (one fsync() of the
 * directory): all while the skill runs, in the helper thread, started at the release. The engine
 * writes the logs as the skill writes, and result.json's bytes at the end; the thread then syncs
 * the files that got bytes (an empty log's creation is durable already), renames result.json and
 * syncs the directory, one after the other (side by side in threads of their own cost more to
 * start than they saved here), while the engine reaps the init and removes its cgroups. */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>

#include "fileio.h"
#include "sandbox-internal.h"
#include "thread-util.h"

static int fsync_errno(int fd) {
        return fsync(fd) < 0 ? -errno : 0;
}

/* The new files, under temporary names: what the engine writes to. */
static void record_make(RunRecord *rec) {
        rec->logs_error = atomic_file_write_at(rec->dir_fd, "stdout.log", "", 0, 0644, &rec->out);
        if (rec->logs_error >= 0)
                rec->logs_error = atomic_file_write_at(rec->dir_fd, "stderr.log", "", 0, 0644, &rec->err);
        if (rec->sync)
                rec->result_error = atomic_file_write_at(rec->dir_fd, "result.json", "", 0, 0644, &rec->result);
}

/* The earlier run's result.json goes first (it never stands beside logs that are not its own),
 * then the new logs take their names (freeing an earlier run's: on a disk mounted with discard,
 * 0.3 to 2 ms for each file that held data), then those names are synced. Where the earlier
 * result.json stays, the new logs do not take their names; the engine says why in a result.json
 * renamed over it. */
static void record_name(RunRecord *rec) {
        if (unlinkat(rec->dir_fd, "result.json", 0) < 0 && errno != ENOENT) {
                rec->remove_error = -errno;
                return;
        }
        if (rec->logs_error >= 0)
                rec->logs_error = atomic_file_commit(&rec->out);
        if (rec->logs_error >= 0)
                rec->logs_error = atomic_file_commit(&rec->err);
        if (rec->sync && rec->result_error >= 0)
                rec->dir_error = fsync_errno(rec->dir_fd);
}

/* After the bytes: the logs that got any, result.json, its rename, the directory. Not renamed
 * unless the logs are whole under their names. */
static void record_sync(RunRecord *rec) {
        if (rec->out_data)
                rec->out_sync = fsync_errno(rec->out.fd);
        if (rec->err_data)
                rec->err_sync = fsync_errno(rec->err.fd);
        if (rec->out_sync < 0 || rec->err_sync < 0 || rec->remove_error < 0 || rec->logs_error < 0)
                return;
        if (rec->result_error < 0)
                return;
        if (rec->dir_error < 0) {
                rec->result_error = rec->dir_error;
                return;
        }
        rec->result_error = fsync_errno(rec->result.fd);
        rec->synced_usec = now_usec(CLOCK_MONOTONIC);
        if (rec->result_error < 0)
                return;
        rec->result_error = renameat(rec->dir_fd, rec->result.tmp, rec->dir_fd, "result.json") < 0 ? -errno : 0;
        if (rec->result_error < 0)
                return;
        rec->renamed = true;
        /* Failing here, the result exists but may not survive a crash; the earlier store did not
         * report that either. */
        (void) fsync(rec->dir_fd);
        rec->stored_usec = now_usec(CLOCK_MONOTONIC);
}

static void *record_thread(void *arg) {
        RunRecord *rec = arg;

        record_make(rec);
        atomic_store(&rec->made, true);
        (void) eventfd_write(rec->ready_fd, 1);
        record_name(rec);
        /* What the engine asks for (rec->stage, set before go_fd is written). */
        for (;;) {
                int stage = atomic_load(&rec->stage);
                eventfd_t v;

                if (stage == RECORD_STAGE_COMMIT)
                        record_sync(rec);
                if (stage != RECORD_STAGE_WAIT)
                        break;
                while (eventfd_read(rec->go_fd, &v) < 0 && errno == EINTR)
                        ;
        }
        /* Nothing of rec is touched after this but done_fd, which lives until the join. */
        atomic_store(&rec->finished, true);
        (void) eventfd_write(rec->done_fd, 1);
        return NULL;
}

static void record_ask(RunRecord *rec, int stage) {
        atomic_store(&rec->stage, stage);
        (void) eventfd_write(rec->go_fd, 1);
}

void run_record_begin(RunRecord *rec, int dir_fd, bool sync, bool ahead) {

        if (rec->begun || dir_fd < 0)
                return;
        *rec = (RunRecord) {
                .begun = true,
                .dir_fd = dir_fd,
                .sync = sync,
                .out = ATOMIC_FILE_NULL,
                .err = ATOMIC_FILE_NULL,
                .result = ATOMIC_FILE_NULL,
                .ready_fd = -EBADF,
                .go_fd = -EBADF,
                .done_fd = -EBADF,
        };
        if (!ahead || !sync || fd_on_memory_fs(dir_fd)) {
                record_make(rec);
                record_name(rec);
                rec->ready = true;
                return;
        }

        rec->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        rec->go_fd = eventfd(0, EFD_CLOEXEC);
        rec->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (rec->ready_fd >= 0 && rec->go_fd >= 0 && rec->done_fd >= 0) {
                /* It takes no signal meant for the engine (thread-util.h). */
                rec->thread_started = thread_start_small(&rec->thread, record_thread, rec, NULL) >= 0;
        }
        if (!rec->thread_started) {
                rec->ready_fd = safe_close(rec->ready_fd);
                rec->go_fd = safe_close(rec->go_fd);
                rec->done_fd = safe_close(rec->done_fd);
                record_make(rec);
                record_name(rec);
                rec->ready = true;
        }
}

bool run_record_ready(RunRecord *rec, bool wait) {
        struct pollfd p = { .fd = rec->ready_fd, .events = POLLIN };

        if (!rec->begun || rec->ready)
                return rec->ready;
        while (poll(&p, 1, wait ? -1 : 0) < 0 && errno == EINTR)
                ;
        /* What the thread made is seen once it says so. */
        rec->ready = (p.revents & POLLIN) && atomic_load(&rec->made);
        return rec->ready;
}

int run_record_write_log(RunRecord *rec, bool err, const char *data, size_t size) {
        int fd = err ? rec->err.fd : rec->out.fd;
        size_t *written = err ? &rec->err_written : &rec->out_written;

        if (fd < 0)
                return rec->logs_error < 0 ? rec->logs_error : -EBADF;
        if (size <= *written)
                return 0;
        /* At the offset of what is written: a failed write tried again at the end (ENOSPC may
         * pass) neither repeats nor skips a byte. */
        while (*written < size) {
                ssize_t k = pwrite(fd, data + *written, size - *written, (off_t) *written);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                *written += (size_t) k;
                *(err ? &rec->err_data : &rec->out_data) = true;
        }
        /* The writeback starts now: blocks written while the skill runs are on the disk by its
         * end, and the commit the first fsync() waits for carries every file's. Only a hint. */
        (void) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        return 0;
}

int run_record_write_result(RunRecord *rec, const char *text, size_t size) {
        int r;

        if (rec->result.fd < 0)
                return rec->result_error < 0 ? rec->result_error : -EBADF;
        r = loop_write(rec->result.fd, text, size);
        if (r < 0)
                return r;
        (void) sync_file_range(rec->result.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        return 0;
}

void run_record_commit(RunRecord *rec, void (*meanwhile)(void *userdata, int done_fd), void *userdata) {
        if (rec->thread_started && !rec->joined) {
                record_ask(rec, RECORD_STAGE_COMMIT);
                if (meanwhile)
                        meanwhile(userdata, rec->done_fd);
                /* Its word that the commit is done, not its exit: that wakeup comes later, and the
                 * join waits for it once the run is over (run_record_done()). */
                while (!atomic_load(&rec->finished)) {
                        struct pollfd p = { .fd = rec->done_fd, .events = POLLIN };

                        (void) poll(&p, 1, -1);
                }
        } else {
                record_sync(rec);
                if (meanwhile)
                        meanwhile(userdata, -EBADF);
        }
        if (rec->renamed) {
                free(rec->result.tmp);
                rec->result.tmp = NULL;
        }
}

void run_record_done(RunRecord *rec) {
        if (!rec->begun)
                return;
        if (rec->thread_started && !rec->joined) {
                /* Not committed: the thread only ends. */
                if (!atomic_load(&rec->finished))
                        record_ask(rec, RECORD_STAGE_END);
                (void) pthread_join(rec->thread, NULL);
                rec->joined = true;
        }
        atomic_file_done(&rec->result);
        atomic_file_done(&rec->out);
        atomic_file_done(&rec->err);
        rec->ready_fd = safe_close(rec->ready_fd);
        rec->go_fd = safe_close(rec->go_fd);
        rec->done_fd = safe_close(rec->done_fd);
}
