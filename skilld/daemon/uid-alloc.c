/* See uid-alloc.h. */
#include <dirent.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "error.h"
#include "fileio.h"
#include "parse-util.h"
#include "uid-alloc.h"

struct UidAllocator {
        char *lock_path;
        uid_t first;
        uint32_t count;
        uint32_t cursor;                /* the slot tried first next time */
        pid_t lookup_pid;               /* the helper asking the user database (rule 3), or 0 */
        int lookup_fd;                  /* our end of its socket */
};

int uid_allocator_new(const char *lock_path, uid_t first, uint32_t count, UidAllocator **ret) {
        _cleanup_(uid_allocator_freep) UidAllocator *a = NULL;
        uint32_t start = 0;

        if (count == 0 || first == 0 || (uint64_t) first + count > (uint64_t) UINT32_MAX)
                return -EINVAL;
        a = calloc(1, sizeof(UidAllocator));
        if (!a)
                return -ENOMEM;
        a->lock_path = strdup(lock_path);
        if (!a->lock_path)
                return -ENOMEM;
        a->first = first;
        a->count = count;
        a->lookup_fd = -EBADF;
        /* A random start: a restarted service does not hand out the uids of the runs its
         * predecessor just had, which the /proc check would otherwise have to catch. */
        if (getrandom(&start, sizeof(start), GRND_NONBLOCK) == sizeof(start))
                a->cursor = start % count;
        *ret = TAKE_PTR(a);
        return 0;
}

UidAllocator *uid_allocator_free(UidAllocator *a) {
        if (!a)
                return NULL;
        uid_allocator_stop_lookups(a);
        free(a->lock_path);
        free(a);
        return NULL;
}

static int cmp_uid(const void *x, const void *y) {
        uid_t a = *(const uid_t *) x, b = *(const uid_t *) y;

        return a < b ? -1 : a > b;
}

/* The four uids of the "Uid:" line of /proc/PID/status. */
static int status_uids(const char *status, uid_t ret[static 4]) {
        const char *line;

        line = startswith(status, "Uid:") ? status : strstr(status, "\nUid:");
        if (!line)
                return -EBADMSG;
        line = strchr(line + 1, ':') + 1;
        for (unsigned i = 0; i < 4; i++) {
                char word[16];
                size_t n;
                unsigned v;

                line += strspn(line, " \t");
                n = strcspn(line, " \t\n");
                if (n == 0 || n >= sizeof(word))
                        return -EBADMSG;
                memcpy(word, line, n);
                word[n] = '\0';
                if (safe_atou(word, &v) < 0)
                        return -EBADMSG;
                ret[i] = (uid_t) v;
                line += n;
        }
        return 0;
}

/* PIDFD_GET_INFO (Linux 6.13): a process's credentials in one ioctl, without the kernel formatting
 * its whole status file. Debian 12's headers predate it; this is version 0 of the structure, whose
 * size the request number carries. */
#ifndef PIDFD_GET_INFO
struct pidfd_info {
        uint64_t mask;
        uint64_t cgroupid;
        uint32_t pid, tgid, ppid;
        uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
        int32_t exit_code;
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#define PIDFD_INFO_CREDS (1ULL << 1)
#endif

/* Whether this kernel lacks PIDFD_GET_INFO: asked once, by the first scan. */
static bool pidfd_info_missing = false;

/* The four uids of a process from its pidfd: 0, or -ENOTTY where the kernel cannot tell them this
 * way, -ESRCH once it is gone, as the status file would say. */
static int pidfd_uids(pid_t pid, uid_t ret[static 4]) {
        struct pidfd_info info = { .mask = PIDFD_INFO_CREDS };
        _cleanup_close_ int fd = -EBADF;

        if (pidfd_info_missing)
                return -ENOTTY;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0)
                return errno == ESRCH ? -ESRCH : -ENOTTY;
        if (ioctl(fd, PIDFD_GET_INFO, &info) < 0) {
                if (errno == ENOTTY || errno == EINVAL)
                        pidfd_info_missing = true;
                return errno == ESRCH ? -ESRCH : -ENOTTY;
        }
        if (!(info.mask & PIDFD_INFO_CREDS))
                return -ENOTTY;
        ret[0] = info.ruid;
        ret[1] = info.euid;
        ret[2] = info.suid;
        ret[3] = info.fsuid;
        return 0;
}

/* The same from /proc/PID/status. The Uid: line is its ninth, well inside the first read: one
 * read() of a page, none of a generic reader's checks (the file is the kernel's). */
static int status_file_uids(int proc_fd, pid_t pid, uid_t ret[static 4]) {
        char path[32], buf[4096];
        _cleanup_close_ int fd = -EBADF;
        ssize_t k;
        int e;

        (void) snprintf(path, sizeof(path), "%d/status", (int) pid);
        fd = openat(proc_fd, path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                e = errno;
                return e == ENOENT ? -ESRCH : -(e > 0 ? e : EIO);
        }
        do
                k = read(fd, buf, sizeof(buf) - 1);
        while (k < 0 && errno == EINTR);
        if (k < 0) {
                e = errno;
                return -(e > 0 ? e : EIO);
        }
        buf[k] = '\0';
        return status_uids(buf, ret);
}

static int process_uids(int proc_fd, pid_t pid, bool status_only, uid_t ret[static 4]) {
        int r;

        /* A pidfd answers a process that exited but is not reaped yet with ESRCH on kernels that
         * release its credentials early, where its status file still names its uids: the file
         * decides then. */
        r = status_only ? -ENOTTY : pidfd_uids(pid, ret);
        if (r == -ESRCH || r == -ENOTTY)
                r = status_file_uids(proc_fd, pid, ret);
        return r;
}

int uid_of_process(pid_t pid, bool status_only, uid_t ret[static 4]) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (proc_fd < 0)
                return -errno;
        return process_uids(proc_fd, pid, status_only, ret);
}

int uid_collect_in_use(uid_t first, uint32_t count, uid_t **ret, size_t *ret_n) {
        _cleanup_free_ uid_t *found = NULL;
        size_t n = 0, allocated = 0, k = 0;
        struct dirent *de;
        DIR *d;

        d = opendir("/proc");
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uid_t uids[4] = {};     /* written on success; set for the analyzer's sake */
                unsigned pid;
                int r;

                if (safe_atou(de->d_name, &pid) < 0 || pid == 0 || pid > INT32_MAX)
                        continue;
                /* Gone meanwhile: then it holds nothing any more. */
                r = process_uids(dirfd(d), (pid_t) pid, false, uids);
                if (r < 0)
                        continue;
                for (unsigned i = 0; i < 4; i++) {
                        if (uids[i] < first || uids[i] - first >= count)
                                continue;
                        if (n == allocated) {
                                uid_t *p = reallocarray(found, allocated * 2 + 16, sizeof(uid_t));

                                if (!p) {
                                        closedir(d);
                                        return -ENOMEM;
                                }
                                found = p;
                                allocated = allocated * 2 + 16;
                        }
                        found[n++] = uids[i];
                }
        }
        closedir(d);

        if (n > 0) {
                qsort(found, n, sizeof(uid_t), cmp_uid);
                for (size_t i = 0; i < n; i++)
                        if (k == 0 || found[k - 1] != found[i])
                                found[k++] = found[i];
        }
        *ret = TAKE_PTR(found);
        *ret_n = k;
        return 0;
}

/* Rule 3 is a question to the user database through NSS, and the first lookup loads its modules
 * (nss-systemd, and libm with it) into the process for good: 0.6 MiB of the service's idle RSS
 * for one question a run. So a helper forked on the first question asks them, answering one
 * question a message over a socket pair, and the service ends it once idle
 * (uid_allocator_stop_lookups()): the modules go with it. The helper inherits nothing but its
 * socket, and dies with the service. */
static bool uid_is_named(uid_t uid) {
        struct passwd pw, *found = NULL;
        char buf[1024];

        /* Lookup errors count as named: on the safe side. */
        return getpwuid_r(uid, &pw, buf, sizeof(buf), &found) != 0 || found;
}

_noreturn_ static void lookup_main(int fd) {
        for (;;) {
                uint32_t uid;
                uint8_t named;
                ssize_t n;

                n = recv(fd, &uid, sizeof(uid), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0)
                        _exit(EXIT_SUCCESS);
                if (n != sizeof(uid))
                        _exit(EXIT_FAILURE);
                named = uid_is_named((uid_t) uid);
                if (send(fd, &named, sizeof(named), MSG_NOSIGNAL) != sizeof(named))
                        _exit(EXIT_FAILURE);
        }
}

static int lookup_start(UidAllocator *a) {
        _cleanup_close_pair_ int sv[2] = { -EBADF, -EBADF };
        pid_t parent = getpid(), pid;

        /* SEQPACKET: a question and its answer are one message each, never split. */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                sigset_t none;

                if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                        _exit(EXIT_FAILURE);
                if (close_all_fds_except(&sv[1], 1) < 0)
                        _exit(EXIT_FAILURE);
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                (void) prctl(PR_SET_NAME, (unsigned long) "skilld-users", 0, 0, 0);
                lookup_main(sv[1]);
        }
        a->lookup_pid = pid;
        a->lookup_fd = TAKE_FD(sv[0]);
        return 0;
}

void uid_allocator_stop_lookups(UidAllocator *a) {
        if (!a || a->lookup_pid <= 0)
                return;
        a->lookup_fd = safe_close(a->lookup_fd);
        /* Between questions it only waits for the next: nothing of it is lost. */
        (void) kill(a->lookup_pid, SIGKILL);
        (void) waitpid(a->lookup_pid, NULL, 0);
        a->lookup_pid = 0;
}

/* Asks the helper, started when none runs; a helper that failed is replaced once. */
static int uid_lookup_named(UidAllocator *a, uid_t uid, bool *ret) {
        uint32_t q = (uint32_t) uid;
        int r;

        for (unsigned attempt = 0; attempt < 2; attempt++) {
                uint8_t answer;
                ssize_t n;

                if (a->lookup_pid <= 0) {
                        r = lookup_start(a);
                        if (r < 0)
                                return r;
                }
                do
                        n = send(a->lookup_fd, &q, sizeof(q), MSG_NOSIGNAL);
                while (n < 0 && errno == EINTR);
                if (n == sizeof(q)) {
                        do
                                n = recv(a->lookup_fd, &answer, sizeof(answer), 0);
                        while (n < 0 && errno == EINTR);
                        if (n == sizeof(answer)) {
                                *ret = answer != 0;
                                return 0;
                        }
                }
                uid_allocator_stop_lookups(a);
        }
        return -EPIPE;
}

int uid_allocator_take_many(UidAllocator *a, size_t max, uid_t *ret_uids, int *ret_lock_fds, size_t *ret_n,
                            char **error) {
        _cleanup_free_ uid_t *in_use = NULL;
        size_t n_in_use = 0, n = 0;
        bool named;
        int r;

        if (max == 0)
                return -EINVAL;

        /* One scan of /proc per allocation, not one per candidate nor one per uid taken. A process
         * that takes one of our uids after the scan can only be a run of ours, started after we
         * took its lock: every uid taken here stays as free as the scan found it for as long as
         * its lock is held, whichever run gets it and when. */
        r = uid_collect_in_use(a->first, a->count, &in_use, &n_in_use);
        if (r < 0)
                return error_setf(error, r, "Failed to scan /proc for the uids in use: %s", strerror(-r));

        for (uint32_t i = 0, start = a->cursor; i < a->count && n < max; i++) {
                uint32_t slot = (uint32_t) (((uint64_t) start + i) % a->count);
                uid_t uid = a->first + slot;
                _cleanup_close_ int fd = -EBADF;
                struct flock fl = {
                        .l_type = F_WRLCK,
                        .l_whence = SEEK_SET,
                        .l_start = (off_t) slot,
                        .l_len = 1,
                };

                if (n_in_use > 0 && bsearch(&uid, in_use, n_in_use, sizeof(uid_t), cmp_uid))
                        continue;
                /* A description of its own for each: the lock lives exactly as long as this fd. */
                fd = open(a->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (fd < 0) {
                        r = error_setf(error, -errno, "Failed to open the uid lock file %s: %m", a->lock_path);
                        break;
                }
                if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
                        if (errno == EAGAIN || errno == EACCES)
                                continue;
                        r = error_setf(error, -errno, "Failed to lock %s: %m", a->lock_path);
                        break;
                }
                r = uid_lookup_named(a, uid, &named);
                if (r < 0) {
                        r = error_setf(error, r, "Failed to ask the user database about uid %u: %s",
                                       (unsigned) uid, strerror(-r));
                        break;
                }
                if (named)
                        continue;       /* the lock goes with fd */
                a->cursor = (slot + 1) % a->count;
                ret_uids[n] = uid;
                ret_lock_fds[n] = TAKE_FD(fd);
                n++;
        }
        if (n == 0) {
                if (r < 0)
                        return r;
                return error_setf(error, -EBUSY, "Every run uid (%u-%u) is in use", (unsigned) a->first,
                                  (unsigned) (a->first + a->count - 1));
        }
        /* What was taken before an error is good: the error shows again at the next call. */
        if (r < 0 && error) {
                free(*error);
                *error = NULL;
        }
        *ret_n = n;
        return 0;
}

int uid_allocator_take(UidAllocator *a, uid_t *ret_uid, int *ret_lock_fd, char **error) {
        size_t n;

        return uid_allocator_take_many(a, 1, ret_uid, ret_lock_fd, &n, error);
}
