/* "skillctl runs prune": the retention of embedded runs' outputs. Every embedded run (and every run
 * through the service, fetched back) leaves ./skill-out/<run id>/ behind; nothing else cleans it.
 * Prune removes the ended ones older than --older-than (default 7 days), always keeping the newest
 * --keep (default 10), from --dir (default ./skill-out).
 *
 * Only what skillctl wrote is touched: folders named as a run id that hold a result.json, which is
 * written last, so a run still in progress (or anything else in the folder) stays. Nothing is
 * followed: symlinks are neither entered nor counted. */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "bus-client.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "verbs.h"

#define PRUNE_OLDER_THAN_DEFAULT_USEC (7ULL * 24 * 3600 * 1000000)
#define PRUNE_KEEP_DEFAULT 10U

typedef struct PrunedRun {
        char name[33];
        uint64_t ended_usec;            /* result.json's mtime */
} PrunedRun;

static int cmp_newest_first(const void *a, const void *b) {
        uint64_t x = ((const PrunedRun *) a)->ended_usec, y = ((const PrunedRun *) b)->ended_usec;

        return x < y ? 1 : x > y ? -1 : strcmp(((const PrunedRun *) a)->name, ((const PrunedRun *) b)->name);
}

static void help(void) {
        printf("Usage: skillctl runs prune [--older-than DURATION] [--keep N] [--dir DIR] [--dry-run]\n"
               "\n"
               "Remove the output folders runs left in ./skill-out/ (artifacts, logs, result.json):\n"
               "those of ended runs older than DURATION (default 7d; 0 for all), keeping the newest N\n"
               "(default 10). Only folders named as a run id and holding a result.json are touched.\n"
               "\n"
               "  --older-than DURATION  Age of the runs to remove, e.g. 12h, 30d (default 7d)\n"
               "  --keep N               Keep at least the newest N runs (default 10)\n"
               "  --dir DIR              The output folder (default ./skill-out)\n"
               "  --dry-run              Say what would be removed, remove nothing\n");
}

/* Lists the ended runs of dir_fd into *ret (sorted newest first). */
static int list_runs(int dir_fd, PrunedRun **ret, size_t *ret_n) {
        _cleanup_free_ PrunedRun *runs = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;
        int fd;

        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                _cleanup_free_ char *result = NULL;
                struct stat st;
                PrunedRun *grown;

                if (!run_id_is_valid(de->d_name, false) ||
                    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                result = strdup_printf("%s/result.json", de->d_name);
                if (!result) {
                        closedir(d);
                        return -ENOMEM;
                }
                if (fstatat(dir_fd, result, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;       /* in progress, or not skillctl's */
                grown = reallocarray(runs, n + 1, sizeof(PrunedRun));
                if (!grown) {
                        closedir(d);
                        return -ENOMEM;
                }
                runs = grown;
                memcpy(runs[n].name, de->d_name, 33);
                runs[n].ended_usec = (uint64_t) st.st_mtim.tv_sec * 1000000ULL + (uint64_t) st.st_mtim.tv_nsec / 1000;
                n++;
        }
        closedir(d);
        if (n > 0)
                qsort(runs, n, sizeof(PrunedRun), cmp_newest_first);
        *ret = TAKE_PTR(runs);
        *ret_n = n;
        return 0;
}

static int runs_prune_main(int argc, char *argv[]) {
        enum { ARG_OLDER_THAN = 0x100, ARG_KEEP, ARG_DIR, ARG_DRY_RUN };
        static const struct option options[] = {
                { "help",       no_argument,       NULL, 'h' },
                { "older-than", required_argument, NULL, ARG_OLDER_THAN },
                { "keep",       required_argument, NULL, ARG_KEEP },
                { "dir",        required_argument, NULL, ARG_DIR },
                { "dry-run",    no_argument,       NULL, ARG_DRY_RUN },
                {}
        };
        uint64_t older_than = PRUNE_OLDER_THAN_DEFAULT_USEC, keep = PRUNE_KEEP_DEFAULT, now;
        _cleanup_free_ PrunedRun *runs = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const char *dir = "skill-out";
        bool dry_run = false;
        struct timespec ts;
        size_t n = 0, removed_n = 0;
        int c, r, ret = 0;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_OLDER_THAN:
                        if (parse_sec(optarg, &older_than) < 0)
                                return usage_error(optarg, "--older-than: not a duration, e.g. 12h, 7d, 2w, or 0");
                        break;
                case ARG_KEEP:
                        if (safe_atou64(optarg, &keep) < 0)
                                return usage_error(optarg, "--keep: not a number");
                        break;
                case ARG_DIR:
                        dir = optarg;
                        break;
                case ARG_DRY_RUN:
                        dry_run = true;
                        break;
                default:
                        return EXIT_USAGE;
                }
        if (optind < argc)
                return usage_error("runs prune", "takes no arguments (see 'skillctl runs prune --help')");

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0 && errno == ENOENT) {
                printf("%s: no such folder, nothing to prune.\n", dir);
                return 0;
        }
        if (dir_fd < 0)
                return log_error_errno(errno, "%s: cannot open: %m", dir), EXIT_FAILURE;
        r = list_runs(dir_fd, &runs, &n);
        if (r < 0)
                return log_error_errno(r, "%s: cannot list: %m", dir), EXIT_FAILURE;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        now = (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
        for (size_t i = keep < n ? keep : n; i < n; i++) {
                if (runs[i].ended_usec + older_than > now)
                        continue;
                if (dry_run) {
                        printf("would remove %s/%s\n", dir, runs[i].name);
                        removed_n++;
                        continue;
                }
                r = rm_rf_at(dir_fd, runs[i].name);
                if (r < 0) {
                        log_error_errno(r, "%s/%s: cannot remove: %m", dir, runs[i].name);
                        ret = EXIT_FAILURE;
                        continue;
                }
                removed_n++;
        }
        printf("%s: %zu of %zu run%s %s, %zu kept.\n", dir, removed_n, n, n == 1 ? "" : "s",
               dry_run ? "would be removed" : "removed", n - removed_n);
        return ret;
}

int verb_runs(int argc, char *argv[]) {
        static const Verb subverbs[] = {
                { "prune", runs_prune_main },
        };

        if (argc < 2)
                return usage_error("runs", "missing subcommand (prune)");
        if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
                printf("Usage: skillctl runs prune [OPTIONS]\n\n"
                       "Remove old output folders of runs from ./skill-out/ (see 'skillctl runs prune --help').\n");
                return 0;
        }
        return dispatch_verb(subverbs, ELEMENTSOF(subverbs), argc - 1, argv + 1, "runs subcommand");
}
