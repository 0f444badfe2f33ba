/* The record of the system calls the filter refused during a run.
 *
 * The skill process loads the variant of the filter whose refusals are SECCOMP_RET_USER_NOTIF and
 * hands the listener fd to the engine before execve(). Each refused call then stops in the kernel
 * until the engine answers it; the engine answers with exactly what the filter's other variant
 * (refusals as SECCOMP_RET_ERRNO) returns for the same call, by running that BPF program on the
 * call's seccomp_data, and notes the call. So the skill sees what it always saw, and the run can
 * say what was refused. The engine never lets a call through (no SECCOMP_USER_NOTIF_FLAG_CONTINUE):
 * when the two variants disagree, which is a bug, the answer is EPERM.
 *
 * The errno program is obtained at the first notification (seccomp-cache.c: the process's copy,
 * the cache file, or generated): a run that is refused nothing pays nothing but the poll() entry. The record is bounded: SANDBOX_REFUSED_MAX distinct calls,
 * counts saturate. A listener the engine no longer holds would make every refused call fail with
 * ENOSYS instead of its errno, so the engine keeps it until the run's last process is gone. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "sandbox-internal.h"
#include "seccomp-dlopen.h"

/* Distinct (syscall, argument) pairs kept; a skill refused in a loop fills one entry. */
#define SANDBOX_REFUSED_MAX 64U
/* Notifications answered per call of seccomp_supervisor_process(), so the streams and the
 * deadline are not starved by a skill that does nothing but refused calls. */
#define SUPERVISOR_BATCH 64U

typedef struct RefusedEntry {
        int nr;
        bool has_arg;
        char arg[96];
        uint32_t count;
} RefusedEntry;

struct SeccompSupervisor {
        int fd;                         /* the listener; -EBADF until the skill process sent it */
        bool gone;                      /* no process uses the filter any more */
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        size_t req_size;
        size_t resp_size;
        const struct sock_filter *prog; /* the errno variant, obtained at the first notification */
        size_t n_prog;
        bool prog_failed;

        RefusedEntry entries[SANDBOX_REFUSED_MAX];
        size_t n_entries;
        bool truncated;
};

SeccompSupervisor *seccomp_supervisor_free(SeccompSupervisor *s) {
        if (!s)
                return NULL;
        (void) safe_close(s->fd);
        free(s->req);
        free(s->resp);
        free(s);
        return NULL;
}

int seccomp_supervisor_new(SeccompSupervisor **ret) {
        _cleanup_(seccomp_supervisor_freep) SeccompSupervisor *s = NULL;
        struct seccomp_notif_sizes sizes = {};

        /* Sized by the kernel: it may know larger structs than our headers, and it wants the
         * receive buffer zeroed to its own size. */
        if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
                return -errno;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = -EBADF;
        s->req_size = MAX((size_t) sizes.seccomp_notif, sizeof(struct seccomp_notif));
        s->resp_size = MAX((size_t) sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
        s->req = calloc(1, s->req_size);
        s->resp = calloc(1, s->resp_size);
        if (!s->req || !s->resp)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

void seccomp_supervisor_attach(SeccompSupervisor *s, int fd) {
        if (s->fd >= 0 || s->gone) {
                (void) safe_close(fd);
                return;
        }
        s->fd = fd;
}

int seccomp_supervisor_fd(const SeccompSupervisor *s) {
        return s && !s->gone ? s->fd : -EBADF;
}

/* A classic BPF interpreter for the instructions seccomp(2) accepts, run on one call. Jumps are
 * checked to stay inside the program, loads inside seccomp_data; anything else is -EINVAL. */
int sandbox_seccomp_program_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d,
                                uint32_t *ret) {
        uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};

        for (size_t pc = 0; pc < n; pc++) {
                const struct sock_filter *f = &prog[pc];
                uint32_t k = f->k, v;
                size_t off;
                bool t;

                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        if (k % 4 != 0 || k > sizeof(*d) - 4)
                                return -EINVAL;
                        memcpy(&a, (const uint8_t *) d + k, sizeof(a));
                        continue;
                case BPF_LD | BPF_W | BPF_LEN:
                        a = sizeof(*d);
                        continue;
                case BPF_LDX | BPF_W | BPF_LEN:
                        x = sizeof(*d);
                        continue;
                case BPF_LD | BPF_IMM:
                        a = k;
                        continue;
                case BPF_LDX | BPF_IMM:
                        x = k;
                        continue;
                case BPF_LD | BPF_MEM:
                case BPF_LDX | BPF_MEM:
                case BPF_ST:
                case BPF_STX:
                        if (k >= BPF_MEMWORDS)
                                return -EINVAL;
                        if (f->code == (BPF_LD | BPF_MEM))
                                a = mem[k];
                        else if (f->code == (BPF_LDX | BPF_MEM))
                                x = mem[k];
                        else
                                mem[k] = f->code == BPF_ST ? a : x;
                        continue;
                case BPF_MISC | BPF_TAX:
                        x = a;
                        continue;
                case BPF_MISC | BPF_TXA:
                        a = x;
                        continue;
                case BPF_RET | BPF_K:
                        *ret = k;
                        return 0;
                case BPF_RET | BPF_A:
                        *ret = a;
                        return 0;
                case BPF_JMP | BPF_JA:
                        if (k >= n - pc - 1)
                                return -EINVAL;
                        pc += k;
                        continue;
                default:
                        break;
                }

                v = BPF_SRC(f->code) == BPF_X ? x : k;
                if (BPF_CLASS(f->code) == BPF_JMP) {
                        switch (BPF_OP(f->code)) {
                        case BPF_JEQ:
                                t = a == v;
                                break;
                        case BPF_JGT:
                                t = a > v;
                                break;
                        case BPF_JGE:
                                t = a >= v;
                                break;
                        case BPF_JSET:
                                t = (a & v) != 0;
                                break;
                        default:
                                return -EINVAL;
                        }
                        off = t ? f->jt : f->jf;
                        if (off >= n - pc - 1)
                                return -EINVAL;
                        pc += off;
                        continue;
                }
                if (BPF_CLASS(f->code) != BPF_ALU)
                        return -EINVAL;
                switch (BPF_OP(f->code)) {
                case BPF_ADD:
                        a += v;
                        break;
                case BPF_SUB:
                        a -= v;
                        break;
                case BPF_MUL:
                        a *= v;
                        break;
                case BPF_DIV:
                case BPF_MOD:
                        /* The kernel ends the program with 0 on a division by zero. */
                        if (v == 0) {
                                *ret = 0;
                                return 0;
                        }
                        a = BPF_OP(f->code) == BPF_DIV ? a / v : a % v;
                        break;
                case BPF_OR:
                        a |= v;
                        break;
                case BPF_AND:
                        a &= v;
                        break;
                case BPF_XOR:
                        a ^= v;
                        break;
                case BPF_LSH:
                        a = v < 32 ? a << v : 0;
                        break;
                case BPF_RSH:
                        a = v < 32 ? a >> v : 0;
                        break;
                case BPF_NEG:
                        a = -a;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return -EINVAL; /* fell off the end */
}

/* The errno the refusal of this call has: what the errno variant answers. Anything that is not
 * an ERRNO action there means the variants disagree, and the call is refused with EPERM. */
static int refusal_errno(SeccompSupervisor *s, const struct seccomp_data *d) {
        uint32_t action;

        if (!s->prog && !s->prog_failed && sandbox_seccomp_program_cached(false, &s->prog, &s->n_prog, NULL) < 0)
                s->prog_failed = true;
        if (!s->prog || sandbox_seccomp_program_run(s->prog, s->n_prog, d, &action) < 0)
                return EPERM;
        if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
                return EPERM;
        return (int) MIN(action & SECCOMP_RET_DATA, 4095U); /* the kernel caps at MAX_ERRNO */
}

static void record(SeccompSupervisor *s, const struct seccomp_data *d) {
        RefusedEntry key = { .nr = d->nr };
        uint64_t args[6];

        memcpy(args, d->args, sizeof(args));
        key.has_arg = sandbox_seccomp_describe_arg(d->nr, args, key.arg, sizeof(key.arg));
        for (size_t i = 0; i < s->n_entries; i++) {
                RefusedEntry *e = &s->entries[i];

                if (e->nr == key.nr && e->has_arg == key.has_arg && streq(e->arg, key.arg)) {
                        if (e->count < UINT32_MAX)
                                e->count++;
                        return;
                }
        }
        if (s->n_entries >= ELEMENTSOF(s->entries)) {
                s->truncated = true;
                return;
        }
        key.count = 1;
        s->entries[s->n_entries++] = key;
}

int seccomp_supervisor_process(SeccompSupervisor *s) {
        for (unsigned i = 0; i < SUPERVISOR_BATCH && seccomp_supervisor_fd(s) >= 0; i++) {
                struct pollfd p = { .fd = s->fd, .events = POLLIN };
                int e;

                if (poll(&p, 1, 0) < 0)
                        return errno == EINTR ? 0 : -errno;
                if (!(p.revents & POLLIN)) {
                        /* POLLHUP: the last process under the filter is gone, and nothing can
                         * come any more; stop polling it (it would stay readable as hung up). */
                        if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
                                s->gone = true;
                        return 0;
                }

                memset(s->req, 0, s->req_size);
                if (ioctl(s->fd, SECCOMP_IOCTL_NOTIF_RECV, s->req) < 0) {
                        /* ENOENT: the caller was interrupted (a signal) before we read it; the
                         * call is restarted and notified again, or ends with EINTR. */
                        if (errno == ENOENT || errno == EINTR)
                                continue;
                        return -errno;
                }

                e = refusal_errno(s, &s->req->data);
                memset(s->resp, 0, s->resp_size);
                s->resp->id = s->req->id;
                s->resp->error = -e;
                s->resp->val = 0;
                if (ioctl(s->fd, SECCOMP_IOCTL_NOTIF_SEND, s->resp) < 0) {
                        if (errno == ENOENT || errno == EINTR)
                                continue;
                        return -errno;
                }
                /* errno 0 is an answer the filter gives in the kernel's place, not a refusal. */
                if (e != 0)
                        record(s, &s->req->data);
        }
        return 0;
}

int seccomp_supervisor_to_result(const SeccompSupervisor *s, RunResult *r) {
        RunRefused *list = NULL;
        bool loaded;

        /* The skill process never got as far as loading the filter: nothing to tell. */
        if (s->fd < 0)
                return 0;
        if (s->n_entries > 0) {
                list = calloc(s->n_entries, sizeof(RunRefused));
                if (!list)
                        return -ENOMEM;
        }
        /* The calls' names are libseccomp's: where it cannot be loaded, their numbers. */
        loaded = s->n_entries > 0 && dlopen_libseccomp(NULL) >= 0;
        for (size_t i = 0; i < s->n_entries; i++) {
                const RefusedEntry *e = &s->entries[i];
                char *name = loaded ? sym_seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, e->nr) : NULL;

                list[i].syscall = name ?: strdup_printf("syscall %d", e->nr);
                list[i].arg = e->has_arg ? strdup(e->arg) : NULL;
                list[i].count = e->count;
                if (!list[i].syscall || (e->has_arg && !list[i].arg)) {
                        run_refused_free_many(list, i + 1);
                        return -ENOMEM;
                }
        }
        run_refused_free_many(r->refused, r->n_refused);
        r->refused = list;
        r->n_refused = s->n_entries;
        r->refused_known = true;
        r->refused_truncated = s->truncated;
        return 0;
}
