/* Small helpers every module leans on: cleanup attributes, ownership transfer, fd and string
 * utilities. Modelled on the conventions of systemd's code base, written on the public C library
 * only, so that nothing here drags in a dependency. */
#pragma once

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _noinline_ __attribute__((noinline))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
/* Room for an integer type in decimal, its sign and the NUL (a byte holds under three digits). */
#define DECIMAL_STR_MAX(type) (sizeof(type) * 3 + 2)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership on: returns the value and leaves NULL (or -EBADF) behind, so the cleanup
 * attribute of the old owner does nothing. */
#define TAKE_PTR(p) ({ typeof(p) *_pp_ = &(p); typeof(p) _p_ = *_pp_; *_pp_ = NULL; _p_; })
#define TAKE_FD(fd) ({ int *_fdp_ = &(fd); int _fd_ = *_fdp_; *_fdp_ = -EBADF; _fd_; })

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                 \
        static inline void func##p(type *p) {                   \
                if (*p)                                         \
                        func(*p);                               \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Closes an fd and returns -EBADF, so "fd = safe_close(fd);" leaves it invalid. EINTR on close
 * is not retried: on Linux the fd is gone either way. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        (void) safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void close_pairp(int (*p)[2]) {
        (void) safe_close((*p)[0]);
        (void) safe_close((*p)[1]);
}
#define _cleanup_close_pair_ _cleanup_(close_pairp)

/* A NULL-terminated array of strings, the type argv and environment lists share. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char * const *l);
int strv_push(char ***l, char *value);          /* takes value, also on failure */
int strv_extend(char ***l, const char *value);  /* copies value */
bool strv_contains(char * const *l, const char *s);
char **strv_copy(char * const *l);
void strv_sort(char **l);

#define STRV_FOREACH(s, l) for (char * const *s = (l); s && *s; s++)

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

static inline bool isempty(const char *s) {
        return !s || s[0] == '\0';
}

/* Returns a pointer behind the prefix, or NULL. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

const char *endswith(const char *s, const char *suffix);

char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
char *strjoin_path(const char *a, const char *b);

/* Whether the string is valid UTF-8 without overlongs, surrogates or code points past U+10FFFF. */
bool utf8_is_valid(const char *s, size_t n);

/* The length of the UTF-8 sequence lead byte c starts (1 for ASCII), 0 for a byte no sequence
 * starts with. */
size_t utf8_len(unsigned char c);
/* The code point of the valid UTF-8 sequence of len bytes at s. */
uint32_t utf8_decode(const char *s, size_t len);

/* Whether the string holds any ASCII control character (or DEL). */
bool string_has_cc(const char *s, size_t n);

/* Whether the code point reorders or breaks the text around it while printing as nothing: the
 * bidirectional controls (U+061C, U+200E/F, U+202A..E, U+2066..9) and the line and paragraph
 * separators U+2028/9. Valid UTF-8 that can still make a name read differently from what it is. */
bool unichar_is_layout_control(uint32_t c);
/* Whether valid UTF-8 s holds one of those. */
bool utf8_has_layout_control(const char *s, size_t n);

/* Writes a version of s fit for one line of a log or terminal: control characters (C0, DEL and
 * C1), escape sequences and invalid UTF-8 become \xNN, layout controls \uNNNN, so a hostile name
 * cannot forge output. */
char *cescape(const char *s);

/* Marks every fd above 2 close-on-exec, or closes them. Used in forked children. */
int close_all_fds_except(const int *keep, size_t n_keep);

/* Sends SIZE bytes of DATA on Unix socket SOCK in one message, with FD attached (SCM_RIGHTS)
 * unless it is negative; never raises SIGPIPE, retries on EINTR. Returns the bytes sent or
 * -errno. Async-signal-safe: forked children use it. */
ssize_t send_with_fd(int sock, const void *data, size_t size, int fd);

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" for usec microseconds since the epoch, in UTC, what gmtime_r()
 * would give but computed here: glibc's gmtime_r() loads the time zone (/etc/localtime) on its
 * first call, 20 to 30 us that a result's timestamps do not need. -ERANGE past the year 9999. */
#define UTC_TIMESTAMP_MAX 40U /* 28 used; room for what the compiler cannot bound */
int format_utc_timestamp(uint64_t usec, char buf[static UTC_TIMESTAMP_MAX]);

static inline uint64_t u64_mul_sat(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
