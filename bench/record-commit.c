/* record-commit: what the run record's commit costs on a file system, arranged four ways, and
 * what each step costs alone (bench/README.md, "The run's end, ninth round"). It replays the
 * engine's steps on plain files in DIR: a log made, named and its directory synced ahead; a
 * line written to it while "the skill runs"; then, from the streams' end, WORK_MS of the
 * engine's own work (reading the usage, formatting result.json), result.json's 2 KiB written,
 * and the commit: the log's and result.json's data synced, result.json renamed, the directory
 * synced. Each round runs every arrangement once, in a rotated order; medians over the rounds.
 *
 *   cc -O2 -pthread -o record-commit bench/record-commit.c
 *   ./record-commit ROUNDS DIR [WORK_MS]       (DIR is made; WORK_MS defaults to 0.2)
 *
 * Arrangements, timed from the streams' end to the directory's sync:
 *   at the end, thread    the seventh round's: after the work, a waiting thread syncs the log,
 *                         then result.json, renames, syncs the directory
 *   log early, thread     the thread syncs the log at the streams' end, result.json after the
 *                         work (it waits for its word), renames, syncs the directory
 *   log early, engine     the thread syncs the log at the streams' end; the engine syncs
 *                         result.json itself after the work, waits for the log's word (most often
 *                         given by then), renames, syncs the directory (the ninth round's)
 *   side by side at end   after the work, the thread syncs the log while the engine syncs
 *                         result.json (concurrent flushes can share one), then as above */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { AT_END, LOG_EARLY_THREAD, LOG_EARLY_ENGINE, SIDE_BY_SIDE, N_WAYS };

static const char *const way_names[N_WAYS] = {
        "at the end, thread", "log early, thread", "log early, engine", "side by side at end",
};

static int dir_fd, log_fd, result_fd, go_fd, mid_fd, done_fd;
static int way;

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void spin(double ms) {
        double end = now_ms() + ms;

        while (now_ms() < end)
                ;
}

static void wait_fd(int fd) {
        eventfd_t v;

        (void) eventfd_read(fd, &v);
}

static void commit_name(void) {
        (void) renameat(dir_fd, "result.tmp", dir_fd, "result.json");
        (void) fsync(dir_fd);
}

static void *thread_main(void *arg) {
        (void) arg;
        wait_fd(go_fd);
        (void) fsync(log_fd);
        if (way == LOG_EARLY_ENGINE || way == SIDE_BY_SIDE) {
                (void) eventfd_write(done_fd, 1);
                return NULL;
        }
        if (way == LOG_EARLY_THREAD)
                wait_fd(mid_fd);
        (void) fsync(result_fd);
        commit_name();
        (void) eventfd_write(done_fd, 1);
        return NULL;
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double median(double *v, int n, double q) {
        qsort(v, n, sizeof(double), cmp);
        return v[(int) (n * q)];
}

/* Alone, 200 times each: a sync of a file with nothing to write (the device flush), of one whose
 * data is on the device (its inode's block and the flush), of one with data to write. */
static void steps(int rounds) {
        double *flush = calloc(rounds, sizeof(double)), *inode = calloc(rounds, sizeof(double)),
               *data = calloc(rounds, sizeof(double));
        int fd = openat(dir_fd, "steps", O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);

        (void) fsync(fd);
        for (int i = 0; i < rounds; i++) {
                double t = now_ms();

                (void) fsync(fd);
                flush[i] = now_ms() - t;
                (void) pwrite(fd, "x", 1, i);
                (void) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                       SYNC_FILE_RANGE_WAIT_AFTER);
                usleep(500);
                t = now_ms();
                (void) fsync(fd);
                inode[i] = now_ms() - t;
                (void) pwrite(fd, "y", 1, i);
                usleep(500);
                t = now_ms();
                (void) fsync(fd);
                data[i] = now_ms() - t;
        }
        printf("a sync alone: nothing to write (the flush) %.3f, the inode and the flush %.3f, "
               "data, inode, flush %.3f ms\n", median(flush, rounds, 0.5), median(inode, rounds, 0.5),
               median(data, rounds, 0.5));
        close(fd);
        (void) unlinkat(dir_fd, "steps", 0);
}

int main(int argc, char *argv[]) {
        static char result[2048];
        double *ms[N_WAYS], work;
        int rounds;

        if (argc < 3) {
                fprintf(stderr, "usage: %s ROUNDS DIR [WORK_MS]\n", argv[0]);
                return 2;
        }
        rounds = atoi(argv[1]);
        work = argc > 3 ? atof(argv[3]) : 0.2;
        (void) mkdir(argv[2], 0755);
        dir_fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        go_fd = eventfd(0, EFD_CLOEXEC);
        mid_fd = eventfd(0, EFD_CLOEXEC);
        done_fd = eventfd(0, EFD_CLOEXEC);
        if (rounds < 1 || dir_fd < 0 || go_fd < 0 || mid_fd < 0 || done_fd < 0) {
                perror("record-commit");
                return 1;
        }
        memset(result, 'x', sizeof(result));
        for (int w = 0; w < N_WAYS; w++)
                ms[w] = calloc(rounds, sizeof(double));

        for (int i = 0; i < rounds; i++)
                for (int k = 0; k < N_WAYS; k++) {
                        pthread_t thread;
                        double start;

                        way = (i + k) % N_WAYS;
                        (void) unlinkat(dir_fd, "result.json", 0);
                        log_fd = openat(dir_fd, "log.tmp", O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
                        result_fd = openat(dir_fd, "result.tmp", O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
                        (void) renameat(dir_fd, "log.tmp", dir_fd, "stdout.log");
                        (void) fsync(dir_fd);
                        (void) pthread_create(&thread, NULL, thread_main, NULL);
                        /* The skill's line, its writeback started, as the engine does. */
                        (void) write(log_fd, "{\"ok\": true}\n", 13);
                        (void) sync_file_range(log_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
                        usleep(2000);

                        start = now_ms();
                        if (way == LOG_EARLY_THREAD || way == LOG_EARLY_ENGINE)
                                (void) eventfd_write(go_fd, 1);
                        spin(work);
                        (void) write(result_fd, result, sizeof(result));
                        switch (way) {
                        case AT_END:
                                (void) sync_file_range(result_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
                                (void) eventfd_write(go_fd, 1);
                                wait_fd(done_fd);
                                break;
                        case LOG_EARLY_THREAD:
                                (void) sync_file_range(result_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
                                (void) eventfd_write(mid_fd, 1);
                                wait_fd(done_fd);
                                break;
                        case SIDE_BY_SIDE:
                                (void) eventfd_write(go_fd, 1);
                                /* fall through */
                        default:
                                (void) fsync(result_fd);
                                wait_fd(done_fd);
                                commit_name();
                                break;
                        }
                        ms[way][i] = now_ms() - start;
                        (void) pthread_join(thread, NULL);
                        close(log_fd);
                        close(result_fd);
                }

        printf("%d rounds, %.2f ms of work, medians (p25, p75) in ms from the streams' end\n", rounds, work);
        for (int w = 0; w < N_WAYS; w++)
                printf("  %-22s %.3f (%.3f, %.3f)\n", way_names[w], median(ms[w], rounds, 0.5),
                       median(ms[w], rounds, 0.25), median(ms[w], rounds, 0.75));
        steps(rounds);
        return 0;
}
