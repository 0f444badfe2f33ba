/* Run uids. Every run executes under a uid of its own, taken from the range the admin policy sets,
 * so that two runs can neither signal nor read each other, and a run owns nothing the next run of
 * the same uid could find.
 *
 * The rule: a uid of the range is handed out only when
 *   1. nobody holds its lock: an open file description lock (F_OFD_SETLK) on byte (uid - first)
 *      of the lock file (RUNTIME/uids.lock). The service holds it from allocation until the run's
 *      worker is reaped; another instance of the service (a test instance on the same host)
 *      honours the same locks;
 *   2. no process on the host has it as its real, effective, saved or file system uid. Locks die
 *      with their holder, processes of a run whose service was killed may still be going down:
 *      /proc is the authority on what is left of a run;
 *   3. the user database does not name it (it would belong to someone). A helper process asks
 *      it, so that the NSS modules of the lookup are never mapped into the service.
 * Files cannot hold a uid: a run writes only to its private tmpfs mounts (gone with its mount
 * namespace), its /out is copied out by root into root-owned files of the store, SysV IPC and
 * POSIX message queues live in its IPC namespace, and its seccomp filter keeps it away from
 * the kernel keyrings. So "no process" means "nothing of the previous run".
 *
 * Among the free uids the one after the last handed out is taken, so a uid comes round again only
 * after the rest of the range was used. Nothing here knows about D-Bus. */
#pragma once

#include <sys/types.h>

#include "util.h"

typedef struct UidAllocator UidAllocator;

int uid_allocator_new(const char *lock_path, uid_t first, uint32_t count, UidAllocator **ret);
UidAllocator *uid_allocator_free(UidAllocator *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(UidAllocator *, uid_allocator_free);

/* Takes a free uid. The uid stays reserved until *ret_lock_fd is closed. -EBUSY (with a message)
 * when every uid of the range is in use. */
int uid_allocator_take(UidAllocator *a, uid_t *ret_uid, int *ret_lock_fd, char **error);

/* Takes up to max free uids (at least one) after one scan of /proc, in the order single takes
 * would give them: ret_uids[i] stays reserved until ret_lock_fds[i] is closed, each on its own.
 * -EBUSY (with a message) when none is free. */
int uid_allocator_take_many(UidAllocator *a, size_t max, uid_t *ret_uids, int *ret_lock_fds, size_t *ret_n,
                            char **error);

/* Ends the helper process that asks the user database for rule 3, if one runs: for the service
 * to call once idle. The next uid_allocator_take() starts another. */
void uid_allocator_stop_lookups(UidAllocator *a);

/* The uids in [first, first + count) that some process of the host has (real, effective, saved
 * or file system uid), sorted, without duplicates. Each process's uids come from its pidfd
 * (PIDFD_GET_INFO, Linux 6.13) where the kernel can tell them so, else from /proc/PID/status,
 * whose formatting is most of the scan's cost. */
int uid_collect_in_use(uid_t first, uint32_t count, uid_t **ret, size_t *ret_n);

/* The real, effective, saved and file system uids of process pid, as uid_collect_in_use() reads
 * them; status_only reads /proc/PID/status even where a pidfd could tell (for tests comparing the
 * two). -ESRCH once it is gone. */
int uid_of_process(pid_t pid, bool status_only, uid_t ret[static 4]);
