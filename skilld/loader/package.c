/* Packaging a skill folder as a .skill zip, in the layout Anthropic's package_skill.py writes
 * (every entry under "<name>/") so other tools read it, but reproducible: entries sorted, fixed
 * times and owners, directories included so empty ones survive the round trip. The tree is read
 * through the loader's walk, so what gets packaged is what would load, and the package re-loads
 * to the same content hash. */
#include "archive-dlopen.h"
#include <inttypes.h>

#include "error.h"
#include "loader-internal.h"
#include "parse-util.h"

/* 1980-01-02 00:00 UTC: the zip (DOS) clock starts in 1980 and is kept in local time, so a day
 * later stays representable in every time zone. */
#define PACKAGE_MTIME_DEFAULT 315619200ULL

DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive *, sym_archive_write_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive_entry *, sym_archive_entry_free);

static time_t package_mtime(void) {
        const char *e = secure_getenv("SOURCE_DATE_EPOCH");
        uint64_t t;

        if (e && safe_atou64(e, &t) >= 0 && t >= PACKAGE_MTIME_DEFAULT && t <= INT32_MAX)
                return (time_t) t;
        return (time_t) PACKAGE_MTIME_DEFAULT;
}

static int write_header(struct archive *a, const char *path, mode_t type, mode_t mode, uint64_t size,
                        time_t mtime, char **error) {
        _cleanup_(sym_archive_entry_freep) struct archive_entry *ae = NULL;

        ae = sym_archive_entry_new();
        if (!ae)
                return -ENOMEM;
        sym_archive_entry_set_pathname(ae, path);
        sym_archive_entry_set_filetype(ae, type == S_IFDIR ? AE_IFDIR : AE_IFREG);
        sym_archive_entry_set_perm(ae, mode);
        sym_archive_entry_set_size(ae, (la_int64_t) size);
        sym_archive_entry_set_mtime(ae, mtime, 0);
        sym_archive_entry_set_uid(ae, 0);
        sym_archive_entry_set_gid(ae, 0);
        if (sym_archive_write_header(a, ae) != ARCHIVE_OK)
                return loader_entry_error(error, -EIO, path, "cannot write: %s",
                                          strempty(sym_archive_error_string(a)));
        return 0;
}

static int write_contents(struct archive *a, int dir_fd, const TreeEntry *e, char **error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t total = 0;
        char buf[64 * 1024];

        fd = tree_open_file(dir_fd, e->path, error);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return loader_entry_error(error, -errno, e->path, "cannot read: %m");
                }
                if (k == 0)
                        break;
                total += k;
                if (total > e->size)
                        break;
                if (sym_archive_write_data(a, buf, k) != k)
                        return loader_entry_error(error, -EIO, e->path, "cannot write: %s",
                                                  strempty(sym_archive_error_string(a)));
        }
        if (total != e->size)
                return loader_entry_error(error, -EBUSY, e->path, "changed while being packaged");
        return 0;
}

/* The zip of the tree at dir_fd: every entry under "<name>/" (name NULL: at the root), walked with
 * flags and limits (NULL: the defaults). */
static int package_tree(int dir_fd, const char *name, const LoaderLimits *limits, TreeWalkFlags flags,
                        int out_fd, char **error) {
        _cleanup_loader_locale_ LoaderLocale locale = {};
        _cleanup_(sym_archive_write_freep) struct archive *a = NULL;
        _cleanup_tree_list_ TreeList list = {};
        time_t mtime = package_mtime();
        int r;

        r = tree_walk(dir_fd, limits, flags | TREE_WALK_SORT, &list, error);
        if (r < 0)
                return r;

        r = dlopen_libarchive(error);
        if (r < 0)
                return r;
        loader_locale_enter(&locale);
        a = sym_archive_write_new();
        if (!a)
                return -ENOMEM;
        if (sym_archive_write_set_format_zip(a) != ARCHIVE_OK ||
            sym_archive_write_zip_set_compression_deflate(a) != ARCHIVE_OK ||
            sym_archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
            sym_archive_write_open_fd(a, out_fd) != ARCHIVE_OK)
                return error_setf(error, -EIO, "cannot start the zip: %s",
                                  strempty(sym_archive_error_string(a)));

        if (name) {
                _cleanup_free_ char *root = strdup_printf("%s/", name);

                if (!root)
                        return -ENOMEM;
                r = write_header(a, root, S_IFDIR, 0755, 0, mtime, error);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < list.n; i++) {
                const TreeEntry *e = &list.entries[i];
                _cleanup_free_ char *p = NULL;

                p = strdup_printf("%s%s%s%s", strempty(name), name ? "/" : "", e->path,
                                  S_ISDIR(e->type) ? "/" : "");
                if (!p)
                        return -ENOMEM;
                r = write_header(a, p, e->type, e->mode, e->size, mtime, error);
                if (r < 0)
                        return r;
                if (S_ISREG(e->type)) {
                        r = write_contents(a, dir_fd, e, error);
                        if (r < 0)
                                return r;
                }
        }
        if (sym_archive_write_close(a) != ARCHIVE_OK)
                return error_setf(error, -EIO, "cannot finish the zip: %s",
                                  strempty(sym_archive_error_string(a)));
        return 0;
}

int skill_package(int dir_fd, const char *name, int out_fd, char **error) {
        int r;

        if (isempty(name) || strchr(name, '/'))
                return error_setf(error, -EINVAL, "%s: not a valid folder name", strempty(name));
        r = loader_check_path(name, NULL, error);
        if (r < 0)
                return r;
        /* The default limits: a package that would not load is no use. */
        return package_tree(dir_fd, name, NULL, TREE_WALK_SKIP_EXCLUDED, out_fd, error);
}

int loader_package_folder(int dir_fd, const LoaderLimits *limits, int out_fd, char **error) {
        /* Data, not a skill: nothing is left out, and a hard link would be a way to hand over a
         * file twice under the caps, so it is refused like the other kinds. */
        return package_tree(dir_fd, NULL, limits, TREE_WALK_REFUSE_HARDLINKS, out_fd, error);
}
