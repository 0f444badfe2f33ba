/* String-list, string and fd helpers declared in util.h. */
#include <dirent.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "util.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}

size_t strv_length(char * const *l) {
        size_t n = 0;

        if (!l)
                return 0;
        while (l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *value) {
        size_t n;
        char **c;

        if (!value)
                return -EINVAL;
        n = strv_length(*l);
        c = reallocarray(*l, n + 2, sizeof(char *));
        if (!c) {
                free(value);
                return -ENOMEM;
        }
        c[n] = value;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *value) {
        char *v = strdup(value);

        if (!v)
                return -ENOMEM;
        return strv_push(l, v);
}

bool strv_contains(char * const *l, const char *s) {
        STRV_FOREACH(i, l)
                if (streq(*i, s))
                        return true;
        return false;
}

char **strv_copy(char * const *l) {
        _cleanup_strv_free_ char **c = NULL;
        size_t n = strv_length(l);

        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                c[i] = strdup(l[i]);
                if (!c[i])
                        return NULL;
        }
        return TAKE_PTR(c);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        size_t n = strv_length(l);

        if (n > 1)
                qsort(l, n, sizeof(char *), cmp_str);
}

const char *endswith(const char *s, const char *suffix) {
        size_t sl = strlen(s), xl = strlen(suffix);

        if (xl > sl)
                return NULL;
        return streq(s + sl - xl, suffix) ? s + sl - xl : NULL;
}

char *strdup_printf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

char *strjoin_path(const char *a, const char *b) {
        if (isempty(a))
                return strdup(b);
        if (isempty(b))
                return strdup(a);
        return strdup_printf("%s%s%s", a, endswith(a, "/") ? "" : "/", b[0] == '/' ? b + 1 : b);
}

bool utf8_is_valid(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        size_t i = 0;

        while (i < n) {
                unsigned c = p[i];
                uint32_t cp;
                size_t len;

                if (c < 0x80) {
                        i++;
                        continue;
                } else if ((c & 0xe0) == 0xc0) {
                        len = 2;
                        cp = c & 0x1f;
                } else if ((c & 0xf0) == 0xe0) {
                        len = 3;
                        cp = c & 0x0f;
                } else if ((c & 0xf8) == 0xf0) {
                        len = 4;
                        cp = c & 0x07;
                } else
                        return false;

                if (n - i < len)
                        return false;
                for (size_t k = 1; k < len; k++) {
                        if ((p[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (p[i + k] & 0x3f);
                }
                if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
                        return false; /* overlong */
                if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += len;
        }
        return true;
}

uint32_t utf8_decode(const char *s, size_t len) {
        const unsigned char *p = (const unsigned char *) s;
        uint32_t cp = len == 1 ? p[0] : len == 2 ? p[0] & 0x1f : len == 3 ? p[0] & 0x0f : p[0] & 0x07;

        for (size_t k = 1; k < len; k++)
                cp = (cp << 6) | (p[k] & 0x3f);
        return cp;
}

size_t utf8_len(unsigned char c) {
        return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
}

bool unichar_is_layout_control(uint32_t c) {
        return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
                (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

bool utf8_has_layout_control(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t len = utf8_len((unsigned char) s[i]);

                if (len == 0 || len > n - i)
                        return false;   /* not valid UTF-8: not ours to judge */
                if (len > 1 && unichar_is_layout_control(utf8_decode(s + i, len)))
                        return true;
                i += len;
        }
        return false;
}

bool string_has_cc(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < ' ' || s[i] == 0x7f)
                        return true;
        return false;
}

char *cescape(const char *s) {
        size_t n = strlen(s);
        char *r, *t;

        r = malloc(n * 4 + 1);
        if (!r)
                return NULL;
        t = r;
        for (size_t i = 0; i < n;) {
                unsigned char c = s[i];
                size_t len = utf8_len(c);
                bool multibyte = len > 1 && i + len <= n && utf8_is_valid(s + i, len);
                uint32_t cp = multibyte ? utf8_decode(s + i, len) : c;

                if (c == '\\') {
                        *t++ = '\\';
                        *t++ = '\\';
                        i++;
                } else if (c >= ' ' && c < 0x7f) {
                        *t++ = c;
                        i++;
                } else if (multibyte && unichar_is_layout_control(cp)) {
                        /* Valid, but it would reorder the line (U+202E turns "exe.txt" around)
                         * or end it. At most 6 characters for 2 or 3 bytes: within n * 4. */
                        t += sprintf(t, "\\u%04x", (unsigned) cp);
                        i += len;
                } else if (multibyte && !(cp >= 0x80 && cp < 0xa0)) {
                        /* Valid UTF-8 passes, except the C1 controls U+0080..U+009F: U+009B is
                         * CSI to terminals that take 8-bit controls, as ESC [ is to all. */
                        memcpy(t, s + i, len);
                        t += len;
                        i += len;
                } else {
                        t += sprintf(t, "\\x%02x", c);
                        i++;
                }
        }
        *t = '\0';
        return r;
}

/* close_range() (Linux 5.9) over the gaps between the kept fds: no /proc, no allocation, a
 * handful of calls (a forked sandbox child calls this three times a run, where walking
 * /proc/self/fd cost an opendir(), a getdents() and a close() per fd). */
static int close_ranges_except(const int *keep, size_t n_keep) {
        unsigned lo = 3;

        for (;;) {
                unsigned next = UINT_MAX;

                /* The smallest kept fd at or above lo (n_keep is small: quadratic is fine). */
                for (size_t i = 0; i < n_keep; i++)
                        if (keep[i] >= 0 && (unsigned) keep[i] >= lo && (unsigned) keep[i] < next)
                                next = (unsigned) keep[i];
                if (next == UINT_MAX)
                        return syscall(SYS_close_range, lo, ~0U, 0) < 0 ? -errno : 0;
                if (next > lo && syscall(SYS_close_range, lo, next - 1, 0) < 0)
                        return -errno;
                lo = next + 1;
        }
}

int close_all_fds_except(const int *keep, size_t n_keep) {
        DIR *d;
        struct dirent *de;
        int r;

        r = close_ranges_except(keep, n_keep);
        if (r != -ENOSYS)
                return r;

        /* Older kernels: walk /proc/self/fd instead of looping to RLIMIT_NOFILE, which may be huge. */
        d = opendir("/proc/self/fd");
        if (!d)
                return -errno;

        while ((de = readdir(d))) {
                char *end;
                long fd;
                bool kept = false;

                if (de->d_name[0] == '.')
                        continue;
                errno = 0;
                fd = strtol(de->d_name, &end, 10);
                if (errno != 0 || *end != '\0' || fd <= 2 || fd == dirfd(d))
                        continue;
                for (size_t i = 0; i < n_keep; i++)
                        if (keep[i] == fd)
                                kept = true;
                if (!kept)
                        (void) close((int) fd);
        }
        closedir(d);
        return 0;
}

ssize_t send_with_fd(int sock, const void *data, size_t size, int fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = (void *) data, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        if (fd >= 0) {
                struct cmsghdr *cmsg;

                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control.buf);
                cmsg = CMSG_FIRSTHDR(&mh);
                cmsg->cmsg_level = SOL_SOCKET;
                cmsg->cmsg_type = SCM_RIGHTS;
                cmsg->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
        }
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n;
}

int format_utc_timestamp(uint64_t usec, char buf[static UTC_TIMESTAMP_MAX]) {
        uint64_t secs = usec / 1000000U, days = secs / 86400U, rest = secs % 86400U;
        uint64_t z, era, doe, yoe, doy, mp, year;
        unsigned month, day;

        /* Days to a date in the proleptic Gregorian calendar, counted in 400-year eras from
         * 0000-03-01 (H. Hinnant's civil_from_days(), unsigned: no date before 1970 here). */
        z = days + 719468U;
        era = z / 146097U;
        doe = z - era * 146097U;                                        /* [0, 146096] */
        yoe = (doe - doe / 1460U + doe / 36524U - doe / 146096U) / 365U; /* [0, 399] */
        doy = doe - (365U * yoe + yoe / 4U - yoe / 100U);               /* [0, 365], from March */
        mp = (5U * doy + 2U) / 153U;                                    /* [0, 11], March first */
        day = (unsigned) (doy - (153U * mp + 2U) / 5U + 1U);
        month = (unsigned) (mp < 10U ? mp + 3U : mp - 9U);
        year = yoe + era * 400U + (month <= 2U);
        if (year > 9999U)
                return -ERANGE;
        (void) snprintf(buf, UTC_TIMESTAMP_MAX, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ",
                        (unsigned) (uint16_t) year, (unsigned) (uint8_t) month, (unsigned) (uint8_t) day,
                        (unsigned) (uint8_t) (rest / 3600U), (unsigned) (uint8_t) (rest / 60U % 60U),
                        (unsigned) (uint8_t) (rest % 60U), (unsigned) (usec % 1000000U));
        return 0;
}
