/* The adversarial suite: a hostile skill attacks the sandbox, the loader and skillctl the way
 * issue 6 lists, and every case asserts the effect on the host (the file that must not exist,
 * the process that must not survive, the connection that never arrived, the status the run ended
 * with), not what the attacking script printed about itself.
 *
 * Each case reports a row (group, case, expected, observed, PASS/FAIL) as it asserts; the rows
 * are printed as one table at the end, followed by the check failures, so a run shows what the
 * sandbox held against, not only that it held. Check runs each test in a forked child, so rows
 * travel through an O_APPEND memfd the children inherit.
 *
 * Needs root and namespaces, like the 'sandbox' suite it belongs to (CI runs it as root, and so
 * does the VM rig). The daemon's cases wait in daemon/README.md for the daemon. */
#include <sys/mman.h>

#include "security-util.h"

static int outcome_fd = -EBADF;
/* The first row of the running test that did not pass (each test runs in a process of its own). */
static char *first_failure = NULL;

/* Fields hold no tab or newline: they are the table's separators. */
static void field_put(FILE *f, const char *s) {
        for (; s && *s; s++)
                fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

void outcome_record(const char *group, const char *name, const char *expected, bool pass,
                    const char *observed) {
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        FILE *f;

        if (!pass && !first_failure)
                first_failure = strdup_printf("[%s] %s: expected %s, observed %s", group, name, expected,
                                              strna(observed));
        if (outcome_fd < 0)
                return;
        f = open_memstream(&line, &size);
        if (!f)
                return;
        field_put(f, group);
        fputc('\t', f);
        field_put(f, name);
        fputc('\t', f);
        field_put(f, expected);
        fputc('\t', f);
        field_put(f, observed);
        fprintf(f, "\t%s\n", pass ? "PASS" : "FAIL");
        if (fclose(f) != 0)
                return;
        /* One write with O_APPEND: rows of concurrent writers never interleave. A row that
         * cannot be written still fails its test through the assertion that follows it. */
        (void) loop_write(outcome_fd, line, size);
}

typedef struct Row {
        char *field[5];
} Row;

/* Prints the rows as aligned columns; returns the number of FAIL rows. */
static unsigned print_table(void) {
        static const char *const heads[5] = { "GROUP", "CASE", "EXPECTED", "OBSERVED", "RESULT" };
        static const size_t caps[5] = { 14, 44, 38, 52, 6 };
        _cleanup_free_ char *data = NULL;
        Row *rows = NULL;
        size_t n = 0, width[5], size = 0;
        unsigned failed = 0, passed = 0;

        if (lseek(outcome_fd, 0, SEEK_SET) < 0 || read_full_fd(outcome_fd, 16 << 20, &data, &size) < 0)
                return 1;
        for (char *line = data, *next; line && *line; line = next) {
                Row r = {};
                char *p = line;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                for (size_t i = 0; i < 5; i++) {
                        r.field[i] = p;
                        p = p ? strchr(p, '\t') : NULL;
                        if (p)
                                *p++ = '\0';
                }
                if (!r.field[4])
                        continue;
                {
                        Row *more = reallocarray(rows, n + 1, sizeof(Row));

                        if (!more)
                                break;
                        rows = more;
                }
                rows[n++] = r;
        }

        for (size_t i = 0; i < 5; i++) {
                width[i] = strlen(heads[i]);
                for (size_t k = 0; k < n; k++)
                        width[i] = MAX(width[i], MIN(strlen(rows[k].field[i]), caps[i]));
        }
        printf("\n");
        for (size_t i = 0; i < 5; i++)
                printf("%-*s%s", (int) (i < 4 ? width[i] : 0), heads[i], i < 4 ? "  " : "\n");
        for (size_t i = 0; i < 5; i++)
                for (size_t k = 0; k < width[i]; k++)
                        fputs(k + 1 < width[i] || i == 4 ? "-" : i < 4 ? "-  " : "", stdout);
        putchar('\n');
        for (size_t k = 0; k < n; k++) {
                /* Long cells wrap within their column, so the table stays a table. */
                size_t done[5] = {};
                bool more = true;

                while (more) {
                        more = false;
                        for (size_t i = 0; i < 5; i++) {
                                const char *s = rows[k].field[i] + done[i];
                                size_t len = MIN(strlen(s), width[i]);

                                /* Break at the last space that fits, if there is one. */
                                if (len < strlen(s))
                                        for (size_t b = len; b > width[i] / 2; b--)
                                                if (s[b] == ' ') {
                                                        len = b;
                                                        break;
                                                }
                                if (i < 4)
                                        printf("%-*.*s  ", (int) width[i], (int) len, s);
                                else
                                        printf("%.*s\n", (int) len, s);
                                done[i] += len;
                                while (rows[k].field[i][done[i]] == ' ')
                                        done[i]++;
                                if (rows[k].field[i][done[i]])
                                        more = true;
                        }
                }
                if (streq(rows[k].field[4], "PASS"))
                        passed++;
                else
                        failed++;
        }
        printf("\n%zu cases: %u passed, %u failed. The daemon's cases are listed in "
               "tests/security/daemon/README.md, to run in the VM once the daemon exists.\n",
               n, passed, failed);
        free(rows);
        return failed;
}

/* After each test, in its process: a row that did not pass fails the test. */
static void case_teardown(void) {
        _cleanup_free_ char *failure = TAKE_PTR(first_failure);

        ck_assert_msg(!failure, "%s", strna(failure));
}

static Suite *security_suite(void) {
        TCase *const groups[] = {
                security_tcase_filesystem(),
                security_tcase_identity(),
                security_tcase_network(),
                security_tcase_resources(),
                security_tcase_inputs(),
                security_tcase_artifacts(),
        };
        Suite *s = suite_create("security");

        for (size_t i = 0; i < ELEMENTSOF(groups); i++) {
                tcase_add_checked_fixture(groups[i], NULL, case_teardown);
                suite_add_tcase(s, groups[i]);
        }
        return s;
}

int main(void) {
        SRunner *sr;
        int failed;

        /* Namespaces, mounts, a throwaway uid and set-uid fixtures need root. */
        if (geteuid() != 0) {
                fprintf(stderr, "the adversarial suite needs root, skipping\n");
                return 77;
        }
        outcome_fd = memfd_create("outcomes", MFD_CLOEXEC);
        if (outcome_fd < 0 || fcntl(outcome_fd, F_SETFL, O_APPEND) < 0) {
                fprintf(stderr, "memfd_create: %m\n");
                return EXIT_FAILURE;
        }

        sr = srunner_create(security_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        if (print_table() > 0 && failed == 0)
                failed = 1;
        if (failed > 0) {
                TestResult **results = srunner_failures(sr);

                printf("\ncheck failures:\n");
                for (int i = 0; i < srunner_ntests_failed(sr); i++)
                        printf("  %s:%d %s: %s\n", tr_lfile(results[i]), tr_lno(results[i]),
                               tr_tcname(results[i]), tr_msg(results[i]));
                free(results);
        }
        srunner_free(sr);
        safe_close(outcome_fd);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
