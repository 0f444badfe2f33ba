/* The run's record in the output directory (stdout.log, stderr.log, result.json), prepared while
 * the skill runs and committed after it, partly by a helper thread.
 *
 * What the store promises is unchanged: result.json is the commit point, so once it is found
 * (also after a crash) the logs beside it are this run's and whole; nothing is half-written. Its
 * order: the earlier run's result.json is removed before its logs; the logs' names, and every
 * byte written to them, are durable before result.json's rename; the rename is durable before
 * the run returns.
 *
 * What moves off the run's end: removing the earlier run's files, creating the logs under their
 * names and result.json's temporary file, and making those names durable (one fsync() of the
 * directory): all while the skill runs, in the helper thread, started at the hand-over. The
 * engine writes the logs as the skill writes. Once the streams are drained the logs are whole:
 * the thread syncs them then (run_record_logs_final()), while the engine reads the usage and
 * writes result.json, and afterwards does the engine's meanwhile work (the init's end), which
 * needs no disk. The engine syncs result.json's data itself as soon as it is written, waits for
 * the thread's word that the logs' syncs are done (they usually are by then), renames
 * result.json and syncs the directory: no wakeup of another thread sits between the skill's end
 * and the return unless the disk is slower than the engine's own work. */
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

/* The logs that got bytes (an empty log's creation is durable with the directory already). */
static void record_sync_logs(RunRecord *rec, bool out, bool err) {
        if (out)
                rec->out_sync = fsync_errno(rec->out.fd);
        if (err)
                rec->err_sync = fsync_errno(rec->err.fd);
}

/* After the logs' syncs: result.json's data, its rename, the directory. Not renamed unless the
 * logs are whole under their names. result_synced: its data was synced already (result_error
 * says how that went). */
static void record_sync_result(RunRecord *rec, bool result_synced) {
        if (rec->out_sync < 0 || rec->err_sync < 0 || rec->remove_error < 0 || rec->logs_error < 0)
                return;
        if (rec->result_error < 0)
                return;
        if (rec->dir_error < 0) {
                rec->result_error = rec->dir_error;
                return;
        }
        if (!result_synced)
                rec->result_error = fsync_errno(rec->result.fd);
        rec->synced_usec = now_usec(CLOCK_MONOTONIC);
        if (rec->result_error < 0)
                return;
        rec->result_error = renameat(rec->dir_fd, rec->result.tmp, rec->dir_fd, "result.json") < 0 ? -errno : 0;
        if (rec->result_error < 0)
                return;
        rec->renamed = true;
        /* Failing here, the result is in place but may not survive a crash: the engine warns. */
        rec->rename_sync_error = fsync_errno(rec->dir_fd);
        rec->stored_usec = now_usec(CLOCK_MONOTONIC);
}

/* Until the engine asks for stage or more (or the end). */
static int record_wait_stage(RunRecord *rec, int stage) {
        for (;;) {
                int asked = atomic_load(&rec->stage);
                eventfd_t v;

                if (asked >= stage)
                        return asked;
                while (eventfd_read(rec->go_fd, &v) < 0 && errno == EINTR)
                        ;
        }
}

static void *record_thread(void *arg) {
        RunRecord *rec = arg;
        int stage;

        record_make(rec);
        atomic_store(&rec->made, true);
        (void) eventfd_write(rec->ready_fd, 1);
        record_name(rec);

        stage = record_wait_stage(rec, RECORD_STAGE_LOGS);
        if (stage != RECORD_STAGE_END) {
                /* What the engine had written when it asked (out_data may change under us). */
                record_sync_logs(rec, rec->out_final > 0, rec->err_final > 0);
                rec->logs_usec = now_usec(CLOCK_MONOTONIC);
                /* out_sync, err_sync and logs_usec are the engine's once it sees this. */
                atomic_store(&rec->logs_synced, true);
                (void) eventfd_write(rec->synced_fd, 1);
                stage = record_wait_stage(rec, RECORD_STAGE_MEANWHILE);
        }
        if (stage == RECORD_STAGE_MEANWHILE)
                rec->meanwhile(rec->userdata);
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
                .synced_fd = -EBADF,
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
        rec->synced_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        rec->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (rec->ready_fd >= 0 && rec->go_fd >= 0 && rec->synced_fd >= 0 && rec->done_fd >= 0) {
                /* It takes no signal meant for the engine (thread-util.h). */
                rec->thread_started = thread_start_small(&rec->thread, record_thread, rec, NULL) >= 0;
        }
        if (!rec->thread_started) {
                rec->ready_fd = safe_close(rec->ready_fd);
                rec->go_fd = safe_close(rec->go_fd);
                rec->synced_fd = safe_close(rec->synced_fd);
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

int run_record_write_logs(RunRecord *rec, const RunStream *out, const RunStream *err) {
        int r;

        r = run_record_write_log(rec, false, out->data, out->size);
        if (r < 0)
                return r;
        return run_record_write_log(rec, true, err->data, err->size);
}

int run_record_write_result(RunRecord *rec, const char *text, size_t size) {
        if (rec->result.fd < 0)
                return rec->result_error < 0 ? rec->result_error : -EBADF;
        /* No writeback started here: the commit's fsync() follows at once, in this thread. */
        return loop_write(rec->result.fd, text, size);
}

static void poll_until(int fd, atomic_bool *flag) {
        while (!atomic_load(flag)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };

                (void) poll(&p, 1, -1);
        }
}

static bool record_threaded(const RunRecord *rec) {
        return rec->begun && rec->thread_started && !rec->joined;
}

void run_record_logs_final(RunRecord *rec) {
        if (!record_threaded(rec) || atomic_load(&rec->stage) >= RECORD_STAGE_LOGS)
                return;
        /* What the thread syncs: a byte written to a log after this is synced by the commit. */
        rec->out_final = rec->out_written;
        rec->err_final = rec->err_written;
        record_ask(rec, RECORD_STAGE_LOGS);
}

bool run_record_meanwhile(RunRecord *rec, void (*meanwhile)(void *userdata), void *userdata) {
        if (!record_threaded(rec) || atomic_load(&rec->stage) >= RECORD_STAGE_MEANWHILE)
                return false;
        run_record_logs_final(rec);
        rec->meanwhile = meanwhile;
        rec->userdata = userdata;
        record_ask(rec, RECORD_STAGE_MEANWHILE);
        return true;
}

void run_record_commit(RunRecord *rec) {
        if (record_threaded(rec) && atomic_load(&rec->stage) != RECORD_STAGE_END) {
                run_record_logs_final(rec);
                /* result.json's data while the thread may still sync the logs': the order that
                 * matters is both before the rename. */
                if (rec->result_error >= 0)
                        rec->result_error = fsync_errno(rec->result.fd);
                poll_until(rec->synced_fd, &rec->logs_synced);
                /* Bytes that came after the thread's syncs (a write tried again at the store). */
                record_sync_logs(rec, rec->out_sync >= 0 && rec->out_written != rec->out_final,
                                 rec->err_sync >= 0 && rec->err_written != rec->err_final);
                record_sync_result(rec, true);
        } else {
                record_sync_logs(rec, rec->out_data, rec->err_data);
                record_sync_result(rec, false);
        }
        if (rec->renamed) {
                free(rec->result.tmp);
                rec->result.tmp = NULL;
        }
}

void run_record_settle(RunRecord *rec) {
        /* Its word that it is done, not its exit: that wakeup comes later, and the join waits
         * for it once the run is over (run_record_done()). */
        if (record_threaded(rec) && atomic_load(&rec->stage) == RECORD_STAGE_MEANWHILE)
                poll_until(rec->done_fd, &rec->finished);
}

void run_record_done(RunRecord *rec) {
        if (!rec->begun)
                return;
        if (rec->thread_started && !rec->joined) {
                /* What it was asked for that it has not begun is not done: it only ends. Its
                 * meanwhile work, once asked for, is done. */
                if (!atomic_load(&rec->finished) && atomic_load(&rec->stage) < RECORD_STAGE_MEANWHILE)
                        record_ask(rec, RECORD_STAGE_END);
                (void) pthread_join(rec->thread, NULL);
                rec->joined = true;
        }
        atomic_file_done(&rec->result);
        atomic_file_done(&rec->out);
        atomic_file_done(&rec->err);
        rec->ready_fd = safe_close(rec->ready_fd);
        rec->go_fd = safe_close(rec->go_fd);
        rec->synced_fd = safe_close(rec->synced_fd);
        rec->done_fd = safe_close(rec->done_fd);
}
