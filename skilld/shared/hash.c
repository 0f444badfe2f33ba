/* See hash.h. Nettle's SHA-256 rather than libgcrypt's (and, before that, OpenSSL's libcrypto):
 * every run hashes its skill, so the library is mapped and relocated at every start. libgcrypt
 * brought libgpg-error with it and, at its first use, its initialization (a version check and
 * three probes of the FIPS mode files); Nettle is one library with no dependency but libc and
 * nothing to initialize, and its "fat" build (Debian's) picks the CPU's SHA extensions at load
 * time, as libgcrypt did: 1.3 GB/s against libgcrypt's 1.4 on the development machine, where
 * libmd's portable C code (libmd0, smaller still) does 0.25, five times slower on a large tree. */
#include "hash.h"

/* Included after hash.h: Nettle names its functions nettle_sha256_*() and maps sha256_*() to
 * them with macros, which would rename hash.h's own sha256_update(). Its names are used as they
 * are. */
#include <nettle/sha2.h>
#undef sha256_init
#undef sha256_update
#undef sha256_digest

struct Sha256 {
        struct sha256_ctx ctx;
};

int sha256_new(Sha256 **ret) {
        Sha256 *h;

        h = malloc(sizeof(Sha256));
        if (!h)
                return -ENOMEM;
        nettle_sha256_init(&h->ctx);
        *ret = h;
        return 0;
}

Sha256 *sha256_free(Sha256 *h) {
        free(h);
        return NULL;
}

int sha256_update(Sha256 *h, const void *data, size_t n) {
        nettle_sha256_update(&h->ctx, n, data);
        return 0;
}

int sha256_final_hex(Sha256 *h, char hex[static SHA256_HEX_SIZE]) {
        static const char digits[] = "0123456789abcdef";
        uint8_t md[SHA256_DIGEST_SIZE];

        nettle_sha256_digest(&h->ctx, sizeof(md), md);
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
        int r;

        r = sha256_new(&h);
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

        r = sha256_new(&h);
        if (r < 0)
                return r;
        r = sha256_update(h, data, n);
        if (r < 0)
                return r;
        return sha256_final_hex(h, hex);
}
