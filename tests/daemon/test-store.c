/* Tests for skilld/daemon/store: records appear whole and root-only, a service killed at any point
 * leaves runs that the next start settles (interrupted unless a complete result exists), temporary
 * files of interrupted writes and corrupted records do not stop the store, retention removes the
 * right runs and never an active one, a full disk refuses instead of storing half a result,
 * artifacts are opened without following anything a sandbox could have planted, and records carry
 * their format: an old one (fixtures/store-format-0) is migrated, a newer one left alone. */
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fileio.h"
#include "store.h"
#include "test-util.h"

#define SEC 1000000ULL

static TestDir dir = { .fd = -EBADF };
static char *root;

static char *mfree_str(char *p) {
        free(p);
        return NULL;
}

static StoreRun **mfree_runs(StoreRun **p) {
        free(p);
        return NULL;
}

static size_t n_runs(Store *s) {
        _cleanup_free_ StoreRun **list = NULL;
        size_t n;

        ck_assert_int_eq(store_list_runs(s, UID_INVALID, &list, &n), 0);
        return n;
}

static char *read_in_root(const char *rel) {
        _cleanup_free_ char *p = strdup_printf("%s/%s", root, rel);
        char *text = NULL;

        ck_assert_int_eq(read_full_file_at(AT_FDCWD, p, 1 << 20, true, &text, NULL), 0);
        return text;
}

static void setup(void) {
        dir = test_dir_new();
        root = strdup_printf("%s/state", dir.path);
        ck_assert_ptr_nonnull(root);
}

static void teardown(void) {
        free(root);
        root = NULL;
        test_dir_done(&dir);
}

static const char *make_id(unsigned n) {
        static char buf[8][STORE_RUN_ID_LEN + 1];
        static unsigned slot;
        char *b = buf[slot++ % 8];

        snprintf(b, STORE_RUN_ID_LEN + 1, "%032x", n);
        return b;
}

static StoreRun *create(Store *s, unsigned n, uid_t owner, uint64_t when) {
        StoreRunInfo info = {
                .id = make_id(n),
                .owner = owner,
                .skill_name = "demo",
                .skill_hash = "0123abcd",
                .script = "scripts/main.sh",
                .request_json = "{\"args\":[\"-x\"],\"limits\":{\"memory\":268435456}}",
        };
        _cleanup_free_ char *error = NULL;
        StoreRun *run = NULL;

        ck_assert_msg(store_create_run(s, &info, when, &run, &error) == 0, "create: %s", strna(error));
        return run;
}

static Store *open_store(void) {
        Store *s = NULL;

        ck_assert_int_eq(store_open(root, &s), 0);
        return s;
}

static Store *reopen_store(Store *old, StoreLoadStats *stats) {
        Store *s = open_store();

        store_free(old);
        ck_assert_int_eq(store_load(s, 9999 * SEC, stats), 0);
        return s;
}

static mode_t mode_of(const char *rel) {
        _cleanup_free_ char *p = strdup_printf("%s/%s", root, rel);
        struct stat st;

        ck_assert_int_eq(lstat(p, &st), 0);
        return st.st_mode & 07777;
}

static bool exists(const char *rel) {
        _cleanup_free_ char *p = strdup_printf("%s/%s", root, rel);
        struct stat st;

        return lstat(p, &st) == 0;
}

static void put(const char *rel, const char *contents) {
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        test_write_file(fd, rel, contents, 0600);
}

/* The ids of a page, in order, as "1 2 3" (the numbers make_id() was given). */
static char *page_ids(StoreRun **l, size_t n) {
        char *text = strdup("");

        for (size_t i = 0; i < n; i++) {
                char *t = strdup_printf("%s%s%u", text, i > 0 ? " " : "", (unsigned) strtoul(l[i]->id, NULL, 16));

                free(text);
                text = t;
        }
        ck_assert_ptr_nonnull(text);
        return text;
}

static char *page(Store *s, const StoreRunFilter *f, const StoreCursor *before, size_t limit, size_t *ret_older,
                  char *ret_next) {
        _cleanup_free_ StoreRun **l = NULL;
        size_t n;

        ck_assert_int_eq(store_list_page(s, f, before, limit, &l, &n, ret_older), 0);
        ck_assert_uint_le(n, limit);
        if (ret_next && n > 0)
                store_cursor_format(l[0], ret_next);
        return page_ids(l, n);
}

START_TEST(test_list_page) {
        _cleanup_(store_freep) Store *s = open_store();
        StoreRunFilter any = STORE_RUN_FILTER_ANY, mine = STORE_RUN_FILTER_ANY, f = STORE_RUN_FILTER_ANY;
        StoreRunInfo other = { .owner = 1000, .skill_name = "other", .skill_hash = "ab", .script = "s.sh" };
        _cleanup_free_ char *error = NULL;
        char next[STORE_CURSOR_MAX];
        StoreCursor c;
        StoreRun *run;
        size_t older;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        /* 1..9, created in that order, owners 1000 (odd) and 1001 (even); 5 and 6 at the same
         * time (ordered by id); 7 is of another skill and 3 interrupted. */
        for (unsigned i = 1; i <= 9; i++) {
                if (i == 7) {
                        other.id = make_id(7);
                        ck_assert_int_eq(store_create_run(s, &other, 70 * SEC, &run, &error), 0);
                } else
                        run = create(s, i, i % 2 ? 1000 : 1001, (i == 6 ? 5 : i) * 10 * SEC);
                if (i == 3)
                        ck_assert_int_eq(store_run_interrupt(s, run, "test", 35 * SEC), 0);
        }

#define PAGE(filter, before, limit, ids, n_older) do {                                 \
                _cleanup_free_ char *got = page(s, filter, before, limit, &older, next); \
                ck_assert_str_eq(got, ids);                                             \
                ck_assert_uint_eq(older, n_older);                                      \
        } while (0)

        PAGE(&any, NULL, SIZE_MAX, "1 2 3 4 5 6 7 8 9", 0);
        PAGE(&any, NULL, 3, "7 8 9", 6);
        /* Paging back with the cursor of the oldest run shown, through a tie of creation times. */
        ck_assert_int_eq(store_cursor_parse(next, &c), 0);
        ck_assert_str_eq(c.id, make_id(7));
        ck_assert_uint_eq(c.created_usec, 70 * SEC);
        PAGE(&any, &c, 3, "4 5 6", 3);
        ck_assert_int_eq(store_cursor_parse(next, &c), 0);
        /* Runs added meanwhile come after the cursor and change nothing behind it. */
        create(s, 10, 1000, 100 * SEC);
        PAGE(&any, &c, 3, "1 2 3", 0);
        PAGE(&any, &c, 1, "3", 2);

        /* A cursor whose run is gone still orders: 5 removed, its cursor gives 4 and older. */
        c = (StoreCursor) { .created_usec = 50 * SEC };
        memcpy(c.id, make_id(5), sizeof(c.id));
        ck_assert_int_eq(store_run_interrupt(s, store_get_run(s, make_id(5)), "test", 55 * SEC), 0);
        ck_assert_int_eq(store_run_remove(s, store_get_run(s, make_id(5))), 0);
        PAGE(&any, &c, 2, "3 4", 2);

        mine.owner = 1000;
        PAGE(&mine, NULL, SIZE_MAX, "1 3 7 9 10", 0);
        PAGE(&mine, NULL, 2, "9 10", 3);
        ck_assert_int_eq(store_cursor_parse(next, &c), 0);
        PAGE(&mine, &c, 2, "3 7", 1);
        f.skill_name = "other";
        PAGE(&f, NULL, 5, "7", 0);
        f = (StoreRunFilter) { .owner = 1001, .state = RUN_QUEUED };
        PAGE(&f, NULL, 2, "6 8", 2);
        f.state = RUN_INTERRUPTED;
        PAGE(&f, NULL, 2, "", 0);
        f.owner = UID_INVALID;
        PAGE(&f, NULL, 2, "3", 0);
        /* Ids 1..10 are 0000...0001 to 0000...000a. */
        f = (StoreRunFilter) { .owner = UID_INVALID, .state = _RUN_STATE_INVALID, .id_prefix = "0000" };
        PAGE(&f, NULL, 2, "9 10", 7);
        f.id_prefix = make_id(9);
        PAGE(&f, NULL, 2, "9", 0);
        f.id_prefix = "1";
        PAGE(&f, NULL, 2, "", 0);
        /* Before the oldest: nothing. */
        c = (StoreCursor) { .created_usec = 1 };
        memcpy(c.id, make_id(1), sizeof(c.id));
        PAGE(&any, &c, 5, "", 0);
#undef PAGE

        ck_assert_int_eq(store_cursor_parse("", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("12", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("-00000000000000000000000000000001", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("+1-00000000000000000000000000000001", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("01-00000000000000000000000000000001", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("00-00000000000000000000000000000001", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("0-00000000000000000000000000000001", &c), 0);
        ck_assert_uint_eq(c.created_usec, 0);
        ck_assert_int_eq(store_cursor_parse("1-0000000000000000000000000000000", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("1-000000000000000000000000000000011", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("1-0000000000000000000000000000000A", &c), -EINVAL);
        ck_assert_int_eq(store_cursor_parse("99999999999999999999999-00000000000000000000000000000001", &c),
                         -EINVAL);
        ck_assert_int_eq(store_cursor_parse("18446744073709551615-00000000000000000000000000000001", &c), 0);
        ck_assert_uint_eq(c.created_usec, UINT64_MAX);
}
END_TEST

START_TEST(test_create_and_list) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ StoreRun **list = NULL;
        _cleanup_free_ char *request = NULL, *error = NULL;
        StoreRunInfo bad = { .id = "not-an-id", .owner = 1, .skill_name = "x", .skill_hash = "y",
                            .script = "z" };
        StoreRun *a, *b, *c, *r = NULL;
        size_t n;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        a = create(s, 1, 1000, 10 * SEC);
        b = create(s, 2, 1001, 20 * SEC);
        c = create(s, 3, 1000, 30 * SEC);

        ck_assert_int_eq(a->state, RUN_QUEUED);
        ck_assert_uint_eq(a->created_usec, 10 * SEC);
        ck_assert_uint_gt(a->disk_bytes, 0);
        ck_assert_ptr_eq(store_get_run(s, make_id(2)), b);
        ck_assert_ptr_null(store_get_run(s, make_id(4)));
        ck_assert_ptr_null(store_get_run(s, "../../etc"));

        ck_assert_int_eq(store_list_runs(s, 1000, &list, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_ptr_eq(list[0], a);
        ck_assert_ptr_eq(list[1], c);
        list = mfree_runs(list);
        ck_assert_int_eq(store_list_runs(s, UID_INVALID, &list, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(store_count_runs(s, 1000, RUN_QUEUED), 2);
        ck_assert_uint_eq(store_count_runs(s, UID_INVALID, RUN_RUNNING), 0);

        /* Root-only on disk, and nothing left of the construction. */
        ck_assert_uint_eq(mode_of("runs"), 0700);
        ck_assert_uint_eq(mode_of("quarantine"), 0700);
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000001"), 0700);
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000001/request.json"), 0600);
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000001/state.json"), 0600);
        ck_assert(!exists("runs/.#new-00000000000000000000000000000001"));

        ck_assert_int_eq(store_run_read_request(s, a, &request), 0);
        ck_assert_ptr_nonnull(strstr(request, "\"owner\":1000"));
        ck_assert_ptr_nonnull(strstr(request, "\"request\":{\"args\":[\"-x\"]"));

        /* Refusals. */
        ck_assert_int_eq(store_create_run(s, &bad, 0, &r, &error), -EINVAL);
        error = mfree_str(error);
        bad.id = make_id(2);
        ck_assert_int_eq(store_create_run(s, &bad, 0, &r, &error), -EEXIST);
        error = mfree_str(error);
        bad.id = make_id(9);
        bad.request_json = "[1]";
        ck_assert_int_eq(store_create_run(s, &bad, 0, &r, &error), -EINVAL);
        ck_assert_str_eq(error, "The request to record is not a JSON object.");
        ck_assert_ptr_null(r);
        ck_assert(!exists("runs/00000000000000000000000000000009"));
}
END_TEST

START_TEST(test_open_tightens_modes) {
        _cleanup_(store_freep) Store *s = NULL;
        _cleanup_free_ char *runs = strdup_printf("%s/runs", root);

        ck_assert_int_eq(mkdir(root, 0700), 0);
        ck_assert_int_eq(mkdir(runs, 0755), 0);
        ck_assert_int_eq(chmod(runs, 0755), 0);
        s = open_store();
        ck_assert_uint_eq(mode_of("runs"), 0700);
}
END_TEST

START_TEST(test_lifecycle) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *result = NULL, *error = NULL;
        StoreLoadStats stats;
        StoreRun *run;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        run = create(s, 7, 1000, 100 * SEC);
        ck_assert_int_eq(store_run_read_result(s, run, &result), -ENODATA);

        ck_assert_int_eq(store_run_set_running(s, run, 101 * SEC), 0);
        ck_assert_int_eq(run->state, RUN_RUNNING);
        ck_assert_int_eq(store_run_set_running(s, run, 0), -ESTALE);

        /* A result that is not a result object is refused and changes nothing. */
        ck_assert_int_eq(store_run_finish(s, run, "{\"status\":", 0, &error), -EINVAL);
        ck_assert_int_eq(run->state, RUN_RUNNING);
        ck_assert(!exists("runs/00000000000000000000000000000007/result.json"));
        error = mfree_str(error);
        ck_assert_int_eq(store_run_finish(s, run, "{\"status\":7}", 0, &error), -EINVAL);
        error = mfree_str(error);

        ck_assert_int_eq(store_run_finish(s, run, "{\"status\":\"failed\",\"exit_code\":3}", 160 * SEC,
                                          &error), 0);
        ck_assert_int_eq(run->state, RUN_FINISHED);
        ck_assert_str_eq(run->status, "failed");
        ck_assert_int_eq(run->exit_code, 3);
        ck_assert_uint_eq(run->finished_usec, 160 * SEC);
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000007/result.json"), 0600);
        ck_assert_int_eq(store_run_finish(s, run, "{}", 0, &error), -ESTALE);
        ck_assert_int_eq(store_run_read_result(s, run, &result), 0);
        ck_assert_str_eq(result, "{\"status\":\"failed\",\"exit_code\":3}");

        /* A fresh service reads back the same. */
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 1);
        ck_assert_uint_eq(stats.interrupted + stats.repaired + stats.quarantined + stats.leftovers, 0);
        run = store_get_run(s, make_id(7));
        ck_assert_ptr_nonnull(run);
        ck_assert_int_eq(run->state, RUN_FINISHED);
        ck_assert_str_eq(run->status, "failed");
        ck_assert_int_eq(run->exit_code, 3);
        ck_assert_uint_eq(run->owner, 1000);
        ck_assert_str_eq(run->skill_name, "demo");
        ck_assert_str_eq(run->skill_hash, "0123abcd");
        ck_assert_str_eq(run->script, "scripts/main.sh");
        ck_assert_uint_eq(run->created_usec, 100 * SEC);
        ck_assert_uint_eq(run->started_usec, 101 * SEC);
        ck_assert_uint_eq(run->finished_usec, 160 * SEC);
}
END_TEST

/* The service is killed with runs queued, running, halfway through writing a result, and halfway
 * through creating and removing records. The next start settles every run. */
START_TEST(test_crash_recovery) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *result = NULL, *error = NULL, *state = NULL;
        StoreLoadStats stats;
        StoreRun *queued, *running, *finished, *interrupted;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        queued = create(s, 1, 1000, 10 * SEC);
        running = create(s, 2, 1000, 20 * SEC);
        finished = create(s, 3, 1001, 30 * SEC);
        interrupted = create(s, 4, 1001, 40 * SEC);
        ck_assert_int_eq(store_run_set_running(s, running, 21 * SEC), 0);
        ck_assert_int_eq(store_run_set_running(s, finished, 31 * SEC), 0);
        ck_assert_int_eq(store_run_finish(s, finished, "{\"status\":\"succeeded\",\"exit_code\":0}", 0,
                                          &error), 0);
        ck_assert_int_eq(store_run_interrupt(s, interrupted, "canceled before start", 41 * SEC), 0);
        (void) queued;

        /* Killed while writing the result of run 2: the temporary file is there, half written. */
        put("runs/00000000000000000000000000000002/.#result.json.Xy12ab", "{\"status\":\"succ");
        /* Killed while creating run 5 and while removing run 6. */
        put("runs/.#new-00000000000000000000000000000005/request.json", "{\"id\":");
        put("runs/.#del-00000000000000000000000000000006/state.json", "{}");

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 4);
        ck_assert_uint_eq(stats.interrupted, 2);
        ck_assert_uint_eq(stats.leftovers, 3);
        ck_assert_uint_eq(stats.quarantined, 0);

        queued = store_get_run(s, make_id(1));
        running = store_get_run(s, make_id(2));
        finished = store_get_run(s, make_id(3));
        interrupted = store_get_run(s, make_id(4));
        ck_assert_int_eq(queued->state, RUN_INTERRUPTED);
        ck_assert_str_eq(queued->reason, "the service stopped before the run finished");
        ck_assert_int_eq(running->state, RUN_INTERRUPTED);
        ck_assert_uint_eq(running->finished_usec, 9999 * SEC);
        ck_assert_int_eq(finished->state, RUN_FINISHED);
        ck_assert_str_eq(finished->status, "succeeded");
        ck_assert_int_eq(interrupted->state, RUN_INTERRUPTED);
        ck_assert_str_eq(interrupted->reason, "canceled before start");

        /* The partial result was never taken for a result, and is gone. */
        ck_assert(!exists("runs/00000000000000000000000000000002/.#result.json.Xy12ab"));
        ck_assert(!exists("runs/00000000000000000000000000000002/result.json"));
        ck_assert_int_eq(store_run_read_result(s, running, &result), -ENODATA);
        ck_assert(!exists("runs/.#new-00000000000000000000000000000005"));
        ck_assert(!exists("runs/.#del-00000000000000000000000000000006"));

        /* The verdict is on disk, not only in memory. */
        state = read_in_root("runs/00000000000000000000000000000002/state.json");
        ck_assert_ptr_nonnull(strstr(state, "\"state\":\"interrupted\""));
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.interrupted + stats.leftovers + stats.repaired, 0);
        ck_assert_int_eq(store_get_run(s, make_id(2))->state, RUN_INTERRUPTED);
}
END_TEST

/* Killed after the result was committed but before state.json said so: the result wins. */
START_TEST(test_result_without_state) {
        _cleanup_(store_freep) Store *s = open_store();
        StoreLoadStats stats;
        StoreRun *run;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        run = create(s, 1, 1000, 10 * SEC);
        ck_assert_int_eq(store_run_set_running(s, run, 11 * SEC), 0);
        put("runs/00000000000000000000000000000001/result.json",
            "{\"status\":\"timeout\",\"exit_code\":null}");

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.repaired, 1);
        ck_assert_uint_eq(stats.interrupted, 0);
        run = store_get_run(s, make_id(1));
        ck_assert_int_eq(run->state, RUN_FINISHED);
        ck_assert_str_eq(run->status, "timeout");
        ck_assert_int_eq(run->exit_code, -1);
        ck_assert_uint_gt(run->finished_usec, 0);

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.repaired, 0);
}
END_TEST

START_TEST(test_corrupted_records_quarantined) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL;
        StoreLoadStats stats;
        StoreRun *good;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        good = create(s, 1, 1000, 10 * SEC);
        ck_assert_int_eq(store_run_set_running(s, good, 0), 0);
        ck_assert_int_eq(store_run_finish(s, good, "{\"status\":\"succeeded\"}", 0, &error), 0);
        create(s, 2, 1000, 20 * SEC);
        create(s, 3, 1000, 30 * SEC);
        create(s, 4, 1000, 40 * SEC);
        create(s, 5, 1000, 50 * SEC);

        put("runs/00000000000000000000000000000002/request.json", "garbage");          /* unparsable */
        put("runs/00000000000000000000000000000003/result.json", "[\"not an object\"]"); /* bad result */
        put("runs/00000000000000000000000000000004/state.json", "{\"state\":\"dancing\"}");
        put("runs/00000000000000000000000000000005/request.json",                         /* wrong id */
            "{\"id\":\"00000000000000000000000000000099\",\"owner\":0,"
            "\"skill\":{\"name\":\"x\",\"hash\":\"y\"},"
            "\"script\":\"z\",\"created_usec\":1}");
        put("runs/junk", "not a record");
        put("runs/NOTANID/request.json", "{}");
        ck_assert_int_eq(symlinkat("/etc", dir.fd, "state/runs/0000000000000000000000000000000a"), 0);
        /* A name already in quarantine from an earlier start. */
        put("quarantine/junk", "older");

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 1);
        ck_assert_uint_eq(stats.quarantined, 7);
        ck_assert_ptr_nonnull(store_get_run(s, make_id(1)));
        ck_assert_int_eq(store_get_run(s, make_id(1))->state, RUN_FINISHED);
        for (unsigned i = 2; i <= 5; i++)
                ck_assert_ptr_null(store_get_run(s, make_id(i)));

        ck_assert(exists("quarantine/00000000000000000000000000000002/request.json"));
        ck_assert(exists("quarantine/00000000000000000000000000000003/result.json"));
        ck_assert(exists("quarantine/00000000000000000000000000000004"));
        ck_assert(exists("quarantine/00000000000000000000000000000005"));
        ck_assert(exists("quarantine/junk"));
        ck_assert(exists("quarantine/junk.1"));
        ck_assert(exists("quarantine/NOTANID"));
        ck_assert(exists("quarantine/0000000000000000000000000000000a"));
        ck_assert(exists("runs/00000000000000000000000000000001"));
        ck_assert(!exists("runs/junk"));
        /* The symlink itself moved; its target was not touched. */
        ck_assert_int_eq(access("/etc/passwd", F_OK), 0);
}
END_TEST

/* The index: a second start takes the final runs from it, with everything the listing shows; a
 * record changed in place is read again (and quarantined when corrupted), a removed one dropped,
 * an index of another version ignored. */
START_TEST(test_index) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL, *removed = NULL;
        StoreLoadStats stats;
        StoreRun *a, *b, *c, *x;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        a = create(s, 1, 1000, 10 * SEC);
        b = create(s, 2, 1001, 20 * SEC);
        c = create(s, 3, 1000, 30 * SEC);
        create(s, 4, 1000, 40 * SEC);
        ck_assert_int_eq(store_run_set_running(s, a, 0), 0);
        ck_assert_int_eq(store_run_finish(s, a, "{\"status\":\"succeeded\",\"exit_code\":0}", 50 * SEC, &error), 0);
        ck_assert_int_eq(store_run_set_running(s, b, 0), 0);
        ck_assert_int_eq(store_run_finish(s, b, "{\"status\":\"failed\",\"exit_code\":3}", 60 * SEC, &error), 0);
        ck_assert_int_eq(store_run_interrupt(s, c, "a\ttab, a\nnewline and a \\ backslash", 70 * SEC), 0);
        ck_assert_int_eq(store_save_index(s), 0);
        ck_assert(exists("index"));
        ck_assert_int_eq(mode_of("index"), 0600);

        /* 4 was left queued: interrupted now, read from its record; the others from the index. */
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 4);
        ck_assert_uint_eq(stats.indexed, 3);
        ck_assert_uint_eq(stats.interrupted, 1);
        x = store_get_run(s, make_id(2));
        ck_assert_ptr_nonnull(x);
        ck_assert_int_eq(x->state, RUN_FINISHED);
        ck_assert_str_eq(x->status, "failed");
        ck_assert_int_eq(x->exit_code, 3);
        ck_assert_uint_eq(x->owner, 1001);
        ck_assert_uint_eq(x->created_usec, 20 * SEC);
        ck_assert_uint_eq(x->finished_usec, 60 * SEC);
        ck_assert_str_eq(x->skill_name, "demo");
        ck_assert_str_eq(x->script, "scripts/main.sh");
        ck_assert_uint_gt(x->disk_bytes, 0);
        x = store_get_run(s, make_id(3));
        ck_assert_int_eq(x->state, RUN_INTERRUPTED);
        ck_assert_ptr_null(x->status);
        ck_assert_str_eq(x->reason, "a\ttab, a\nnewline and a \\ backslash");
        ck_assert_uint_eq(n_runs(s), 4);

        /* The start that settled 4 wrote the index again: all four from it now. */
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 4);
        ck_assert_uint_eq(stats.indexed, 4);

        /* Changed in place: read again, and quarantined since it is corrupted. Removed behind
         * the store's back: gone. */
        put("runs/00000000000000000000000000000001/result.json", "[\"not an object\"]");
        removed = strjoin_path(root, "runs/00000000000000000000000000000002");
        ck_assert_int_eq(rm_rf_at(AT_FDCWD, removed), 0);
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 2);
        ck_assert_uint_eq(stats.indexed, 2);
        ck_assert_uint_eq(stats.quarantined, 1);
        ck_assert_ptr_null(store_get_run(s, make_id(1)));
        ck_assert_ptr_null(store_get_run(s, make_id(2)));
        ck_assert(exists("quarantine/00000000000000000000000000000001"));

        /* An index of another version: every record is read, and the index rewritten. */
        put("index", "skilld-store-index 999\nwhatever\n");
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 2);
        ck_assert_uint_eq(stats.indexed, 0);
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.indexed, 2);
}
END_TEST

/* Copies the fixture folder FIXTURE/runs/ID (tests/daemon/fixtures/) into the store's runs/. */
static void put_fixture(const char *fixture, const char *id) {
        static const char *const files[] = { "request.json", "state.json", "result.json", "stdout.log",
                                             "stderr.log" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *src = strdup_printf("tests/daemon/fixtures/%s/runs/%s/%s", fixture, id,
                                                         files[i]),
                                    *path = test_source_path(src), *text = NULL,
                                    *rel = strdup_printf("runs/%s/%s", id, files[i]);
                int r = read_full_file_at(AT_FDCWD, path, 1 << 20, true, &text, NULL);

                if (r == -ENOENT)
                        continue;
                ck_assert_int_eq(r, 0);
                put(rel, text);
        }
}

START_TEST(test_format_0_migrated) {
        static const char *const id = "5a1e0c0ffee0000000000000000000a1";
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *request = NULL, *state = NULL, *result = NULL;
        StoreLoadStats stats;
        const StoreRun *run;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        put_fixture("store-format-0", id);

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 1);
        ck_assert_uint_eq(stats.migrated, 1);
        ck_assert_uint_eq(stats.quarantined, 0);
        ck_assert_uint_eq(stats.interrupted, 0);
        run = store_get_run(s, id);
        ck_assert_ptr_nonnull(run);
        ck_assert_int_eq(run->state, RUN_FINISHED);
        ck_assert_uint_eq(run->owner, 1000);
        ck_assert_str_eq(run->skill_name, "make-artifacts");
        ck_assert_str_eq(run->script, "scripts/main.py");
        ck_assert_str_eq(run->status, "succeeded");
        ck_assert_int_eq(run->exit_code, 0);
        ck_assert_uint_eq(run->created_usec, 1764000000000000ULL);
        ck_assert_uint_eq(run->finished_usec, 1764000001200000ULL);

        /* On disk: both files carry the current format, with everything they held. */
        request = read_in_root("runs/5a1e0c0ffee0000000000000000000a1/request.json");
        state = read_in_root("runs/5a1e0c0ffee0000000000000000000a1/state.json");
        ck_assert_ptr_nonnull(strstr(request, "\"format_version\":1"));
        ck_assert_ptr_nonnull(strstr(request, "\"request\":{\"args\":[],\"limits\":{\"memory\":268435456}}"));
        ck_assert_ptr_nonnull(strstr(state, "\"format_version\":1"));
        result = read_in_root("runs/5a1e0c0ffee0000000000000000000a1/result.json");
        ck_assert_ptr_nonnull(strstr(result, "\"output\":{\"rows\":1}"));

        /* Once is enough: the next start finds nothing to migrate. */
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 1);
        ck_assert_uint_eq(stats.migrated, 0);
}
END_TEST

START_TEST(test_newer_format_left_alone) {
        static const char *const id = "5a1e0c0ffee0000000000000000000b2";
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *before = NULL, *after = NULL;
        StoreLoadStats stats;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        create(s, 1, 1000, 10 * SEC);
        put_fixture("store-format-99", id);
        before = read_in_root("runs/5a1e0c0ffee0000000000000000000b2/request.json");

        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.loaded, 1);
        ck_assert_uint_eq(stats.newer, 1);
        ck_assert_uint_eq(stats.quarantined, 0);
        ck_assert_uint_eq(stats.interrupted, 1);        /* run 1, queued when the store closed */
        ck_assert_ptr_null(store_get_run(s, id));
        after = read_in_root("runs/5a1e0c0ffee0000000000000000000b2/request.json");
        ck_assert_str_eq(before, after);
        ck_assert(!exists("quarantine/5a1e0c0ffee0000000000000000000b2"));
}
END_TEST

START_TEST(test_records_carry_format) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *request = NULL, *state = NULL;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        create(s, 7, 1000, 10 * SEC);
        request = read_in_root("runs/00000000000000000000000000000007/request.json");
        state = read_in_root("runs/00000000000000000000000000000007/state.json");
        ck_assert_ptr_nonnull(strstr(request, "\"format_version\":1,"));
        ck_assert_ptr_nonnull(strstr(state, "\"format_version\":1,"));
}
END_TEST

static StoreRun *finished_run(Store *s, unsigned n, uid_t owner, uint64_t end) {
        _cleanup_free_ char *error = NULL;
        StoreRun *run = create(s, n, owner, end - 5 * SEC);

        ck_assert_int_eq(store_run_set_running(s, run, end - 4 * SEC), 0);
        ck_assert_int_eq(store_run_finish(s, run, "{\"status\":\"succeeded\",\"exit_code\":0}", end,
                                          &error), 0);
        return run;
}

START_TEST(test_gc_counts_and_age) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_strv_free_ char **removed = NULL;
        PolicyRetention r = {
                .max_runs = 3,
                .max_bytes = POLICY_INFINITY,
                .max_age_usec = 800 * SEC,
                .max_runs_per_user = 2,
                .max_bytes_per_user = POLICY_INFINITY,
        };

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        for (unsigned i = 1; i <= 5; i++)                       /* a1..a5 end at 100..500 s */
                finished_run(s, i, 1000, i * 100 * SEC);
        finished_run(s, 11, 1001, 150 * SEC);                   /* b1 */
        finished_run(s, 12, 1001, 250 * SEC);                   /* b2 */
        finished_run(s, 13, 1001, 350 * SEC);                   /* b3 */
        /* b4, active */
        ck_assert_int_eq(store_run_set_running(s, create(s, 14, 1001, 50 * SEC), 60 * SEC), 0);

        ck_assert_int_eq(store_gc(s, &r, 1000 * SEC, &removed), 0);
        /* age: a1 (100 s) and b1 (150 s) ended more than 800 s before 1000 s;
         * per user: 1000 keeps a4, a5; 1001 keeps b3 and the active b4;
         * global: four left, the oldest final one (b3) goes; the active b4 stays. */
        ck_assert_uint_eq(strv_length(removed), 6);
        ck_assert_ptr_nonnull(store_get_run(s, make_id(4)));
        ck_assert_ptr_nonnull(store_get_run(s, make_id(5)));
        ck_assert_ptr_nonnull(store_get_run(s, make_id(14)));
        ck_assert_uint_eq(n_runs(s), 3);
        for (unsigned i = 1; i <= 3; i++)
                ck_assert_ptr_null(store_get_run(s, make_id(i)));
        for (unsigned i = 11; i <= 13; i++)
                ck_assert_ptr_null(store_get_run(s, make_id(i)));
        ck_assert(strv_contains(removed, make_id(13)));
        ck_assert(!exists("runs/0000000000000000000000000000000d"));
        ck_assert(exists("runs/0000000000000000000000000000000e"));
        removed = strv_free(removed);

        /* Caps below the number of active runs remove nothing active. */
        r.max_runs = 0;
        r.max_runs_per_user = 0;
        ck_assert_int_eq(store_gc(s, &r, 1000 * SEC, &removed), 0);
        ck_assert_uint_eq(strv_length(removed), 2);
        ck_assert_ptr_nonnull(store_get_run(s, make_id(14)));
}
END_TEST

START_TEST(test_gc_bytes) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_strv_free_ char **removed = NULL;
        PolicyRetention r = {
                .max_runs = POLICY_INFINITY,
                .max_bytes = POLICY_INFINITY,
                .max_age_usec = POLICY_INFINITY,
                .max_runs_per_user = POLICY_INFINITY,
        };
        _cleanup_free_ char *blob = malloc(100 * 1024);
        StoreRun *runs[4];

        ck_assert_ptr_nonnull(blob);
        memset(blob, 'x', 100 * 1024);
        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        for (unsigned i = 0; i < 4; i++) {
                _cleanup_close_ int fd = -EBADF;

                runs[i] = finished_run(s, i + 1, i < 3 ? 1000 : 1001, (i + 1) * 100 * SEC);
                ck_assert_int_eq(store_run_open_log(s, runs[i], "stdout", true, &fd), 0);
                ck_assert_int_eq(loop_write(fd, blob, 100 * 1024), 0);
                ck_assert_int_eq(store_run_update_usage(s, runs[i]), 0);
                ck_assert_uint_ge(runs[i]->disk_bytes, 100 * 1024);
        }

        /* Owner 1000 may keep its two newest runs' worth. */
        r.max_bytes_per_user = runs[1]->disk_bytes + runs[2]->disk_bytes;
        ck_assert_int_eq(store_gc(s, &r, 1000 * SEC, &removed), 0);
        ck_assert_uint_eq(strv_length(removed), 1);
        ck_assert_str_eq(removed[0], make_id(1));
        removed = strv_free(removed);

        /* Everyone together: room for the newest two. */
        r.max_bytes = runs[2]->disk_bytes + runs[3]->disk_bytes;
        ck_assert_int_eq(store_gc(s, &r, 1000 * SEC, &removed), 0);
        ck_assert_uint_eq(strv_length(removed), 1);
        ck_assert_str_eq(removed[0], make_id(2));
        ck_assert_ptr_nonnull(store_get_run(s, make_id(3)));
        ck_assert_ptr_nonnull(store_get_run(s, make_id(4)));
}
END_TEST

START_TEST(test_remove) {
        _cleanup_(store_freep) Store *s = open_store();
        StoreRun *active, *done;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        active = create(s, 1, 1000, 10 * SEC);
        done = finished_run(s, 2, 1000, 20 * SEC);
        ck_assert_int_eq(store_run_remove(s, active), -EBUSY);
        ck_assert(exists("runs/00000000000000000000000000000001"));
        ck_assert_int_eq(store_run_remove(s, done), 0);
        ck_assert_ptr_null(store_get_run(s, make_id(2)));
        ck_assert(!exists("runs/00000000000000000000000000000002"));
        ck_assert(!exists("runs/.#del-00000000000000000000000000000002"));
}
END_TEST

START_TEST(test_space_check) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL;

        ck_assert_int_eq(store_check_space(s, 0, 0, &error), 0);
        ck_assert_ptr_null(error);
        ck_assert_int_eq(store_check_space(s, UINT64_MAX / 2, 0, &error), -ENOSPC);
        ck_assert_msg(strstr(error, "Not enough free space to keep results in ") &&
                      strstr(error, "Refusing new runs."), "got %s", error);
}
END_TEST

/* A file system that is full when the result comes: the run ends interrupted, no result.json
 * (partial or not) exists, and the next start agrees. Needs root for a small private tmpfs. */
START_TEST(test_full_disk) {
        _cleanup_(store_freep) Store *s = NULL;
        _cleanup_free_ char *error = NULL, *big = NULL, *filler = NULL;
        _cleanup_close_ int fd = -EBADF;
        StoreLoadStats stats;
        StoreRun *run;
        int r;

        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0) {
                fprintf(stderr, "test_full_disk: needs root and mount namespaces, skipped\n");
                return;
        }
        ck_assert_int_eq(mount(NULL, "/", "none", MS_REC | MS_PRIVATE, NULL), 0);
        ck_assert_int_eq(mkdir(root, 0700), 0);
        ck_assert_int_eq(mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=128k,mode=0700"), 0);

        s = open_store();
        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        run = create(s, 1, 1000, 10 * SEC);
        ck_assert_int_eq(store_run_set_running(s, run, 11 * SEC), 0);
        ck_assert_int_eq(store_check_space(s, 4096, 0, &error), 0);

        /* Fill the disk. */
        filler = strdup_printf("%s/filler", root);
        fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        for (;;) {
                char block[4096] = {};
                if (write(fd, block, sizeof(block)) < 0) {
                        ck_assert_int_eq(errno, ENOSPC);
                        break;
                }
        }
        fd = safe_close(fd);

        ck_assert_int_eq(store_check_space(s, 4096, 0, &error), -ENOSPC);
        error = mfree_str(error);

        big = malloc(64 * 1024);
        ck_assert_ptr_nonnull(big);
        memset(big, ' ', 64 * 1024);
        memcpy(big, "{\"status\":\"succeeded\",\"pad\":\"", 29);
        strcpy(big + 64 * 1024 - 4, "\"}");
        r = store_run_finish(s, run, big, 0, &error);
        ck_assert_int_eq(r, -ENOSPC);
        ck_assert_msg(startswith(error, "Cannot store the result of run "), "got %s", error);
        ck_assert_int_eq(run->state, RUN_INTERRUPTED);
        ck_assert_ptr_nonnull(strstr(run->reason, "the result could not be stored"));
        ck_assert(!exists("runs/00000000000000000000000000000001/result.json"));

        /* After the admin freed space, a restarted service sees an interrupted run. */
        ck_assert_int_eq(unlink(filler), 0);
        s = reopen_store(TAKE_PTR(s), &stats);
        run = store_get_run(s, make_id(1));
        ck_assert_int_eq(run->state, RUN_INTERRUPTED);
        ck_assert(!exists("runs/00000000000000000000000000000001/result.json"));
}
END_TEST

START_TEST(test_logs) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_close_ int w = -EBADF, rd = -EBADF;
        _cleanup_free_ char *text = NULL;
        StoreRun *run;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        run = create(s, 1, 1000, 0);
        /* Made with the record, empty, so that a run still queued can be followed. */
        ck_assert_int_eq(store_run_open_log(s, run, "stderr", false, &rd), 0);
        ck_assert_int_eq(read_full_fd(rd, 4096, &text, NULL), 0);
        ck_assert_str_eq(text, "");
        text = mfree_str(text);
        rd = safe_close(rd);
        ck_assert_int_eq(store_run_open_log(s, run, "stdin", true, &w), -EINVAL);
        ck_assert_int_eq(store_run_open_log(s, run, "stderr", true, &w), 0);
        ck_assert_int_eq(loop_write(w, "warning\n", 8), 0);
        ck_assert_int_eq(store_run_open_log(s, run, "stderr", false, &rd), 0);
        ck_assert_int_eq(read_full_fd(rd, 4096, &text, NULL), 0);
        ck_assert_str_eq(text, "warning\n");
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000001/stderr.log"), 0600);
        ck_assert_int_eq(fcntl(rd, F_GETFL) & O_ACCMODE, O_RDONLY);
}
END_TEST

/* What store_create_run_async() reported, in order. */
typedef struct Created {
        unsigned n;
        StoreRun *runs[8];
        int errors[8];
} Created;

static void on_created(Store *s, StoreRun *run, int error, const char *message, void *userdata) {
        Created *c = userdata;

        ck_assert_uint_lt(c->n, ELEMENTSOF(c->runs));
        ck_assert(run ? error == 0 : error < 0 && message != NULL);
        c->runs[c->n] = run;
        c->errors[c->n++] = error;
}

static StoreRunInfo info_of(unsigned n, const char *input) {
        return (StoreRunInfo) {
                .id = make_id(n),
                .owner = 1000,
                .skill_name = "demo",
                .skill_hash = "0123abcd",
                .script = "scripts/main.sh",
                .input_json = input,
        };
}

static bool readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        return poll(&p, 1, timeout_ms) > 0;
}

/* Records made durable by the flusher: reported in the order they were asked for, each with its
 * logs and input, in the index only once reported; several at once share the flusher's rounds. */
START_TEST(test_create_async) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL, *input = NULL;
        Created c = {};

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        for (unsigned i = 1; i <= 5; i++) {
                StoreRunInfo info = info_of(i, i == 2 ? "{\"x\":1}" : NULL);

                ck_assert_int_eq(store_create_run_async(s, &info, i * SEC, on_created, &c, &error), 0);
                ck_assert_ptr_null(store_get_run(s, make_id(i)));
        }
        ck_assert_uint_eq(store_n_creating(s), 5);
        /* The same id again, while the first is on its way. */
        {
                StoreRunInfo info = info_of(3, NULL);

                ck_assert_int_eq(store_create_run_async(s, &info, 0, on_created, &c, &error), -EEXIST);
                error = mfree_str(error);
        }
        while (c.n < 5) {
                ck_assert(readable(store_created_fd(s), 10000));
                store_dispatch_created(s);
        }
        ck_assert_uint_eq(store_n_creating(s), 0);
        for (unsigned i = 0; i < 5; i++) {
                ck_assert_int_eq(c.errors[i], 0);
                ck_assert_str_eq(c.runs[i]->id, make_id(i + 1));
                ck_assert_ptr_eq(store_get_run(s, make_id(i + 1)), c.runs[i]);
                ck_assert_int_eq(c.runs[i]->state, RUN_QUEUED);
        }
        ck_assert(exists("runs/00000000000000000000000000000001/stdout.log"));
        ck_assert(exists("runs/00000000000000000000000000000001/stderr.log"));
        ck_assert(!exists("runs/00000000000000000000000000000001/input.json"));
        input = read_in_root("runs/00000000000000000000000000000002/input.json");
        ck_assert_str_eq(input, "{\"x\":1}");
        ck_assert_uint_eq(n_runs(s), 5);

        /* And again after a restart: they were on disk, whole. */
        s = reopen_store(TAKE_PTR(s), NULL);
        ck_assert_uint_eq(n_runs(s), 5);
        ck_assert_int_eq(store_get_run(s, make_id(5))->state, RUN_INTERRUPTED);
}
END_TEST

/* A store freed with records under way (a service going down) waits for them: on disk, whole,
 * reported to no one; the next start interrupts them. */
START_TEST(test_create_async_freed) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL;
        Created c = {};

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        for (unsigned i = 1; i <= 3; i++) {
                StoreRunInfo info = info_of(i, NULL);

                ck_assert_int_eq(store_create_run_async(s, &info, i * SEC, on_created, &c, &error), 0);
        }
        s = reopen_store(TAKE_PTR(s), NULL);
        ck_assert_uint_eq(c.n, 0);
        ck_assert_uint_eq(n_runs(s), 3);
        for (unsigned i = 1; i <= 3; i++)
                ck_assert_int_eq(store_get_run(s, make_id(i))->state, RUN_INTERRUPTED);

        /* store_wait_created(): everything reported before it returns. */
        for (unsigned i = 4; i <= 6; i++) {
                StoreRunInfo info = info_of(i, NULL);

                ck_assert_int_eq(store_create_run_async(s, &info, i * SEC, on_created, &c, &error), 0);
        }
        store_wait_created(s);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_uint_eq(store_n_creating(s), 0);
        ck_assert_uint_eq(n_runs(s), 6);
}
END_TEST

/* The lazy state writes land in the order the states were reached: a run started and finished
 * at once says finished on disk, with nothing for the next start to repair. An interruption,
 * written and synced at once, is not overtaken by an earlier lazy write either. */
START_TEST(test_state_writes_in_order) {
        _cleanup_(store_freep) Store *s = open_store();
        StoreLoadStats stats = {};

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        for (unsigned i = 1; i <= 20; i++) {
                _cleanup_free_ char *error = NULL;
                StoreRun *run = create(s, i, 1000, i * SEC);

                ck_assert_int_eq(store_run_set_running(s, run, i * SEC + 1), 0);
                if (i % 2)
                        ck_assert_int_eq(store_run_finish(s, run, "{\"status\":\"succeeded\",\"exit_code\":0}",
                                                          i * SEC + 2, &error), 0);
                else
                        ck_assert_int_eq(store_run_interrupt(s, run, "stopped", i * SEC + 2), 0);
        }
        for (unsigned i = 1; i <= 20; i++) {
                _cleanup_free_ char *rel = strdup_printf("runs/%s/state.json", make_id(i)), *state = NULL;

                /* The interruptions are on disk already, synced, before the call returned. */
                if (i % 2 == 0) {
                        state = read_in_root(rel);
                        ck_assert_ptr_nonnull(strstr(state, "\"state\":\"interrupted\""));
                }
        }
        s = reopen_store(TAKE_PTR(s), &stats);
        ck_assert_uint_eq(stats.repaired, 0);
        ck_assert_uint_eq(stats.interrupted, 0);
        for (unsigned i = 1; i <= 20; i++) {
                _cleanup_free_ char *rel = strdup_printf("runs/%s/state.json", make_id(i)), *state = NULL;

                state = read_in_root(rel);
                ck_assert_ptr_nonnull(strstr(state, i % 2 ? "\"state\":\"finished\"" : "\"state\":\"interrupted\""));
                ck_assert_int_eq(store_get_run(s, make_id(i))->state, i % 2 ? RUN_FINISHED : RUN_INTERRUPTED);
        }
}
END_TEST

/* The fsync() calls of this process (and of the threads it starts from now on) stop at a seccomp
 * user notification for the test to answer: the order of the flushes and of the report is seen
 * from outside the store, with nothing in the store built for the test. */
static int hold_fsyncs(void) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fsync, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };

        ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        return (int) syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/* What fd of thread tid names, below the store's root ("runs/ID", "runs/.#new-ID/state.json"). */
static char *fd_name(pid_t tid, uint64_t fd) {
        _cleanup_free_ char *link = strdup_printf("/proc/%d/fd/%" PRIu64, (int) tid, fd);
        char target[PATH_MAX];
        ssize_t n;

        n = readlink(link, target, sizeof(target) - 1);
        ck_assert_int_gt(n, 0);
        target[n] = 0;
        ck_assert_msg(strncmp(target, root, strlen(root)) == 0, "fsync() of %s", target);
        return strdup(target + strlen(root) + 1);
}

/* Answers the held fsync() calls until the store reports; each flush is checked while it is held:
 * nothing is reported meanwhile, and the record is under its name only for the runs directory's
 * flush, after all of its own. fail: which flushes fail with EIO instead, the record's own or the
 * runs directory's. */
typedef enum FailFlush {
        FAIL_NONE,
        FAIL_OWN,
        FAIL_RUNS_DIR,
} FailFlush;

static void answer_fsyncs(Store *s, int listener, const char *id, FailFlush fail, unsigned *ret_own,
                          bool *ret_dir) {
        _cleanup_free_ char *final = strdup_printf("runs/%s", id);
        unsigned own = 0;
        bool dir_synced = false;

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = listener, .events = POLLIN },
                        { .fd = store_created_fd(s), .events = POLLIN },
                };
                struct seccomp_notif req = {};
                struct seccomp_notif_resp resp = {};
                _cleanup_free_ char *name = NULL;

                ck_assert_int_gt(poll(p, 2, 10000), 0);
                if (!(p[0].revents & POLLIN)) {
                        ck_assert(p[1].revents & POLLIN);
                        break;
                }
                ck_assert_int_eq(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
                name = fd_name((pid_t) req.pid, req.data.args[0]);
                /* Held: the store has said nothing yet. */
                ck_assert(!readable(store_created_fd(s), 50));
                ck_assert_ptr_null(store_get_run(s, id));
                if (streq(name, "runs")) {
                        /* The last flush: the record is in place, all of its own done. */
                        ck_assert_uint_eq(own, 3);
                        ck_assert(exists(final));
                        dir_synced = true;
                } else {
                        ck_assert_msg(startswith(name, "runs/.#new-"), "fsync() of %s", name);
                        ck_assert(!exists(final));
                        ck_assert(!dir_synced);
                        own++;
                }
                resp.id = req.id;
                if ((fail == FAIL_OWN && !streq(name, "runs")) || (fail == FAIL_RUNS_DIR && streq(name, "runs")))
                        resp.error = -EIO;
                else
                        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                ck_assert_int_eq(ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0);
        }
        *ret_own = own;
        *ret_dir = dir_synced;
}

/* The report (which the service's answer to Run() waits for) comes after the record's flushes,
 * each held in turn here, never before; a record whose flush fails is never reported as made and
 * leaves nothing behind. */
START_TEST(test_create_async_waits_for_disk) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int listener = -EBADF;
        StoreRunInfo info = info_of(1, NULL);
        unsigned own;
        bool dir_synced;
        Created c = {};

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        /* On a tmpfs the store syncs in the caller, where a held fsync() would never be answered. */
        if (fd_on_memory_fs(dir.fd))
                return;
        listener = hold_fsyncs();
        if (listener < 0 && (errno == EINVAL || errno == ENOSYS || errno == EACCES))
                return; /* no user notifications here */
        ck_assert_int_ge(listener, 0);

        ck_assert_int_eq(store_create_run_async(s, &info, SEC, on_created, &c, &error), 0);
        answer_fsyncs(s, listener, make_id(1), FAIL_NONE, &own, &dir_synced);
        ck_assert_uint_eq(own, 3);
        ck_assert(dir_synced);
        ck_assert_uint_eq(c.n, 0);
        store_dispatch_created(s);
        ck_assert_uint_eq(c.n, 1);
        ck_assert_int_eq(c.errors[0], 0);
        ck_assert_ptr_eq(store_get_run(s, make_id(1)), c.runs[0]);

        info = info_of(2, NULL);
        ck_assert_int_eq(store_create_run_async(s, &info, 2 * SEC, on_created, &c, &error), 0);
        answer_fsyncs(s, listener, make_id(2), FAIL_OWN, &own, &dir_synced);
        ck_assert_uint_eq(own, 3);
        ck_assert(!dir_synced);
        store_dispatch_created(s);
        ck_assert_uint_eq(c.n, 2);
        ck_assert_int_eq(c.errors[1], -EIO);
        ck_assert_ptr_null(c.runs[1]);
        ck_assert_ptr_null(store_get_run(s, make_id(2)));
        ck_assert(!exists("runs/00000000000000000000000000000002"));
        ck_assert(!exists("runs/.#new-00000000000000000000000000000002"));
        ck_assert_uint_eq(n_runs(s), 1);

        /* The runs directory's flush failing: the name may not last, so nobody hears of the
         * record and it goes. */
        info = info_of(3, NULL);
        ck_assert_int_eq(store_create_run_async(s, &info, 3 * SEC, on_created, &c, &error), 0);
        answer_fsyncs(s, listener, make_id(3), FAIL_RUNS_DIR, &own, &dir_synced);
        ck_assert_uint_eq(own, 3);
        ck_assert(dir_synced);
        store_dispatch_created(s);
        ck_assert_uint_eq(c.n, 3);
        ck_assert_int_eq(c.errors[2], -EIO);
        ck_assert_ptr_null(c.runs[2]);
        ck_assert_ptr_null(store_get_run(s, make_id(3)));
        ck_assert(!exists("runs/00000000000000000000000000000003"));
        ck_assert(!exists("runs/.#new-00000000000000000000000000000003"));
        ck_assert_uint_eq(n_runs(s), 1);
}
END_TEST

static int open_artifact(Store *s, StoreRun *run, const char *path, char **ret_contents) {
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = store_run_open_artifact(s, run, path, &fd, &error);
        if (r < 0) {
                ck_assert_ptr_nonnull(error);
                return r;
        }
        ck_assert_int_eq(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY);
        if (ret_contents)
                ck_assert_int_eq(read_full_fd(fd, 4096, ret_contents, NULL), 0);
        return 0;
}

START_TEST(test_artifacts) {
        _cleanup_(store_freep) Store *s = open_store();
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int afd = -EBADF;
        StoreRun *run;

        ck_assert_int_eq(store_load(s, 0, NULL), 0);
        run = create(s, 1, 1000, 0);
        ck_assert_int_eq(open_artifact(s, run, "report.txt", NULL), -ENOENT); /* no artifacts yet */

        ck_assert_int_eq(store_run_open_artifacts_dir(s, run, &afd), 0);
        ck_assert_uint_eq(mode_of("runs/00000000000000000000000000000001/artifacts"), 0700);
        test_write_file(afd, "report.txt", "hello", 0600);
        test_write_file(afd, "sub/data.csv", "a,b", 0600);
        ck_assert_int_eq(symlinkat("/etc/passwd", afd, "link"), 0);
        ck_assert_int_eq(symlinkat("../report.txt", afd, "sub/up"), 0);
        ck_assert_int_eq(symlinkat("sub", afd, "dirlink"), 0);
        ck_assert_int_eq(mkfifoat(afd, "pipe", 0600), 0);

        ck_assert_int_eq(open_artifact(s, run, "report.txt", &text), 0);
        ck_assert_str_eq(text, "hello");
        text = mfree_str(text);
        ck_assert_int_eq(open_artifact(s, run, "sub/data.csv", &text), 0);
        ck_assert_str_eq(text, "a,b");

        ck_assert_int_eq(open_artifact(s, run, "link", NULL), -EPERM);
        ck_assert_int_eq(open_artifact(s, run, "sub/up", NULL), -EPERM);
        ck_assert_int_eq(open_artifact(s, run, "dirlink/data.csv", NULL), -EPERM);
        ck_assert_int_eq(open_artifact(s, run, "pipe", NULL), -EPERM); /* and did not block */
        ck_assert_int_eq(open_artifact(s, run, "sub", NULL), -EPERM);
        ck_assert_int_eq(open_artifact(s, run, "../request.json", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "sub/../report.txt", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "./report.txt", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "/etc/passwd", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "a\nb", NULL), -EINVAL);
        ck_assert_int_eq(open_artifact(s, run, "missing", NULL), -ENOENT);
}
END_TEST

START_TEST(test_names) {
        for (RunState st = 0; st < _RUN_STATE_MAX; st++)
                ck_assert_int_eq(run_state_from_string(run_state_to_string(st)), st);
        ck_assert_int_eq(run_state_from_string("done"), -EINVAL);
        ck_assert(store_run_id_is_valid("0123456789abcdef0123456789abcdef"));
        ck_assert(!store_run_id_is_valid("0123456789ABCDEF0123456789abcdef"));
        ck_assert(!store_run_id_is_valid("0123456789abcdef"));
        ck_assert(!store_run_id_is_valid(NULL));
}
END_TEST

static Suite *store_suite(void) {
        Suite *s = suite_create("store");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_create_and_list);
        tcase_add_test(tc, test_open_tightens_modes);
        tcase_add_test(tc, test_lifecycle);
        tcase_add_test(tc, test_crash_recovery);
        tcase_add_test(tc, test_result_without_state);
        tcase_add_test(tc, test_corrupted_records_quarantined);
        tcase_add_test(tc, test_gc_counts_and_age);
        tcase_add_test(tc, test_gc_bytes);
        tcase_add_test(tc, test_remove);
        tcase_add_test(tc, test_space_check);
        tcase_add_test(tc, test_full_disk);
        tcase_add_test(tc, test_logs);
        tcase_add_test(tc, test_create_async);
        tcase_add_test(tc, test_create_async_freed);
        tcase_add_test(tc, test_state_writes_in_order);
        tcase_add_test(tc, test_create_async_waits_for_disk);
        tcase_add_test(tc, test_artifacts);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_records_carry_format);
        tcase_add_test(tc, test_format_0_migrated);
        tcase_add_test(tc, test_newer_format_left_alone);
        tcase_add_test(tc, test_index);
        tcase_add_test(tc, test_list_page);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return test_run_suite(store_suite());
}
