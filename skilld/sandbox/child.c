/* The child side of a run, from clone() to execve().
 *
 * The engine clones one process into new mount, PID, network, IPC and UTS namespaces (and a user
 * namespace when unprivileged; as root, where the init is born into its cgroup, the network
 * namespace is made beside the init instead, netns.c, and entered with the release, or was made
 * ahead of the run, ahead.c, and is entered first thing). That process
 * becomes PID 1 of the run ("the init"). It:
 *   1. tells the parent it runs (and on which CPU), then builds the part of the root file system
 *      that holds nothing of the run's (/usr, /etc, /dev, /skill, /env) on a fresh tmpfs, while
 *      the parent makes its cgroups or places it where the limits apply (in a user namespace it
 *      first waits for its id maps, and so for the release too);
 *   2. where it places itself (cgroup v1), receives the run's cgroups on the hold socket and
 *      enters them; else, unless it was cloned into its cgroup, waits for the release; at its
 *      first wait for the engine, empties its capability bounding set and resets every signal's
 *      disposition, once for itself and the skill process, which inherits both;
 *   3. enters a new cgroup namespace (after placement, so its root is the run's cgroup), adds
 *      the writable places and the inputs (charged to the run's cgroup), /proc, pivots into the
 *      new root, and hides the caller's command line, which it still carries as a copy of the
 *      caller; an init in place by then (it entered its v1 cgroups, or was cloned into its v2
 *      cgroup) waits for the release only now, to start the skill process (the release carries
 *      the seccomp program, and the network namespace made beside it);
 *   4. waits for the uid's verdict (below), then drops its own privileges (groups, gids, uids,
 *      capabilities, no_new_privs), joins a new session keyring, becomes non-dumpable, sets its
 *      parent-death signal again, and starts the skill process with vfork(): that one inherits
 *      the dropped credentials (it could not drop them itself any more, and need not), checks
 *      them, sets up its stdio, limits and fds, trades the init's session keyring for a new one
 *      of its own, loads seccomp last and execs;
 *   5. stays as a minimal init, as the sandbox user: reaps orphans, forwards signals to the skill
 *      process and, when that one ends, kills whatever is left and reports the status.
 * The uid's verdict: a uid the engine locked without asking the user database first (an embedded
 * run as root) is checked after the release, while step 3 runs. Nothing runs as it before the
 * database said no account has it: the init takes one HOLD_UID right before its uid change, and
 * the skill process is started only after that, as the uid. For a uid the database names none
 * comes; the engine kills the init, and with it the PID namespace, and starts over on another
 * uid. Where the uid was checked before the clone (skilld's worker, a user namespace) no verdict
 * is sent or waited for.
 * A failure at any step is sent on the control socket (errno and text) and the init exits, so
 * the run ends as status "error"; nothing of the skill ever runs half-sandboxed.
 *
 * The init runs in a clone of a single-threaded caller and ends in _exit(). The skill process,
 * from its vfork() to its execve() or _exit(), runs in the init's memory, on the init's stack
 * below sandbox_child_main()'s frame, the init asleep meanwhile (skill_exec() says what it may do
 * there). */
#include <dirent.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <sched.h>

#include "fileio.h"
#include "parse-util.h"
#include "sandbox-internal.h"

/* The tmpfs that becomes the new root is mounted here first, in our private mount namespace; the
 * host never sees it. Everything bound into it comes from fixed system paths or from fds opened
 * earlier, so hiding the host's /tmp under it is harmless. */
#define NEWROOT "/tmp"

/* Signals the init passes on to the skill process instead of acting on them. */
static const int forwarded_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* Nothing sensible is left to do if the parent is gone: the run ends either way. Only the
 * listener's handover checks the answer. */
static int send_message(int fd, const ChildMessage *m, int pass_fd) {
        ssize_t n = send_with_fd(fd, m, sizeof(*m), pass_fd);

        return n < 0 ? (int) n : 0;
}

/* Also called by the skill process in the init's memory (skill_exec()): the text is formatted
 * into its own stack, and strerrordesc_np() is a table's string, where strerror() may take the
 * locale's lock and allocate (a translation, an unknown errno's text). */
_printf_(4, 5)
static void send_error(int fd, ChildMessageType type, int r, const char *fmt, ...) {
        ChildMessage m = { .type = type, .error = abs(r) };
        const char *desc = strerrordesc_np(abs(r));
        va_list ap;
        size_t n;

        va_start(ap, fmt);
        (void) vsnprintf(m.text, sizeof(m.text), fmt, ap);
        va_end(ap);
        n = strlen(m.text);
        if (r != 0 && n + 3 < sizeof(m.text)) {
                if (desc)
                        (void) snprintf(m.text + n, sizeof(m.text) - n, ": %s", desc);
                else
                        (void) snprintf(m.text + n, sizeof(m.text) - n, ": Unknown error %d", abs(r));
        }
        (void) send_message(fd, &m, -EBADF);
}

/* Setup steps return negative errno and fill a message; the caller reports and exits. */
#define STEP_FAIL(msgbuf, r, ...) ({                                    \
        int _r_ = -abs(r); /* before snprintf() can clobber errno */    \
        (void) snprintf((msgbuf), sizeof(msgbuf), __VA_ARGS__);         \
        _r_;                                                            \
})

typedef struct StepError {
        char what[256];
} StepError;

/* The phase marks this process took (RunMark), for a run with timing on; sent to the engine,
 * which merges them with its own. */
static uint64_t marks[_MARK_MAX];

static void mark(const SandboxChild *c, RunMark m) {
        if (c->timing)
                marks[m] = now_usec(CLOCK_MONOTONIC);
}

static void send_marks(const SandboxChild *c) {
        ChildMessage msg = { .type = CHILD_MSG_MARKS };

        _Static_assert(sizeof(marks) <= sizeof(msg.text), "the marks fit a message");
        if (!c->timing)
                return;
        memcpy(msg.text, marks, sizeof(marks));
        (void) send_message(c->ctl_fd, &msg, -EBADF);
}

_noreturn_ static void fail(const SandboxChild *c, int r, const StepError *e) {
        send_error(c->ctl_fd, CHILD_MSG_ERROR, r, "%s", e->what);
        _exit(SANDBOX_EXIT_SETUP);
}

/* A file of the sandbox's own (/etc's, /proc/loadavg's), with exactly its mode: the init builds
 * the root under umask 0 (setup_rootfs_early()), where the caller's would have cut it
 * (skilld.service's is 077, under which the files were 0600 and root's, and the skill could read
 * neither its passwd entry nor hosts nor nsswitch.conf). */
static int write_file(const char *path, const char *contents, mode_t mode) {
        _cleanup_close_ int fd = -EBADF;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        return loop_write(fd, contents, strlen(contents));
}

/* Adds mount attributes (read-only, nosuid, ...) to a mount, recursively when asked. Only adds:
 * in a user namespace the flags the host set are locked, and adding never trips over that. */
static int mount_add_attr(const char *path, uint64_t attr, bool recursive) {
        struct mount_attr ma = { .attr_set = attr };
        struct statvfs sv;
        unsigned long flags = MS_BIND | MS_REMOUNT;

        if (mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &ma, sizeof(ma)) >= 0)
                return 0;
        if (errno != ENOSYS)
                return -errno;

        /* Before Linux 5.12: a bind remount must repeat the flags the mount already has. */
        if (statvfs(path, &sv) < 0)
                return -errno;
        flags |= (sv.f_flag & ST_RDONLY ? MS_RDONLY : 0) | (sv.f_flag & ST_NOSUID ? MS_NOSUID : 0) |
                 (sv.f_flag & ST_NODEV ? MS_NODEV : 0) | (sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) |
                 (sv.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
                 (sv.f_flag & ST_RELATIME ? MS_RELATIME : 0);
        flags |= (attr & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0) | (attr & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0) |
                 (attr & MOUNT_ATTR_NODEV ? MS_NODEV : 0) | (attr & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
        if (mount(NULL, path, NULL, flags, NULL) < 0)
                return -errno;
        return 0;
}

static int bind_mount(const char *src, const char *dst, uint64_t attr, StepError *e) {
        int r;

        if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
                return STEP_FAIL(e->what, errno, "Failed to bind %s to /%s", src, dst);
        r = mount_add_attr(dst, attr, true);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to make /%s read-only", dst);
        return 0;
}

/* An empty regular file to bind a file onto. mknod() makes it in one call where open() and close()
 * took two, and sets up no open file to tear down (needs no privilege for S_IFREG). */
static int make_mount_point_file(const char *path, mode_t mode) {
        return mknod(path, S_IFREG | mode, 0);
}

/* Binds a file or directory that may be missing on this host; a missing source is skipped. */
static int bind_optional(const char *src, const char *dst, StepError *e) {
        struct stat st;

        if (stat(src, &st) < 0)
                return errno == ENOENT ? 0 : STEP_FAIL(e->what, errno, "Failed to stat %s", src);
        if (S_ISDIR(st.st_mode) ? mkdir(dst, 0755) < 0 : make_mount_point_file(dst, 0644) < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /%s", dst);
        return bind_mount(src, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, e);
}

/* Inodes cost kernel memory that a tmpfs's size= does not count (empty files, directories and
 * short symlinks take no page), and that the rlimit backend does not bound at all: without a cap,
 * a flood of empty files in /tmp grows the kernel's memory until the run's timeout. Two per page
 * of the size, plus some, is more than any tree of real files that fits needs. */
static uint64_t tmpfs_inodes(uint64_t size) {
        return size / 2048 + 1024;
}

static int mount_tmpfs(const char *dst, unsigned long flags, const char *options, StepError *e) {
        if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV | flags, options) < 0)
                return STEP_FAIL(e->what, errno, "Failed to mount a tmpfs on /%s (%s)", dst, options);
        return 0;
}

/* Exactly mode, sticky bit included: the root is built under umask 0 (setup_rootfs_early()), so
 * no chmod() after the mkdir() (a path lookup and an inode change each, 14 a run). */
static int make_dir(const char *path, mode_t mode, StepError *e) {
        if (mkdir(path, mode) < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /%s", path);
        return 0;
}

/* /usr and the top-level links into it (/bin -> usr/bin on merged-/usr systems, real directories
 * elsewhere, which are then bound read-only too). */
static int setup_usr(StepError *e) {
        static const char *const top[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };
        int r;

        r = make_dir("usr", 0755, e);
        if (r < 0)
                return r;
        r = bind_mount("/usr", "usr", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, e);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(top); i++) {
                char src[32], target[PATH_MAX];
                struct stat st;
                ssize_t n;

                (void) snprintf(src, sizeof(src), "/%s", top[i]);
                /* readlink() first: on a merged-/usr system each is a link, and its EINVAL (not a
                 * link) or ENOENT (none) says what an lstat() would have, one call fewer each. */
                n = readlink(src, target, sizeof(target) - 1);
                if (n >= 0) {
                        target[n] = '\0';
                        if (symlink(target, top[i]) < 0)
                                return STEP_FAIL(e->what, errno, "Failed to create /%s", top[i]);
                        continue;
                }
                if (errno == ENOENT)
                        continue;
                if (errno != EINVAL)
                        return STEP_FAIL(e->what, errno, "Failed to read link %s", src);
                if (lstat(src, &st) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return STEP_FAIL(e->what, errno, "Failed to stat %s", src);
                }
                if (S_ISDIR(st.st_mode)) {
                        r = bind_optional(src, top[i], e);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* A minimal /etc: what the dynamic linker, interpreters, TLS and name lookups read, and a
 * synthetic user database that names only the sandbox user. Without network there is no
 * resolv.conf, and "hosts: files" keeps name lookups from even trying DNS. With the host's
 * network, its resolv.conf and hosts are bound read-only and lookups may use DNS. */
static int setup_etc(const SandboxChild *c, StepError *e) {
        static const char *const copied[] = {
                "ld.so.cache", "alternatives", "ssl/certs", "ssl/openssl.cnf", "services", "protocols",
                "mime.types",
        };
        char buf[512], target[PATH_MAX];
        ssize_t n;
        int r;

        r = make_dir("etc", 0755, e);
        if (r < 0)
                return r;
        r = make_dir("etc/ssl", 0755, e);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(copied); i++) {
                char src[64], dst[64];

                (void) snprintf(src, sizeof(src), "/etc/%s", copied[i]);
                (void) snprintf(dst, sizeof(dst), "etc/%s", copied[i]);
                r = bind_optional(src, dst, e);
                if (r < 0)
                        return r;
        }

        /* localtime is a link into /usr/share/zoneinfo, which the sandbox has. */
        n = readlink("/etc/localtime", target, sizeof(target) - 1);
        if (n > 0) {
                target[n] = '\0';
                if (symlink(target, "etc/localtime") < 0)
                        return STEP_FAIL(e->what, errno, "Failed to create /etc/localtime");
        }

        (void) snprintf(buf, sizeof(buf), "skill:x:%u:%u:skill:/home/skill:/bin/sh\n", c->uid, c->gid);
        r = write_file("etc/passwd", buf, 0644);
        if (r >= 0) {
                (void) snprintf(buf, sizeof(buf), "skill:x:%u:\n", c->gid);
                r = write_file("etc/group", buf, 0644);
        }
        if (r >= 0)
                r = write_file("etc/nsswitch.conf",
                               c->network ?
                               "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
                               "networks: files\nprotocols: files\nservices: files\n" :
                               "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
                               "networks: files\nprotocols: files\nservices: files\n", 0644);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to write the sandbox /etc");

        if (c->network) {
                /* We still see the host's file system here. mount() follows a symlink in its
                 * source, so a resolv.conf linking into /run (systemd-resolved, NetworkManager)
                 * binds the file it names on the host: the sandbox has no /run of the host. */
                r = bind_optional("/etc/resolv.conf", "etc/resolv.conf", e);
                if (r < 0)
                        return r;
                r = bind_optional("/etc/hosts", "etc/hosts", e);
                if (r < 0)
                        return r;
        } else
                r = write_file("etc/hosts",
                               "127.0.0.1\tlocalhost\n127.0.1.1\tskill\n"
                               "::1\tlocalhost ip6-localhost ip6-loopback\n",
                               0644);
        if (r >= 0)
                r = write_file("etc/hostname", "skill\n", 0644);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to write the sandbox /etc");
        return 0;
}

/* /dev: a small tmpfs with the harmless nodes bound from the host (creating nodes would need
 * CAP_MKNOD, which a user namespace does not grant), the usual links, and a private /dev/shm. */
static int setup_dev(const SandboxChild *c, StepError *e) {
        static const char *const nodes[] = { "null", "zero", "full", "random", "urandom" };
        static const char *const links[][2] = {
                { "/proc/self/fd", "dev/fd" },
                { "/proc/self/fd/0", "dev/stdin" },
                { "/proc/self/fd/1", "dev/stdout" },
                { "/proc/self/fd/2", "dev/stderr" },
        };
        char opts[128];
        int r;

        r = make_dir("dev", 0755, e);
        if (r < 0)
                return r;
        r = mount_tmpfs("dev", MS_NOEXEC, "size=64k,nr_inodes=64,mode=0755", e);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(nodes); i++) {
                char src[32], dst[32];

                (void) snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
                (void) snprintf(dst, sizeof(dst), "dev/%s", nodes[i]);
                if (make_mount_point_file(dst, 0666) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to create /%s", dst);
                if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to bind %s", src);
        }
        for (size_t i = 0; i < ELEMENTSOF(links); i++)
                if (symlink(links[i][0], links[i][1]) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to create /%s", links[i][1]);
        r = make_dir("dev/shm", 01777, e);
        if (r < 0)
                return r;

        /* One call for /dev and the device nodes bound in it, before /dev/shm (writable) is
         * mounted there. Read-only still lets a device be read and written (the kernel checks it
         * for files, directories and links only) but not the host's inode: no chmod, no timestamps
         * that other runs could watch. The tmpfs itself is nodev and noexec already. */
        r = mount_add_attr("dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to make /dev read-only");

        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=1777",
                        c->tmpfs_size, tmpfs_inodes(c->tmpfs_size));
        return mount_tmpfs("dev/shm", MS_NOEXEC, opts, e);
}

/* The empty read-only tmpfs every hidden tree's overlay has as its second layer: one for all of
 * them, mounted on NEWROOT under the new root, so that no path of the new root leads to it and
 * the old root's detaching takes it along (an unmount of its own cost an RCU grace period:
 * 0.3 to 7 ms, on the run's critical path). The directories hidden under /skill and /proc are
 * binds of it too: a bind (2 µs) instead of a tmpfs of their own each (10 µs), the same empty,
 * read-only, nosuid, nodev and noexec directory in mountinfo. */
static int empty_layer_fd = -EBADF;

static int make_empty_layer(StepError *e) {
        if (mount("tmpfs", NEWROOT, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,nr_inodes=1,mode=0555") < 0)
                return STEP_FAIL(e->what, errno, "Failed to mount the empty layer");
        empty_layer_fd = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (empty_layer_fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open the empty layer");
        return 0;
}

/* Hides a directory under the empty layer. A bind copies the flags of the mount it is made from:
 * read-only, nosuid, nodev and noexec, like the layer. Returns -errno, ENOENT included, for the
 * caller to tell a missing directory from a failure. */
static int bind_empty_layer(const char *dst) {
        char src[64];

        (void) snprintf(src, sizeof(src), "/proc/self/fd/%d", empty_layer_fd);
        return mount(src, dst, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
}

/* Puts the run's /dev/null over a file (to hide it). A bind mount copies the flags of the mount
 * it is made from, and setup_dev() made that one read-only, nosuid and noexec: no second call
 * to restrict each copy. */
static int bind_dev_null(const char *dst, StepError *e) {
        if (mount("dev/null", dst, NULL, MS_BIND, NULL) < 0)
                return STEP_FAIL(e->what, errno, "Failed to hide /%.80s", dst);
        return 0;
}

/* /proc/loadavg counts the host's running and total threads and its load: what other users do,
 * watched from inside the run, and a channel between runs. The kernel does not namespace it, so
 * the run reads an idle machine instead, in the format getloadavg() and uptime parse: no load, its
 * own one runnable thread, pid 1 last. A fixed line rather than one counted for the run (as LXCFS
 * does with a daemon): a run that wants its own processes lists /proc. sysinfo() still reports
 * the host's loads and process count; no mount reaches a system call (README). */
static int setup_proc_loadavg(StepError *e) {
        int r;

        r = write_file(".loadavg", "0.00 0.00 0.00 1/1 1\n", 0444);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to create /.loadavg");
        r = bind_mount(".loadavg", "proc/loadavg", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                       MOUNT_ATTR_NOEXEC, e);
        /* The bind keeps the file; the new root does not. */
        if (unlink(".loadavg") < 0 && r >= 0)
                return STEP_FAIL(e->what, errno, "Failed to remove /.loadavg");
        return r;
}

/* /proc of the new PID namespace (we are its PID 1), with the parts that configure the kernel
 * read-only even for a process that somehow had privileges, and the host-wide parts that tell
 * a skill about the kernel and other users' keys hidden (under /dev/null, or an empty tmpfs). */
static int setup_proc(StepError *e) {
        static const char *const ro[] = { "proc/sys", "proc/sysrq-trigger", "proc/irq", "proc/bus" };
        /* Also what names the host: its kernel command line (root device, serial consoles,
         * cloud instance options), its boot id (a stable host identifier, and the same in every
         * run), and the kernel's symbol table. */
        static const char *const masked_files[] = {
                "proc/kcore", "proc/keys", "proc/key-users", "proc/timer_list", "proc/sched_debug",
                "proc/latency_stats", "proc/cmdline", "proc/kallsyms", "proc/sys/kernel/random/boot_id",
        };
        static const char *const masked_dirs[] = { "proc/acpi", "proc/scsi", "proc/asound" };
        int r;

        r = make_dir("proc", 0555, e);
        if (r < 0)
                return r;
        if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return STEP_FAIL(e->what, errno, "Failed to mount /proc");
        /* What this kernel lacks is skipped: the mount's ENOENT says so, without a lookup of its
         * own first (each is a walk of the new /proc). */
        for (size_t i = 0; i < ELEMENTSOF(ro); i++) {
                if (mount(ro[i], ro[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return STEP_FAIL(e->what, errno, "Failed to bind %s to /%s", ro[i], ro[i]);
                }
                r = mount_add_attr(ro[i], MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true);
                if (r < 0)
                        return STEP_FAIL(e->what, r, "Failed to make /%s read-only", ro[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(masked_files); i++)
                if (mount("dev/null", masked_files[i], NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
                        return STEP_FAIL(e->what, errno, "Failed to hide /%s", masked_files[i]);
        for (size_t i = 0; i < ELEMENTSOF(masked_dirs); i++) {
                r = bind_empty_layer(masked_dirs[i]);
                if (r < 0 && r != -ENOENT)
                        return STEP_FAIL(e->what, r, "Failed to hide /%s", masked_dirs[i]);
        }
        return setup_proc_loadavg(e);
}

/* Empties what the content hash leaves out (the parent listed it): the empty layer on each
 * __pycache__ folder, /dev/null on each stray .pyc or .DS_Store. */
static int hide_in_skill(const SandboxChild *c, StepError *e) {
        char path[PATH_MAX];
        int r;

        /* Messages name the path cut short: they must fit the step error buffer. */
        STRV_FOREACH(d, c->hidden_dirs) {
                if (snprintf(path, sizeof(path), "skill/%s", *d) >= (int) sizeof(path))
                        return STEP_FAIL(e->what, ENAMETOOLONG, "Failed to hide a cache in the skill");
                r = bind_empty_layer(path);
                if (r < 0)
                        return STEP_FAIL(e->what, r, "Failed to hide /skill/%.80s", *d);
        }
        STRV_FOREACH(f, c->hidden_files) {
                if (snprintf(path, sizeof(path), "skill/%s", *f) >= (int) sizeof(path))
                        return STEP_FAIL(e->what, ENAMETOOLONG, "Failed to hide a cache in the skill");
                r = bind_dev_null(path, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int copy_fd_to(int in_fd, const char *dst, uint64_t *budget, uid_t uid, gid_t gid, mode_t mode,
                      StepError *e) {
        _cleanup_close_ int out = -EBADF;
        char buf[64 * 1024];
        off_t off = 0;

        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (out < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /%s", dst);

        for (;;) {
                ssize_t n;
                int r;

                /* pread where possible, so a shared offset (the stdin memfd) is left alone. */
                n = pread(in_fd, buf, sizeof(buf), off);
                if (n < 0 && errno == ESPIPE)
                        n = read(in_fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return STEP_FAIL(e->what, errno, "Failed to read the input for /%s", dst);
                }
                if (n == 0)
                        break;
                if ((uint64_t) n > *budget)
                        return STEP_FAIL(e->what, EFBIG, "Input /%s does not fit into /work", dst);
                *budget -= n;
                off += n;
                r = loop_write(out, buf, n);
                if (r < 0)
                        return STEP_FAIL(e->what, r, "Failed to write /%s", dst);
        }
        /* The mode is the open()'s, exact under umask 0; a chown() clears only set-id bits, which
         * these modes never have. */
        if (fchown(out, uid, gid) < 0)
                return STEP_FAIL(e->what, errno, "Failed to hand /%s to the sandbox user", dst);
        return 0;
}

/* A folder input: the tree the parent unpacked (folder-input.c), copied below /work. */
static int copy_folder_to(int src_fd, const char *dst, uint64_t *budget, const SandboxChild *c, StepError *e) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (mkdir(dst, 0700) < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /%.200s", dst);
        fd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open /%.200s", dst);
        r = sandbox_folder_input_copy(src_fd, fd, c->uid, c->gid, budget, 1);
        if (r == -EFBIG)
                return STEP_FAIL(e->what, r, "Input /%.200s does not fit into /work", dst);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to copy the input folder /%.200s", dst);
        if (fchown(fd, c->uid, c->gid) < 0 || fchmod(fd, 0755) < 0)
                return STEP_FAIL(e->what, errno, "Failed to hand /%.200s to the sandbox user", dst);
        return 0;
}

/* A kept /work (workspace.c): its contents copied in, and the parent handed our /work, so that
 * it can copy back what the run leaves after every process of the run is gone. */
static int keep_work(const SandboxChild *c, uint64_t *budget, StepError *e) {
        _cleanup_close_ int fd = -EBADF;
        ChildMessage m = { .type = CHILD_MSG_WORK_FD };
        int r;

        fd = open("work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open /work");
        r = sandbox_folder_input_copy(c->workspace_fd, fd, c->uid, c->gid, budget, 1);
        if (r == -EFBIG)
                return STEP_FAIL(e->what, r, "The kept /work does not fit into its quota");
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to copy the kept /work");
        send_message(c->ctl_fd, &m, fd);
        return 0;
}

/* The writable places: /work (with the --file inputs), /out (its own tmpfs, so its size is
 * capped and no hard link can point out of it), /tmp and the home directory. */
static int setup_writable(const SandboxChild *c, StepError *e) {
        _cleanup_close_ int out_fd = -EBADF;
        ChildMessage m = { .type = CHILD_MSG_OUT_FD };
        uint64_t budget = c->work_size;
        char opts[128];
        int r;

        r = make_dir("work", 0755, e);
        if (r < 0)
                return r;
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0755,uid=%u,gid=%u",
                        c->work_size, tmpfs_inodes(c->work_size), c->uid, c->gid);
        r = mount_tmpfs("work", 0, opts, e);
        if (r < 0)
                return r;
        if (c->workspace_fd >= 0) {
                r = keep_work(c, &budget, e);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < c->n_files; i++) {
                char dst[PATH_MAX];

                (void) snprintf(dst, sizeof(dst), "work/%s", c->file_names[i]);
                if (c->file_folders && c->file_folders[i])
                        r = copy_folder_to(c->file_fds[i], dst, &budget, c, e);
                else
                        r = copy_fd_to(c->file_fds[i], dst, &budget, c->uid, c->gid, 0644, e);
                if (r < 0)
                        return r;
        }

        r = make_dir("out", 0755, e);
        if (r < 0)
                return r;
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0755,uid=%u,gid=%u",
                        c->out_size, c->out_inodes, c->uid, c->gid);
        r = mount_tmpfs("out", MS_NOEXEC, opts, e);
        if (r < 0)
                return r;
        if (mkdir("out/files", 0755) < 0 || chown("out/files", c->uid, c->gid) < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /out/files");
        /* The parent copies artifacts through this fd after every process of the run is gone. */
        out_fd = open("out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (out_fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open /out");
        (void) send_message(c->ctl_fd, &m, out_fd);

        r = make_dir("tmp", 01777, e);
        if (r < 0)
                return r;
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=1777",
                        c->tmpfs_size, tmpfs_inodes(c->tmpfs_size));
        r = mount_tmpfs("tmp", 0, opts, e);
        if (r < 0)
                return r;

        r = make_dir("home", 0755, e);
        if (r < 0)
                return r;
        r = make_dir("home/skill", 0700, e);
        if (r < 0)
                return r;
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0700,uid=%u,gid=%u",
                        c->tmpfs_size, tmpfs_inodes(c->tmpfs_size), c->uid, c->gid);
        r = mount_tmpfs("home/skill", 0, opts, e);
        if (r < 0)
                return r;

        /* A few programs insist on /var/tmp. */
        r = make_dir("var", 0755, e);
        if (r < 0)
                return r;
        if (symlink("../tmp", "var/tmp") < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /var/tmp");

        r = make_dir("run", 0755, e);
        if (r < 0)
                return r;
        if (c->input_fd >= 0) {
                uint64_t input_budget = c->input_size;

                r = make_dir("run/skill", 0755, e);
                if (r < 0)
                        return r;
                /* Relative: we are building inside the new root. */
                r = copy_fd_to(c->input_fd, &SANDBOX_INPUT_PATH[1], &input_budget, c->uid, c->gid, 0444, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The skill environment at /env (skilld/env): read-only for runs, writable for the build that
 * fills it. Node looks for node_modules in every ancestor of the script, for require() and ESM
 * import alike (NODE_PATH serves only require()), so /node_modules leads into it. */
static int mount_tree_hidden(int fd, const char *target, StepError *e);

static int setup_env(int env_fd, bool writable, StepError *e) {
        char src[64];
        int r;

        r = make_dir("env", 0755, e);
        if (r < 0)
                return r;
        /* A run's environment, like its skill, shows no host path (the caller's cache); a build's
         * staging folder must be writable, so it stays a bind. */
        if (writable) {
                (void) snprintf(src, sizeof(src), "/proc/self/fd/%d", env_fd);
                r = bind_mount(src, "env", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, e);
        } else
                r = mount_tree_hidden(env_fd, "env", e);
        if (r < 0)
                return r;
        if (symlink("/env/node/node_modules", "node_modules") < 0)
                return STEP_FAIL(e->what, errno, "Failed to create /node_modules");
        return 0;
}

/* The parent opened the skill tree, but its fd points into the parent's mount namespace, and the
 * kernel binds only mounts of our own. Look the same directory up again in our copy of the tree
 * and check it is the very same one (device and inode), so a path swapped in between is caught. */
static int reopen_here(int fd, int *ret, StepError *e) {
        char link[64], path[PATH_MAX];
        struct stat a, b;
        ssize_t n;
        int nfd;

        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (n < 0)
                return STEP_FAIL(e->what, errno, "Failed to find the skill directory");
        path[n] = '\0';
        if (path[0] != '/' || (size_t) n >= sizeof(path) - 1)
                return STEP_FAIL(e->what, ENOENT, "The skill directory is no longer reachable (%.160s)",
                                 path);
        nfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (nfd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open the skill directory %.160s", path);
        if (fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
                safe_close(nfd);
                return STEP_FAIL(e->what, ESTALE, "The skill directory %.160s was replaced during setup",
                                 path);
        }
        *ret = nfd;
        return 0;
}

/* Whether path is on the kernel's initial rootfs (ramfs, or tmpfs when so configured), mounted
 * as "rootfs"; /proc/self/mountinfo names it in the source field. */
static bool is_rootfs(const char *path) {
        _cleanup_fclose_ FILE *f = NULL;
        char line[1024];

        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                char mount_point[PATH_MAX], source[256];
                const char *sep = strstr(line, " - ");

                /* "ID PARENT MAJ:MIN ROOT MOUNT_POINT ... - FSTYPE SOURCE OPTIONS" */
                if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mount_point) != 1 ||
                    sscanf(sep + 3, "%*s %255s", source) != 1)
                        continue;
                if (streq(mount_point, path) && streq(source, "rootfs"))
                        return true;
        }
        return false;
}

/* A tree of the host read-only at NEWROOT/target (/skill, /env); through the fd the parent
 * opened, never a path looked up again here. It keeps exec: skills without an interpreter are
 * executed directly.
 *
 * Not a bind: mountinfo prints a mount's root as the path of its dentry within its file system,
 * whatever mounts it was bound through, so a bind would tell the skill the host path of the
 * folder (the caller's home, the service's store or cache). An overlay whose only real layer is
 * the folder has its own root, "/", and shows the options it was given: "." (the folder, our
 * working directory at that moment) and an empty tmpfs, which a read-only overlay needs as its
 * second layer (empty_layer_fd, named by its /proc/self/fd link). Where the kernel cannot stack an overlay on the folder's file system
 * (no overlayfs, a kernel before 5.11 in a user namespace, a lower file system it refuses) the
 * bind remains, and the path shows, as the README says. */
static int mount_tree_hidden(int fd, const char *target, StepError *e) {
        char src[64], dst[PATH_MAX], options[64];
        int r;

        if (fchdir(fd) < 0)
                return STEP_FAIL(e->what, errno, "Failed to enter the directory for /%s", target);
        (void) snprintf(dst, sizeof(dst), NEWROOT "/%s", target);
        (void) snprintf(options, sizeof(options), "lowerdir=.:/proc/self/fd/%d", empty_layer_fd);
        r = mount("overlay", dst, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, options) < 0 ? -errno : 0;
        if (chdir(NEWROOT) < 0)
                return STEP_FAIL(e->what, errno, "Failed to return to the new root");
        if (r >= 0)
                return 0;

        (void) snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
        return bind_mount(src, target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, e);
}

/* The extra read-only trees at /mnt/0, /mnt/1, ...; fds are the ones reopened here. */
static int setup_ro_dirs(const int *fds, size_t n, StepError *e) {
        char target[32];
        int r;

        r = make_dir("mnt", 0755, e);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                (void) snprintf(target, sizeof(target), "mnt/%zu", i);
                r = make_dir(target, 0755, e);
                if (r >= 0)
                        r = mount_tree_hidden(fds[i], target, e);
        }
        return r;
}

/* The part of the root that holds nothing of the run's own (no input, no files, no writable
 * place): it may be built while the parent is still placing us under the limits. */
static int setup_rootfs_early(const SandboxChild *c, StepError *e) {
        _cleanup_close_ int skill_fd = -EBADF, env_fd = -EBADF;
        int ro_fds[SANDBOX_RO_DIRS_MAX];
        size_t n_ro = 0;
        char opts[64];
        int r;

        /* Every directory and file of the root gets exactly the mode it is created with (the
         * caller's umask would cut it: skilld.service's is 077), without a chmod() after each.
         * The init creates nothing else; the skill process sets its own umask. */
        (void) umask(0);
        /* Nothing we mount may propagate back to the host, and nothing from the host into us. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return STEP_FAIL(e->what, errno, "Failed to make the mount namespace private");
        /* Before NEWROOT covers anything the path might go through. */
        r = reopen_here(c->skill_dir_fd, &skill_fd, e);
        if (r >= 0 && c->env_dir_fd >= 0)
                r = reopen_here(c->env_dir_fd, &env_fd, e);
        for (; r >= 0 && n_ro < MIN(c->n_ro_dir_fds, (size_t) SANDBOX_RO_DIRS_MAX); n_ro++)
                r = reopen_here(c->ro_dir_fds[n_ro], &ro_fds[n_ro], e);
        if (r < 0)
                return r; /* the child exits: what was opened goes with it */

        r = make_empty_layer(e);
        if (r < 0)
                return r;
        (void) snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755", c->root_size);
        if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
                return STEP_FAIL(e->what, errno, "Failed to mount the new root tmpfs");
        if (chdir(NEWROOT) < 0)
                return STEP_FAIL(e->what, errno, "Failed to enter the new root");

        r = setup_usr(e);
        if (r >= 0)
                r = setup_etc(c, e);
        if (r >= 0)
                r = setup_dev(c, e);
        if (r < 0)
                return r;

        r = make_dir("skill", 0755, e);
        if (r < 0)
                return r;
        r = mount_tree_hidden(skill_fd, "skill", e);
        if (r < 0)
                return r;
        r = hide_in_skill(c, e);
        if (r < 0)
                return r;
        if (env_fd >= 0) {
                r = setup_env(env_fd, c->env_writable, e);
                if (r < 0)
                        return r;
        }
        if (n_ro > 0) {
                r = setup_ro_dirs(ro_fds, n_ro, e);
                for (size_t i = 0; i < n_ro; i++)
                        (void) safe_close(ro_fds[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The rest, once under the limits: what the run writes and the inputs it is given are charged
 * to its own cgroup. */
static int setup_rootfs_late(const SandboxChild *c, StepError *e) {
        int r;

        r = setup_writable(c, e);
        if (r >= 0)
                r = setup_proc(e); /* last: /proc/self above must still be the host's */
        /* The overlays and the binds hold their own clones of it. */
        empty_layer_fd = safe_close(empty_layer_fd);
        if (r < 0)
                return r;

        /* pivot_root(".", ".") stacks the old root on top of the new one; detaching it leaves the
         * new root alone, without needing a directory to park the old root in. */
        if (syscall(SYS_pivot_root, ".", ".") >= 0) {
                if (umount2(".", MNT_DETACH) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to detach the old root");
        } else if (errno == EINVAL && is_rootfs("/")) {
                /* The host runs from its initramfs (the kernel's rootfs, as a VM booted from an
                 * initramfs does), and rootfs can never be pivoted away from. Do what switch_root
                 * does: move the new root over it and chroot. The old root stays underneath,
                 * unreachable: no path leads to it, no fd of the skill points into it, and leaving
                 * a chroot takes CAP_SYS_CHROOT, which the skill never has. */
                if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to move the new root over the initramfs");
                if (chroot(".") < 0)
                        return STEP_FAIL(e->what, errno, "Failed to enter the new root");
        } else
                return STEP_FAIL(e->what, errno, "Failed to pivot into the new root");
        if (chdir("/") < 0)
                return STEP_FAIL(e->what, errno, "Failed to chdir to the new root");
        r = mount_add_attr("/", MOUNT_ATTR_RDONLY, false);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to make the new root read-only");
        if (chdir(c->cwd) < 0)
                return STEP_FAIL(e->what, errno, "Failed to chdir to %s", c->cwd);
        return 0;
}

/* What the init shows as its command line and name. NUL-terminated, as the kernel expects an
 * argv area to be (a last byte other than NUL means setproctitle() ran past it). */
static const char init_cmdline[] = "sandbox-init";

/* The /proc/self/stat fields (proc(5), counted from 1) that PR_SET_MM_MAP wants, all at once. */
enum {
        STAT_START_CODE = 26, STAT_END_CODE, STAT_START_STACK,
        STAT_START_DATA = 45, STAT_END_DATA, STAT_START_BRK, STAT_ARG_START, STAT_ARG_END,
        STAT_ENV_START, STAT_ENV_END,
        _STAT_MAX,
};

/* One read() into the stack: the line is at most 52 numbers and a name of 15 bytes (about 1 KiB),
 * and a seq_file hands a record that fits the buffer over whole. A read that fills the buffer is
 * refused rather than parsed cut short. */
static int read_mm_fields(uint64_t f[static _STAT_MAX], StepError *e) {
        _cleanup_close_ int fd = -EBADF;
        char stat[4096], *p, *save = NULL;
        unsigned i = 3;
        ssize_t n;
        int r;

        fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to open /proc/self/stat");
        do
                n = read(fd, stat, sizeof(stat) - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return STEP_FAIL(e->what, errno, "Failed to read /proc/self/stat");
        if ((size_t) n >= sizeof(stat) - 1)
                return STEP_FAIL(e->what, EFBIG, "/proc/self/stat is longer than expected");
        stat[n] = '\0';
        /* The name in parentheses may hold anything: the fields start after the last ')'. */
        p = strrchr(stat, ')');
        if (!p)
                return STEP_FAIL(e->what, EBADMSG, "Failed to parse /proc/self/stat");
        for (char *tok = strtok_r(p + 1, " \n", &save); tok && i < _STAT_MAX;
             tok = strtok_r(NULL, " \n", &save), i++) {
                if (i < STAT_START_CODE || (i > STAT_START_STACK && i < STAT_START_DATA))
                        continue;
                r = safe_atou64(tok, &f[i]);
                if (r < 0)
                        return STEP_FAIL(e->what, r, "Failed to parse field %u of /proc/self/stat", i);
        }
        if (i < _STAT_MAX)
                return STEP_FAIL(e->what, EBADMSG, "/proc/self/stat has only %u fields", i - 1);
        return 0;
}

/* The init is a copy of its caller (skillctl, the daemon's worker), and /proc/1/cmdline, which
 * every process of the run may read whatever its uid and the init's dumpable flag, would show the
 * caller's command line: its options, paths, the skill's arguments. The caller's argv and
 * environment strings are wiped from this copy of its memory, and the kernel is pointed at a name
 * of our own instead. Called after setup_rootfs_late(), when nothing the init or the skill still uses
 * lives in those areas: the engine copied the skill's argv and environment to the heap, and the
 * input file names, which may point into the caller's argv, have been used. */
static int hide_caller_command_line(StepError *e) {
        uint64_t f[_STAT_MAX] = {};
        struct prctl_mm_map map;
        char *name;
        long brk;
        int r;

        r = read_mm_fields(f, e);
        if (r < 0)
                return r;
        /* Zero would mean the kernel did not show them, which it always does to the process itself. */
        if (f[STAT_ARG_START] == 0 || f[STAT_ENV_START] == 0 || f[STAT_ARG_END] < f[STAT_ARG_START] ||
            f[STAT_ENV_END] < f[STAT_ENV_START])
                return STEP_FAIL(e->what, EBADMSG, "The argv or environment bounds are missing or inverted");
        memset((void *) (uintptr_t) f[STAT_ARG_START], 0, f[STAT_ARG_END] - f[STAT_ARG_START]);
        memset((void *) (uintptr_t) f[STAT_ENV_START], 0, f[STAT_ENV_END] - f[STAT_ENV_START]);
        (void) prctl(PR_SET_NAME, init_cmdline, 0, 0, 0);

        /* The kernel reads a command line from anonymous memory only, so the name goes at the
         * start of the wiped area (on the stack), which is also what stays visible, followed by
         * NULs, if the kernel cannot be repointed. An area too short for it (never, with the
         * callers there are) gets a heap copy, which the init keeps until it exits. */
        if (f[STAT_ARG_END] - f[STAT_ARG_START] >= sizeof(init_cmdline)) {
                name = (char *) (uintptr_t) f[STAT_ARG_START];
                memcpy(name, init_cmdline, sizeof(init_cmdline));
        } else {
                name = strdup(init_cmdline);
                if (!name)
                        return STEP_FAIL(e->what, ENOMEM, "Failed to allocate the init's name");
        }

        brk = syscall(SYS_brk, 0);
        map = (struct prctl_mm_map) {
                .start_code = f[STAT_START_CODE],
                .end_code = f[STAT_END_CODE],
                .start_data = f[STAT_START_DATA],
                .end_data = f[STAT_END_DATA],
                .start_brk = f[STAT_START_BRK],
                .brk = (uint64_t) brk,
                .start_stack = f[STAT_START_STACK],
                .arg_start = (uintptr_t) name,
                .arg_end = (uintptr_t) name + sizeof(init_cmdline),
                .env_start = (uintptr_t) name + sizeof(init_cmdline),
                .env_end = (uintptr_t) name + sizeof(init_cmdline),
                .exe_fd = (uint32_t) -1,
        };
        /* No capability needed, but the kernel needs CONFIG_CHECKPOINT_RESTORE. Without it the
         * wiped area stays what /proc/1/cmdline shows: the name, and as many NULs as the caller's
         * command line had bytes, which is all it tells. */
        (void) prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long) &map, sizeof(map), 0);
        return 0;
}

/* Only lo exists in the new network namespace, and it starts down. */
static int loopback_up(StepError *e) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return STEP_FAIL(e->what, errno, "Failed to create a socket for lo");
        r = sandbox_loopback_up(fd);
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to bring lo up");
        return 0;
}

/* The kernel's capability sets, without libcap-ng: it read /proc/PID/status five times a call,
 * twice a run (the init and the skill process). The bounding set is walked until the kernel
 * says EINVAL, past its last capability, so a newer kernel's capabilities go too. Each drop is a
 * new set of credentials (0.65 µs here); reading is a quarter of that. */
static int bounding_set_drop(void) {
        for (unsigned long cap = 0;; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        return errno == EINVAL && cap > 0 ? 0 : -errno;
}

static bool bounding_set_empty(void) {
        for (unsigned long cap = 0;; cap++) {
                int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

                if (r < 0)
                        return errno == EINVAL && cap > 0;
                if (r != 0)
                        return false;
        }
}

static int capabilities_clear(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

        return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static bool capabilities_empty(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(d); i++)
                if (d[i].effective != 0 || d[i].permitted != 0 || d[i].inheritable != 0)
                        return false;
        return true;
}

/* Whether this process is the sandbox user with no privilege left: its three uids and gids the
 * run's, no supplementary group (in a user namespace the caller's stay, drop_privileges()), every
 * capability set empty (the ambient one is a subset of the permitted one) and no_new_privs set.
 * The skill process, which inherits the init's dropped credentials, checks them with this. */
static bool privileges_dropped(const SandboxChild *c) {
        uid_t ruid, euid, suid;
        gid_t rgid, egid, sgid;

        if (getresuid(&ruid, &euid, &suid) < 0 || ruid != c->uid || euid != c->uid || suid != c->uid)
                return false;
        if (getresgid(&rgid, &egid, &sgid) < 0 || rgid != c->gid || egid != c->gid || sgid != c->gid)
                return false;
        if (!c->userns && getgroups(0, NULL) != 0)
                return false;
        return capabilities_empty() && bounding_set_empty() && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/* Becomes the sandbox user with no capability left anywhere: effective, permitted, inheritable,
 * ambient and the bounding set. The bounding set was emptied earlier (prepare_inheritance(): it
 * needs CAP_SETPCAP, which goes here); it is checked again here, once, with the rest. The init does
 * this before it starts the skill process, which inherits the result (skill_exec()). */
static int drop_privileges(const SandboxChild *c, StepError *e) {
        int r;

        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return STEP_FAIL(e->what, errno, "Failed to clear ambient capabilities");

        /* In a user namespace setgroups() is denied (we wrote "deny" so we could map gids); the
         * caller's groups stay, shown as the overflow gid, and grant nothing inside. */
        if (!c->userns && setgroups(0, NULL) < 0)
                return STEP_FAIL(e->what, errno, "Failed to drop supplementary groups");
        if (setresgid(c->gid, c->gid, c->gid) < 0)
                return STEP_FAIL(e->what, errno, "Failed to change to gid %u", c->gid);
        if (setresuid(c->uid, c->uid, c->uid) < 0)
                return STEP_FAIL(e->what, errno, "Failed to change to uid %u", c->uid);

        r = capabilities_clear();
        if (r < 0)
                return STEP_FAIL(e->what, r, "Failed to drop capabilities");

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return STEP_FAIL(e->what, errno, "Failed to set no_new_privs");
        /* One check of everything, the capability sets and the bounding set (40 prctl() reads)
         * included. */
        if (!privileges_dropped(c))
                return STEP_FAIL(e->what, EPERM, "Privileges are left after dropping them");
        return 0;
}

/* Session keyrings are inherited across fork and exec, and setuid leaves them in place: without
 * this the skill would possess the caller's (a login's, a daemon's), with every key in it, and
 * possession is what a key's permissions are mostly about. A new anonymous keyring, created after
 * the uid change so that it belongs to the sandbox user, takes its place; keyrings are not
 * namespaced, so nothing else would. The session keyring is a field of the credentials, which
 * are each task's own: the init joins one before it starts the skill process, which starts with a
 * reference to the same keyring and joins another one of its own, so the two share none. No
 * privilege is needed for either, only the uid's key quota (two keys). */
static int join_new_session_keyring(StepError *e) {
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
                return STEP_FAIL(e->what, errno, "Failed to join a new session keyring");
        /* ENOSYS: a kernel without keyrings has none to inherit either. */
        return 0;
}

/* Dispositions the caller ignored (SIGPIPE, typically) would survive the skill's execve(), and a
 * handler of the caller's would run in the init or, before its execve(), in the skill process,
 * both copies of the caller. The init needs none of them: it takes the signals it acts on with
 * sigwaitinfo(), blocked (and a blocked signal is queued whatever its disposition). */
static void reset_signal_dispositions(void) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        for (int sig = 1; sig < _NSIG; sig++)
                (void) sigaction(sig, &sa, NULL);
}

/* What the skill process would otherwise do on its own way to execve(), and the init again
 * before it starts it, done once by the init early: both have it. At the init's first wait for
 * the engine (its cgroups, or the release), where it costs the run nothing when the engine is the
 * slower of the two; before the vfork() at the latest. The bounding set limits only what a later
 * execve() or capset() may gain, so the init keeps the capabilities it still uses (mounts, its
 * own uid change before the vfork()). */
static void prepare_inheritance(const SandboxChild *c) {
        static bool done = false;
        StepError e = {};
        int r;

        if (done)
                return;
        r = bounding_set_drop();
        if (r < 0) {
                r = STEP_FAIL(e.what, r, "Failed to empty the capability bounding set");
                fail(c, r, &e);
        }
        reset_signal_dispositions();
        done = true;
}

/* The seccomp filter's program, as the engine sent it with the release; the skill process loads
 * it. */
static struct sock_fprog seccomp_program;

/* Reads the program from the sealed memfd the engine exported it to. */
static int read_seccomp_program(int fd) {
        _cleanup_free_ struct sock_filter *insns = NULL;
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
            (size_t) st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -EBADMSG;
        insns = malloc(st.st_size);
        if (!insns)
                return -ENOMEM;
        n = pread(fd, insns, st.st_size, 0);
        if (n < 0)
                return -errno;
        if (n != st.st_size)
                return -EIO;
        seccomp_program = (struct sock_fprog) {
                .len = (unsigned short) (st.st_size / sizeof(struct sock_filter)),
                .filter = TAKE_PTR(insns),
        };
        return 0;
}

/* What seccomp_load() does with the program it generated (libseccomp 2.5): no_new_privs is set
 * already (drop_privileges()), and the notify variant asks for a listener. Returns the listener
 * fd, 0 without one, or negative errno. */
static int load_seccomp_program(bool notify) {
        long r;

        r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0,
                    &seccomp_program);
        if (r < 0)
                return -errno;
        return notify ? (int) r : 0;
}

/* Sets the rlimits other than RLIMIT_DATA, or RLIMIT_DATA alone: see skill_exec(). */
static int apply_rlimits(const SandboxChild *c, bool data, StepError *e) {
        for (size_t i = 0; i < c->n_rlimits; i++) {
                if ((c->rlimits[i].resource == RLIMIT_DATA) != data)
                        continue;
                if (setrlimit(c->rlimits[i].resource, &c->rlimits[i].limit) < 0)
                        return STEP_FAIL(e->what, errno, "Failed to set resource limit %d",
                                         c->rlimits[i].resource);
        }
        return 0;
}

/* The init's CPUs, which the skill process gets back first thing when the init pinned itself to
 * one of them for the vfork() (sandbox_child_main()). */
static cpu_set_t skill_cpus;
static bool skill_cpus_pinned = false;

/* vfork() leaves the init's CPU idle until the skill process's execve(), but the scheduler places
 * a new process by load, and another CPU that only runs niced work looks the least loaded: there
 * the skill process may wait a tick or more for its first instruction (in a C program beside a
 * niced build, vfork() to the child's start: p90 1.8 ms, against 0.03 ms pinned). A process
 * pinned to its CPU has its children start there, as soon as it sleeps. */
static bool pin_to_this_cpu(cpu_set_t *ret_cpus) {
        cpu_set_t here;
        int cpu = sched_getcpu();

        if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(*ret_cpus), ret_cpus) < 0)
                return false;
        CPU_ZERO(&here);
        CPU_SET(cpu, &here);
        return sched_setaffinity(0, sizeof(here), &here) >= 0;
}

/* The skill process, from the init's vfork() to its execve(). It runs in the init's memory, on
 * the init's stack below sandbox_child_main()'s frame, the init asleep until then, so it never
 * returns (it ends in execve() or _exit()), and in the shared memory it writes only its own
 * stack frames and the phase marks: no allocation, no stdio stream, no lock left taken, nothing
 * the init reads afterwards but the marks (errno is shared too, and the init does not read it
 * after the vfork()). Formatting an error text into its stack (snprintf(), send_error()) takes
 * none of these. What it changes on its way stays its own: its fd table, session, rlimits,
 * umask, persona, credentials, keyring, signal mask, CPUs and seccomp filter are per process or
 * per task without CLONE_FILES, CLONE_FS, CLONE_SIGHAND and CLONE_THREAD; the listener, the
 * rlimits and the filter never reach the init. Its credentials are the init's, dropped before the
 * vfork(): it checks them instead of changing them (it has no capability left to do so). Never
 * inlined: its locals and spills then lie below the frame of sandbox_child_main(), which the init
 * goes on in, instead of in slots of that frame that the compiler may share with the init's. */
_noreturn_ _noinline_ static void skill_exec(const SandboxChild *c) {
        StepError e = {};
        sigset_t none;
        int r;

        /* The init's memory: its marks are here too, and go with this process's. */
        mark(c, MARK_INIT_FORKED);
        if (skill_cpus_pinned && sched_setaffinity(0, sizeof(skill_cpus), &skill_cpus) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to restore the CPU affinity");
                goto fail;
        }
        /* The dispositions are the defaults already (prepare_inheritance()); the mask is the
         * init's, with the signals it waits for blocked. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);

        /* A new session without a controlling terminal: TIOCSTI and job control on the caller's
         * terminal are out of reach even before seccomp. */
        if (setsid() < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to start a new session");
                goto fail;
        }
        if (dup2(c->stdin_fd, STDIN_FILENO) < 0 || dup2(c->stdout_fd, STDOUT_FILENO) < 0 ||
            dup2(c->stderr_fd, STDERR_FILENO) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to set up stdio");
                goto fail;
        }
        /* The init closed all else before the vfork() (sandbox_child_main()): the control socket
         * is close-on-exec and reports an execve() failure; these three go here, by number, with
         * no walk of /proc/self/fd (which allocates) on a kernel without close_range(). */
        for (size_t i = 0; i < 3; i++) {
                int fd = (const int[]) { c->stdin_fd, c->stdout_fd, c->stderr_fd }[i];

                if (fd > STDERR_FILENO && fd != c->ctl_fd)
                        (void) close(fd);
        }
        r = apply_rlimits(c, false, &e);
        if (r < 0)
                goto fail;
        umask(0022);
        /* Undo any persona the caller had (setarch -R would leave ASLR off for the skill). */
        if (personality(PER_LINUX) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to reset the execution domain");
                goto fail;
        }

        if (!privileges_dropped(c)) {
                r = STEP_FAIL(e.what, EPERM, "The skill process started with privileges left");
                goto fail;
        }
        r = join_new_session_keyring(&e);
        if (r < 0)
                goto fail;

        mark(c, MARK_SKILL_SETUP);
        /* Last, so that none of the setup above needs a syscall the filter refuses. */
        if (c->seccomp) {
                r = load_seccomp_program(c->seccomp_notify);
                if (r < 0) {
                        r = STEP_FAIL(e.what, r, "Failed to load the seccomp filter");
                        goto fail;
                }
        }
        /* The listener goes to the engine, which answers every refused call; the skill must not
         * keep it (it could answer its own calls). From here until execve() no call is refused,
         * so nothing waits for an answer before the engine has the fd. A listener the engine
         * never got would turn every refusal into ENOSYS: then the run does not start. */
        if (c->seccomp && c->seccomp_notify) {
                _cleanup_close_ int listener = r;

                if (listener < 0) {
                        r = STEP_FAIL(e.what, listener, "The seccomp filter has no listener");
                        goto fail;
                }
                r = send_message(c->ctl_fd, &(ChildMessage) { .type = CHILD_MSG_NOTIFY_FD }, listener);
                if (r < 0) {
                        r = STEP_FAIL(e.what, r, "Failed to hand over the seccomp listener");
                        goto fail;
                }
        }

        /* The memory limit is the skill's, so it comes last: RLIMIT_DATA measures the whole
         * address space, until the execve() the init's, a copy of the caller's, which can be
         * larger than the limit (a daemon's heap, ASan's shadow), and anything that mapped memory
         * after it would fail. Lowering a limit needs no capability, and the engine never asks
         * for more than the caller's hard limit. */
        r = apply_rlimits(c, true, &e);
        if (r < 0)
                goto fail;

        if (c->timing) {
                mark(c, MARK_SKILL_EXEC);
                send_marks(c);
        }
        execve(c->exec_path, c->argv, c->envp);
        r = errno;
        send_error(c->ctl_fd, CHILD_MSG_EXEC_FAILED, r, "Failed to execute %s", c->exec_path);
        _exit(r == ENOENT ? 127 : 126);

fail:
        send_error(c->ctl_fd, CHILD_MSG_ERROR, r, "%s", e.what);
        _exit(SANDBOX_EXIT_SETUP);
}

/* PID 1 of the run. It never runs untrusted code: it waits, reaps and forwards. Signals sent to
 * it from inside the namespace cannot kill it (the kernel protects a namespace init from
 * signals it has no handler for) and the blocked ones land in sigwaitinfo() below. */
_noreturn_ static void init_loop(const SandboxChild *c, pid_t main_pid) {
        ChildMessage m = { .type = CHILD_MSG_EXITED };
        struct rusage ru = {};
        sigset_t mask;
        bool main_done = false;

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&mask, forwarded_signals[i]);

        while (!main_done) {
                siginfo_t si;

                if (sigwaitinfo(&mask, &si) < 0)
                        continue;
                if (si.si_signo != SIGCHLD) {
                        (void) kill(main_pid, si.si_signo);
                        continue;
                }
                for (;;) {
                        siginfo_t w = {};

                        if (waitid(P_ALL, 0, &w, WEXITED | WNOHANG) < 0 || w.si_pid == 0)
                                break;
                        if (w.si_pid == main_pid) {
                                mark(c, MARK_SKILL_END);
                                m.code = w.si_code;
                                m.status = w.si_status;
                                main_done = true;
                        }
                }
        }

        /* The skill process is done: whatever it left behind (daemonized or not) dies now, so the
         * run's end is the end of all of it. */
        (void) kill(-1, SIGKILL);
        while (waitid(P_ALL, 0, &(siginfo_t) {}, WEXITED) >= 0 || errno == EINTR)
                ;

        mark(c, MARK_INIT_EMPTY);
        send_marks(c);
        if (getrusage(RUSAGE_CHILDREN, &ru) >= 0) {
                m.user_usec = timeval_usec(&ru.ru_utime);
                m.system_usec = timeval_usec(&ru.ru_stime);
                m.maxrss = (uint64_t) ru.ru_maxrss * 1024U;
        }
        (void) send_message(c->ctl_fd, &m, -EBADF);
        _exit(0);
}

/* One message on the hold socket (HOLD_*): its byte, and the fds it carries (at most max, kept
 * close-on-exec). EOF (the parent gave up), anything unexpected or more fds than asked for:
 * nothing goes on. */
static char receive_hold(const SandboxChild *c, int *fds, size_t max, size_t *ret_n) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * SANDBOX_CGROUP_FDS_MAX)];
        } control = {};
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *cmsg;
        size_t n = 0;
        ssize_t k;

        /* One byte at a time: a stream socket never joins a message with fds to another. */
        do
                k = recvmsg(c->hold_fd, &mh, MSG_CMSG_CLOEXEC);
        while (k < 0 && errno == EINTR);
        if (k != 1)
                _exit(SANDBOX_EXIT_SETUP);
        for (cmsg = CMSG_FIRSTHDR(&mh); cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
                size_t m;

                if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
                        continue;
                m = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                if (n + m > max)
                        _exit(SANDBOX_EXIT_SETUP);
                memcpy(fds + n, CMSG_DATA(cmsg), m * sizeof(int));
                n += m;
        }
        if (mh.msg_flags & MSG_CTRUNC)
                _exit(SANDBOX_EXIT_SETUP);
        *ret_n = n;
        return byte;
}

/* cgroup v1 (backend-cgroup1.c): the engine makes the run's cgroups while we build the fixed part
 * of the root, and sends them. We are a single thread, so "0" in "tasks" moves the whole process,
 * and costs none of the global locking that moving another process does. Before anything of the
 * run's own is made (its writable places, its inputs: charged to the run's cgroups) and long
 * before the skill process is started. */
static int enter_own_cgroups(const SandboxChild *c, StepError *e) {
        int fds[SANDBOX_CGROUP_FDS_MAX];
        size_t n;
        int r = 0;

        if (receive_hold(c, fds, ELEMENTSOF(fds), &n) != HOLD_CGROUPS)
                _exit(SANDBOX_EXIT_SETUP);
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = fds[i], tasks = -EBADF;

                if (r < 0)
                        continue;
                tasks = openat(fd, "tasks", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (tasks < 0)
                        r = STEP_FAIL(e->what, errno, "Failed to open the run's cgroup");
                else if (write(tasks, "0", 1) != 1)
                        r = STEP_FAIL(e->what, errno, "Failed to enter the run's cgroup");
        }
        return r;
}

/* Held until the parent put us where the limits apply. The release carries the seccomp filter's
 * program when the run has one, and the run's network namespace when the engine made it beside
 * us (as root), or had it made ahead and not ready by the clone (ahead.c; not ready by the
 * release either, none comes, and we make our own): without them nothing goes on. That namespace is entered here, before the skill
 * process is started; until then we made no socket, and /proc/net and /proc/sys/net follow their
 * reader's namespace. The hold socket stays open where the uid's verdict is still to come. */
static void wait_for_placement(const SandboxChild *c) {
        int fds[2] = { -EBADF, -EBADF };
        size_t n = 0, want = (size_t) c->seccomp + (size_t) c->join_netns;
        StepError e = {};
        int r = 0;

        /* One fd short where a namespace was to come: the one made ahead was not ready in time
         * (engine.c, finish_netns()), and we make our own, as the clone would have. */
        if (receive_hold(c, fds, ELEMENTSOF(fds), &n) != HOLD_GO ||
            !(n == want || (c->join_netns && n + 1 == want)))
                _exit(SANDBOX_EXIT_SETUP);
        if (c->seccomp && read_seccomp_program(fds[0]) < 0)
                _exit(SANDBOX_EXIT_SETUP);
        if (c->join_netns && n < want) {
                if (unshare(CLONE_NEWNET) < 0)
                        r = STEP_FAIL(e.what, errno, "Failed to create the run's network namespace");
                else
                        r = loopback_up(&e);
        } else if (c->join_netns && setns(fds[n - 1], CLONE_NEWNET) < 0)
                r = STEP_FAIL(e.what, errno, "Failed to enter the run's network namespace");
        for (size_t i = 0; i < n; i++)
                (void) safe_close(fds[i]);
        if (r < 0)
                fail(c, r, &e);
        if (!c->verdict_later)
                (void) safe_close(c->hold_fd);
}

/* The rule for a uid the engine locked without asking the user database first: nothing runs as
 * it before the database said that no account has it. The engine asks after the release, while
 * we finish the root; the init takes the one HOLD_UID right before its uid change, and closes
 * the hold socket; the skill process is started after that, as the uid. A uid the database names
 * gets no byte: the engine kills us here, before anything ran as it, and retries on another uid. */
static void wait_for_verdict(const SandboxChild *c) {
        int fds[1];
        size_t n = 0;

        if (!c->verdict_later)
                return;
        if (receive_hold(c, fds, ELEMENTSOF(fds), &n) != HOLD_UID || n != 0)
                _exit(SANDBOX_EXIT_SETUP);
        (void) safe_close(c->hold_fd);
}

_noreturn_ void sandbox_child_main(const SandboxChild *c) {
        int keep[] = { c->hold_fd, c->ctl_fd, c->skill_dir_fd, c->stdin_fd, c->stdout_fd, c->stderr_fd,
                       c->input_fd, c->workspace_fd, c->env_dir_fd };
        size_t n_ro = MIN(c->n_ro_dir_fds, (size_t) SANDBOX_RO_DIRS_MAX);
        _cleanup_free_ int *keep_all = NULL;
        StepError e = {};
        sigset_t mask;
        pid_t pid;
        int r;

        mark(c, MARK_INIT_BORN);
        /* The engine waits for this before its own work after the clone (engine.c: step_aside()). */
        if (send(c->hold_fd, &(int) { sched_getcpu() }, sizeof(int), MSG_NOSIGNAL) != sizeof(int))
                _exit(SANDBOX_EXIT_SETUP);
        /* If the engine dies, so does the run (and with its init, the whole PID namespace). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                _exit(SANDBOX_EXIT_SETUP);
        /* The network namespace made ahead of the run (ahead.c), before anything else: from here
         * on this process is where the clone with CLONE_NEWNET would have put it. Its fd goes with
         * the others below. */
        if (c->netns_fd >= 0 && setns(c->netns_fd, CLONE_NEWNET) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to enter the run's network namespace");
                fail(c, r, &e);
        }

        /* The caller's other fds (a daemon's bus connection, other runs' pipes) must not reach
         * the sandbox; drop them before anything else. */
        keep_all = calloc(ELEMENTSOF(keep) + c->n_files + n_ro, sizeof(int));
        if (!keep_all)
                _exit(SANDBOX_EXIT_SETUP);
        memcpy(keep_all, keep, sizeof(keep));
        /* A run without --file inputs has no array at all, and memcpy() from NULL is undefined
         * even for zero bytes. */
        if (c->n_files > 0)
                memcpy(keep_all + ELEMENTSOF(keep), c->file_fds, c->n_files * sizeof(int));
        if (n_ro > 0)
                memcpy(keep_all + ELEMENTSOF(keep) + c->n_files, c->ro_dir_fds, n_ro * sizeof(int));
        r = close_all_fds_except(keep_all, ELEMENTSOF(keep) + c->n_files + n_ro);
        if (r < 0) {
                r = STEP_FAIL(e.what, r, "Failed to close inherited file descriptors");
                fail(c, r, &e);
        }
        mark(c, MARK_INIT_START);

        /* In a user namespace nothing can be built before the parent wrote our id maps. */
        if (!c->setup_before_hold) {
                prepare_inheritance(c);
                if (c->self_place) {
                        r = enter_own_cgroups(c, &e);
                        if (r < 0)
                                fail(c, r, &e);
                        mark(c, MARK_INIT_PLACED);
                }
                wait_for_placement(c);
        }

        /* Detach from the caller's session, so terminal signals (^C) reach the caller only; it
         * decides whether the run is canceled. */
        if (setsid() < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to start a new session");
                fail(c, r, &e);
        }
        /* Only in namespaces of our own: without them these would change the host. */
        if (c->utsns && sethostname("skill", strlen("skill")) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to set the host name");
                fail(c, r, &e);
        }
        if (c->netns) {
                r = loopback_up(&e);
                if (r < 0)
                        fail(c, r, &e);
        }
        r = setup_rootfs_early(c, &e);
        if (r < 0)
                fail(c, r, &e);
        mark(c, MARK_INIT_EARLY);

        /* Where the init is in place by now (it was cloned into its cgroup, or enters the ones
         * the engine made meanwhile), only the skill process needs the release (it carries the
         * seccomp program): the rest of the root is built first. */
        if (c->setup_before_hold && c->self_place) {
                prepare_inheritance(c);
                r = enter_own_cgroups(c, &e);
                if (r < 0)
                        fail(c, r, &e);
                mark(c, MARK_INIT_PLACED);
        } else if (c->setup_before_hold && !c->placed) {
                prepare_inheritance(c);
                wait_for_placement(c);
                mark(c, MARK_INIT_GO);
        }
        /* After placement, so the namespace's root is the run's own cgroup. */
        if (c->cgroupns && unshare(CLONE_NEWCGROUP) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to create a cgroup namespace");
                fail(c, r, &e);
        }
        r = setup_rootfs_late(c, &e);
        if (r >= 0)
                r = hide_caller_command_line(&e);
        if (r < 0)
                fail(c, r, &e);
        mark(c, MARK_INIT_LATE);
        prepare_inheritance(c);
        if (c->setup_before_hold && c->placed) {
                wait_for_placement(c);
                mark(c, MARK_INIT_GO);
        }

        /* Block before the vfork(), so no signal is lost between it and sigwaitinfo(); the skill
         * process unblocks them again. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&mask, forwarded_signals[i]);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to block signals");
                fail(c, r, &e);
        }

        /* The init keeps only what the skill process needs (it closes its three stdio fds by
         * number), and after the vfork() only the control socket. */
        r = close_all_fds_except((const int[]) { c->ctl_fd, c->stdin_fd, c->stdout_fd, c->stderr_fd,
                                                 c->hold_fd }, c->verdict_later ? 5 : 4);
        if (r < 0) {
                r = STEP_FAIL(e.what, r, "Failed to close file descriptors");
                fail(c, r, &e);
        }

        /* The init becomes the sandbox user before the skill process exists, which starts with
         * the init's credentials: no capability, no_new_privs, no group, the run's uid, a keyring
         * of the sandbox user's. Then the init can kill every process of the run without any
         * capability, holds no privilege a skill could hope to borrow, and the skill may signal
         * it (PID 1 forwards SIGTERM) from its first instruction. Not before the uid's verdict:
         * nothing runs as a uid the user database names. */
        wait_for_verdict(c);
        mark(c, MARK_INIT_VERDICT);
        r = drop_privileges(c, &e);
        if (r >= 0)
                r = join_new_session_keyring(&e);
        if (r < 0)
                fail(c, r, &e);
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        /* Changing the uid cleared the parent-death signal; set it again, and catch a parent that
         * died in between by its end of the control socket hanging up. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
            poll(&(struct pollfd) { .fd = c->ctl_fd, .events = POLLIN }, 1, 0) != 0)
                _exit(SANDBOX_EXIT_SETUP);
        mark(c, MARK_INIT_DROPPED);

        /* vfork(): the skill process runs in the init's memory, on the init's stack below this
         * frame, until its execve() or _exit(), and the init sleeps until then (skill_exec() says
         * what it may do there). fork() copied the page tables of the init, a copy of the
         * caller's address space (0.07 ms), and the first write to each page then cost the skill
         * process a fault; the init waits for the skill process either way. */
        skill_cpus_pinned = pin_to_this_cpu(&skill_cpus);
        pid = vfork(); /* NOLINT(clang-analyzer-security.insecureAPI.vfork): the comment above */
        if (pid < 0) {
                r = STEP_FAIL(e.what, errno, "Failed to start the skill process");
                fail(c, r, &e);
        }
        if (pid == 0)
                skill_exec(c);
        if (skill_cpus_pinned)
                (void) sched_setaffinity(0, sizeof(skill_cpus), &skill_cpus);
        /* The skill process has called execve() or exited: its marks, the init's among them, are
         * sent (once more here, for a skill process that failed before its own). */
        send_marks(c);
        memset(marks, 0, sizeof(marks));
        (void) close_all_fds_except((const int[]) { c->ctl_fd }, 1);
        init_loop(c, pid);
}
