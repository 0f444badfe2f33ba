/* The network and IPC group: the host listens (TCP and UDP on every address it has, abstract and
 * filesystem Unix sockets, the well-known bus and journal paths) and holds SysV, POSIX and
 * keyring objects; the skill goes after all of them, and the host checks that nothing arrived and
 * nothing changed. The socket allowlist is tried family by family, with and without network. */
#include <ifaddrs.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <seccomp.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "security-util.h"

#define GROUP "network+ipc"

static int listen_inet(int type, uint16_t *ret_port) {
        struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
        struct sockaddr_in sa4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        int fd, zero = 0;

        /* Dual-stack where the host has IPv6, so one socket hears both. */
        fd = socket(AF_INET6, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0 && (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0 ||
                        bind(fd, (struct sockaddr *) &sa6, sizeof(sa6)) < 0))
                fd = safe_close(fd);
        if (fd < 0) {
                fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa4, sizeof(sa4)), 0);
        }
        if (type == SOCK_STREAM)
                ck_assert_int_eq(listen(fd, 64), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &ss, &len), 0);
        *ret_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &ss)->sin6_port :
                                                     ((struct sockaddr_in *) &ss)->sin_port);
        return fd;
}

/* The host's own non-loopback addresses, as the probe's ADDR arguments. */
static char **host_addresses(void) {
        _cleanup_strv_free_ char **l = NULL;
        struct ifaddrs *ifs = NULL;

        if (getifaddrs(&ifs) < 0)
                return NULL;
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
                char buf[INET6_ADDRSTRLEN];

                if (!i->ifa_addr)
                        continue;
                if (i->ifa_addr->sa_family == AF_INET) {
                        struct in_addr *a = &((struct sockaddr_in *) i->ifa_addr)->sin_addr;

                        if ((ntohl(a->s_addr) >> 24) == 127)
                                continue;
                        ck_assert_ptr_nonnull(inet_ntop(AF_INET, a, buf, sizeof(buf)));
                } else if (i->ifa_addr->sa_family == AF_INET6) {
                        struct in6_addr *a = &((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr;

                        if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a))
                                continue;
                        ck_assert_ptr_nonnull(inet_ntop(AF_INET6, a, buf, sizeof(buf)));
                } else
                        continue;
                if (!strv_contains(l, buf))
                        ck_assert_int_eq(strv_extend(&l, buf), 0);
        }
        freeifaddrs(ifs);
        return TAKE_PTR(l);
}

/* The nameservers of the host's resolv.conf. */
static char **host_nameservers(void) {
        _cleanup_strv_free_ char **l = NULL;
        _cleanup_fclose_ FILE *f = fopen("/etc/resolv.conf", "re");
        char line[256], ns[128];

        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "nameserver %127s", ns) == 1)
                        ck_assert_int_eq(strv_extend(&l, ns), 0);
        return TAKE_PTR(l);
}

/* Everything waiting on a listener: connections accepted and read, datagrams read. Counts what
 * came and whether any of it carried the marker or came from uid. */
/* Counts what arrived at a listener in ret_n, and sets ret_hit where it came from the run (its uid,
 * or the marker in what it sent). At a well-known public path (public) the host's own processes
 * may connect while the test's listener stands in for a service the host lacks (a logger writing
 * to the journal's socket, a client looking for skilld's bus): only what is the run's counts. */
static void drain(int fd, int type, const char *marker, uid_t uid, bool public, size_t *ret_n, bool *ret_hit) {
        for (;;) {
                char buf[4096];
                ssize_t n;
                bool from_run = false;

                if (type == SOCK_STREAM) {
                        _cleanup_close_ int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                        struct ucred cred = {};
                        socklen_t len = sizeof(cred);

                        if (c < 0)
                                return;
                        from_run = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == uid;
                        n = recv(c, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                } else {
                        union {
                                struct cmsghdr h;
                                char buf[CMSG_SPACE(sizeof(struct ucred))];
                        } control = {};
                        struct iovec iov = { buf, sizeof(buf) - 1 };
                        struct msghdr mh = {
                                .msg_iov = &iov, .msg_iovlen = 1,
                                .msg_control = &control, .msg_controllen = sizeof(control),
                        };
                        struct cmsghdr *cm;

                        n = recvmsg(fd, &mh, MSG_DONTWAIT);
                        if (n < 0)
                                return;
                        cm = CMSG_FIRSTHDR(&mh);
                        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
                                struct ucred cred;

                                memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
                                from_run = cred.uid == uid;
                        }
                }
                if (n > 0) {
                        buf[n] = '\0';
                        from_run = from_run || strstr(buf, marker);
                }
                if (from_run)
                        *ret_hit = true;
                if (from_run || !public)
                        (*ret_n)++;
        }
}

START_TEST(test_no_route_out) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *body = NULL, *targets = NULL;
        _cleanup_strv_free_ char **addrs = host_addresses(), **nameservers = host_nameservers();
        _cleanup_close_ int tcp = -EBADF, udp = -EBADF;
        uint16_t tport, uport;
        size_t n_tcp = 0, n_udp = 0, refused_tcp = 0, refused_udp = 0, got_tcp = 0, got_udp = 0;
        bool hit = false;
        FILE *f;
        size_t size = 0;

        tcp = listen_inet(SOCK_STREAM, &tport);
        udp = listen_inet(SOCK_DGRAM, &uport);
        f = open_memstream(&targets, &size);
        ck_assert_ptr_nonnull(f);
        /* The host's own addresses, a documentation range of each family, the host's resolvers. */
        STRV_FOREACH(a, addrs)
                fprintf(f, " %s:%u udp:%s:%u", *a, tport, *a, uport);
        fprintf(f, " 203.0.113.7:80 2001:db8::7:80 udp:203.0.113.7:53 udp:2001:db8::7:53");
        STRV_FOREACH(a, nameservers)
                if (!startswith(*a, "127.") && !streq(*a, "::1"))
                        fprintf(f, " udp:%s:53", *a);
        ck_assert_int_eq(fclose(f), 0);
        /* The host's loopback from inside is the sandbox's own. */
        body = strdup_printf("/skill/probe net %s %s 127.0.0.1:%u udp:127.0.0.1:%u\n/skill/probe dns\n",
                             marker, targets, tport, uport);
        sec_run_set_script(&t, body);
        sec_run_go(&t);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

        for (const char *p = sec_stdout(t.res); p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                char proto[8], dest[128];
                long e;

                if (sscanf(p, "%7s %127s %ld", proto, dest, &e) != 3 || startswith(dest, "127.0.0.1:"))
                        continue;
                if (streq(proto, "tcp")) {
                        n_tcp++;
                        refused_tcp += e == ENETUNREACH || e == EHOSTUNREACH || e == EAFNOSUPPORT;
                } else if (streq(proto, "udp")) {
                        n_udp++;
                        refused_udp += e == ENETUNREACH || e == EHOSTUNREACH || e == EAFNOSUPPORT;
                }
        }
        drain(tcp, SOCK_STREAM, marker, t.res->uid, false, &got_tcp, &hit);
        drain(udp, SOCK_DGRAM, marker, t.res->uid, false, &got_udp, &hit);

        CHECK_CASE(GROUP, "TCP to the host's addresses and the internet", "ENETUNREACH",
                   n_tcp == strv_length(addrs) + 2 && refused_tcp == n_tcp,
                   "%zu of %zu unreachable (%zu host "
                   "addresses)",
                   refused_tcp, n_tcp, strv_length(addrs));
        CHECK_CASE(GROUP, "UDP (DNS) to the host's resolvers, addresses", "ENETUNREACH",
                   refused_udp == n_udp, "%zu of %zu unreachable", refused_udp, n_udp);
        CHECK_CASE(GROUP, "host listeners (TCP and UDP, all addresses)", "nothing arrived",
                   got_tcp == 0 && got_udp == 0 && !hit, "%zu connections, %zu datagrams", got_tcp, got_udp);
        CHECK_CASE(GROUP, "name resolution (getaddrinfo example.com)", "fails; no resolv.conf",
                   probe_long(t.res, "dns") == 1 && probe_long(t.res, "resolv.conf") == ENOENT,
                   "%s, resolv.conf %s", probe_long(t.res, "dns") == 0 ? "RESOLVED" : "failed",
                   errno_name((int) probe_long(t.res, "resolv.conf")));
}
END_TEST

typedef struct UnixListener {
        char *name;             /* path, or @abstract */
        int type;
        int fd;
        bool created;           /* ours to remove */
} UnixListener;

static int unix_listen(const char *name, int type) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
        int fd;

        ck_assert_uint_lt(strlen(name), sizeof(sa.sun_path));
        memcpy(sa.sun_path, name, strlen(name));
        if (name[0] == '@')
                sa.sun_path[0] = '\0';
        fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(fd, 0);
        if (bind(fd, (struct sockaddr *) &sa, len) < 0) {
                safe_close(fd);
                return -errno;
        }
        if (name[0] != '@')
                (void) chmod(name, 0777);
        if (type == SOCK_STREAM)
                ck_assert_int_eq(listen(fd, 16), 0);
        else
                ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &(int) { 1 }, sizeof(int)), 0);
        return fd;
}

/* Creates the directories of path that are missing, recording them for removal. */
static void mkdir_parents(const char *path, char ***created) {
        _cleanup_free_ char *dir = strdup(path);
        char *slash = strrchr(dir, '/');

        if (!slash || slash == dir)
                return;
        *slash = '\0';
        if (access(dir, F_OK) == 0)
                return;
        mkdir_parents(dir, created);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        ck_assert_int_eq(strv_extend(created, dir), 0);
}

START_TEST(test_unix_sockets) {
        /* The well-known places: the system bus, root's user bus, journald, skilld's own. Where
         * the host has no such socket, the test puts a listener there for the run's length. */
        static const struct {
                const char *path;
                int type;
        } known[] = {
                { "/run/dbus/system_bus_socket", SOCK_STREAM },
                { "/run/user/0/bus", SOCK_STREAM },
                { "/run/systemd/journal/socket", SOCK_DGRAM },
                { "/run/skilld/bus", SOCK_STREAM },
        };
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *body = NULL, *list = NULL;
        _cleanup_strv_free_ char **dirs = NULL;
        UnixListener l[4 + ELEMENTSOF(known)] = {};
        size_t n = 0, n_private, got = 0, ours = 0, abstract_refused = 0, fs_refused = 0, known_absent = 0;
        bool hit = false;
        FILE *f;
        size_t size = 0;

        l[n++] = (UnixListener) { strdup_printf("@%s", marker), SOCK_STREAM };
        l[n++] = (UnixListener) { strdup_printf("@%s-dgram", marker), SOCK_DGRAM };
        l[n++] = (UnixListener) { strdup_printf("%s/host.sock", t.base.path), SOCK_STREAM };
        l[n++] = (UnixListener) { strdup_printf("%s/host-dgram.sock", t.base.path), SOCK_DGRAM };
        n_private = n;          /* names only this test knows; the known places follow */
        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                l[n++] = (UnixListener) { strdup(known[i].path), known[i].type };
        for (size_t i = 0; i < n; i++) {
                struct stat st;

                l[i].fd = -EBADF;
                if (l[i].name[0] != '@' && lstat(l[i].name, &st) == 0)
                        continue;               /* the host's real one: probed, not replaced */
                if (l[i].name[0] != '@')
                        mkdir_parents(l[i].name, &dirs);
                l[i].fd = unix_listen(l[i].name, l[i].type);
                ck_assert_int_ge(l[i].fd, 0);
                l[i].created = l[i].name[0] != '@';
                ours++;
        }

        f = open_memstream(&list, &size);
        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, " %s", l[i].name);
                if (l[i].name[0] != '@')
                        fprintf(f, " /proc/1/root%s /proc/self/root%s", l[i].name, l[i].name);
        }
        fputs(" /var/run/dbus/system_bus_socket /run/systemd/private /run/systemd/journal/stdout", f);
        fputs(" /dev/log", f);
        ck_assert_int_eq(fclose(f), 0);
        body = strdup_printf("/skill/probe unix %s %s\n", marker, list);
        sec_run_set_script(&t, body);
        sec_run_go(&t);

        /* Observe, then clean up the host before any assertion can end the test. */
        for (size_t i = 0; i < n; i++)
                if (l[i].fd >= 0)
                        drain(l[i].fd, l[i].type, marker, t.res->uid, i >= n_private, &got, &hit);
        for (size_t i = 0; i < n; i++) {
                if (l[i].created)
                        (void) unlink(l[i].name);
                safe_close(l[i].fd);
        }
        for (size_t i = strv_length(dirs); i > 0; i--)
                (void) rmdir(dirs[i - 1]);

        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        for (size_t i = 0; i < n; i++) {
                long s, d;

                s = probe_longf(t.res, "unix-stream %s", l[i].name);
                d = probe_longf(t.res, "unix-dgram %s", l[i].name);
                if (l[i].name[0] == '@')
                        abstract_refused += s == ECONNREFUSED && d == ECONNREFUSED;
                else if (i < n_private)
                        fs_refused += s == ENOENT && d == ENOENT &&
                                probe_longf(t.res, "unix-stream /proc/1/root%s", l[i].name) > 0 &&
                                probe_longf(t.res, "unix-stream /proc/self/root%s", l[i].name) == ENOENT;
                else
                        known_absent += s == ENOENT && d == ENOENT &&
                                probe_longf(t.res, "unix-stream /proc/1/root%s", l[i].name) > 0;
        }
        CHECK_CASE(GROUP, "host's abstract sockets (stream, datagram)", "ECONNREFUSED (not the host's)",
                   abstract_refused == 2, "%zu of 2 refused", abstract_refused);
        CHECK_CASE(GROUP, "host's filesystem sockets (path, /proc/*/root)", "ENOENT / EACCES",
                   fs_refused == 2, "%zu of 2 refused", fs_refused);
        CHECK_CASE(GROUP, "system bus, user bus, journald, /run/skilld/bus", "absent inside",
                   known_absent == ELEMENTSOF(known), "%zu of %zu absent", known_absent, ELEMENTSOF(known));
        CHECK_CASE(GROUP, "host's Unix listeners", "nothing arrived", got == 0 && !hit,
                   "%zu connections/datagrams on the %zu listeners the test owned", got, ours);
        for (size_t i = 0; i < n; i++)
                free(l[i].name);
}
END_TEST

START_TEST(test_sysv_posix_ipc) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *mq_name = NULL, *body = NULL;
        key_t base;
        int shm_id, msg_id, sem_id, sem_val;
        mqd_t mq;
        struct shmid_ds shm_st = {};
        struct msqid_ds msg_st = {};
        struct mq_attr mq_st = {};
        char *shm;
        uint32_t r;

        /* World-accessible objects: only the IPC namespace stands between them and the skill. */
        ck_assert_int_eq(getentropy(&r, sizeof(r)), 0);
        base = (key_t) ((r & 0x3fffffff) | 0x10000);
        shm_id = shmget(base, 4096, IPC_CREAT | IPC_EXCL | 0666);
        ck_assert_int_ge(shm_id, 0);
        shm = shmat(shm_id, NULL, 0);
        ck_assert(shm != (void *) -1);
        strcpy(shm, marker);
        ck_assert_int_eq(shmdt(shm), 0);
        msg_id = msgget(base + 1, IPC_CREAT | IPC_EXCL | 0666);
        ck_assert_int_ge(msg_id, 0);
        {
                struct {
                        long mtype;
                        char mtext[64];
                } m = { .mtype = 1 };

                strncpy(m.mtext, marker, sizeof(m.mtext) - 1);
                ck_assert_int_eq(msgsnd(msg_id, &m, strlen(m.mtext) + 1, 0), 0);
        }
        sem_id = semget(base + 2, 1, IPC_CREAT | IPC_EXCL | 0666);
        ck_assert_int_ge(sem_id, 0);
        ck_assert_int_eq(semctl(sem_id, 0, SETVAL, 7), 0);
        mq_name = strdup_printf("/%s", marker);
        mq = mq_open(mq_name, O_CREAT | O_EXCL | O_RDWR, 0666,
                     &(struct mq_attr){ .mq_maxmsg = 4, .mq_msgsize = 64 });
        ck_assert_int_ne(mq, (mqd_t) -1);
        ck_assert_int_eq(mq_send(mq, marker, strlen(marker) + 1, 0), 0);

        body = strdup_printf("/skill/probe ipc %d %d %d %d %d %d %s\n", base, base + 1, base + 2, shm_id,
                             msg_id, sem_id, mq_name);
        sec_run_set_script(&t, body);
        sec_run_go(&t);

        /* The host's objects, as they were. */
        ck_assert_int_eq(shmctl(shm_id, IPC_STAT, &shm_st), 0);
        shm = shmat(shm_id, NULL, SHM_RDONLY);
        ck_assert(shm != (void *) -1);
        ck_assert_int_eq(msgctl(msg_id, IPC_STAT, &msg_st), 0);
        sem_val = semctl(sem_id, 0, GETVAL);
        ck_assert_int_eq(mq_getattr(mq, &mq_st), 0);
        {
                bool intact = streq(shm, marker) && shm_st.shm_nattch == 0 && shm_st.shm_lpid == getpid() &&
                        msg_st.msg_qnum == 1 && sem_val == 7 && mq_st.mq_curmsgs == 1;

                (void) shmdt(shm);
                (void) shmctl(shm_id, IPC_RMID, NULL);
                (void) msgctl(msg_id, IPC_RMID, NULL);
                (void) semctl(sem_id, 0, IPC_RMID);
                (void) mq_close(mq);
                (void) mq_unlink(mq_name);

                ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
                CHECK_CASE(GROUP, "host SysV shm/msg/sem by key", "ENOENT",
                           probe_long(t.res, "shmget") == ENOENT && probe_long(t.res, "msgget") == ENOENT &&
                                   probe_long(t.res, "semget") == ENOENT,
                           "%s %s %s", errno_name((int) probe_long(t.res, "shmget")),
                           errno_name((int) probe_long(t.res, "msgget")),
                           errno_name((int) probe_long(t.res, "semget")));
                CHECK_CASE(GROUP, "host SysV objects by id (shmat, msgrcv, semctl)", "EINVAL",
                           probe_long(t.res, "shmat") == EINVAL && probe_long(t.res, "msgrcv") == EINVAL &&
                                   probe_long(t.res, "semctl") == EINVAL,
                           "%s %s %s", errno_name((int) probe_long(t.res, "shmat")),
                           errno_name((int) probe_long(t.res, "msgrcv")),
                           errno_name((int) probe_long(t.res, "semctl")));
                CHECK_CASE(GROUP, "host POSIX message queue; /proc/sysvipc", "ENOENT; headers only",
                           probe_long(t.res, "mq_open") == ENOENT && probe_long(t.res, "sysvipc-shm") == 1 &&
                           probe_long(t.res, "sysvipc-msg") == 1 && probe_long(t.res, "sysvipc-sem") == 1,
                           "mq_open %s, %ld/%ld/%ld lines", errno_name((int) probe_long(t.res, "mq_open")),
                           probe_long(t.res, "sysvipc-shm"), probe_long(t.res, "sysvipc-msg"),
                           probe_long(t.res, "sysvipc-sem"));
                CHECK_CASE(GROUP, "host IPC objects after the run", "intact, never attached",
                           intact && !run_output_has(t.res, marker), "%s", intact ? "intact" : "CHANGED");
        }
}
END_TEST

/* Makes the engine, in this test's process, see a kernel without seccomp: PR_GET_SECCOMP fails as
 * it does there, and a request that allows the layer missing runs without the filter. This
 * process's own filter refuses nothing else, so the run has every syscall the kernel grants it. */
static void hide_seccomp(void) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

        /* The filter stays with the process: only in the one check forked for this test. */
        ck_assert_msg(!streq_ptr(getenv("CK_FORK"), "no"), "hiding seccomp needs check's fork mode");
        ck_assert_ptr_nonnull(ctx);
        /* Root may load a filter without no_new_privs, which would change what the run inherits. */
        ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0), 0);
        ck_assert_int_eq(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW), 0);
        ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1,
                                          SCMP_A0(SCMP_CMP_EQ, PR_GET_SECCOMP)), 0);
        ck_assert_int_eq(seccomp_load(ctx), 0);
        ck_assert_int_eq(prctl(PR_GET_SECCOMP, 0, 0, 0, 0), -1);
}

START_TEST(test_keyrings) {
        _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
        _cleanup_free_ char *marker = random_marker(), *payload = NULL, *body = NULL;
        char buf[256] = {};
        long key, ring, n, inside;

        /* A session keyring of this test's own, inherited (as session keyrings are, across fork
         * and exec, and setuid) by whatever it starts, holding a key its possessors may read:
         * the sandbox uid is not root, so possession is the only way to the key. */
        ck_assert_int_ge(syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, NULL), 0);
        ring = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* KEY_SPEC_SESSION_KEYRING */, 0);
        ck_assert_int_gt(ring, 0);
        payload = strdup_printf("KEYSECRET-%s", marker);
        key = syscall(SYS_add_key, "user", marker, payload, strlen(payload),
                      -3 /* KEY_SPEC_SESSION_KEYRING */);
        ck_assert_int_gt(key, 0);
        body = strdup_printf("/skill/probe keys %s %ld %ld\n", marker, key, ring);
        sec_run_set_script(&t, body);
        sec_run_go(&t);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

        CHECK_CASE(GROUP, "keyctl/request_key/add_key on inherited keyrings", "EPERM",
                   probe_long(t.res, "keyctl-session") == EPERM &&
                           probe_long(t.res, "request_key") == EPERM &&
                           probe_long(t.res, "keyctl-search") == EPERM &&
                           probe_long(t.res, "add_key") == EPERM,
                   "%s %s %s %s", errno_name((int) probe_long(t.res, "keyctl-session")),
                   errno_name((int) probe_long(t.res, "request_key")),
                   errno_name((int) probe_long(t.res, "keyctl-search")),
                   errno_name((int) probe_long(t.res, "add_key")));
        CHECK_CASE(GROUP, "/proc/keys, /proc/key-users", "empty",
                   !probe_find(t.res, "data /proc/keys") && !probe_find(t.res, "data /proc/key-users"),
                   "%s", probe_find(t.res, "data /proc/keys") ? "KEYS LISTED" : "empty");

        /* The same without the filter: the keyring calls reach the kernel, and what keeps the
         * caller's keys away is the new session keyring the sandbox joins. */
        hide_seccomp();
        t.req.allow_missing |= SANDBOX_LAYER_SECCOMP;
        sec_run_go(&t);
        ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);
        ck_assert(t.res->layers_missing & SANDBOX_LAYER_SECCOMP);
        inside = probe_long(t.res, "keyctl-session-id");
        CHECK_CASE(GROUP, "without seccomp: the session keyring", "a new one, not the caller's",
                   probe_long(t.res, "keyctl-session") == 0 && inside > 0 && inside != ring,
                   "%s, id %ld (caller's %ld)", errno_name((int) probe_long(t.res, "keyctl-session")),
                   inside, ring);
        CHECK_CASE(GROUP, "without seccomp: search, request_key by name", "ENOKEY",
                   probe_long(t.res, "keyctl-search") == ENOKEY &&
                           probe_long(t.res, "request_key") == ENOKEY,
                   "search %s, request_key %s", errno_name((int) probe_long(t.res, "keyctl-search")),
                   errno_name((int) probe_long(t.res, "request_key")));
        CHECK_CASE(GROUP, "without seccomp: the caller's key and keyring by id", "EACCES",
                   probe_long(t.res, "keyctl-read-id") == EACCES &&
                           probe_long(t.res, "keyctl-describe-ring") == EACCES &&
                           probe_long(t.res, "keyctl-search-ring") == EACCES,
                   "read %s, describe %s, search %s", errno_name((int) probe_long(t.res, "keyctl-read-id")),
                   errno_name((int) probe_long(t.res, "keyctl-describe-ring")),
                   errno_name((int) probe_long(t.res, "keyctl-search-ring")));

        /* After both runs: the key as it was, the keyring holding only it (the second run's
         * add_key went into its own keyring), and the payload in no output. */
        n = syscall(SYS_keyctl, 11 /* KEYCTL_READ */, key, buf, sizeof(buf) - 1);
        {
                int32_t ids[8] = {};
                long size = syscall(SYS_keyctl, 11 /* KEYCTL_READ */, ring, ids, sizeof(ids));

                CHECK_CASE(GROUP, "the caller's key and keyring", "intact, unread, nothing added",
                           n == (long) strlen(payload) && streq(buf, payload) &&
                                   !run_output_has(t.res, payload) && size == (long) sizeof(int32_t) &&
                                   ids[0] == key,
                           "%s, %ld keys in the keyring",
                           run_output_has(t.res, payload) ? "LEAKED"
                           : n == (long) strlen(payload)  ? "intact"
                                                          : "CHANGED",
                           size / (long) sizeof(int32_t));
        }
}
END_TEST

/* ---- the socket allowlist ---- */

typedef struct SocketCase {
        const char *spec;       /* the probe's FAMILY:TYPE:PROTOCOL or pair:FAMILY:TYPE */
        int local, network;     /* errno expected without and with network; -1: not refused by
                                 * the filter (the kernel's own answer, which may vary) */
} SocketCase;

#define ST "1"          /* SOCK_STREAM */
#define DG "2"          /* SOCK_DGRAM */
#define NB_CX "0x80802" /* SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC */

static const SocketCase socket_cases[] = {
        /* AF_UNIX, always */
        { "1:" ST ":0", 0, 0 }, { "1:" DG ":0", 0, 0 }, { "1:5:0", 0, 0 }, { "pair:1:" ST, 0, 0 },
        { "pair:1:" NB_CX, 0, 0 },
        /* AF_INET and AF_INET6: TCP, UDP and ping sockets, nothing else */
        { "2:" ST ":0", 0, 0 }, { "2:" DG ":0", 0, 0 },
        { "2:" ST ":6", 0, 0 }, { "2:" NB_CX ":17", 0, 0 },
        { "2:" DG ":1", -1, -1 },
        { "10:" ST ":0", 0, 0 }, { "10:" DG ":17", 0, 0 },
        { "10:" DG ":58", -1, -1 },
        { "2:" DG ":136", EPROTONOSUPPORT, EPROTONOSUPPORT },      /* UDP-Lite */
        { "10:" DG ":136", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "2:" ST ":132", EPROTONOSUPPORT, EPROTONOSUPPORT },      /* SCTP, a module */
        { "2:5:132", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "10:5:132", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "2:6:33", EPROTONOSUPPORT, EPROTONOSUPPORT },            /* DCCP, a module */
        { "10:6:0", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "2:" ST ":262", EPROTONOSUPPORT, EPROTONOSUPPORT },      /* MPTCP */
        { "2:3:1", EPROTONOSUPPORT, EPROTONOSUPPORT },             /* raw */
        { "10:3:58", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "2:" DG ":-1", EPROTONOSUPPORT, EPROTONOSUPPORT },
        { "2:" ST ":0x100000006", EPROTONOSUPPORT, EPROTONOSUPPORT }, /* TCP in the low half */
        { "pair:2:" ST, EAFNOSUPPORT, EAFNOSUPPORT },
        /* AF_NETLINK: the routing protocol, nothing else */
        { "16:3:0", 0, 0 }, { "16:" DG ":0", 0, 0 },
        { "16:3:4", EPROTONOSUPPORT, EPROTONOSUPPORT },            /* sock_diag */
        { "16:3:9", EPROTONOSUPPORT, EPROTONOSUPPORT },            /* audit */
        { "16:3:12", EPROTONOSUPPORT, EPROTONOSUPPORT },           /* netfilter */
        { "16:3:15", EPROTONOSUPPORT, EPROTONOSUPPORT },           /* kobject uevent */
        { "16:3:16", EPROTONOSUPPORT, EPROTONOSUPPORT },           /* generic */
        /* AF_UNIX in the low half only */
        { "0x100000001:" ST ":0", EAFNOSUPPORT, EAFNOSUPPORT },
        { "-1:" ST ":0", EAFNOSUPPORT, EAFNOSUPPORT },
};

/* The families socket_cases covers one by one; the sweep takes the rest. */
static bool family_listed(int af) {
        return af == AF_UNIX || af == AF_INET || af == AF_INET6 || af == AF_NETLINK;
}

/* The names of the host's loaded modules, one a line. */
static char *host_modules(void) {
        _cleanup_free_ char *data = NULL, *names = NULL;
        size_t size = 0;
        FILE *f;

        if (read_full_file_at(AT_FDCWD, "/proc/modules", 4 << 20, false, &data, NULL) < 0)
                return strdup("");
        f = open_memstream(&names, &size);
        ck_assert_ptr_nonnull(f);
        for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n"))
                fprintf(f, "%.*s\n", (int) strcspn(l, " "), l);
        ck_assert_int_eq(fclose(f), 0);
        return TAKE_PTR(names);
}

/* Accepts what waits on a TCP listener; whether a connection sent "prefix-marker". */
static void accept_marked(int fd, const char *marker, bool *ret_python, bool *ret_node) {
        for (;;) {
                _cleanup_close_ int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                char buf[256];
                ssize_t n;

                if (c < 0)
                        return;
                n = recv(c, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                *ret_python = *ret_python || (startswith(buf, "python-") && strstr(buf, marker));
                *ret_node = *ret_node || (startswith(buf, "node-") && strstr(buf, marker));
        }
}

START_TEST(test_socket_allowlist) {
        _cleanup_free_ char *marker = random_marker(), *modules_before = host_modules(), *mods = NULL;
        _cleanup_close_ int tcp = -EBADF;
        size_t ok[2] = {}, total[2] = {}, swept[2] = {}, swept_ok[2] = {};
        char *bad[2] = {};
        bool python = false, node = false, interp_local = false;
        uint16_t port;

        /* A listener in the host's network namespace, which a network run shares. */
        tcp = listen_inet(SOCK_STREAM, &port);

        for (int network = 0; network <= 1; network++) {
                _cleanup_sec_run_ SecRun t = sec_run_new(NULL);
                _cleanup_free_ char *body = NULL, *list = NULL;
                size_t size = 0;
                FILE *f;

                f = open_memstream(&list, &size);
                ck_assert_ptr_nonnull(f);
                for (size_t i = 0; i < ELEMENTSOF(socket_cases); i++)
                        fprintf(f, " %s", socket_cases[i].spec);
                /* Every other family the headers know, and some they do not yet: AF_IB, AF_MPLS,
                 * AF_VSOCK, AF_ALG, AF_PACKET, AF_KEY, ... */
                for (int af = 0; af < AF_MAX + 8; af++)
                        if (!family_listed(af))
                                fprintf(f, " %d:" DG ":0 %d:" ST ":0", af, af);
                ck_assert_int_eq(fclose(f), 0);
                body = strdup_printf(
                        "/skill/probe sockets %s\n"
                        "python3 -c 'import asyncio; asyncio.run(asyncio.sleep(0)); print(\"python-ok\")'\n"
                        "node -e 'console.log(\"node-ok\")'\n"
                        "python3 -c 'import socket, sys\n"
                        "s = socket.create_connection((\"localhost\", int(sys.argv[1])), 10)\n"
                        "s.sendall((\"python-\" + sys.argv[2]).encode())' %u %s\n"
                        "node -e 'const s = require(\"net\").connect({ host: \"localhost\", port: "
                        "+process.argv[1] }, () => s.end(\"node-\" + process.argv[2], () => s.destroy())); "
                        "s.on(\"error\", e => console.log(\"node-error\", e.code))' %u %s\n"
                        "true\n",
                        list, port, marker, port, marker);
                sec_run_set_script(&t, body);
                t.req.network = network;
                sec_run_go(&t);
                ck_assert_int_eq(t.res->status, RUN_STATUS_SUCCEEDED);

                for (size_t i = 0; i < ELEMENTSOF(socket_cases); i++) {
                        int want = network ? socket_cases[i].network : socket_cases[i].local;
                        long got = probe_longf(t.res, "socket %s", socket_cases[i].spec);
                        bool pass = want >= 0 ? got == want :
                                got != LONG_MIN && got != EAFNOSUPPORT && got != EPROTONOSUPPORT;

                        total[network]++;
                        ok[network] += pass;
                        if (!pass && !bad[network])
                                bad[network] = strdup_printf(" (first: %s gave %s)", socket_cases[i].spec,
                                                             got == LONG_MIN ? "nothing" :
                                                             errno_name((int) got));
                }
                for (int af = 0; af < AF_MAX + 8; af++)
                        if (!family_listed(af)) {
                                swept[network] += 2;
                                swept_ok[network] +=
                                        (probe_longf(t.res, "socket %d:" DG ":0", af) == EAFNOSUPPORT) +
                                        (probe_longf(t.res, "socket %d:" ST ":0", af) == EAFNOSUPPORT);
                        }
                if (network)
                        accept_marked(tcp, marker, &python, &node);
                else
                        interp_local = strstr(sec_stdout(t.res), "python-ok\n") &&
                                       strstr(sec_stdout(t.res), "node-ok\n");
        }
        mods = host_modules();

        CHECK_CASE(GROUP, "socket(): every other family (AF_IB, AF_MPLS, ...)", "EAFNOSUPPORT",
                   swept_ok[0] == swept[0] && swept_ok[1] == swept[1],
                   "%zu of %zu refused, with network %zu of %zu", swept_ok[0], swept[0], swept_ok[1],
                   swept[1]);
        CHECK_CASE(GROUP, "without network: UNIX, TCP, UDP, ping, NETLINK_ROUTE only",
                   "UDP-Lite, SCTP, DCCP, raw EPROTONOSUPPORT", ok[0] == total[0],
                   "%zu of %zu as expected%s", ok[0], total[0], strempty(bad[0]));
        CHECK_CASE(GROUP, "with network: the same",
                   "UDP-Lite, SCTP, DCCP, raw EPROTONOSUPPORT", ok[1] == total[1],
                   "%zu of %zu as expected%s", ok[1], total[1], strempty(bad[1]));
        CHECK_CASE(GROUP, "python3 and node still work", "asyncio; connect via localhost (network)",
                   interp_local && python && node, "without network %s; python %s, node %s",
                   interp_local ? "ok" : "FAILED", python ? "connected" : "NOT CONNECTED",
                   node ? "connected" : "NOT CONNECTED");
        CHECK_CASE(GROUP, "host kernel modules after both runs", "none loaded",
                   streq(mods, modules_before), "%s", streq(mods, modules_before) ? "unchanged" : "CHANGED");
        free(bad[0]);
        free(bad[1]);
}
END_TEST

TCase *security_tcase_network(void) {
        TCase *tc = tcase_create(GROUP);

        tcase_add_test(tc, test_no_route_out);
        tcase_add_test(tc, test_unix_sockets);
        tcase_add_test(tc, test_socket_allowlist);
        tcase_add_test(tc, test_sysv_posix_ipc);
        tcase_add_test(tc, test_keyrings);
        return tc;
}
