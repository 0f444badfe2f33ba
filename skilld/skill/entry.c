/* Entry point resolution and interpreter detection. Paths given by the user (--script) or by the
 * skill (entry_point) are untrusted: they are normalized, refused if absolute or holding "..",
 * and opened one component at a time under the skill's directory fd with O_NOFOLLOW, so the
 * answer is always a regular file inside the skill. */
#include <dirent.h>
#include <sys/stat.h>

#include "entry.h"
#include "error.h"
#include "string-table.h"

/* Deeper folders under scripts/ are not searched for the script listing. */
#define SCRIPTS_DEPTH_MAX 32U
/* Scripts named in the "nothing resolved" message; the rest are counted. */
#define SCRIPTS_LISTED_MAX 20U
/* Enough of a file for any sensible shebang line. */
#define SHEBANG_MAX 256U

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static const char * const entry_candidates[] = {
        "scripts/main.py",
        "scripts/main.js",
        "scripts/main.mjs",
        "scripts/main.sh",
        "scripts/run.py",
        "main.py",
        "run.py",
};

static const char * const interpreter_table[_INTERPRETER_MAX] = {
        [INTERPRETER_NONE]   = "exec",
        [INTERPRETER_PYTHON] = "python3",
        [INTERPRETER_NODE]   = "node",
        [INTERPRETER_BASH]   = "bash",
        [INTERPRETER_SH]     = "sh",
};

/* Debian merged /usr: the /usr/bin paths exist on every supported system, inside the sandbox's
 * read-only /usr too. */
static const char * const interpreter_path_table[_INTERPRETER_MAX] = {
        [INTERPRETER_NONE]   = NULL,
        [INTERPRETER_PYTHON] = "/usr/bin/python3",
        [INTERPRETER_NODE]   = "/usr/bin/node",
        [INTERPRETER_BASH]   = "/usr/bin/bash",
        [INTERPRETER_SH]     = "/usr/bin/sh",
};

DEFINE_STRING_TABLE_TO_STRING(interpreter, Interpreter, interpreter_table);

const char *interpreter_path(Interpreter i) {
        return string_table_to_string(interpreter_path_table, ELEMENTSOF(interpreter_path_table), i);
}

void skill_entry_done(SkillEntry *e) {
        if (!e)
                return;
        free(e->script);
        *e = (SkillEntry) {};
}

static Interpreter interpreter_from_extension(const char *path) {
        if (endswith(path, ".py"))
                return INTERPRETER_PYTHON;
        if (endswith(path, ".js") || endswith(path, ".mjs") || endswith(path, ".cjs"))
                return INTERPRETER_NODE;
        if (endswith(path, ".sh"))
                return INTERPRETER_BASH;
        return _INTERPRETER_INVALID;
}

static bool span_digits_all(const char *s) {
        return s[0] != '\0' && s[strspn(s, "0123456789")] == '\0';
}

static Interpreter interpreter_from_program(const char *prog, size_t n) {
        const char *slash = memrchr(prog, '/', n);
        _cleanup_free_ char *base = NULL;

        if (slash) {
                n -= slash + 1 - prog;
                prog = slash + 1;
        }
        base = strndup(prog, n);
        if (!base)
                return INTERPRETER_NONE;

        if (streq(base, "python3") || streq(base, "python"))
                return INTERPRETER_PYTHON;
        /* python3.11 and the like */
        if (startswith(base, "python3.") && span_digits_all(base + 8))
                return INTERPRETER_PYTHON;
        if (streq(base, "node") || streq(base, "nodejs"))
                return INTERPRETER_NODE;
        if (streq(base, "bash"))
                return INTERPRETER_BASH;
        if (streq(base, "sh") || streq(base, "dash"))
                return INTERPRETER_SH;
        return INTERPRETER_NONE;
}

/* "#!/usr/bin/env -S python3 -u", "#!/bin/bash -e", "#! /usr/bin/node" */
static Interpreter interpreter_from_shebang(const char *head, size_t n) {
        const char *p, *end, *nl;
        bool env = false;

        if (n < 2 || head[0] != '#' || head[1] != '!')
                return INTERPRETER_NONE;
        /* The line ends at a newline, or at a NUL in what is really a binary. */
        nl = memchr(head, '\n', n);
        end = nl ?: head + n;
        nl = memchr(head, '\0', end - head);
        end = nl ?: end;
        p = head + 2;

        for (;;) {
                const char *word;
                size_t len;

                while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
                        p++;
                if (p >= end)
                        return INTERPRETER_NONE;
                word = p;
                while (p < end && !(*p == ' ' || *p == '\t' || *p == '\r'))
                        p++;
                len = p - word;

                if (!env) {
                        const char *slash = memrchr(word, '/', len);
                        const char *base = slash ? slash + 1 : word;

                        if ((size_t) (word + len - base) == 3 && memcmp(base, "env", 3) == 0) {
                                env = true;
                                continue;
                        }
                        return interpreter_from_program(word, len);
                }
                /* env's options (-S, -i, -u) and VAR=value assignments come before the program. */
                if (word[0] == '-' || memchr(word, '=', len))
                        continue;
                return interpreter_from_program(word, len);
        }
}

/* Splits path into components, dropping "." and empty ones; refuses absolute paths and "..". */
static int normalize_path(const char *path, char **ret) {
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        const char *p = path;

        if (isempty(path) || path[0] == '/')
                return -EINVAL;

        out = malloc(strlen(path) + 1);
        if (!out)
                return -ENOMEM;

        while (*p) {
                size_t n = strcspn(p, "/");

                if (n == 2 && memcmp(p, "..", 2) == 0)
                        return -EINVAL;
                if (n > 0 && !(n == 1 && p[0] == '.')) {
                        if (len > 0)
                                out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                }
                p += n;
                if (*p == '/')
                        p++;
        }
        if (len == 0)
                return -EINVAL;
        out[len] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

/* After a failed openat(..., O_NOFOLLOW) of name: O_DIRECTORY|O_NOFOLLOW reports a symlink as
 * ENOTDIR, so look at what is there to tell a symlink (-ELOOP) from a missing folder. */
static int open_error(int at, const char *name, int error) {
        struct stat st;

        if ((error == ENOTDIR || error == ELOOP) &&
            fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode))
                return -ELOOP;
        return -error;
}

/* Opens a normalized relative path under dir_fd without following any symlink on the way.
 * -ELOOP for a symlink anywhere, -ENOENT/-ENOTDIR when it is missing. */
static int open_beneath(int dir_fd, const char *path, int flags, int *ret_fd) {
        _cleanup_close_ int cur = -EBADF;
        const char *p = path;
        int at = dir_fd, fd;

        for (;;) {
                const char *slash = strchr(p, '/');
                _cleanup_free_ char *comp = NULL;

                if (!slash) {
                        fd = openat(at, p, flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
                        if (fd < 0)
                                return open_error(at, p, errno);
                        *ret_fd = fd;
                        return 0;
                }

                comp = strndup(p, slash - p);
                if (!comp)
                        return -ENOMEM;
                fd = openat(at, comp, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
                if (fd < 0)
                        return open_error(at, comp, errno);
                (void) safe_close(cur);
                cur = at = fd;
                p = slash + 1;
        }
}

static Interpreter interpreter_from_fd(const char *path, int fd) {
        char head[SHEBANG_MAX];
        Interpreter i;
        ssize_t n;

        i = interpreter_from_extension(path);
        if (i >= 0)
                return i;

        n = pread(fd, head, sizeof(head), 0);
        if (n < 0)
                return -errno;
        return interpreter_from_shebang(head, n);
}

Interpreter interpreter_for_script(int dir_fd, const char *script) {
        _cleanup_free_ char *norm = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        Interpreter i;
        int r;

        if (!script)
                return -EINVAL;
        i = interpreter_from_extension(script);
        if (i >= 0)
                return i;

        r = normalize_path(script, &norm);
        if (r < 0)
                return r;
        r = open_beneath(dir_fd, norm, O_RDONLY, &fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        return interpreter_from_fd(norm, fd);
}

/* Fills ret from the script at the normalized path norm, which the caller opened: r is that
 * open's result and fd (taken) the file on success. what names the path's origin in errors
 * ("--script", "entry_point") or is NULL for the built-in candidates. */
static int entry_from_open(int r, int fd_in, const char *norm, const char *what, const char *how,
                           SkillEntry *ret, char **error) {
        _cleanup_free_ char *label = NULL, *script = NULL, *esc = NULL;
        _cleanup_close_ int fd = fd_in;
        struct stat st;
        Interpreter i;

        esc = cescape(norm);
        label = what ? strdup_printf("%s %s", what, strempty(esc)) : strdup(strempty(esc));
        if (!esc || !label)
                return -ENOMEM;

        if (r == -ENOENT || r == -ENOTDIR)
                return error_setf(error, -ENOENT, "%s: no such file in the skill", label);
        if (r == -ELOOP)
                return error_setf(error, r, "%s: symlinks are not allowed", label);
        if (r < 0)
                return error_setf(error, r, "%s: cannot open: %m", label);
        if (fstat(fd, &st) < 0)
                return error_setf(error, -errno, "%s: cannot stat: %m", label);
        if (!S_ISREG(st.st_mode))
                return error_setf(error, -EBADFD, "%s: not a regular file", label);

        i = interpreter_from_fd(norm, fd);
        if (i < 0)
                return error_setf(error, (int) i, "%s: cannot read: %m", label);

        script = strdup(norm);
        if (!script)
                return -ENOMEM;
        *ret = (SkillEntry) {
                .script = TAKE_PTR(script),
                .interpreter = i,
                .how = how,
        };
        return 0;
}

/* Opens a script by its normalized path and fills ret (see entry_from_open()). */
static int entry_open(int dir_fd, const char *norm, const char *what, const char *how, SkillEntry *ret,
                      char **error) {
        int fd = -EBADF, r;

        r = open_beneath(dir_fd, norm, O_RDONLY, &fd);
        return entry_from_open(r, fd, norm, what, how, ret, error);
}

/* The built-in candidates in order. Those under scripts/ share one open of that folder (opened
 * as open_beneath() would, without following a symlink), and the candidate found is the file
 * already open: a run used to open scripts/ once per candidate and the winner twice. A missing
 * or non-folder scripts/ skips its candidates, as the per-path opens' ENOENT or ENOTDIR did; any
 * other failure (a symlink) is reported under the first candidate's name, as before. 1 when
 * none exists. */
static int entry_candidates_open(int dir_fd, SkillEntry *ret, char **error) {
        _cleanup_close_ int scripts_fd = -EBADF;
        int scripts_r = 1; /* not opened yet */

        for (size_t i = 0; i < ELEMENTSOF(entry_candidates); i++) {
                const char *path = entry_candidates[i], *name = path, *rest;
                int at = dir_fd, fd = -EBADF, r;

                rest = startswith(path, "scripts/");
                if (rest) {
                        if (scripts_r > 0)
                                scripts_r = open_beneath(dir_fd, "scripts", O_RDONLY | O_DIRECTORY, &scripts_fd);
                        if (scripts_r == -ENOENT || scripts_r == -ENOTDIR)
                                continue;
                        if (scripts_r < 0)
                                return entry_from_open(scripts_r, -EBADF, path, NULL, path, ret, error);
                        at = scripts_fd;
                        name = rest;
                }

                /* Only absence moves on to the next candidate; a candidate that exists but is a
                 * symlink or a directory is an error, not something to silently pass over. */
                r = open_beneath(at, name, O_RDONLY, &fd);
                if (r == -ENOENT || r == -ENOTDIR)
                        continue;
                return entry_from_open(r, fd, path, NULL, path, ret, error);
        }
        return 1;
}

static int entry_explicit(int dir_fd, const char *path, const char *what, SkillEntry *ret, char **error) {
        _cleanup_free_ char *norm = NULL;
        int r;

        r = normalize_path(path, &norm);
        if (r == -EINVAL) {
                _cleanup_free_ char *esc = cescape(path);

                return error_setf(error, r, "%s %s: must be a relative path inside the skill", what,
                                  strempty(esc));
        }
        if (r < 0)
                return r;
        return entry_open(dir_fd, norm, what, what, ret, error);
}

/* Hidden entries, caches and vendored packages hold no entry points; SKILL.md is not one even if
 * an archive marked it executable. */
static bool name_is_excluded(const char *name) {
        return name[0] == '.' || streq(name, "__pycache__") || streq(name, "node_modules") ||
                streq(name, "SKILL.md") || streq(name, "skill.md");
}

static int file_is_script(int dir_fd, const char *name, const struct stat *st) {
        _cleanup_close_ int fd = -EBADF;
        char head[2];
        ssize_t n;

        if (interpreter_from_extension(name) >= 0)
                return true;
        if (st->st_mode & 0111)
                return true;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        n = pread(fd, head, sizeof(head), 0);
        if (n < 0)
                return -errno;
        return n == 2 && head[0] == '#' && head[1] == '!';
}

/* Adds the scripts in the directory dir_fd (whose path is prefix) to *list; takes dir_fd. */
static int list_dir(int dir_fd, const char *prefix, bool recurse, unsigned depth, char ***list) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        d = fdopendir(dir_fd);
        if (!d) {
                r = -errno;
                (void) safe_close(dir_fd);
                return r;
        }

        for (;;) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return -errno;
                        return 0;
                }
                if (name_is_excluded(de->d_name))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }

                path = isempty(prefix) ? strdup(de->d_name) : strdup_printf("%s/%s", prefix, de->d_name);
                if (!path)
                        return -ENOMEM;

                if (S_ISDIR(st.st_mode) && recurse && depth < SCRIPTS_DEPTH_MAX) {
                        int fd;

                        fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
                        if (fd < 0) {
                                if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
                                        continue;
                                return -errno;
                        }
                        r = list_dir(fd, path, recurse, depth + 1, list);
                        if (r < 0)
                                return r;
                } else if (S_ISREG(st.st_mode)) {
                        r = file_is_script(dirfd(d), de->d_name, &st);
                        if (r == -ENOENT || r == -ELOOP)
                                continue;
                        if (r < 0)
                                return r;
                        if (r > 0) {
                                r = strv_push(list, TAKE_PTR(path));
                                if (r < 0)
                                        return r;
                        }
                }
        }
}

/* The scripts directly in dir (relative to the root, no recursion) or, with recurse, below it
 * too. A missing dir yields an empty list. */
static int list_scripts_in(int dir_fd, const char *dir, bool recurse, char ***list) {
        int fd, r;

        if (isempty(dir)) {
                fd = openat(dir_fd, ".", O_RDONLY | O_CLOEXEC | O_DIRECTORY);
                if (fd < 0)
                        return -errno;
        } else {
                r = open_beneath(dir_fd, dir, O_RDONLY | O_DIRECTORY, &fd);
                if (r == -ENOENT || r == -ENOTDIR)
                        return 0;
                if (r < 0)
                        return r;
        }
        return list_dir(fd, dir, recurse, 1, list);
}

int skill_list_scripts(int dir_fd, char ***ret) {
        _cleanup_strv_free_ char **list = NULL;
        int r;

        if (!ret)
                return -EINVAL;

        r = list_scripts_in(dir_fd, "", false, &list);
        if (r < 0)
                return r;
        r = list_scripts_in(dir_fd, "scripts", true, &list);
        if (r < 0)
                return r;
        if (!list) {
                list = calloc(1, sizeof(char *));
                if (!list)
                        return -ENOMEM;
        }
        strv_sort(list);
        *ret = TAKE_PTR(list);
        return 0;
}

static int entry_not_found(int dir_fd, const char *override_name, char **error) {
        _cleanup_strv_free_ char **all = NULL;
        _cleanup_free_ char *listing = NULL;
        size_t n, len = 0;
        int r;

        r = skill_list_scripts(dir_fd, &all);
        if (r < 0)
                return error_setf(error, r, "no entry point found, and listing the scripts failed: %m");
        n = strv_length(all);
        if (n == 0)
                return error_setf(error, -ENOENT,
                                  "no entry point found: the skill holds no scripts "
                                  "(expected scripts/main.py, scripts/main.js, scripts/main.sh or similar)");

        listing = strdup("");
        if (!listing)
                return -ENOMEM;
        for (size_t i = 0; i < n && i < SCRIPTS_LISTED_MAX; i++) {
                _cleanup_free_ char *esc = cescape(all[i]);
                size_t l;
                char *t;

                if (!esc)
                        return -ENOMEM;
                l = strlen(esc);
                t = realloc(listing, len + 2 + l + 1);
                if (!t)
                        return -ENOMEM;
                listing = t;
                if (len > 0) {
                        /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): the next one adds it */
                        memcpy(listing + len, ", ", 2);
                        len += 2;
                }
                memcpy(listing + len, esc, l + 1);
                len += l;
        }

        if (n > SCRIPTS_LISTED_MAX)
                return error_setf(error, -ENOENT,
                                  "no entry point found among %zu scripts (%s, and %zu more); "
                                  "choose one with %s or entry_point", n, listing,
                                  n - SCRIPTS_LISTED_MAX, override_name);
        return error_setf(error, -ENOENT,
                          "no entry point found among the scripts %s; "
                          "choose one with %s or entry_point", listing, override_name);
}

int skill_resolve_entry(const Skill *s, int dir_fd, const char *script_override, SkillEntry *ret,
                        char **error) {
        return skill_resolve_entry_named(s, dir_fd, script_override, "--script", ret, error);
}

int skill_resolve_entry_named(const Skill *s, int dir_fd, const char *script_override,
                              const char *override_name, SkillEntry *ret, char **error) {
        _cleanup_strv_free_ char **direct = NULL;
        int r;

        if (!ret)
                return -EINVAL;

        if (script_override)
                return entry_explicit(dir_fd, script_override, override_name, ret, error);
        if (s && s->entry_point)
                return entry_explicit(dir_fd, s->entry_point, "entry_point", ret, error);

        r = entry_candidates_open(dir_fd, ret, error);
        if (r <= 0)
                return r;

        r = list_scripts_in(dir_fd, "scripts", false, &direct);
        if (r == -ELOOP)
                return error_setf(error, r, "scripts: symlinks are not allowed");
        if (r < 0)
                return error_setf(error, r, "scripts: cannot list: %m");
        if (direct && strv_length(direct) == 1)
                return entry_open(dir_fd, direct[0], NULL, "only script in scripts/", ret, error);

        return entry_not_found(dir_fd, override_name, error);
}
