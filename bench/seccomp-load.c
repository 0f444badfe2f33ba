/* seccomp-load: what loading a seccomp program costs, by its length. Loads each program given
 * ROUNDS times, each time in a fresh child (a loaded filter stays for the process's life, and
 * stacked ones add up), the programs in turn in every round, and prints the median, p10 and p90
 * of the seccomp() call alone, in µs. A program is a file of raw BPF instructions or an entry of
 * the seccomp cache (skilld/sandbox/seccomp-cache.c: its header and key are skipped), such as the
 * ones bench/phases.py leaves in /run/skilld/seccomp for each build it runs (as root):
 *
 *   cc -O2 -o seccomp-load bench/seccomp-load.c
 *   ./seccomp-load 2000 /run/skilld/seccomp/skillctl.notify.bpf /run/skilld/seccomp/skillctl-1.notify.bpf
 *
 * The child sets no_new_privs and loads with flags 0 (the engine's skill process asks for a
 * listener too, which costs nothing measurable: bench/README.md, eighth round). */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct Program {
        const char *path;
        struct sock_filter *insns;
        unsigned short n;
        double *usec;
} Program;

static void die(const char *what) {
        perror(what);
        exit(1);
}

static void program_read(Program *p) {
        static uint8_t buf[16 + 16 + 4096 + BPF_MAXINSNS * sizeof(struct sock_filter)];
        FILE *f = fopen(p->path, "re");
        size_t size, off = 0;

        if (!f)
                die(p->path);
        size = fread(buf, 1, sizeof(buf), f);
        (void) fclose(f);
        if (size >= 32 && memcmp(buf, "skilld-seccomp", 14) == 0) {
                uint32_t key_size;

                memcpy(&key_size, buf + 16, sizeof(key_size));
                off = 32 + key_size;
        }
        if (size <= off || (size - off) % sizeof(struct sock_filter) != 0 ||
            (size - off) / sizeof(struct sock_filter) > BPF_MAXINSNS) {
                fprintf(stderr, "%s: not a BPF program\n", p->path);
                exit(1);
        }
        p->n = (unsigned short) ((size - off) / sizeof(struct sock_filter));
        p->insns = malloc(size - off);
        if (!p->insns)
                die("malloc");
        memcpy(p->insns, buf + off, size - off);
}

static double now_usec(void) {
        struct timespec t;

        (void) clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec * 1e6 + (double) t.tv_nsec / 1e3;
}

/* One load in a fresh child: the seccomp() call's length, or -1 if it failed. */
static double load_once(const Program *p) {
        struct sock_fprog prog = { .len = p->n, .filter = p->insns };
        double usec = -1;
        int fd[2];
        pid_t pid;

        if (pipe(fd) < 0)
                die("pipe");
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                double start;

                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(1);
                start = now_usec();
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
                        usec = now_usec() - start;
                _exit(write(fd[1], &usec, sizeof(usec)) == sizeof(usec) ? 0 : 1);
        }
        (void) close(fd[1]);
        if (read(fd[0], &usec, sizeof(usec)) != sizeof(usec))
                usec = -1;
        (void) close(fd[0]);
        (void) waitpid(pid, NULL, 0);
        return usec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
        Program *programs;
        int rounds, n;

        if (argc < 3 || (rounds = atoi(argv[1])) < 1) {
                fprintf(stderr, "usage: %s ROUNDS PROGRAM...\n", argv[0]);
                return 2;
        }
        n = argc - 2;
        programs = calloc((size_t) n, sizeof(*programs));
        if (!programs)
                die("calloc");
        for (int i = 0; i < n; i++) {
                programs[i].path = argv[2 + i];
                program_read(&programs[i]);
                programs[i].usec = calloc((size_t) rounds, sizeof(double));
                if (!programs[i].usec)
                        die("calloc");
        }
        for (int r = 0; r < rounds; r++)
                for (int i = 0; i < n; i++) {
                        /* Every round in another order: i from r's rotation. */
                        Program *p = &programs[(i + r) % n];

                        p->usec[r] = load_once(p);
                        if (p->usec[r] < 0) {
                                fprintf(stderr, "%s: the kernel refused the program\n", p->path);
                                return 1;
                        }
                }
        for (int i = 0; i < n; i++) {
                Program *p = &programs[i];

                qsort(p->usec, (size_t) rounds, sizeof(double), cmp_double);
                printf("%-50s %4u insns  p10 %6.1f  median %6.1f  p90 %6.1f us\n", p->path, p->n,
                       p->usec[rounds / 10], p->usec[rounds / 2], p->usec[rounds * 9 / 10]);
        }
        return 0;
}
