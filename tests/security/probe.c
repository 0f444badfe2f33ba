/* The adversarial suite's probe: copied into a skill and run inside the sandbox, it attacks the
 * way a hostile skill would and prints what happened, one "what detail value" line each, for the
 * test on the host to judge. Values are errno numbers (0: the call succeeded), counts or sizes.
 * Whatever it manages to read is printed too, escaped, so that a secret that leaked shows up in
 * the run's output where the host looks for it.
 *
 * Plain C on libc alone (threads included): it must run with nothing but /usr bound. */
#include <dirent.h>
#include <linux/sock_diag.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000L

/* A write whose failure changes nothing worth reporting (the host judges by other means). */
static void put(int fd, const void *p, size_t n) {
        ssize_t r = write(fd, p, n);

        (void) r;
}

static int err(long r) {
        return r < 0 ? errno : 0;
}

/* Prints what was read, escaped, so a leaked secret is visible to the host as plain text. */
static void print_data(const char *what, const char *data, size_t n) {
        printf("data %s ", what);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) data[i];

                if (c >= 0x20 && c < 0x7f && c != '\\')
                        putchar(c);
                else if (c == '\0')
                        putchar(' ');
                else
                        printf("\\x%02x", c);
        }
        putchar('\n');
}

/* Reads up to 4 KiB of path; prints "read PATH ERRNO" and, on success, the data. */
static int try_read(const char *path) {
        char buf[4096];
        ssize_t n;
        int fd, e;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                printf("read %s %d\n", path, errno);
                return errno;
        }
        n = read(fd, buf, sizeof(buf));
        e = n < 0 ? errno : 0;
        close(fd);
        printf("read %s %d\n", path, e);
        if (n > 0)
                print_data(path, buf, (size_t) n);
        return e;
}

static bool is_pid(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* ---- the file system ---- */

/* secret is the host's absolute path of a world-readable secret, rel its name relative to the
 * directory the caller was in; every way a process could reach a host file is tried. */
static int probe_secrets(const char *secret, const char *rel) {
        char path[PATH_MAX];
        struct dirent *de;
        DIR *d;

        try_read(secret);
        snprintf(path, sizeof(path), "/proc/self/root%s", secret);
        try_read(path);
        snprintf(path, sizeof(path), "/proc/thread-self/root%s", secret);
        try_read(path);
        snprintf(path, sizeof(path), "/work/../../../../..%s", secret);
        try_read(path);
        snprintf(path, sizeof(path), "/skill/../../../..%s", secret);
        try_read(path);
        snprintf(path, sizeof(path), "/skill/../%s", rel);
        try_read(path);
        snprintf(path, sizeof(path), "/out/../../..%s", secret);
        try_read(path);

        /* Every process this PID namespace shows: its root, its cwd, its environment, its
         * memory. The init is a fork of the caller and still has the caller's environment. */
        d = opendir("/proc");
        while (d && (de = readdir(d))) {
                if (!is_pid(de->d_name))
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/root%s", de->d_name, secret);
                try_read(path);
                snprintf(path, sizeof(path), "/proc/%s/cwd/%s", de->d_name, rel);
                try_read(path);
                snprintf(path, sizeof(path), "/proc/%s/environ", de->d_name);
                try_read(path);
                snprintf(path, sizeof(path), "/proc/%s/mem", de->d_name);
                try_read(path);
        }
        if (d)
                closedir(d);

        /* Descriptors: a file or a directory the caller leaked would show up here. */
        for (int fd = 3; fd < 1024; fd++) {
                struct stat st;
                char link[64], target[PATH_MAX];
                ssize_t n;
                int sub;

                if (fstat(fd, &st) < 0)
                        continue;
                snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
                n = readlink(link, target, sizeof(target) - 1);
                target[n > 0 ? n : 0] = '\0';
                /* opendir() above is closed; anything left is inherited. */
                printf("fd %d %s\n", fd, target);
                try_read(link);
                sub = openat(fd, rel, O_RDONLY | O_CLOEXEC);
                if (sub >= 0) {
                        char buf[256];
                        ssize_t k = read(sub, buf, sizeof(buf));

                        if (k > 0)
                                print_data("openat", buf, (size_t) k);
                        close(sub);
                }
        }
        return 0;
}

/* Creates marker in every directory named, and tries to change existing files; prints
 * "create DIR ERRNO" and "<op> PATH ERRNO". */
static int probe_write(int argc, char **argv) {
        const char *marker = argv[0];
        int i = 1;

        for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
                char path[PATH_MAX];
                int fd;

                snprintf(path, sizeof(path), "%s/%s", argv[i], marker);
                fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
                printf("create %s %d\n", argv[i], fd < 0 ? errno : 0);
                if (fd >= 0)
                        close(fd);
                snprintf(path, sizeof(path), "%s/%s.d", argv[i], marker);
                printf("mkdir %s %d\n", argv[i], err(mkdir(path, 0755)));
        }
        for (i++; i < argc; i++) {
                char to[PATH_MAX];
                struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_NOW } };
                int fd = open(argv[i], O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);

                printf("append %s %d\n", argv[i], fd < 0 ? errno : 0);
                if (fd >= 0)
                        close(fd);
                printf("truncate %s %d\n", argv[i], err(truncate(argv[i], 0)));
                printf("chmod %s %d\n", argv[i], err(chmod(argv[i], 04777)));
                printf("chown %s %d\n", argv[i], err(chown(argv[i], getuid(), getgid())));
                printf("utimens %s %d\n", argv[i], err(utimensat(AT_FDCWD, argv[i], ts, 0)));
                snprintf(to, sizeof(to), "%s.%s", argv[i], marker);
                printf("rename %s %d\n", argv[i], err(rename(argv[i], to)));
                printf("unlink %s %d\n", argv[i], err(unlink(argv[i])));
        }
        return 0;
}

/* link(2) and its relatives: a second name for a file outside the writable places, or a name
 * outside them for a file inside. */
static int probe_links(const char *outside_file) {
        static const char *const into[] = { "/work", "/tmp", "/home/skill", "/out/files", "/dev/shm" };
        static const char *const onto[] = { "/usr", "/etc", "/skill", "/skill/scripts", "/", "/run" };
        char to[PATH_MAX], fdpath[64];
        int fd;

        fd = open("/work/own", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        for (size_t i = 0; i < sizeof(into) / sizeof(into[0]); i++) {
                snprintf(to, sizeof(to), "%s/hardlink", into[i]);
                printf("link-in %s %d\n", into[i], err(link(outside_file, to)));
                printf("link-skill %s %d\n", into[i], err(link("/skill/probe", to)));
        }
        for (size_t i = 0; i < sizeof(onto) / sizeof(onto[0]); i++) {
                snprintf(to, sizeof(to), "%s/hardlink", onto[i]);
                printf("link-out %s %d\n", onto[i], err(link("/work/own", to)));
                printf("symlink-out %s %d\n", onto[i], err(symlink("/work/own", to)));
        }
        /* Through an fd: AT_SYMLINK_FOLLOW on /proc/self/fd, and AT_EMPTY_PATH. */
        fd = open(outside_file, O_RDONLY | O_CLOEXEC);
        snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
        printf("linkat-procfd %d\n",
               err(linkat(AT_FDCWD, fdpath, AT_FDCWD, "/work/viafd", AT_SYMLINK_FOLLOW)));
        printf("linkat-empty %d\n", err(linkat(fd, "", AT_FDCWD, "/work/viaempty", AT_EMPTY_PATH)));
        if (fd >= 0)
                close(fd);
        return 0;
}

static int probe_mknod(void) {
        static const char *const dirs[] = {
                "/work", "/tmp", "/home/skill", "/out/files", "/dev/shm", "/dev"
        };
        static const char *const devices[] = {
                "/dev/mem",      "/dev/kmem",      "/dev/port",         "/dev/kmsg",
                "/dev/console",  "/dev/tty",       "/dev/ptmx",         "/dev/net/tun",
                "/dev/fuse",     "/dev/kvm",       "/dev/sda",          "/dev/vda",
                "/dev/nvme0n1",  "/dev/loop0",     "/dev/loop-control", "/dev/mapper/control",
                "/dev/snapshot", "/dev/cpu/0/msr",
        };
        struct dirent *de;
        DIR *d;

        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/chr", dirs[i]);
                printf("mknod-chr %s %d\n", dirs[i], err(mknod(path, S_IFCHR | 0666, makedev(1, 1))));
                snprintf(path, sizeof(path), "%s/blk", dirs[i]);
                printf("mknod-blk %s %d\n", dirs[i], err(mknod(path, S_IFBLK | 0666, makedev(7, 0))));
        }
        /* A FIFO is no device: that it works shows the refusals above are about devices. */
        printf("mkfifo /work %d\n", err(mkfifo("/work/fifo", 0644)));
        for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
                int fd = open(devices[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

                printf("open %s %d\n", devices[i], fd < 0 ? errno : 0);
                if (fd >= 0)
                        close(fd);
        }
        d = opendir("/dev");
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        printf("dev %s\n", de->d_name);
        if (d)
                closedir(d);
        return 0;
}

/* ---- identity and the kernel surface ---- */

static void print_status(const char *who, const char *path) {
        static const char *const keys[] = {
                "CapInh:",     "CapPrm:",  "CapEff:", "CapBnd:", "CapAmb:",
                "NoNewPrivs:", "Seccomp:", "Uid:",    "Gid:",    "Groups:",
        };
        char line[512];
        FILE *f = fopen(path, "re");

        if (!f) {
                printf("status %s unreadable %d\n", who, errno);
                return;
        }
        while (fgets(line, sizeof(line), f))
                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                        if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
                                char *v = line + strlen(keys[i]);

                                v += strspn(v, " \t");
                                v[strcspn(v, "\n")] = '\0';
                                /* "Uid: 1 1 1 1" keeps its spaces as underscores, one token. */
                                for (char *p = v; *p; p++)
                                        if (*p == ' ' || *p == '\t')
                                                *p = '_';
                                printf("%s %.*s %s\n", who, (int) strlen(keys[i]) - 1, keys[i],
                                       *v ? v : "-");
                        }
        fclose(f);
}

static int probe_status(void) {
        print_status("self", "/proc/self/status");
        print_status("init", "/proc/1/status");
        return 0;
}

/* The raw entry points. Each returns the kernel's answer (negative errno) if it returns. */
static long call_64(long nr, long a0, long a1) {
        long r = syscall(nr, a0, a1, 0, 0, 0, 0);

        return r < 0 ? -errno : r;
}

static long call_x32(long nr, long a0, long a1) {
        return call_64(nr | X32_SYSCALL_BIT, a0, a1);
}

static long call_i386(long nr, long a0, long a1) {
        long ret = -ENOSYS;
#if defined(__x86_64__)
        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(nr), "b"(a0), "c"(a1), "d"(0), "S"(0), "D"(0)
                         : "memory");
#else
        (void) nr, (void) a0, (void) a1;
#endif
        return ret;
}

/* One attempt in a child of its own: a kill takes only the child. Prints "sys ABI NAME exit N"
 * (N: the errno the call returned, 0 for success) or "sys ABI NAME signal N". */
static void attempt(const char *abi, const char *name, long (*call)(long, long, long), long nr, long a0,
                    long a1) {
        int status;
        pid_t pid;

        if (nr < 0) {
                printf("sys %s %s none 0\n", abi, name);
                return;
        }
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                printf("sys %s %s fork-failed %d\n", abi, name, errno);
                return;
        }
        if (pid == 0) {
                long r = call(nr, a0, a1);

                /* Whatever was created (a clone's child) leaves at once too. */
                _exit(r < 0 ? (int) -r : 0);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status))
                printf("sys %s %s signal %d\n", abi, name, WTERMSIG(status));
        else
                printf("sys %s %s exit %d\n", abi, name, WEXITSTATUS(status));
}

/* Arguments: NAME:NR64:NR32:NRX32:A0:A1 (numbers in hex; -1: not on that entry point). */
static int probe_abi(int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                char name[64];
                long nr64, nr32, nrx32, a0, a1;

                if (sscanf(argv[i], "%63[^:]:%lx:%lx:%lx:%lx:%lx", name, &nr64, &nr32, &nrx32, &a0, &a1) !=
                    6) {
                        printf("bad-spec %s\n", argv[i]);
                        continue;
                }
                attempt("64", name, call_64, nr64, a0, a1);
                attempt("32", name, call_i386, nr32, a0, a1);
                attempt("x32", name, call_x32, nrx32, a0, a1);
        }
        return 0;
}

static void *thread_i386(void *p) {
        (void) p;
        /* getpid through int 0x80: the filter kills the process, not just this thread. */
        call_i386(20, 0, 0);
        return NULL;
}

static int probe_i386_thread(void) {
        pthread_t t;

        if (pthread_create(&t, NULL, thread_i386, NULL) != 0)
                return 3;
        pthread_join(t, NULL);
        printf("survived\n");
        return 0;
}

/* The filter is inherited: the same refusal in this process, a forked child, a thread and an
 * exec'd program. */
static void survive_line(const char *where) {
        char line[256], seccomp[32] = "?";
        FILE *f = fopen("/proc/thread-self/status", "re");

        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Seccomp: %31s", seccomp) == 1)
                        break;
        if (f)
                fclose(f);
        printf("survive %s unshare %d mount %d seccomp %s\n", where, err(unshare(CLONE_NEWUSER)),
               err(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL)), seccomp);
        fflush(stdout);
}

static void *survive_thread(void *p) {
        (void) p;
        survive_line("thread");
        return NULL;
}

static int probe_survive(const char *self) {
        pthread_t t;
        pid_t pid;

        survive_line("main");
        pid = fork();
        if (pid == 0) {
                survive_line("fork");
                _exit(0);
        }
        waitpid(pid, NULL, 0);
        if (pthread_create(&t, NULL, survive_thread, NULL) == 0)
                pthread_join(t, NULL);
        execl(self, self, "survive-exec", (char *) NULL);
        printf("exec-failed %d\n", errno);
        return 1;
}

static unsigned long ns_inode(const char *ns) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
        return stat(path, &st) < 0 ? 0 : (unsigned long) st.st_ino;
}

struct clone_args_v0 {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* Every way to a new user namespace; a child that got one would say "created". */
static int probe_userns(void) {
        struct clone_args_v0 ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
        unsigned long before = ns_inode("user");
        int status;
        long r;

        printf("userns unshare %d\n", err(unshare(CLONE_NEWUSER)));
        printf("userns unshare-all %d\n",
               err(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)));
        fflush(stdout);
        r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
        if (r == 0) {
                printf("created clone\n");
                _exit(0);
        }
        printf("userns clone %d\n", err(r));
        if (r > 0)
                waitpid((pid_t) r, NULL, 0);
        fflush(stdout);
        r = syscall(SYS_clone3, &ca, sizeof(ca));
        if (r == 0) {
                printf("created clone3\n");
                _exit(0);
        }
        printf("userns clone3 %d\n", err(r));
        if (r > 0)
                waitpid((pid_t) r, NULL, 0);
        printf("userns setns %d\n",
               err(setns(open("/proc/1/ns/user", O_RDONLY | O_CLOEXEC), CLONE_NEWUSER)));
        fflush(stdout);

        /* util-linux's unshare(1), if the host has it: another program, the same answer. */
        if (access("/usr/bin/unshare", X_OK) == 0) {
                pid_t pid = fork();

                if (pid == 0) {
                        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

                        dup2(null, 2);
                        execl("/usr/bin/unshare", "unshare", "--user", "--map-root-user", "/bin/true",
                              (char *) NULL);
                        _exit(127);
                }
                waitpid(pid, &status, 0);
                printf("userns unshare-tool %d\n",
                       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        }
        printf("userns same-ns %d\n", before != 0 && before == ns_inode("user"));
        return 0;
}

/* TIOCSTI on every descriptor and on the terminal a process could still open. */
static int probe_tty(void) {
        char c = 'Z';
        int ttys = 0, fd;

        for (int i = 0; i < 1024; i++) {
                if (fcntl(i, F_GETFD) < 0)
                        continue;
                if (isatty(i))
                        ttys++;
                printf("tiocsti fd%d %d\n", i, err(ioctl(i, TIOCSTI, &c)));
        }
        printf("ttys %d\n", ttys);
        fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
        printf("open /dev/tty %d\n", fd < 0 ? errno : 0);
        if (fd >= 0)
                printf("tiocsti /dev/tty %d\n", err(ioctl(fd, TIOCSTI, &c)));
        /* Leave the terminal concealing and the line unfinished: what follows must still show. */
        printf("fake: skillctl: succeeded, exit 0\x1b[8m");
        return 0;
}

/* ---- network and IPC ---- */

static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, uint16_t port) {
        struct sockaddr_in *in = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ss;

        memset(ss, 0, sizeof(*ss));
        if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons(port);
                *len = sizeof(*in);
                return AF_INET;
        }
        if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(port);
                *len = sizeof(*in6);
                return AF_INET6;
        }
        return -1;
}

/* ADDR:PORT for TCP connects, udp:ADDR:PORT for a datagram carrying marker. */
static int probe_net(const char *marker, int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                bool udp = strncmp(argv[i], "udp:", 4) == 0;
                char addr[128];
                const char *spec = udp ? argv[i] + 4 : argv[i], *colon;
                struct sockaddr_storage ss;
                socklen_t len;
                int family, fd, r;

                colon = strrchr(spec, ':');
                if (!colon || (size_t) (colon - spec) >= sizeof(addr))
                        continue;
                memcpy(addr, spec, colon - spec);
                addr[colon - spec] = '\0';
                family = parse_addr(addr, &ss, &len, (uint16_t) atoi(colon + 1));
                if (family < 0)
                        continue;
                fd = socket(family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        r = errno; /* refused before any address is tried */
                else if (udp)
                        r = err(sendto(fd, marker, strlen(marker), 0, (struct sockaddr *) &ss, len));
                else
                        r = err(connect(fd, (struct sockaddr *) &ss, len));
                printf("%s %s %d\n", udp ? "udp" : "tcp", spec, r);
                if (fd >= 0)
                        close(fd);
        }
        return 0;
}

static int probe_dns(void) {
        struct addrinfo *ai = NULL;
        int r = getaddrinfo("example.com", "443", NULL, &ai);

        printf("dns %d\n", r == 0 ? 0 : 1);
        if (ai)
                freeaddrinfo(ai);
        printf("resolv.conf %d\n", access("/etc/resolv.conf", F_OK) < 0 ? errno : 0);
        return 0;
}

/* PATH or @ABSTRACT, stream and datagram, each carrying the marker. */
static int probe_unix(const char *marker, int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                const char *p = argv[i];
                socklen_t len;
                int fd, r;

                strncpy(sa.sun_path, p, sizeof(sa.sun_path) - 1);
                len = offsetof(struct sockaddr_un, sun_path) + strlen(p);
                if (p[0] == '@')
                        sa.sun_path[0] = '\0';

                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                r = err(connect(fd, (struct sockaddr *) &sa, len));
                if (r == 0)
                        put(fd, marker, strlen(marker));
                printf("unix-stream %s %d\n", p, r);
                close(fd);
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                printf("unix-dgram %s %d\n", p,
                       err(sendto(fd, marker, strlen(marker), 0, (struct sockaddr *) &sa, len)));
                close(fd);
        }
        return 0;
}

/* Each argument FAMILY:TYPE:PROTOCOL (numbers, 0x allowed, 64 bits), or pair:FAMILY:TYPE for
 * socketpair(): "socket ARG ERRNO" each. Raw syscalls, so that every bit reaches the filter. */
static int probe_sockets(int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                unsigned long long f, t, p;
                long r;

                if (sscanf(argv[i], "pair:%lli:%lli", (long long *) &f, (long long *) &t) == 2) {
                        int sv[2];

                        r = syscall(SYS_socketpair, f, t, 0, sv);
                        if (r >= 0) {
                                close(sv[0]);
                                close(sv[1]);
                        }
                } else if (sscanf(argv[i], "%lli:%lli:%lli", (long long *) &f, (long long *) &t,
                                  (long long *) &p) == 3) {
                        r = syscall(SYS_socket, f, t, p);
                        if (r >= 0)
                                close((int) r);
                } else {
                        printf("bad-spec %s\n", argv[i]);
                        continue;
                }
                printf("socket %s %d\n", argv[i], err(r));
        }
        return 0;
}

static int count_lines(const char *path) {
        char line[512];
        int n = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                n++;
        fclose(f);
        return n;
}

/* The host's objects by key and by id: SHMKEY MSGKEY SEMKEY SHMID MSGID SEMID /MQNAME */
static int probe_ipc(int argc, char **argv) {
        struct msgbuf_small {
                long mtype;
                char mtext[128];
        } m;
        void *p;

        if (argc < 7)
                return 2;
        printf("shmget %d\n", err(shmget((key_t) strtol(argv[0], NULL, 0), 0, 0)));
        printf("msgget %d\n", err(msgget((key_t) strtol(argv[1], NULL, 0), 0)));
        printf("semget %d\n", err(semget((key_t) strtol(argv[2], NULL, 0), 0, 0)));
        p = shmat(atoi(argv[3]), NULL, SHM_RDONLY);
        printf("shmat %d\n", p == (void *) -1 ? errno : 0);
        if (p != (void *) -1)
                print_data("shm", p, 64);
        printf("msgrcv %d\n", err(msgrcv(atoi(argv[4]), &m, sizeof(m.mtext), 0, IPC_NOWAIT)));
        printf("semctl %d\n", err(semctl(atoi(argv[5]), 0, GETVAL)));
        printf("mq_open %d\n", err(mq_open(argv[6], O_RDONLY | O_NONBLOCK)));
        printf("sysvipc-shm %d\n", count_lines("/proc/sysvipc/shm"));
        printf("sysvipc-msg %d\n", count_lines("/proc/sysvipc/msg"));
        printf("sysvipc-sem %d\n", count_lines("/proc/sysvipc/sem"));
        return 0;
}

/* The caller's session keyring (inherited across fork and exec, unless the sandbox replaced it)
 * and the key named marker; with KEY and RING, the caller's key and keyring by their ids too. The
 * session keyring's id is printed as a value: "keyctl-session-id ID". */
static int probe_keys(const char *marker, const char *key_arg, const char *ring_arg) {
        char buf[256];
        long r;

        r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* KEY_SPEC_SESSION_KEYRING */, 0);
        printf("keyctl-session %d\n", err(r));
        if (r > 0)
                printf("keyctl-session-id %ld\n", r);
        r = syscall(SYS_request_key, "user", marker, NULL, 0);
        printf("request_key %d\n", err(r));
        if (r > 0 && syscall(SYS_keyctl, 11 /* KEYCTL_READ */, r, buf, sizeof(buf)) > 0)
                print_data("key", buf, strnlen(buf, sizeof(buf)));
        r = syscall(SYS_keyctl, 10 /* KEYCTL_SEARCH */, -3, "user", marker, 0);
        printf("keyctl-search %d\n", err(r));
        if (r > 0 && syscall(SYS_keyctl, 11 /* KEYCTL_READ */, r, buf, sizeof(buf)) > 0)
                print_data("key", buf, strnlen(buf, sizeof(buf)));
        /* Into the session keyring: the caller's, if it was inherited. */
        r = syscall(SYS_add_key, "user", marker, "planted", 7, -3 /* KEY_SPEC_SESSION_KEYRING */);
        printf("add_key %d\n", err(r));
        if (key_arg && ring_arg) {
                long key = strtol(key_arg, NULL, 10), ring = strtol(ring_arg, NULL, 10);

                memset(buf, 0, sizeof(buf));
                r = syscall(SYS_keyctl, 11 /* KEYCTL_READ */, key, buf, sizeof(buf));
                printf("keyctl-read-id %d\n", err(r));
                if (r > 0)
                        print_data("key", buf, strnlen(buf, sizeof(buf)));
                r = syscall(SYS_keyctl, 6 /* KEYCTL_DESCRIBE */, ring, buf, sizeof(buf));
                printf("keyctl-describe-ring %d\n", err(r));
                r = syscall(SYS_keyctl, 10 /* KEYCTL_SEARCH */, ring, "user", marker, 0);
                printf("keyctl-search-ring %d\n", err(r));
        }
        try_read("/proc/keys");
        try_read("/proc/key-users");
        return 0;
}

/* The init's command line, name and environment, which the caller's (skillctl's, the daemon's)
 * would be if the init did not hide them: "init-cmdline LEN" and the data of each. */
static int probe_init_cmdline(void) {
        char buf[65536];
        size_t len = 0;
        ssize_t n;
        int fd;

        fd = open("/proc/1/cmdline", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                printf("init-cmdline -%d\n", errno);
                return 0;
        }
        while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
                len += (size_t) n;
        close(fd);
        printf("init-cmdline %zu\n", len);
        print_data("/proc/1/cmdline", buf, len);
        try_read("/proc/1/comm");
        try_read("/proc/1/environ");
        try_read("/proc/1/status");
        return 0;
}

/* ---- resources ---- */

/* Writes 64 KiB blocks into DIR/fill until a write fails: "fill DIR BYTES ERRNO". */
static int probe_fill(int argc, char **argv) {
        static char block[64 * 1024];

        signal(SIGXFSZ, SIG_IGN);
        memset(block, 'f', sizeof(block));
        for (int i = 0; i < argc; i++) {
                char path[PATH_MAX];
                long long total = 0;
                int fd, e = 0;

                snprintf(path, sizeof(path), "%s/fill", argv[i]);
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0) {
                        printf("fill %s 0 %d\n", argv[i], errno);
                        continue;
                }
                for (;;) {
                        ssize_t n = write(fd, block, sizeof(block));

                        if (n < 0) {
                                e = errno;
                                break;
                        }
                        total += n;
                        if (n < (ssize_t) sizeof(block)) {
                                e = ENOSPC;
                                break;
                        }
                }
                close(fd);
                printf("fill %s %lld %d\n", argv[i], total, e);
                /* Free it again, so the next one is not short of memory for our sake. */
                unlink(path);
        }
        return 0;
}

/* Creates empty files (or directories) in DIR until that fails: "inodes DIR COUNT ERRNO". */
static int probe_inodes(const char *kind, int argc, char **argv) {
        bool dirs = strcmp(kind, "dirs") == 0;

        for (int i = 0; i < argc; i++) {
                long n = 0;
                int e = 0;

                for (;; n++) {
                        char path[PATH_MAX];

                        snprintf(path, sizeof(path), "%s/i%ld", argv[i], n);
                        if (dirs ? mkdir(path, 0755) < 0 : mknod(path, S_IFREG | 0644, 0) < 0) {
                                e = errno;
                                break;
                        }
                }
                printf("inodes %s %ld %d\n", argv[i], n, e);
                fflush(stdout);
        }
        return 0;
}

static int count_procs(void) {
        struct dirent *de;
        int n = 0;
        DIR *d = opendir("/proc");

        while (d && (de = readdir(d)))
                if (is_pid(de->d_name))
                        n++;
        if (d)
                closedir(d);
        return n;
}

/* Every process forks until fork fails, then waits to be killed; the first one to fail reports
 * how many processes the namespace holds and exits 1. */
static int probe_forkbomb(void) {
        for (;;) {
                pid_t pid = fork();

                if (pid < 0)
                        break;
                if (pid > 0)
                        continue;
                /* The child keeps going as a bomb of its own; it never reports. */
                for (;;) {
                        pid_t p = fork();

                        if (p < 0)
                                for (;;)
                                        pause();
                }
        }
        {
                int e = errno;

                printf("forkbomb %d procs %d\n", e, count_procs());
        }
        return 1;
}

static void *idle_thread(void *p) {
        (void) p;
        for (;;)
                pause();
        return NULL;
}

static int probe_threadbomb(void) {
        pthread_attr_t attr;
        long n = 0;
        int r;

        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        for (;; n++) {
                pthread_t t;

                r = pthread_create(&t, &attr, idle_thread, NULL);
                if (r != 0)
                        break;
        }
        printf("threadbomb %d threads %ld\n", r, n);
        fflush(stdout);
        return 1;
}

static void *burn_thread(void *p) {
        volatile unsigned long x = 0;

        (void) p;
        for (;;)
                x++;
        return NULL;
}

static int probe_burn(const char *n_arg) {
        int n = atoi(n_arg);

        for (int i = 1; i < n; i++) {
                pthread_t t;

                pthread_create(&t, NULL, burn_thread, NULL);
        }
        printf("burning %d\n", n);
        fflush(stdout);
        burn_thread(NULL);
        return 0;
}

/* n children each allocate and touch mb MiB, say so on a pipe and wait. Exits 0 once all of
 * them hold their memory at the same time, 1 as soon as one of them dies first. */
static int probe_memhog(const char *n_arg, const char *mb_arg) {
        int n = atoi(n_arg), ready = 0, pipefd[2];
        size_t size = (size_t) atol(mb_arg) << 20;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return 3;
        for (int i = 0; i < n; i++)
                if (fork() == 0) {
                        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                                       0);

                        if (p == MAP_FAILED)
                                _exit(3);
                        memset(p, 1, size);
                        put(pipefd[1], "r", 1);
                        for (;;)
                                pause();
                }
        close(pipefd[1]);
        /* SIGCHLD interrupts nothing here: a dead child is seen by waitpid below. */
        while (ready < n) {
                char c;
                int status;
                pid_t dead = waitpid(-1, &status, WNOHANG);

                if (dead > 0) {
                        printf("memhog child %s %d after %d ready\n",
                               WIFSIGNALED(status) ? "signal" : "exit",
                               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), ready);
                        return 1;
                }
                {
                        struct timeval tv = { .tv_usec = 100 * 1000 };
                        fd_set set;

                        FD_ZERO(&set);
                        FD_SET(pipefd[0], &set);
                        if (select(pipefd[0] + 1, &set, NULL, NULL, &tv) > 0 && read(pipefd[0], &c, 1) == 1)
                                ready++;
                }
        }
        printf("memhog all %d ready\n", ready);
        return 0;
}

/* Daemonizes the classic way and keeps a brood alive: double fork, setsid, fds closed, hangup
 * and termination ignored, a new name, children forked in a loop. The parent returns once the
 * daemon is up. */
static int probe_escape(const char *self, const char *marker) {
        int pipefd[2];
        char c;
        pid_t pid;

        if (pipe(pipefd) < 0)
                return 3;
        pid = fork();
        if (pid == 0) {
                setsid();
                if (fork() != 0)
                        _exit(0);
                close(pipefd[0]);
                /* The new program inherits the pipe's write end (no CLOEXEC) as fd 3. */
                if (pipefd[1] != 3) {
                        dup2(pipefd[1], 3);
                        close(pipefd[1]);
                }
                execl(self, marker, "hide", marker, (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        waitpid(pid, NULL, 0);
        printf("escaped %zd\n", read(pipefd[0], &c, 1));
        return 0;
}

static int probe_hide(const char *marker) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGCHLD, SIG_IGN);       /* children reap themselves */
        prctl(PR_SET_NAME, marker, 0, 0, 0);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        /* Up: tell the parent, then breed. */
        put(3, "u", 1);
        close(3);
        for (;;) {
                if (fork() == 0) {
                        prctl(PR_SET_NAME, marker, 0, 0, 0);
                        usleep(20 * 1000);
                        _exit(0);
                }
                usleep(10 * 1000);
        }
        return 0;
}

static int probe_core(bool die) {
        struct rlimit rl = {}, raise_to = { RLIM_INFINITY, RLIM_INFINITY };
        int status = 0;
        pid_t pid;

        getrlimit(RLIMIT_CORE, &rl);
        printf("core-soft %llu\n", (unsigned long long) rl.rlim_cur);
        printf("core-hard %llu\n", (unsigned long long) rl.rlim_max);
        printf("core-raise %d\n", err(setrlimit(RLIMIT_CORE, &raise_to)));
        pid = fork();
        if (pid == 0) {
                signal(SIGABRT, SIG_DFL);
                abort();
        }
        waitpid(pid, &status, 0);
        printf("core-child signal %d dumped %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
               WIFSIGNALED(status) && WCOREDUMP(status) ? 1 : 0);
        printf("core-files %d\n", access("/work/core", F_OK) == 0 || access("core", F_OK) == 0);
        fflush(stdout);
        if (die)
                abort();
        return 0;
}

/* ---- hostile inputs ---- */

static long long fd_size(int fd) {
        char buf[65536];
        long long n = 0;
        ssize_t k;

        while ((k = read(fd, buf, sizeof(buf))) > 0)
                n += k;
        return k < 0 ? -1 : n;
}

static int probe_input(void) {
        const char *file = getenv("SKILL_INPUT_FILE"), *env = getenv("SANDBOX_INPUT");
        int fd = file ? open(file, O_RDONLY | O_CLOEXEC) : -1;

        printf("stdin %lld\n", fd_size(0));
        printf("file %lld\n", fd >= 0 ? fd_size(fd) : -1LL);
        printf("env %zd\n", env ? (ssize_t) strlen(env) : (ssize_t) -1);
        return 0;
}

/* ---- hostile artifacts ---- */

static void chain(const char *what, int r) {
        printf("made %s %d\n", what, r < 0 ? errno : 0);
}

/* Leaves in /out/files every kind of entry a collector could trip over: links aiming at host
 * secrets and at the host's output directory (host_out) and its parent, FIFOs (one of them as
 * /out/output.json), a socket, a 200-level tree, names with newlines, escapes, invalid UTF-8,
 * dots and dashes, and an unreadable directory. */
static int probe_artifact_kinds(const char *host_out) {
        static const char *const names[] = {
                "new\nline", "esc\x1b[2Jcape", "bad\xff\xfeutf8", "...", ".. ", "..\n", "-rf", " lead",
                "tab\tname", "result.json", "..dots",
        };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char path[PATH_MAX], target[PATH_MAX];
        int fd, depth = 0;

        if (chdir("/out/files") < 0)
                return 3;
        chain("symlink-shadow", symlink("/etc/shadow", "shadow"));
        chain("symlink-up", symlink("../../../..", "up"));
        snprintf(target, sizeof(target), "%s/..", host_out);
        chain("symlink-host-parent", symlink(target, "host-parent"));
        chain("symlink-etc", symlink("/etc", "etcdir"));
        chain("symlink-loop", symlink("loop", "loop"));
        chain("fifo", mkfifo("fifo", 0644));
        chain("fifo-output-json", mkfifo("/out/output.json", 0644));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        strcpy(sa.sun_path, "/out/files/sock");
        chain("socket", bind(fd, (struct sockaddr *) &sa, sizeof(sa)));

        /* 200 levels deep, a file at the bottom. */
        if (mkdir("deep", 0755) == 0 && chdir("deep") == 0) {
                for (; depth < 200; depth++)
                        if (mkdir("d", 0755) < 0 || chdir("d") < 0)
                                break;
                fd = open("bottom", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0)
                        close(fd);
                printf("made deep %d\n", depth);
                if (chdir("/out/files") < 0)
                        return 3;
        }

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                fd = open(names[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                chain("name", fd);
                if (fd >= 0) {
                        put(fd, "n", 1);
                        close(fd);
                }
        }
        memset(path, 'L', 255);
        path[255] = '\0';
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        chain("name-255", fd);
        if (fd >= 0)
                close(fd);

        /* A directory its owner cannot read, with a file inside. */
        if (mkdir("locked", 0755) == 0) {
                fd = open("locked/inside", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0)
                        close(fd);
                chain("locked", chmod("locked", 0));
        }
        printf("done\n");
        return 0;
}

/* Files whose copies cost the host more than /out: a 100 GB sparse file (the file size limit
 * refuses it), sparse files at the size cap, one real MiB under many hard-linked names. */
static int probe_artifact_sizes(const char *cap_arg) {
        static char block[64 * 1024];
        long long cap = atoll(cap_arg);
        char path[64];
        int fd;

        signal(SIGXFSZ, SIG_IGN);
        if (chdir("/out/files") < 0)
                return 3;
        fd = open("huge", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        chain("sparse-100G", ftruncate(fd, 100LL << 30));
        close(fd);
        for (int i = 0; i < 8; i++) {
                snprintf(path, sizeof(path), "sparse%d", i);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                chain(path, ftruncate(fd, cap));
                close(fd);
        }
        memset(block, 'h', sizeof(block));
        fd = open("real", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        for (int i = 0; i < 16; i++)
                put(fd, block, sizeof(block));
        close(fd);
        for (int i = 0; i < 32; i++) {
                snprintf(path, sizeof(path), "hard%02d", i);
                chain(path, link("real", path));
        }
        printf("done\n");
        return 0;
}

/* Fills loopback socket queues nobody reads: TCP pairs (the sender's queue and the receiver's,
 * both asked for the largest buffers) and UDP datagrams to bound sockets, each up to mb MiB or
 * until the kernel refuses. Prints what it queued, "sock holding", then holds it all for secs
 * seconds, for the host to measure. "tcp" or "udp" as the last argument: that one only. */
static int probe_sockhold(const char *secs_arg, const char *mb_arg, const char *only) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        long long cap = atoll(mb_arg) << 20, tcp = 0, udp = 0;
        static char buf[65000];
        int big = 64 << 20, lfd, stalls = 0;

        memset(buf, 'x', sizeof(buf));
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 16) < 0 ||
            getsockname(lfd, (struct sockaddr *) &sa, &len) < 0)
                return 3;
        while (strcmp(only, "udp") != 0 && tcp < cap && stalls < 3) {
                int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;
                long long before = tcp;

                if (c < 0)
                        break;
                (void) setsockopt(c, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
                if (connect(c, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        break;
                s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (s < 0)
                        break;
                (void) setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
                (void) fcntl(c, F_SETFL, O_NONBLOCK);
                for (;;) {
                        ssize_t n = send(c, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);

                        if (n <= 0) {
                                /* The receiver's window may still open up: one more try. */
                                usleep(20000);
                                n = send(c, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);
                                if (n <= 0)
                                        break;
                        }
                        tcp += n;
                        if (tcp >= cap)
                                break;
                }
                stalls = tcp - before < 65536 ? stalls + 1 : 0;
        }
        stalls = 0;
        while (strcmp(only, "tcp") != 0 && udp < cap && stalls < 3) {
                struct sockaddr_in ua = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t ulen = sizeof(ua);
                int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0),
                    tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                long long before = udp;

                if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *) &ua, sizeof(ua)) < 0 ||
                    getsockname(rx, (struct sockaddr *) &ua, &ulen) < 0)
                        break;
                (void) setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
                for (int i = 0; i < 4096 && udp < cap; i++) {
                        uint32_t mem[SK_MEMINFO_VARS] = {};
                        socklen_t mlen = sizeof(mem);
                        long long held;

                        if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *) &ua, ulen) <= 0)
                                break;
                        /* Datagrams the receiver dropped are not held: count what it queued. */
                        if (getsockopt(rx, SOL_SOCKET, SO_MEMINFO, mem, &mlen) < 0)
                                break;
                        held = before + mem[SK_MEMINFO_RMEM_ALLOC];
                        if (held <= udp)
                                break;
                        udp = held;
                }
                (void) close(tx);
                stalls = udp - before < 65536 ? stalls + 1 : 0;
        }
        printf("sock tcp %lld\nsock udp %lld\nsock holding 1\n", tcp, udp);
        fflush(stdout);
        sleep((unsigned) atoi(secs_arg));
        return 0;
}

/* Host-wide counters and watches: Linux AIO contexts until the kernel refuses (each counts in the
 * host's fs.aio-nr), then inotify and fanotify on the bound host /usr/bin while the host runs
 * programs. Prints the errnos, how many contexts it got and how many events it saw, and holds the
 * contexts for secs seconds. */
static int probe_counters(const char *secs_arg) {
        unsigned long ctx;
        long n = 0, e = 0, events = 0;
        int fd;

        for (;;) {
                ctx = 0;
                if (syscall(SYS_io_setup, 4096, &ctx) < 0) {
                        e = errno;
                        break;
                }
                n++;
        }
        printf("aio contexts %ld\naio errno %ld\n", n, e);
        fd = (int) syscall(SYS_inotify_init1, IN_CLOEXEC | IN_NONBLOCK);
        printf("inotify errno %d\n", fd < 0 ? errno : 0);
        if (fd >= 0 && inotify_add_watch(fd, "/usr/bin", IN_OPEN | IN_ACCESS) >= 0) {
                char buf[4096];

                for (int i = 0; i < 20; i++) {
                        ssize_t k = read(fd, buf, sizeof(buf));

                        for (ssize_t off = 0; k > 0 && off < k;) {
                                struct inotify_event *ev = (struct inotify_event *) (buf + off);

                                events++;
                                off += (ssize_t) sizeof(*ev) + ev->len;
                        }
                        usleep(50000);
                }
        }
        printf("inotify events %ld\n", events);
        fd = (int) syscall(SYS_fanotify_init, 0, O_RDONLY);
        printf("fanotify errno %d\n", fd < 0 ? errno : 0);
        fflush(stdout);
        sleep((unsigned) atoi(secs_arg));
        return 0;
}

/* The run's init is pid 1 and has the skill's uid: every way to change it by pid. Prints each
 * call's errno, then the init's limits and nice value as the kernel shows them. */
static int probe_init_attack(void) {
        struct rlimit five = { 5, 5 }, one = { 1, 1 }, mine = { 64, 64 }, got;
        cpu_set_t set;
        struct sched_param sp = {};
        char line[256];
        int nice_now;
        FILE *f;

        CPU_ZERO(&set);
        CPU_SET(0, &set);
        printf("init prlimit-nofile %d\n", err(syscall(SYS_prlimit64, 1, RLIMIT_NOFILE, &five, NULL)));
        printf("init prlimit-cpu %d\n", err(syscall(SYS_prlimit64, 1, RLIMIT_CPU, &one, NULL)));
        printf("init prlimit-read %d\n", err(syscall(SYS_prlimit64, 1, RLIMIT_NOFILE, NULL, &got)));
        printf("init setpriority %d\n", err(setpriority(PRIO_PROCESS, 1, 19)));
        printf("init setpriority-pgrp %d\n", err(setpriority(PRIO_PGRP, 1, 19)));
        printf("init setpriority-user %d\n", err(setpriority(PRIO_USER, 0, 19)));
        printf("init setaffinity %d\n", err(sched_setaffinity(1, sizeof(set), &set)));
        printf("init setscheduler %d\n", err(sched_setscheduler(1, SCHED_IDLE, &sp)));
        printf("init ioprio %d\n", err(syscall(SYS_ioprio_set, 1, 1, 7 | (3 << 13))));
        printf("init kill-stop %d\n", err(kill(1, SIGSTOP)));
        f = fopen("/proc/1/oom_score_adj", "w");
        printf("init oom-write %d\n", f ? (fputs("1000", f) < 0 || fclose(f) != 0 ? errno : 0) : errno);
        /* The skill's own processes stay its to change. */
        printf("self prlimit %d\n", err(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &mine, NULL)));
        printf("self prlimit-pid %d\n", err(syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, &mine, NULL)));
        /* One step nicer than it runs (lowering it needs a privilege, also where the test itself
         * runs under nice). */
        errno = 0;
        nice_now = getpriority(PRIO_PROCESS, 0);
        printf("self setpriority %d\n", errno != 0 ? errno : err(setpriority(PRIO_PROCESS, 0, nice_now + 1)));

        f = fopen("/proc/1/limits", "r");
        while (f && fgets(line, sizeof(line), f)) {
                unsigned long long v;

                if (sscanf(line, "Max open files %llu", &v) == 1)
                        printf("init nofile %llu\n", v);
                if (strncmp(line, "Max cpu time", 12) == 0)
                        printf("init cpu %s\n", strstr(line, "unlimited") ? "unlimited" : "limited");
        }
        if (f)
                fclose(f);
        f = fopen("/proc/1/stat", "r");
        if (f && fgets(line, sizeof(line), f)) {
                char *p = strrchr(line, ')');
                int field = 2;

                for (char *tok = p ? strtok(p + 1, " ") : NULL; tok; tok = strtok(NULL, " "))
                        if (++field == 19) {
                                printf("init nice %s\n", tok);
                                break;
                        }
        }
        if (f)
                fclose(f);
        return 0;
}

int main(int argc, char *argv[]) {
        const char *m;

        if (argc < 2)
                return 2;
        setvbuf(stdout, NULL, _IOLBF, 0);
        m = argv[1];

        if (strcmp(m, "secrets") == 0 && argc == 4)
                return probe_secrets(argv[2], argv[3]);
        if (strcmp(m, "write") == 0 && argc > 2)
                return probe_write(argc - 2, argv + 2);
        if (strcmp(m, "links") == 0 && argc == 3)
                return probe_links(argv[2]);
        if (strcmp(m, "mknod") == 0)
                return probe_mknod();
        if (strcmp(m, "status") == 0)
                return probe_status();
        if (strcmp(m, "abi") == 0)
                return probe_abi(argc - 2, argv + 2);
        if (strcmp(m, "i386-thread") == 0)
                return probe_i386_thread();
        if (strcmp(m, "survive") == 0)
                return probe_survive(argv[0]);
        if (strcmp(m, "survive-exec") == 0) {
                survive_line("exec");
                return 0;
        }
        if (strcmp(m, "init-cmdline") == 0)
                return probe_init_cmdline();
        if (strcmp(m, "userns") == 0)
                return probe_userns();
        if (strcmp(m, "tty") == 0)
                return probe_tty();
        if (strcmp(m, "net") == 0 && argc > 2)
                return probe_net(argv[2], argc - 3, argv + 3);
        if (strcmp(m, "dns") == 0)
                return probe_dns();
        if (strcmp(m, "unix") == 0 && argc > 2)
                return probe_unix(argv[2], argc - 3, argv + 3);
        if (strcmp(m, "sockets") == 0)
                return probe_sockets(argc - 2, argv + 2);
        if (strcmp(m, "ipc") == 0)
                return probe_ipc(argc - 2, argv + 2);
        if (strcmp(m, "keys") == 0 && (argc == 3 || argc == 5))
                return probe_keys(argv[2], argc == 5 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL);
        if (strcmp(m, "fill") == 0)
                return probe_fill(argc - 2, argv + 2);
        if (strcmp(m, "inodes") == 0 && argc > 2)
                return probe_inodes(argv[2], argc - 3, argv + 3);
        if (strcmp(m, "forkbomb") == 0)
                return probe_forkbomb();
        if (strcmp(m, "threadbomb") == 0)
                return probe_threadbomb();
        if (strcmp(m, "burn") == 0 && argc == 3)
                return probe_burn(argv[2]);
        if (strcmp(m, "memhog") == 0 && argc == 4)
                return probe_memhog(argv[2], argv[3]);
        if (strcmp(m, "escape") == 0 && argc == 3)
                return probe_escape("/skill/probe", argv[2]);
        if (argc == 3 && strcmp(argv[1], "hide") == 0)
                return probe_hide(argv[2]);
        if (strcmp(m, "core") == 0)
                return probe_core(argc > 2 && strcmp(argv[2], "die") == 0);
        if (strcmp(m, "input") == 0)
                return probe_input();
        if (strcmp(m, "artifact-kinds") == 0 && argc == 3)
                return probe_artifact_kinds(argv[2]);
        if (strcmp(m, "artifact-sizes") == 0 && argc == 3)
                return probe_artifact_sizes(argv[2]);
        if (strcmp(m, "counters") == 0 && argc == 3)
                return probe_counters(argv[2]);
        if (strcmp(m, "init-attack") == 0)
                return probe_init_attack();
        if (strcmp(m, "sockhold") == 0 && (argc == 4 || argc == 5))
                return probe_sockhold(argv[2], argv[3], argc == 5 ? argv[4] : "both");
        return 2;
}
