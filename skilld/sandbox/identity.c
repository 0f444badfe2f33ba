/* Throwaway identities. A run as root gets a uid (and the gid of the same number) that is neither
 * root nor the caller nor any account, so it owns nothing on the host and no two concurrent runs
 * can signal or read each other. The range sits above the ones systemd hands out (dynamic users
 * below 65536, container ranges from 524288 up to 0x6FFFFFFF) and below 2^31.
 *
 * A uid is taken by an open file description lock on its byte of one lock file: the lock lives
 * exactly as long as the fd, so a crashed run frees its uid by dying and concurrent embedded runs
 * (each its own process) never share one. The engine locks one before the clone and asks the
 * user database after the init's release, which only the uid change waits for
 * (sandbox_identity_lock(), sandbox_identity_known()): the database's first lookup in a process
 * loads its modules. The daemon brings its own allocator. */
#include <pwd.h>
#include <sys/stat.h>

#include "error.h"
#include "fileio.h"
#include "sandbox-internal.h"

bool sandbox_identity_known(uid_t uid) {
        struct passwd pw, *found = NULL;
        char buf[1024];

        /* A uid the system's user database names belongs to someone; never borrow it. ERANGE and
         * lookup errors count as known, to stay on the safe side. */
        return getpwuid_r(uid, &pw, buf, sizeof(buf), &found) != 0 || found;
}

static int allocate(const char *lock_path, bool check, uid_t *ret_uid, int *ret_lock_fd, char **error) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint32_t start;
        const char *slash;
        int r;

        slash = strrchr(lock_path, '/');
        if (slash && slash != lock_path) {
                dir = strndup(lock_path, slash - lock_path);
                if (!dir)
                        return -ENOMEM;
                r = mkdir_p_at(AT_FDCWD, dir, 0755);
                if (r < 0)
                        return error_setf(error, r, "Failed to create %s: %s", dir, strerror(-r));
        }
        fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return error_setf(error, -errno, "Failed to open the uid lock file %s: %m", lock_path);

        /* Start somewhere random: concurrent runs then rarely contend for the same byte. */
        if (getentropy(&start, sizeof(start)) < 0)
                return error_setf(error, -errno, "Failed to get random bytes: %m");

        for (uint32_t i = 0; i < SANDBOX_UID_COUNT; i++) {
                uint32_t slot = (start + i) % SANDBOX_UID_COUNT;
                uid_t uid = SANDBOX_UID_BASE + slot;
                struct flock fl = {
                        .l_type = F_WRLCK,
                        .l_whence = SEEK_SET,
                        .l_start = slot,
                        .l_len = 1,
                };

                if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
                        if (errno == EAGAIN || errno == EACCES)
                                continue;
                        return error_setf(error, -errno, "Failed to lock %s: %m", lock_path);
                }
                if (check && sandbox_identity_known(uid)) {
                        fl.l_type = F_UNLCK;
                        (void) fcntl(fd, F_OFD_SETLK, &fl);
                        continue;
                }
                *ret_uid = uid;
                *ret_lock_fd = TAKE_FD(fd);
                return 0;
        }
        return error_setf(error, -EBUSY, "Every sandbox uid (%u-%u) is in use", SANDBOX_UID_BASE,
                          SANDBOX_UID_BASE + SANDBOX_UID_COUNT - 1);
}

int sandbox_identity_allocate(const char *lock_path, uid_t *ret_uid, int *ret_lock_fd, char **error) {
        return allocate(lock_path, true, ret_uid, ret_lock_fd, error);
}

int sandbox_identity_lock(const char *lock_path, uid_t *ret_uid, int *ret_lock_fd, char **error) {
        return allocate(lock_path, false, ret_uid, ret_lock_fd, error);
}
