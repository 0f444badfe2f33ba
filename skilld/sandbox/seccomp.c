/* The syscall filter every skill runs under (policy/seccomp.md explains each entry).
 *
 * Default allow, with a denylist: skills are arbitrary Python, Node and shell programs, and an
 * allowlist that keeps every interpreter and its native modules working is not something a
 * skill author can reason about. What the list refuses is kernel attack surface and the tools to
 * undo the sandbox: namespaces, mounts, tracing, keyrings, BPF, io_uring, modules, clocks.
 * Sockets are the exception, an allowlist of families, types and protocols. Refusals return EPERM (as if the capability were missing, which
 * it is), so programs that probe for a feature take their fallback path.
 *
 * The filter is built in two variants from the same rules. In the loaded one every refusal goes
 * to the engine as a user notification (SCMP_ACT_NOTIFY), so that the run can report which calls
 * were refused; the engine answers each with what the other variant, where the refusals are
 * SCMP_ACT_ERRNO, returns for the same call (seccomp-notify.c runs that program). A rule is
 * added once, through add_rule(), and both variants follow. Only the native
 * architecture is allowed: the 32-bit x86 entry (int 0x80) and x32 syscalls kill the process,
 * since the rules below would not see them under their other numbers. */
#include <assert.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "error.h"
#include "sandbox-internal.h"
#include "seccomp-dlopen.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Refused outright, with EPERM. */
static const char *const refused[] = {
        /* namespaces and the file system tree */
        "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
        "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
        /* other processes' memory, and file handles that bypass path permissions */
        "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
        "open_by_handle_at", "name_to_handle_at",
        /* kernel facilities with a long record of local privilege escalations */
        "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
        "io_uring_setup", "io_uring_enter", "io_uring_register",
        /* the machine itself */
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
        "create_module", "acct", "swapon", "swapoff", "reboot", "settimeofday", "clock_settime",
        "clock_adjtime", "adjtimex", "quotactl", "quotactl_fd", "lookup_dcookie", "syslog",
        "vhangup", "nfsservctl", "iopl", "ioperm", "uselib", "ustat", "sysfs", "_sysctl",
        "mbind", "migrate_pages", "move_pages",
};

/* Refused with ENOSYS, the answer of a kernel built without them, so that programs take the
 * fallback they have for such kernels (polling instead of inotify, threads instead of Linux AIO):
 *  - Linux AIO: every context counts in the host-wide fs.aio-nr, which io_setup() fills for every
 *    program of the host (databases, QEMU) until the run ends;
 *  - inotify and fanotify: a watch on the bound host /usr sees the host's (and other runs') use of
 *    its files, a channel out of the run and between runs; fanotify_init() is allowed unprivileged
 *    on recent kernels. */
static const char *const refused_enosys[] = {
        "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
        "inotify_init", "inotify_init1", "fanotify_init",
};

/* The run's init is PID 1 of its namespace and has the skill's uid, so a skill could change its
 * limits (a hard RLIMIT_CPU kills it, and the run fails as a sandbox error), its scheduling or
 * its I/O priority. The calls that reach a process by pid are refused for pid 1 (and the group
 * of pid 1, and "every process of my uid", which includes it); a skill's own processes and
 * threads stay its to change. Signals need no rule: the kernel never delivers a signal to a
 * namespace's init from inside it unless the init handles it, and the init forwards those to the
 * skill. */
typedef struct TargetRule {
        const char *name;
        unsigned n;
        struct scmp_arg_cmp cmp[2];
} TargetRule;

static const TargetRule init_targets[] = {
        { "prlimit64",          1, { SCMP_A0(SCMP_CMP_EQ, 1) } },
        { "sched_setattr",      1, { SCMP_A0(SCMP_CMP_EQ, 1) } },
        { "sched_setscheduler", 1, { SCMP_A0(SCMP_CMP_EQ, 1) } },
        { "sched_setparam",     1, { SCMP_A0(SCMP_CMP_EQ, 1) } },
        { "sched_setaffinity",  1, { SCMP_A0(SCMP_CMP_EQ, 1) } },
        /* PRIO_PROCESS 0, PRIO_PGRP 1 (the init leads group 1), PRIO_USER 2 */
        { "setpriority",        2, { SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A1(SCMP_CMP_EQ, 1) } },
        { "setpriority",        2, { SCMP_A0(SCMP_CMP_EQ, 1), SCMP_A1(SCMP_CMP_EQ, 1) } },
        { "setpriority",        1, { SCMP_A0(SCMP_CMP_EQ, 2) } },
        /* IOPRIO_WHO_PROCESS 1, IOPRIO_WHO_PGRP 2, IOPRIO_WHO_USER 3 */
        { "ioprio_set",         2, { SCMP_A0(SCMP_CMP_EQ, 1), SCMP_A1(SCMP_CMP_EQ, 1) } },
        { "ioprio_set",         2, { SCMP_A0(SCMP_CMP_EQ, 2), SCMP_A1(SCMP_CMP_EQ, 1) } },
        { "ioprio_set",         1, { SCMP_A0(SCMP_CMP_EQ, 3) } },
};

/* Every namespace flag: creating one is how sandboxes are undone (a new user namespace grants
 * capabilities over it), and nothing a skill does needs one. */
static const unsigned long ns_flags[] = {
        CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
        CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* The filter being built: notify selects the variant that reports its refusals. */
typedef struct Filter {
        scmp_filter_ctx ctx;
        bool notify;
} Filter;

static int add_rule_action(const Filter *f, uint32_t action, const char *name, unsigned n,
                           const struct scmp_arg_cmp *cmp, char **error) {
        int nr, r;

        /* Names this architecture does not have (create_module on arm64, ...) are nothing to
         * refuse. */
        nr = sym_seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
                return 0;
        r = sym_seccomp_rule_add_array(f->ctx, action, nr, n, cmp);
        if (r < 0)
                return error_setf(error, r, "Failed to add the seccomp rule for %s: %s", name, strerror(-r));
        return 0;
}

/* A rule of the filter. A refusal (SCMP_ACT_ERRNO with a non-zero errno) is reported in the
 * variant that notifies; the kill actions stay kills. */
static int add_rule(const Filter *f, uint32_t action, const char *name, unsigned n,
                    const struct scmp_arg_cmp *cmp, char **error) {
        if (f->notify && (action & 0xffff0000U) == SCMP_ACT_ERRNO(0) && (action & 0xffffU) != 0)
                action = SCMP_ACT_NOTIFY;
        return add_rule_action(f, action, name, n, cmp, error);
}

/* A rule whose errno is not a refusal to report: the expected answer of a call that has a
 * fallback (clone3()'s ENOSYS, which glibc meets at every thread and process it starts), or an
 * answer the filter gives in the kernel's place (errno 0). */
static int add_rule_unreported(const Filter *f, uint32_t action, const char *name, unsigned n,
                               const struct scmp_arg_cmp *cmp, char **error) {
        return add_rule_action(f, action, name, n, cmp, error);
}

/* scmp_filter_ctx is a void pointer, which C converts to a Filter pointer without a word: a rule
 * handed the libseccomp context instead of the Filter would compile and crash every run. These
 * make it a compile error (a void pointer matches no association). */
#define FILTER_ARG(f) _Generic((f), Filter *: (f), const Filter *: (f))
#define add_rule(f, ...) (add_rule)(FILTER_ARG(f), __VA_ARGS__)
#define add_rule_unreported(f, ...) (add_rule_unreported)(FILTER_ARG(f), __VA_ARGS__)

/* Sockets are an allowlist inside the default-allow filter: each family, type and protocol not
 * listed is kernel code that no skill needs, and on a stock kernel often a module the kernel loads
 * on demand when asked for it (SCTP, DCCP, most of the hardware families). */
typedef struct SocketFamily {
        int family;
        bool check_type;        /* SOCK_STREAM and SOCK_DGRAM only */
        const int *protocols;   /* allowed protocols, 0 included; NULL: any */
        size_t n_protocols;
} SocketFamily;

/* TCP, UDP and the ICMP "ping" sockets; 0 picks the type's default (TCP or UDP). */
static const int inet_protocols[] = { 0, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP };
static const int inet6_protocols[] = { 0, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6 };
/* glibc's getaddrinfo() asks the routing netlink which address families are configured. */
static const int netlink_protocols[] = { NETLINK_ROUTE };

static const SocketFamily socket_families[] = {
        { AF_UNIX,    false, NULL,              0 },
        { AF_INET,    true,  inet_protocols,    ELEMENTSOF(inet_protocols) },
        { AF_INET6,   true,  inet6_protocols,   ELEMENTSOF(inet6_protocols) },
        { AF_NETLINK, false, netlink_protocols, ELEMENTSOF(netlink_protocols) },
};

static bool int_in(int v, const int *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (l[i] == v)
                        return true;
        return false;
}

/* Refuses the values lo..hi of argument arg (the bits of it in field, all 64 or the low few),
 * optionally only where first also holds: as the fewest aligned blocks of a power of two, one
 * masked comparison each ((arg & mask) == lo), so that the program tests a run of refused values
 * with one instruction rather than one per value (libseccomp compares a 64-bit argument as two
 * halves: a 64-bit field's blocks also need its high half zero). A block of one value is an
 * equality, which libseccomp chains at one instruction each. */
static int refuse_range(const Filter *f, uint32_t action, const char *name, const struct scmp_arg_cmp *first,
                        unsigned arg, uint64_t field, uint64_t lo, uint64_t hi, char **error) {
        struct scmp_arg_cmp cmp[2];
        unsigned n = 0;
        int r;

        assert(lo <= hi && (hi & ~field) == 0);
        if (first)
                cmp[n++] = *first;
        for (;;) {
                /* The largest block that starts at lo (aligned) and ends at hi at the latest. */
                uint64_t size = lo == 0 ? field / 2 + 1 : lo & -lo;

                while (size > 1 && size - 1 > hi - lo)
                        size /= 2;
                if (size == 1 && field == UINT64_MAX)
                        cmp[n] = (struct scmp_arg_cmp) { arg, SCMP_CMP_EQ, lo, 0 };
                else
                        cmp[n] = (struct scmp_arg_cmp) { arg, SCMP_CMP_MASKED_EQ, field & ~(size - 1), lo };
                r = add_rule(f, action, name, n + 1, cmp, error);
                if (r < 0)
                        return r;
                if (hi - lo <= size - 1)
                        return 0;
                lo += size;
        }
}

/* Refuses every value of argument arg (its bits in field) outside allowed, optionally only where
 * first also holds: each gap between allowed values with refuse_range(), and everything above the
 * largest allowed one with one comparison (up to the field's top, for a narrow field). The
 * comparisons of a 64-bit field are on all 64 bits, where the kernel reads an int: a value with
 * high bits set is refused even if its low half would be allowed, so the filter errs towards
 * refusing only. */
static int refuse_outside(const Filter *f, uint32_t action, const char *name,
                          const struct scmp_arg_cmp *first, unsigned arg, uint64_t field, const int *allowed,
                          size_t n_allowed, char **error) {
        struct scmp_arg_cmp cmp[2];
        uint64_t next = 0;              /* the lowest value not yet allowed or refused */
        unsigned n = 0;
        int r;

        for (;;) {
                /* The smallest allowed value at or above next. */
                uint64_t a = UINT64_MAX;
                bool found = false;

                for (size_t i = 0; i < n_allowed; i++) {
                        assert(allowed[i] >= 0 && ((uint64_t) allowed[i] & ~field) == 0);
                        if ((uint64_t) allowed[i] >= next && (uint64_t) allowed[i] <= a) {
                                a = (uint64_t) allowed[i];
                                found = true;
                        }
                }
                if (!found)
                        break;
                if (a > next) {
                        r = refuse_range(f, action, name, first, arg, field, next, a - 1, error);
                        if (r < 0)
                                return r;
                }
                next = a + 1;
        }
        if (field != UINT64_MAX)
                return next <= field ? refuse_range(f, action, name, first, arg, field, next, field, error) : 0;
        if (first)
                cmp[n++] = *first;
        cmp[n] = (struct scmp_arg_cmp) { arg, SCMP_CMP_GE, next, 0 };
        return add_rule(f, action, name, n + 1, cmp, error);
}

/* AF_INET and AF_INET6 (2 and 10) differ in one bit, so one masked comparison of the family
 * picks both, and the rules they share (the types, most of the protocols) are added once. */
#define AF_INET_EITHER_MASK (~(uint64_t) (AF_INET ^ AF_INET6))
_Static_assert((AF_INET ^ AF_INET6) == 8 && (AF_INET & 8) == 0, "AF_INET6 is AF_INET with bit 3 set");

/* The allowlist as policy/seccomp.md states it, one comparison per refused value: what the
 * compact rules below are tested against (tests/sandbox/test-seccomp-verdicts.c: the same verdict
 * for every call and a systematic set of arguments), and what the filter was before they were
 * compact. Never loaded. */
static int refuse_outside_per_value(const Filter *f, uint32_t action, const char *name,
                                    const struct scmp_arg_cmp *first, unsigned arg, const int *allowed,
                                    size_t n_allowed, char **error) {
        struct scmp_arg_cmp cmp[2];
        unsigned n = 0;
        int bound = 0, r;

        if (first)
                cmp[n++] = *first;
        for (size_t i = 0; i < n_allowed; i++)
                bound = MAX(bound, allowed[i] + 1);
        for (int v = 0; v < bound; v++) {
                if (int_in(v, allowed, n_allowed))
                        continue;
                cmp[n] = (struct scmp_arg_cmp) { arg, SCMP_CMP_EQ, (uint64_t) v, 0 };
                r = add_rule(f, action, name, n + 1, cmp, error);
                if (r < 0)
                        return r;
        }
        cmp[n] = (struct scmp_arg_cmp) { arg, SCMP_CMP_GE, (uint64_t) bound, 0 };
        return add_rule(f, action, name, n + 1, cmp, error);
}

static int add_socket_rules_per_value(const Filter *f, char **error) {
        int families[ELEMENTSOF(socket_families)], af_unix = AF_UNIX;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++)
                families[n++] = socket_families[i].family;
        r = refuse_outside_per_value(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", NULL, 0, families, n, error);
        if (r < 0)
                return r;
        r = refuse_outside_per_value(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socketpair", NULL, 0, &af_unix, 1, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++) {
                const SocketFamily *sf = &socket_families[i];
                struct scmp_arg_cmp fam = SCMP_A0(SCMP_CMP_EQ, (uint64_t) sf->family);

                for (int type = 0; sf->check_type && type <= 0xf; type++) {
                        struct scmp_arg_cmp cmp[2] = {
                                fam, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xfU, (uint64_t) type),
                        };

                        if (type == SOCK_STREAM || type == SOCK_DGRAM)
                                continue;
                        r = add_rule(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", 2, cmp, error);
                        if (r < 0)
                                return r;
                }
                if (sf->protocols) {
                        r = refuse_outside_per_value(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", &fam, 2,
                                                     sf->protocols, sf->n_protocols, error);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* The same for every run: whether a run reaches a network is its network namespace's business
 * (one holding only lo, or the host's), not the filter's. A run without network may still serve
 * itself over TCP on lo, as test harnesses and notebook kernels do.
 *
 * The same verdicts as add_socket_rules_per_value() in fewer instructions (socket()'s and
 * socketpair()'s part of the program 168 to 103 on x86-64, the whole 368 to 303; the kernel
 * checks, translates and emulates the program for every call number at each load, about 0.2 us
 * per instruction): refused runs of values as masked blocks, and AF_INET's and AF_INET6's rules
 * shared. */
static int add_socket_rules(const Filter *f, char **error) {
        static const int inet_types[] = { SOCK_STREAM, SOCK_DGRAM };
        const struct scmp_arg_cmp inet_either = SCMP_A0(SCMP_CMP_MASKED_EQ, AF_INET_EITHER_MASK, AF_INET);
        int families[ELEMENTSOF(socket_families)], af_unix = AF_UNIX, inet_any[8];
        size_t n = 0, n_inet_any = 0;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++)
                families[n++] = socket_families[i].family;
        /* Every family up to the highest in use is checked; families past it (AF_MAX grows with
         * kernels) fall under the last rule. */
        r = refuse_outside(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", NULL, 0, UINT64_MAX, families, n, error);
        if (r < 0)
                return r;
        /* Only AF_UNIX has socketpair() anyway. */
        r = refuse_outside(f, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socketpair", NULL, 0, UINT64_MAX, &af_unix, 1, error);
        if (r < 0)
                return r;

        /* EPROTONOSUPPORT: what a kernel without the protocol answers, so that programs probing
         * for it take their fallback. The kernel takes the type from the low four bits; the
         * others are SOCK_NONBLOCK, SOCK_CLOEXEC or EINVAL. */
        r = refuse_outside(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", &inet_either, 1, 0xf, inet_types,
                           ELEMENTSOF(inet_types), error);
        if (r < 0)
                return r;

        /* The protocols either of AF_INET and AF_INET6 allows, refused outside for both; then
         * each family's refusal of the other's own (ICMP, ICMPv6). */
        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++) {
                const SocketFamily *sf = &socket_families[i];

                if ((sf->family & AF_INET_EITHER_MASK) != AF_INET)
                        continue;
                assert(sf->check_type && sf->protocols);
                for (size_t j = 0; j < sf->n_protocols; j++)
                        if (!int_in(sf->protocols[j], inet_any, n_inet_any)) {
                                assert(n_inet_any < ELEMENTSOF(inet_any));
                                inet_any[n_inet_any++] = sf->protocols[j];
                        }
        }
        r = refuse_outside(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", &inet_either, 2, UINT64_MAX, inet_any,
                           n_inet_any, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++) {
                const SocketFamily *sf = &socket_families[i];
                struct scmp_arg_cmp cmp[2] = { SCMP_A0(SCMP_CMP_EQ, (uint64_t) sf->family) };

                if (!sf->protocols)
                        continue;
                if ((sf->family & AF_INET_EITHER_MASK) != AF_INET) {
                        /* No type check outside AF_INET and AF_INET6. */
                        assert(!sf->check_type);
                        r = refuse_outside(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", &cmp[0], 2, UINT64_MAX,
                                           sf->protocols, sf->n_protocols, error);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t j = 0; j < n_inet_any; j++) {
                        if (int_in(inet_any[j], sf->protocols, sf->n_protocols))
                                continue;
                        cmp[1] = SCMP_A2(SCMP_CMP_EQ, (uint64_t) inet_any[j]);
                        r = add_rule(f, SCMP_ACT_ERRNO(EPROTONOSUPPORT), "socket", 2, cmp, error);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static const struct {
        int family;
        const char *name;
} family_names[] = {
        { AF_UNIX, "AF_UNIX" }, { AF_INET, "AF_INET" }, { AF_AX25, "AF_AX25" },
        { AF_IPX, "AF_IPX" }, { AF_APPLETALK, "AF_APPLETALK" }, { AF_NETROM, "AF_NETROM" },
        { AF_BRIDGE, "AF_BRIDGE" }, { AF_ATMPVC, "AF_ATMPVC" }, { AF_X25, "AF_X25" },
        { AF_INET6, "AF_INET6" }, { AF_ROSE, "AF_ROSE" }, { AF_DECnet, "AF_DECnet" },
        { AF_NETBEUI, "AF_NETBEUI" }, { AF_SECURITY, "AF_SECURITY" }, { AF_KEY, "AF_KEY" },
        { AF_NETLINK, "AF_NETLINK" }, { AF_PACKET, "AF_PACKET" }, { AF_ASH, "AF_ASH" },
        { AF_ECONET, "AF_ECONET" }, { AF_ATMSVC, "AF_ATMSVC" }, { AF_RDS, "AF_RDS" },
        { AF_SNA, "AF_SNA" }, { AF_IRDA, "AF_IRDA" }, { AF_PPPOX, "AF_PPPOX" },
        { AF_WANPIPE, "AF_WANPIPE" }, { AF_LLC, "AF_LLC" }, { AF_IB, "AF_IB" },
        { AF_MPLS, "AF_MPLS" }, { AF_CAN, "AF_CAN" }, { AF_TIPC, "AF_TIPC" },
        { AF_BLUETOOTH, "AF_BLUETOOTH" }, { AF_IUCV, "AF_IUCV" }, { AF_RXRPC, "AF_RXRPC" },
        { AF_ISDN, "AF_ISDN" }, { AF_PHONET, "AF_PHONET" }, { AF_IEEE802154, "AF_IEEE802154" },
        { AF_CAIF, "AF_CAIF" }, { AF_ALG, "AF_ALG" }, { AF_NFC, "AF_NFC" },
        { AF_VSOCK, "AF_VSOCK" }, { AF_KCM, "AF_KCM" }, { AF_QIPCRTR, "AF_QIPCRTR" },
        { AF_SMC, "AF_SMC" }, { 44, "AF_XDP" }, { 45, "AF_MCTP" },
};

static const struct {
        int type;
        const char *name;
} type_names[] = {
        { SOCK_STREAM, "SOCK_STREAM" }, { SOCK_DGRAM, "SOCK_DGRAM" }, { SOCK_RAW, "SOCK_RAW" },
        { SOCK_RDM, "SOCK_RDM" }, { SOCK_SEQPACKET, "SOCK_SEQPACKET" }, { SOCK_DCCP, "SOCK_DCCP" },
        { SOCK_PACKET, "SOCK_PACKET" },
};

static const char *const ns_flag_names[] = {
        "CLONE_NEWNS", "CLONE_NEWUTS", "CLONE_NEWIPC", "CLONE_NEWUSER", "CLONE_NEWPID",
        "CLONE_NEWNET", "CLONE_NEWCGROUP", "CLONE_NEWTIME",
};
_Static_assert(ELEMENTSOF(ns_flag_names) == ELEMENTSOF(ns_flags), "one name per flag");

static void describe_family(int family, char *buf, size_t size) {
        for (size_t i = 0; i < ELEMENTSOF(family_names); i++)
                if (family_names[i].family == family) {
                        (void) snprintf(buf, size, "%s", family_names[i].name);
                        return;
                }
        (void) snprintf(buf, size, "family %d", family);
}

/* socket(): the family when it is not in the table, else the type, else the protocol, which is
 * the order in which add_socket_rules() refuses them. */
static void describe_socket(const uint64_t args[static 6], char *buf, size_t size) {
        int family = (int) args[0], type = (int) (args[1] & 0xf), protocol = (int) args[2];
        const SocketFamily *f = NULL;
        size_t n;

        describe_family(family, buf, size);
        for (size_t i = 0; i < ELEMENTSOF(socket_families); i++)
                if (socket_families[i].family == family && args[0] == (uint64_t) family)
                        f = &socket_families[i];
        if (!f)
                return;
        n = strlen(buf);
        for (size_t i = 0; i < ELEMENTSOF(type_names); i++)
                if (type_names[i].type == type) {
                        (void) snprintf(buf + n, size - n, " %s", type_names[i].name);
                        break;
                }
        if (strlen(buf) == n)
                (void) snprintf(buf + n, size - n, " type %d", type);
        if (f->check_type && type != SOCK_STREAM && type != SOCK_DGRAM)
                return;
        n = strlen(buf);
        (void) snprintf(buf + n, size - n, " protocol %d", protocol);
}

static void describe_ns_flags(uint64_t flags, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(ns_flags) && n < size; i++)
                if (flags & ns_flags[i])
                        n += (size_t) snprintf(buf + n, size - n, "%s%s", n > 0 ? "|" : "", ns_flag_names[i]);
}

bool sandbox_seccomp_describe_arg(int nr, const uint64_t args[static 6], char *buf, size_t size) {
        assert(size > 0);

        if (nr == SCMP_SYS(socket))
                describe_socket(args, buf, size);
        else if (nr == SCMP_SYS(socketpair))
                describe_family((int) args[0], buf, size);
        else if (nr == SCMP_SYS(unshare))
                describe_ns_flags(args[0], buf, size);
        else if (nr == SCMP_SYS(clone))
#if defined(__s390__) || defined(__s390x__)
                describe_ns_flags(args[1], buf, size);
#else
                describe_ns_flags(args[0], buf, size);
#endif
        else if (nr == SCMP_SYS(ioctl))
                (void) snprintf(buf, size, "%s",
                                (uint32_t) args[1] == TIOCSTI ? "TIOCSTI" :
                                (uint32_t) args[1] == TIOCLINUX ? "TIOCLINUX" : "");
        else if (nr == SCMP_SYS(personality))
                (void) snprintf(buf, size, "0x%" PRIx64, args[0]);
        /* The calls that reach a process by pid: which one. */
        else if (nr == SCMP_SYS(prlimit64) || nr == SCMP_SYS(sched_setattr) ||
                 nr == SCMP_SYS(sched_setscheduler) || nr == SCMP_SYS(sched_setparam) ||
                 nr == SCMP_SYS(sched_setaffinity))
                (void) snprintf(buf, size, "pid %" PRIi64, (int64_t) (int32_t) args[0]);
        else if (nr == SCMP_SYS(setpriority) || nr == SCMP_SYS(ioprio_set))
                (void) snprintf(buf, size, "which %" PRIi64 " who %" PRIi64, (int64_t) (int32_t) args[0],
                                (int64_t) (int32_t) args[1]);
        else
                return false;
        /* A request the rules of this file did not name (added elsewhere): the raw value. */
        if (buf[0] == '\0')
                (void) snprintf(buf, size, "0x%" PRIx64, nr == SCMP_SYS(ioctl) ? args[1] : args[0]);
        return true;
}

/* What the filter needs of the kernel is asked of it directly, a few seccomp() calls whose
 * arguments cannot take effect, rather than through libseccomp's API level: seccomp_api_get()
 * probed ten things (TSYNC, the log action and flag, SPEC_ALLOW, TSYNC_ESRCH...) that neither
 * the generation nor the load of our programs uses, on every run, 15 us with the first touch of
 * its code, and the cache key no longer needs the level (seccomp-cache.c). The conditions are
 * the ones under which libseccomp generates each variant (it refuses the bad-architecture
 * action below API level 3, and SCMP_ACT_NOTIFY without SECCOMP_GET_NOTIF_SIZES) and the
 * engine loads it (flags 0, or SECCOMP_FILTER_FLAG_NEW_LISTENER). */
bool sandbox_seccomp_notify_available(void) {
        uint32_t action = SECCOMP_RET_USER_NOTIF;
        struct seccomp_notif_sizes sizes;

        /* Linux 5.0: the action, the sizes, and the listener flag (a NULL program is EFAULT where
         * the flag is known, before anything is installed; EINVAL where it is not). */
        if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0 ||
            syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
                return false;
        return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, NULL) < 0 &&
                errno == EFAULT;
}

bool sandbox_seccomp_available(void) {
        uint32_t action = SECCOMP_RET_KILL_PROCESS;

        /* EINVAL: the kernel was built without seccomp. The filter kills the bad architectures
         * with SECCOMP_RET_KILL_PROCESS (Linux 4.14): without it (or where seccomp(2) itself is
         * missing, as under Valgrind, which answers ENOSYS) the layer counts as unavailable
         * rather than failing half-way through building it. */
        return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
                syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

int sandbox_seccomp_new_full(bool notify, bool reference, scmp_filter_ctx *ret, char **error) {
        _cleanup_(sym_seccomp_releasep) scmp_filter_ctx ctx = NULL;
        struct scmp_arg_cmp cmp;
        Filter f;
        int r;

        r = dlopen_libseccomp(error);
        if (r < 0)
                return r;
        ctx = sym_seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return error_setf(error, -ENOMEM, "Failed to allocate a seccomp filter");
        f = (Filter) { .ctx = ctx, .notify = notify };

        /* Only the native architecture: no seccomp_arch_add(), so the x86 and x32 entry points are
         * "bad arch" and kill. libseccomp also kills x32-numbered calls on x86-64 this way. */
        r = sym_seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return error_setf(error, r, "Failed to set the seccomp bad-arch action");
        /* The engine sets no_new_privs itself, before dropping capabilities; keep it explicit. */
        r = sym_seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
        if (r < 0)
                return error_setf(error, r, "Failed to set no_new_privs on the filter");
        /* The rules as a binary tree over the call numbers instead of one long chain: the same
         * verdicts, a shorter program for the kernel to check, translate and load in every run
         * (0.23 -> 0.14 ms), and fewer instructions for the calls the kernel's action cache cannot
         * answer alone. */
        r = sym_seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return error_setf(error, r, "Failed to have the seccomp filter generated as a binary tree");

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), refused[i], 0, NULL, error);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < ELEMENTSOF(refused_enosys); i++) {
                r = add_rule(&f, SCMP_ACT_ERRNO(ENOSYS), refused_enosys[i], 0, NULL, error);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(init_targets); i++) {
                r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), init_targets[i].name, init_targets[i].n,
                             init_targets[i].cmp, error);
                if (r < 0)
                        return r;
        }

        /* clone3() takes its flags in a struct the filter cannot read: ENOSYS makes glibc fall
         * back to clone(), whose flags we can check. */
        r = add_rule_unreported(&f, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(ns_flags); i++) {
                cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
                r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), "unshare", 1, &cmp, error);
                if (r < 0)
                        return r;
                /* On clone() the low byte is the exit signal; CLONE_NEWTIME (0x80) is not a flag
                 * there. */
                if (ns_flags[i] == CLONE_NEWTIME)
                        continue;
                /* x86-64 passes the flags first; s390 swaps the first two arguments. */
#if defined(__s390__) || defined(__s390x__)
                cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
#endif
                r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), "clone", 1, &cmp, error);
                if (r < 0)
                        return r;
        }

        /* TIOCSTI pushes input into a terminal, TIOCLINUX reaches the console. The kernel looks
         * at the low 32 bits of the command only, so compare exactly those. */
        cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCSTI);
        r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &cmp, error);
        if (r < 0)
                return r;
        cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCLINUX);
        r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &cmp, error);
        if (r < 0)
                return r;

        /* personality(): the engine set PER_LINUX before loading the filter; setting it again is
         * allowed, any other persona (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ...) is refused. The
         * query 0xffffffff answers PER_LINUX without reaching the kernel (errno 0 returns 0), which
         * is exact since nothing can have changed it. A second rule for the same argument could
         * not express "neither 0 nor 0xffffffff" otherwise. */
        cmp = SCMP_A0(SCMP_CMP_NE, PER_LINUX);
        r = add_rule(&f, SCMP_ACT_ERRNO(EPERM), "personality", 1, &cmp, error);
        if (r < 0)
                return r;
        cmp = SCMP_A0(SCMP_CMP_EQ, 0xFFFFFFFFU);
        r = add_rule_unreported(&f, SCMP_ACT_ERRNO(0), "personality", 1, &cmp, error);
        if (r < 0)
                return r;

        r = reference ? add_socket_rules_per_value(&f, error) : add_socket_rules(&f, error);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(ctx);
        return 0;
}

int sandbox_seccomp_new(bool notify, scmp_filter_ctx *ret, char **error) {
        return sandbox_seccomp_new_full(notify, false, ret, error);
}

int sandbox_seccomp_program_full(bool notify, bool reference, struct sock_filter **ret, size_t *ret_n,
                                 char **error) {
        _cleanup_(sym_seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_free_ struct sock_filter *prog = NULL;
        _cleanup_close_ int fd = -EBADF;
        off_t size;
        ssize_t n;
        int r;

        r = sandbox_seccomp_new_full(notify, reference, &ctx, error);
        if (r < 0)
                return r;
        /* libseccomp 2.5 exports to an fd only. */
        fd = memfd_create("skilld-seccomp-bpf", MFD_CLOEXEC);
        if (fd < 0)
                return error_setf(error, -errno, "Failed to create a memfd for the seccomp filter: %m");
        r = sym_seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return error_setf(error, r, "Failed to generate the seccomp filter: %s", strerror(-r));
        size = lseek(fd, 0, SEEK_END);
        if (size < 0)
                return error_setf(error, -errno, "Failed to size the seccomp filter: %m");
        if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
            (size_t) size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return error_setf(error, -EBADMSG, "The seccomp filter's program has an invalid size (%jd bytes)",
                                  (intmax_t) size);
        prog = malloc((size_t) size);
        if (!prog)
                return error_setf(error, -ENOMEM, "Out of memory");
        n = pread(fd, prog, (size_t) size, 0);
        if (n < 0)
                return error_setf(error, -errno, "Failed to read the seccomp filter's program: %m");
        if (n != size)
                return error_setf(error, -EIO, "Short read of the seccomp filter's program");
        *ret = TAKE_PTR(prog);
        *ret_n = (size_t) size / sizeof(struct sock_filter);
        return 0;
}

int sandbox_seccomp_program(bool notify, struct sock_filter **ret, size_t *ret_n, char **error) {
        return sandbox_seccomp_program_full(notify, false, ret, ret_n, error);
}
