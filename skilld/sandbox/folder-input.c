/* Folder inputs (--file NAME=DIR): a folder tree copied into /work/NAME. A folder reaches the
 * engine as a zip of its contents (skillctl packs it with loader_package_folder(), a service
 * client hands it over the bus), so one path serves both, and it is read with the loader's
 * hardened rules: regular files and directories only, no names that escape, caps on entries,
 * bytes and depth.
 *
 * The parent unpacks it into a private directory (0700, under $TMPDIR or /tmp) before the
 * sandbox exists; the sandbox's init copies that tree into its /work tmpfs, handing every file to
 * the sandbox user, and the parent removes the private directory when the run ends. The init
 * never parses an archive, and the tree it copies holds nothing the loader did not make. */
#include <dirent.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "loader.h"
#include "sandbox-internal.h"

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* Entries (files and directories) of one folder input; its bytes are capped by the caller. */
#define FOLDER_INPUT_ENTRIES_MAX 10000U
#define FOLDER_INPUT_DEPTH_MAX 32U

int sandbox_folder_input_unpack(int zip_fd, uint64_t max_bytes, FolderInput *ret, char **error) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        LoaderLimits limits = LOADER_LIMITS_DEFAULT;
        uint64_t bytes, entries;
        int r;

        r = mkdtemp_malloc("skilld-folder-XXXXXX", &dir);
        if (r < 0)
                return error_setf(error, r, "cannot create a private directory: %s", strerror(-r));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0) {
                r = -errno;
                (void) rm_rf_at(AT_FDCWD, dir);
                return error_setf(error, r, "cannot open %s: %s", dir, strerror(-r));
        }

        /* The bytes are capped by what the run's /work may take; a high compression ratio is
         * then no danger of its own, and data (a file of zeros) compresses well. */
        limits.max_entries = FOLDER_INPUT_ENTRIES_MAX;
        limits.max_total_bytes = limits.max_file_bytes = max_bytes;
        limits.max_ratio = UINT64_MAX;
        limits.max_depth = FOLDER_INPUT_DEPTH_MAX;
        r = loader_extract_folder_zip(zip_fd, dir_fd, &limits, &bytes, &entries, error);
        if (r < 0) {
                dir_fd = safe_close(dir_fd);
                (void) rm_rf_at(AT_FDCWD, dir);
                return r;
        }

        *ret = (FolderInput) {
                .dir = TAKE_PTR(dir),
                .dir_fd = TAKE_FD(dir_fd),
                .bytes = bytes,
                .entries = entries,
        };
        return 0;
}

void folder_input_done(FolderInput *f) {
        f->dir_fd = safe_close(f->dir_fd);
        if (f->dir) {
                (void) rm_rf_at(AT_FDCWD, f->dir);
                free(f->dir);
                f->dir = NULL;
        }
}

static int copy_file(int src_dir_fd, const char *name, int dst_dir_fd, mode_t mode, uid_t uid, gid_t gid,
                     uint64_t *budget) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        char buf[64 * 1024];

        in = openat(src_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (in < 0)
                return -errno;
        out = openat(dst_dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return -errno;
        for (;;) {
                ssize_t n = read(in, buf, sizeof(buf));
                int r;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                if ((uint64_t) n > *budget)
                        return -EFBIG;
                *budget -= n;
                r = loop_write(out, buf, n);
                if (r < 0)
                        return r;
        }
        if (fchown(out, uid, gid) < 0 || fchmod(out, mode) < 0)
                return -errno;
        return 0;
}

int sandbox_folder_input_copy(int src_dir_fd, int dst_dir_fd, uid_t uid, gid_t gid, uint64_t *budget,
                              unsigned depth) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        if (depth > FOLDER_INPUT_DEPTH_MAX)
                return -ELOOP;
        d = opendir_dup(src_dir_fd);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                /* SECURITY: the loader made this tree of files and directories only; anything else
                 * is skipped rather than followed or recreated. */
                if (S_ISREG(st.st_mode)) {
                        r = copy_file(dirfd(d), de->d_name, dst_dir_fd, st.st_mode & 0111 ? 0755 : 0644, uid,
                                      gid, budget);
                        if (r < 0)
                                return r;
                } else if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int src = -EBADF, dst = -EBADF;

                        if (mkdirat(dst_dir_fd, de->d_name, 0700) < 0)
                                return -errno;
                        dst = openat(dst_dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        src = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (dst < 0 || src < 0)
                                return -errno;
                        r = sandbox_folder_input_copy(src, dst, uid, gid, budget, depth + 1);
                        if (r < 0)
                                return r;
                        if (fchown(dst, uid, gid) < 0 || fchmod(dst, 0755) < 0)
                                return -errno;
                }
        }
        return errno > 0 ? -errno : 0;
}
