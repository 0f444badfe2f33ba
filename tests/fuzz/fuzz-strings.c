/* Fuzz target "strings": the small parsers and filters every untrusted name or number passes
 * through (the input, cut at its first NUL, is one string).
 *
 * Promises checked: cescape() output is fit for a terminal and decodes back to the input; a
 * path loader_check_path() accepts is relative, has no empty, "." or ".." component, no
 * backslash or control character, is valid UTF-8 and within the limits, and a refusal message
 * is fit for a terminal; skill_name_is_valid() agrees with the rule it states; the number
 * parsers never accept trailing garbage and round-trip what they accept. */
#include <inttypes.h>

#include "fuzz.h"
#include "lint.h"
#include "loader.h"
#include "parse-util.h"

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

static void check_cescape(const char *s) {
        _cleanup_free_ char *e = cescape(s), *back = NULL;
        char *t;

        fuzz_assert(e);
        fuzz_assert(fuzz_text_is_safe(e), "cescape() let through: %s", e);
        fuzz_assert(!utf8_has_layout_control(e, strlen(e)), "cescape() let a layout control through");

        /* Undo it: "\\\\", "\\xNN" and, for the layout controls (bidirectional overrides, line
         * separators), "\\uNNNN" are the only escapes. */
        back = t = malloc(strlen(e) + 1);
        fuzz_assert(back);
        for (const char *p = e; *p;) {
                if (*p != '\\') {
                        *t++ = *p++;
                        continue;
                }
                if (p[1] == '\\') {
                        *t++ = '\\';
                        p += 2;
                        continue;
                }
                if (p[1] == 'u') {
                        uint32_t c = 0;

                        for (int i = 2; i < 6; i++) {
                                fuzz_assert(unhex(p[i]) >= 0, "bad escape in %s", e);
                                c = c << 4 | (uint32_t) unhex(p[i]);
                        }
                        /* Only layout controls, all of them below U+10000: two or three bytes. */
                        fuzz_assert(unichar_is_layout_control(c), "\\u%04x escaped", c);
                        if (c < 0x800)
                                *t++ = (char) (0xc0 | c >> 6);
                        else {
                                *t++ = (char) (0xe0 | c >> 12);
                                *t++ = (char) (0x80 | (c >> 6 & 0x3f));
                        }
                        *t++ = (char) (0x80 | (c & 0x3f));
                        p += 6;
                        continue;
                }
                fuzz_assert(p[1] == 'x' && unhex(p[2]) >= 0 && unhex(p[3]) >= 0, "bad escape in %s", e);
                *t++ = (char) (unhex(p[2]) << 4 | unhex(p[3]));
                p += 4;
        }
        *t = '\0';
        fuzz_assert(streq(back, s), "cescape() is not reversible");
}

static void check_path(const char *s) {
        static const LoaderLimits limits = { .max_depth = 4, .max_path = 64 };
        _cleanup_free_ char *error = NULL;
        size_t len = strlen(s);
        unsigned depth = 1;
        int r;

        r = loader_check_path(s, &limits, &error);
        if (r < 0) {
                fuzz_assert(r == -EINVAL, "code %d", r);
                fuzz_assert(fuzz_text_is_safe(error), "unsafe message: %s", strna(error));
                return;
        }
        fuzz_assert(len > 0 && len <= limits.max_path && s[0] != '/');
        fuzz_assert(!strchr(s, '\\') && !string_has_cc(s, len) && utf8_is_valid(s, len));
        fuzz_assert(!utf8_has_layout_control(s, len));
        fuzz_assert(!startswith(s, "./") && !startswith(s, "../") && !streq(s, ".") && !streq(s, ".."));
        fuzz_assert(!strstr(s, "//") && !strstr(s, "/./") && !strstr(s, "/../"));
        fuzz_assert(!endswith(s, "/") && !endswith(s, "/.") && !endswith(s, "/.."));
        for (const char *p = s; *p; p++)
                depth += *p == '/';
        fuzz_assert(depth <= limits.max_depth);
        (void) skill_path_is_excluded(s);
}

static void check_name(const char *s) {
        size_t n = strlen(s);

        if (!skill_name_is_valid(s))
                return;
        fuzz_assert(n >= 1 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n);
        fuzz_assert(s[0] != '-' && s[n - 1] != '-' && !strstr(s, "--"));
}

static void check_numbers(const char *s) {
        char buf[32], fb[FORMAT_BYTES_MAX];
        uint64_t u64, usec;
        unsigned u;
        int i;

        if (safe_atou64(s, &u64) >= 0) {
                uint64_t again;

                /* Leading zeros are the one spelling that does not come back the same. */
                snprintf(buf, sizeof(buf), "%" PRIu64, u64);
                fuzz_assert(safe_atou64(buf, &again) >= 0 && again == u64);
                fuzz_assert(s[strspn(s, "0123456789")] == '\0', "accepted %s", s);
        }
        if (safe_atou(s, &u) >= 0)
                fuzz_assert(safe_atou64(s, &u64) >= 0 && u64 == u);
        if (safe_atoi(s, &i) >= 0) {
                snprintf(buf, sizeof(buf), "%i", i);
                fuzz_assert(safe_atoi(buf, &i) >= 0);
        }
        if (parse_size(s, &u64) >= 0)
                fuzz_assert(format_bytes(fb, sizeof(fb), u64));
        (void) parse_sec(s, &usec);
        (void) parse_percent_unbounded(s, &u);
}

static void check_error_message(const char *s) {
        _cleanup_(lint_report_freep) LintReport *report = lint_report_new();

        fuzz_assert(report);
        fuzz_assert(lint_report_add_error_message(report, "SKILL.md", s) >= 0);
        fuzz_assert(report->n_diags == 1 && report->diags[0].file && report->diags[0].message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = strndup((const char *) data, size);
        int fd_before = fuzz_lowest_free_fd();

        fuzz_assert(s);
        check_cescape(s);
        check_path(s);
        check_name(s);
        check_numbers(s);
        check_error_message(s);
        fuzz_assert(fuzz_lowest_free_fd() == fd_before, "an fd leaked");
        return 0;
}
