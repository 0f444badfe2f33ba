/* Fuzz target "policy": bytes as an admin policy.yaml, loaded over the compiled-in defaults the way
 * "skilld --check-policy FILE" and "skilld --policy FILE" load it.
 *
 * Promises checked: a refusal carries one of the documented codes and at least one message; every
 * message is fit for a terminal and names the file and a line inside it ("FILE:LINE: ..."), or is
 * a validation message about a built-in value; an accepted policy passes policy_validate() again,
 * keeps every default within its maximum, resolves the default limits, and holds a uid range that
 * does not wrap; loading the same text twice gives the same result; no fd leaks. */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "fuzz.h"
#include "policy.h"

static char *policy_path;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        policy_path = strdup_printf("/proc/self/fd/%d/policy.yaml", fuzz_scratch_fd());
        fuzz_assert(policy_path);
        return 0;
}

static void write_policy(const uint8_t *data, size_t size) {
        _cleanup_close_ int fd = openat(fuzz_scratch_fd(), "policy.yaml",
                                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        fuzz_assert(fd >= 0, "policy.yaml: %m");
        fuzz_assert(loop_write(fd, data, size) >= 0);
}

static bool code_is_documented(int r) {
        static const int codes[] = { -EINVAL, -EBADMSG, -EFBIG, -ENOMEM };

        for (size_t i = 0; i < ELEMENTSOF(codes); i++)
                if (r == codes[i])
                        return true;
        return false;
}

/* "PATH:LINE: ..." with LINE within the file, or a message about a built-in value, or the note
 * that ends a long list. A NUL byte in the input is refused as a whole file ("PATH: ..."). */
static void check_message(const char *m, unsigned lines, bool has_nul) {
        const char *p;
        unsigned line = 0;

        fuzz_assert(fuzz_text_is_safe(m), "unsafe message: %s", m);
        if (startswith(m, "built-in default: ") || streq(m, "too many problems, the rest are not listed"))
                return;
        p = startswith(m, policy_path);
        fuzz_assert(p && *p == ':', "message does not name the file: %s", m);
        p++;
        if (has_nul && *p == ' ')
                return;
        fuzz_assert(*p >= '1' && *p <= '9', "message without a line: %s", m);
        for (; *p >= '0' && *p <= '9'; p++) {
                fuzz_assert(line < 100000000U);
                line = line * 10 + (unsigned) (*p - '0');
        }
        fuzz_assert(*p == ':' && p[1] == ' ', "message without a line: %s", m);
        fuzz_assert(line >= 1 && line <= lines, "line %u of a %u-line file: %s", line, lines, m);
}

static void check_accepted(const Policy *p) {
        _cleanup_strv_free_ char **errors = NULL;
        _cleanup_free_ char *error = NULL;
        PolicyLimits limits;
        bool raised = true;

        fuzz_assert(policy_validate(p, &errors) == 0, "accepted, then invalid: %s",
                    errors ? errors[0] : "?");
        for (PolicyLimit l = 0; l < _POLICY_LIMIT_MAX; l++)
                fuzz_assert(p->defaults.value[l] <= p->maximums.value[l], "%s default above max",
                            policy_limit_to_string(l));
        fuzz_assert(policy_resolve_limits(p, NULL, &limits, &raised, &error) == 0,
                    "default limits refused: %s", strna(error));
        fuzz_assert(!raised);
        fuzz_assert(p->uid_count > 0 && (uint64_t) p->uid_first + p->uid_count - 1 <= UINT32_MAX - 2,
                    "uid range %" PRIu32 "+%" PRIu32, (uint32_t) p->uid_first, p->uid_count);
        STRV_FOREACH(s, p->network_skills)
                fuzz_assert(fuzz_text_is_safe(*s));
        STRV_FOREACH(s, p->network_hashes)
                fuzz_assert(fuzz_text_is_safe(*s));
}

static bool strv_same(char * const *a, char * const *b) {
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return false;
        return true;
}

static void check_same(const Policy *a, const Policy *b) {
        fuzz_assert(memcmp(&a->defaults, &b->defaults, sizeof(a->defaults)) == 0);
        fuzz_assert(memcmp(&a->maximums, &b->maximums, sizeof(a->maximums)) == 0);
        fuzz_assert(memcmp(&a->retention, &b->retention, sizeof(a->retention)) == 0);
        fuzz_assert(a->uid_first == b->uid_first && a->uid_count == b->uid_count &&
                    a->uid_allow_low == b->uid_allow_low);
        fuzz_assert(a->max_active == b->max_active && a->max_active_per_user == b->max_active_per_user &&
                    a->max_queued == b->max_queued && a->max_queued_per_user == b->max_queued_per_user);
        fuzz_assert(a->min_free_bytes == b->min_free_bytes && a->min_free_percent == b->min_free_percent);
        fuzz_assert(a->isolation_may_be_missing == b->isolation_may_be_missing);
        fuzz_assert(a->idle_timeout_usec == b->idle_timeout_usec);
        fuzz_assert(strv_same(a->network_skills, b->network_skills));
        fuzz_assert(strv_same(a->network_hashes, b->network_hashes));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char * const paths[] = { policy_path, NULL };
        _cleanup_(policy_freep) Policy *p = NULL, *again = NULL;
        _cleanup_strv_free_ char **errors = NULL, **errors_again = NULL;
        _cleanup_free_ char *error = NULL;
        int fd_before = fuzz_lowest_free_fd();
        bool has_nul = memchr(data, 0, size);
        unsigned lines = 1;
        int r, q;

        if (size > POLICY_FILE_MAX)
                return 0;
        /* Every line break YAML 1.1 knows (so more than an editor counts, never fewer): LF, CR,
         * NEL, LS and PS. */
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n' || data[i] == '\r' ||
                         (i + 1 < size && data[i] == 0xc2 && data[i + 1] == 0x85) ||
                         (i + 2 < size && data[i] == 0xe2 && data[i + 1] == 0x80 &&
                          (data[i + 2] == 0xa8 || data[i + 2] == 0xa9));
        write_policy(data, size);

        r = policy_load_files(paths, 0, &p, &errors);
        if (r < 0) {
                fuzz_assert(code_is_documented(r), "undocumented code %d", r);
                fuzz_assert(!p, "ret touched on failure");
                fuzz_assert(r == -ENOMEM || strv_length(errors) > 0, "refusal %d without a message", r);
                STRV_FOREACH(m, errors)
                        check_message(*m, lines, has_nul);
        } else {
                fuzz_assert(p && !errors);
                check_accepted(p);
        }

        /* The same text again: same verdict, same messages, same policy. */
        q = policy_load_files(paths, 0, &again, &errors_again);
        fuzz_assert(q == r, "second load: %d, first: %d", q, r);
        fuzz_assert(strv_same(errors, errors_again), "messages differ between two loads");
        if (r >= 0)
                check_same(p, again);

        /* The service's single-string form agrees. */
        again = policy_free(again);
        q = policy_load(policy_path, &again, &error);
        fuzz_assert(q == r, "policy_load: %d, policy_load_files: %d", q, r);
        fuzz_assert(r >= 0 || (error && fuzz_text_is_safe(error)));

        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
