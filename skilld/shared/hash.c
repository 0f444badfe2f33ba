/* See hash.h. Two implementations of the one function, chosen by how much there is to hash:
 *  - libmd (libmd0, linked): portable C, 0.25 GB/s on the development machine, and nothing to do
 *    at start-up but map 47 KB. Every run hashes its skill, a few KB for most skills: this is
 *    what they use.
 *  - Nettle (libnettle8, loaded on first use): its "fat" build (Debian's) picks the CPU's SHA
 *    extensions, 1.3 GB/s here, five times libmd, but linked it costs every start of skillctl
 *    its relocations and, in its constructor, three CPUID instructions, each a trap to the
 *    hypervisor in a VM (8 us apiece on the development machine): 0.13 ms more than libmd for a
 *    program that hashes a few small buffers (400 interleaved rounds). It is loaded for the
 *    first input of SHA256_FAST_MIN bytes or more (where its speed repays the loading within
 *    that one input), or once libmd has hashed that much in the process (a tree of many small
 *    files: a node_modules folder), and then used for everything.
 * Both compute SHA-256; which one did cannot change a hash. Where Nettle cannot be loaded, libmd
 * does the work. libgcrypt, used before, brought libgpg-error and its initialization at the
 * first hash (a version check, the FIPS mode files probed, more CPUIDs): 0.24 ms over libc. */
#include <pthread.h>
#include <sha2.h>
#include <sys/stat.h>

#include "dlopen-util.h"
#include "hash.h"
#include "log.h"

/* After hash.h: Nettle maps its sha256_*() names onto nettle_sha256_*() with macros, which would
 * rename hash.h's own sha256_update(). Only its types are used from the header. */
#include <nettle/sha2.h>
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#define NETTLE_SONAME "libnettle.so.8"

/* Break-even of loading Nettle (about 0.1 ms) against hashing with libmd: about 30 KB. */
#define SHA256_FAST_MIN (64U * 1024U)

struct Sha256 {
        bool fast;                      /* Nettle's context, else libmd's */
        union {
                SHA2_CTX md;
                struct sha256_ctx nettle;
        };
};

static typeof(nettle_sha256_init) *sym_nettle_sha256_init;
static typeof(nettle_sha256_update) *sym_nettle_sha256_update;
static typeof(nettle_sha256_digest) *sym_nettle_sha256_digest;

static pthread_once_t nettle_once = PTHREAD_ONCE_INIT;
static bool nettle_loaded;
/* What libmd has hashed in this process. */
static uint64_t slow_bytes;

static void nettle_load(void) {
        static const DlopenSymbol symbols[] = {
                { "nettle_sha256_init", (void **) &sym_nettle_sha256_init },
                { "nettle_sha256_update", (void **) &sym_nettle_sha256_update },
                { "nettle_sha256_digest", (void **) &sym_nettle_sha256_digest },
        };
        _cleanup_free_ char *error = NULL;

        if (dlopen_symbols(NETTLE_SONAME, symbols, ELEMENTSOF(symbols), "hashes large files fast",
                           "libnettle8", "3.4", &error) < 0) {
                log_debug("%s; hashing with libmd instead.", strna(error));
                return;
        }
        nettle_loaded = true;
}

/* Whether to hash with Nettle: already loaded, or worth loading for size bytes or after what
 * libmd did so far. */
static bool use_nettle(uint64_t size) {
        if (size >= SHA256_FAST_MIN || __atomic_load_n(&slow_bytes, __ATOMIC_RELAXED) >= SHA256_FAST_MIN)
                (void) pthread_once(&nettle_once, nettle_load);
        return __atomic_load_n(&nettle_loaded, __ATOMIC_ACQUIRE);
}

int sha256_new_sized(uint64_t size_hint, Sha256 **ret) {
        Sha256 *h;

        h = malloc(sizeof(Sha256));
        if (!h)
                return -ENOMEM;
        h->fast = use_nettle(size_hint);
        if (h->fast)
                sym_nettle_sha256_init(&h->nettle);
        else
                SHA256Init(&h->md);
        *ret = h;
        return 0;
}

int sha256_new(Sha256 **ret) {
        return sha256_new_sized(0, ret);
}

Sha256 *sha256_free(Sha256 *h) {
        free(h);
        return NULL;
}

int sha256_update(Sha256 *h, const void *data, size_t n) {
        if (h->fast)
                sym_nettle_sha256_update(&h->nettle, n, data);
        else {
                SHA256Update(&h->md, data, n);
                (void) __atomic_add_fetch(&slow_bytes, n, __ATOMIC_RELAXED);
        }
        return 0;
}

int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]) {
        static const char digits[] = "0123456789abcdef";
        uint8_t md[SHA256_DIGEST_SIZE];

        if (h->fast)
                sym_nettle_sha256_digest(&h->nettle, sizeof(md), md);
        else
                SHA256Final(md, &h->md);
        for (unsigned i = 0; i < SHA256_DIGEST_SIZE; i++) {
                hex[i * 2] = digits[md[i] >> 4];
                hex[i * 2 + 1] = digits[md[i] & 0xf];
        }
        hex[SHA256_HEX_SIZE - 1] = '\0';
        return 0;
}

int sha256_fd(int fd, char hex[static SHA256_HEX_SIZE], uint64_t *ret_size) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        char buf[65536];
        uint64_t total = 0;
        struct stat st;
        int r;

        /* A file's size says which implementation; a pipe's is unknown, taken as large. */
        r = sha256_new_sized(fstat(fd, &st) >= 0 && S_ISREG(st.st_mode) ? (uint64_t) st.st_size : UINT64_MAX,
                             &h);
        if (r < 0)
                return r;
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                r = sha256_update(h, buf, k);
                if (r < 0)
                        return r;
                total += k;
        }
        r = sha256_final_hex(h, hex);
        if (r < 0)
                return r;
        if (ret_size)
                *ret_size = total;
        return 0;
}

int sha256_buffer_hex(const void *data, size_t n, char hex[static SHA256_HEX_SIZE]) {
        _cleanup_(sha256_freep) Sha256 *h = NULL;
        int r;

        r = sha256_new_sized(n, &h);
        if (r < 0)
                return r;
        r = sha256_update(h, data, n);
        if (r < 0)
                return r;
        return sha256_final_hex(h, hex);
}

bool sha256_fast_loaded(void) {
        return __atomic_load_n(&nettle_loaded, __ATOMIC_ACQUIRE);
}
