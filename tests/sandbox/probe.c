/* A probe the sandbox tests copy into a skill and run inside the sandbox: it tries what a hostile
 * skill would try and prints what happened, one "name value" line each, for the test on the host
 * to check. Deliberately plain C on libc alone, so it runs with nothing but /usr bound. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stddef.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void report(const char *name, long r) {
        printf("%s %d\n", name, r < 0 ? errno : 0);
}

/* Each refused syscall with arguments that would fail differently (EFAULT, EBADF, EINVAL) or
 * succeed without the filter, so EPERM (ENOSYS for clone3) can only come from seccomp. */
static int probe_syscalls(void) {
        char buf[64] = {};

        report("unshare_user", syscall(SYS_unshare, CLONE_NEWUSER));
        report("unshare_net", syscall(SYS_unshare, CLONE_NEWNET));
        report("unshare_ns", syscall(SYS_unshare, CLONE_NEWNS));
        report("clone_user", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0));
        report("clone3", syscall(SYS_clone3, NULL, 0));
        report("setns", syscall(SYS_setns, -1, 0));
        report("mount", syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
        report("umount2", syscall(SYS_umount2, "/nonexistent", 0));
        report("fsopen", syscall(SYS_fsopen, NULL, 0));
        report("fsconfig", syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0));
        report("fsmount", syscall(SYS_fsmount, -1, 0, 0));
        report("fspick", syscall(SYS_fspick, -1, NULL, 0));
        report("move_mount", syscall(SYS_move_mount, -1, NULL, -1, NULL, 0));
        report("open_tree", syscall(SYS_open_tree, -1, NULL, 0));
        report("mount_setattr", syscall(SYS_mount_setattr, -1, NULL, 0, NULL, 0));
        report("pivot_root", syscall(SYS_pivot_root, NULL, NULL));
        report("chroot", syscall(SYS_chroot, NULL));
        report("ptrace", syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0));
        report("process_vm_readv", syscall(SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0));
        report("process_vm_writev", syscall(SYS_process_vm_writev, 1, NULL, 0, NULL, 0, 0));
        report("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
        report("add_key", syscall(SYS_add_key, NULL, NULL, NULL, 0, 0));
        report("request_key", syscall(SYS_request_key, NULL, NULL, NULL, 0));
        report("bpf", syscall(SYS_bpf, 0, NULL, 0));
        report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
        report("userfaultfd", syscall(SYS_userfaultfd, 0));
        report("io_uring_setup", syscall(SYS_io_uring_setup, 0, NULL));
        report("io_uring_enter", syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
        report("io_uring_register", syscall(SYS_io_uring_register, -1, 0, NULL, 0));
        report("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
        report("kexec_file_load", syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0));
        report("init_module", syscall(SYS_init_module, NULL, 0, NULL));
        report("finit_module", syscall(SYS_finit_module, -1, NULL, 0));
        report("delete_module", syscall(SYS_delete_module, NULL, 0));
        report("open_by_handle_at", syscall(SYS_open_by_handle_at, -1, NULL, 0));
        report("name_to_handle_at", syscall(SYS_name_to_handle_at, -1, NULL, NULL, NULL, 0));
        report("personality_set", syscall(SYS_personality, 0x0400000 /* READ_IMPLIES_EXEC */));
        report("acct", syscall(SYS_acct, NULL));
        report("swapon", syscall(SYS_swapon, NULL, 0));
        report("swapoff", syscall(SYS_swapoff, NULL));
        report("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
        report("settimeofday", syscall(SYS_settimeofday, NULL, NULL));
        report("clock_settime", syscall(SYS_clock_settime, -1, NULL));
        report("adjtimex", syscall(SYS_adjtimex, NULL));
        report("quotactl", syscall(SYS_quotactl, 0, NULL, 0, NULL));
        report("syslog", syscall(SYS_syslog, 0, NULL, 0));
        report("vhangup", syscall(SYS_vhangup));
        report("socket_vsock", syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0));

        /* What must keep working. */
        report("socket_unix", syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
        report("personality_query", syscall(SYS_personality, 0xffffffffUL));
        report("personality_linux", syscall(SYS_personality, 0));
        report("getcwd", syscall(SYS_getcwd, buf, sizeof(buf)));
        return 0;
}

static int probe_tiocsti(void) {
        char c = 'x';

        /* Without the filter, stdin (a memfd or /dev/null) answers ENOTTY. */
        report("tiocsti", ioctl(0, TIOCSTI, &c));
        report("tiocsti_high", syscall(SYS_ioctl, 0, (unsigned long) TIOCSTI | (1UL << 32), &c));
        report("tioclinux", ioctl(0, TIOCLINUX, &c));
        return 0;
}

static int probe_ids(void) {
        report("setuid0", setuid(0));
        report("setgid0", setgid(0));
        report("setgroups0", setgroups(0, NULL));
        printf("uid %u\n", getuid());
        printf("euid %u\n", geteuid());
        return 0;
}

static int probe_env(void) {
        for (char **e = environ; *e; e++)
                printf("%s\n", *e);
        return 0;
}

/* Allocates and touches megabytes in 16 MiB steps; exits 3 when an allocation is refused. */
static int probe_alloc(const char *mb_arg) {
        long want = strtol(mb_arg, NULL, 10);

        for (long done = 0; done < want; done += 16) {
                char *p = mmap(NULL, 16UL << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED) {
                        printf("alloc-failed %ld\n", done);
                        fflush(stdout);
                        return 3;
                }
                memset(p, 1, 16UL << 20);
        }
        printf("allocated %ld\n", want);
        return 0;
}

static int probe_connect(const char *port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(port)) };
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        /* Without network the filter refuses the socket itself: report that, not EBADF. */
        if (fd < 0) {
                report("connect", fd);
                return 0;
        }
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        report("connect", connect(fd, (struct sockaddr *) &sa, sizeof(sa)));
        return 0;
}

static int probe_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        /* A leading '@' names an abstract socket. */
        strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
        len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        report("unix", connect(fd, (struct sockaddr *) &sa, len));
        return 0;
}

static int probe_ifaces(void) {
        struct if_nameindex *ifs = if_nameindex();

        for (struct if_nameindex *i = ifs; i && i->if_index; i++)
                printf("iface %s\n", i->if_name);
        return 0;
}

/* Each interface with whether it is up: "link NAME up" or "link NAME down". */
static int probe_links(void) {
        struct if_nameindex *ifs = if_nameindex();
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        for (struct if_nameindex *i = ifs; i && i->if_index; i++) {
                struct ifreq ifr = {};

                strncpy(ifr.ifr_name, i->if_name, IFNAMSIZ - 1);
                printf("link %s %s\n", i->if_name,
                       fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) >= 0 && (ifr.ifr_flags & IFF_UP) ? "up" : "down");
        }
        return 0;
}

static int probe_kill(const char *pid) {
        report("kill", kill((pid_t) atoi(pid), SIGKILL));
        return 0;
}

static int probe_x32(void) {
        /* getpid with the x32 bit: libseccomp's filter kills the process. */
        syscall(0x40000000 + 39);
        printf("survived\n");
        return 0;
}

/* Refused calls from several processes at once, each checking the errno it gets, then more
 * distinct refusals (socket families) than the run's record keeps. */
static int probe_refuse_many(void) {
        int wrong = 0, status;

        for (int p = 0; p < 4; p++) {
                pid_t pid = fork();

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        int bad = 0;

                        for (int i = 0; i < 500; i++)
                                if (syscall(SYS_unshare, CLONE_NEWUSER) >= 0 || errno != EPERM)
                                        bad++;
                        _exit(bad > 0 ? 1 : 0);
                }
        }
        while (wait(&status) > 0)
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        wrong++;
        for (int family = 0; family < 128; family++) {
                int fd;

                if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK)
                        continue;
                fd = socket(family, SOCK_DGRAM, 0);
                if (fd >= 0 || errno != EAFNOSUPPORT)
                        wrong++;
                if (fd >= 0)
                        close(fd);
        }
        printf("refuse_wrong %d\n", wrong);
        return 0;
}

static int probe_int80(void) {
#if defined(__x86_64__)
        long ret;

        /* getpid through the 32-bit entry point: a bad architecture for the filter. */
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory");
#endif
        printf("survived\n");
        return 0;
}

int main(int argc, char *argv[]) {
        if (argc < 2)
                return 2;
        setvbuf(stdout, NULL, _IOLBF, 0);

        if (strcmp(argv[1], "syscalls") == 0)
                return probe_syscalls();
        if (strcmp(argv[1], "tiocsti") == 0)
                return probe_tiocsti();
        if (strcmp(argv[1], "ids") == 0)
                return probe_ids();
        if (strcmp(argv[1], "env") == 0)
                return probe_env();
        if (strcmp(argv[1], "alloc") == 0 && argc > 2)
                return probe_alloc(argv[2]);
        if (strcmp(argv[1], "connect") == 0 && argc > 2)
                return probe_connect(argv[2]);
        if (strcmp(argv[1], "unix") == 0 && argc > 2)
                return probe_unix(argv[2]);
        if (strcmp(argv[1], "ifaces") == 0)
                return probe_ifaces();
        if (strcmp(argv[1], "links") == 0)
                return probe_links();
        if (strcmp(argv[1], "kill") == 0 && argc > 2)
                return probe_kill(argv[2]);
        if (strcmp(argv[1], "x32") == 0)
                return probe_x32();
        if (strcmp(argv[1], "int80") == 0)
                return probe_int80();
        if (strcmp(argv[1], "refuse_many") == 0)
                return probe_refuse_many();
        return 2;
}
