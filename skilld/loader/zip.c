/* Extracting a skill zip into an empty directory. The central directory is read by hand first
 * (zip-directory.c) and judged as a whole: names, kinds, duplicates, file/directory conflicts,
 * whether everything sits under one <name>/ folder. Only then does libarchive (zip format only,
 * seekable reader, no filters) decompress, and every entry it hands over must be one the
 * directory listed, of the same kind. Files and directories are created by this code alone,
 * relative to directory fds opened O_NOFOLLOW, files with O_EXCL, so no entry can reach outside
 * the target; sizes are counted from the bytes libarchive actually produces. */
#include "archive-dlopen.h"
#include <inttypes.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "loader-internal.h"
#include "parse-util.h"
#include "zip-directory.h"

#define READ_BUFFER_SIZE (64U * 1024U)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive *, sym_archive_read_free);

/* libarchive reads through pread(): the fd's offset is left alone, and the seekable zip reader
 * (which starts from the central directory) gets the seeks it needs. */
typedef struct Source {
        int fd;
        uint64_t pos;
        uint64_t size;
        uint8_t buf[READ_BUFFER_SIZE];
} Source;

static la_ssize_t source_read(struct archive *a, void *userdata, const void **ret_buf) {
        Source *s = userdata;
        ssize_t k;

        do
                k = pread(s->fd, s->buf, sizeof(s->buf), (off_t) s->pos);
        while (k < 0 && errno == EINTR);
        if (k < 0) {
                sym_archive_set_error(a, errno, "read failed: %s", strerror(errno));
                return ARCHIVE_FATAL;
        }
        s->pos += k;
        *ret_buf = s->buf;
        return k;
}

static la_int64_t source_skip(struct archive *a, void *userdata, la_int64_t request) {
        Source *s = userdata;
        uint64_t n;

        if (request <= 0 || s->pos >= s->size)
                return 0;
        n = MIN((uint64_t) request, s->size - s->pos);
        s->pos += n;
        return (la_int64_t) n;
}

static la_int64_t source_seek(struct archive *a, void *userdata, la_int64_t offset, int whence) {
        Source *s = userdata;
        int64_t base, target;

        switch (whence) {
        case SEEK_SET:
                base = 0;
                break;
        case SEEK_CUR:
                base = (int64_t) s->pos;
                break;
        case SEEK_END:
                base = (int64_t) s->size;
                break;
        default:
                return ARCHIVE_FATAL;
        }
        if (__builtin_add_overflow(base, offset, &target) || target < 0)
                return ARCHIVE_FATAL;
        s->pos = (uint64_t) target;
        return target;
}

/* libarchive's message for what went wrong, escaped (it may quote bytes from the archive) and
 * without the newline some of its messages end in. */
static char *archive_message(struct archive *a, const char *fallback) {
        _cleanup_free_ char *s = strdup(sym_archive_error_string(a) ?: fallback);
        size_t n;

        if (!s)
                return NULL;
        n = strlen(s);
        while (n > 0 && strchr(" \t\n", s[n - 1]))
                s[--n] = '\0';
        return cescape(s);
}

static int cmp_path(const void *a, const void *b) {
        return strcmp(((const ZipDirEntry *) a)->path, ((const ZipDirEntry *) b)->path);
}

/* Ties broken by directory order, so the later of two duplicates is the one named. */
static int cmp_path_index(const void *a, const void *b) {
        const ZipDirEntry *x = a, *y = b;
        int c = strcmp(x->path, y->path);

        if (c != 0)
                return c;
        return x->index < y->index ? -1 : x->index > y->index;
}

static ZipDirEntry *find_entry(ZipDirectory *z, const char *path) {
        ZipDirEntry key = { .path = (char *) path };

        return bsearch(&key, z->entries, z->n, sizeof(ZipDirEntry), cmp_path);
}

/* The <name>/ layout package_skill.py writes: every entry below one folder, which holds
 * SKILL.md (or skill.md). Returns 1 and the folder name if so, 0 for a flat zip (extracted as
 * it is). */
static int detect_top_folder(const ZipDirectory *z, char **ret) {
        const char *first;
        bool has_md = false;
        char *top;
        size_t n;

        if (z->n == 0)
                return 0;
        first = z->entries[0].path;
        n = strcspn(first, "/");
        for (size_t i = 0; i < z->n; i++) {
                const ZipDirEntry *e = &z->entries[i];
                const char *rest;

                if (strncmp(e->path, first, n) != 0)
                        return 0;
                if (e->path[n] == '\0') {
                        if (!e->is_dir)
                                return 0;
                        continue;
                }
                if (e->path[n] != '/')
                        return 0;
                rest = e->path + n + 1;
                if (!e->is_dir && (streq(rest, "SKILL.md") || streq(rest, "skill.md")))
                        has_md = true;
        }
        if (!has_md)
                return 0;
        top = strndup(first, n);
        if (!top)
                return -ENOMEM;
        *ret = top;
        return 1;
}

/* Judges the names as a whole before anything is written. keep_top: a folder's contents, never a
 * skill's archive, so a single top-level folder stays where it is. */
static int prepare_entries(ZipDirectory *z, const LoaderLimits *limits, bool keep_top, char **ret_top,
                           char **error) {
        _cleanup_free_ char *top = NULL;
        size_t top_len;
        int r;

        for (size_t i = 0; i < z->n; i++) {
                ZipDirEntry *e = &z->entries[i];
                size_t len = e->name_len;

                if (len > 1 && e->name[len - 1] == '/')
                        len--;
                e->path = strndup(e->name, len);
                if (!e->path)
                        return -ENOMEM;
        }

        if (!keep_top) {
                r = detect_top_folder(z, &top);
                if (r < 0)
                        return r;
        }
        top_len = top ? strlen(top) : 0;

        /* Depth and length are those of the path below the top folder, as they will be on disk,
         * so a packaged tree loads exactly when its folder does. */
        for (size_t i = 0; i < z->n; i++) {
                ZipDirEntry *e = &z->entries[i];

                e->dest = !top ? e->path : e->path[top_len] == '\0' ? "" : e->path + top_len + 1;
                if (top) {
                        r = loader_check_path_bounded(e->path, UINT_MAX, SIZE_MAX, e->name, error);
                        if (r >= 0 && !isempty(e->dest))
                                r = loader_check_path_bounded(e->dest, limits->max_depth, limits->max_path,
                                                              e->name, error);
                } else
                        r = loader_check_path_bounded(e->path, limits->max_depth, limits->max_path, e->name,
                                                      error);
                if (r < 0)
                        return r;
        }

        qsort(z->entries, z->n, sizeof(ZipDirEntry), cmp_path_index);
        for (size_t i = 0; i < z->n; i++) {
                ZipDirEntry *e = &z->entries[i];

                if (i > 0 && streq(e->path, z->entries[i - 1].path))
                        return loader_entry_error(error, -EEXIST, e->name, "duplicate entry (also %s)",
                                                  z->entries[i - 1].name);

                /* A file "a" and an entry "a/b" cannot both exist. */
                for (const char *slash = strchr(e->path, '/'); slash; slash = strchr(slash + 1, '/')) {
                        _cleanup_free_ char *prefix = strndup(e->path, slash - e->path);
                        ZipDirEntry *parent;

                        if (!prefix)
                                return -ENOMEM;
                        parent = find_entry(z, prefix);
                        if (parent && !parent->is_dir)
                                return loader_entry_error(error, -EEXIST, e->name,
                                                          "is below %s, which is a file",
                                                          parent->name);
                }
        }

        *ret_top = TAKE_PTR(top);
        return 0;
}

typedef struct Extractor {
        int target_fd;
        const LoaderLimits *limits;
        uint64_t archive_size;
        uint64_t total;
        uint64_t created;       /* files and directories made, implied ones included */
        char *parent;           /* dest path of the cached parent directory fd */
        int parent_fd;
        char **error;
} Extractor;

static void extractor_done(Extractor *x) {
        free(x->parent);
        x->parent = NULL;
        x->parent_fd = safe_close(x->parent_fd);
}

/* Counts one more file or directory on disk. The central directory's entries are capped, but
 * "a/b/c/.../x" implies every directory on its way: without this, a zip of max_entries such
 * names would make max_depth times as many inodes as the cap allows, more than a folder with
 * the same tree could hold (loader_check_tree() counts every one). */
static int extractor_count(Extractor *x, const ZipDirEntry *e) {
        if (++x->created > x->limits->max_entries)
                return loader_entry_error(x->error, -E2BIG, e->name,
                                          "too many files and directories, counting the implied ones "
                                          "(more than %" PRIu64 ")", x->limits->max_entries);
        return 0;
}

/* Creates (or, if an earlier entry implied it, reuses) the directory name below parent_fd and
 * opens it; a file or symlink in its place is refused, never followed. */
static int make_directory(Extractor *x, int parent_fd, const char *name, const ZipDirEntry *e) {
        const char *display = e->name;
        char **error = x->error;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (mkdirat(parent_fd, name, 0755) >= 0) {
                r = extractor_count(x, e);
                if (r < 0)
                        return r;
        } else if (errno != EEXIST)
                return loader_entry_error(error, -errno, display, "cannot create directory: %m");
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOTDIR || errno == ELOOP)
                        return loader_entry_error(error, -EEXIST, display,
                                                  "conflicts with a file of the same name");
                return loader_entry_error(error, -errno, display, "cannot open directory: %m");
        }
        /* The umask may have taken bits away. */
        if (fchmod(fd, 0755) < 0)
                return loader_entry_error(error, -errno, display, "cannot set mode: %m");
        return TAKE_FD(fd);
}

/* Opens the directory that will hold dest, creating the missing ones on the way. Consecutive
 * entries mostly share a parent, so the last one is kept open. */
static int extractor_parent(Extractor *x, const ZipDirEntry *e, const char **ret_leaf, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *parent = NULL;
        const char *slash = strrchr(e->dest, '/');
        char *p, *save = NULL;

        if (!slash) {
                *ret_leaf = e->dest;
                *ret_fd = x->target_fd;
                return 0;
        }
        *ret_leaf = slash + 1;
        parent = strndup(e->dest, slash - e->dest);
        if (!parent)
                return -ENOMEM;
        if (x->parent && streq(x->parent, parent)) {
                *ret_fd = x->parent_fd;
                return 0;
        }

        for (p = strtok_r(parent, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
                int nfd = make_directory(x, fd >= 0 ? fd : x->target_fd, p, e);

                if (nfd < 0)
                        return nfd;
                safe_close(fd);
                fd = nfd;
        }

        extractor_done(x);
        x->parent = strndup(e->dest, slash - e->dest);
        if (!x->parent)
                return -ENOMEM;
        x->parent_fd = TAKE_FD(fd);
        *ret_fd = x->parent_fd;
        return 0;
}

static int extractor_account(Extractor *x, const ZipDirEntry *e, uint64_t file_bytes, size_t n) {
        const LoaderLimits *l = x->limits;
        char buf[FORMAT_BYTES_MAX];

        if (file_bytes + n > l->max_file_bytes)
                return loader_entry_error(x->error, -EFBIG, e->name, "file is larger than %s",
                                          format_bytes(buf, sizeof(buf), l->max_file_bytes));
        x->total += n;
        if (x->total > l->max_total_bytes)
                return loader_entry_error(x->error, -EFBIG, e->name, "archive expands to more than %s",
                                          format_bytes(buf, sizeof(buf), l->max_total_bytes));
        if (x->total > l->ratio_min_bytes && x->total > u64_mul_sat(x->archive_size, l->max_ratio))
                return loader_entry_error(x->error, -EFBIG, e->name,
                                          "archive expands more than %" PRIu64 " times its size",
                                          l->max_ratio);
        return 0;
}

static int extract_file(Extractor *x, struct archive *a, const ZipDirEntry *e, mode_t mode) {
        _cleanup_close_ int fd = -EBADF;
        const char *leaf;
        uint64_t written = 0;
        int parent_fd, r;

        r = extractor_parent(x, e, &leaf, &parent_fd);
        if (r < 0)
                return r;
        fd = openat(parent_fd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0) {
                if (errno == EEXIST)
                        return loader_entry_error(x->error, -EEXIST, e->name, "exists more than once");
                return loader_entry_error(x->error, -errno, e->name, "cannot create file: %m");
        }
        r = extractor_count(x, e);
        if (r < 0)
                return r;

        for (;;) {
                const void *buf;
                size_t n;
                la_int64_t offset;

                r = sym_archive_read_data_block(a, &buf, &n, &offset);
                if (r == ARCHIVE_EOF)
                        break;
                if (r != ARCHIVE_OK) {
                        _cleanup_free_ char *msg = archive_message(a, "cannot read data");

                        return loader_entry_error(x->error, -EBADMSG, e->name, "%s", strna(msg));
                }
                if (offset < 0 || (uint64_t) offset != written)
                        return loader_entry_error(x->error, -EBADMSG, e->name, "data has holes");
                r = extractor_account(x, e, written, n);
                if (r < 0)
                        return r;
                r = loop_write(fd, buf, n);
                if (r < 0)
                        return loader_entry_error(x->error, r, e->name, "cannot write: %s", strerror(-r));
                written += n;
        }
        if (written != e->size)
                return loader_entry_error(x->error, -EBADMSG, e->name,
                                          "holds %" PRIu64 " bytes, its header says %" PRIu64,
                                          written, e->size);
        if (fchmod(fd, mode) < 0)
                return loader_entry_error(x->error, -errno, e->name, "cannot set mode: %m");
        return 0;
}

static int extract_directory(Extractor *x, const ZipDirEntry *e) {
        _cleanup_close_ int fd = -EBADF;
        const char *leaf;
        int parent_fd, r;

        if (isempty(e->dest))
                return 0;       /* the top folder itself: that is the target */
        r = extractor_parent(x, e, &leaf, &parent_fd);
        if (r < 0)
                return r;
        fd = make_directory(x, parent_fd, leaf, e);
        return fd < 0 ? fd : 0;
}

/* What libarchive says about an entry must agree with the directory read by hand, and be a
 * regular file or directory in any case. */
static int check_archive_entry(struct archive_entry *ae, const ZipDirEntry *e, char **error) {
        mode_t type = sym_archive_entry_filetype(ae);

        if (sym_archive_entry_hardlink(ae))
                return loader_entry_error(error, -EPERM, e->name, "hard links are not allowed");
        if (sym_archive_entry_symlink(ae))
                return loader_entry_error(error, -EPERM, e->name, "symlinks are not allowed");
        if (type != AE_IFREG && type != AE_IFDIR)
                return loader_entry_error(error, -EPERM, e->name, "%s", loader_kind_refusal(type));
        if (sym_archive_entry_is_encrypted(ae))
                return loader_entry_error(error, -EPROTONOSUPPORT, e->name,
                                          "encrypted entries are not supported");
        if ((type == AE_IFDIR) != e->is_dir)
                return loader_entry_error(error, -EBADMSG, e->name,
                                          "the zip's headers disagree on whether this is a directory");
        return 0;
}

static int extract_entries(int archive_fd, int target_fd, ZipDirectory *z, const LoaderLimits *limits,
                           uint64_t *ret_bytes, uint64_t *ret_entries, char **error) {
        /* Freed in reverse order: the reader before the locale and the source it uses. */
        _cleanup_free_ Source *source = NULL;
        _cleanup_loader_locale_ LoaderLocale locale = {};
        _cleanup_(sym_archive_read_freep) struct archive *a = NULL;
        _cleanup_(extractor_done) Extractor x = {
                .target_fd = target_fd,
                .limits = limits,
                .archive_size = z->file_size,
                .parent_fd = -EBADF,
                .error = error,
        };
        size_t seen = 0;
        int r;

        r = dlopen_libarchive(error);
        if (r < 0)
                return r;
        source = malloc(sizeof(Source));
        if (!source)
                return -ENOMEM;
        *source = (Source) { .fd = archive_fd, .size = z->file_size };

        loader_locale_enter(&locale);
        a = sym_archive_read_new();
        if (!a)
                return -ENOMEM;
        /* The zip format alone, and no filters: a gzip or tar renamed .skill is no zip. */
        if (sym_archive_read_support_format_zip_seekable(a) != ARCHIVE_OK ||
            sym_archive_read_set_callback_data(a, source) != ARCHIVE_OK ||
            sym_archive_read_set_read_callback(a, source_read) != ARCHIVE_OK ||
            sym_archive_read_set_skip_callback(a, source_skip) != ARCHIVE_OK ||
            sym_archive_read_set_seek_callback(a, source_seek) != ARCHIVE_OK)
                return error_setf(error, -EIO, "cannot set up the zip reader: %s",
                                  strempty(sym_archive_error_string(a)));
        if (sym_archive_read_open1(a) != ARCHIVE_OK) {
                _cleanup_free_ char *msg = archive_message(a, "unreadable");

                return error_setf(error, -EPROTONOSUPPORT, "not a zip archive: %s", strna(msg));
        }

        for (;;) {
                _cleanup_free_ char *path = NULL;
                struct archive_entry *ae;
                const char *name;
                ZipDirEntry *e;
                size_t len;

                r = sym_archive_read_next_header(a, &ae);
                if (r == ARCHIVE_EOF)
                        break;
                name = sym_archive_entry_pathname(ae);
                if (r != ARCHIVE_OK) {
                        _cleanup_free_ char *msg = archive_message(a, "cannot read the entry header");

                        return loader_entry_error(error, -EBADMSG, name ?: "archive", "%s", strna(msg));
                }
                if ((sym_archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_ZIP)
                        return error_setf(error, -EPROTONOSUPPORT, "not a zip archive");
                if (!name)
                        return error_setf(error, -EBADMSG, "corrupt zip archive: an entry has no name");

                len = strlen(name);
                if (len > 1 && name[len - 1] == '/')
                        len--;
                path = strndup(name, len);
                if (!path)
                        return -ENOMEM;
                e = find_entry(z, path);
                if (!e)
                        return loader_entry_error(error, -EBADMSG, name,
                                                  "not listed in the central directory");
                if (e->seen)
                        return loader_entry_error(error, -EEXIST, e->name, "duplicate entry");
                e->seen = true;
                seen++;

                r = check_archive_entry(ae, e, error);
                if (r < 0)
                        return r;
                if (e->is_dir)
                        r = extract_directory(&x, e);
                else
                        r = extract_file(&x, a, e, loader_normalize_mode(sym_archive_entry_mode(ae)));
                if (r < 0)
                        return r;
        }

        if (seen != z->n)
                return error_setf(error, -EBADMSG,
                                  "corrupt zip archive: the central directory lists %zu entries, "
                                  "%zu were found", z->n, seen);
        *ret_bytes = x.total;
        *ret_entries = x.created;
        return 0;
}

static int extract_zip(int archive_fd, int target_fd, const LoaderLimits *limits, bool keep_top,
                       char **ret_top_name, uint64_t *ret_bytes, uint64_t *ret_entries, char **error) {
        _cleanup_(zip_directory_freep) ZipDirectory *z = NULL;
        uint64_t bytes = 0, entries = 0;
        LoaderLimits def = LOADER_LIMITS_DEFAULT;
        _cleanup_free_ char *top = NULL;
        struct stat st;
        int r;

        limits = limits ?: &def;

        if (fstat(target_fd, &st) < 0)
                return error_setf(error, -errno, "cannot stat the target directory: %m");
        if (!S_ISDIR(st.st_mode))
                return error_setf(error, -ENOTDIR, "the target is not a directory");
        /* On failure everything in the target is removed, so it must hold nothing of anyone's. */
        r = loader_directory_is_empty(target_fd);
        if (r < 0)
                return error_setf(error, r, "cannot read the target directory: %s", strerror(-r));
        if (r == 0)
                return error_setf(error, -ENOTEMPTY, "the target directory is not empty");

        r = zip_directory_read(archive_fd, limits, &z, error);
        if (r < 0)
                return r;
        r = prepare_entries(z, limits, keep_top, &top, error);
        if (r < 0)
                return r;

        r = extract_entries(archive_fd, target_fd, z, limits, &bytes, &entries, error);
        if (r < 0) {
                (void) loader_empty_directory(target_fd);
                return r;
        }

        if (ret_top_name)
                *ret_top_name = TAKE_PTR(top);
        if (ret_bytes)
                *ret_bytes = bytes;
        if (ret_entries)
                *ret_entries = entries;
        return 0;
}

int loader_extract_zip(int archive_fd, int target_fd, const LoaderLimits *limits, char **ret_top_name,
                       char **error) {
        return extract_zip(archive_fd, target_fd, limits, false, ret_top_name, NULL, NULL, error);
}

int loader_extract_folder_zip(int archive_fd, int target_fd, const LoaderLimits *limits, uint64_t *ret_bytes,
                              uint64_t *ret_entries, char **error) {
        return extract_zip(archive_fd, target_fd, limits, true, NULL, ret_bytes, ret_entries, error);
}
