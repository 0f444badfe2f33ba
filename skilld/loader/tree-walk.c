/* Walking a skill tree on disk without trusting it: every name goes through the path rules,
 * nothing is followed (symlinks are refused, directories are opened O_NOFOLLOW relative to their
 * parent), nothing outside regular files and directories is accepted, and the caps bound the
 * work. Validation, hashing and packaging all see the tree through this one walk. */
#include <dirent.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "loader-internal.h"
#include "parse-util.h"

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

typedef struct Walk {
        const LoaderLimits *limits;
        TreeWalkFlags flags;
        dev_t dev;
        TreeList list;
        size_t alloc;
        uint64_t total_bytes;
        char **error;
} Walk;

void tree_list_done(TreeList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->entries[i].path);
        free(l->entries);
        *l = (TreeList) {};
}

static void walk_done(Walk *w) {
        tree_list_done(&w->list);
}

static int walk_push(Walk *w, char *path, const struct stat *st) {
        if (w->list.n >= w->alloc) {
                size_t na = w->alloc == 0 ? 64 : w->alloc * 2;
                TreeEntry *ne = reallocarray(w->list.entries, na, sizeof(TreeEntry));

                if (!ne) {
                        free(path);
                        return -ENOMEM;
                }
                w->list.entries = ne;
                w->alloc = na;
        }
        w->list.entries[w->list.n++] = (TreeEntry) {
                .path = path,
                .type = st->st_mode & S_IFMT,
                .mode = loader_normalize_mode(st->st_mode),
                .size = S_ISREG(st->st_mode) ? (uint64_t) st->st_size : 0,
        };
        return 0;
}

/* Opens a private DIR stream on fd, so that the caller's fd keeps its own offset. */
static DIR *opendir_at(int fd) {
        int dfd;
        DIR *d;

        dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return NULL;
        d = fdopendir(dfd);
        if (!d)
                safe_close(dfd);
        return d;
}

/* Takes own_fd (a subdirectory this walk opened: its stream needs no open of its own), else
 * reads fd through a stream of its own. */
static int walk_dir(Walk *w, int fd, int own_fd, const char *prefix) {
        _cleanup_closedir_ DIR *d = NULL;
        char buf[FORMAT_BYTES_MAX];
        struct dirent *de;
        int r;

        if (own_fd >= 0) {
                d = fdopendir(own_fd);
                if (!d)
                        (void) safe_close(own_fd);
        } else
                d = opendir_at(fd);
        if (!d)
                return error_setf(w->error, -errno, "%s: cannot open directory: %m", prefix ?: ".");

        for (;;) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return error_setf(w->error, -errno, "%s: cannot read directory: %m",
                                                  prefix ?: ".");
                        break;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if ((w->flags & TREE_WALK_SKIP_EXCLUDED) && skill_path_is_excluded(de->d_name))
                        continue;

                path = prefix ? strjoin_path(prefix, de->d_name) : strdup(de->d_name);
                if (!path)
                        return -ENOMEM;
                r = loader_check_path_bounded(path, w->limits->max_depth, w->limits->max_path, NULL,
                                              w->error);
                if (r < 0)
                        return r;

                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return loader_entry_error(w->error, -errno, path, "cannot stat: %m");
                if (w->list.n >= w->limits->max_entries)
                        return loader_entry_error(w->error, -E2BIG, path,
                                                  "too many entries (more than %" PRIu64 ")",
                                                  w->limits->max_entries);
                if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                        return loader_entry_error(w->error, -EPERM, path, "%s",
                                                  loader_kind_refusal(st.st_mode));
                if (st.st_dev != w->dev)
                        return loader_entry_error(w->error, -EPERM, path, "mount points are not allowed");

                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int cfd = -EBADF;
                        const char *p;

                        cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (cfd < 0)
                                return loader_entry_error(w->error, -errno, path,
                                                          "cannot open directory: %m");
                        r = walk_push(w, TAKE_PTR(path), &st);
                        if (r < 0)
                                return r;
                        p = w->list.entries[w->list.n - 1].path;
                        r = walk_dir(w, -EBADF, TAKE_FD(cfd), p);
                        if (r < 0)
                                return r;
                        continue;
                }

                if ((w->flags & TREE_WALK_REFUSE_HARDLINKS) && st.st_nlink > 1)
                        return loader_entry_error(w->error, -EPERM, path, "hard links are not allowed");
                if ((uint64_t) st.st_size > w->limits->max_file_bytes)
                        return loader_entry_error(w->error, -EFBIG, path, "file is larger than %s",
                                                  format_bytes(buf, sizeof(buf), w->limits->max_file_bytes));
                w->total_bytes += st.st_size;
                if (w->total_bytes > w->limits->max_total_bytes)
                        return loader_entry_error(w->error, -EFBIG, path, "the tree holds more than %s",
                                                  format_bytes(buf, sizeof(buf),
                                                               w->limits->max_total_bytes));
                r = walk_push(w, TAKE_PTR(path), &st);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cmp_entry(const void *a, const void *b) {
        return strcmp(((const TreeEntry *) a)->path, ((const TreeEntry *) b)->path);
}

int tree_walk(int dir_fd, const LoaderLimits *limits, TreeWalkFlags flags, TreeList *ret, char **error) {
        LoaderLimits def = LOADER_LIMITS_DEFAULT;
        _cleanup_(walk_done) Walk w = {
                .limits = limits ?: &def,
                .flags = flags,
                .error = error,
        };
        struct stat st;
        int r;

        if (fstat(dir_fd, &st) < 0)
                return error_setf(error, -errno, "cannot stat the skill directory: %m");
        if (!S_ISDIR(st.st_mode))
                return error_setf(error, -ENOTDIR, "the skill is not a directory");
        w.dev = st.st_dev;

        r = walk_dir(&w, dir_fd, -EBADF, NULL);
        if (r < 0)
                return r;
        if ((flags & TREE_WALK_SORT) && w.list.n > 1)
                qsort(w.list.entries, w.list.n, sizeof(TreeEntry), cmp_entry);
        *ret = w.list;
        w.list = (TreeList) {};
        return 0;
}

/* The whole path in one call: no symlink anywhere on it (RESOLVE_NO_SYMLINKS, the last
 * component included), nothing outside dir_fd and no mount crossed. -ENOSYS where the kernel
 * (before 5.6) or a container's seccomp filter does not offer openat2(); some filters say
 * -EPERM instead. */
static int open_beneath(int dir_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) flags,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        long fd;

        fd = syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
        return fd < 0 ? -errno : (int) fd;
}

/* The same, a component at a time: each directory opened O_NOFOLLOW | O_DIRECTORY relative to
 * its parent. */
static int open_by_components(int dir_fd, const char *path, int flags) {
        _cleanup_close_ int cur = -EBADF;
        _cleanup_free_ char *copy = strdup(path);
        char *p, *slash;
        int fd;

        if (!copy)
                return -ENOMEM;
        for (p = copy; (slash = strchr(p, '/')); p = slash + 1) {
                int nfd;

                *slash = '\0';
                nfd = openat(cur >= 0 ? cur : dir_fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0)
                        return -errno;
                safe_close(cur);
                cur = nfd;
        }
        fd = openat(cur >= 0 ? cur : dir_fd, p, flags);
        return fd < 0 ? -errno : fd;
}

int tree_open_file(int dir_fd, const char *path, char **error) {
        /* O_NONBLOCK: if a FIFO was swapped in since the walk, do not hang on it. */
        const int flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open_beneath(dir_fd, path, flags);
        if (fd == -ENOSYS || fd == -EPERM)
                fd = open_by_components(dir_fd, path, flags);
        if (fd == -ENOMEM)
                return fd;
        if (fd < 0) {
                errno = -fd;
                return loader_entry_error(error, fd, path, "cannot open: %m");
        }
        if (fstat(fd, &st) < 0)
                return loader_entry_error(error, -errno, path, "cannot stat: %m");
        if (!S_ISREG(st.st_mode))
                return loader_entry_error(error, -EPERM, path, "%s", loader_kind_refusal(st.st_mode));
        return TAKE_FD(fd);
}

int loader_directory_is_empty(int dir_fd) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        d = opendir_at(dir_fd);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        return 0;
        return errno != 0 ? -errno : 1;
}

int loader_empty_directory(int dir_fd) {
        int r = 0;

        /* Removing entries while reading the directory may hide others from readdir(); go round
         * until nothing is left or a pass removes nothing. */
        for (unsigned pass = 0; pass < 16; pass++) {
                _cleanup_closedir_ DIR *d = NULL;
                struct dirent *de;
                bool any = false;

                d = opendir_at(dir_fd);
                if (!d)
                        return -errno;
                while ((de = readdir(d))) {
                        int q;

                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        any = true;
                        q = rm_rf_at(dir_fd, de->d_name);
                        if (q < 0 && r == 0)
                                r = q;
                }
                if (!any)
                        return 0;
                if (r < 0)
                        return r;
        }
        return -EBUSY;
}
