/* See fileio.h. */
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "fileio.h"
#include "thread-util.h"

ssize_t loop_read(int fd, void *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(fd, (char *) buf + done, n - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                done += k;
        }
        return (ssize_t) done;
}

int loop_write(int fd, const void *buf, size_t n) {
        const char *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= k;
        }
        return 0;
}

/* With own_nonblock, fd is read_full_file_at()'s, still O_NONBLOCK from its open: see there. */
static int read_full_fd_internal(int fd, size_t max, bool own_nonblock, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        for (;;) {
                ssize_t k;

                if (size + 1 >= alloc) {
                        size_t na = alloc == 0 ? 4096 : alloc * 2;
                        char *nb;

                        if (na > max + 2)
                                na = max + 2;
                        if (na <= size + 1)
                                return -EFBIG;
                        nb = realloc(buf, na);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = na;
                }
                k = read(fd, buf + size, alloc - size - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN && own_nonblock) {
                                int fl = fcntl(fd, F_GETFL);

                                if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                                        return -errno;
                                own_nonblock = false;
                                continue;
                        }
                        return -errno;
                }
                if (k == 0)
                        break;
                size += k;
                if (size > max)
                        return -EFBIG;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        return read_full_fd_internal(fd, max, false, ret, ret_size);
}

int open_regular_at(int dir_fd, const char *path, int flags) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int fl;

        /* O_NONBLOCK: opening a FIFO for reading waits for a writer, forever if none comes. */
        fd = openat(dir_fd, path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (!(flags & O_NONBLOCK)) {
                fl = fcntl(fd, F_GETFL);
                if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                        return -errno;
        }
        return TAKE_FD(fd);
}

const char *open_regular_strerror(int r) {
        return r == -EBADFD ? "not a regular file (a FIFO, socket or device)" : strerror(-r);
}

int read_full_file_at(int dir_fd, const char *path, size_t max, bool nofollow, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        /* Left O_NONBLOCK (the open's guard against a FIFO): the fd is a regular file's, read to
         * its end and closed here, and Linux ignores the flag for regular files, /proc, sysfs and
         * cgroupfs alike. Clearing it took two fcntl() calls for every file a run reads (its
         * cgroups' figures, /proc/self/cgroup, the binding of its environment). Should a file
         * system answer EAGAIN after all (a FUSE server may), the flag is cleared then and the
         * read goes on. */
        fd = open_regular_at(dir_fd, path, O_RDONLY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
        if (fd < 0)
                return fd;
        return read_full_fd_internal(fd, max, true, ret, ret_size);
}

mode_t umask_get(void) {
        _cleanup_free_ char *status = NULL;
        mode_t m;

        /* "Umask:\t0022" since Linux 4.7; elsewhere set it and put it back. */
        if (read_full_file_at(AT_FDCWD, "/proc/self/status", 64 << 10, false, &status, NULL) >= 0)
                for (char *line = status; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                        const char *v = startswith(line, "Umask:");
                        unsigned long u;
                        char *end;

                        if (!v)
                                continue;
                        errno = 0;
                        u = strtoul(v, &end, 8);
                        if (errno == 0 && end != v && (*end == '\n' || *end == '\0'))
                                return (mode_t) u & 0777;
                }
        m = umask(0022);
        (void) umask(m);
        return m;
}

int atomic_file_write_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode,
                         AtomicFile *ret) {
        _cleanup_free_ char *tmp = NULL, *target = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *slash;
        int r;

        slash = strrchr(path, '/');
        tmp = slash ? strdup_printf("%.*s/.#%s.XXXXXX", (int) (slash - path), path, slash + 1)
                    : strdup_printf(".#%s.XXXXXX", path);
        target = strdup(path);
        if (!tmp || !target)
                return -ENOMEM;

        /* mkostemp works on cwd-relative names only; build the name by hand and use O_EXCL. */
        for (unsigned attempt = 0;; attempt++) {
                char *x = tmp + strlen(tmp) - 6;
                uint64_t rnd;

                if (getentropy(&rnd, sizeof(rnd)) < 0)
                        return -errno;
                for (int i = 0; i < 6; i++, rnd >>= 6)
                        x[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"[rnd & 63];
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
                if (fd >= 0)
                        break;
                if (errno != EEXIST || attempt > 100)
                        return -errno;
        }

        /* No fchmod(): the umask open() applied is the user's say over the file's mode. */
        r = loop_write(fd, data, size);
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        /* Start the writeback now: the blocks of several files written in a row are then
         * allocated in one journal transaction, and the fsync()s that follow share its commit
         * instead of committing one each. Only a hint; the fsync() is what counts. */
        if (size > 0)
                (void) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        *ret = (AtomicFile) {
                .dir_fd = dir_fd,
                .fd = TAKE_FD(fd),
                .tmp = TAKE_PTR(tmp),
                .path = TAKE_PTR(target),
        };
        return 0;
}

int atomic_file_sync(AtomicFile *f) {
        if (fsync(f->fd) < 0)
                return -errno;
        return 0;
}

int atomic_file_commit(AtomicFile *f) {
        if (renameat(f->dir_fd, f->tmp, f->dir_fd, f->path) < 0)
                return -errno;
        free(f->tmp);
        f->tmp = NULL;
        return 0;
}

int atomic_file_commit_after(AtomicFile *f, const int *fds, size_t n_fds, int *ret_results) {
        int all[8], k[8], r = 0;

        if (n_fds + 2 > ELEMENTSOF(all))
                return -E2BIG;
        for (size_t i = 0; i < n_fds; i++)
                all[i] = fds[i];
        all[n_fds] = f->fd;
        all[n_fds + 1] = f->dir_fd;
        (void) fsync_many(all, n_fds + 2, k);
        for (size_t i = 0; i < n_fds + 2; i++)
                if (k[i] < 0 && r == 0)
                        r = k[i];
        for (size_t i = 0; ret_results && i < n_fds; i++)
                ret_results[i] = k[i];
        if (r < 0)
                return r;
        r = atomic_file_commit(f);
        if (r < 0)
                return r;
        return fsync(f->dir_fd) < 0 ? -errno : 0;
}

void atomic_file_done(AtomicFile *f) {
        if (f->tmp)
                (void) unlinkat(f->dir_fd, f->tmp, 0);
        free(f->tmp);
        free(f->path);
        f->tmp = f->path = NULL;
        f->fd = safe_close(f->fd);
}

int fsync_parent_at(int dir_fd, const char *path) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -EBADF;
        const char *slash = strrchr(path, '/');

        /* Opened again: dir_fd may be O_PATH, which fsync() refuses. */
        dir = slash ? strndup(path, slash - path) : strdup(".");
        if (!dir)
                return -ENOMEM;
        dfd = openat(dir_fd, isempty(dir) ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        return fsync(dfd) < 0 ? -errno : 0;
}

/* One fsync() of fsync_many()'s. */
typedef struct SyncJob {
        int fd;
        int result;                     /* 0 or a negative errno */
} SyncJob;

static void *fsync_thread(void *arg) {
        SyncJob *j = arg;

        j->result = fsync(j->fd) < 0 ? -errno : 0;
        return NULL;
}

bool fd_on_memory_fs(int fd) {
        struct statfs sfs;

        return fstatfs(fd, &sfs) >= 0 &&
               ((unsigned long) sfs.f_type == TMPFS_MAGIC || (unsigned long) sfs.f_type == RAMFS_MAGIC);
}

int fsync_many(const int *fds, size_t n, int *ret_results) {
        pthread_t threads[8];
        SyncJob jobs[8];
        bool started[8] = {};
        int r = 0;

        /* Linux reports a writeback error to one fsync() only: the caller gets each fd's own. */
        if (n > ELEMENTSOF(threads))
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                jobs[i] = (SyncJob) { .fd = fds[i] };
                /* The last one in the caller. */
                if (fds[i] < 0 || i + 1 == n || fd_on_memory_fs(fds[i]))
                        continue;
                started[i] = thread_start_small(&threads[i], fsync_thread, &jobs[i], NULL) >= 0;
        }
        /* Those left to the caller (EAGAIN from pthread_create(): out of tasks; a tmpfs) while the
         * threads wait for theirs. */
        for (size_t i = 0; i < n; i++)
                if (!started[i])
                        jobs[i].result = fds[i] >= 0 && fsync(fds[i]) < 0 ? -errno : 0;
        for (size_t i = 0; i < n; i++) {
                if (started[i])
                        (void) pthread_join(threads[i], NULL);
                if (jobs[i].result < 0 && r == 0)
                        r = jobs[i].result;
                if (ret_results)
                        ret_results[i] = jobs[i].result;
        }
        return r;
}

int write_file_atomic_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode) {
        _cleanup_(atomic_file_done) AtomicFile f = ATOMIC_FILE_NULL;
        int r;

        r = atomic_file_write_at(dir_fd, path, data, size, mode, &f);
        if (r < 0)
                return r;
        r = atomic_file_sync(&f);
        if (r >= 0)
                r = atomic_file_commit(&f);
        if (r < 0)
                return r;
        /* The rename itself made durable; failing that, the caller hears it (see fileio.h). */
        return fsync_parent_at(dir_fd, path);
}

/* The directory path in one call when it exists: openat2() with RESOLVE_NO_SYMLINKS succeeds
 * exactly where the walk below would create nothing and open every component with O_NOFOLLOW. */
static int open_dir_no_symlinks(int dir_fd, const char *path) {
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS,
        };
        int fd;

        fd = (int) syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

int mkdir_p_open_at(int dir_fd, const char *path, mode_t mode, int *ret_fd) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int fd = -EBADF;
        char *p, *save = NULL;
        int cur = dir_fd;

        /* Every run's output and runtime directories exist already: one call instead of a
         * mkdirat() and an openat() per component. Any failure (missing, a symlink, no openat2()
         * before Linux 5.6 or behind a seccomp filter) takes the walk, which creates what is
         * missing and fails as it always did. */
        if (!isempty(path)) {
                fd = open_dir_no_symlinks(dir_fd, path);
                if (fd >= 0) {
                        if (ret_fd)
                                *ret_fd = TAKE_FD(fd);
                        return 0;
                }
        }

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        /* strtok_r() drops the leading "/": walk an absolute path from the root, not from dir_fd. */
        if (path[0] == '/') {
                fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                cur = fd;
        }
        for (p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
                int nfd;

                if (mkdirat(cur, p, mode) < 0 && errno != EEXIST)
                        return -errno;
                nfd = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0)
                        return -errno;
                safe_close(fd);
                fd = nfd;
                cur = fd;
        }
        if (!ret_fd)
                return 0;
        if (fd < 0) {
                /* No component at all: dir_fd itself. */
                fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int mkdir_p_at(int dir_fd, const char *path, mode_t mode) {
        return mkdir_p_open_at(dir_fd, path, mode, NULL);
}

static int rm_rf_children(int fd, dev_t dev) {
        DIR *d;
        struct dirent *de;
        int r = 0;

        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT && r == 0)
                                r = -errno;
                        continue;
                }
                if (S_ISDIR(st.st_mode)) {
                        int cfd;

                        if (st.st_dev != dev)
                                continue; /* never cross into a mount */
                        cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (cfd >= 0) {
                                int q = rm_rf_children(cfd, dev);
                                if (q < 0 && r == 0)
                                        r = q;
                        }
                        if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                                r = -errno;
                } else if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT && r == 0)
                        r = -errno;
        }
        closedir(d);
        return r;
}

int rm_rf_at(int dir_fd, const char *path) {
        struct stat st;
        int fd, r;

        if (fstatat(dir_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dir_fd, path, 0) < 0 ? -errno : 0;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = rm_rf_children(fd, st.st_dev);
        if (unlinkat(dir_fd, path, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                r = -errno;
        return r;
}

int mkdtemp_malloc(const char *template_name, char **ret) {
        const char *tmpdir = secure_getenv("TMPDIR");
        _cleanup_free_ char *p = NULL;

        if (isempty(tmpdir) || tmpdir[0] != '/')
                tmpdir = "/tmp";
        p = strdup_printf("%s/%s", tmpdir, template_name ?: "skilld-XXXXXX");
        if (!p)
                return -ENOMEM;
        if (!mkdtemp(p))
                return -errno;
        *ret = TAKE_PTR(p);
        return 0;
}

DIR *opendir_dup(int dir_fd) {
        DIR *d;
        int fd;

        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return NULL;
        d = fdopendir(fd);
        if (!d) {
                int saved = errno;

                safe_close(fd);
                errno = saved;
                return NULL;
        }
        /* A dup shares the offset of dir_fd, which an earlier walk may have moved. */
        rewinddir(d);
        return d;
}

static int dir_usage_walk(int dir_fd, unsigned depth, uint64_t *bytes, uint64_t *entries) {
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (depth > 64)
                return -ELOOP;
        d = opendir_dup(dir_fd);
        if (!d)
                return -errno;
        while (r >= 0 && (errno = 0, de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        break;
                }
                (*entries)++;
                if (S_ISREG(st.st_mode))
                        *bytes += (uint64_t) st.st_size;
                else if (S_ISDIR(st.st_mode)) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        r = sub < 0 ? -errno : dir_usage_walk(sub, depth + 1, bytes, entries);
                        if (sub >= 0)
                                safe_close(sub);
                }
        }
        if (r >= 0 && errno > 0)
                r = -errno;
        closedir(d);
        return r;
}

int dir_usage_at(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_entries) {
        uint64_t bytes = 0, entries = 0;
        int r;

        r = dir_usage_walk(dir_fd, 0, &bytes, &entries);
        if (r < 0)
                return r;
        if (ret_bytes)
                *ret_bytes = bytes;
        if (ret_entries)
                *ret_entries = entries;
        return 0;
}
