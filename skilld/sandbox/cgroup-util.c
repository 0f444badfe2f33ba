/* Reading and writing cgroup attribute files (v1 and v2 share the format), tearing a run's cgroup
 * down, and sweeping the cgroups of runs whose engine was killed before it could. */
#include <dirent.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "fileio.h"
#include "parse-util.h"
#include "sandbox-internal.h"

int cg_write(int dir_fd, const char *attr, const char *value) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = openat(dir_fd, attr, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        n = write(fd, value, strlen(value));
        if (n < 0)
                return -errno;
        return n == (ssize_t) strlen(value) ? 0 : -EIO;
}

int cg_write_path(const char *dir, const char *attr, const char *value) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return cg_write(fd, attr, value);
}

int cg_read(int dir_fd, const char *attr, char **ret) {
        return read_full_file_at(dir_fd, attr, 64 * 1024, true, ret, NULL);
}

/* A figure's file (a line or a few "key value" lines) into buf: one read, as these files are
 * seq_files, which give all they hold at once when it fits. Three calls where read_full_file_at()
 * makes five (its fstat() refuses a FIFO: O_NONBLOCK makes reading one fail here instead); the
 * run's end reads six of them. */
static int cg_read_small(int dir_fd, const char *attr, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = openat(dir_fd, attr, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        do
                n = read(fd, buf, size - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n >= size - 1)
                return -EFBIG;
        buf[n] = '\0';
        return 0;
}

/* Finds "key value" in a flat-keyed file (memory.events, cpu.stat). */
int cg_read_key(int dir_fd, const char *attr, const char *key, uint64_t *ret) {
        char text[4096];
        size_t kl = strlen(key);
        int r;

        r = cg_read_small(dir_fd, attr, text, sizeof(text));
        if (r < 0)
                return r;
        for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (strncmp(line, key, kl) == 0 && line[kl] == ' ')
                        return safe_atou64(line + kl + 1, ret);
        }
        return -ENOENT;
}

int cg_read_u64(int dir_fd, const char *attr, uint64_t *ret) {
        char text[64];
        int r;

        r = cg_read_small(dir_fd, attr, text, sizeof(text));
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = '\0';
        return safe_atou64(text, ret);
}

void cg_kill_listed(int dir_fd) {
        /* New forks cannot outrun this for long: every process of the run is also in a dying PID
         * namespace. */
        for (unsigned attempt = 0; attempt < 100; attempt++) {
                _cleanup_free_ char *procs = NULL;
                bool any = false;

                if (cg_read(dir_fd, "cgroup.procs", &procs) < 0)
                        return;
                for (char *line = procs, *next; line && *line; line = next) {
                        unsigned pid;

                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        if (safe_atou(line, &pid) >= 0 && pid > 0) {
                                (void) kill((pid_t) pid, SIGKILL);
                                any = true;
                        }
                }
                if (!any)
                        return;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
}

void cg_remove(const char *path) {
        /* The last processes may take a moment to leave after dying; rmdir fails with EBUSY until
         * they have. */
        for (unsigned attempt = 0; attempt < 200; attempt++) {
                if (rmdir(path) >= 0 || errno != EBUSY)
                        return;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
}

/* Whether the comma-separated list holds word. */
static bool list_has(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

int cg_own_path(const char *controller, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, false, &text, NULL);
        if (r < 0)
                return r;
        return cg_own_path_in(text, controller, ret);
}

int cg_own_path_in(const char *text, const char *controller, char **ret) {
        /* "0::/path" for cgroup2; "N:ctrl1,ctrl2:/path" for each v1 hierarchy. */
        for (const char *line = text; line && *line;) {
                const char *end = line + strcspn(line, "\n");
                const char *controllers = memchr(line, ':', end - line);
                const char *path = controllers ? memchr(controllers + 1, ':', end - controllers - 1) : NULL;

                if (path) {
                        _cleanup_free_ char *list = strndup(controllers + 1, path - controllers - 1);

                        if (!list)
                                return -ENOMEM;
                        if (controller ? list_has(list, controller)
                                       : (controllers - line == 1 && line[0] == '0' && isempty(list))) {
                                *ret = strndup(path + 1, end - path - 1);
                                return *ret ? 0 : -ENOMEM;
                        }
                }
                line = *end ? end + 1 : NULL;
        }
        return -ENOENT;
}

int cg_create_locked(const char *path, int *ret_fd) {
        for (unsigned attempt = 0; attempt < 8; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat st;

                if (mkdir(path, 0755) < 0)
                        return -errno;
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT)
                        continue;       /* swept in between: make it again */
                if (fd < 0)
                        return -errno;
                /* Blocking: the only other holder of a fresh run's lock is a sweeper looking at it
                 * for a moment (it found it unlocked between mkdir() and here). */
                if (flock(fd, LOCK_EX) < 0)
                        return -errno;
                /* That sweeper may have removed it: then its attribute files are gone, and we
                 * make it again. */
                if (fstatat(fd, "cgroup.procs", &st, 0) >= 0) {
                        *ret_fd = TAKE_FD(fd);
                        return 0;
                }
        }
        return -EBUSY;
}

void cg_sweep_dead(const char *parent, const char *prefix) {
        _cleanup_close_ int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;
        struct dirent *de;

        if (dfd < 0)
                return;
        d = fdopendir(dfd);
        if (!d)
                return;
        TAKE_FD(dfd);
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ char *procs = NULL;

                if (de->d_type != DT_DIR || !startswith(de->d_name, prefix))
                        continue;
                fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* Held: a live run's. One being made and not locked yet may go too: its maker
                 * finds it gone and makes it again (cg_create_locked()). */
                if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
                        continue;
                /* Only empty ones: a run of an engine that predates the lock has processes in its
                 * cgroup while it lives. A process still on its way out: the next sweep. */
                if (cg_read(fd, "cgroup.procs", &procs) < 0 || !isempty(procs))
                        continue;
                (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
        }
        closedir(d);
}
