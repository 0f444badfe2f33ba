/* A kept /work (sessions): a directory of the caller's whose work/ becomes the run's /work and
 * receives what the run left there afterwards. Nothing else of a run is kept: /tmp, the home
 * directory, processes and the rest are fresh each time.
 *
 * /work stays a tmpfs of the run, sized to the session's quota, so the quota holds while the run
 * writes (the skill sees ENOSPC, as on a full disk). The init copies work/ into it before the
 * skill starts (folder-input.c's copy: files and directories, handed to the run's throwaway uid),
 * and hands the parent an fd of its /work, which keeps that tmpfs alive after the last process
 * of the run is gone. The parent then copies it back into work.new beside work/, never following
 * what the skill left (symlinks, FIFOs and the like are not kept), and swaps the two atomically,
 * so an interrupted copy leaves the previous state whole. */
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "error.h"
#include "fileio.h"
#include "sandbox-internal.h"

#define WORKSPACE_DIR "work"
#define WORKSPACE_NEW "work.new"

int sandbox_workspace_open(int workspace_fd, int *ret_fd, uint64_t *ret_bytes, uint64_t *ret_entries,
                           char **error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t bytes = 0, entries = 0;
        int r;

        if (mkdirat(workspace_fd, WORKSPACE_DIR, 0700) < 0 && errno != EEXIST)
                return error_setf(error, -errno, "Failed to create the kept /work: %m");
        /* A copy-back interrupted before its swap. */
        (void) rm_rf_at(workspace_fd, WORKSPACE_NEW);
        fd = openat(workspace_fd, WORKSPACE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "Failed to open the kept /work: %m");
        r = dir_usage_at(fd, &bytes, &entries);
        if (r < 0)
                return error_setf(error, r, "Failed to read the kept /work: %s", strerror(-r));
        *ret_fd = TAKE_FD(fd);
        *ret_bytes = bytes;
        *ret_entries = entries;
        return 0;
}

int sandbox_workspace_save(int workspace_fd, int run_work_fd, char **error) {
        _cleanup_close_ int new_fd = -EBADF;
        uint64_t budget = UINT64_MAX;
        int r;

        (void) rm_rf_at(workspace_fd, WORKSPACE_NEW);
        if (mkdirat(workspace_fd, WORKSPACE_NEW, 0700) < 0)
                return error_setf(error, -errno, "Failed to keep /work: %m");
        new_fd = openat(workspace_fd, WORKSPACE_NEW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (new_fd < 0)
                return error_setf(error, -errno, "Failed to keep /work: %m");
        /* SECURITY: what the skill left is copied as files and directories only, owned by us; no
         * link of its making is followed or kept. */
        r = sandbox_folder_input_copy(run_work_fd, new_fd, geteuid(), getegid(), &budget, 1);
        if (r < 0) {
                (void) rm_rf_at(workspace_fd, WORKSPACE_NEW);
                return error_setf(error, r, "Failed to keep /work: %s", strerror(-r));
        }
        if (syscall(SYS_renameat2, workspace_fd, WORKSPACE_NEW, workspace_fd, WORKSPACE_DIR, RENAME_EXCHANGE) < 0) {
                r = -errno;
                (void) rm_rf_at(workspace_fd, WORKSPACE_NEW);
                return error_setf(error, r, "Failed to keep /work: %s", strerror(-r));
        }
        (void) rm_rf_at(workspace_fd, WORKSPACE_NEW);
        return 0;
}
