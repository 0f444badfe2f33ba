/* The names an untrusted skill may use, whether they come from a zip's directory or from a
 * directory on disk: relative, plain UTF-8, no tricks with "..", backslashes, control characters
 * or bidirectional controls, bounded in length and depth. Also how such names appear in messages,
 * and the UTF-8 locale libarchive needs to pass them through unchanged. */
#include <stdarg.h>

#include "error.h"
#include "loader-internal.h"

/* Long enough to recognise an entry, short enough to keep a message on a screen. */
#define DISPLAY_MAX 200U

/* cescape() stops at NUL; zip names can hold NUL bytes, so escape piece by piece. Every byte
 * becomes at most 4 characters, "\x00" included. */
static char *escape_name(const char *name, size_t len) {
        _cleanup_free_ char *out = NULL;
        const char *end = name + len;
        char *t;

        out = malloc(len * 4 + 1);
        if (!out)
                return NULL;
        t = out;
        for (const char *p = name;;) {
                _cleanup_free_ char *piece = NULL;
                const char *nul = memchr(p, '\0', end - p);

                piece = cescape(p);     /* stops at the NUL, or at the end, which is a NUL too */
                if (!piece)
                        return NULL;
                t = stpcpy(t, piece);
                if (!nul)
                        break;
                t = stpcpy(t, "\\x00");
                p = nul + 1;
        }
        return TAKE_PTR(out);
}

_printf_(5, 0)
static int entry_errorv(char **error, int r, const char *name, size_t len, const char *fmt, va_list ap) {
        _cleanup_free_ char *escaped = NULL, *msg = NULL;

        r = -abs(r);
        if (!error || *error)
                return r;
        if (vasprintf(&msg, fmt, ap) < 0)
                return r;
        escaped = escape_name(strempty(name), name ? len : 0);
        if (!escaped)
                return r;
        if (strlen(escaped) > DISPLAY_MAX) {
                size_t cut = DISPLAY_MAX;

                /* cescape() leaves valid UTF-8 alone; do not cut a sequence in half. */
                while (cut > 0 && ((unsigned char) escaped[cut] & 0xc0) == 0x80)
                        cut--;
                strcpy(escaped + cut, "...");
        }
        return error_setf(error, r, "%s: %s", escaped, msg);
}

int loader_entry_error(char **error, int r, const char *name, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = entry_errorv(error, r, name, name ? strlen(name) : 0, fmt, ap);
        va_end(ap);
        return r;
}

int loader_entry_errorn(char **error, int r, const char *name, size_t len, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = entry_errorv(error, r, name, len, fmt, ap);
        va_end(ap);
        return r;
}

const char *loader_kind_refusal(mode_t type) {
        switch (type & S_IFMT) {
        case S_IFLNK:
                return "symlinks are not allowed";
        case S_IFCHR:
        case S_IFBLK:
                return "device nodes are not allowed";
        case S_IFIFO:
                return "FIFOs are not allowed";
        case S_IFSOCK:
                return "sockets are not allowed";
        default:
                return "only regular files and directories are allowed";
        }
}

int loader_check_path_bounded(const char *path, unsigned max_depth, size_t max_path, const char *display,
                              char **error) {
        size_t len;
        unsigned depth = 0;

        display = display ?: path;
        if (isempty(path))
                return loader_entry_error(error, -EINVAL, display, "empty paths are not allowed");
        len = strlen(path);

        if (path[0] == '/')
                return loader_entry_error(error, -EINVAL, display, "absolute paths are not allowed");
        if (memchr(path, '\\', len))
                return loader_entry_error(error, -EINVAL, display, "backslashes are not allowed");
        if (string_has_cc(path, len))
                return loader_entry_error(error, -EINVAL, display, "control characters are not allowed");
        if (!utf8_is_valid(path, len))
                return loader_entry_error(error, -EINVAL, display, "names must be valid UTF-8");
        /* A name that displays differently from what it is ("evil\u202eexe.sh" reads as ending in
         * ".sh" backwards) has no honest use in a skill. */
        if (utf8_has_layout_control(path, len))
                return loader_entry_error(error, -EINVAL, display,
                                          "bidirectional and line separator characters are not allowed");

        for (const char *p = path;;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t) (slash - p) : strlen(p);

                if (n == 0)
                        return loader_entry_error(error, -EINVAL, display,
                                                  "empty path components are not allowed");
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return loader_entry_error(error, -EINVAL, display,
                                                  "\".\" and \"..\" components are not allowed");
                if (n > LOADER_NAME_MAX)
                        return loader_entry_error(error, -EINVAL, display,
                                                  "a component is longer than %u bytes",
                                                  LOADER_NAME_MAX);
                depth++;
                if (!slash)
                        break;
                p = slash + 1;
        }

        if (len > max_path)
                return loader_entry_error(error, -EINVAL, display, "path is longer than %zu bytes",
                                          max_path);
        if (depth > max_depth)
                return loader_entry_error(error, -EINVAL, display, "nested deeper than %u levels",
                                          max_depth);
        return 0;
}

int loader_check_path(const char *path, const LoaderLimits *limits, char **error) {
        LoaderLimits def = LOADER_LIMITS_DEFAULT;

        limits = limits ?: &def;
        return loader_check_path_bounded(path, limits->max_depth, limits->max_path, NULL, error);
}

/* Caches and litter only. A vendored node_modules is code the skill runs, so it is part of the
 * skill like any script; the sandbox hides what is left out here (sandbox_run() masks it), so a
 * run executes exactly what the hash names. */
static bool component_is_excluded(const char *c, size_t n) {
        static const char * const names[] = { "__pycache__", ".DS_Store" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == n && memcmp(c, names[i], n) == 0)
                        return true;
        return n >= 4 && memcmp(c + n - 4, ".pyc", 4) == 0;
}

bool skill_path_is_excluded(const char *path) {
        if (!path)
                return false;
        for (const char *p = path;;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t) (slash - p) : strlen(p);

                if (component_is_excluded(p, n))
                        return true;
                if (!slash)
                        return false;
                p = slash + 1;
        }
}

void loader_locale_enter(LoaderLocale *l) {
        *l = (LoaderLocale) {};
        l->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t) 0);
        if (l->utf8)
                l->saved = uselocale(l->utf8);
}

void loader_locale_leave(LoaderLocale *l) {
        if (!l->utf8)
                return;
        (void) uselocale(l->saved);
        freelocale(l->utf8);
        l->utf8 = (locale_t) 0;
}
