/* Reading and writing whole files relative to directory fds, never half-written: writes go to a
 * temporary file that is fsync()ed and renamed over the target. */
#pragma once

#include <dirent.h>

#include <sys/types.h>

#include "util.h"

/* Reads up to max bytes of fd; -EFBIG if it holds more. The buffer is NUL-terminated. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* Opens path under dir_fd (flags: O_RDONLY and the like; O_CLOEXEC and O_NOCTTY are added) if it
 * is a regular file, without blocking on a FIFO on the way: -EISDIR for a directory, -EBADFD for
 * anything else that is not a regular file. For every path a user names. */
int open_regular_at(int dir_fd, const char *path, int flags);
/* What to tell the user about open_regular_at()'s error r. */
const char *open_regular_strerror(int r);

/* read_full_fd() of a regular file under dir_fd (AT_FDCWD for cwd), opened as above; does not
 * follow a symlink in the last component when nofollow is set. */
int read_full_file_at(int dir_fd, const char *path, size_t max, bool nofollow, char **ret, size_t *ret_size);

/* Atomically replaces path under dir_fd with data: temp file, fsync, rename, fsync of the dir.
 * The file gets mode less the process's umask, as open() would give it: a user's umask 077 keeps
 * what skillctl writes for them private, and the daemon's 0600 files can only get narrower. A
 * failure before the rename leaves the old content (and no temp file); a failure of the
 * directory's sync after it is returned too, with the new content in place but not known to
 * survive a crash: a reader sees either version whole, never a mix. */
int write_file_atomic_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode);

/* The same in steps, for files that must become durable together and in an order (logs before
 * the result that names them): write each (its writeback starts at once, so that one journal
 * commit carries them all), sync each, rename them, with fsync_parent_at() after each group of
 * renames that must be durable before the next. atomic_file_done() removes what was not renamed. */
typedef struct AtomicFile {
        int dir_fd;
        int fd;
        char *tmp;                      /* NULL once renamed */
        char *path;
} AtomicFile;
#define ATOMIC_FILE_NULL ((AtomicFile) { .dir_fd = -EBADF, .fd = -EBADF })
int atomic_file_write_at(int dir_fd, const char *path, const void *data, size_t size, mode_t mode,
                         AtomicFile *ret);
int atomic_file_sync(AtomicFile *f);
int atomic_file_commit(AtomicFile *f);
/* Makes f the commit point of what it vouches for: fds (files already under their names; negative
 * ones skipped), f's data and its directory synced side by side (fsync_many()), then f renamed and
 * the directory synced. Two rounds of disk flushes; once f is found after a crash, so are the
 * others, whole. Not renamed when any of them failed; ret_results (or NULL) gets each of fds' own
 * 0 or negative errno. */
int atomic_file_commit_after(AtomicFile *f, const int *fds, size_t n_fds, int *ret_results);
void atomic_file_done(AtomicFile *f);
/* fsync() of the directory that holds path under dir_fd: what makes a rename there durable. */
int fsync_parent_at(int dir_fd, const char *path);
/* fsync() of each of fds (negative ones skipped), all at once: each but the last in a short-lived
 * thread of its own (but those on a tmpfs or ramfs, where fsync() does nothing, in the caller).
 * Returns once all are done, the first error if any; ret_results (or NULL) gets each fd's 0 or
 * negative errno (a retried fsync() may not see an error again). A file system that
 * flushes the disk's cache for every fsync() (ext4 does, even when the journal commit it needs
 * has already been made by another) then waits for the flushes side by side, not one after the
 * other: on the development machine 1.5 ms for three files and their directory instead of 7.4
 * (medians, interleaved). */
int fsync_many(const int *fds, size_t n, int *ret_results);
/* Whether fd is on a file system without a disk behind it (tmpfs, ramfs), where fsync() returns
 * at once: a thread to wait for it would cost more than the call (much more under an emulated
 * CPU). */
bool fd_on_memory_fs(int fd);

/* The process's umask, read without changing it (threads may be creating files meanwhile). */
mode_t umask_get(void);

/* Writes all of buf, retrying on EINTR and short writes. */
int loop_write(int fd, const void *buf, size_t n);
/* Reads until n bytes or EOF; returns bytes read. */
ssize_t loop_read(int fd, void *buf, size_t n);

/* mkdir -p relative to dir_fd, refusing to go through symlinks. */
int mkdir_p_at(int dir_fd, const char *path, mode_t mode);
/* The same, and the directory opened (O_RDONLY, O_DIRECTORY) into *ret_fd. */
int mkdir_p_open_at(int dir_fd, const char *path, mode_t mode, int *ret_fd);

/* rm -rf of everything below and including path under dir_fd, not crossing mounts or links. */
int rm_rf_at(int dir_fd, const char *path);

/* A DIR of the directory dir_fd, from its first entry, leaving dir_fd open (a dup is read:
 * one that shares dir_fd's offset, which is rewound). NULL with errno set on failure. */
DIR *opendir_dup(int dir_fd);

/* What the tree below dir_fd holds, links never followed: the bytes of its regular files and the
 * number of its entries (files, directories and the rest). -ELOOP past 64 levels. */
int dir_usage_at(int dir_fd, uint64_t *ret_bytes, uint64_t *ret_entries);

/* A fresh private directory under $TMPDIR (or /tmp), 0700. */
int mkdtemp_malloc(const char *template_name, char **ret);
