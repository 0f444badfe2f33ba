/* The seccomp filter's programs, generated once rather than on every run.
 *
 * libseccomp builds the rules and generates the BPF in about 1.2 ms of CPU per variant, right
 * after the run's clone (bench/README.md). Its output is a pure function of:
 *  - the variant (refusals notified or returned as their errno);
 *  - the build of the code that holds the rules: the ELF build-id of the object holding
 *    sandbox_seccomp_new() (the skilld or skillctl binary: the rules are linked into it), which
 *    any change of the rules or of how they are compiled changes. A binary without a build-id is
 *    never cached: nothing else tells a rebuilt tree from the one that wrote the file;
 *  - libseccomp: the build-id of its library (a distribution's patch changes the generator, not
 *    the version). The engine loads libseccomp only to generate (seccomp-dlopen.h), from one file
 *    named at build time, so until it is loaded the build-id is read from that file, which is
 *    the library that would generate the program now; once loaded, from the copy in memory. A
 *    library without a build-id is never cached. Its version is not in the key (it would take
 *    loading the library to ask): the build-id tells its builds apart, versions among them;
 *  - the architecture (the ELF machine, class and byte order of the binary holding the rules)
 *    and the kernel (uname's release, version and machine).
 * That is the key. libseccomp's API level (what it found the kernel supports) is not in it: the
 * level decides only whether a variant can be generated at all (below 3 libseccomp refuses the
 * bad-architecture action, below 5 the notify action), and where it can, the bytes are the same
 * at every level (tests/sandbox test_same_at_every_level checks that against the libseccomp in
 * use, so that a libseccomp where it matters fails the tests). Whether this kernel can take a
 * variant is asked before any run (sandbox_seccomp_available()); an entry can only hold what
 * the same libseccomp generated from the same rules. Asking for the level took ten probes of
 * the kernel and libseccomp's code paged in, on every run, cached program or not. A program is kept at two levels: in the process (each variant once obtained
 * stays, a few KiB), and in a file whose header holds the key and a
 * checksum of key and program, read back only if it is a regular file (no symlink followed) of
 * our own uid that nobody else may write, in a directory that only we may write, of a sane size,
 * with the same key and a matching checksum. Anything else, or any failure to read or write, and
 * the program is generated as before (and the file rewritten atomically): the cache can make a
 * run faster, never fail it or change what it loads.
 *
 * Where the files live:
 *  - root: /run/skilld/seccomp, 0700. /run is a tmpfs, so a read is a copy from memory and a
 *    torn write cannot outlive a crash, and it is emptied at boot, which is when the kernel (part
 *    of the key) can change, so entries of old kernels never pile up. /run/skilld is the service's
 *    runtime directory (tmpfiles.d makes it 0755 root for the bus socket and the uid lock), the
 *    one place under /run that skilld.service's ProtectSystem=strict lets it write
 *    (ReadWritePaths=). /var/cache/skilld, its CacheDirectory=, would be writable too, but it is
 *    on disk, 0755 for the environments every run reads, and keeps entries of every kernel ever
 *    booted. Embedded runs of root (skillctl run --local) share the directory with the service.
 *    A service given another runtime directory (--runtime-dir) uses its seccomp/ instead.
 *  - another user: $XDG_RUNTIME_DIR/skilld/seccomp, 0700, if $XDG_RUNTIME_DIR is a directory of
 *    theirs that nobody else may enter (pam_systemd makes it 0700; a tmpfs too, removed at the
 *    last logout). Only that user and root can write there. A process of that user able to plant
 *    a weaker program could as well ptrace their skillctl, change their skills, or run the skill
 *    with no sandbox at all: the filter protects the host from the skill, not the user from
 *    themselves, so the file gives nobody a power they did not have. The skill cannot reach it:
 *    a run sees nothing of /run, and no process of a run outlives it. Without a usable
 *    $XDG_RUNTIME_DIR there is no file, and each run generates its programs.
 * A file's name is the program's name and the variant, so that skilld and skillctl, whose
 * build-ids differ, do not keep replacing each other's; an entry whose key no longer matches
 * (a new build, libseccomp or kernel) is replaced in place, so there is one per program and
 * variant at most. The kernel checks whatever program it is given, like any other. */
#include <elf.h>
#include <link.h>
#include <linux/filter.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "error.h"
#include "fileio.h"
#include "log.h"
#include "sandbox-internal.h"
#include "seccomp-dlopen.h"

/* Bumped when what generates the programs changes in a way the key might not show (3: the socket
 * allowlist as masked blocks, ninth round; the build-id changed with it too): an entry of another
 * magic is regenerated and replaced, never loaded. */
#define CACHE_MAGIC "skilld-seccomp3\n"
#define CACHE_KEY_MAX 4096U

/* Native byte order and layout: the architecture is part of the key. */
typedef struct CacheHeader {
        char magic[16];
        uint32_t key_size;              /* the key follows the header, then the program */
        uint32_t n_insns;
        uint64_t checksum;              /* cache_checksum() of key and program */
} CacheHeader;
_Static_assert(sizeof(CacheHeader) == 16 + 4 + 4 + 8, "no padding in the header");
_Static_assert(sizeof(CACHE_MAGIC) - 1 == sizeof(((CacheHeader *) NULL)->magic), "magic fills its field");

/* The process's programs, [notify]: obtained once, kept for the process's life. The engine is
 * single-threaded. */
static struct {
        struct sock_filter *insns;
        size_t n;
} programs[2];

typedef struct BuildIdSearch {
        uintptr_t addr;                 /* an address inside the object */
        bool found;                     /* the object was found */
        char arch[32];                  /* its ELF machine, class and byte order */
        char hex[2 * 64 + 1];           /* its build-id, "" if it has none */
} BuildIdSearch;

/* The GNU build-id among the notes in [p, end), as hex into hex (left as it is if none). */
static void notes_build_id(const uint8_t *p, const uint8_t *end, size_t align, char hex[static 2 * 64 + 1]) {
        while ((size_t) (end - p) >= sizeof(ElfW(Nhdr))) {
                const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *) (const void *) p;
                size_t name_size = ((size_t) nh->n_namesz + align - 1) & ~(align - 1);
                size_t desc_size = ((size_t) nh->n_descsz + align - 1) & ~(align - 1);
                const uint8_t *name = p + sizeof(*nh), *desc = name + name_size;

                if (name_size > (size_t) (end - name) || desc_size > (size_t) (end - desc))
                        return;
                if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                    nh->n_descsz > 0 && nh->n_descsz <= 64) {
                        for (size_t i = 0; i < nh->n_descsz; i++)
                                (void) snprintf(hex + 2 * i, 3, "%02x", desc[i]);
                        return;
                }
                p = desc + desc_size;
        }
}

static void note_arch(const ElfW(Ehdr) *eh, char *buf, size_t size) {
        (void) snprintf(buf, size, "%u %u %u", (unsigned) eh->e_machine, (unsigned) eh->e_ident[EI_CLASS],
                        (unsigned) eh->e_ident[EI_DATA]);
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *userdata) {
        BuildIdSearch *s = userdata;
        bool match = false;

        (void) size;
        for (size_t i = 0; i < info->dlpi_phnum && !match; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t start = info->dlpi_addr + ph->p_vaddr;

                match = ph->p_type == PT_LOAD && s->addr >= start && s->addr - start < ph->p_memsz;
        }
        if (!match)
                return 0;
        s->found = true;
        for (size_t i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                const uint8_t *p = (const uint8_t *) (info->dlpi_addr + ph->p_vaddr);

                if (ph->p_type == PT_NOTE && s->hex[0] == '\0')
                        notes_build_id(p, p + ph->p_memsz, ph->p_align == 8 ? 8 : 4, s->hex);
                /* The ELF header is mapped at the start of the segment that holds the file's start. */
                if (ph->p_type == PT_LOAD && ph->p_offset == 0 && ph->p_filesz >= sizeof(ElfW(Ehdr)))
                        note_arch((const ElfW(Ehdr) *) (const void *) p, s->arch, sizeof(s->arch));
        }
        return 1;
}

/* The build-id of the ELF file at path, read from its notes without loading it: as hex into hex,
 * "" if it has none. Only a file of our own class and byte order counts. */
static int file_build_id(const char *path, char hex[static 2 * 64 + 1]) {
        _cleanup_close_ int fd = -EBADF;
        ElfW(Phdr) ph[64];
        ElfW(Ehdr) eh;
        uint8_t notes[4096];
        ssize_t n;

        hex[0] = '\0';
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = pread(fd, &eh, sizeof(eh), 0);
        if (n < 0)
                return -errno;
        if ((size_t) n != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
            eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
            eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
            eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 || eh.e_phnum > ELEMENTSOF(ph))
                return -ENOEXEC;
        n = pread(fd, ph, eh.e_phnum * sizeof(ElfW(Phdr)), (off_t) eh.e_phoff);
        if (n < 0)
                return -errno;
        if ((size_t) n != eh.e_phnum * sizeof(ElfW(Phdr)))
                return -ENOEXEC;
        for (size_t i = 0; i < eh.e_phnum && hex[0] == '\0'; i++) {
                if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > sizeof(notes))
                        continue;
                n = pread(fd, notes, ph[i].p_filesz, (off_t) ph[i].p_offset);
                if (n < 0)
                        return -errno;
                if ((size_t) n == ph[i].p_filesz)
                        notes_build_id(notes, notes + n, ph[i].p_align == 8 ? 8 : 4, hex);
        }
        return 0;
}

/* libseccomp's build-id: of the copy loaded, once one is; until then of the file that
 * dlopen_libseccomp() will load, read from the file. Either way the library that generated a
 * program served from the cache is the one that would generate it now. */
static int libseccomp_build_id(char hex[static 2 * 64 + 1]) {
        BuildIdSearch lib = {};
        const char *path;
        int r;

        if (!sym_seccomp_init) {
                path = libseccomp_path();
                /* A path: the file dlopen_libseccomp() loads. A soname: whichever the dynamic
                 * loader finds; loaded now, to know which. */
                if (path[0] == '/')
                        return file_build_id(path, hex);
                r = dlopen_libseccomp(NULL);
                if (r < 0)
                        return r;
        }
        lib.addr = (uintptr_t) sym_seccomp_init;
        (void) dl_iterate_phdr(find_build_id, &lib);
        if (!lib.found)
                return -ENOENT;
        memcpy(hex, lib.hex, sizeof(lib.hex));
        return 0;
}

int sandbox_seccomp_cache_key(bool notify, char **ret) {
        BuildIdSearch rules = { .addr = (uintptr_t) &sandbox_seccomp_new };
        char lib[2 * 64 + 1];
        struct utsname u;
        char *key;
        int r;

        (void) dl_iterate_phdr(find_build_id, &rules);
        if (rules.hex[0] == '\0' || rules.arch[0] == '\0')
                return -EOPNOTSUPP;
        /* A library without a build-id is never cached either: nothing would tell its builds apart. */
        r = libseccomp_build_id(lib);
        if (r < 0)
                return r;
        if (lib[0] == '\0')
                return -EOPNOTSUPP;
        if (uname(&u) < 0)
                return -errno;
        key = strdup_printf("variant %s\nrules %s\narch %s\nlibseccomp %s\nkernel %s\t%s\t%s\n",
                            notify ? "notify" : "errno", rules.hex, rules.arch, lib, u.release, u.version,
                            u.machine);
        if (!key)
                return -ENOMEM;
        if (strlen(key) > CACHE_KEY_MAX) {
                free(key);
                return -E2BIG;
        }
        *ret = key;
        return 0;
}

/* 64-bit FNV-1a. It finds a torn or damaged file (each step is a bijection of the state, so any
 * one changed byte changes the result); it is no authenticator, nor needs to be: whoever could
 * forge an entry could as well write the right checksum, which is why only a file nobody else
 * may write is read at all. A cryptographic hash would add nothing to that (when this was
 * written it would also have brought libgcrypt's initialization into the service: 0.1 ms and
 * half a MiB of its pages resident). */
static uint64_t cache_checksum(const char *key, const struct sock_filter *insns, size_t n) {
        const uint8_t *parts[2] = { (const uint8_t *) key, (const uint8_t *) insns };
        const size_t sizes[2] = { strlen(key), n * sizeof(*insns) };
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        for (size_t p = 0; p < 2; p++)
                for (size_t i = 0; i < sizes[p]; i++) {
                        h ^= parts[p][i];
                        h *= UINT64_C(0x100000001b3);
                }
        return h;
}

int sandbox_seccomp_cache_load_at(int dir_fd, const char *name, const char *key, struct sock_filter **ret,
                                  size_t *ret_n) {
        _cleanup_free_ uint8_t *buf = NULL;
        _cleanup_free_ struct sock_filter *insns = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t key_size = strlen(key), size;
        CacheHeader h;
        struct stat st;
        ssize_t n;

        /* O_NONBLOCK: a FIFO put in its place must not hang the run (it is refused below). */
        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;          /* ELOOP: a symlink */
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_uid != geteuid() || (st.st_mode & 0022) != 0 || st.st_nlink != 1)
                return -EPERM;
        if (st.st_size < (off_t) sizeof(h) ||
            (uint64_t) st.st_size > sizeof(h) + CACHE_KEY_MAX + (uint64_t) BPF_MAXINSNS * sizeof(struct sock_filter))
                return -EBADMSG;
        size = (size_t) st.st_size;
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        n = loop_read(fd, buf, size);
        if (n < 0)
                return (int) n;
        if ((size_t) n != size)
                return -EBADMSG;
        memcpy(&h, buf, sizeof(h));
        if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0)
                return -EBADMSG;
        if (h.n_insns == 0 || h.n_insns > BPF_MAXINSNS || h.key_size > CACHE_KEY_MAX ||
            size != sizeof(h) + h.key_size + (size_t) h.n_insns * sizeof(struct sock_filter))
                return -EBADMSG;
        if (h.key_size != key_size || memcmp(buf + sizeof(h), key, key_size) != 0)
                return -ESTALE;
        insns = malloc((size_t) h.n_insns * sizeof(struct sock_filter));
        if (!insns)
                return -ENOMEM;
        memcpy(insns, buf + sizeof(h) + key_size, (size_t) h.n_insns * sizeof(struct sock_filter));
        if (cache_checksum(key, insns, h.n_insns) != h.checksum)
                return -EBADMSG;
        *ret = TAKE_PTR(insns);
        *ret_n = h.n_insns;
        return 0;
}

int sandbox_seccomp_cache_store_at(int dir_fd, const char *name, const char *key, const struct sock_filter *insns,
                                   size_t n) {
        _cleanup_free_ uint8_t *buf = NULL;
        uint8_t *p;
        size_t key_size = strlen(key), size;
        CacheHeader h = { .magic = CACHE_MAGIC };

        if (n == 0 || n > BPF_MAXINSNS || key_size > CACHE_KEY_MAX)
                return -EINVAL;
        h.key_size = (uint32_t) key_size;
        h.n_insns = (uint32_t) n;
        h.checksum = cache_checksum(key, insns, n);
        size = sizeof(h) + key_size + n * sizeof(*insns);
        buf = malloc(size);
        if (!buf)
                return -ENOMEM;
        /* The key without its NUL: the header holds its size. */
        p = mempcpy(buf, &h, sizeof(h));
        p = mempcpy(p, key, key_size);
        memcpy(p, insns, n * sizeof(*insns));
        /* A temporary file renamed over the entry (a symlink or anything else there is replaced,
         * not followed): readers see the old entry or the new one. The fsync()s cost nothing on a
         * tmpfs, and elsewhere a torn file would only fail its checksum. */
        return write_file_atomic_at(dir_fd, name, buf, size, 0600);
}

/* dir (under parent_fd), created with mode if missing, as a directory of ours that nobody else
 * may write (private: nobody else may even enter it). */
static int open_own_dir(int parent_fd, const char *dir, mode_t mode, bool private, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat(parent_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                if (mkdirat(parent_fd, dir, mode) < 0 && errno != EEXIST)
                        return -errno;
                fd = openat(parent_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_uid != geteuid() || (st.st_mode & (private ? 0077 : 0022)) != 0)
                return -EPERM;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The service's runtime directory when it is not /run/skilld (skilld --runtime-dir, which tests
 * and benchmarks use so as to touch nothing of the host's). */
static char *runtime_dir_override;

int sandbox_seccomp_cache_set_runtime_dir(const char *dir) {
        char *copy = NULL;

        if (dir) {
                copy = strdup(dir);
                if (!copy)
                        return -ENOMEM;
        }
        free(runtime_dir_override);
        runtime_dir_override = copy;
        return 0;
}

int sandbox_seccomp_cache_dir(int *ret_fd) {
        _cleanup_close_ int base_fd = -EBADF, skilld_fd = -EBADF;
        const char *runtime;
        int r;

        if (runtime_dir_override)
                r = open_own_dir(AT_FDCWD, runtime_dir_override, 0755, false, &skilld_fd);
        else if (geteuid() == 0)
                r = open_own_dir(AT_FDCWD, "/run/skilld", 0755, false, &skilld_fd);
        else {
                runtime = secure_getenv("XDG_RUNTIME_DIR");
                if (!runtime || runtime[0] != '/')
                        return -ENXIO;
                base_fd = open(runtime, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (base_fd < 0)
                        return -errno;
                r = open_own_dir(base_fd, ".", 0700, true, &skilld_fd);
                skilld_fd = safe_close(skilld_fd);
                if (r >= 0)
                        r = open_own_dir(base_fd, "skilld", 0700, true, &skilld_fd);
        }
        if (r < 0)
                return r;
        return open_own_dir(skilld_fd, "seccomp", 0700, true, ret_fd);
}

/* The entry's name: the program's, so that skilld's and skillctl's entries (whose keys differ)
 * do not replace each other. */
static void cache_name(bool notify, char *buf, size_t size) {
        const char *p = program_invocation_short_name;
        size_t n = 0;

        for (; p && *p && n < 64 && n + 1 < size; p++)
                buf[n++] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *p) ? *p : '_';
        (void) snprintf(buf + n, size - n, "%s%s.bpf", n > 0 ? "." : "", notify ? "notify" : "errno");
}

int sandbox_seccomp_cache_get_at(int dir_fd, const char *name, const char *key, bool notify,
                                 struct sock_filter **ret, size_t *ret_n, char **error) {
        _cleanup_free_ struct sock_filter *insns = NULL;
        _cleanup_free_ char *now = NULL;
        bool loaded = sym_seccomp_init != NULL;
        size_t n = 0;
        int r;

        if (dir_fd >= 0 && key) {
                r = sandbox_seccomp_cache_load_at(dir_fd, name, key, &insns, &n);
                if (r >= 0) {
                        *ret = TAKE_PTR(insns);
                        *ret_n = n;
                        return 0;
                }
                log_debug_errno(r, "No usable cached seccomp program %s (%m), generating it.", name);
        }
        r = sandbox_seccomp_program(notify, &insns, &n, error);
        if (r < 0)
                return r;
        /* A key made before libseccomp was loaded named the file's build-id: a library put in its
         * place since (an upgrade) generated this program, which is not that key's to keep. */
        if (dir_fd >= 0 && key && !loaded &&
            (sandbox_seccomp_cache_key(notify, &now) < 0 || !now || !streq(now, key)))
                log_debug("libseccomp changed while %s was generated, not caching it.", name);
        else if (dir_fd >= 0 && key) {
                r = sandbox_seccomp_cache_store_at(dir_fd, name, key, insns, n);
                if (r < 0)
                        log_debug_errno(r, "Failed to cache the seccomp program %s, ignoring: %m", name);
        }
        *ret = TAKE_PTR(insns);
        *ret_n = n;
        return 0;
}

int sandbox_seccomp_program_cached(bool notify, const struct sock_filter **ret, size_t *ret_n, char **error) {
        _cleanup_free_ char *key = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        char name[96];
        int r;

        if (!programs[notify].insns) {
                cache_name(notify, name, sizeof(name));
                r = sandbox_seccomp_cache_key(notify, &key);
                if (r >= 0)
                        r = sandbox_seccomp_cache_dir(&dir_fd);
                if (r < 0)
                        log_debug_errno(r, "Not caching the seccomp program %s, generating it: %m", name);
                r = sandbox_seccomp_cache_get_at(dir_fd, name, key, notify, &programs[notify].insns,
                                                 &programs[notify].n, error);
                if (r < 0)
                        return r;
        }
        *ret = programs[notify].insns;
        *ret_n = programs[notify].n;
        return 0;
}

int sandbox_seccomp_program_fd(bool notify, int *ret_fd, char **error) {
        const struct sock_filter *insns;
        _cleanup_close_ int fd = -EBADF;
        size_t n;
        int r;

        r = sandbox_seccomp_program_cached(notify, &insns, &n, error);
        if (r < 0)
                return r;
        /* Sealed: what the init loads is what was obtained here. */
        fd = memfd_create("skilld-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return error_setf(error, -errno, "Failed to create a memfd for the seccomp filter: %m");
        r = loop_write(fd, insns, n * sizeof(*insns));
        if (r < 0)
                return error_setf(error, r, "Failed to write the seccomp filter: %s", strerror(-r));
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
                return error_setf(error, -errno, "Failed to seal the seccomp filter: %m");
        *ret_fd = TAKE_FD(fd);
        return 0;
}

